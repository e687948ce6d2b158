"""Project environments, built once and cached by content."""

from __future__ import annotations

import importlib

from codereval.environments.base import (
    Environment,
    EnvironmentBuilder,
    ProjectSpec,
    load_manifest,
)
from codereval.errors import UserError
from codereval.model import Language

# language -> "module:Class"; a builder is imported only when a project of its language is built.
BUILDERS: dict[str, str] = {
    "python": "codereval.environments.python:PythonEnvironmentBuilder",
    "java": "codereval.environments.java:JavaEnvironmentBuilder",
}


def get_builder(language: Language | str) -> EnvironmentBuilder:
    """A fresh builder for projects of ``language``."""
    name = language.value if isinstance(language, Language) else language
    try:
        target = BUILDERS[name]
    except KeyError:
        raise UserError(
            f"no environment builder for {name!r} projects",
            hint=f"builders exist for: {', '.join(sorted(BUILDERS))}",
        ) from None
    module_name, _, class_name = target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    builder = cls()
    if not isinstance(builder, EnvironmentBuilder):
        raise TypeError(f"{target} is not an EnvironmentBuilder")
    return builder


__all__ = [
    "BUILDERS",
    "Environment",
    "EnvironmentBuilder",
    "ProjectSpec",
    "get_builder",
    "load_manifest",
]
