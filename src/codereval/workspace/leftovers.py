"""Folders a killed process left behind, found by the pid their names carry.

SIGKILL skips every cleanup; a folder named after the process that made it can be removed by
the next process that sees its maker is gone: evaluations' work roots, environment builds'
staging folders.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from codereval.workspace.views import remove_tree


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_dead(folder: Path, name: re.Pattern[str]) -> list[Path]:
    """Remove the folders in ``folder`` whose name matches ``name`` (its first group: the
    pid of the process that made it) and whose process no longer runs; the removed."""
    removed: list[Path] = []
    if not folder.is_dir():
        return removed
    for path in folder.iterdir():
        found = name.match(path.name)
        if found is None or not path.is_dir() or pid_alive(int(found.group(1))):
            continue
        remove_tree(path)
        removed.append(path)
    return removed
