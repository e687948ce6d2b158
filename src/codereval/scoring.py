"""Load what `codereval score` scores: an official result file or one of our run directories."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from codereval.benchmarks.official import is_official_results, load_official_results
from codereval.errors import UserError, name_some
from codereval.jsonl import iter_jsonl
from codereval.model import Outcome, Sample, Task


@dataclass(frozen=True, kw_only=True)
class ScoredInput:
    label: str
    tasks: list[Task]
    outcomes: list[Outcome]
    samples: list[Sample]
    gold_path: Path | None = None


ModelT = TypeVar("ModelT", Task, Outcome, Sample)


def _read_models(path: Path, cls: type[ModelT]) -> list[ModelT]:
    items: list[ModelT] = []
    for lineno, row in iter_jsonl(path):
        try:
            items.append(cls.model_validate(row))
        except ValueError as exc:
            first = str(exc).splitlines()
            reason = first[1].strip() if len(first) > 1 else first[0]
            raise UserError(f"{path}:{lineno}: not a {cls.__name__} ({reason})") from None
    return items


def load_scored_input(path: Path, *, label: str | None = None) -> ScoredInput:
    if not path.exists():
        raise UserError(f"not found: {path}", hint="give an official _out.jsonl or a run directory")
    if path.is_dir():
        tasks_file, outcomes_file = path / "tasks.jsonl", path / "outcomes.jsonl"
        if not outcomes_file.exists() or not tasks_file.exists():
            raise UserError(
                f"{path} is not a run directory (no tasks.jsonl/outcomes.jsonl)",
                hint="run `codereval evaluate --out DIR` first",
            )
        samples_file = path / "samples.jsonl"
        gold = path / "gold.jsonl"
        return ScoredInput(
            label=label or path.name,
            tasks=_read_models(tasks_file, Task),
            outcomes=_read_models(outcomes_file, Outcome),
            samples=_read_models(samples_file, Sample) if samples_file.exists() else [],
            gold_path=gold if gold.exists() else None,
        )
    first = next(iter_jsonl(path), None)
    if first is None:
        raise UserError(f"{path}: the file is empty", hint="expected result lines")
    _, row = first
    if is_official_results(row):
        results = load_official_results(path)
        return ScoredInput(
            label=label or _label_for(path),
            tasks=results.tasks,
            outcomes=results.outcomes,
            samples=results.samples,
        )
    raise UserError(
        f"{path}: not a result file we know",
        hint="expected an official CoderEval _out.jsonl or a codereval run directory",
    )


def _label_for(path: Path) -> str:
    # Official files are all named Raw_Input.jsonl_out.jsonl; the folder names the model.
    if path.name.startswith("Raw_Input") or path.name.endswith("_out.jsonl"):
        return path.parent.name or path.stem
    return path.stem


def check_against_records(scored: ScoredInput, records: list[Task], *, source: Path) -> ScoredInput:
    """Use the records' levels and projects; results for unknown tasks are an error."""
    known = {t.task_id: t for t in records}
    unknown = sorted({o.task_id for o in scored.outcomes} - set(known))
    if unknown:
        raise UserError(
            f"results for {len(unknown)} task(s) not in {source}: {name_some(unknown)}",
            hint="score against the records file these results were made from",
        )
    ids = {t.task_id for t in scored.tasks} | {o.task_id for o in scored.outcomes}
    return ScoredInput(
        label=scored.label,
        tasks=[known[i] for i in sorted(ids)],
        outcomes=scored.outcomes,
        samples=scored.samples,
        gold_path=scored.gold_path,
    )


def load_flagged(path: Path) -> list[str]:
    """Task ids a gold-validation report flags (status other than ok)."""
    flagged = []
    for lineno, row in iter_jsonl(path):
        if "task_id" not in row or "status" not in row:
            raise UserError(f"{path}:{lineno}: gold line needs task_id and status")
        if row["status"] != "ok":
            flagged.append(str(row["task_id"]))
    return flagged


def dump_json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)
