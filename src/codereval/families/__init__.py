"""Benchmark families, one package each, found through ``codereval.benchmarks.FAMILIES``.

A family holds everything specific to its benchmark: loader, prompts, extraction, runners,
metrics, report sections, preparation, commands. Families never import each other, and nothing
outside ``families/`` imports one (the package's face, ``api``, aside): ``.importlinter``
contracts in pyproject.toml say so and CI checks them.
"""
