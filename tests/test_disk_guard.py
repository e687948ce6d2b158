"""What counts as a run's own writes, and when the disk guard stops a run."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from codereval.sandbox import disk
from codereval.sandbox.disk import MB, DiskGuard


def _write(path: Path, megabytes: int) -> None:
    path.write_bytes(b"x" * (megabytes * MB))


class _Filesystem:
    """What statvfs tells the guard, moved by hand: free bytes and free inodes."""

    def __init__(self) -> None:
        self.free = 100_000 * MB
        self.inodes = 10**9


@pytest.fixture
def filesystem(monkeypatch: pytest.MonkeyPatch) -> _Filesystem:
    shown = _Filesystem()
    monkeypatch.setattr(disk, "_free", lambda path: (shown.free, shown.inodes))
    return shown


def _count_walks(guard: DiskGuard, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per time the guard counts the run's files."""
    walks: list[int] = []
    real_written = guard.written
    monkeypatch.setattr(guard, "written", lambda: walks.append(1) or real_written())
    return walks


def test_only_what_the_run_created_or_changed_counts_each_file_once(tmp_path: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    _write(base / "module.py", 3)
    scratch = tmp_path / "scratch"
    (scratch / "project").mkdir(parents=True)
    # A workspace hard-links the project's files before the run starts.
    os.link(base / "module.py", scratch / "project" / "module.py")
    time.sleep(0.2)
    guard = DiskGuard([scratch], limit_mb=1)
    assert guard.written()[0] < MB
    _write(scratch / "out.bin", 2)
    os.link(scratch / "out.bin", scratch / "project" / "same.bin")  # hiding it twice
    used, files = guard.written()
    # The file once, and the folder it linked it into (changed by the link).
    assert 2 * MB <= used < 3 * MB and files == 2


def test_it_counts_only_when_the_filesystem_lost_more_than_the_allowance(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, filesystem: _Filesystem) -> None:
    guard = DiskGuard([tmp_path], limit_mb=1)
    walked = _count_walks(guard, monkeypatch)
    _write(tmp_path / "mine", 2)
    assert guard.check() is None and not walked  # the disk did not move: nothing to count
    filesystem.free -= 2 * MB
    assert guard.check() == "wrote more than 1 MB to disk" and walked
    assert guard.exceeded == "wrote more than 1 MB to disk"


def test_after_counting_it_waits_for_the_disk_to_lose_what_the_run_still_may_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, filesystem: _Filesystem) -> None:
    guard = DiskGuard([tmp_path], limit_mb=4)
    walks = _count_walks(guard, monkeypatch)
    _write(tmp_path / "mine", 1)
    filesystem.free -= 5 * MB  # someone else wrote 4 MB
    assert guard.check() is None and len(walks) == 1  # its own: 1 MB of 4
    filesystem.free -= 2 * MB
    assert guard.check() is None and len(walks) == 1  # it could not have written 3 MB more
    filesystem.free -= 2 * MB
    assert guard.check() is None and len(walks) == 2


def test_others_writes_alone_never_stop_a_run(tmp_path: Path,
                                              filesystem: _Filesystem) -> None:
    guard = DiskGuard([tmp_path], limit_mb=1)
    filesystem.free = 100 * MB  # someone else filled the disk down to below the reserve
    assert guard.check() is None


def test_the_allowance_leaves_the_host_its_reserve(tmp_path: Path,
                                                   filesystem: _Filesystem) -> None:
    filesystem.free = disk.RESERVE + 200 * MB
    assert DiskGuard([tmp_path], limit_mb=4096).allowance == 200 * MB
    filesystem.free = disk.RESERVE // 2
    assert DiskGuard([tmp_path], limit_mb=4096).allowance == disk.FLOOR


def test_a_run_that_creates_too_many_files_is_stopped_though_they_are_empty(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, filesystem: _Filesystem) -> None:
    monkeypatch.setattr(disk, "FILES", 50)
    guard = DiskGuard([tmp_path], limit_mb=4096)
    for i in range(60):
        (tmp_path / f"empty-{i}").touch()
    assert guard.check() is None  # the filesystem's inodes did not move
    filesystem.inodes -= 60
    assert guard.check() == "created more than 50 files"


def test_a_folder_inside_another_is_walked_once(tmp_path: Path) -> None:
    scratch = tmp_path / "slot" / "scratch"
    scratch.mkdir(parents=True)
    guard = DiskGuard([scratch, tmp_path / "slot", tmp_path / "missing"], limit_mb=1)
    assert guard._roots == [tmp_path / "slot"]
