"""Our engine against the original platform's way of running Python samples, on the same tasks.

The baseline does what the original CoderEval platform did: one sample at a time, inject the
code into the project file in place (here in one copy of the project, so the base is safe),
start a fresh interpreter on the test, judge by exit code, put the file back. Our engine runs
the same samples through `evaluate` (private workspace, sandbox, marker-checked harness, store),
with --jobs 1 and with one job per core. Then the overhead we add per sample is broken down into
workspace, sandbox, interpreter and test, measured here directly (the runner records no phases).

Samples are each task's reference, repeated: every run does the full work of a passing test.

    .venv/bin/python bench/python_engine.py [--benchmark mini-python] [--repeat 3]
        [--import-costs 50,200,500]
    CODEREVAL_HOME=... .venv/bin/python bench/python_engine.py --prepared bench/codereval-python \
        --repeat 3 --timeout 60 --import-costs '' --no-breakdown --modes default,compat \
        --executors fresh,warm-nopreload,warm

With --prepared (a directory `codereval prepare codereval-python` wrote, on real projects) the
tasks are CoderEval's own, tested by their official test modules; the baseline then does what
the platform did with them: put the sample into the task's `_passk_validte` module inside the
project and run that module with the project's interpreter, judged by exit code. With
``--modes default,compat`` our engine runs both ways: as it does by default, and as
``evaluate --compat`` (the official tree at the original machine's paths), fresh and warm.

Without the built-in mini benchmark (or with --generated) a small generated project is used.
Then, for each --import-costs value, a generated project whose third-party dependency takes
that many milliseconds of CPU to import (a local package installed into its environment), to
show how each way of running scales with the cost of a project's imports.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from unittest import mock

from codereval.environments.base import Environment
from codereval.environments.python import (
    default_root,
    find_environment,
    is_sealed,
    venv_python,
)
from codereval.evaluation.engine import Benchmark, EvalOptions, evaluate
from codereval.model import Sample, Stage, Task, TestKind, Verdict
from codereval.runners.python import official_test_file
from codereval.sandbox import ExecRequest, Mount, get_sandbox
from codereval.sandbox.preload_hints import HINTS_FOLDER
from codereval.source.inject import InjectionError, inject_at, inject_last_def
from codereval.workspace.cache import WorkspaceCache
from codereval.workspace.views import choose_strategy, make_workspace, remove_tree

GENERATED_FUNCTIONS = {
    "clamp": ("def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n", "clamp(5, 0, 3) == 3"),
    "mean": ("def mean(xs):\n    return sum(xs) / len(xs)\n", "mean([1, 2, 3]) == 2"),
    "words": ("def words(text):\n    return text.split()\n", "words('a b') == ['a', 'b']"),
    "is_even": ("def is_even(n):\n    return n % 2 == 0\n", "is_even(4) and not is_even(3)"),
    "rev": ("def rev(s):\n    return s[::-1]\n", "rev('abc') == 'cba'"),
    "square": ("def square(n):\n    return n * n\n", "square(7) == 49"),
}


@dataclass(frozen=True, kw_only=True)
class Inputs:
    name: str
    tasks: list[Task]
    manifest: Path
    # The official tests of a prepared CoderEval benchmark (its repos/ folder is below it).
    tests_dir: Path | None = None


SLOW_IMPORT = """\
import time

# What a heavy dependency costs to import (numpy, a driver, a framework): CPU, not sleep.
_end = time.process_time() + {seconds!r}
while time.process_time() < _end:
    pass
"""


def slow_dependency(root: Path, ms: int) -> str:
    """A third-party package whose import takes ``ms`` of CPU, as a requirement line."""
    package = root / f"slowdep-{ms}"
    (package / "slowdep").mkdir(parents=True)
    (package / "slowdep" / "__init__.py").write_text(SLOW_IMPORT.format(seconds=ms / 1000))
    (package / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
        f'[project]\nname = "slowdep"\nversion = "1.{ms}"\n'
    )
    return f"slowdep @ file://{package}"


def generated_inputs(root: Path, import_ms: int = 0) -> Inputs:
    """A one-module project with a function per task and inline script tests; with
    ``import_ms`` the module imports a dependency that takes that long to import."""
    name = f"mathx{import_ms}" if import_ms else "mathx"
    project = root / "projects" / f"bench---{name}"
    (project / "mathx").mkdir(parents=True)
    (project / "mathx" / "__init__.py").write_text("")
    module, records, line = ("import slowdep\n\n", [], 3) if import_ms else ("", [], 1)
    project_name = name
    for name, (code, check) in GENERATED_FUNCTIONS.items():
        span = code.count("\n")
        records.append(
            {
                "_id": f"bench-{name}", "name": name, "project": f"bench/{project_name}",
                "file_path": "mathx/core.py", "code": code, "level": "self_contained",
                "lineno": str(line), "end_lineno": str(line + span - 1),
                "test_kind": "script",
                "test_code": f"from mathx.core import {name}\nassert {check}\n",
            }
        )  # fmt: skip
        module += code + "\n"
        line += span + 1
    (project / "mathx" / "core.py").write_text(module)
    requirements = f"requirements = [{slow_dependency(root, import_ms)!r}]\n" if import_ms else ""
    manifest = root / f"projects-{project_name}.toml"
    manifest.write_text(
        f'[projects."bench/{project_name}"]\nlanguage = "python"\n'
        f'source = "projects/bench---{project_name}"\n' + requirements.replace("'", '"')
    )
    records_path = root / f"records-{project_name}.json"
    records_path.write_text(json.dumps({"RECORDS": records}))
    from codereval.families.codereval.records import load_records

    label = f"generated, import {import_ms} ms" if import_ms else "generated"
    return Inputs(name=label, tasks=load_records(records_path), manifest=manifest)


def builtin_inputs(name: str) -> Inputs | None:
    from codereval.benchmarks import load_benchmark
    from codereval.errors import UserError

    try:
        tasks = load_benchmark(name)
        from codereval.benchmarks import builtin_dir

        manifest = builtin_dir(name.replace("-", "_")) / "projects.toml"
    except (UserError, FileNotFoundError) as exc:
        print(f"({name} not available: {exc}; using a generated project)")
        return None
    runnable = [t for t in tasks if t.test is not None and t.test.kind in RUNNABLE]
    return Inputs(name=name, tasks=runnable, manifest=manifest)


RUNNABLE = (TestKind.SCRIPT, TestKind.PYTEST)
OFFICIAL = (TestKind.CODEREVAL_MODULE, TestKind.CODEREVAL_STANDALONE)


def prepared_inputs(path: Path) -> Inputs:
    """The ready tasks of a prepared CoderEval benchmark, with its official tests."""
    from codereval.api import open_benchmark

    bench = open_benchmark(prepared=path)
    assert bench.projects is not None
    tasks = [t for t in bench.tasks if t.test is not None and t.test.kind in OFFICIAL]
    return Inputs(name=f"CoderEval (prepared: {path.name})", tasks=tasks,
                  manifest=bench.projects, tests_dir=bench.tests_dir)


def reference_samples(tasks: list[Task], repeat: int) -> list[Sample]:
    return [
        Sample(task_id=t.task_id, index=i, raw=t.reference, code=t.reference)
        for t in tasks
        for i in range(repeat)
    ]


# --- the naive baseline -------------------------------------------------------------------


def naive_run(
    tasks: dict[str, Task], samples: list[Sample], envs: dict[str, Environment], timeout: float,
    tests_dir: Path | None = None,
) -> tuple[float, int]:
    """Sequential, in place in one copy per project, a fresh interpreter, judged by exit code."""
    scratch = Path(tempfile.mkdtemp(prefix="naive-"))
    copies: dict[str, Path] = {}
    passed = 0
    started = time.perf_counter()
    for sample in samples:
        task = tasks[sample.task_id]
        assert task.location is not None and task.test is not None
        env = envs[task.project]
        if task.test.kind in OFFICIAL:
            assert tests_dir is not None
            passed += naive_official(task, sample, env, tests_dir, scratch, copies, timeout)
            continue
        if task.project not in copies:
            copies[task.project] = scratch / env.spec.slug
            shutil.copytree(env.source_dir, copies[task.project], symlinks=True)
            subprocess.run(["chmod", "-R", "u+w", str(copies[task.project])], check=True)
        project = copies[task.project]
        target = project / task.location.file_path
        original = target.read_text()
        target.write_text(
            inject_at(
                original, sample.code or "", task.name,
                lineno=task.location.lineno, end_lineno=task.location.end_lineno,
            ).text
        )  # fmt: skip
        test_file = project / (task.test.path or "test_inline_check.py")
        if task.test.code:
            test_file.write_text(task.test.code)
        argv = [str(venv_python(env)), str(test_file)]
        if task.test.kind is TestKind.PYTEST:
            argv = [str(venv_python(env)), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
            argv.append(str(test_file))
        try:
            done = subprocess.run(
                argv, cwd=project, env={"PYTHONPATH": str(project), "PATH": os.environ["PATH"]},
                capture_output=True, timeout=timeout,
            )  # fmt: skip
            passed += done.returncode == 0
        except subprocess.TimeoutExpired:
            pass  # a timeout is a failure, as it was for the original
        finally:
            target.write_text(original)
            if task.test.code:
                test_file.unlink()
    elapsed = time.perf_counter() - started
    shutil.rmtree(scratch)
    return elapsed, passed


def naive_official(task: Task, sample: Sample, env: Environment, tests_dir: Path, scratch: Path,
                   copies: dict[str, Path], timeout: float) -> bool:
    """One sample as the platform ran it: the sample written into the task's official test
    module (a copy of the project file with its tests), placed in the project, and run."""
    assert task.test is not None
    standalone = task.test.kind is TestKind.CODEREVAL_STANDALONE
    official, rel = official_test_file(task, tests_dir, standalone=standalone)
    if standalone:
        project = scratch / "standalone"
        project.mkdir(exist_ok=True)
        # The platform's container had the project importable, as our environments do.
        path = f"{project}:{env.source_dir}"
    else:
        if task.project not in copies:
            copies[task.project] = scratch / env.spec.slug
            shutil.copytree(env.source_dir, copies[task.project], symlinks=True)
            subprocess.run(["chmod", "-R", "u+w", str(copies[task.project])], check=True)
        project = copies[task.project]
        path = str(project)
    target = project / rel
    try:
        injected = inject_last_def(official.read_text(encoding="utf-8"), sample.code or "",
                                   task.name)
    except InjectionError:
        return False  # our engine says infra_error: not run by either side
    target.write_text(injected.text, encoding="utf-8")
    try:
        done = subprocess.run(
            [str(venv_python(env)), rel], cwd=project, capture_output=True, timeout=timeout,
            env={"PYTHONPATH": path, "PATH": os.environ["PATH"]},
        )
        return done.returncode == 0
    except subprocess.TimeoutExpired:
        return False  # a timeout is a failure, as it was for the original
    finally:
        target.unlink()


# --- overhead breakdown -------------------------------------------------------------------


def mean_ms(fn: Callable[[], object], n: int) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.mean(times)


def breakdown(
    tasks: list[Task], envs: dict[str, Environment], isolation_name: str, n: int
) -> tuple[dict[str, float], str]:
    sandbox = get_sandbox(isolation_name)
    task = tasks[0]
    assert task.location is not None
    env = envs[task.project]
    python = venv_python(env)
    source = (env.source_dir / task.location.file_path).read_text()
    changed = {task.location.file_path: source}
    work = Path(tempfile.mkdtemp(prefix="phase-"))
    # The same choice the runner makes for this environment.
    strategy = choose_strategy(sandbox.isolation, sealed=is_sealed(env))
    counter = iter(range(10**9))

    # As the runner does: a hard-linked workspace is kept between samples (checked and its
    # changed files swapped), any other made and removed per sample.
    kept = WorkspaceCache(work / "kept") if strategy == "hardlink" else None

    def workspace() -> None:
        dest = work / f"s{next(counter)}" / "project"
        dest.parent.mkdir()
        if kept is not None:
            kept.checkin(kept.checkout(env.source_dir, dest, changed))
        else:
            make_workspace(env.source_dir, dest, changed=changed, strategy=strategy)
        remove_tree(dest.parent)

    real_python = Path(os.path.realpath(python)).parent.parent

    def sandboxed_true() -> None:
        sandbox.run(
            ExecRequest(
                argv=("/bin/true",), cwd=work, scratch=work,
                mounts=(Mount(source=real_python, target=real_python),),
            )
        )  # fmt: skip

    plain_true = mean_ms(lambda: subprocess.run(["/bin/true"], check=True), n)
    result = {
        "workspace": mean_ms(workspace, n),
        "sandbox": mean_ms(sandboxed_true, n) - plain_true,
        "interpreter": mean_ms(lambda: subprocess.run([str(python), "-c", "pass"], check=True), n),
    }
    shutil.rmtree(work)
    return result, strategy


@dataclass(frozen=True, kw_only=True)
class Measured:
    n: int
    tasks: int
    naive: tuple[float, int]
    # (mode, executor, jobs) -> best (seconds, passed); mode: "default" or "compat"
    ours: dict[tuple[str, str, int], tuple[float, int]]
    isolation: str
    envs: dict[str, Environment]
    # 1-minute load average when each kept (best) time was taken: "naive" or "executor jobs".
    loads: dict[str, float]


# --executors values: the executor, its --preload and whether samples overlap waits. "warm"
# preloads (the default, auto: the tests' third-party imports and the project's own modules
# that cannot see the sample); "warm-nopreload" only keeps the interpreter warm;
# "warm-nooverlap" runs exactly --jobs samples at once (--no-overlap-waits); "warm-nobytecode"
# compiles the project's modules from source in every sample (CODEREVAL_PROJECT_BYTECODE=0).
EXECUTORS = {"fresh": ("fresh", "auto", True, True),
             "warm-nopreload": ("warm", "none", True, True),
             "warm": ("warm", "auto", True, True),
             "warm-nooverlap": ("warm", "auto", False, True),
             "warm-nobytecode": ("warm", "auto", True, False)}


def measure(inputs: Inputs, args: argparse.Namespace, root: Path, jobs_all: int,
            repeat: int, modes: tuple[str, ...] = ("default",),
            executors: tuple[str, ...] = ("fresh", "warm")) -> Measured:
    """The naive baseline and our engine per mode and executor at 1 and all jobs, interleaved
    rounds."""
    samples = reference_samples(inputs.tasks, repeat)
    bench = Benchmark(name=inputs.name, tasks=inputs.tasks)
    isolation = ""

    def engine(jobs: int, executor: str, mode: str) -> tuple[float, int]:
        nonlocal isolation
        name, preload, overlap, bytecode = EXECUTORS[executor]
        options = EvalOptions(
            jobs=jobs, timeout=args.timeout, sandbox=args.sandbox, projects=inputs.manifest,
            progress=False, rerun=True, executor=name, preload=preload, overlap_waits=overlap,
            tests_dir=inputs.tests_dir, compat=mode == "compat",
        )  # fmt: skip
        switch = {"CODEREVAL_PROJECT_BYTECODE": "1" if bytecode else "0"}
        with mock.patch.dict(os.environ, switch):
            start = time.perf_counter()
            report = evaluate(benchmark=bench, samples=samples,
                              run_dir=root / f"{mode}-{executor}{jobs}", options=options)
            elapsed = time.perf_counter() - start
        isolation = report.isolation
        return elapsed, report.counts.get(Verdict.PASSED.value, 0)

    # Warm-up (untimed): builds or finds the project environments.
    warm_up = evaluate(
        benchmark=bench, samples=[s for s in samples if s.index == 0], run_dir=root / "warm-up",
        options=EvalOptions(jobs=jobs_all, sandbox=args.sandbox, projects=inputs.manifest,
                            timeout=args.timeout, progress=False, executor="fresh",
                            tests_dir=inputs.tests_dir),
    )  # fmt: skip
    # A task whose project environment cannot be built here runs on neither side (the naive
    # baseline would otherwise pick up some older build of the project and run it anyway).
    unbuilt = {o.task_id for o in warm_up.outcomes
               if o.verdict is Verdict.INFRA_ERROR and o.stage is Stage.ENVIRONMENT}
    if unbuilt:
        projects = sorted({t.project for t in inputs.tasks if t.task_id in unbuilt})
        print(f"({len(unbuilt)} task(s) left out: no environment builds here for "
              f"{', '.join(projects)})")
        inputs = replace(inputs, tasks=[t for t in inputs.tasks if t.task_id not in unbuilt])
        samples = [s for s in samples if s.task_id not in unbuilt]
        bench = Benchmark(name=inputs.name, tasks=inputs.tasks)
    cache = default_root()
    envs: dict[str, Environment] = {}
    missing: set[str] = set()
    shared = find_environment(cache, "standalone")
    for task in inputs.tasks:
        env = find_environment(cache, task.project)
        if (env is None or not env.ready) and task.test is not None \
                and task.test.kind is TestKind.CODEREVAL_STANDALONE:
            # A project with only standalone tasks has no environment of its own: the platform
            # ran those tests in its one standalone interpreter, as our runner does.
            env = shared
        if env is None or not env.ready:
            missing.add(task.project)
        else:
            envs[task.project] = env
    if missing:
        # The naive baseline runs in the project's environment: without one, neither side.
        print(f"({sum(t.project in missing for t in inputs.tasks)} task(s) left out: no "
              f"environment here for {', '.join(sorted(missing))})")
        inputs = replace(inputs, tasks=[t for t in inputs.tasks if t.project not in missing])
        samples = [s for s in samples if s.task_id in {t.task_id for t in inputs.tasks}]
        bench = Benchmark(name=inputs.name, tasks=inputs.tasks)

    by_id = {t.task_id: t for t in inputs.tasks}
    naive = (float("inf"), 0)
    ours: dict[tuple[str, str, int], tuple[float, int]] = {}
    loads: dict[str, float] = {}
    # Interleaved rounds, best of each: the machine is shared, so load comes and goes.
    for _ in range(args.rounds):
        result = naive_run(by_id, samples, envs, args.timeout, inputs.tests_dir)
        if result < naive:
            naive, loads["naive"] = result, os.getloadavg()[0]
        for mode in modes:
            for executor in executors:
                for jobs in sorted({1, jobs_all}):
                    result = engine(jobs, executor, mode)
                    key = (mode, executor, jobs)
                    if result < ours.get(key, (float("inf"), 0)):
                        ours[key] = result
                        loads[" ".join(map(str, key))] = os.getloadavg()[0]
    return Measured(n=len(samples), tasks=len(inputs.tasks), naive=naive, ours=ours,
                    isolation=isolation, envs=envs, loads=loads)


def print_table(inputs: Inputs, got: Measured, args: argparse.Namespace, jobs_all: int,
                hints_at_start: int) -> None:
    n = got.n
    print(f"\n{inputs.name}: {got.tasks} tasks x {n // got.tasks} = {n} samples "
          f"(references); isolation {got.isolation}; {jobs_all} cores; best of {args.rounds} "
          "rounds; 'load' is the 1-minute load average when the kept time was taken")
    print(f"preload hints at the start: {hints_at_start} in {default_root() / HINTS_FOLDER}"
          " (what earlier runs found unfit to preload, as every run after the first has them;"
          " remove the folder for a first run's worker starts)\n")
    print(f"{'':58} {'wall s':>8} {'ms/sample':>10} {'samples/s':>10} {'passed':>7} "
          f"{'vs naive':>9} {'load':>6}")
    rows = [("naive baseline (sequential)", got.naive, got.loads["naive"])]
    rows += [(f"codereval --executor {EXECUTORS[e][0]}"
              + (f" --preload {EXECUTORS[e][1]}" if EXECUTORS[e][1] != "auto" else "")
              + f" --jobs {j}" + (" --compat" if m == "compat" else "")
              + ("" if EXECUTORS[e][2] else " --no-overlap-waits")
              + ("" if EXECUTORS[e][3] else " (no bytecode)"),
              v, got.loads[f"{m} {e} {j}"])
             for (m, e, j), v in got.ours.items()]
    for label, (seconds, passed), load in rows:
        print(f"{label:58} {seconds:8.2f} {1000 * seconds / n:10.1f} {n / seconds:10.2f} "
              f"{passed:>4}/{n} {got.naive[0] / seconds:8.1f}x {load:6.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="mini-python")
    parser.add_argument("--generated", action="store_true", help="use the generated project")
    parser.add_argument("--prepared", type=Path, default=None,
                        help="a prepared CoderEval benchmark (real projects) instead")
    parser.add_argument("--repeat", type=int, default=3, help="samples per task")
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (best kept)")
    parser.add_argument("--import-costs", default="50,200,500",
                        help="ms of CPU a generated project's dependency takes to import, "
                        "one project per value ('' to skip)")
    parser.add_argument("--import-repeat", type=int, default=10,
                        help="samples per task of the generated import-cost projects (a warm "
                        "worker's start is paid once per evaluation: few samples hide the gain)")
    parser.add_argument("--no-breakdown", action="store_true")
    parser.add_argument("--executors", default="fresh,warm",
                        help="comma-separated: fresh, warm-nopreload (warm workers, --preload "
                             "none), warm (--preload auto: the default)")
    parser.add_argument("--modes", default="default",
                        help="comma-separated: default, compat (with --prepared: the official "
                             "tests run as the original machine did, `evaluate --compat`)")
    args = parser.parse_args()
    # Counted before any run writes one: the tables say what the runs started with.
    hints = default_root() / HINTS_FOLDER
    hints_at_start = len(list(hints.glob("*.json"))) if hints.is_dir() else 0

    root = Path(tempfile.mkdtemp(prefix="bench-engine-"))
    if args.prepared is not None:
        inputs: Inputs | None = prepared_inputs(args.prepared)
    else:
        inputs = None if args.generated else builtin_inputs(args.benchmark)
    inputs = inputs or generated_inputs(root)
    jobs_all = len(os.sched_getaffinity(0))
    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    if "compat" in modes and inputs.tests_dir is None:
        sys.exit("--modes compat needs --prepared (a benchmark with the official test tree)")
    executors = tuple(e.strip() for e in args.executors.split(",") if e.strip())
    unknown = sorted(set(executors) - set(EXECUTORS))
    if unknown or ("fresh" not in executors and not args.no_breakdown):
        sys.exit(f"--executors: {', '.join(EXECUTORS)} (fresh too unless --no-breakdown, "
                 f"whose phases it times); not {unknown}")
    got = measure(inputs, args, root / "main", jobs_all, args.repeat, modes, executors)
    print_table(inputs, got, args, jobs_all, hints_at_start)

    if not args.no_breakdown:
        phases, strategy = breakdown(inputs.tasks, got.envs, args.sandbox, n=20)
        per_naive = 1000 * got.naive[0] / got.n
        per_serial = 1000 * got.ours[(modes[0], "fresh", 1)][0] / got.n
        phases["test"] = per_naive - phases["interpreter"]
        phases["other"] = per_serial - sum(phases.values())
        notes = {
            "workspace": "private view of the project (kept: checked, file swapped)"
            if strategy == "hardlink" else "private view of the project (make + remove)",
            "sandbox": "one sandboxed launch over a plain subprocess",
            "interpreter": "the project's python starting (-c pass)",
            "test": "naive per-sample time less interpreter start",
            "other": "harness wrapper, injection, judging, store",
        }
        print(f"\nper-sample time of codereval --executor fresh --jobs 1 ({per_serial:.1f} ms), "
              f"by phase (workspace strategy {strategy}):")
        for phase, ms in phases.items():
            print(f"  {phase:12} {ms:8.1f} ms  {notes[phase]}")

    costs = [int(c) for c in args.import_costs.split(",") if c.strip()]
    summary = []
    for ms in costs:
        generated = generated_inputs(root / f"import{ms}", import_ms=ms)
        measured = measure(generated, args, root / f"import{ms}" / "runs", jobs_all,
                           args.import_repeat)
        print_table(generated, measured, args, jobs_all, hints_at_start)
        summary.append((ms, measured))
    if summary:
        print(f"\nhow it scales with the cost of the project's imports ({jobs_all} jobs; "
              "samples/s):")
        print(f"{'import ms':>10} {'naive':>8} {'fresh':>8} {'warm':>8} {'warm vs naive':>14} "
              f"{'load (naive/warm)':>18}")
        for ms, m in summary:
            naive = m.n / m.naive[0]
            fresh = m.n / m.ours[("default", "fresh", jobs_all)][0]
            warm = m.n / m.ours[("default", "warm", jobs_all)][0]
            loads = f"{m.loads['naive']:.1f}/{m.loads[f'default warm {jobs_all}']:.1f}"
            print(f"{ms:>10} {naive:8.2f} {fresh:8.2f} {warm:8.2f} {warm / naive:13.1f}x "
                  f"{loads:>18}")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
    sys.exit(0)
