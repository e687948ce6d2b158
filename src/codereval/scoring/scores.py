"""What `codereval score` scores, and its result: an official result file or one of our run
directories in, ``Scores`` (pass@k by group, Acc@k, result categories) out."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from codereval.benchmarks.family import Family, ScoreSection
from codereval.errors import UserError, name_some
from codereval.model import Outcome, Sample, Task
from codereval.scoring.metrics import (
    DEFAULT_KS,
    GroupScore,
    Scoreboard,
    score,
    score_groups,
    task_pass_at,
)
from codereval.storage.jsonl import iter_jsonl

if TYPE_CHECKING:
    import pandas

    from codereval.scoring.acc import AccResult
    from codereval.scoring.categories import Category
    from codereval.scoring.paired import PairedComparison


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
    from codereval.benchmarks import families

    for family in families():
        found = family.read_results(path, row)
        if found is not None:
            tasks, outcomes, samples = found
            return ScoredInput(
                label=label or _label_for(path), tasks=tasks, outcomes=outcomes, samples=samples
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


def default_label(path: Path) -> str:
    """The label ``load_scored_input`` gives a path when none is asked for."""
    return path.name if path.is_dir() else _label_for(path)


@dataclass(frozen=True, kw_only=True, repr=False)
class Scores:
    """The scores of one run or result file: pass@k overall and by group, Acc@k, categories.

    ``board`` holds the numbers (percentages); ``acc`` is Acc@k when the tasks carry oracle
    context; ``categories`` CodeGeeX's result categories per language for HumanEval-family runs.
    ``tasks``, ``outcomes`` and ``samples`` are what was scored; ``compat``, ``compat_n`` and
    ``bootstrap`` how (the convention, its fixed n, the bootstrap resamples).
    """

    board: Scoreboard
    acc: AccResult | None
    categories: dict[str, Counter[Category]] | None
    tasks: list[Task]
    outcomes: list[Outcome]
    samples: list[Sample]
    compat: bool = False
    compat_n: int = 10
    bootstrap: int = 0
    # Families' own metrics by family name (CoderUJB: levels, trigger, coverage, DD), for the
    # families whose tasks the run holds.
    sections: dict[str, ScoreSection] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.board.label

    @property
    def ks(self) -> tuple[int, ...]:
        return self.board.ks

    @property
    def pass_at(self) -> dict[int, float | None]:
        """Overall pass@k in percent by k (None where no task has k samples)."""
        return dict(self.board.overall.pass_at)

    def __repr__(self) -> str:
        shown = ", ".join(
            f"pass@{k}={'—' if v is None else f'{v:.2f}'}" for k, v in self.pass_at.items()
        )
        return f"Scores(label={self.label!r}, tasks={self.board.overall.tasks}, {shown})"

    def to_dict(self) -> dict[str, Any]:
        """The document `codereval score --json` prints for this input."""
        document = self.board.model_dump(mode="json")
        document["acc_at_k"] = self.acc.model_dump(mode="json") if self.acc is not None else None
        document["categories"] = (
            {lang: {c.value: n for c, n in by.items()} for lang, by in self.categories.items()}
            if self.categories is not None
            else None
        )
        for name, section in self.sections.items():
            # Only runs with a family's tasks carry its key: other documents stay as they were.
            document[name] = section.model_dump(mode="json")
        return document

    def to_json(self, *, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def rows(self) -> list[dict[str, Any]]:
        """One row per group (all, each level, standalone or not, each project): the table
        ``to_dataframe`` makes, as plain dicts. Values are percentages; None where no task of
        the group has k samples."""
        board = self.board
        groups: list[tuple[str, GroupScore]] = [("all", board.overall)]
        groups += [("level", g) for g in board.levels]
        groups += [("standalone", g) for g in (board.standalone, board.non_standalone) if g]
        if [g.name for g in board.projects] != ["(none)"]:  # HumanEval tasks have no project
            groups += [("project", g) for g in board.projects]
        rows = []
        for kind, group in groups:
            row: dict[str, Any] = {
                "label": board.label,
                "kind": kind,
                "group": group.name,
                "tasks": group.tasks,
            }
            for k in board.ks:
                row[f"pass@{k}"] = group.pass_at.get(k)
                if group.ci is not None and k in group.ci:
                    row[f"pass@{k} low"], row[f"pass@{k} high"] = group.ci[k]
            rows.append(row)
        return rows

    def languages(self) -> list[GroupScore]:
        """Pass@k per language of the tasks (one group for a single-language run)."""
        return score_groups(
            self.tasks,
            self.outcomes,
            key=lambda task: task.language.value,
            ks=self.ks,
            compat=self.compat,
            compat_n=self.compat_n,
            exclude=self.board.excluded_tasks,
            bootstrap=self.bootstrap,
        )

    def paired(
        self, other: Scores, *, resamples: int | None = None, seed: int = 0
    ) -> list[PairedComparison]:
        """This run against ``other`` on the tasks both scored, one comparison per k: the
        difference in pass@k (points, this minus other), a paired bootstrap interval (95%) and
        a sign-flip permutation p-value. Raises UserError when the two were scored under
        different conventions or share no task."""
        return paired_comparisons(self, other, resamples=resamples, seed=seed)

    def to_dataframe(self) -> pandas.DataFrame:
        """``rows()`` as a pandas DataFrame (needs pandas: pip install 'codereval[pandas]')."""
        try:
            import pandas
        except ImportError:
            raise ImportError(
                "Scores.to_dataframe() needs pandas, which is not installed: "
                "pip install 'codereval[pandas]' (or pip install pandas); "
                "Scores.rows() gives the same table as plain dicts"
            ) from None
        return pandas.DataFrame(self.rows())


def score_input(
    item: ScoredInput,
    *,
    ks: Sequence[int] = DEFAULT_KS,
    compat: bool = False,
    compat_n: int = 10,
    benchmark_size: int | None = None,
    exclude: Iterable[str] = (),
    bootstrap: int = 0,
) -> Scores:
    """Score one loaded input: the scoreboard, Acc@k and the result categories."""
    excluded = list(exclude)
    board = score(
        item.tasks,
        item.outcomes,
        ks=ks,
        compat=compat,
        compat_n=compat_n,
        benchmark_size=benchmark_size,
        label=item.label,
        exclude=excluded,
        bootstrap=bootstrap,
    )
    return Scores(
        board=board,
        acc=_acc(item, ks=tuple(ks), compat=compat, exclude=excluded),
        categories=_categories(item),
        tasks=item.tasks,
        outcomes=item.outcomes,
        samples=item.samples,
        compat=compat,
        compat_n=compat_n,
        bootstrap=bootstrap,
        sections=family_sections(item, ks=tuple(ks), exclude=excluded, bootstrap=bootstrap),
    )


def family_columns(
    results: Sequence[Scores],
) -> list[tuple[Family, list[ScoreSection | None]]]:
    """Each family with its own metrics in at least one of ``results``: its section of each
    result, side by side (None where that result has none of its tasks)."""
    from codereval.benchmarks import families

    columns = []
    for family in families():
        sections = [result.sections.get(family.name) for result in results]
        if any(section is not None for section in sections):
            columns.append((family, sections))
    return columns


def family_sections(
    item: ScoredInput, *, ks: tuple[int, ...], exclude: Iterable[str] = (), bootstrap: int = 0
) -> dict[str, ScoreSection]:
    """Each family's own metrics over a run, for the families that have some there."""
    from codereval.benchmarks import families

    sections: dict[str, ScoreSection] = {}
    for family in families():
        section = family.score(
            item.tasks, item.outcomes, ks=ks, bootstrap=bootstrap, exclude=frozenset(exclude)
        )
        if section is not None:
            sections[family.name] = section
    return sections


def paired_comparisons(
    a: Scores, b: Scores, *, resamples: int | None = None, seed: int = 0
) -> list[PairedComparison]:
    """``a`` against ``b`` for each k both were scored at (see ``Scores.paired``)."""
    from codereval.scoring.paired import PAIRED_RESAMPLES, compare_paired

    if a.compat != b.compat or (a.compat and a.compat_n != b.compat_n):
        raise UserError(
            f"{a.label} and {b.label} were scored under different conventions",
            hint="score both with --compat (and the same --n) or both without",
        )
    excluded = set(a.board.excluded_tasks) | set(b.board.excluded_tasks)
    in_b = {t.task_id for t in b.tasks}
    shared = [t.task_id for t in a.tasks if t.task_id in in_b and t.task_id not in excluded]
    if not shared:
        raise UserError(
            f"{a.label} and {b.label} have no task in common",
            hint="a paired comparison needs two runs on the same tasks",
        )
    unmatched = len({t.task_id for t in a.tasks} ^ in_b)
    comparisons = []
    for k in (k for k in a.ks if k in b.ks):
        values = [
            task_pass_at(shared, scores.outcomes, k, compat=scores.compat, compat_n=scores.compat_n)
            for scores in (a, b)
        ]
        if not set(values[0]) & set(values[1]):
            continue  # no task has k samples in both runs
        comparison = compare_paired(
            values[0],
            values[1],
            k=k,
            a_label=a.label,
            b_label=b.label,
            task_ids=shared,
            resamples=resamples or PAIRED_RESAMPLES,
            seed=seed,
        )
        comparisons.append(comparison.model_copy(update={"unmatched": unmatched}))
    if not comparisons:
        raise UserError(
            f"{a.label} and {b.label}: no task has k samples in both runs for any k",
            hint="use a smaller --k",
        )
    return comparisons


def _acc(
    item: ScoredInput, *, ks: tuple[int, ...], compat: bool, exclude: list[str]
) -> AccResult | None:
    """Acc@k when the tasks carry oracle context and the samples' code is known."""
    tasks = [t for t in item.tasks if t.task_id not in set(exclude)]
    if not item.samples or not any(t.oracle_context and not t.oracle_context.empty for t in tasks):
        return None
    from codereval.scoring.acc import acc_at_k

    return acc_at_k(tasks, item.samples, ks, compat=compat)


def _categories(item: ScoredInput) -> dict[str, Counter[Category]] | None:
    """CodeGeeX's result categories per language, for HumanEval-family runs."""
    if not any(t.benchmark.startswith("humaneval") for t in item.tasks):
        return None
    from codereval.scoring.categories import distribution

    return distribution(item.outcomes, tasks=item.tasks, samples=item.samples)
