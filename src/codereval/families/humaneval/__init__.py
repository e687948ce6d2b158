"""HumanEval (Chen et al., 2021): 164 Python programs, the bundled copy or a given file."""

from __future__ import annotations

from pathlib import Path

from codereval.benchmarks.family import Family
from codereval.model import Task


class HumanEvalFamily(Family):
    name = "humaneval"
    names_help = "humaneval"

    def load(
        self, name: str, *, data_dir: Path | None, tasks_path: Path | None
    ) -> list[Task] | None:
        if name != "humaneval":
            return None
        from codereval.families.humaneval.dataset import load_humaneval

        return load_humaneval(path=tasks_path)


FAMILY = HumanEvalFamily()
