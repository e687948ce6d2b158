"""The result of dependency analysis: every external reference a function makes, classified.

Both languages produce these values; levels.py turns the scopes into a runnable level and
formats.py writes CoderEval's ``oracle_context`` / ``all_context`` strings from them.
"""

from __future__ import annotations

from enum import StrEnum

from codereval.model import AllContext, Frozen, Language, Level, OracleContext


class RefKind(StrEnum):
    """The paper's three token types."""

    TYPE = "TypeReference"  # oracle_context "classes"
    API = "APIInvocation"  # oracle_context "apis"
    VAR = "VarReference"  # oracle_context "vars"


class Scope(StrEnum):
    """Where a reference is resolved, from the narrowest scope to the widest."""

    BUILTIN = "builtin"
    STDLIB = "stdlib"
    THIRD_PARTY = "third_party"
    CLASS = "class"
    FILE = "file"
    PROJECT = "project"
    # A member of a value whose origin is already counted elsewhere (``zone.localize`` where
    # ``zone`` is a local): it names an API but does not widen the level.
    VALUE = "value"
    # Nothing in the function, its file, the project or the environment defines it.
    UNRESOLVED = "unresolved"


SCOPE_LEVEL: dict[Scope, Level] = {
    Scope.BUILTIN: Level.SELF_CONTAINED,
    Scope.STDLIB: Level.SLIB_RUNNABLE,
    Scope.THIRD_PARTY: Level.PLIB_RUNNABLE,
    Scope.CLASS: Level.CLASS_RUNNABLE,
    Scope.FILE: Level.FILE_RUNNABLE,
    Scope.PROJECT: Level.PROJECT_RUNNABLE,
}


class Dependency(Frozen):
    """One external reference. ``token`` is False for references CoderEval leaves out of
    ``oracle_context`` (a built-in passed as a value, like ``int`` in ``map(int, xs)``)."""

    name: str
    kind: RefKind
    scope: Scope
    # Where it was resolved: "import os (stdlib)", "pytz 2024.1", "ocfl/dispositor.py:7" ...
    origin: str = ""
    lineno: int = 0
    token: bool = True


class Analysis(Frozen):
    """Everything `codereval analyze` reports about one function."""

    language: Language
    file_path: str
    target: str
    lineno: int = 0
    end_lineno: int = 0
    dependencies: tuple[Dependency, ...] = ()
    level: Level
    oracle_context: OracleContext
    all_context: AllContext
    # References that could not be resolved make the level a lower bound.
    unresolved: tuple[str, ...] = ()
    # What was analysed: "file" (the function in its file) or "reference" (the reference code
    # alone, when a task's file content is missing or unusable; the reason follows a colon).
    basis: str = "file"
