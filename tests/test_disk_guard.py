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
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    free = {"now": 100_000 * MB}
    monkeypatch.setattr(disk, "_free", lambda path: (free["now"], 10**9))
    guard = DiskGuard([tmp_path], limit_mb=1)
    walked: list[int] = []
    real_written = guard.written

    def counted() -> int:
        walked.append(1)
        return real_written()

    monkeypatch.setattr(guard, "written", counted)
    _write(tmp_path / "mine", 2)
    assert guard.check() is None and not walked  # the disk did not move: nothing to count
    free["now"] -= 2 * MB
    assert guard.check() == "wrote more than 1 MB to disk" and walked
    assert guard.exceeded == "wrote more than 1 MB to disk"


def test_after_counting_it_waits_for_the_disk_to_lose_what_the_run_still_may_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    free = {"now": 100_000 * MB}
    monkeypatch.setattr(disk, "_free", lambda path: (free["now"], 10**9))
    guard = DiskGuard([tmp_path], limit_mb=4)
    walks: list[int] = []
    real_written = guard.written
    monkeypatch.setattr(guard, "written", lambda: walks.append(1) or real_written())
    _write(tmp_path / "mine", 1)
    free["now"] -= 5 * MB  # someone else wrote 4 MB
    assert guard.check() is None and len(walks) == 1  # its own: 1 MB of 4
    free["now"] -= 2 * MB
    assert guard.check() is None and len(walks) == 1  # it could not have written 3 MB more
    free["now"] -= 2 * MB
    assert guard.check() is None and len(walks) == 2


def test_others_writes_alone_never_stop_a_run(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    free = {"now": 100_000 * MB}
    monkeypatch.setattr(disk, "_free", lambda path: (free["now"], 10**9))
    guard = DiskGuard([tmp_path], limit_mb=1)
    free["now"] = 100 * MB  # someone else filled the disk down to below the reserve
    assert guard.check() is None


def test_the_allowance_leaves_the_host_its_reserve(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(disk, "_free", lambda path: (disk.RESERVE + 200 * MB, 10**9))
    assert DiskGuard([tmp_path], limit_mb=4096).allowance == 200 * MB
    monkeypatch.setattr(disk, "_free", lambda path: (disk.RESERVE // 2, 10**9))
    assert DiskGuard([tmp_path], limit_mb=4096).allowance == disk.FLOOR


def test_a_run_that_creates_too_many_files_is_stopped_though_they_are_empty(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inodes = {"now": 10**9}
    monkeypatch.setattr(disk, "_free", lambda path: (100_000 * MB, inodes["now"]))
    monkeypatch.setattr(disk, "FILES", 50)
    guard = DiskGuard([tmp_path], limit_mb=4096)
    for i in range(60):
        (tmp_path / f"empty-{i}").touch()
    assert guard.check() is None  # the filesystem's inodes did not move
    inodes["now"] -= 60
    assert guard.check() == "created more than 50 files"


def test_a_folder_inside_another_is_walked_once(tmp_path: Path) -> None:
    scratch = tmp_path / "slot" / "scratch"
    scratch.mkdir(parents=True)
    guard = DiskGuard([scratch, tmp_path / "slot", tmp_path / "missing"], limit_mb=1)
    assert guard._roots == [tmp_path / "slot"]
