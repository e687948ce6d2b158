"""CoderEval (ICSE 2024): Python and Java functions tested inside their real projects.

The family holds the records loader, the preparation of the official test tree and of the
projects (``codereval prepare``), the original platform's machine that ``--compat`` rebuilds,
and the agreement with the platform's own verdicts (``codereval compare``). Its built-in
benchmarks, mini-python and mini-java, are CoderEval-shaped tasks on tiny projects.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codereval.benchmarks.family import Family
from codereval.errors import UserError
from codereval.model import Language, Outcome, Sample, Task, TestKind

if TYPE_CHECKING:
    import click

    from codereval.runners.machine import Machine

# The original platform's machine (paths, shell, host), shipped as data.
MACHINE_FILE = "codereval_python/platform.toml"


class CoderEvalFamily(Family):
    name = "codereval"
    names_help = "codereval (with --tasks RECORDS), mini-python, mini-java"

    def load(
        self, name: str, *, data_dir: Path | None, tasks_path: Path | None
    ) -> list[Task] | None:
        from codereval.benchmarks import builtin_dir
        from codereval.families.codereval.records import load_records

        if name == "codereval":
            if tasks_path is None:
                raise UserError(
                    "benchmark 'codereval' needs the records file",
                    hint="pass --tasks CoderEval4Python.json (or CoderEval4Java.json)",
                )
            return load_records(tasks_path)
        if name in ("mini-python", "mini-java"):
            return load_records(builtin_dir(name.replace("-", "_")) / "records.json")
        return None

    def reads_last_resort(self) -> bool:
        # Records are the format people have: anything unrecognised is read as records, whose
        # loader says what is wrong with it.
        return True

    def read_tasks(self, path: Path, *, kind: str | None = None) -> tuple[str, list[Task]]:
        from codereval.families.codereval.records import load_records

        return "codereval", load_records(path)

    def read_results(
        self, path: Path, first: dict[str, Any]
    ) -> tuple[list[Task], list[Outcome], list[Sample]] | None:
        from codereval.families.codereval.official import (
            is_official_results,
            load_official_results,
        )

        if not is_official_results(first):
            return None
        results = load_official_results(path)
        return results.tasks, results.outcomes, results.samples

    def owns(self, task: Task) -> bool:
        # Tasks in the official test layout are CoderEval's whatever file they came from.
        official = task.test is not None and task.test.kind in (
            TestKind.CODEREVAL_MODULE,
            TestKind.CODEREVAL_STANDALONE,
        )
        return official or task.benchmark.startswith("codereval")

    def compat_machine(self, task: Task) -> Machine | None:
        if task.language is not Language.PYTHON:
            return None
        from codereval.runners.machine import load_machine

        return load_machine("codereval.data", MACHINE_FILE)

    def commands(self) -> Sequence[click.Command]:
        from codereval.families.codereval.compare_cmd import compare_command

        return (compare_command,)

    def prepare_commands(self) -> Sequence[click.Command]:
        from codereval.families.codereval.prepare_cmd import prepare_commands

        return prepare_commands()


FAMILY = CoderEvalFamily()
