"""Tasks written as ``codereval.Task`` JSON Lines: `codereval tasks --json` output, a user's own
tasks, the built-in mini CoderUJB benchmark."""

from __future__ import annotations

import json
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


TASK_KEYS = ("task_id", "benchmark", "language", "name")


def is_tasks_jsonl(path: Path) -> bool:
    """Whether a file holds ``Task`` JSON Lines (what ``codereval tasks`` prints): its first
    record carries Task's own required keys, which neither CoderEval records nor CoderUJB rows
    have all of."""
    try:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    first = json.loads(line)
                    return isinstance(first, dict) and all(key in first for key in TASK_KEYS)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return False
