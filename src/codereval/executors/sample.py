"""Evaluating one sample, on whichever machine it runs: the part every executor shares.

A sample whose task could not be prepared, or that has no code, gets its verdict without
running; any other goes to its runner, and a runner that raises is recorded as ``infra_error``.
Every outcome leaves here with its provenance complete (hashes, environment, harness, isolation
and the executor that ran it), so the driver only stores what it receives.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from codereval.model import HARNESS_VERSION, Outcome, Provenance, Sample, Stage, Task, Verdict
from codereval.runners import RunContext, Runner
from codereval.workspace.leftovers import sweep_dead

# Per-evaluation scratch in the temp dir, named with the pid so leftovers of killed runs are found.
WORK_PREFIX = "codereval-work-"
_WORK_ROOT = re.compile(rf"^{re.escape(WORK_PREFIX)}(\d+)-")


def default_env_root() -> Path:
    """This machine's environment cache: $CODEREVAL_HOME, else ~/.cache/codereval."""
    home = os.environ.get("CODEREVAL_HOME")
    return Path(home) if home else Path.home() / ".cache" / "codereval"


def make_work_root() -> Path:
    """A fresh scratch folder for this process's workspaces, after sweeping dead ones."""
    _sweep_stale_work_roots()
    return Path(tempfile.mkdtemp(prefix=f"{WORK_PREFIX}{os.getpid()}-"))


def _sweep_stale_work_roots() -> None:
    """Remove work roots left by evaluations that were killed (kill -9 skips our cleanup)."""
    sweep_dead(Path(tempfile.gettempdir()), _WORK_ROOT)


class ProvenanceFiller:
    """Fills what a runner left blank in an outcome: hashes, environment, harness, isolation,
    executor."""

    def __init__(
        self, *, benchmark_version: str, isolation: str, executor: str, ctx: RunContext,
        override: bool = False,
    ) -> None:
        self.benchmark_version = benchmark_version
        self.isolation = isolation
        self.executor = executor
        # True: ``executor`` replaces what a runner said (a Ray node's fresh run is "ray", its
        # warm one "ray-warm").
        self.override = override
        self.ctx = ctx
        self._fingerprints: dict[tuple[str, str], str] = {}
        # task id -> (the task, its content hash): every sample of a task needs the hash, and
        # hashing means serialising the whole task.
        self._task_hashes: dict[str, tuple[Task, str]] = {}
        self._lock = threading.Lock()

    def task_hash(self, task: Task) -> str:
        known = self._task_hashes.get(task.task_id)
        if known is not None and known[0] is task:
            return known[1]
        value = task.content_hash()
        self._task_hashes[task.task_id] = (task, value)
        return value

    def fingerprint(self, runner: Runner, task: Task) -> str:
        key = (runner.name, task.task_id)
        with self._lock:
            if key in self._fingerprints:
                return self._fingerprints[key]
        try:
            value = runner.environment_fingerprint(task, self.ctx)
        except Exception as exc:
            # Recorded in the outcome rather than failing the sample over bookkeeping.
            value = f"unknown ({type(exc).__name__}: {exc})"
        with self._lock:
            self._fingerprints[key] = value
        return value

    def complete(self, outcome: Outcome, *, runner: Runner, task: Task, sample: Sample) -> Outcome:
        return complete_provenance(
            outcome,
            task=task,
            task_hash=self.task_hash(task),
            sample=sample,
            benchmark_version=self.benchmark_version,
            environment=lambda: self.fingerprint(runner, task),
            isolation=self.isolation,
            executor=self.executor,
            override=self.override,
        )


# A sample that ended here ran no process (unparsable, not injectable, no environment): no
# executor produced its verdict.
_BEFORE_ANY_PROCESS = frozenset({Stage.EXTRACT, Stage.INJECT, Stage.ENVIRONMENT})


def _overridden(executor: str, said: str) -> str:
    # What ran the sample stays told apart under the executor that sent it there.
    return f"{executor}-warm" if said == "warm" else executor


def complete_provenance(
    outcome: Outcome,
    *,
    task: Task,
    sample: Sample,
    benchmark_version: str,
    environment: str | Callable[[], str],
    isolation: str,
    executor: str,
    override: bool = False,
    task_hash: str = "",
) -> Outcome:
    """The outcome with every provenance field set (what the runner gave is kept, but for the
    executor when ``override``)."""
    given = outcome.provenance
    env = given.environment or (environment() if callable(environment) else environment)
    provenance = Provenance(
        benchmark_version=given.benchmark_version or benchmark_version,
        task_hash=given.task_hash or task_hash or task.content_hash(),
        # The store's key: always the code that was handed to the runner.
        code_hash=sample.code_hash(),
        environment=env,
        harness_version=given.harness_version or HARNESS_VERSION,
        executor="none" if outcome.stage in _BEFORE_ANY_PROCESS and not given.executor
        else _overridden(executor, given.executor) if override else (given.executor or executor),
        jvm=given.jvm,
    )
    return outcome.model_copy(
        update={
            "task_id": sample.task_id,
            "sample_index": sample.index,
            "isolation": outcome.isolation or isolation,
            "provenance": provenance,
        }
    )


def evaluate_sample(
    sample: Sample,
    *,
    task: Task,
    runner: Runner,
    blocked: Mapping[str, str],
    ctx: RunContext,
    fill: ProvenanceFiller,
) -> Outcome:
    """The outcome of one sample: blocked, no code, or what its runner judged."""
    reason = blocked.get(sample.task_id)
    if reason is not None:
        outcome = Outcome(
            task_id=sample.task_id,
            sample_index=sample.index,
            verdict=Verdict.INFRA_ERROR,
            stage=Stage.ENVIRONMENT,
            detail=reason,
        )
        return fill.complete(outcome, runner=runner, task=task, sample=sample)
    started = time.monotonic()
    if sample.code is None or not sample.code.strip():
        outcome = Outcome(
            task_id=sample.task_id,
            sample_index=sample.index,
            verdict=Verdict.NO_CODE,
            stage=Stage.EXTRACT,
            detail="no code was extracted from the generation",
        )
        return fill.complete(outcome, runner=runner, task=task, sample=sample)
    outcome = _run(runner, task, sample, ctx, started)
    if waited_out(outcome):
        outcome = _run(runner, task, sample, ctx, time.monotonic())
        detail = f"{outcome.detail}; {RERUN_NOTE}" if outcome.detail else RERUN_NOTE
        outcome = outcome.model_copy(update={"detail": detail})
    return fill.complete(outcome, runner=runner, task=task, sample=sample)


# A run that hit its wall-time limit having used less CPU than this share of its wall time
# spent it mostly waiting: on itself (a sleep, a deadlock, a read nobody answers) or on the
# host (an overloaded machine stalls a sample that would have finished in milliseconds). It
# is run once more, and only a second timeout is the verdict: a busy loop, what models'
# timeouts mostly are, is confirmed by its first run.
WAITED_SHARE = 0.5
# No numbers: the same sample's detail should not change with how busy the host was.
RERUN_NOTE = (f"run twice: the first run timed out having used under {WAITED_SHARE:.0%} of its "
              "wall time on CPU")


def waited_out(outcome: Outcome) -> bool:
    """A timeout whose run mostly waited (see WAITED_SHARE); False where CPU time is unknown."""
    return (
        outcome.verdict is Verdict.TIMEOUT
        and outcome.cpu_time is not None
        and outcome.wall_time is not None
        and outcome.cpu_time < WAITED_SHARE * outcome.wall_time
    )


def _run(runner: Runner, task: Task, sample: Sample, ctx: RunContext, started: float) -> Outcome:
    try:
        outcome = runner.run(task, sample, ctx)
        if outcome.task_id != sample.task_id or outcome.sample_index != sample.index:
            raise RuntimeError(
                f"returned the outcome of {outcome.task_id}#{outcome.sample_index}"
            )
    except Exception as exc:
        # A runner bug is ours, not the model's: recorded as infra_error, never lost.
        outcome = Outcome(
            task_id=sample.task_id,
            sample_index=sample.index,
            verdict=Verdict.INFRA_ERROR,
            stage=Stage.UNKNOWN,
            wall_time=time.monotonic() - started,
            detail=f"runner {runner.name or type(runner).__name__} failed: "
            f"{type(exc).__name__}: {exc}",
        )
    return outcome
