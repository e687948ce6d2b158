"""The evaluation engine: run every sample of a benchmark through its runner, in parallel.

Load and check inputs, group tasks by runner, hand the pending samples to an executor (a thread
pool here, or a Ray cluster) and write the outcomes it yields to the run directory's store as they
come (one transaction per batch). The main thread alone owns the store, the progress bar and
resume: a re-run of the same command skips what is already finished.
"""

from __future__ import annotations

import dataclasses
import platform
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from codereval.errors import UserError, name_some
from codereval.evaluation.selection import TaskFilter
from codereval.executors import DEFAULT_EXECUTOR, Executor, ExecutorOptions, Job, load_executor
from codereval.executors.sample import default_env_root
from codereval.model import (
    HARNESS_VERSION,
    Level,
    Outcome,
    Sample,
    Task,
    Verdict,
    __version__,
    sha256_text,
)
from codereval.runners import Runner, load_runner, runner_name_for
from codereval.sandbox import Limits, Sandbox
from codereval.sandbox.base import DEFAULT_DISK_MB
from codereval.storage.store import (
    OUTCOMES_JSONL,
    SAMPLES_JSONL,
    STORE_FILE,
    TASKS_JSONL,
    ResultStore,
    current_outcomes,
    export_official,
    export_outcomes,
    outcome_key,
    read_run_json,
    sample_key,
    unwritable,
    write_jsonl_models,
    write_run_json,
)

RUN_FORMAT = "codereval-run/1"
RUN_FILES = (TASKS_JSONL, SAMPLES_JSONL, OUTCOMES_JSONL, STORE_FILE)
# outcomes.jsonl is rewritten whole; the store is the truth, so this only bounds how stale the
# export may be while a run is going (it is always rewritten at the end and on interrupt).
EXPORT_INTERVAL = 2.0
# ... and an export grows with the run (thousands of outcomes read and written again): the
# next one waits this many times as long as the last took, so exports never take more than
# a small share of the thread that records the outcomes.
EXPORT_SHARE = 20


@dataclass(frozen=True, kw_only=True)
class Benchmark:
    """What is evaluated: a name, the tasks, and a version (a hash of the tasks)."""

    name: str
    tasks: list[Task]
    # The tasks file when there is one (recorded in run.json), else where they came from.
    source: str = ""
    source_sha256: str = ""
    # The filter that chose these tasks from the whole benchmark, as options (run.json).
    selection: tuple[str, ...] = ()

    @property
    def version(self) -> str:
        return tasks_version(self.tasks)

    def select(self, *, task_ids: Sequence[str] = (), levels: Sequence[Level | str] = (),
               projects: Sequence[str] = ()) -> Self:
        """The same benchmark cut to the tasks with these ids, levels and projects (each kind
        any of its values, all kinds at once); UserError for a value that matches nothing."""
        unknown = [str(v) for v in levels if v not in set(Level)]
        if unknown:
            raise UserError(f"unknown runnable level(s): {', '.join(unknown)}",
                            hint=f"levels: {', '.join(level.value for level in Level)}")
        chosen = TaskFilter(task_ids=tuple(task_ids), levels=tuple(Level(v) for v in levels),
                            projects=tuple(projects))
        if not chosen:
            return self
        return dataclasses.replace(
            self, tasks=chosen.apply(self.tasks, benchmark=self.name),
            selection=(*self.selection, *chosen.describe()))


def tasks_version(tasks: Sequence[Task]) -> str:
    """The benchmark version: a hash of the tasks as evaluated, independent of file format."""
    return sha256_text("\n".join(t.to_json() for t in tasks))[:16]


@dataclass(frozen=True, kw_only=True)
class EvalOptions:
    jobs: int = 1
    timeout: float = 10.0
    memory_mb: int | None = 2048
    # What a sample may write to disk in all (Limits.disk_mb).
    disk_mb: int | None = DEFAULT_DISK_MB
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
    # Where samples run (see codereval.executors); not part of a run's identity: a run started
    # on one executor may be resumed on another, the verdict rules being the same.
    executor: str = DEFAULT_EXECUTOR
    ray_address: str | None = None
    # What warm project workers import before forking: auto, none, or module names.
    preload: str = "auto"
    # With the ray executor: how each node runs its samples (warm or fresh).
    node_executor: str = "warm"
    # Local executors: more samples while running ones wait with cores idle (overlap.py).
    overlap_waits: bool = True

    def executor_options(self) -> ExecutorOptions:
        return ExecutorOptions(jobs=self.jobs, ray_address=self.ray_address,
                               preload=self.preload, node_executor=self.node_executor,
                               overlap_waits=self.overlap_waits)

    def limits(self) -> Limits:
        # CPU time gets twice the wall time: a sample may use both cores of a small machine
        # for the whole run, but not burn CPU beyond that in processes that outlive the wall.
        return Limits(wall_time=self.timeout, cpu_time=2 * self.timeout, memory_mb=self.memory_mb,
                      disk_mb=self.disk_mb)

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
            # Only when changed: runs from before the limit existed resume as they were.
            **({"disk_mb": self.disk_mb} if self.disk_mb != DEFAULT_DISK_MB else {}),
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
    counts: Counter[str] = field(default_factory=Counter)
    # The executor that ran the samples: fresh, warm or ray.
    executor: str = ""

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


def group_runners(
    tasks: Sequence[Task], overrides: Mapping[str, Runner] | None = None
) -> dict[str, tuple[Runner, list[Task]]]:
    """Group tasks by runner. Toolchains are checked where the samples run (the executor)."""
    groups: dict[str, list[Task]] = {}
    for task in tasks:
        groups.setdefault(runner_name_for(task), []).append(task)
    return {
        name: (overrides[name] if overrides and name in overrides else load_runner(name), group)
        for name, group in groups.items()
    }


def resolve_runners(
    tasks: Sequence[Task], overrides: Mapping[str, Runner] | None = None
) -> dict[str, tuple[Runner, list[Task]]]:
    """Group tasks by runner and check each runner's toolchain on this machine."""
    resolved = group_runners(tasks, overrides)
    for name, (runner, _) in resolved.items():
        missing = runner.missing_toolchain()
        if missing:
            raise UserError(f"runner {name!r} cannot run here: {missing}")
    return resolved


def _projects_location(manifest: Path | None) -> Path | None:
    """What RunContext.projects_dir gets: runners accept the manifest file or a folder holding
    ``projects.toml``; a manifest named so is passed as its folder, any other as the file."""
    if manifest is not None and manifest.is_file() and manifest.name == "projects.toml":
        return manifest.parent
    return manifest


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
    # Rich renders the whole bar on each refresh, terminal or not (10 a second by default):
    # 5% of the driver's CPU on HumanEval. A person reads 4 a second; a log, the last one.
    with Progress(*columns, console=console, transient=False, refresh_per_second=4,
                  auto_refresh=console.is_terminal) as progress:
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
    groups = group_runners([t for t in tasks if t.task_id in used], runners)

    finished: set[tuple[str, int, str]] = set()
    store_path = run_dir / STORE_FILE
    if store_path.exists() and not options.rerun:
        with ResultStore(store_path) as existing:
            finished = existing.finished_keys() | _settled(existing, groups, options.tests_dir)
    pending = [s for s in samples if sample_key(s) not in finished]
    skipped = len(samples) - len(pending)

    executor = load_executor(options.executor, options.executor_options())
    job = Job(
        benchmark_version=benchmark.version,
        tasks={t.task_id: t for t in tasks},
        runners=groups,
        pending=pending,
        limits=options.limits(),
        sandbox=options.sandbox,
        sandbox_override=sandbox,
        env_root=options.env_root,
        tests_dir=options.tests_dir,
        projects_dir=_projects_location(options.projects),
        compat=options.compat,
        notice=lambda text: console.print(f"[yellow]{text}[/]", highlight=False),
    )
    meta: dict[str, Any] = {}
    try:
        executor.start(job)
        ran, outcomes, official = _run_into(
            run_dir, benchmark=benchmark, samples=samples, pending=pending, options=options,
            identity=identity, executor=executor, console=console, meta=meta,
        )  # fmt: skip
    except KeyboardInterrupt:
        if meta:
            meta.update(status="interrupted", interrupted=_now(), executor=executor.describe())
            _write_if_possible(run_dir, meta)
        raise
    except (OSError, sqlite3.Error) as exc:
        refused = unwritable(exc, run_dir)
        if refused is None:
            raise
        if meta:
            meta.update(status="stopped", stopped=_now(), reason=refused.message,
                        executor=executor.describe())
            _write_if_possible(run_dir, meta)
        raise refused from exc
    finally:
        executor.close()
    return RunReport(
        run_dir=run_dir,
        tasks=tasks,
        samples=list(samples),
        outcomes=outcomes,
        ran=ran,
        skipped=skipped,
        isolation=executor.isolation,
        official=official,
        counts=_counts(outcomes),
        executor=executor.name,
    )


def _write_if_possible(run_dir: Path, meta: dict[str, Any]) -> None:
    # Saying why a run stopped is worth a try; a disk that refused the store may refuse this
    # too, and then the store (intact) still says what was finished.
    with suppress(OSError):
        write_run_json(run_dir, meta)


def _run_into(
    run_dir: Path,
    *,
    benchmark: Benchmark,
    samples: Sequence[Sample],
    pending: Sequence[Sample],
    options: EvalOptions,
    identity: dict[str, Any],
    executor: Executor,
    console: Console,
    meta: dict[str, Any],
) -> tuple[int, list[Outcome], Path | None]:
    """The run once its executor started: the run directory, the samples, the exports.
    ``meta`` is filled in place as soon as run.json exists (the caller records a stop in it)."""
    tasks = benchmark.tasks
    _warn_about_isolation(executor.isolation, console)
    meta.update(_start_run_dir(
        run_dir,
        benchmark=benchmark,
        samples=samples,
        options=options,
        identity=identity,
        isolation=executor.isolation,
        executor=executor.describe(),
    ))
    with ResultStore.open(run_dir) as store:
        if options.rerun:
            store.clear()
        ran = _run_pending(
            pending,
            store=store,
            options=options,
            console=console,
            executor=executor,
            export=lambda: _export(run_dir, tasks, samples, store, options),
        )
        outcomes, official = _export(run_dir, tasks, samples, store, options)
    meta.update(
        status="finished",
        finished=_now(),
        counts=dict(_counts(outcomes)),
        executor=executor.describe(),
    )
    write_run_json(run_dir, meta)
    return ran, outcomes, official


def _settled(store: ResultStore, groups: Mapping[str, tuple[Runner, list[Task]]],
             tests_dir: Path | None) -> set[tuple[str, int, str]]:
    """Infra errors their runner calls final (see Runner.settled): not run again."""
    owner = {t.task_id: (runner, t) for runner, group in groups.values() for t in group}
    keys = set()
    for outcome in store.infra_errors():
        found = owner.get(outcome.task_id)
        if found is not None and found[0].settled(outcome, found[1], tests_dir):
            keys.add(outcome_key(outcome))
    return keys


def _warn_about_isolation(isolation: str, console: Console) -> None:
    # Several when the machines differ (a Ray cluster), joined by ", ".
    names = isolation.split(", ")
    if "none" in names:
        console.print(
            "[bold red]WARNING: --sandbox none: generated code runs unconfined, with your "
            "permissions, network and files. Use it only to debug trusted samples.[/]"
        )
    elif not all(name.startswith("bwrap") for name in names):
        console.print(
            f"[yellow]note: isolation is {isolation!r} (resource limits only, no "
            "filesystem or network isolation); install bubblewrap for the full sandbox[/]"
        )


def _counts(outcomes: Sequence[Outcome]) -> Counter[str]:
    return Counter(o.verdict.value for o in outcomes)


def _start_run_dir(
    run_dir: Path,
    *,
    benchmark: Benchmark,
    samples: Sequence[Sample],
    options: EvalOptions,
    identity: dict[str, Any],
    isolation: str,
    executor: dict[str, Any],
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
            **({"selection": list(benchmark.selection)} if benchmark.selection else {}),
        },
        "samples": len(samples),
        "mode": options.mode,
        "compat": options.compat,
        "harness_version": HARNESS_VERSION,
        "codereval_version": __version__,
        "sandbox": {"requested": options.sandbox, "isolation": isolation},
        "executor": executor,
        "options": {
            "jobs": options.jobs,
            "timeout": options.timeout,
            "memory_mb": options.memory_mb,
            "disk_mb": options.disk_mb,
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
    executor: Executor,
    export: Callable[[], object],
) -> int:
    """Record what the executor yields; the calling thread alone writes the store."""
    ran = 0
    recorded: set[tuple[str, int, str]] = set()
    batches = executor.run(pending)
    try:
        with _progress(options.progress, len(pending), console) as advance:
            next_export = time.monotonic() + EXPORT_INTERVAL
            for given in batches:
                # A sample is counted once, whatever an executor retried behind our back.
                batch = [o for o in given if outcome_key(o) not in recorded]
                recorded.update(outcome_key(o) for o in batch)
                store.record(batch)
                ran += len(batch)
                for outcome in batch:
                    advance(outcome.verdict.value)
                started = time.monotonic()
                if started >= next_export:
                    export()
                    took = time.monotonic() - started
                    next_export = time.monotonic() + max(EXPORT_INTERVAL, EXPORT_SHARE * took)
    except BaseException:
        # Ctrl-C or a failing store: the executor stops what has not started, and the exports
        # show exactly what the store committed (the rest runs again on resume) if they can be
        # written: a disk that refused the store may refuse them too, and what stopped the run
        # is what the user must hear.
        batches.close()
        with suppress(OSError, sqlite3.Error):
            export()
        raise
    return ran


__all__ = [
    "Benchmark",
    "EvalOptions",
    "RunReport",
    "check_sample_ids",
    "default_env_root",
    "evaluate",
    "group_runners",
    "mean_pass_rate",
    "resolve_runners",
    "tasks_version",
]
