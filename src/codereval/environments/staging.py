"""Folders an environment is fetched or built in before it is renamed into the cache.

A build killed with SIGKILL (or SIGTERM, which Python does not turn into cleanup) leaves its
folder behind, and environments are big (Math's is 30 MB, a Python one with its packages
hundreds). Each folder's name carries the pid of the process that made it, so the next build
into the same cache removes those whose process is gone.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# .<label>.<pid>-<random>: what staging_dir makes.
_STAGING = re.compile(r"^\..+\.(\d+)-[^.]+$")


def staging_dir(envs: Path, label: str) -> Path:
    """A new folder in ``envs`` for ``label`` (``fetch``, an environment's slug and key), named
    after this process."""
    envs.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{label}.{os.getpid()}-", dir=envs))


@contextmanager
def temporary_staging(envs: Path, label: str) -> Iterator[Path]:
    """A staging folder removed on leaving, as tempfile.TemporaryDirectory, but swept by the
    next build when this process is killed first."""
    path = staging_dir(envs, label)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def sweep_staging(envs: Path) -> list[Path]:
    """Remove the staging folders in ``envs`` of processes that no longer run; the removed."""
    removed: list[Path] = []
    if not envs.is_dir():
        return removed
    for path in envs.iterdir():
        found = _STAGING.match(path.name)
        if found is None or not path.is_dir() or _alive(int(found.group(1))):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
