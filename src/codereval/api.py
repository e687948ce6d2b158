"""The Python API: load a benchmark, generate samples, evaluate them, score and compare runs.

For notebooks, training loops and scripts; the CLI commands are a thin layer over it::

    import codereval

    bench = codereval.load_benchmark("mini-python")
    samples = [{"task_id": t.task_id, "completion": t.reference} for t in bench.tasks]
    run = codereval.evaluate(bench, samples, run_dir="runs/mini")
    codereval.score(run, k=(1,)).to_dataframe()

Options are keyword-only, with the CLI's defaults. Bad input raises the CLI's errors:
``codereval.errors.UserError``, whose message says in one line what is wrong and how to fix it.
An interrupted ``evaluate`` (KeyboardInterrupt) keeps every finished outcome in the run directory;
calling it again with the same arguments resumes without running a finished sample again.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codereval.errors import UserError
from codereval.evaluation import engine
from codereval.evaluation.selection import samples_of
from codereval.model import Sample, Task
from codereval.sandbox.base import DEFAULT_DISK_MB
from codereval.scoring.scores import Scores
from codereval.storage import store

if TYPE_CHECKING:
    from rich.console import Console

    from codereval.families.codereval.agreement import Agreement
    from codereval.generation.base import Backend, SamplingOptions
    from codereval.generation.session import GenerationReport
    from codereval.prompting.prompts import Prompt, PromptStyle, PromptVariant

# A file or directory given as a string or a path.
PathArg = str | os.PathLike[str]
# Samples as evaluate takes them: a samples file, or Python objects.
SamplesArg = PathArg | Iterable[Sample | Mapping[str, Any]]

SANDBOX_CHOICES = ("auto", "bwrap", "rlimit", "none")
# The official export's name when samples come from memory rather than a file.
MEMORY_OFFICIAL_NAME = store.official_results_name("samples.jsonl")
_NAMED = re.compile(
    r"codereval|coderujb(-[a-z]+)?|mini-python|mini-java|mini-coderujb|humaneval|"
    r"humanevalx-[a-z]+(-to-[a-z]+)?"
)


# --- benchmarks ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, repr=False)
class Benchmark(engine.Benchmark):
    """A benchmark ready to evaluate: its tasks, and where their tests and projects are.

    ``tasks`` are ``codereval.Task`` objects; ``version`` is a hash of them (recorded with
    every outcome). ``tests_dir`` and ``projects`` locate CoderEval's official tests and project
    manifest (a built-in benchmark brings its own); ``default_samples`` is the samples file a
    built-in benchmark ships, evaluated when ``evaluate`` is given no samples.
    """

    tests_dir: Path | None = None
    projects: Path | None = None
    default_samples: Path | None = None

    def __repr__(self) -> str:
        return f"Benchmark(name={self.name!r}, tasks={len(self.tasks)}, version={self.version!r})"

    def __len__(self) -> int:
        return len(self.tasks)


def load_benchmark(
    name_or_records: str | os.PathLike[str] | Sequence[Task] | None = None,
    *,
    data_dir: PathArg | None = None,
    tests_dir: PathArg | None = None,
    projects: PathArg | None = None,
    prepared: PathArg | None = None,
) -> Benchmark:
    """Load a benchmark by name, from a CoderEval records file, or from ``Task`` objects.

    ``name_or_records`` is a name (``"mini-python"``, ``"mini-java"``, ``"mini-coderujb"``,
    ``"humaneval"``, ``"humanevalx-<lang>"``, ``"humanevalx-<source>-to-<target>"``), a records file
    (``CoderEval4Python.json``, ``records.jsonl``; a ``Path`` is always a file), or a list of
    ``Task``s; or leave it out and pass ``prepared``, a directory written by
    ``codereval prepare``. ``data_dir`` holds a HumanEval-X language's
    ``humaneval_<lang>.jsonl.gz``; ``tests_dir`` is the official CoderEval test tree (the folder
    holding ``repos/``) and ``projects`` the projects manifest (``projects.toml``).

    Raises UserError for an unknown name, a missing or malformed file, or a missing directory.
    """
    data = _path(data_dir)
    tests = _path(tests_dir)
    manifest = _path(projects)
    if name_or_records is None or isinstance(name_or_records, str | os.PathLike):
        name, records = _name_or_path(name_or_records)
        return open_benchmark(
            name=name,
            tasks_path=records,
            data_dir=data,
            tests_dir=tests,
            projects=manifest,
            prepared=_path(prepared),
        )
    tasks = list(name_or_records)
    wrong = next((t for t in tasks if not isinstance(t, Task)), None)
    if wrong is not None:
        raise UserError(
            f"expected a benchmark name, a records file or Task objects, got a list holding "
            f"{type(wrong).__name__}",
            hint="load records files by path: load_benchmark('CoderEval4Python.json')",
        )
    if not tasks:
        raise UserError("no tasks given", hint="pass a non-empty list of codereval.Task")
    if prepared is not None:
        raise UserError("--prepared names the tasks; do not pass --tasks or --benchmark")
    _check_locations(tests, manifest)
    families = sorted({t.benchmark for t in tasks})
    return Benchmark(
        name=families[0] if len(families) == 1 else "custom",
        tasks=tasks,
        source="python objects",
        tests_dir=tests,
        projects=manifest,
    )


def open_benchmark(
    *,
    name: str | None = None,
    tasks_path: Path | None = None,
    data_dir: Path | None = None,
    tests_dir: Path | None = None,
    projects: Path | None = None,
    prepared: Path | None = None,
) -> Benchmark:
    """The benchmark `codereval evaluate` options name (--benchmark, --tasks, --prepared ...).

    A built-in benchmark brings its projects manifest, official tests and samples unless given.
    """
    if prepared is not None:
        from codereval.families.codereval.prepare.codereval_python import read_prepared

        if tasks_path is not None or name is not None:
            raise UserError("--prepared names the tasks; do not pass --tasks or --benchmark")
        tasks_path, prepared_tests, prepared_projects = read_prepared(prepared)
        tests_dir = tests_dir or prepared_tests
        projects = projects or prepared_projects
    if tests_dir is not None and not tests_dir.is_dir():
        raise UserError(f"tests directory not found: {tests_dir}", hint="check --tests-dir")
    bench_name, tasks, source, builtin = _load_tasks(name, tasks_path, data_dir)
    if projects is None and builtin is not None and (builtin / "projects.toml").exists():
        projects = builtin / "projects.toml"
    if tests_dir is None and builtin is not None and (builtin / "official").is_dir():
        # A built-in benchmark ships its official-layout tests beside its records.
        tests_dir = builtin / "official"
    _check_locations(None, projects)
    shipped = builtin / "samples.jsonl" if builtin is not None else None
    return Benchmark(
        name=bench_name,
        tasks=tasks,
        source=source,
        source_sha256=_file_sha256(tasks_path) if tasks_path else "",
        tests_dir=tests_dir,
        projects=projects,
        default_samples=shipped if shipped is not None and shipped.exists() else None,
    )


def _load_tasks(
    benchmark: str | None, tasks_path: Path | None, data_dir: Path | None
) -> tuple[str, list[Task], str, Path | None]:
    """(benchmark name, tasks, source, built-in folder when the benchmark ships one)."""
    from codereval.benchmarks import builtin_dir, load_benchmark, read_tasks_file

    if benchmark is None:
        if tasks_path is None:
            raise UserError("nothing to evaluate", hint="pass --tasks RECORDS or --benchmark NAME")
        name, tasks = read_tasks_file(tasks_path)
        return name, tasks, str(tasks_path), None
    tasks = load_benchmark(benchmark, data_dir=data_dir, tasks_path=tasks_path)
    folder = builtin_dir(benchmark.replace("-", "_")) if benchmark.startswith("mini-") else None
    source = str(tasks_path or folder or data_dir or benchmark)
    return benchmark, tasks, source, folder


def _name_or_path(value: str | os.PathLike[str] | None) -> tuple[str | None, Path | None]:
    """A string is a benchmark name unless it looks like a file; a Path is always a file."""
    if value is None:
        return None, None
    if isinstance(value, str):
        looks_like_file = (
            os.sep in value or "/" in value or value.endswith((".json", ".jsonl", ".gz"))
        )
        if _NAMED.fullmatch(value) or not (looks_like_file or Path(value).exists()):
            return value, None
    return None, Path(value)


def _check_locations(tests_dir: Path | None, projects: Path | None) -> None:
    if tests_dir is not None and not tests_dir.is_dir():
        raise UserError(f"tests directory not found: {tests_dir}", hint="check --tests-dir")
    if projects is not None and not projects.is_file():
        raise UserError(f"projects manifest not found: {projects}", hint="check --projects")


def _path(value: PathArg | None) -> Path | None:
    return None if value is None else Path(value)


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _as_benchmark(benchmark: engine.Benchmark | str | os.PathLike[str]) -> engine.Benchmark:
    if isinstance(benchmark, engine.Benchmark):
        return benchmark
    if isinstance(benchmark, str | os.PathLike):
        return load_benchmark(benchmark)
    raise UserError(
        f"expected a Benchmark (from codereval.load_benchmark), got {type(benchmark).__name__}"
    )


def select_tasks(
    tasks: list[Task], *, name: str, task_ids: Sequence[str] = (), limit: int | None = None
) -> list[Task]:
    """Only the tasks named (in benchmark order), then only the first ``limit``."""
    if task_ids:
        known = {t.task_id for t in tasks}
        unknown = [i for i in task_ids if i not in known]
        if unknown:
            raise UserError(
                f"unknown task id {unknown[0]!r} in {name}",
                hint="list the ids with `codereval tasks`",
            )
        wanted = set(task_ids)
        tasks = [t for t in tasks if t.task_id in wanted]
    if limit is not None:
        if limit < 1:
            raise UserError(f"limit must be at least 1, got {limit}")
        tasks = tasks[:limit]
    return tasks


# --- evaluation ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, repr=False)
class Run(store.Run):
    """An evaluation: its run directory, tasks, samples, outcomes (one per finished sample, in
    sample order), and how it ran.

    ``ran`` samples were run by this call and ``skipped`` were already finished (a resumed
    run); ``isolation`` is the sandbox used and ``executor`` what ran the samples (fresh, warm
    or ray); ``official`` the CoderEval-format result file
    exported for Python and Java tasks. ``meta`` is the run directory's run.json.
    """

    ran: int = 0
    skipped: int = 0
    isolation: str = ""
    official: Path | None = None
    executor: str = ""

    @property
    def counts(self) -> Counter[str]:
        """Outcomes by verdict."""
        return Counter(o.verdict.value for o in self.outcomes)

    def pass_at_1(self) -> float:
        """Mean over tasks with outcomes of the fraction of their samples that passed (0..1)."""
        return engine.mean_pass_rate(self.outcomes)

    @classmethod
    def load(cls, run_dir: PathArg) -> Run:
        """Read back a run directory written by ``evaluate`` or `codereval evaluate`."""
        loaded = store.load_run(Path(run_dir))
        sandbox = loaded.meta.get("sandbox")
        isolation = str(sandbox.get("isolation", "")) if isinstance(sandbox, dict) else ""
        options = loaded.meta.get("options")
        name = options.get("official_name", "") if isinstance(options, dict) else ""
        official = loaded.path / name if name and (loaded.path / name).is_file() else None
        ran_by = loaded.meta.get("executor")
        executor = str(ran_by.get("name", "")) if isinstance(ran_by, dict) else ""
        return cls(
            path=loaded.path,
            tasks=loaded.tasks,
            samples=loaded.samples,
            outcomes=loaded.outcomes,
            meta=loaded.meta,
            isolation=isolation,
            official=official,
            executor=executor,
        )

    def __repr__(self) -> str:
        verdicts = ", ".join(f"{v}={n}" for v, n in self.counts.most_common())
        return (
            f"Run({str(self.path)!r}, samples={len(self.samples)}, "
            f"outcomes={len(self.outcomes)} ({verdicts or 'none'}), isolation={self.isolation!r})"
        )


def evaluate(
    benchmark: engine.Benchmark | str | os.PathLike[str],
    samples: SamplesArg | None,
    *,
    run_dir: PathArg,
    jobs: int | None = None,
    timeout: float = 10.0,
    memory_mb: int = 2048,
    disk_mb: int = DEFAULT_DISK_MB,
    sandbox: str = "auto",
    compat: bool = False,
    rerun: bool = False,
    progress: bool = False,
    executor: str = "",
    ray_address: str | None = None,
    preload: str = "auto",
    node_executor: str = "warm",
    overlap_waits: bool = True,
) -> Run:
    """Run ``samples`` of ``benchmark`` in their projects, sandboxed and in parallel.

    ``samples`` is a samples file (the official ``{_id, generate_results}`` form or JSONL
    ``{task_id, completion}``), or a list of such dicts or of ``Sample`` objects (dicts without
    an ``index`` are numbered per task in order); ``None`` evaluates the samples a built-in
    benchmark ships. Outcomes are written to ``run_dir`` as they come (results.sqlite,
    outcomes.jsonl, the official ``*_out.jsonl``). Calling again with the same arguments resumes:
    finished samples are not run again (``rerun=True`` starts over). ``jobs`` defaults to the
    cores this process may use; ``timeout`` (seconds of wall time), ``memory_mb`` and
    ``disk_mb`` (what it may write to disk in all) limit each sample; ``sandbox`` is one of
    auto, bwrap, rlimit, none; ``compat`` reproduces the original platform's quirks.
    ``progress=True`` shows a progress bar (on stderr, or as a widget in
    Jupyter); with False nothing is printed. ``executor`` is where and how samples run:
    ``"warm"`` (Python samples forked from sandboxed workers that have the interpreter and the
    project's imports loaded; the default, ``""``, where bubblewrap works), ``"fresh"`` (a new
    sandboxed process per sample on this machine) or ``"ray"`` (the nodes of a Ray cluster,
    each running as many samples at once as it has Ray CPUs; ``ray_address`` is the cluster,
    by default $RAY_ADDRESS or a Ray started for the call; needs ``codereval[ray]``);
    ``preload`` what warm project workers import first: "auto", "none" or "mod1,mod2";
    ``node_executor`` how Ray nodes run their samples: "warm" (where a node's sandbox is
    bubblewrap, else fresh) or "fresh". With ``overlap_waits`` (the default) the local
    executors start more samples, up to ``jobs`` more, while running ones wait (asleep in a
    back-off) and the machine's cores within ``jobs`` are idle; False runs exactly ``jobs``.
    ``benchmark.select(task_ids=..., levels=..., projects=...)`` evaluates part of a benchmark:
    the samples of the tasks it leaves out are not run.

    A KeyboardInterrupt (Ctrl-C, a notebook's interrupt) propagates after the finished
    outcomes are saved; call again to resume. Raises UserError for bad input (unknown task ids,
    a run directory holding another run, a missing toolchain) before anything is written.
    """
    bench = _as_benchmark(benchmark)
    items, official_name = resolve_samples(samples, benchmark=bench)
    if bench.selection:
        # A benchmark cut with select(): the samples of the tasks it left out are not run.
        items = samples_of(items, bench.tasks)
    return evaluate_samples(
        bench,
        items,
        run_dir=Path(run_dir),
        jobs=jobs,
        timeout=timeout,
        memory_mb=memory_mb,
        disk_mb=disk_mb,
        sandbox=sandbox,
        compat=compat,
        rerun=rerun,
        progress=progress,
        official_name=official_name,
        executor=executor,
        ray_address=ray_address,
        preload=preload,
        node_executor=node_executor,
        overlap_waits=overlap_waits,
    )


def resolve_samples(
    samples: SamplesArg | None, *, benchmark: engine.Benchmark
) -> tuple[list[Sample], str]:
    """(samples, name of the official export) from a file, Python objects, or the built-in."""
    from codereval.benchmarks.samples import load_samples, samples_from_objects

    if samples is None:
        shipped = benchmark.default_samples if isinstance(benchmark, Benchmark) else None
        if shipped is None:
            raise UserError(
                f"no samples to evaluate: {benchmark.name} ships none",
                hint="pass a samples file, or a list of {'task_id', 'completion'} dicts or "
                "codereval.Sample objects",
            )
        samples = shipped
    if isinstance(samples, str | os.PathLike):
        path = Path(samples)
        return load_samples(path), store.official_results_name(path.name)
    if isinstance(samples, Mapping | Sample):
        raise UserError(
            "expected a list of samples, got a single one", hint="wrap it in a list: [sample]"
        )
    return samples_from_objects(samples), MEMORY_OFFICIAL_NAME


def default_jobs() -> int:
    """The cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def evaluate_samples(
    benchmark: engine.Benchmark,
    samples: Sequence[Sample],
    *,
    run_dir: Path,
    jobs: int | None = None,
    timeout: float = 10.0,
    memory_mb: int = 2048,
    disk_mb: int = DEFAULT_DISK_MB,
    sandbox: str = "auto",
    compat: bool = False,
    rerun: bool = False,
    progress: bool = False,
    mode: str = "samples",
    official_name: str = MEMORY_OFFICIAL_NAME,
    console: Console | None = None,
    executor: str = "",
    ray_address: str | None = None,
    preload: str = "auto",
    node_executor: str = "warm",
    overlap_waits: bool = True,
) -> Run:
    """``evaluate`` once the samples are loaded; ``mode`` tells gold validation runs apart."""
    from rich.console import Console

    _check_options(
        jobs=jobs, timeout=timeout, memory_mb=memory_mb, disk_mb=disk_mb, sandbox=sandbox
    )
    _check_executor(executor, jobs=jobs, ray_address=ray_address, preload=preload,
                    node_executor=node_executor, overlap_waits=overlap_waits)
    located = benchmark if isinstance(benchmark, Benchmark) else None
    options = engine.EvalOptions(
        jobs=jobs or default_jobs(),
        timeout=timeout,
        memory_mb=memory_mb,
        disk_mb=disk_mb,
        sandbox=sandbox,
        compat=compat,
        rerun=rerun,
        tests_dir=located.tests_dir if located else None,
        projects=located.projects if located else None,
        mode=mode,
        progress=progress,
        official_name=official_name,
        executor=executor,
        ray_address=ray_address,
        preload=preload,
        node_executor=node_executor,
        overlap_waits=overlap_waits,
    )
    if console is None:
        console = Console(stderr=True, quiet=not progress)
    if sandbox == "none" and console.quiet:
        warnings.warn(
            "sandbox='none': generated code runs unconfined, with your permissions, network "
            "and files. Use it only to debug trusted samples.",
            RuntimeWarning,
            stacklevel=3,
        )
    try:
        report = engine.evaluate(
            benchmark=benchmark,
            samples=samples,
            run_dir=run_dir,
            options=options,
            console=console,
        )
    except KeyboardInterrupt as exc:
        if (run_dir / store.RUN_JSON).exists():
            exc.add_note(
                f"codereval: finished outcomes are kept in {run_dir}; "
                "evaluate again with the same arguments to resume"
            )
        raise
    return Run(
        path=run_dir,
        tasks=report.tasks,
        samples=report.samples,
        outcomes=report.outcomes,
        meta=store.read_run_json(run_dir) or {},
        ran=report.ran,
        skipped=report.skipped,
        isolation=report.isolation,
        official=report.official,
        executor=report.executor,
    )


def _check_options(
    *, jobs: int | None, timeout: float, memory_mb: int, disk_mb: int, sandbox: str
) -> None:
    """What the CLI's option types check, for callers that are not the CLI."""
    if jobs is not None and (isinstance(jobs, bool) or jobs < 1):
        raise UserError(f"jobs must be at least 1, got {jobs!r}")
    if not timeout > 0:
        raise UserError(f"timeout must be more than 0 seconds, got {timeout!r}")
    if memory_mb < 16:
        raise UserError(f"memory_mb must be at least 16, got {memory_mb!r}")
    if disk_mb < 16:
        raise UserError(f"disk_mb must be at least 16, got {disk_mb!r}")
    if sandbox not in SANDBOX_CHOICES:
        raise UserError(
            f"unknown sandbox {sandbox!r}", hint=f"choose one of: {', '.join(SANDBOX_CHOICES)}"
        )


def _check_executor(
    executor: str, *, jobs: int | None, ray_address: str | None, preload: str = "auto",
    node_executor: str = "warm", overlap_waits: bool = True,
) -> None:
    from codereval.executors import NODE_EXECUTORS, check_executor
    from codereval.sandbox.warm import Preload

    check_executor(executor)
    Preload.parse(preload)
    if node_executor not in NODE_EXECUTORS:
        raise UserError(
            f"unknown node executor {node_executor!r}",
            hint=f"choose one of: {', '.join(NODE_EXECUTORS)}",
        )
    if ray_address is not None and executor != "ray":
        raise UserError(
            "--ray-address only applies with --executor ray",
            hint="add --executor ray, or leave --ray-address out",
        )
    if jobs is not None and executor == "ray":
        raise UserError(
            "--jobs does not apply with --executor ray: each node runs as many samples at once "
            "as it has Ray CPUs",
            hint="set them where the node starts: ray start --num-cpus N",
        )
    if not overlap_waits and executor == "ray":
        raise UserError(
            "--no-overlap-waits only applies to the fresh and warm executors: a Ray node runs "
            "as many samples at once as it has Ray CPUs",
            hint="leave --no-overlap-waits out with --executor ray",
        )


# --- scores and agreement ------------------------------------------------------------------


def score(
    run_or_results: store.Run | PathArg,
    *,
    k: int | Iterable[int] = (1, 5, 10),
    compat: bool = False,
    ci: int = 0,
    n: int = 10,
    benchmark_size: int | None = None,
    tasks: PathArg | None = None,
    exclude_flagged: PathArg | Iterable[str] | None = None,
    label: str | None = None,
) -> Scores:
    """Pass@k overall, per runnable level, standalone or not and per project; Acc@k when the
    tasks carry oracle context; result categories for HumanEval-family runs.

    ``run_or_results`` is a ``Run`` (from ``evaluate``), a run directory, or an official
    CoderEval result file (``*_out.jsonl``). ``compat`` follows the paper: n fixed at ``n``,
    sums divided by ``benchmark_size`` (230 for CoderEval). ``ci`` is the number of bootstrap
    resamples for 95% intervals over tasks (the CLI's --ci is 1000; 0 for none). ``tasks`` is a
    records file whose levels and projects are used (results for other ids are an error);
    ``exclude_flagged`` a gold.jsonl (or task ids) whose flagged tasks are left out.
    """
    from codereval.benchmarks import read_tasks_file
    from codereval.scoring.scores import (
        ScoredInput,
        check_against_records,
        load_flagged,
        load_scored_input,
        score_input,
    )

    ks = _check_ks(k)
    if isinstance(ci, bool) or ci < 0:
        raise UserError(f"ci is a number of bootstrap resamples (e.g. 1000), got {ci!r}")
    if n < 1:
        raise UserError(f"n must be at least 1, got {n}")
    records = Path(tasks) if tasks is not None else None
    record_tasks = read_tasks_file(records)[1] if records is not None else None
    if exclude_flagged is None:
        excluded: list[str] = []
    elif isinstance(exclude_flagged, str | os.PathLike):
        excluded = load_flagged(Path(exclude_flagged))
    else:
        excluded = [str(task_id) for task_id in exclude_flagged]
    if isinstance(run_or_results, store.Run):
        gold = run_or_results.path / store.GOLD_JSONL
        item = ScoredInput(
            label=label or run_or_results.path.name,
            tasks=run_or_results.tasks,
            outcomes=run_or_results.outcomes,
            samples=run_or_results.samples,
            gold_path=gold if gold.exists() else None,
        )
    elif isinstance(run_or_results, str | os.PathLike):
        item = load_scored_input(Path(run_or_results), label=label)
    else:
        raise UserError(
            f"expected a Run, a run directory or a result file, got {type(run_or_results).__name__}"
        )
    if record_tasks is not None and records is not None:
        item = check_against_records(item, record_tasks, source=records)
    return score_input(
        item,
        ks=ks,
        compat=compat,
        compat_n=n,
        benchmark_size=benchmark_size,
        exclude=excluded,
        bootstrap=ci,
    )


def _check_ks(k: int | Iterable[int]) -> tuple[int, ...]:
    values = [k] if isinstance(k, int) else list(k)
    if any(isinstance(v, bool) or not isinstance(v, int) for v in values):
        raise UserError(f"k takes whole numbers, got {k!r}")
    ks = tuple(sorted(set(values)))
    if not ks or ks[0] < 1:
        raise UserError(f"k values must be at least 1, got {k!r}")
    return ks


def compare(
    run: store.Run | PathArg,
    official_out: PathArg,
    *,
    gold: PathArg | None = None,
    label: str | None = None,
    recheck: int = 0,
    jobs: int = 1,
) -> Agreement:
    """How far a run's verdicts agree with an official CoderEval result file's.

    ``run`` is a ``Run`` or run directory made from that file's samples
    (``evaluate(bench, official_out, ...)``); ``gold`` a gold.jsonl from gold validation (tasks
    it calls broken are left out). Returns the 2x2 table, the agreement in percent and every
    disagreement with its cause; ``recheck`` re-runs each disagreeing sample that many times
    (``jobs`` in parallel) to tell nondeterministic samples apart. Raises UserError when the
    run's samples are not the file's.
    """
    from codereval.families.codereval.agreement import compare_paths

    run_dir = run.path if isinstance(run, store.Run) else Path(run)
    gold_path = Path(gold) if gold is not None else None
    if gold_path is not None and not gold_path.is_file():
        raise UserError(
            f"gold file not found: {gold_path}",
            hint="pass the gold.jsonl that `codereval evaluate --reference` wrote",
        )
    return compare_paths(
        run_dir,
        Path(official_out),
        label=label,
        gold_path=gold_path,
        recheck_times=recheck,
        jobs=jobs,
    )


# --- generation ----------------------------------------------------------------------------


def generate(
    benchmark: engine.Benchmark | str | os.PathLike[str],
    *,
    model: str,
    n: int = 10,
    backend: str | Backend = "openai",
    prompt: str = "raw",
    style: str = "completion",
    temperature: float = 0.6,
    top_p: float = 0.95,
    max_new_tokens: int = 1024,
    stop: Sequence[str] = (),
    seed: int | None = None,
    base_url: str = "",
    api_key: str = "",
    concurrency: int = 4,
    request_timeout: float = 120.0,
    max_retries: int = 5,
    batch_size: int | None = None,
    task_ids: Sequence[str] = (),
    limit: int | None = None,
    out: PathArg | None = None,
    progress: bool = False,
) -> list[Sample]:
    """Sample ``n`` completions per task from a model and extract the code to evaluate.

    ``backend`` is a registered name (openai: any OpenAI-compatible server at ``base_url`` or
    $OPENAI_BASE_URL; hf: a local transformers model directory; vllm), a ``"module:Class"``
    string, or a ``codereval.generation.base.Backend`` instance (your own model, e.g. the
    checkpoint of a training loop; it is not closed). ``model`` is the model's name (or
    directory), recorded with each sample. ``prompt`` is raw, human, oracle, all or skeleton;
    ``style`` completion or chat. With ``out`` samples are appended to that file as they come
    and a new call asks only for what is missing; without it they are kept in memory. Requests
    that fail after retries are left out with a warning (retried by the next call with ``out``).
    Returns the samples of the chosen tasks, ready for ``evaluate``.
    """
    from codereval.generation.base import SamplingOptions
    from codereval.generation.session import existing_samples
    from codereval.prompting.prompts import build_prompts

    bench = _as_benchmark(benchmark)
    tasks = select_tasks(bench.tasks, name=bench.name, task_ids=task_ids, limit=limit)
    if not model:
        raise UserError("model is required", hint="a model name (openai) or directory (hf)")
    variant, prompt_style = _prompt_kind(prompt, style)
    prompts = build_prompts(tasks, variant=variant, style=prompt_style)
    options = SamplingOptions(
        n=n,
        temperature=temperature,
        top_p=top_p,
        max_new_tokens=max_new_tokens,
        stop=tuple(stop),
        seed=seed,
    )
    with tempfile.TemporaryDirectory(prefix="codereval-generate-") as scratch:
        path = Path(out) if out is not None else Path(scratch) / "samples.jsonl"
        report = generate_file(
            tasks,
            prompts,
            out=path,
            model=model,
            backend=backend,
            options=options,
            base_url=base_url,
            api_key=api_key,
            concurrency=concurrency,
            request_timeout=request_timeout,
            max_retries=max_retries,
            batch_size=batch_size,
            progress=_generation_progress(len(tasks)) if progress else None,
        )
        wanted = {t.task_id for t in tasks}
        samples = [s for s in existing_samples(path) if s.task_id in wanted]
    if report.failed:
        worst, times = report.errors.most_common(1)[0]
        where = (
            f"details in {report.errors_path}; call again to retry them"
            if out
            else ("pass out=FILE to keep them and retry only those")
        )
        warnings.warn(
            f"{report.failed} sample request(s) failed and were not kept "
            f"(e.g. {times}x {worst}); {where}",
            RuntimeWarning,
            stacklevel=2,
        )
    return samples


def generate_file(
    tasks: Sequence[Task],
    prompts: Sequence[Prompt],
    *,
    out: Path,
    model: str,
    backend: str | Backend,
    options: SamplingOptions,
    base_url: str = "",
    api_key: str = "",
    concurrency: int = 4,
    request_timeout: float = 120.0,
    max_retries: int = 5,
    batch_size: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> GenerationReport:
    """Fill ``out`` up to ``options.n`` samples per task (what `codereval generate` does)."""
    from codereval.generation.base import Backend, BackendConfig, get_backend
    from codereval.generation.session import generate_samples

    if isinstance(backend, Backend):
        chosen, owned = backend, False
    elif isinstance(backend, str):
        config = BackendConfig(
            model=model,
            base_url=base_url,
            api_key=api_key,
            concurrency=concurrency,
            timeout=request_timeout,
            max_retries=max_retries,
        )
        chosen, owned = get_backend(backend, config), True
    else:
        raise UserError(
            f"backend must be a name, 'module:Class' or a Backend, got {type(backend).__name__}"
        )
    try:
        return generate_samples(
            tasks,
            prompts,
            backend=chosen,
            options=options,
            out=out,
            model=model,
            batch_size=batch_size or 2 * concurrency,
            progress=progress,
        )
    finally:
        if owned:
            chosen.close()


def _prompt_kind(prompt: str, style: str) -> tuple[PromptVariant, PromptStyle]:
    from codereval.prompting.prompts import PromptStyle, PromptVariant

    try:
        variant = PromptVariant(prompt)
    except ValueError:
        choices = ", ".join(v.value for v in PromptVariant)
        raise UserError(f"unknown prompt {prompt!r}", hint=f"choose one of: {choices}") from None
    try:
        prompt_style = PromptStyle(style)
    except ValueError:
        choices = ", ".join(s.value for s in PromptStyle)
        raise UserError(f"unknown style {style!r}", hint=f"choose one of: {choices}") from None
    return variant, prompt_style


def _generation_progress(total: int) -> Callable[[int], None]:
    from rich.console import Console

    console = Console(stderr=True)
    done = 0

    def advance(count: int) -> None:
        nonlocal done
        done += count
        console.print(f"{done}/{total} task(s) sampled")

    return advance


__all__ = [
    "Benchmark",
    "Run",
    "Scores",
    "compare",
    "evaluate",
    "generate",
    "load_benchmark",
    "score",
]
