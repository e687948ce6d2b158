"""The local executors: a thread pool on this machine.

``fresh`` is what `codereval evaluate` always did: the runners are prepared here, then
``--jobs`` threads call ``runner.run``, each sample in a new sandboxed process, and the outcomes
are yielded as they finish. ``warm`` is the same pool with a ``WarmPool`` in the run context:
the Python runners fork their samples from sandboxed workers (codereval.sandbox.warm), and the
Java and JavaScript ones start their JVM or node from such a fork.
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Sequence
from contextlib import nullcontext, suppress
from pathlib import Path
from queue import Empty, SimpleQueue
from typing import Any

from codereval.errors import UserError
from codereval.executors.affinity import AffinityQueue
from codereval.executors.base import Executor, ExecutorOptions, Job
from codereval.executors.overlap import Overlap, extra_threads
from codereval.executors.sample import (
    ProvenanceFiller,
    default_env_root,
    evaluate_sample,
    make_work_root,
)
from codereval.model import Outcome, Sample
from codereval.runners import RunContext
from codereval.sandbox import Sandbox, get_sandbox
from codereval.sandbox.preload_hints import HINTS_FOLDER, PreloadHints
from codereval.sandbox.warm import Preload, WarmPool
from codereval.workspace.views import remove_tree


class FreshExecutor(Executor):
    name = "fresh"

    _job: Job | None = None
    _ctx: RunContext | None = None
    _fill: ProvenanceFiller | None = None
    _work_root: Path | None = None
    _blocked: dict[str, str]
    _isolation = ""
    _affinity: dict[str, str]
    _beside = 0

    def start(self, job: Job) -> None:
        self._start(job, job.sandbox_override or get_sandbox(job.sandbox))

    def _warm_pool(self, box: Sandbox, work_root: Path, home: Path) -> WarmPool | None:
        return None

    def _start(self, job: Job, box: Sandbox) -> None:
        for name, (runner, _) in job.runners.items():
            missing = runner.missing_toolchain()
            if missing:
                raise UserError(f"runner {name!r} cannot run here: {missing}")
        self._isolation = box.isolation
        self._work_root = make_work_root()
        home = job.env_root or default_env_root()
        self._ctx = RunContext(
            warm=self._warm_pool(box, self._work_root, home),
            sandbox=box,
            limits=job.limits,
            work_root=self._work_root,
            env_root=home,
            tests_dir=job.tests_dir,
            projects_dir=job.projects_dir,
            compat=job.compat,
        )
        self._job = job
        self._fill = ProvenanceFiller(
            benchmark_version=job.benchmark_version,
            isolation=box.isolation,
            # Under warm, a runner says "warm" for what a worker ran; the rest (languages built
            # in the sandbox, compat runs, fallbacks) ran fresh.
            executor="fresh",
            ctx=self._ctx,
        )
        self._blocked = {}
        pending_tasks = {s.task_id for s in job.pending}
        for runner, group in job.runners.values():
            todo = [t for t in group if t.task_id in pending_tasks]
            if todo:
                self._blocked.update(runner.prepare(todo, self._ctx))

    @property
    def isolation(self) -> str:
        return self._isolation

    def describe(self) -> dict[str, Any]:
        described: dict[str, Any] = {"name": self.name, "jobs": self.options.jobs,
                                     "overlap_waits": self.options.overlap_waits}
        if self.options.overlap_waits:
            # Samples that started while --jobs others ran (executors/overlap.py).
            described["samples_beyond_jobs"] = self._beside
        return described

    def _evaluate(self, sample: Sample) -> Outcome:
        assert self._job is not None and self._ctx is not None and self._fill is not None
        runner, _ = self._job.runners[self._job.runner_names[sample.task_id]]
        return evaluate_sample(
            sample,
            task=self._job.tasks[sample.task_id],
            runner=runner,
            blocked=self._blocked,
            ctx=self._ctx,
            fill=self._fill,
        )

    def affinity(self, sample: Sample) -> str:
        """The group whose warm state the sample shares (its runner's ``affinity``)."""
        assert self._job is not None and self._ctx is not None
        key = self._affinity.get(sample.task_id)
        if key is None:
            name = self._job.runner_names[sample.task_id]
            runner, _ = self._job.runners[name]
            key = f"{name}:{runner.affinity(self._job.tasks[sample.task_id], self._ctx)}"
            self._affinity[sample.task_id] = key
        return key

    def run(self, samples: Sequence[Sample]) -> Generator[Sequence[Outcome], None, None]:
        # Each thread keeps to one group of samples while it has one (executors/affinity.py),
        # so a project's warm worker starts on one slot, not on every thread's.
        self._affinity = {}
        queue = AffinityQueue(samples, self.affinity)
        # What the threads finished, put there by each of them (an outcome, or what a thread
        # raised); None when a thread has taken its last sample.
        finished: SimpleQueue[Outcome | BaseException | None] = SimpleQueue()
        stop = threading.Event()

        jobs = max(1, self.options.jobs)
        # Threads beyond --jobs take samples only while running ones leave cores idle
        # (executors/overlap.py): a test asleep in a back-off does not hold up the run.
        overlap = (Overlap(jobs=jobs) if self.options.overlap_waits and Overlap.available()
                   else None)

        def work(thread: int) -> None:
            extra = thread - jobs
            try:
                while not stop.is_set():
                    if overlap is not None and extra >= 0 and not overlap.may_run(extra):
                        # Its group waits for whichever thread asks first, not for this one.
                        queue.release(thread)
                        if not overlap.wait(extra, stop):
                            break
                    sample = queue.take(thread)
                    if sample is None:
                        break
                    with overlap.running() if overlap is not None else nullcontext():
                        finished.put(self._evaluate(sample))
            except BaseException as exc:  # handed to the engine, which ends the run
                finished.put(exc)
            finally:
                if overlap is not None and extra < 0:
                    overlap.regular_done()
                finished.put(None)

        count = jobs + (overlap.extra if overlap is not None else 0)
        threads = [threading.Thread(target=work, args=(i,), name=f"codereval-{i}")
                   for i in range(count)]
        if overlap is not None:
            overlap.start()
        for thread in threads:
            thread.start()
        try:
            working = len(threads)
            while working:
                # One wake-up per batch of finished samples, not one per sample.
                got = [finished.get()]
                with suppress(Empty):
                    while True:
                        got.append(finished.get_nowait())
                batch: list[Outcome] = []
                for item in got:
                    if item is None:
                        working -= 1
                    elif isinstance(item, BaseException):
                        raise item
                    else:
                        batch.append(item)
                if batch:
                    yield batch
        finally:
            # Closed early (Ctrl-C, a failing store): no thread takes another sample; running
            # ones finish inside their own limits but are not recorded (they run again on
            # resume).
            stop.set()
            if overlap is not None:
                overlap.stop()
            for thread in threads:
                thread.join()
            if overlap is not None:
                self._beside += overlap.beside

    def close(self) -> None:
        if self._job is not None:
            for runner, _ in self._job.runners.values():
                runner.close()
        if self._ctx is not None and self._ctx.warm is not None:
            self._ctx.warm.close()
        if self._work_root is not None:
            # Workspaces are the runners' to remove; this sweeps what an interrupted one left.
            remove_tree(self._work_root)


class WarmExecutor(FreshExecutor):
    """Python samples forked from sandboxed workers, the rest fresh. Needs bubblewrap; with
    ``auto`` (no --executor given) a machine without it runs fresh instead."""

    name = "warm"

    def __init__(self, options: ExecutorOptions, *, auto: bool = False) -> None:
        super().__init__(options)
        self.auto = auto

    def start(self, job: Job) -> None:
        from codereval.sandbox.bwrap import BwrapSandbox

        self._preload = Preload.parse(self.options.preload)
        box = job.sandbox_override or get_sandbox(job.sandbox)
        if not isinstance(box, BwrapSandbox):
            if not self.auto:
                raise UserError(
                    f"the warm executor runs in the bwrap sandbox, not {box.isolation!r}",
                    hint="install bubblewrap (scripts/setup-system.sh), or pass --executor fresh",
                )
            self.name = "fresh"
        self._start(job, box)

    def _warm_pool(self, box: Sandbox, work_root: Path, home: Path) -> WarmPool | None:
        if self.name != "warm":
            return None
        # A worker per (environment, slot); a few idle ones beyond the slots stay warm.
        # Threads beyond --jobs while samples wait (executors/overlap.py) hold slots too.
        jobs = max(1, self.options.jobs)
        threads = jobs + (extra_threads(jobs) if self.options.overlap_waits else 0)
        return WarmPool(sandbox=box, root=work_root / "warm", preload=self._preload,
                        max_workers=2 * threads + 2, hints=PreloadHints(home / HINTS_FOLDER))

    def describe(self) -> dict[str, Any]:
        described = super().describe()
        if self.name == "warm":
            described["preload"] = self.options.preload
        return described
