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
disk has lost what it still may write (its writes cannot have reached the allowance before).
The allowance leaves the host a reserve, so a run cannot take the last of a small disk.
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


def _free(path: Path) -> int:
    stat = os.statvfs(path)
    return stat.f_bavail * stat.f_frsize


class DiskGuard:
    """Per run: ``check()`` on each supervision tick; ``exceeded`` says why it stopped it."""

    def __init__(self, writable: Iterable[Path], *, limit_mb: int) -> None:
        self.started = time.time()
        self.limit_mb = limit_mb
        self.exceeded = ""
        self._roots: list[Path] = []
        # One watched path per filesystem, with its free space at the start.
        self._free_at_start: dict[int, tuple[Path, int]] = {}
        for path in writable:
            try:
                device = path.stat().st_dev
            except OSError:
                continue
            self._roots.append(path)
            if device not in self._free_at_start:
                self._free_at_start[device] = (path, _free(path))
        smallest = min((free for _, free in self._free_at_start.values()), default=0)
        self.allowance = min(limit_mb * MB, max(smallest - RESERVE, FLOOR))
        # Counting the run's files is done only when a filesystem's free space falls below this.
        self._count_below = {device: free - self.allowance
                             for device, (_, free) in self._free_at_start.items()}

    def check(self) -> str | None:
        """The reason to stop the run now, or None."""
        if self.exceeded:
            return self.exceeded
        free_now: dict[int, int] = {}
        for device, (path, _) in self._free_at_start.items():
            try:
                free_now[device] = _free(path)
            except OSError:
                continue
        if not any(free < self._count_below[device] for device, free in free_now.items()):
            return None
        used = self.written()
        if used > self.allowance:
            self.exceeded = f"wrote more than {self.allowance // MB} MB to disk"
            return self.exceeded
        # Its own writes take free space: it cannot write the rest of its allowance before
        # the disk has lost as much again, so counting waits until then.
        for device, free in free_now.items():
            self._count_below[device] = free - (self.allowance - used)
        return None

    def written(self) -> int:
        """Bytes allocated to files under the writable folders created or changed by the run."""
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
        return total


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
