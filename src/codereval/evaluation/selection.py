"""Evaluating part of a benchmark: tasks chosen by id, runnable level or project.

Values of one kind are alternatives (``--only-level self_contained --only-level slib_runnable``:
either); kinds narrow each other (``--only-level class_runnable --only-project a/b``: both).
Every value must name something the benchmark has, so a typo is an error, never an empty or
silently smaller run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from codereval.errors import UserError, name_some
from codereval.model import Level, Sample, Task


@dataclass(frozen=True, kw_only=True)
class TaskFilter:
    task_ids: tuple[str, ...] = ()
    levels: tuple[Level, ...] = ()
    projects: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.task_ids or self.levels or self.projects)

    def describe(self) -> list[str]:
        """The filter as options, for run.json and messages."""
        return ([f"--only-task {t}" for t in self.task_ids]
                + [f"--only-level {level.value}" for level in self.levels]
                + [f"--only-project {p}" for p in self.projects])

    def apply(self, tasks: Sequence[Task], *, benchmark: str) -> list[Task]:
        """The tasks it selects, in the benchmark's order; UserError naming what matched none."""
        self._check(tasks, benchmark=benchmark)
        ids, levels, projects = set(self.task_ids), set(self.levels), set(self.projects)
        chosen = [
            t for t in tasks
            if (not ids or t.task_id in ids)
            and (not levels or t.level in levels)
            and (not projects or t.project in projects)
        ]
        if not chosen:
            raise UserError(f"{' '.join(self.describe())} select no task of {benchmark} together",
                            hint="each matches some tasks, but none matches all; drop one")
        return chosen

    def _check(self, tasks: Sequence[Task], *, benchmark: str) -> None:
        known_ids = {t.task_id for t in tasks}
        unknown = [t for t in dict.fromkeys(self.task_ids) if t not in known_ids]
        if unknown:
            raise UserError(
                f"--only-task: {len(unknown)} task id(s) not in {benchmark}: "
                f"{name_some(unknown)}",
                hint="`codereval tasks RECORDS` lists the ids",
            )
        levels = Counter(t.level.value for t in tasks if t.level is not None)
        for level in self.levels:
            if not levels[level.value]:
                here = (", ".join(f"{name} {n}" for name, n in sorted(levels.items()))
                        or "none: its tasks have no runnable level")
                raise UserError(f"--only-level {level.value}: no task of {benchmark} is at this "
                                "level",
                                hint=f"levels here: {here}")
        projects = {t.project for t in tasks if t.project}
        for project in self.projects:
            if project not in projects:
                raise UserError(
                    f"--only-project {project}: no task of {benchmark} is in this project",
                    hint=(f"projects here: {name_some(sorted(projects), limit=8)}" if projects
                          else "its tasks belong to no project"))


def read_task_ids(values: Iterable[str]) -> tuple[str, ...]:
    """Task ids as given, a ``@FILE`` giving one per line (``#`` starts a comment)."""
    ids: list[str] = []
    for value in values:
        if not value.startswith("@"):
            ids += [part.strip() for part in value.split(",") if part.strip()]
            continue
        path = Path(value[1:])
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise UserError(f"--only-task {value}: cannot read {path}: {why}",
                            hint="give task ids, or @FILE with one id per line") from None
        listed = [line.split("#", 1)[0].strip() for line in text.splitlines()]
        listed = [line for line in listed if line]
        if not listed:
            raise UserError(f"--only-task {value}: {path} lists no task id",
                            hint="one task id per line")
        ids += listed
    return tuple(dict.fromkeys(ids))


def samples_of(samples: Sequence[Sample], tasks: Sequence[Task]) -> list[Sample]:
    """The samples of the selected ``tasks``, in their order; UserError if there are none."""
    chosen = {t.task_id for t in tasks}
    kept = [s for s in samples if s.task_id in chosen]
    if samples and not kept:
        raise UserError(f"the samples have none of the {len(chosen)} selected task(s)",
                        hint="check the --only-* options (or select()) against the samples")
    return kept
