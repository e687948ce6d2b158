"""CoderUJB's metrics as rows: the terminal tables of `codereval score` and the HTML report's
section. One row per (kind, level) or (kind, rate), one column block per run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from codereval.families.coderujb.metrics import (
    KIND_TITLES,
    UjbKindScore,
    UjbLevel,
    UjbRate,
    UjbScores,
)
from codereval.model import UjbKind

if TYPE_CHECKING:
    from rich.table import Table


def _by_kind(scores: UjbScores | None) -> dict[UjbKind, UjbKindScore]:
    return {} if scores is None else {kind.kind: kind for kind in scores.kinds}


def _kinds(runs: Sequence[UjbScores | None]) -> list[UjbKind]:
    present = {kind.kind for run in runs if run is not None for kind in run.kinds}
    return [kind for kind in UjbKind if kind in present]


def _interval(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f"[{ci[0]:.1f}, {ci[1]:.1f}]"


def level_rows(runs: Sequence[UjbScores | None], ks: Sequence[int]) -> list[dict[str, Any]]:
    """{kind, level, tasks, cells: [{value, ci} per run per k, then count@n per run]}."""
    rows = []
    lookups = [_by_kind(run) for run in runs]
    for kind in _kinds(runs):
        names = list(
            dict.fromkeys(
                level.name for lookup in lookups if kind in lookup for level in lookup[kind].levels
            )
        )
        for name in names:
            found: list[UjbLevel | None] = []
            for lookup in lookups:
                score = lookup.get(kind)
                found.append(next((lv for lv in score.levels if lv.name == name), None)
                             if score is not None else None)
            cells = []
            for level in found:
                for k in ks:
                    value = level.pass_at.get(k) if level is not None else None
                    interval = level.ci.get(k) if level is not None and level.ci else None
                    cells.append({
                        "value": "—" if value is None else f"{value:.2f}",
                        "ci": "" if value is None else _interval(interval),
                    })
                cells.append({
                    "value": "—" if level is None else f"{level.count}/{level.tasks}",
                    "ci": "",
                })
            counts = {lv.tasks for lv in found if lv is not None}
            rows.append({
                "kind": kind.value.upper(),
                "title": KIND_TITLES[kind],
                "level": name,
                "tasks": "/".join(sorted(str(c) for c in counts)),
                "cells": cells,
            })
    return rows


def rate_rows(runs: Sequence[UjbScores | None]) -> list[dict[str, Any]]:
    """{kind, rate, cells: [{value, ci, support} per run]}; DD adds its confusion counts."""
    rows = []
    lookups = [_by_kind(run) for run in runs]
    for kind in _kinds(runs):
        names = list(
            dict.fromkeys(
                rate.name for lookup in lookups if kind in lookup for rate in lookup[kind].rates
            )
        )
        for name in names:
            cells = []
            for lookup in lookups:
                score = lookup.get(kind)
                rate: UjbRate | None = (
                    next((r for r in score.rates if r.name == name), None) if score else None
                )
                value = rate.value if rate is not None else None
                cells.append({
                    "value": "—" if value is None else f"{value:.2f}",
                    "ci": "" if rate is None or value is None else _interval(rate.ci),
                    "support": rate.support if rate is not None else "",
                })
            rows.append({"kind": kind.value.upper(), "rate": name, "cells": cells})
        if kind is UjbKind.DD:
            cells = []
            for lookup in lookups:
                score = lookup.get(kind)
                confusion = score.confusion if score is not None else None
                text = (
                    "/".join(str(confusion[key]) for key in ("tp", "tn", "fp", "fn", "unanswered"))
                    if confusion
                    else "—"
                )
                cells.append({"value": text, "ci": "", "support": ""})
            rows.append(
                {"kind": "DD", "rate": "samples tp/tn/fp/fn/unanswered", "cells": cells}
            )
    return rows


def render_ujb(
    labels: Sequence[str], runs: Sequence[UjbScores | None], ks: Sequence[int]
) -> list[Table]:
    """The terminal tables: pass@k and count@n by level; trigger, coverage and DD rates."""
    from rich.table import Table

    single = len(labels) == 1
    levels = Table(
        title="CoderUJB pass@k (%) and count@n by level, 95% bootstrap intervals",
        title_justify="left",
    )
    levels.add_column("kind", style="bold")
    levels.add_column("level")
    levels.add_column("tasks", justify="right", style="dim")
    for label in labels:
        head = "" if single else f"{label}\n"
        for k in ks:
            levels.add_column(f"{head}pass@{k}", justify="right")
        levels.add_column(f"{head}count@n", justify="right")
    for row in level_rows(runs, ks):
        cells = [f"{c['value']} {c['ci']}".strip() for c in row["cells"]]
        levels.add_row(row["kind"], row["level"], row["tasks"], *cells)
    tables = [levels] if levels.row_count else []
    rates = Table(title="CoderUJB rates (%)", title_justify="left")
    rates.add_column("kind", style="bold")
    rates.add_column("metric")
    for label in labels:
        rates.add_column(label if not single else "value", justify="right")
        rates.add_column("over", style="dim")
    for row in rate_rows(runs):
        cells = []
        for c in row["cells"]:
            cells += [f"{c['value']} {c['ci']}".strip(), c["support"]]
        rates.add_row(row["kind"], row["rate"], *cells)
    if rates.row_count:
        tables.append(rates)
    return tables


def ujb_notes(labels: Sequence[str], runs: Sequence[UjbScores | None]) -> list[str]:
    notes = []
    for label, run in zip(labels, runs, strict=True):
        for kind in run.kinds if run is not None else []:
            for note in kind.notes:
                prefix = f"{label}: " if len(labels) > 1 else ""
                notes.append(f"{prefix}{kind.kind.value.upper()}: {note}")
    return notes


__all__ = ["level_rows", "rate_rows", "render_ujb", "ujb_notes"]
