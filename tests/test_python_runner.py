"""The Python project runner on the built-in mini benchmark: verdicts, marker, base immutability.

Environments are built once per session under a shared temporary root; packages come from the
persistent uv cache, so after the first run this needs no network.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from codereval import data
from codereval.environments import load_manifest
from codereval.environments.python import PythonEnvironmentBuilder, default_root
from codereval.families.codereval.records import load_records
from codereval.model import Sample, Task, Verdict
from codereval.runners.base import RunContext
from codereval.runners.python import PythonProjectRunner
from codereval.sandbox import Limits, get_sandbox, sandbox_class
from codereval.workspace.views import tree_hash

LIMITS = Limits(wall_time=4.0, memory_mb=512, processes=64)


def _bwrap_or_skip() -> None:
    reason = sandbox_class("bwrap").unavailable_reason()
    if reason:
        pytest.skip(f"hostile samples need bubblewrap: {reason}")


@pytest.fixture(scope="session")
def env_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    # Shared by xdist workers of one run: the builder's lock makes the second a cached no-op.
    root = tmp_path_factory.getbasetemp().parent / "codereval-mini-envs"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CODEREVAL_UV_CACHE", str(default_root() / "uv-cache"))
        builder = PythonEnvironmentBuilder()
        for spec in load_manifest(data.mini_python_manifest()):
            env = builder.build(spec, root=root)
            assert env.ready, env.error
        yield root


@pytest.fixture(scope="session")
def tasks() -> dict[str, Task]:
    return {task.task_id: task for task in load_records(data.mini_python_records())}


@pytest.fixture(scope="session")
def samples() -> list[tuple[str, Sample]]:
    rows = []
    for line in data.mini_python_samples().read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        sample = Sample(task_id=row["task_id"], index=row["index"], code=row.get("code"),
                        raw=row.get("raw", ""), model=row.get("model", ""))
        rows.append((row["label"], sample))
    return rows


def _context(env_root: Path, work: Path, sandbox: str = "bwrap", *, limits: Limits = LIMITS,
             executor: str = "fresh") -> RunContext:
    """The run context of mini-python; ``executor="warm"`` adds a warm pool under ``work``
    (close it with ``ctx.warm.close()``)."""
    pool = None
    if executor == "warm":
        from codereval.sandbox.warm import WarmPool
        pool = WarmPool(sandbox=get_sandbox(sandbox), root=work / "warm")
    return RunContext(sandbox=get_sandbox(sandbox), limits=limits, work_root=work,
                      env_root=env_root, tests_dir=data.mini_python_tests_dir(), warm=pool)


def _reference(name: str, tasks: dict[str, Task],
               samples: list[tuple[str, Sample]]) -> tuple[Task, Sample]:
    """The task of this name and its reference sample."""
    task = next(t for t in tasks.values() if t.name == name)
    return task, next(s for label, s in samples
                      if label == "reference" and s.task_id == task.task_id)


def _run_all(runner: PythonProjectRunner, pairs: list[tuple[Task, Sample]], ctx: RunContext):
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(lambda pair: runner.run(pair[0], pair[1], ctx), pairs))


def test_mini_benchmark_covers_every_level_and_both_layouts(tasks: dict[str, Task]) -> None:
    levels = {task.level for task in tasks.values()}
    assert len(levels) == 6
    kinds = {task.test.kind.value for task in tasks.values() if task.test}
    assert {"script", "pytest", "codereval_module", "codereval_standalone"} <= kinds
    assert 12 <= len(tasks) <= 18


@pytest.mark.slow
def test_every_reference_passes_and_every_trivial_body_fails(
    env_root: Path, tasks: dict[str, Task], samples: list[tuple[str, Sample]], tmp_path: Path
) -> None:
    _bwrap_or_skip()
    runner = PythonProjectRunner()
    ctx = _context(env_root, tmp_path)
    assert runner.prepare(list(tasks.values()), ctx) == {}
    chosen = [(label, s) for label, s in samples if label in ("reference", "reference_tabs",
                                                              "trivial_pass")]
    outcomes = _run_all(runner, [(tasks[s.task_id], s) for _, s in chosen], ctx)
    for (label, sample), outcome in zip(chosen, outcomes, strict=True):
        name = tasks[sample.task_id].name
        if label == "trivial_pass":
            assert outcome.verdict in (Verdict.FAILED, Verdict.RUNTIME_ERROR), (name, outcome)
        else:
            assert outcome.verdict is Verdict.PASSED, (name, label, outcome.detail,
                                                       outcome.stderr_tail)
            assert outcome.provenance.environment and outcome.provenance.harness_version
            assert outcome.isolation.startswith("bwrap")


EXPECTED = {
    "wrong": {Verdict.FAILED, Verdict.RUNTIME_ERROR},
    "crash": {Verdict.RUNTIME_ERROR},
    "syntax_error": {Verdict.SYNTAX_ERROR},
    "empty": {Verdict.NO_CODE},
    "none_code": {Verdict.NO_CODE},
    "slow": {Verdict.TIMEOUT},
    "memory_hog": {Verdict.MEMORY_EXCEEDED},
}


@pytest.mark.slow
def test_verdicts_and_hostile_samples_never_pass_and_leave_the_base_alone(
    env_root: Path, tasks: dict[str, Task], samples: list[tuple[str, Sample]], tmp_path: Path
) -> None:
    _bwrap_or_skip()
    runner = PythonProjectRunner()
    ctx = _context(env_root, tmp_path / "work")
    # The environments only: a build running beside this test (another worker's) holds a
    # `.fetch-*` folder and a `.lock` file there while it works.
    envs = sorted(p for p in (env_root / "envs").iterdir() if not p.name.startswith("."))
    before = {path.name: tree_hash(path) for path in envs}
    official_before = tree_hash(data.mini_python_tests_dir())
    chosen = [(label, s) for label, s in samples
              if label not in ("reference", "reference_tabs", "trivial_pass")]
    outcomes = _run_all(runner, [(tasks[s.task_id], s) for _, s in chosen], ctx)
    by_label: dict[str, list[Verdict]] = {}
    for (label, sample), outcome in zip(chosen, outcomes, strict=True):
        by_label.setdefault(label, []).append(outcome.verdict)
        assert outcome.verdict is not Verdict.PASSED, (tasks[sample.task_id].name, label)
        assert outcome.verdict is not Verdict.INFRA_ERROR, (label, outcome.detail)
        if label in EXPECTED:
            assert outcome.verdict in EXPECTED[label], (tasks[sample.task_id].name, label,
                                                        outcome)
        if outcome.verdict is Verdict.RUNTIME_ERROR:
            assert outcome.detail
        if outcome.verdict not in (Verdict.SYNTAX_ERROR, Verdict.NO_CODE):
            assert outcome.wall_time is not None
            ended = outcome.exit_code is not None or outcome.signal is not None
            assert ended or outcome.verdict is Verdict.TIMEOUT
    # Every exploit in the built-in samples was exercised.
    for label in ("exit0", "os_exit0", "guess_marker", "kill_parent", "patch_builtins",
                  "atexit_marker", "patch_runner", "patch_pytest", "fork_bomb",
                  "write_outside", "chmod_cwd", "raise_exit_in_test"):
        assert label in by_label
    assert {path.name: tree_hash(path) for path in envs} == before
    assert tree_hash(data.mini_python_tests_dir()) == official_before
    # Workspaces kept for reuse go when the evaluation ends.
    runner.close()
    assert not list((tmp_path / "work").iterdir()), "workspaces must be removed"


def test_runner_gives_infra_error_without_an_environment(
    tasks: dict[str, Task], tmp_path: Path
) -> None:
    runner = PythonProjectRunner()
    ctx = RunContext(sandbox=get_sandbox("none"), limits=LIMITS, work_root=tmp_path,
                     env_root=tmp_path / "empty-cache", tests_dir=data.mini_python_tests_dir())
    task = next(t for t in tasks.values() if t.name == "total")
    reasons = runner.prepare([task], ctx)
    assert "no environment built for project acme/invoicer" in reasons[task.task_id]
    outcome = runner.run(task, Sample(task_id=task.task_id, code=task.reference), ctx)
    assert outcome.verdict is Verdict.INFRA_ERROR
    assert "codereval env build" in outcome.detail


def test_official_task_without_tests_dir_is_infra_error(
    tasks: dict[str, Task], tmp_path: Path
) -> None:
    runner = PythonProjectRunner()
    ctx = RunContext(sandbox=get_sandbox("none"), limits=LIMITS, work_root=tmp_path,
                     env_root=tmp_path)
    task = next(t for t in tasks.values() if t.name == "degree")
    outcome = runner.run(task, Sample(task_id=task.task_id, code=task.reference), ctx)
    assert outcome.verdict is Verdict.INFRA_ERROR and "--tests-dir" in outcome.detail


def test_missing_tests_dir_is_a_user_error(tasks: dict[str, Task], tmp_path: Path) -> None:
    from codereval.errors import UserError

    runner = PythonProjectRunner()
    ctx = RunContext(sandbox=get_sandbox("none"), limits=LIMITS, work_root=tmp_path,
                     env_root=tmp_path, tests_dir=tmp_path / "nope")
    with pytest.raises(UserError, match="tests dir not found"):
        runner.prepare(list(tasks.values()), ctx)


def test_a_pass_needs_this_runs_marker() -> None:
    from codereval.model import Outcome, Stage
    from codereval.runners.marker import new_marker
    from codereval.runners.python import _judge
    from codereval.sandbox import ExecResult

    marker = new_marker()

    def outcome(verdict: Verdict, stage: Stage, **fields: object) -> Outcome:
        return Outcome(task_id="t", verdict=verdict, stage=stage, **fields)  # type: ignore[arg-type]

    def result(stdout: bytes) -> ExecResult:
        return ExecResult(exit_code=0, signal=None, wall_time=0.1, cpu_time=0.1,
                          stdout=stdout, stderr=b"")

    guessed = ("CODEREVAL-DONE-" + "0" * 32 + "\n").encode()
    assert _judge(result(guessed), {}, marker, outcome).verdict is Verdict.RUNTIME_ERROR
    forged = _judge(result(b""), {"status": "passed"}, marker, outcome)
    assert forged.verdict is Verdict.FAILED and "without the run's marker" in forged.detail
    real = _judge(result(f"\n{marker}\n".encode()), {"status": "passed"}, marker, outcome)
    assert real.verdict is Verdict.PASSED


# Module-level code after the sample's function: the project's root is the module's grandparent.
_ROOT = ("\nimport os as _os\n"
         "_root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))\n")
_LEAVE = _ROOT + "open(_os.path.join(_root, 'left-behind.txt'), 'w').close()\n"
_CHECK = _ROOT + "assert not _os.path.exists(_os.path.join(_root, 'left-behind.txt')), 'seen'\n"


@pytest.mark.slow
@pytest.mark.parametrize("executor", ["fresh", "warm"])
def test_a_file_a_sample_leaves_in_its_project_is_never_seen_by_the_next_sample(
    env_root: Path, tasks: dict[str, Task], samples: list[tuple[str, Sample]], tmp_path: Path,
    executor: str,
) -> None:
    """Workspaces are kept between samples of a project; one a sample changed is not."""
    _bwrap_or_skip()
    task, reference = _reference("normalize_whitespace", tasks, samples)
    code = reference.code or ""
    runner = PythonProjectRunner(reuse_workspaces=True)
    ctx = _context(env_root, tmp_path / "work", executor=executor)
    try:
        verdicts = []
        for index, text in enumerate([code, code + _CHECK, code + _LEAVE, code + _CHECK,
                                      code + _CHECK]):
            sample = reference.model_copy(update={"index": index, "code": text})
            outcome = runner.run(task, sample, ctx)
            assert outcome.provenance.executor == executor
            verdicts.append(outcome.verdict)
        assert verdicts == [Verdict.PASSED] * 5
        cache = runner._workspace_cache(ctx)
        assert cache is not None
        # Clean samples handed their workspace on; the one that wrote in it was not reused.
        assert cache.stats.reused == 3 and cache.stats.discarded == 1, cache.stats
    finally:
        runner.close()
        if ctx.warm is not None:
            ctx.warm.close()


def test_a_warm_worker_is_offered_what_the_projects_tests_import(
    env_root: Path, tasks: dict[str, Task], tmp_path: Path
) -> None:
    runner = PythonProjectRunner()
    ctx = _context(env_root, tmp_path, sandbox="none")
    assert runner.prepare(list(tasks.values()), ctx) == {}
    invoicer = next(t for t in tasks.values() if t.project == "acme/invoicer")
    preloads = runner._preload_imports(invoicer, ctx, runner._task_environment(invoicer, ctx))
    offered = preloads.external
    # Submodules the tests reach through the project's modules, the standard library too...
    assert {"dateutil.parser", "dateutil.relativedelta", "decimal", "unicodedata"} <= set(offered)
    # ...never the project's own modules among them; and these tests, outside --compat, get
    # none of those either (a sample's workspace is at a new path each time).
    assert not any(m.split(".")[0] == "invoicer" for m in offered)
    assert preloads.own == ()
    # One list for every task of the environment: its samples share workers.
    others = [t for t in tasks.values() if t.project == "acme/invoicer"]
    assert {runner._preload_imports(t, ctx, runner._task_environment(t, ctx))
            for t in others} == {preloads}


_LATE_IMPORTS = """
import runpy, sys
for name in {stdlib!r}:
    __import__(name)
before = set(sys.modules)
import os
real_exit = os._exit
def _exit(code):
    sys.stderr.write("NEW " + " ".join(sorted(set(sys.modules) - before)) + "\\n")
    sys.stderr.flush()
    real_exit(code)
os._exit = _exit
sys.argv = [{harness!r}, {spec!r}]
runpy.run_path({harness!r}, run_name="__main__")
"""


@pytest.mark.parametrize("test_code", [
    "from mylib import f\nassert f() == 1\n",     # passes
    "from mylib import f\nassert f() == 2\n",     # fails: a traceback with carets
    "from mylib import f\nf(None)\n",             # raises in the sample's code
])
def test_the_harness_imports_nothing_per_sample_that_a_warm_worker_preloads(
    tmp_path: Path, test_code: str,
) -> None:
    # What the harness imports while it runs a sample is imported again by every forked
    # sample unless the worker preloaded it (runpy.run_path imports pkgutil when called, a
    # traceback imports ast): WARM_STDLIB must hold all of it; only the project's modules stay.
    import subprocess
    import sys
    from importlib import resources

    from codereval.runners.marker import new_marker
    from codereval.runners.python import WARM_STDLIB

    project = tmp_path / "project"
    project.mkdir()
    (project / "mylib.py").write_text("def f(x=1):\n    return x + 0\n")
    (project / "test_x.py").write_text(test_code)
    harness = tmp_path / "harness.py"
    harness.write_text(resources.files("codereval.runners").joinpath("python_harness.py")
                       .read_text(encoding="utf-8"))
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({
        "target": str(project / "test_x.py"), "mode": "script", "root": str(project),
        "result": str(tmp_path / "result.json"), "span": [], "test_func": None,
        "call_test_func": False}))
    code = _LATE_IMPORTS.format(stdlib=WARM_STDLIB, harness=str(harness), spec=str(spec))
    done = subprocess.run([sys.executable, "-I", "-c", code], input=new_marker().encode(),
                          capture_output=True, timeout=60, check=False)
    assert json.loads((tmp_path / "result.json").read_text())["status"] in (
        "passed", "failed", "error")
    new = done.stderr.decode().split("NEW ", 1)[1].split()
    assert set(new) == {"mylib"}, f"imported per sample: {sorted(set(new) - {'mylib'})}"


_DISK_HOG = """
import os
block = b'x' * (1 << 20)
for i in range(32):  # 1 GB at most, in files under the file-size limit
    with open(f'disk-hog-{i}', 'wb') as out:
        for _ in range(32):
            out.write(block)
import time
time.sleep(4)
"""


@pytest.mark.parametrize("executor", ["fresh", "warm"])
def test_a_sample_that_fills_the_disk_is_stopped_and_told_so(
    env_root: Path, tasks: dict[str, Task], samples: list[tuple[str, Sample]], tmp_path: Path,
    executor: str,
) -> None:
    """A sample writing past --disk is a runtime_error naming the limit, and its files go."""
    _bwrap_or_skip()
    task, reference = _reference("normalize_whitespace", tasks, samples)
    limits = Limits(wall_time=20.0, memory_mb=512, processes=64, disk_mb=128)
    work = tmp_path / "work"
    ctx = _context(env_root, work, limits=limits, executor=executor)
    runner = PythonProjectRunner()
    try:
        hog = reference.model_copy(update={"code": (reference.code or "") + _DISK_HOG})
        outcome = runner.run(task, hog, ctx)
        assert outcome.provenance.executor == executor
        assert outcome.verdict is Verdict.RUNTIME_ERROR, outcome
        assert outcome.detail == "wrote more than 128 MB to disk"
        # The next sample runs as usual.
        assert runner.run(task, reference, ctx).verdict is Verdict.PASSED
    finally:
        runner.close()
        if ctx.warm is not None:
            ctx.warm.close()
    left = [p for p in work.rglob("disk-hog-*")]
    assert not left


@pytest.mark.slow
def test_an_environment_the_manifest_does_not_name_is_never_borrowed_from_the_cache(
    env_root: Path, tasks: dict[str, Task], samples: list[tuple[str, Sample]], tmp_path: Path
) -> None:
    # Another benchmark's manifest built a `standalone` environment in the same cache (CoderEval
    # has one; mini-python's manifest has none): mini-python's standalone tests must not run in
    # it, whatever else the cache holds.
    _bwrap_or_skip()
    root = tmp_path / "cache"
    shutil.copytree(env_root, root, symlinks=True)
    other = tmp_path / "other-standalone"
    other.mkdir()
    manifest = tmp_path / "other.toml"
    manifest.write_text(f'[projects.standalone]\nsource = "{other}"\n')
    [spec] = load_manifest(manifest)
    borrowed = PythonEnvironmentBuilder().build(spec, root=root)
    assert borrowed.ready, borrowed.error
    standalone = next(t for t in tasks.values()
                      if t.test is not None and t.test.kind.value == "codereval_standalone")
    task, sample = _reference(standalone.name, tasks, samples)
    runner = PythonProjectRunner()
    ctx = _context(root, tmp_path / "work")
    ctx = dataclasses.replace(ctx, projects_dir=data.mini_python_manifest())
    try:
        assert runner.prepare([task], ctx) == {}
        outcome = runner.run(task, sample, ctx)
    finally:
        runner.close()
    assert outcome.verdict is Verdict.PASSED, outcome.detail
    assert outcome.provenance.environment != borrowed.key
    assert outcome.provenance.environment.startswith("python-")


@pytest.mark.parametrize("executor", ["fresh", "warm"])
def test_a_splice_that_breaks_the_official_module_is_told_apart_though_its_compile_waits(
    env_root: Path, tasks: dict[str, Task], samples: list[tuple[str, Sample]], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, executor: str,
) -> None:
    """The official test module is the file that runs: a run that passes compiled it, so the
    driver compiles it only for a run that may have stopped on a compile error. A sample that
    compiles alone but breaks the module where it goes (it starts with an import, and the
    function it replaces is decorated) is still a syntax error of the sample, not a run."""
    import codereval.runners.python as python_runner
    from codereval.model import Stage

    official = tmp_path / "official"
    shutil.copytree(data.mini_python_tests_dir(), official)
    module = official / "repos/acme---invoicer/invoicer/invoice_tax_for_passk_validte.py"
    text = module.read_text(encoding="utf-8")
    assert "\ndef tax_for(" in text
    module.write_text("import functools\n" + text.replace(
        "\ndef tax_for(", "\n@functools.lru_cache(maxsize=None)\ndef tax_for(", 1),
        encoding="utf-8")
    task, reference = _reference("tax_for", tasks, samples)
    assert reference.code is not None and not reference.code.lstrip().startswith("@")
    breaking = reference.model_copy(update={"index": 99, "code": "import os\n" + reference.code})
    compiled: list[object] = []
    real = python_runner.check_injected
    monkeypatch.setattr(python_runner, "check_injected",
                        lambda injected: (compiled.append(injected), real(injected))[1])
    ctx = dataclasses.replace(_context(env_root, tmp_path / "work", executor=executor),
                              tests_dir=official)
    runner = PythonProjectRunner()
    try:
        passed = runner.run(task, reference, ctx)
        assert passed.verdict is Verdict.PASSED, passed.detail
        assert compiled == []  # its run compiled it
        broken = runner.run(task, breaking, ctx)
    finally:
        runner.close()
        if ctx.warm is not None:
            ctx.warm.close()
    assert broken.verdict is Verdict.SYNTAX_ERROR, (broken.verdict, broken.detail)
    assert broken.stage is Stage.INJECT
    assert broken.detail.startswith("SyntaxError") and broken.detail.endswith("after injection")
    assert len(compiled) == 1
