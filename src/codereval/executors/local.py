"""The fresh executor: a thread pool on this machine, each sample in a new sandboxed process.

What `codereval evaluate` always did: the runners are prepared here, then ``--jobs`` threads
call ``runner.run`` and the outcomes are yielded as they finish.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from codereval.errors import UserError
from codereval.executors.base import Executor, Job
from codereval.executors.sample import (
    ProvenanceFiller,
    default_env_root,
    evaluate_sample,
    make_work_root,
)
from codereval.model import Outcome, Sample
from codereval.runners import RunContext
from codereval.sandbox import get_sandbox
from codereval.workspace import remove_tree


class FreshExecutor(Executor):
    name = "fresh"

    _job: Job | None = None
    _ctx: RunContext | None = None
    _fill: ProvenanceFiller | None = None
    _work_root: Path | None = None
    _blocked: dict[str, str]
    _isolation = ""

    def start(self, job: Job) -> None:
        for name, (runner, _) in job.runners.items():
            missing = runner.missing_toolchain()
            if missing:
                raise UserError(f"runner {name!r} cannot run here: {missing}")
        box = job.sandbox_override or get_sandbox(job.sandbox)
        self._isolation = box.isolation
        self._work_root = make_work_root()
        self._ctx = RunContext(
            sandbox=box,
            limits=job.limits,
            work_root=self._work_root,
            env_root=job.env_root or default_env_root(),
            tests_dir=job.tests_dir,
            projects_dir=job.projects_dir,
            compat=job.compat,
        )
        self._job = job
        self._fill = ProvenanceFiller(
            benchmark_version=job.benchmark_version,
            isolation=box.isolation,
            executor=self.name,
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
        return {"name": self.name, "jobs": self.options.jobs}

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

    def run(self, samples: Sequence[Sample]) -> Generator[Sequence[Outcome], None, None]:
        pool = ThreadPoolExecutor(
            max_workers=max(1, self.options.jobs), thread_name_prefix="codereval"
        )
        try:
            futures: set[Future[Outcome]] = {pool.submit(self._evaluate, s) for s in samples}
            while futures:
                done, futures = wait(futures, return_when=FIRST_COMPLETED)
                yield [f.result() for f in done]
        finally:
            # Closed early (Ctrl-C, a failing store): queued samples never start; running ones
            # finish inside their own limits but are not recorded (they run again on resume).
            pool.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        if self._job is not None:
            for runner, _ in self._job.runners.values():
                runner.close()
        if self._work_root is not None:
            # Workspaces are the runners' to remove; this sweeps what an interrupted one left.
            remove_tree(self._work_root)
