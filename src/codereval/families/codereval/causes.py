"""The table of disagreements by cause that `codereval compare` prints, Python or Java."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from rich.table import Table


class _Counted(Protocol):
    """A model's agreement, pass/fail or compile: what the causes table reads."""

    @property
    def label(self) -> str: ...

    @property
    def causes(self) -> dict[str, int]: ...


def causes_table(results: Sequence[_Counted]) -> Table | None:
    """Disagreements per cause, one column per model; None when nothing disagrees."""
    from rich.table import Table

    causes = sorted({c for r in results for c in r.causes})
    if not causes:
        return None
    table = Table(title="Disagreements by cause", title_justify="left")
    table.add_column("cause")
    for r in results:
        table.add_column(r.label, justify="right")
    for cause in causes:
        table.add_row(cause, *(str(r.causes.get(cause, 0)) for r in results))
    return table
