"""From classified dependencies to a runnable level and the oracle context."""

from __future__ import annotations

from collections.abc import Iterable

from codereval.analysis.deps import SCOPE_LEVEL, Dependency, RefKind
from codereval.model import LEVELS, Level, OracleContext


def level_of(dependencies: Iterable[Dependency]) -> Level:
    """The widest scope any dependency needs; a function that needs nothing is self-contained.

    Each level relies on its own kind of dependency and none of the wider ones, so the widest
    scope decides. Unresolved references and members of values do not count (see Scope).
    """
    widest = 0
    for dep in dependencies:
        level = SCOPE_LEVEL.get(dep.scope)
        if level is not None:
            widest = max(widest, LEVELS.index(level))
    return LEVELS[widest]


def oracle_context_of(dependencies: Iterable[Dependency]) -> OracleContext:
    """Token names by type, each once, in order of first reference."""
    by_kind: dict[RefKind, list[str]] = {kind: [] for kind in RefKind}
    for dep in dependencies:
        names = by_kind[dep.kind]
        if dep.token and dep.name not in names:
            names.append(dep.name)
    return OracleContext(
        apis=tuple(by_kind[RefKind.API]),
        classes=tuple(by_kind[RefKind.TYPE]),
        vars=tuple(by_kind[RefKind.VAR]),
    )
