"""A build killed before it renamed its folder into the cache leaves that folder behind
(SIGKILL skips every cleanup); the next build into the same cache removes it, and only the
folders of processes that are gone."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from codereval.environments.base import ProjectSpec
from codereval.environments.java import JavaEnvironmentBuilder
from codereval.environments.python import PythonEnvironmentBuilder
from codereval.environments.staging import staging_dir, sweep_staging, temporary_staging
from codereval.model import Language


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def _left_behind(envs: Path, label: str, pid: int) -> Path:
    path = envs / f".{label}.{pid}-k1ll3d"
    (path / "src").mkdir(parents=True)
    (path / "src" / "big.bin").write_bytes(b"x" * 1024)
    return path


def test_only_the_folders_of_processes_that_are_gone_are_swept(tmp_path: Path) -> None:
    envs = tmp_path / "envs"
    dead = _left_behind(envs, "Lang@3ad95cb5dbab663f-b5aeee8ba4fa6d834759", _dead_pid())
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as other:
        try:
            building = _left_behind(envs, "fetch", other.pid)
            mine = staging_dir(envs, "fetch")
            ready = envs / "Lang@3ad95cb5dbab663f-b5aeee8ba4fa6d834759"
            ready.mkdir()
            lock = envs / ".Lang@3ad95cb5dbab663f-b5aeee8ba4fa6d834759.lock"
            lock.write_text("")
            assert sweep_staging(envs) == [dead]
            assert building.is_dir() and mine.is_dir() and ready.is_dir() and lock.is_file()
            assert mine.name.startswith(f".fetch.{os.getpid()}-")
        finally:
            other.kill()


def test_a_temporary_staging_folder_is_gone_after_use(tmp_path: Path) -> None:
    with temporary_staging(tmp_path, "fetch") as folder:
        (folder / "src").mkdir()
    assert not folder.exists()


@pytest.mark.parametrize("builder", [JavaEnvironmentBuilder, PythonEnvironmentBuilder])
def test_the_next_build_sweeps_what_a_killed_one_left(
        builder: type[JavaEnvironmentBuilder] | type[PythonEnvironmentBuilder],
        tmp_path: Path) -> None:
    envs = tmp_path / "envs"
    dead = _left_behind(envs, "fetch", _dead_pid())
    language = Language.JAVA if builder is JavaEnvironmentBuilder else Language.PYTHON
    spec = ProjectSpec(name="x/y", language=language, source=str(tmp_path / "missing"))
    # The missing source is beside the point: the sweep comes first.
    with contextlib.suppress(Exception):
        builder().build(spec, root=tmp_path)
    assert not dead.exists()
    assert [p.name for p in envs.iterdir() if p.name.startswith(".fetch")] == []


def test_an_evaluation_sweeps_the_work_roots_of_killed_ones() -> None:
    """The same rule for evaluations' work roots in the temp folder."""
    import tempfile

    from codereval.executors.sample import WORK_PREFIX, make_work_root
    from codereval.workspace.views import remove_tree

    dead = Path(tempfile.mkdtemp(prefix=f"{WORK_PREFIX}{_dead_pid()}-"))
    (dead / "sample-3").mkdir()
    (dead / "sample-3" / "solution.py").write_text("pass\n", encoding="utf-8")
    mine = make_work_root()
    try:
        assert not dead.exists()
        assert mine.is_dir() and mine.name.startswith(f"{WORK_PREFIX}{os.getpid()}-")
    finally:
        remove_tree(mine)
