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

from codereval.workspace.leftovers import sweep_dead

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
    return sweep_dead(envs, _STAGING)
