"""A self-contained HTML report: the score tables, verdicts, and every task's samples."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from codereval import HARNESS_VERSION
from codereval.analysis.acc import AccResult
from codereval.metrics import GroupScore, Scoreboard
from codereval.model import Outcome, Task, Verdict


@dataclass(frozen=True, kw_only=True)
class RunView:
    """One scored input with the tasks and outcomes behind its numbers."""

    board: Scoreboard
    tasks: Sequence[Task]
    outcomes: Sequence[Outcome]
    acc: AccResult | None = None


def _groups(board: Scoreboard) -> list[tuple[str, GroupScore | None, bool]]:
    rows: list[tuple[str, GroupScore | None, bool]] = [("all", board.overall, False)]
    rows += [(g.name, g, i == 0) for i, g in enumerate(board.levels)]
    if board.standalone or board.non_standalone:
        rows.append(("standalone", board.standalone, True))
        rows.append(("non_standalone", board.non_standalone, False))
    rows += [(f"project {g.name}", g, i == 0) for i, g in enumerate(board.projects)]
    return rows


def _task_rows(view: RunView) -> list[dict[str, Any]]:
    by_task: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in view.outcomes:
        by_task[outcome.task_id].append(outcome)
    rows = []
    for task in view.tasks:
        outcomes = sorted(by_task.get(task.task_id, []), key=lambda o: o.sample_index)
        chips = [
            {"index": o.sample_index, "verdict": o.verdict.value, "detail": o.detail[:200]}
            for o in outcomes
        ]
        details = [
            {
                "index": o.sample_index,
                "verdict": o.verdict.value,
                "stage": o.stage.value,
                "wall_time": o.wall_time,
                "isolation": o.isolation,
                "detail": o.detail,
                "stderr": o.stderr_tail[-2000:],
            }
            for o in outcomes
            if o.verdict is not Verdict.PASSED and (o.detail or o.stderr_tail)
        ]
        rows.append(
            {
                "id": task.task_id,
                "name": task.name,
                "level": task.level.value if task.level else "—",
                "project": task.project,
                "n": len(outcomes),
                "passed": sum(o.passed for o in outcomes),
                "outcomes": chips,
                "details": details,
            }
        )
    return rows


def render_html(views: Sequence[RunView], *, title: str = "") -> str:
    boards = [view.board for view in views]
    ks = boards[0].ks
    table_rows: dict[str, dict[str, Any]] = {}
    for index, board in enumerate(boards):
        for name, group, section in _groups(board):
            row = table_rows.setdefault(
                name,
                {
                    "name": name,
                    "tasks": "",
                    "section": section,
                    "cells": [""] * (len(ks) * len(boards)),
                },
            )
            if group is None:
                continue
            row["tasks"] = group.tasks
            for j, k in enumerate(ks):
                value = group.pass_at.get(k)
                text = "—" if value is None else f"{value:.2f}"
                if value is not None and group.ci and k in group.ci:
                    text += " [{:.1f}, {:.1f}]".format(*group.ci[k])
                row["cells"][index * len(ks) + j] = text
    most = max((max(b.verdicts.values(), default=0) for b in boards), default=0) or 1
    verdicts = []
    for verdict in Verdict:
        counts = [b.verdicts.get(verdict.value, 0) for b in boards]
        if any(counts):
            verdicts.append(
                {"name": verdict.value, "cells": [(c, int(160 * c / most)) for c in counts]}
            )
    env = Environment(
        loader=PackageLoader("codereval.report", "templates"),
        autoescape=select_autoescape(["html", "j2"]),
    )
    notes = [
        (f"{b.label}: " if len(boards) > 1 else "") + note for b in boards for note in b.notes
    ]
    acc_rows = []
    if any(view.acc is not None for view in views):
        for name in ("all", "TypeReference", "APIInvocation", "VarReference"):
            cells = []
            for view in views:
                acc = view.acc
                values = {} if acc is None else (
                    acc.overall if name == "all" else acc.by_type.get(name, {})
                )
                cells += [f"{100 * values[k]:.2f}" if k in values else "—" for k in ks]
            acc_rows.append({"name": name, "cells": cells})
    return env.get_template("report.html.j2").render(
        acc_rows=acc_rows,
        title=title or ", ".join(b.label for b in boards),
        generated=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        harness=HARNESS_VERSION,
        conventions=list(dict.fromkeys(b.convention_note for b in boards)),
        boards=boards,
        ks=ks,
        rows=list(table_rows.values()),
        verdicts=verdicts,
        notes=notes,
        runs=[{"label": v.board.label, "tasks": _task_rows(v)} for v in views],
    )
