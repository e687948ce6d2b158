"""Samples beyond --jobs while running ones wait: what the local executors do with idle cores.

A real project's test may spend most of its time asleep: a retry's back-off before a network call
fails again (tenacity's ``wait_exponential`` in a sandbox with no network: three seconds a sample
for seconds' worth of nothing), a poll, a timeout it waits out. With exactly ``--jobs`` samples
at once, such a sample holds its slot while its core idles. Here threads beyond the ``--jobs``
ones (as many again, no more) take samples while the machine shows idle capacity within the
``--jobs`` cores and no queue of runnable processes, and stop taking them when it shows more
runnable processes than that (``make -l`` looks at the load the same way, for the same reason).

What is measured is the whole machine (``/proc/stat``): its busy time over the last few ticks
and its runnable processes. On a machine busy with other work the extra threads never start a
sample, so an evaluation never takes more than ``--jobs`` cores from others. A thread that has
started a sample finishes it; nothing is paused or killed. Each sample keeps its own limits, and
a sample's wall time only grows when a sleeping one wakes up beside a lent one, for as long as
the controller takes to see it (a few ticks).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

CPU_STAT = Path("/proc/stat")
# How often the machine is looked at, and over how many looks it is judged: a decision rests on
# a third of a second, long enough to see through one sample's start, short against a back-off.
TICK = 0.1
WINDOW = 3
# Lend one more thread when this much of a core is idle within --jobs' cores ...
IDLE_TO_LEND = 0.6
# ... and take one back when this many more processes are runnable than there are those cores.
RUNNABLE_TO_RECALL = 1.0


def extra_threads(jobs: int) -> int:
    """The threads a run may start beyond --jobs: as many again."""
    return max(1, jobs)


@dataclass(frozen=True)
class CpuReading:
    """One look at the machine: CPU time spent busy and in all (all cores, clock ticks), and
    the processes runnable at that moment."""

    busy: int
    total: int
    runnable: int


def read_cpu(path: Path = CPU_STAT) -> CpuReading | None:
    """The machine's CPU counters now, or None where there is no /proc/stat to read."""
    try:
        text = path.read_text()
    except OSError:
        return None
    busy = total = 0
    runnable: int | None = None
    for line in text.splitlines():
        fields = line.split()
        if not fields:
            continue
        if fields[0] == "cpu" and total == 0:
            try:
                # user nice system idle iowait irq softirq steal (guest time is inside user).
                ticks = [int(v) for v in fields[1:9]]
            except ValueError:
                return None
            if len(ticks) < 5:
                return None
            idle = ticks[3] + ticks[4]
            total = sum(ticks)
            busy = total - idle
        elif fields[0] == "procs_running" and len(fields) > 1 and fields[1].isdigit():
            # The process that reads the file is one of them.
            runnable = max(0, int(fields[1]) - 1)
    if total == 0 or runnable is None:
        return None
    return CpuReading(busy=busy, total=total, runnable=runnable)


class Overlap:
    """How many extra threads may take a sample now, decided by ``observe`` from the machine's
    readings; ``wait`` holds an extra thread until it may."""

    def __init__(self, *, jobs: int, cores: int | None = None,
                 read: Callable[[], CpuReading | None] | None = None, tick: float = TICK) -> None:
        # /proc/stat's first line adds up every core of the machine ...
        self.cores = max(1, cores or os.cpu_count() or 1)
        # ... of which the evaluation may use --jobs, no more than this process may run on.
        usable = cores or len(os.sched_getaffinity(0))
        self.capacity = min(max(1, jobs), max(1, usable))
        self.jobs = max(1, jobs)
        self.extra = extra_threads(jobs)
        self.allowed = 0
        self._read = read or read_cpu
        self._tick = tick
        self._seen: deque[CpuReading] = deque(maxlen=WINDOW + 1)
        # Ticks since the last change: a change is judged on readings that all came after it.
        self._settled = 0
        # --jobs threads still taking samples: an extra thread runs in the place of one gone.
        self._regular = self.jobs
        # Samples running now, and how many started while --jobs others ran.
        self._running = 0
        self.beside = 0
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def available(cls, read: Callable[[], CpuReading | None] | None = None) -> bool:
        """Whether this machine can be looked at (Linux's /proc/stat)."""
        return (read or read_cpu)() is not None

    def observe(self, reading: CpuReading) -> None:
        """Take one reading; after WINDOW of them since the last change, lend or recall one."""
        self._seen.append(reading)
        self._settled += 1
        if len(self._seen) <= WINDOW or self._settled < WINDOW:
            return
        first, last = self._seen[0], self._seen[-1]
        spent = last.total - first.total
        if spent <= 0:
            return
        busy_cores = self.cores * (last.busy - first.busy) / spent
        runnable = sum(r.runnable for r in list(self._seen)[1:]) / WINDOW
        allowed = self.allowed
        if runnable >= self.capacity + RUNNABLE_TO_RECALL:
            allowed = max(0, allowed - 1)
        elif (self.capacity - busy_cores >= IDLE_TO_LEND
              and runnable <= self.capacity - IDLE_TO_LEND):
            allowed = min(self.extra, allowed + 1)
        if allowed != self.allowed:
            with self._cond:
                self.allowed = allowed
                self._settled = 0
                self._cond.notify_all()

    def may_run(self, extra: int) -> bool:
        """Whether the extra thread numbered ``extra`` (from 0) may take a sample now."""
        return extra < self.allowed + (self.extra - self._regular)

    def wait(self, extra: int, stop: threading.Event) -> bool:
        """Block until extra thread ``extra`` may take a sample (True) or the run stops."""
        with self._cond:
            while not self.may_run(extra):
                if stop.is_set() or self._stop.is_set():
                    return False
                self._cond.wait(self._tick)
        return not stop.is_set()

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Around one sample's run; it counts in ``beside`` if --jobs others were running."""
        with self._cond:
            if self._running >= self.jobs:
                self.beside += 1
            self._running += 1
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1

    def regular_done(self) -> None:
        """A --jobs thread took its last sample: an extra one may run in its place."""
        with self._cond:
            self._regular = max(0, self._regular - 1)
            self._cond.notify_all()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._watch, name="codereval-overlap",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(self._tick):
            reading = self._read()
            if reading is None:
                return
            self.observe(reading)
