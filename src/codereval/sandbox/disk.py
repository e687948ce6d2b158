"""Stopping a run that fills the disk (``Limits.disk_mb``).

The file-size rlimit caps one file; nothing caps how many a sample writes, and a loop of
64 MB files puts gigabytes a second on the host's disk (measured: 16.5 GB in a 10 s run),
enough to fill it and make the host's own writes (the results store) fail. Memory cgroups
bound what lands on a tmpfs, not on disk, and Linux has no per-directory quota an
unprivileged sandbox could set.

So the supervisor watches the free space of the filesystems the run may write to (a statvfs
call per tick). Only when a filesystem has lost more than the run's allowance since it
started does it count what the run itself wrote — the files under its writable folders
created or changed since it started, each inode once (a hard-linked project file it did not
touch is not its own) — and stops the run when that is over the allowance. A run beside a
disk hog is never stopped for the other's writes, and counts its files again only once the
disk has lost what it still may write (its writes cannot have reached the allowance before),
or a second later (another process freeing space at the same time hides a run's writes from
the filesystem's count).
The allowance leaves the host a reserve, so a run cannot take the last of a small disk; the
same watch on free inodes stops a run that creates more than ``FILES`` files (empty files take
no space, and a filesystem out of inodes takes no file from anyone).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from codereval.sandbox.base import ExecRequest

MB = 1 << 20
# Left free for the host whatever the limit: a run may not take the last of the disk.
RESERVE = 512 * MB
# However little is free, a run may write this much (its own scratch files, a build).
FLOOR = 64 * MB
# Files (inodes) a run may create: empty files take no space but can exhaust a filesystem's
# inodes, which stops the host from creating any file.
FILES = 500_000
# Seconds between counts of a run's files when the filesystems give no reason to count sooner.
_RECOUNT = 1.0


def _free(path: Path) -> tuple[int, int]:
    """(bytes, inodes) free for an unprivileged user on the filesystem of ``path``."""
    stat = os.statvfs(path)
    return stat.f_bavail * stat.f_frsize, stat.f_favail


class DiskGuard:
    """Per run: ``check()`` on each supervision tick; ``exceeded`` says why it stopped it."""

    def __init__(self, writable: Iterable[Path], *, limit_mb: int) -> None:
        self.started = time.time()
        self.limit_mb = limit_mb
        self.exceeded = ""
        self._roots: list[Path] = []
        # One watched path per filesystem, with what was free there at the start.
        self._free_at_start: dict[int, tuple[Path, tuple[int, int]]] = {}
        for path in writable:
            try:
                device = path.stat().st_dev
                if device not in self._free_at_start:
                    self._free_at_start[device] = (path, _free(path))
            except OSError:
                continue
            self._roots.append(path)
        # A folder inside another is walked with it (a warm sample's scratch in its slot's).
        self._roots = [root for root in self._roots
                       if not any(other != root and root.is_relative_to(other)
                                  for other in self._roots)]
        smallest = min((free[0] for _, free in self._free_at_start.values()), default=0)
        self.allowance = min(limit_mb * MB, max(smallest - RESERVE, FLOOR))
        self.files_allowance = FILES
        self._next_count = time.monotonic() + _RECOUNT
        # The run's files are counted when a filesystem's free space (or free inodes) falls
        # below these.
        self._count_below = {
            device: (free[0] - self.allowance, free[1] - self.files_allowance)
            for device, (_, free) in self._free_at_start.items()}

    def check(self) -> str | None:
        """The reason to stop the run now, or None."""
        if self.exceeded:
            return self.exceeded
        free_now: dict[int, tuple[int, int]] = {}
        for device, (path, _) in self._free_at_start.items():
            try:
                free_now[device] = _free(path)
            except OSError:
                continue
        now = time.monotonic()
        due = any(free[0] < self._count_below[device][0] or free[1] < self._count_below[device][1]
                  for device, free in free_now.items())
        # Space others free at the same time hides a run's writes from the filesystem's count:
        # its files are counted now and then anyway, at most a fiftieth of the time.
        if not due and now < self._next_count:
            return None
        used, files = self.written()
        self._next_count = time.monotonic() + max(_RECOUNT, 50 * (time.monotonic() - now))
        if used > self.allowance:
            self.exceeded = f"wrote more than {self.allowance // MB} MB to disk"
        elif files > self.files_allowance:
            self.exceeded = f"created more than {self.files_allowance} files"
        if self.exceeded:
            return self.exceeded
        # Its own writes take free space: it cannot write the rest of its allowance before
        # the disk has lost as much again, so counting waits until then.
        for device, free in free_now.items():
            self._count_below[device] = (free[0] - (self.allowance - used),
                                         free[1] - (self.files_allowance - files))
        return None

    def written(self) -> tuple[int, int]:
        """Bytes allocated to, and the number of, the files and folders under the writable
        folders that the run created or changed."""
        seen: set[tuple[int, int]] = set()
        total = 0
        # ctime moves on any write, chmod or link: a file older than the run is not its own.
        # (File times come from a coarse clock: a write at the very start may look a few
        # milliseconds older than the run.)
        since = self.started - 0.05
        for root in self._roots:
            for dirpath, dirnames, filenames in os.walk(root):
                for name in (*filenames, *dirnames):
                    try:
                        stat = os.lstat(os.path.join(dirpath, name))
                    except OSError:
                        continue
                    key = (stat.st_dev, stat.st_ino)
                    if stat.st_ctime >= since and key not in seen:
                        seen.add(key)
                        total += stat.st_blocks * 512
        return total, len(seen)


def disk_guard(*requests: ExecRequest, also: Iterable[Path] = ()) -> DiskGuard | None:
    """The guard for a launch running these requests (their scratch and writable mounts, and
    ``also``), or None when the first has no disk limit."""
    limit = requests[0].limits.disk_mb
    if limit is None:
        return None
    paths = dict.fromkeys([
        *(path for request in requests
          for path in (request.scratch, *(m.source for m in request.mounts if m.writable))),
        *also])
    return DiskGuard(paths, limit_mb=limit)


def either(*watches: Callable[[], str | None] | None) -> Callable[[], str | None] | None:
    """One supervision watch from several (None where there are none)."""
    present = [w for w in watches if w is not None]
    if not present:
        return None

    def watch() -> str | None:
        for one in present:
            reason = one()
            if reason:
                return reason
        return None

    return watch
