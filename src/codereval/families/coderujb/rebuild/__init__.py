"""Defects4J's bugs rebuilt from public material: its metadata (a clone of rjust/defects4j)
and the projects' git histories, without Defects4J's own archives or its `defects4j` command.

``metadata`` reads what Defects4J publishes per bug, ``versions`` turns a bug into the buggy and
fixed versions codereval builds (``bugs.toml``), ``reproduce`` checks each rebuild against
Defects4J's record of its trigger tests, ``tasks`` makes CoderUJB's five kinds of task from the
reproduced bugs, and ``prepare`` ties them into ``codereval prepare defects4j``.
"""
