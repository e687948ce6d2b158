"""The HTML report: one self-contained file (styles, plots and code inline, nothing fetched)
with the summary tables, the figures, the paired comparison, and a page per task.

``codereval report`` and ``codereval score --html`` both call ``write_report``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, PackageLoader, select_autoescape

from codereval.benchmarks.family import HtmlSection
from codereval.errors import UserError
from codereval.model import HARNESS_VERSION, LEVELS, Outcome, Sample, Task, Verdict
from codereval.report import code, plots
from codereval.scoring.metrics import GroupScore
from codereval.scoring.scores import family_columns

if TYPE_CHECKING:
    from codereval.scoring.paired import PairedComparison
    from codereval.scoring.scores import Scores

# Bootstrap resamples behind the report's intervals when the scores carry none.
REPORT_CI = 1000
# Output tails shown per sample (the run directory keeps what the runner kept).
TAIL_CHARS = 3000


def paired_all(scores: Sequence[Scores]) -> tuple[list[PairedComparison], list[str]]:
    """Every pair of inputs (earlier minus later) that can be compared; a note for each pair
    that cannot (no task in common, different conventions)."""
    comparisons: list[PairedComparison] = []
    notes: list[str] = []
    for i, a in enumerate(scores):
        for b in scores[i + 1 :]:
            try:
                comparisons += a.paired(b)
            except UserError as exc:
                notes.append(f"no paired comparison of {a.label} and {b.label}: {exc.message}")
    return comparisons, notes


def write_report(path: Path, scores: Sequence[Scores], *, title: str = "") -> None:
    """Render the report of ``scores`` (one per model or run) and write it atomically."""
    from codereval.storage.jsonl import atomic_write_text

    paired, notes = paired_all(scores)
    atomic_write_text(path, render_html(scores, paired=paired, notes=notes, title=title))


def render_html(
    scores: Sequence[Scores],
    *,
    paired: Sequence[PairedComparison] = (),
    notes: Sequence[str] = (),
    title: str = "",
) -> str:
    if not scores:
        raise ValueError("a report needs at least one scored input")
    boards = [s.board for s in scores]
    ks = boards[0].ks
    models = [
        {"label": b.label, "colour": plots.model_colour(i), "convention": b.convention}
        for i, b in enumerate(boards)
    ]
    tasks = _all_tasks(scores)
    anchors = _anchors(t.task_id for t in tasks)
    solved = [_solved(s) for s in scores]
    env = Environment(
        loader=PackageLoader("codereval.report", "templates"),
        autoescape=select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    labels = [b.label for b in boards]
    family_notes: list[str] = []
    family_sections: list[HtmlSection] = []
    for family, sections in family_columns(scores):
        family_notes += family.score_notes(labels, sections)
        family_sections += family.html_sections(labels, sections, ks)
    board_notes = [
        (f"{b.label}: " if len(boards) > 1 else "") + note for b in boards for note in b.notes
    ]
    return env.get_template("report.html.j2").render(
        title=title or ", ".join(b.label for b in boards),
        generated=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        harness=HARNESS_VERSION,
        conventions=list(dict.fromkeys(b.convention_note for b in boards)),
        notes=[
            *board_notes,
            *family_notes,
            *notes,
        ],
        models=models,
        ks=ks,
        sections=_summary_sections(scores),
        acc_rows=_acc_rows(scores),
        family_sections=family_sections,
        verdicts=_verdict_rows(scores),
        figures=_figures(scores, solved=solved, tasks=len(tasks)),
        paired=_paired_rows(paired, ks),
        paired_figure=_paired_figure(paired),
        only_solved=_only_solved(scores, solved, anchors),
        index=_task_index(scores, tasks, anchors),
        pages=_task_pages(scores, tasks, anchors),
        highlight_css=code.highlight_css(),
        verdict_colours=plots.VERDICT_COLOURS,
    )


# --- summary ---------------------------------------------------------------------------------


def _cell(group: GroupScore | None, k: int) -> dict[str, str]:
    if group is None:
        return {"value": "", "ci": ""}
    value = group.pass_at.get(k)
    interval = group.ci.get(k) if group.ci else None
    return {
        "value": "—" if value is None else f"{value:.2f}",
        "ci": "" if interval is None or value is None else "[{:.1f}, {:.1f}]".format(*interval),
    }


def _summary_sections(scores: Sequence[Scores]) -> list[dict[str, Any]]:
    """Tables of pass@k: overall and per level, standalone or not, per language, per project.
    One row per group, one column block per model."""
    ks = scores[0].ks
    kinds: list[tuple[str, list[Mapping[str, GroupScore | None]]]] = [
        ("overall and per runnable level", []),
        ("standalone vs non-standalone", []),
        ("per language", []),
        ("per project", []),
    ]
    for s in scores:
        board = s.board
        kinds[0][1].append({"all": board.overall} | {g.name: g for g in board.levels})
        kinds[1][1].append(
            {"standalone": board.standalone, "non_standalone": board.non_standalone}
            if board.standalone or board.non_standalone
            else {}
        )
        kinds[2][1].append({g.name: g for g in s.languages()})
        projects = {g.name: g for g in board.projects}
        kinds[3][1].append({} if list(projects) == ["(none)"] else projects)
    sections = []
    for title, per_model in kinds:
        names = list(dict.fromkeys(name for groups in per_model for name in groups))
        if not names:
            continue
        rows = []
        for name in names:
            groups = [groups.get(name) for groups in per_model]
            counts = {g.tasks for g in groups if g is not None}
            rows.append(
                {
                    "name": name,
                    "tasks": str(counts.pop())
                    if len(counts) == 1
                    else "/".join(str(g.tasks) if g else "—" for g in groups),
                    "cells": [_cell(g, k) for g in groups for k in ks],
                }
            )
        sections.append({"title": title, "rows": rows})
    return sections


def _acc_rows(scores: Sequence[Scores]) -> list[dict[str, Any]]:
    if all(s.acc is None for s in scores):
        return []
    from codereval.scoring.acc import acc_intervals

    ks = scores[0].ks
    intervals: list[dict[str, dict[int, tuple[float, float]]]] = []
    for s in scores:
        if s.acc is None:
            intervals.append({})
            continue
        excluded = set(s.board.excluded_tasks)
        kept = [t for t in s.tasks if t.task_id not in excluded]
        intervals.append(
            acc_intervals(kept, s.samples, ks, compat=s.compat, resamples=s.bootstrap or REPORT_CI)
        )
    rows = []
    for name in ("all", "TypeReference", "APIInvocation", "VarReference"):
        cells = []
        for s, bounds in zip(scores, intervals, strict=True):
            values = (
                {}
                if s.acc is None
                else (s.acc.overall if name == "all" else s.acc.by_type.get(name, {}))
            )
            for k in ks:
                interval = bounds.get(name, {}).get(k)
                cells.append(
                    {
                        "value": f"{100 * values[k]:.2f}" if k in values else "—",
                        "ci": "" if interval is None else "[{:.1f}, {:.1f}]".format(*interval),
                    }
                )
        rows.append({"name": name, "cells": cells})
    return rows


def _verdict_rows(scores: Sequence[Scores]) -> list[dict[str, Any]]:
    rows = []
    for verdict in Verdict:
        counts = [s.board.verdicts.get(verdict.value, 0) for s in scores]
        if any(counts):
            totals = [max(1, sum(s.board.verdicts.values())) for s in scores]
            rows.append(
                {
                    "name": verdict.value,
                    "cells": [
                        {"count": c, "share": f"{100 * c / t:.1f}"}
                        for c, t in zip(counts, totals, strict=True)
                    ],
                }
            )
    return rows


# --- figures ---------------------------------------------------------------------------------


def _solved(s: Scores) -> frozenset[str]:
    """Tasks with at least one passing sample (flagged tasks left out)."""
    excluded = set(s.board.excluded_tasks)
    return frozenset(o.task_id for o in s.outcomes if o.passed and o.task_id not in excluded)


def _figures(
    scores: Sequence[Scores], *, solved: Sequence[frozenset[str]], tasks: int
) -> list[dict[str, str]]:
    labels = [s.label for s in scores]
    groups: list[str] = ["all"]
    bars: dict[tuple[int, str, int], plots.Bar] = {}
    for index, s in enumerate(scores):
        board = s.board
        for group in [board.overall, *board.levels, board.standalone, board.non_standalone]:
            if group is None:
                continue
            if group.name not in groups:
                groups.append(group.name)
            for k in s.ks:
                low, high = group.ci.get(k, (None, None)) if group.ci else (None, None)
                bars[(index, group.name, k)] = plots.Bar(
                    value=group.pass_at.get(k), low=low, high=high
                )
    order = ["all", *(level.value for level in LEVELS), "standalone", "non_standalone"]
    groups.sort(key=lambda g: order.index(g) if g in order else len(order))
    verdict_rows: list[tuple[str, dict[str, int]]] = []
    several_languages = len({t.language for s in scores for t in s.tasks}) > 1
    for s in scores:
        language = {t.task_id: t.language.value for t in s.tasks}
        by_language: dict[str, Counter[str]] = defaultdict(Counter)
        for outcome in s.outcomes:
            by_language[language.get(outcome.task_id, "?")][outcome.verdict.value] += 1
        for lang, counts in sorted(by_language.items()):
            label = f"{s.label} / {lang}" if several_languages else s.label
            verdict_rows.append((label, dict(counts)))
    figures = [
        {
            "id": "fig-pass-at-k",
            "title": "pass@k by runnable level",
            "caption": "Bars: pass@k (%) of each model per group; error bars: 95% bootstrap "
            "interval over tasks.",
            "svg": plots.pass_at_k_by_group(
                models=labels, groups=groups, ks=scores[0].ks, bars=bars
            ),
        },
        {
            "id": "fig-verdicts",
            "title": "verdict mix",
            "caption": "Share of each verdict among the samples of each model (and language).",
            "svg": plots.verdict_mix(rows=verdict_rows),
        },
        {
            "id": "fig-overlap",
            "title": "solved-task overlap",
            "caption": "A task is solved when at least one of its samples passed. Bars: tasks "
            "solved by exactly the models marked below them; left: tasks each model solves.",
            "svg": plots.solved_overlap(models=labels, solved=solved, tasks=tasks),
        },
    ]
    return figures


def _paired_rows(paired: Sequence[PairedComparison], ks: Sequence[int]) -> list[dict[str, Any]]:
    from codereval.scoring.paired import format_p

    by_pair: dict[tuple[str, str], dict[int, PairedComparison]] = defaultdict(dict)
    for comparison in paired:
        by_pair[(comparison.a, comparison.b)][comparison.k] = comparison
    rows = []
    for (a, b), by_k in by_pair.items():
        cells: list[dict[str, Any] | None] = []
        for k in ks:
            c = by_k.get(k)
            if c is None:
                cells.append(None)
                continue
            cells.append(
                {
                    "difference": f"{c.difference:+.2f}",
                    "ci": "[{:+.2f}, {:+.2f}]".format(*c.ci),
                    "p": format_p(c.p_value),
                    "significant": c.ci[0] > 0 or c.ci[1] < 0,
                    "detail": f"{c.a_score:.2f} vs {c.b_score:.2f} on {c.tasks} tasks; "
                    f"{a} better on {c.a_better}, {b} on {c.b_better}"
                    + (f"; {c.left_out} left out (fewer than {k} samples)" if c.left_out else "")
                    + (f"; {c.unmatched} in one run only" if c.unmatched else ""),
                }
            )
        rows.append({"a": a, "b": b, "cells": cells})
    return rows


def _paired_figure(paired: Sequence[PairedComparison]) -> str:
    if not paired:
        return ""
    rows = [(f"{c.a} − {c.b}, pass@{c.k}", c.difference, *c.ci) for c in paired]
    return plots.paired_differences(rows=rows)


def _only_solved(
    scores: Sequence[Scores], solved: Sequence[frozenset[str]], anchors: dict[str, str]
) -> list[dict[str, Any]]:
    """For each model, the tasks it solves and no other model does."""
    if len(scores) < 2:
        return []
    names = {t.task_id: t.name for t in _all_tasks(scores)}
    rows = []
    for index, s in enumerate(scores):
        others = frozenset().union(*(x for j, x in enumerate(solved) if j != index))
        only = sorted(solved[index] - others)
        rows.append(
            {
                "label": s.label,
                "colour": plots.model_colour(index),
                "tasks": [
                    {"id": t, "name": names.get(t) or t, "anchor": anchors.get(t, "")} for t in only
                ],
            }
        )
    return rows


# --- tasks -----------------------------------------------------------------------------------


def _all_tasks(scores: Sequence[Scores]) -> list[Task]:
    """Every task of every input, first seen first (the first input's order)."""
    seen: dict[str, Task] = {}
    for s in scores:
        for task in s.tasks:
            seen.setdefault(task.task_id, task)
    return list(seen.values())


def _anchors(task_ids: Iterable[str]) -> dict[str, str]:
    anchors: dict[str, str] = {}
    used: set[str] = set()
    for task_id in task_ids:
        base = "task-" + re.sub(r"[^A-Za-z0-9_.-]", "_", task_id)
        anchor, n = base, 1
        while anchor in used:
            n += 1
            anchor = f"{base}-{n}"
        used.add(anchor)
        anchors[task_id] = anchor
    return anchors


def _by_task(outcomes: Sequence[Outcome]) -> dict[str, list[Outcome]]:
    grouped: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        grouped[outcome.task_id].append(outcome)
    for items in grouped.values():
        items.sort(key=lambda o: o.sample_index)
    return grouped


def _task_index(
    scores: Sequence[Scores], tasks: Sequence[Task], anchors: dict[str, str]
) -> list[dict[str, Any]]:
    per_model = [_by_task(s.outcomes) for s in scores]
    rows = []
    for task in tasks:
        cells = []
        for grouped in per_model:
            outcomes = grouped.get(task.task_id)
            if not outcomes:
                cells.append({"text": "—", "kind": "absent"})
                continue
            passed = sum(o.passed for o in outcomes)
            kind = "all" if passed == len(outcomes) else "some" if passed else "none"
            cells.append({"text": f"{passed}/{len(outcomes)}", "kind": kind})
        rows.append(
            {
                "id": task.task_id,
                "anchor": anchors[task.task_id],
                "name": task.name,
                "level": task.level.value if task.level else "—",
                "project": task.project,
                "language": task.language.value,
                "cells": cells,
            }
        )
    return rows


def _tail(text: str) -> str:
    return text if len(text) <= TAIL_CHARS else "…" + text[-TAIL_CHARS:]


def _diff(reference: str, text: str, outcome: Outcome) -> tuple[str | None, str]:
    """The diff of a sample against the reference, or why there is none."""
    if not reference:
        return None, "no reference in the input (score with --tasks RECORDS to show one)"
    if text.strip() == reference.strip():
        return None, "identical to the reference"
    found = code.diff(reference, text, label=f"sample #{outcome.sample_index}")
    if found is None:
        return None, "little in common with the reference: compare the two listings"
    return found, ""


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f} s"


def _task_pages(
    scores: Sequence[Scores], tasks: Sequence[Task], anchors: dict[str, str]
) -> list[dict[str, Any]]:
    outcomes = [_by_task(s.outcomes) for s in scores]
    samples: list[dict[tuple[str, int], Sample]] = [
        {(x.task_id, x.index): x for x in s.samples} for s in scores
    ]
    task_ids = [{t.task_id for t in s.tasks} for s in scores]
    return [
        _task_page(
            task,
            [
                (index, s, outcomes[index].get(task.task_id, []), samples[index])
                for index, s in enumerate(scores)
                if task.task_id in task_ids[index]
            ],
            anchors[task.task_id],
        )
        for task in tasks
    ]


def _task_page(
    task: Task,
    runs_of_task: Sequence[tuple[int, Scores, list[Outcome], dict[tuple[str, int], Sample]]],
    anchor: str,
) -> dict[str, Any]:
    runs = []
    for index, s, outcomes, samples in runs_of_task:
        first_with_code: dict[str, int] = {}
        entries = []
        for outcome in outcomes:
            sample = samples.get((task.task_id, outcome.sample_index))
            text = sample.code if sample is not None else None
            entry: dict[str, Any] = {
                "index": outcome.sample_index,
                "verdict": outcome.verdict.value,
                "stage": outcome.stage.value,
                "exit": "—" if outcome.exit_code is None else str(outcome.exit_code),
                "signal": outcome.signal,
                "wall": _seconds(outcome.wall_time),
                "cpu": _seconds(outcome.cpu_time),
                "isolation": outcome.isolation,
                "detail": outcome.detail,
                "stdout": _tail(outcome.stdout_tail),
                "stderr": _tail(outcome.stderr_tail),
                "code": None,
                "diff": None,
                "diff_note": "",
                "same_as": None,
                "truncated": bool(sample and sample.truncated),
            }
            if text is not None and text in first_with_code:
                entry["same_as"] = first_with_code[text]
            elif text is not None:
                first_with_code[text] = outcome.sample_index
                entry["code"] = code.highlight(text, task.language)
                entry["diff"], entry["diff_note"] = _diff(task.reference, text, outcome)
            entries.append(entry)
        runs.append(
            {
                "label": s.label,
                "colour": plots.model_colour(index),
                "passed": sum(o.passed for o in outcomes),
                "n": len(outcomes),
                "samples": entries,
            }
        )
    location = task.location
    return {
        "id": task.task_id,
        "anchor": anchor,
        "name": task.name,
        "level": task.level.value if task.level else "—",
        "project": task.project,
        "file": location.file_path if location else "",
        "language": task.language.value,
        "docstring": task.docstring or task.human_label,
        "reference": code.highlight(task.reference, task.language) if task.reference else "",
        "runs": runs,
    }
