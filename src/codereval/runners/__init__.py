"""Runners, found by name. Nothing heavy is imported until a runner is asked for."""

from __future__ import annotations

import importlib

from codereval.benchmarks import families, family_of
from codereval.errors import UserError
from codereval.model import Language, Task, TestKind
from codereval.runners.base import RunContext, Runner

# name -> "module:Class"; imported only when chosen. Families add their own (all_runners).
RUNNERS: dict[str, str] = {
    "python-project": "codereval.runners.python:PythonProjectRunner",
    "java-project": "codereval.runners.java:JavaProjectRunner",
    "program": "codereval.runners.program:ProgramRunner",
}


def all_runners() -> dict[str, str]:
    """The generic runners and those the benchmark families bring."""
    found = dict(RUNNERS)
    for family in families():
        found.update(family.runners)
    return found


def runner_name_for(task: Task) -> str:
    """Which runner evaluates a task: its family's own (CoderUJB's), else program tests
    (HumanEval, HumanEval-X) or project tests by language."""
    family = family_of(task)
    own = family.runner_for(task) if family is not None else None
    if own is not None:
        return own
    if task.test is not None and task.test.kind is TestKind.PROGRAM:
        return "program"
    if task.language is Language.PYTHON:
        return "python-project"
    if task.language is Language.JAVA:
        return "java-project"
    raise UserError(
        f"task {task.task_id}: no runner for {task.language.value} project tasks",
        hint=f"runners: {', '.join(sorted(all_runners()))}",
    )


def load_runner(name: str) -> Runner:
    runners = all_runners()
    try:
        target = runners[name]
    except KeyError:
        raise UserError(
            f"unknown runner {name!r}", hint=f"choose one of: {', '.join(sorted(runners))}"
        ) from None
    module_name, _, class_name = target.partition(":")
    module = importlib.import_module(module_name)
    cls = getattr(module, class_name)
    runner = cls()
    if not isinstance(runner, Runner):
        raise TypeError(f"{target} is not a Runner")
    return runner


__all__ = ["RUNNERS", "RunContext", "Runner", "all_runners", "load_runner", "runner_name_for"]
