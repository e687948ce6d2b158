"""Tasks written as ``codereval.Task`` JSON Lines (the built-in mini CoderUJB benchmark)."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from codereval.errors import UserError
from codereval.model import Task


def load_tasks_jsonl(path: Path) -> list[Task]:
    """One ``Task`` per line; a line that is not one is a one-line error naming it."""
    if not path.is_file():
        raise UserError(f"tasks file not found: {path}")
    tasks: list[Task] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            tasks.append(Task.from_json(line))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise UserError(f"{path}:{number}: not a task ({where}: {first['msg']})") from None
    return tasks
