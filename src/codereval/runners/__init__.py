"""Runners, found by name. Nothing heavy is imported until a runner is asked for."""

from __future__ import annotations

import importlib

from codereval.errors import UserError
from codereval.model import Language, Task, TestKind, UjbKind
from codereval.runners.base import RunContext, Runner

# name -> "module:Class"; imported only when chosen.
RUNNERS: dict[str, str] = {
    "python-project": "codereval.runners.python:PythonProjectRunner",
    "java-project": "codereval.runners.java:JavaProjectRunner",
    "program": "codereval.runners.program:ProgramRunner",
    "coderujb": "codereval.runners.coderujb:CoderUjbRunner",
    "coderujb-dd": "codereval.runners.coderujb_dd:CoderUjbDefectRunner",
}


def runner_name_for(task: Task) -> str:
    """Which runner evaluates a task: CoderUJB's (defect detection reads an answer; the other
    kinds run on bug versions), program tests (HumanEval, HumanEval-X) or project tests."""
    if task.ujb is not None and task.ujb.kind is UjbKind.DD:
        # Defect detection reads an answer; nothing is run.
        return "coderujb-dd"
    if task.ujb is not None:
        return "coderujb"
    if task.test is not None and task.test.kind is TestKind.PROGRAM:
        return "program"
    if task.language is Language.PYTHON:
        return "python-project"
    if task.language is Language.JAVA:
        return "java-project"
    raise UserError(
        f"task {task.task_id}: no runner for {task.language.value} project tasks",
        hint=f"runners: {', '.join(sorted(RUNNERS))}",
    )


def load_runner(name: str) -> Runner:
    try:
        target = RUNNERS[name]
    except KeyError:
        raise UserError(
            f"unknown runner {name!r}", hint=f"choose one of: {', '.join(sorted(RUNNERS))}"
        ) from None
    module_name, _, class_name = target.partition(":")
    module = importlib.import_module(module_name)
    cls = getattr(module, class_name)
    runner = cls()
    if not isinstance(runner, Runner):
        raise TypeError(f"{target} is not a Runner")
    return runner


__all__ = ["RUNNERS", "RunContext", "Runner", "load_runner", "runner_name_for"]
