"""``python -m codereval``: the same command line as the ``codereval`` script."""

from codereval.cli.app import main

main()
