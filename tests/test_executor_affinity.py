"""Threads keep to their group of samples, and to their warm slot: a project's warm worker is
started once, not once per thread (executors/affinity.py, WarmPool.slot)."""

from __future__ import annotations

import threading
from collections import Counter
from itertools import zip_longest
from pathlib import Path

import pytest

from codereval.api import evaluate, load_benchmark
from codereval.executors.affinity import JOIN_AT_LEAST, AffinityQueue
from codereval.model import Sample
from codereval.sandbox.bwrap import BwrapSandbox
from codereval.sandbox.warm import WarmPool


def samples(groups: dict[str, int], *, interleave: bool = True) -> list[Sample]:
    """``n`` samples per group, the groups interleaved (the worst order for two threads)."""
    per = {g: [Sample(task_id=g, index=i, code="") for i in range(n)] for g, n in groups.items()}
    if not interleave:
        return [s for group in per.values() for s in group]
    out = []
    while any(per.values()):
        for group in per.values():
            if group:
                out.append(group.pop(0))
    return out


def by_group(sample: Sample) -> str:
    return sample.task_id


def test_a_thread_keeps_to_its_group_and_the_largest_groups_go_first() -> None:
    queue = AffinityQueue(samples({"a": 2, "b": 5, "c": 3}), by_group)
    taken = [queue.take(0) for _ in range(10)]
    assert [s.task_id for s in taken if s] == ["b"] * 5 + ["c"] * 3 + ["a"] * 2
    assert [s.index for s in taken if s][:5] == [0, 1, 2, 3, 4]  # in order within a group
    assert queue.take(0) is None


def test_two_threads_take_different_groups_while_unclaimed_ones_remain() -> None:
    queue = AffinityQueue(samples({"a": 6, "b": 6, "c": 6, "d": 6}), by_group)
    # Alternating, as two threads finishing one sample each in turn would.
    first = {0: [], 1: []}  # type: dict[int, list[str]]
    for _ in range(12):
        for thread in (0, 1):
            sample = queue.take(thread)
            assert sample is not None
            first[thread].append(sample.task_id)
    assert first[0] == ["a"] * 6 + ["c"] * 6
    assert first[1] == ["b"] * 6 + ["d"] * 6
    assert queue.take(0) is None and queue.take(1) is None


def test_a_group_its_thread_lets_go_of_is_the_next_one_claimed() -> None:
    # A thread lent beyond --jobs and taken back (executors/overlap.py) leaves its group to
    # whichever thread asks first, ahead of the unclaimed ones.
    queue = AffinityQueue(samples({"a": 2, "b": 5, "c": 3}), by_group)
    assert [queue.take(2).task_id for _ in range(2)] == ["b", "b"]  # type: ignore[union-attr]
    queue.release(2)
    queue.release(7)  # a thread holding nothing
    assert [queue.take(0).task_id for _ in range(4)] == ["b", "b", "b", "c"]  # type: ignore[union-attr]


def test_equal_groups_are_claimed_in_the_order_their_samples_came() -> None:
    queue = AffinityQueue(samples({"x": 2, "y": 2, "z": 2}), by_group)
    assert [queue.take(t).task_id for t in (0, 1, 2)] == ["x", "y", "z"]  # type: ignore[union-attr]


def test_a_thread_with_nothing_unclaimed_joins_the_busiest_group_if_enough_is_left() -> None:
    queue = AffinityQueue(samples({"big": 10, "small": 1}), by_group)
    assert queue.take(0).task_id == "big"  # type: ignore[union-attr]
    assert queue.take(1).task_id == "small"  # type: ignore[union-attr]
    joined = queue.take(1)  # 9 left in "big": worth a second worker
    assert joined is not None and joined.task_id == "big"
    # Both draw from it now, each sample once, until it is empty.
    rest = [queue.take(t) for t in (0, 1) * 4]
    assert sorted(s.index for s in [joined, *rest] if s) == list(range(1, 10))
    assert queue.take(0) is None and queue.take(1) is None


def test_the_last_few_samples_of_a_group_stay_on_its_thread() -> None:
    queue = AffinityQueue(samples({"a": JOIN_AT_LEAST, "b": 1}), by_group)
    assert queue.take(0).task_id == "a"  # type: ignore[union-attr]
    assert queue.take(1).task_id == "b"  # type: ignore[union-attr]
    # JOIN_AT_LEAST - 1 left in "a": not worth starting its worker again; this thread is done.
    assert queue.take(1) is None
    assert [queue.take(0).index for _ in range(JOIN_AT_LEAST - 1)] == list(  # type: ignore[union-attr]
        range(1, JOIN_AT_LEAST))
    assert queue.take(0) is None


def test_every_sample_is_taken_exactly_once_by_racing_threads() -> None:
    groups = {f"g{i}": 3 + (7 * i) % 40 for i in range(25)}
    queue = AffinityQueue(samples(groups), by_group)
    taken: list[Sample] = []
    lock = threading.Lock()

    def work(thread: int) -> None:
        while (sample := queue.take(thread)) is not None:
            with lock:
                taken.append(sample)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert Counter((s.task_id, s.index) for s in taken) == Counter(
        (g, i) for g, n in groups.items() for i in range(n))
    assert len(queue) == 0


bwrap = pytest.mark.skipif(BwrapSandbox.unavailable_reason() is not None,
                           reason="bubblewrap unavailable")


@bwrap
def test_a_thread_leases_the_warm_slot_it_had_before(tmp_path: Path) -> None:
    from codereval.sandbox import get_sandbox

    pool = WarmPool(sandbox=get_sandbox("bwrap"), root=tmp_path / "warm")
    barrier = threading.Barrier(3)
    seen: dict[int, set[int]] = {0: set(), 1: set(), 2: set()}

    def lease(thread: int) -> None:
        for _ in range(50):
            barrier.wait()  # all three free their slot at once, then lease again
            with pool.slot() as slot:
                seen[thread].add(slot.index)

    threads = [threading.Thread(target=lease, args=(i,)) for i in range(3)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        pool.close()
    assert all(len(indexes) == 1 for indexes in seen.values()), seen
    assert len(set().union(*seen.values())) == 3


@bwrap
@pytest.mark.slow
def test_each_environments_worker_starts_once_not_once_per_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # mini-python's references, interleaved task by task across its projects: in this order
    # two threads taking samples as they come would both start every project's worker.
    started: list[object] = []
    start = WarmPool._started

    def counted(self: WarmPool, key: object, *args: object, **kwargs: object) -> object:
        started.append(args[2])  # the trust key: the worker without its slot
        return start(self, key, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(WarmPool, "_started", counted)
    benchmark = load_benchmark("mini-python")
    by_project: dict[str, list[dict[str, object]]] = {}
    for task in benchmark.tasks:
        by_project.setdefault(task.project, []).extend(
            {"task_id": task.task_id, "index": i, "code": task.reference} for i in range(3))
    rows = [row for group in zip_longest(*by_project.values()) for row in group if row]
    run = evaluate(benchmark, rows, run_dir=tmp_path / "run", jobs=2, executor="warm")
    assert len(run.outcomes) == 3 * len(benchmark.tasks)
    assert all(o.passed and o.provenance.executor == "warm" for o in run.outcomes)
    groups = len(set(started))
    assert groups >= 2
    # Each group's worker once, and with two threads at most one group joined at its end.
    assert len(started) <= groups + 1, Counter(map(str, started))


def test_a_warm_run_reads_and_writes_its_preload_hints_in_the_machines_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a run's first workers found unfit to preload is kept beside the environments
    ($CODEREVAL_HOME), where the next run's first workers look (sandbox/preload_hints.py)."""
    from codereval.sandbox.preload_hints import PreloadHints

    monkeypatch.setenv("CODEREVAL_HOME", str(tmp_path / "home"))
    folders: list[Path] = []
    read = PreloadHints.read

    def seen(self: PreloadHints, key: str) -> dict[str, str]:
        folders.append(self.folder)
        return read(self, key)

    monkeypatch.setattr(PreloadHints, "read", seen)
    benchmark = load_benchmark("mini-python")
    rows = [{"task_id": t.task_id, "index": 0, "code": t.reference} for t in benchmark.tasks]
    run = evaluate(benchmark, rows, run_dir=tmp_path / "run", jobs=1, executor="warm")
    assert all(o.passed and o.provenance.executor == "warm" for o in run.outcomes)
    assert folders and set(folders) == {tmp_path / "home" / "preload-hints"}
