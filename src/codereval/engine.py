"""The evaluation engine: run every sample of a benchmark through its runner, in parallel.

Load and check inputs, group tasks by runner, prepare each runner, then a pool of workers calls
``runner.run`` while the main thread writes outcomes to the run directory's store as they come
(one transaction per batch). A re-run of the same command skips what is already finished.
"""

from __future__ import annotations

import itertools
import os
import platform
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from codereval import HARNESS_VERSION, __version__
from codereval.errors import UserError, name_some
from codereval.model import Outcome, Provenance, Sample, Stage, Task, Verdict, sha256_text
from codereval.runners import RunContext, Runner, load_runner, runner_name_for
from codereval.sandbox import Limits, Sandbox, get_sandbox
from codereval.store import (
    OUTCOMES_JSONL,
    SAMPLES_JSONL,
    STORE_FILE,
    TASKS_JSONL,
    ResultStore,
    current_outcomes,
    export_official,
    export_outcomes,
    read_run_json,
    sample_key,
    write_jsonl_models,
    write_run_json,
)
from codereval.workspace import remove_tree

if TYPE_CHECKING:
    from codereval.sandbox.warm import Preload

RUN_FORMAT = "codereval-run/1"
# Per-evaluation scratch in the temp dir, named with the pid so leftovers of killed runs are found.
WORK_PREFIX = "codereval-work-"
RUN_FILES = (TASKS_JSONL, SAMPLES_JSONL, OUTCOMES_JSONL, STORE_FILE)
# outcomes.jsonl is rewritten whole; the store is the truth, so this only bounds how stale the
# export may be while a run is going (it is always rewritten at the end and on interrupt).
EXPORT_INTERVAL = 2.0


@dataclass(frozen=True, kw_only=True)
class Benchmark:
    """What is evaluated: a name, the tasks, and a version (a hash of the tasks)."""

    name: str
    tasks: list[Task]
    # The tasks file when there is one (recorded in run.json), else where they came from.
    source: str = ""
    source_sha256: str = ""

    @property
    def version(self) -> str:
        return tasks_version(self.tasks)


def tasks_version(tasks: Sequence[Task]) -> str:
    """The benchmark version: a hash of the tasks as evaluated, independent of file format."""
    return sha256_text("\n".join(t.to_json() for t in tasks))[:16]


@dataclass(frozen=True, kw_only=True)
class EvalOptions:
    jobs: int = 1
    timeout: float = 10.0
    memory_mb: int | None = 2048
    sandbox: str = "auto"
    compat: bool = False
    rerun: bool = False
    tests_dir: Path | None = None
    projects: Path | None = None
    env_root: Path | None = None
    # Gold validation runs (samples built from references) are told apart from model runs.
    mode: str = "samples"
    progress: bool = True
    # Name of the official result export, "<samples file>_out.jsonl".
    official_name: str = "samples.jsonl_out.jsonl"
    # How Python samples run: "fresh" (a new sandbox and interpreter each) or "warm" (forked
    # from sandboxed workers; codereval.sandbox.warm). Others always run fresh.
    # "" picks warm where the sandbox is bwrap, else fresh.
    executor: str = ""
    # What warm project workers import before forking: auto, none, or module names.
    preload: str = "auto"

    def limits(self) -> Limits:
        # CPU time gets twice the wall time: a sample may use both cores of a small machine
        # for the whole run, but not burn CPU beyond that in processes that outlive the wall.
        return Limits(wall_time=self.timeout, cpu_time=2 * self.timeout, memory_mb=self.memory_mb)

    def identity(self) -> dict[str, Any]:
        """The options that can change a verdict: a run dir is resumed only when they match."""
        return {
            "mode": self.mode,
            "timeout": self.timeout,
            "memory_mb": self.memory_mb,
            "sandbox": self.sandbox,
            "compat": self.compat,
            "tests_dir": str(self.tests_dir.resolve()) if self.tests_dir else "",
            "projects": str(self.projects.resolve()) if self.projects else "",
        }


@dataclass(frozen=True, kw_only=True)
class RunReport:
    run_dir: Path
    tasks: list[Task]
    samples: list[Sample]
    outcomes: list[Outcome]
    ran: int
    skipped: int
    isolation: str
    official: Path | None = None
    executor: str = "fresh"
    counts: Counter[str] = field(default_factory=Counter)

    def pass_at_1(self) -> float:
        """Mean over tasks with samples of the fraction of their samples that passed."""
        return mean_pass_rate(self.outcomes)


def mean_pass_rate(outcomes: Sequence[Outcome]) -> float:
    """Mean over the tasks with outcomes of the fraction of their outcomes that passed."""
    per_task: dict[str, list[bool]] = {}
    for outcome in outcomes:
        per_task.setdefault(outcome.task_id, []).append(outcome.passed)
    if not per_task:
        return 0.0
    return sum(sum(v) / len(v) for v in per_task.values()) / len(per_task)


def default_env_root() -> Path:
    home = os.environ.get("CODEREVAL_HOME")
    return Path(home) if home else Path.home() / ".cache" / "codereval"


def check_sample_ids(tasks: Sequence[Task], samples: Sequence[Sample]) -> None:
    """Every sample names a known task, once per index: else one line naming the culprits."""
    known = {t.task_id for t in tasks}
    unknown = sorted({s.task_id for s in samples if s.task_id not in known})
    if unknown:
        raise UserError(
            f"{len(unknown)} sample task id(s) not in the tasks: {name_some(unknown)}",
            hint="check that the samples were generated for this benchmark",
        )
    seen: set[tuple[str, int]] = set()
    for sample in samples:
        key = (sample.task_id, sample.index)
        if key in seen:
            raise UserError(
                f"duplicate sample {sample.task_id} index {sample.index}",
                hint="give each sample of a task its own index",
            )
        seen.add(key)


def resolve_runners(
    tasks: Sequence[Task], overrides: Mapping[str, Runner] | None = None
) -> dict[str, tuple[Runner, list[Task]]]:
    """Group tasks by runner and check each runner's toolchain before anything runs."""
    groups: dict[str, list[Task]] = {}
    for task in tasks:
        groups.setdefault(runner_name_for(task), []).append(task)
    resolved: dict[str, tuple[Runner, list[Task]]] = {}
    for name, group in groups.items():
        runner = overrides[name] if overrides and name in overrides else load_runner(name)
        missing = runner.missing_toolchain()
        if missing:
            raise UserError(f"runner {name!r} cannot run here: {missing}")
        resolved[name] = (runner, group)
    return resolved


def _projects_location(manifest: Path | None) -> Path | None:
    """What RunContext.projects_dir gets: runners accept the manifest file or a folder holding
    ``projects.toml``; a manifest named so is passed as its folder, any other as the file."""
    if manifest is not None and manifest.is_file() and manifest.name == "projects.toml":
        return manifest.parent
    return manifest


def _sweep_stale_work_roots() -> None:
    """Remove work roots left by evaluations that were killed (kill -9 skips our cleanup)."""
    for path in Path(tempfile.gettempdir()).glob(f"{WORK_PREFIX}*-*"):
        pid_text = path.name[len(WORK_PREFIX) :].split("-", 1)[0]
        if not pid_text.isdigit() or _alive(int(pid_text)):
            continue
        remove_tree(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _check_resumable(run_dir: Path, identity: dict[str, Any], *, rerun: bool) -> None:
    meta = read_run_json(run_dir)
    if meta is None:
        # Other files may live there (`codereval run` keeps its generations beside the run);
        # files we would overwrite may not, unless they are ours from a run that never started.
        ours = [n for n in RUN_FILES if (run_dir / n).exists()]
        if ours and not rerun:
            raise UserError(
                f"{run_dir} is not a codereval run directory but holds {', '.join(ours)}",
                hint="choose a new --out directory, or pass --rerun to overwrite",
            )
        return
    if rerun:
        return
    previous = meta.get("identity", {})
    if previous != identity:
        keys = set(previous) | set(identity)
        changed = sorted(k for k in keys if previous.get(k) != identity.get(k))
        raise UserError(
            f"{run_dir} holds a run with different {', '.join(changed)}",
            hint="re-run with the same tasks and options, pass --rerun to start it over, "
            "or choose a new --out",
        )


class _Provenance:
    """Fills what a runner left blank in an outcome: hashes, environment, harness, isolation."""

    def __init__(
        self, *, benchmark_version: str, isolation: str, ctx: RunContext, executor: str
    ) -> None:
        self.benchmark_version = benchmark_version
        self.isolation = isolation
        self.executor = executor
        self.ctx = ctx
        self._fingerprints: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

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
        given = outcome.provenance
        provenance = Provenance(
            benchmark_version=given.benchmark_version or self.benchmark_version,
            task_hash=given.task_hash or task.content_hash(),
            # The store's key: always the code that was handed to the runner.
            code_hash=sample.code_hash(),
            environment=given.environment or self.fingerprint(runner, task),
            harness_version=given.harness_version or HARNESS_VERSION,
            # Runners say when they ran a sample another way (e.g. fresh under --executor warm).
            executor=given.executor or self.executor,
        )
        return outcome.model_copy(
            update={
                "task_id": sample.task_id,
                "sample_index": sample.index,
                "isolation": outcome.isolation or self.isolation,
                "provenance": provenance,
            }
        )


def _run_one(
    runner: Runner, task: Task, sample: Sample, ctx: RunContext, fill: _Provenance
) -> Outcome:
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
    return fill.complete(outcome, runner=runner, task=task, sample=sample)


@contextmanager
def _progress(enabled: bool, total: int, console: Console) -> Iterator[Callable[[str], None]]:
    if not enabled or total == 0:
        yield lambda verdict: None
        return
    counts: Counter[str] = Counter()
    columns = (
        TextColumn("[bold]evaluating"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[counts]}"),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        bar = progress.add_task("evaluate", total=total, counts="")

        def advance(verdict: str) -> None:
            counts[verdict] += 1
            done = sum(counts.values())
            text = f"passed {counts[Verdict.PASSED.value]}/{done}"
            if counts[Verdict.INFRA_ERROR.value]:
                text += f" [red]infra_error {counts[Verdict.INFRA_ERROR.value]}[/]"
            progress.update(bar, advance=1, counts=text)

        yield advance


def evaluate(
    *,
    benchmark: Benchmark,
    samples: Sequence[Sample],
    run_dir: Path,
    options: EvalOptions,
    runners: Mapping[str, Runner] | None = None,
    sandbox: Sandbox | None = None,
    console: Console | None = None,
) -> RunReport:
    """Evaluate ``samples`` of ``benchmark`` into ``run_dir``; resume what is already there.

    Everything that can be wrong with the inputs is checked before the run directory is
    touched. ``runners`` overrides registry runners by name (library use, tests).
    """
    console = console or Console(stderr=True)
    tasks = benchmark.tasks
    check_sample_ids(tasks, samples)
    identity = {"benchmark": benchmark.name, "tasks": benchmark.version, **options.identity()}
    _check_resumable(run_dir, identity, rerun=options.rerun)
    used = {s.task_id for s in samples}
    groups = resolve_runners([t for t in tasks if t.task_id in used], runners)
    box = sandbox or get_sandbox(options.sandbox)
    executor, preload = _check_executor(options, box)
    if box.isolation == "none":
        console.print(
            "[bold red]WARNING: --sandbox none: generated code runs unconfined, with your "
            "permissions, network and files. Use it only to debug trusted samples.[/]"
        )
    elif not box.isolation.startswith("bwrap"):
        console.print(
            f"[yellow]note: isolation is {box.isolation!r} (resource limits only, no "
            "filesystem or network isolation); install bubblewrap for the full sandbox[/]"
        )

    finished: set[tuple[str, int, str]] = set()
    store_path = run_dir / STORE_FILE
    if store_path.exists() and not options.rerun:
        with ResultStore(store_path) as existing:
            finished = existing.finished_keys()
    pending = [s for s in samples if sample_key(s) not in finished]
    skipped = len(samples) - len(pending)

    env_root = options.env_root or default_env_root()
    _sweep_stale_work_roots()
    work_root = Path(tempfile.mkdtemp(prefix=f"{WORK_PREFIX}{os.getpid()}-"))
    warm = None
    if preload is not None:
        from codereval.sandbox.warm import WarmPool

        # A worker per (environment, slot); a few idle ones beyond the slots stay warm.
        warm = WarmPool(sandbox=box, root=work_root / "warm", preload=preload,
                        max_workers=2 * options.jobs + 2)
    ctx = RunContext(
        sandbox=box,
        limits=options.limits(),
        work_root=work_root,
        env_root=env_root,
        tests_dir=options.tests_dir,
        projects_dir=_projects_location(options.projects),
        compat=options.compat,
        warm=warm,
    )
    task_by_id = {t.task_id: t for t in tasks}
    runner_of = {t.task_id: runner for runner, group in groups.values() for t in group}
    fill = _Provenance(benchmark_version=benchmark.version, isolation=box.isolation, ctx=ctx,
                       executor=executor)
    meta: dict[str, Any] = {}
    try:
        blocked: dict[str, str] = {}
        pending_tasks = {s.task_id for s in pending}
        for runner, group in groups.values():
            todo = [t for t in group if t.task_id in pending_tasks]
            if todo:
                blocked.update(runner.prepare(todo, ctx))

        meta = _start_run_dir(
            run_dir,
            benchmark=benchmark,
            samples=samples,
            options=options,
            identity=identity,
            isolation=box.isolation,
            executor=executor,
        )
        with ResultStore.open(run_dir) as store:
            if options.rerun:
                store.clear()
            ran = _run_pending(
                pending,
                store=store,
                options=options,
                console=console,
                work=lambda s: _evaluate_sample(
                    s, task_by_id=task_by_id, runner_of=runner_of, blocked=blocked, ctx=ctx,
                    fill=fill,
                ),
                export=lambda: _export(run_dir, tasks, samples, store, options),
            )
            outcomes, official = _export(run_dir, tasks, samples, store, options)
        meta.update(status="finished", finished=_now(), counts=dict(_counts(outcomes)))
        write_run_json(run_dir, meta)
    except KeyboardInterrupt:
        if meta:
            meta.update(status="interrupted", interrupted=_now())
            write_run_json(run_dir, meta)
        raise
    finally:
        for runner, _ in groups.values():
            runner.close()
        if warm is not None:
            warm.close()
        # Workspaces are the runners' to remove; this sweeps what an interrupted worker left.
        remove_tree(work_root)
    return RunReport(
        run_dir=run_dir,
        tasks=tasks,
        samples=list(samples),
        outcomes=outcomes,
        ran=ran,
        skipped=skipped,
        isolation=box.isolation,
        official=official,
        counts=_counts(outcomes),
        executor=executor,
    )


def _check_executor(options: EvalOptions, box: Sandbox) -> tuple[str, Preload | None]:
    """The executor to use and, for warm, what its workers preload. UserError when the
    executor cannot run with this sandbox (checked before the run directory is touched)."""
    from codereval.sandbox.bwrap import BwrapSandbox
    from codereval.sandbox.warm import EXECUTORS, Preload

    if options.executor not in ("", *EXECUTORS):
        raise UserError(f"unknown executor {options.executor!r}",
                        hint=f"choose one of: {', '.join(EXECUTORS)}")
    preload = Preload.parse(options.preload)
    bwrap = isinstance(box, BwrapSandbox)
    executor = options.executor or ("warm" if bwrap else "fresh")
    if executor == "fresh":
        return executor, None
    if not bwrap:
        raise UserError(
            f"the warm executor runs in the bwrap sandbox, not {box.isolation!r}",
            hint="install bubblewrap (scripts/setup-system.sh), or pass --executor fresh",
        )
    return executor, preload


def _counts(outcomes: Sequence[Outcome]) -> Counter[str]:
    return Counter(o.verdict.value for o in outcomes)


def _evaluate_sample(
    sample: Sample,
    *,
    task_by_id: Mapping[str, Task],
    runner_of: Mapping[str, Runner],
    blocked: Mapping[str, str],
    ctx: RunContext,
    fill: _Provenance,
) -> Outcome:
    task = task_by_id[sample.task_id]
    runner = runner_of[sample.task_id]
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
    return _run_one(runner, task, sample, ctx, fill)


def _start_run_dir(
    run_dir: Path,
    *,
    benchmark: Benchmark,
    samples: Sequence[Sample],
    options: EvalOptions,
    identity: dict[str, Any],
    isolation: str,
    executor: str,
) -> dict[str, Any]:
    run_dir.mkdir(parents=True, exist_ok=True)
    previous = read_run_json(run_dir) or {}
    meta: dict[str, Any] = {
        "format": RUN_FORMAT,
        "benchmark": {
            "name": benchmark.name,
            "version": benchmark.version,
            "source": benchmark.source,
            "source_sha256": benchmark.source_sha256,
            "tasks": len(benchmark.tasks),
        },
        "samples": len(samples),
        "mode": options.mode,
        "compat": options.compat,
        "harness_version": HARNESS_VERSION,
        "codereval_version": __version__,
        "sandbox": {"requested": options.sandbox, "isolation": isolation},
        "executor": {"name": executor, "preload": options.preload},
        "options": {
            "jobs": options.jobs,
            "timeout": options.timeout,
            "memory_mb": options.memory_mb,
            "cpu_time": options.limits().cpu_time,
            "tests_dir": identity["tests_dir"],
            "projects": identity["projects"],
            "official_name": options.official_name,
        },
        "identity": identity,
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.release()} {platform.machine()}",
        "argv": sys.argv[1:],
        "started": previous.get("started", _now()) if not options.rerun else _now(),
        "resumed": [*previous.get("resumed", []), _now()] if previous and not options.rerun else [],
        "finished": None,
        "status": "running",
    }
    write_jsonl_models(run_dir / TASKS_JSONL, benchmark.tasks)
    write_jsonl_models(run_dir / SAMPLES_JSONL, samples)
    write_run_json(run_dir, meta)
    return meta


def _export(
    run_dir: Path,
    tasks: Sequence[Task],
    samples: Sequence[Sample],
    store: ResultStore,
    options: EvalOptions,
) -> tuple[list[Outcome], Path | None]:
    outcomes = current_outcomes(samples, store.outcomes())
    export_outcomes(run_dir, outcomes)
    official = None
    if options.official_name:
        official = export_official(run_dir / options.official_name, tasks, samples, outcomes)
    return outcomes, official


def _run_pending(
    pending: Sequence[Sample],
    *,
    store: ResultStore,
    options: EvalOptions,
    console: Console,
    work: Callable[[Sample], Outcome],
    export: Callable[[], object],
) -> int:
    """Run samples on a pool of workers; the calling thread alone writes the store."""
    ran = 0
    jobs = max(1, options.jobs)
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="codereval")
    try:
        with _progress(options.progress, len(pending), console) as advance:
            # A few samples queued per worker, not all of them: waiting on every pending
            # future after each completion costs quadratic time on big runs.
            queue = iter(pending)
            futures: set[Future[Outcome]] = {
                pool.submit(work, s) for s in itertools.islice(queue, 4 * jobs)}
            last_export = time.monotonic()
            while futures:
                done, futures = wait(futures, return_when=FIRST_COMPLETED)
                futures |= {pool.submit(work, s) for s in itertools.islice(queue, len(done))}
                batch = [f.result() for f in done]
                store.record(batch)
                ran += len(batch)
                for outcome in batch:
                    advance(outcome.verdict.value)
                if time.monotonic() - last_export >= EXPORT_INTERVAL:
                    export()
                    last_export = time.monotonic()
    except BaseException:
        # Ctrl-C or a failing store: queued samples never start, running ones finish inside
        # their own limits but are not recorded (they run again on resume), and the exports
        # show exactly what the store committed.
        pool.shutdown(wait=True, cancel_futures=True)
        export()
        raise
    pool.shutdown(wait=True)
    return ran


__all__ = [
    "Benchmark",
    "EvalOptions",
    "RunReport",
    "check_sample_ids",
    "default_env_root",
    "evaluate",
    "mean_pass_rate",
    "resolve_runners",
    "tasks_version",
]
