"""How far our analysis agrees with a task's recorded level and oracle context."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from codereval.analysis.deps import Analysis
from codereval.analysis.tasks import analyze_task
from codereval.model import Frozen, OracleContext, Task


class TaskAgreement(Frozen):
    """One task: recorded versus computed. Tokens are compared as sets per type (the official
    records list them in no stable order)."""

    task_id: str
    name: str
    basis: str
    recorded_level: str
    computed_level: str
    missing: dict[str, tuple[str, ...]]  # recorded, not computed
    extra: dict[str, tuple[str, ...]]  # computed, not recorded

    @property
    def level_match(self) -> bool:
        return self.recorded_level == self.computed_level

    @property
    def context_match(self) -> bool:
        return not any(self.missing.values()) and not any(self.extra.values())


def compare(task: Task, analysis: Analysis) -> TaskAgreement:
    recorded = (task.oracle_context or OracleContext()).tokens()
    computed = analysis.oracle_context.tokens()
    return TaskAgreement(
        task_id=task.task_id,
        name=task.name,
        basis=analysis.basis,
        recorded_level=task.level.value if task.level else "",
        computed_level=analysis.level.value,
        missing={t: tuple(x for x in recorded[t] if x not in computed[t]) for t in recorded},
        extra={t: tuple(x for x in computed[t] if x not in recorded[t]) for t in computed},
    )


def agreement(
    tasks: Sequence[Task],
    *,
    project_root: Callable[[Task], Path | None] = lambda task: None,
) -> list[TaskAgreement]:
    """Analyse every task (in its project when ``project_root`` finds it) and compare."""
    return [compare(task, analyze_task(task, project_root=project_root(task))) for task in tasks]


def summary(rows: Sequence[TaskAgreement]) -> str:
    """One line: how many levels and oracle contexts agree."""
    levels = sum(r.level_match for r in rows)
    contexts = sum(r.context_match for r in rows)
    return f"level {levels}/{len(rows)}, oracle_context {contexts}/{len(rows)}"
