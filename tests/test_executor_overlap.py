"""More samples while running ones wait: the local executors start a sample beyond --jobs only
while the machine shows idle cores within --jobs and no queue of runnable processes, take the
extra threads back when it does, and never when the machine is busy with other work."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from codereval.api import evaluate, load_benchmark
from codereval.executors import overlap as overlap_module
from codereval.executors.base import ExecutorOptions
from codereval.executors.local import FreshExecutor
from codereval.executors.overlap import WINDOW, CpuReading, Overlap, read_cpu
from codereval.model import Outcome, Sample, Stage, Verdict

PROC_STAT = """cpu  1000 20 300 5000 40 0 10 0 0 0
cpu0 500 10 150 2500 20 0 5 0 0 0
cpu1 500 10 150 2500 20 0 5 0 0 0
intr 12345 0 0
ctxt 999
procs_running 3
procs_blocked 0
"""


def test_the_machine_is_read_from_proc_stat(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    stat.write_text(PROC_STAT)
    # idle is idle + iowait; the reader itself is one of the runnable processes.
    assert read_cpu(stat) == CpuReading(busy=1330, total=6370, runnable=2)


@pytest.mark.parametrize("text", ["", "cpu  a b c d e\nprocs_running 1\n",
                                  "cpu  1 2 3 4 5 6 7 8\n", "procs_running 2\n"])
def test_a_machine_without_readable_counters_gets_no_overlap(tmp_path: Path, text: str) -> None:
    stat = tmp_path / "stat"
    stat.write_text(text)
    assert read_cpu(stat) is None
    assert read_cpu(tmp_path / "missing") is None
    assert not Overlap.available(lambda: read_cpu(stat))


def machine(busy_cores: float, runnable: int, cores: int = 2) -> Callable[[], CpuReading]:
    """Readings of a machine that keeps ``busy_cores`` busy with ``runnable`` processes."""
    state = {"busy": 0.0, "total": 0.0}

    def read() -> CpuReading:
        state["busy"] += busy_cores * 10
        state["total"] += cores * 10
        return CpuReading(busy=int(state["busy"]), total=int(state["total"]),
                          runnable=runnable)

    return read


def settle(gate: Overlap, read: Callable[[], CpuReading], ticks: int) -> None:
    for _ in range(ticks):
        gate.observe(read())


def test_one_thread_is_lent_per_window_of_idle_readings_and_no_more_than_jobs() -> None:
    gate = Overlap(jobs=2, cores=2)
    idle = machine(busy_cores=1.0, runnable=1)  # one sample runs, the other sleeps
    settle(gate, idle, WINDOW)
    assert gate.allowed == 0  # not judged before a whole window
    settle(gate, idle, 1)
    assert gate.allowed == 1 and gate.may_run(0) and not gate.may_run(1)
    settle(gate, idle, WINDOW - 1)
    assert gate.allowed == 1  # the change is judged on readings taken after it
    settle(gate, idle, 1 + 10 * WINDOW)
    assert gate.allowed == 2  # as many again as --jobs, never more


def test_a_machine_kept_busy_lends_nothing() -> None:
    gate = Overlap(jobs=2, cores=2)
    # Both samples running (and the driver): no core idle within --jobs.
    settle(gate, machine(busy_cores=2.0, runnable=2), 10 * WINDOW)
    assert gate.allowed == 0
    # Idle cores, but another program's processes queue for them: nothing lent either.
    gate = Overlap(jobs=2, cores=2)
    settle(gate, machine(busy_cores=1.0, runnable=2), 10 * WINDOW)
    assert gate.allowed == 0


def test_jobs_below_the_cores_lend_only_within_jobs() -> None:
    gate = Overlap(jobs=1, cores=4)
    # One of four cores busy (another program, or the one sample): nothing idle within --jobs 1.
    settle(gate, machine(busy_cores=1.0, runnable=1, cores=4), 10 * WINDOW)
    assert gate.allowed == 0
    settle(gate, machine(busy_cores=0.1, runnable=0, cores=4), WINDOW + 1)
    assert gate.allowed == 1


def test_lent_threads_are_taken_back_when_processes_queue_for_the_cores() -> None:
    gate = Overlap(jobs=2, cores=2)
    settle(gate, machine(busy_cores=0.5, runnable=0), 10 * WINDOW)
    assert gate.allowed == 2
    crowded = machine(busy_cores=2.0, runnable=4)  # the sleepers woke up beside the lent ones
    settle(gate, crowded, WINDOW + 1)
    assert gate.allowed == 1
    settle(gate, crowded, WINDOW)
    assert gate.allowed == 0 and not gate.may_run(0)


def test_an_extra_thread_runs_in_the_place_of_a_jobs_thread_that_is_done() -> None:
    gate = Overlap(jobs=2, cores=2)
    assert not gate.may_run(0)
    gate.regular_done()
    assert gate.may_run(0) and not gate.may_run(1)
    stop = threading.Event()
    assert gate.wait(0, stop)
    stop.set()
    assert not gate.wait(1, stop)


class TimedExecutor(FreshExecutor):
    """The fresh executor's threads and scheduling, each sample a sleep of its given length
    (what a test in a back-off does: it holds a thread and no core)."""

    def __init__(self, options: ExecutorOptions, lengths: dict[int, float]) -> None:
        super().__init__(options)
        self.lengths = lengths
        self.spans: dict[int, tuple[float, float]] = {}
        self._affinity = {}

    def affinity(self, sample: Sample) -> str:
        return "project"

    def _evaluate(self, sample: Sample) -> Outcome:
        start = time.monotonic()
        time.sleep(self.lengths[sample.index])
        self.spans[sample.index] = (start, time.monotonic())
        return Outcome(task_id=sample.task_id, sample_index=sample.index,
                       verdict=Verdict.PASSED, stage=Stage.DONE)


def most_at_once(spans: dict[int, tuple[float, float]]) -> int:
    events = sorted([(s, 1) for s, _ in spans.values()] + [(e, -1) for _, e in spans.values()])
    now = most = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def run_timed(monkeypatch: pytest.MonkeyPatch, *, overlap: bool,
              read: Callable[[], CpuReading]) -> TimedExecutor:
    monkeypatch.setattr(overlap_module, "read_cpu", read)
    monkeypatch.setattr(overlap_module.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(overlap_module.os, "cpu_count", lambda: 2)
    # The first sample waits 2 s; six short ones come after it in the same group.
    lengths = {0: 2.0} | {i: 0.03 for i in range(1, 7)}
    executor = TimedExecutor(ExecutorOptions(jobs=1, overlap_waits=overlap), lengths)
    samples = [Sample(task_id="t", index=i, raw="", code="") for i in lengths]
    got = [o.sample_index for batch in executor.run(samples) for o in batch]
    assert sorted(got) == sorted(lengths)  # each sample once
    return executor


def test_samples_run_beside_one_that_waits_while_the_machine_is_idle(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    executor = run_timed(monkeypatch, overlap=True, read=machine(busy_cores=0.1, runnable=0))
    slow_start, slow_end = executor.spans[0]
    beside = [i for i, (s, e) in executor.spans.items() if i and slow_start < s and e < slow_end]
    assert beside and most_at_once(executor.spans) == 2
    assert executor.describe()["samples_beyond_jobs"] >= len(beside)


def test_exactly_jobs_at_once_when_the_machine_is_busy_or_overlap_is_off(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    busy = run_timed(monkeypatch, overlap=True, read=machine(busy_cores=1.0, runnable=1))
    assert most_at_once(busy.spans) == 1 and busy.describe()["samples_beyond_jobs"] == 0
    off = run_timed(monkeypatch, overlap=False, read=machine(busy_cores=0.1, runnable=0))
    assert most_at_once(off.spans) == 1 and "samples_beyond_jobs" not in off.describe()


def test_the_run_records_whether_samples_overlapped_waits(tmp_path: Path) -> None:
    bench = load_benchmark("mini-python")
    sample = Sample(task_id="fe3947f5ba6363ba3802a73e", index=0, raw="",
                    code="def normalize_whitespace(t):\n    return ' '.join(t.split())\n")
    run = evaluate(bench, [sample], run_dir=tmp_path / "run", jobs=1, timeout=20,
                   executor="fresh", overlap_waits=False)
    assert run.outcomes[0].verdict is Verdict.PASSED
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    assert meta["executor"] == {"name": "fresh", "jobs": 1, "overlap_waits": False}
