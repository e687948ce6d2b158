"""The Java mini benchmark end to end: environment, injection, compile, sandboxed run, verdicts.

One environment build per test session (Maven downloads land in ~/.m2 once); every built-in
sample is evaluated once, in parallel, and the tests read the outcomes.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from codereval.benchmarks import builtin_dir
from codereval.benchmarks.samples import load_samples
from codereval.environments.base import load_manifest
from codereval.environments.java import JavaEnvironmentBuilder, source_hash
from codereval.families.codereval.records import JAVA_KEYS, load_records
from codereval.java.toolchain import missing_toolchain
from codereval.model import Outcome, Sample, Task, Verdict
from codereval.runners.base import RunContext
from codereval.runners.java import JavaProjectRunner
from codereval.sandbox import get_sandbox
from codereval.sandbox.base import Limits

pytestmark = [
    pytest.mark.skipif(missing_toolchain() is not None, reason="no JDK"),
]

MINI = builtin_dir("mini_java")
LIMITS = Limits(wall_time=8.0, memory_mb=512)


@pytest.fixture(scope="session")
def tasks() -> dict[str, Task]:
    return {t.task_id: t for t in load_records(MINI / "records.json")}


@pytest.fixture(scope="session")
def samples() -> list[Sample]:
    return load_samples(MINI / "samples.jsonl")


def _ctx(env_root: Path, work: Path, *, compat: bool) -> RunContext:
    return RunContext(sandbox=get_sandbox("auto"), limits=LIMITS, work_root=work,
                      env_root=env_root, projects_dir=MINI / "projects.toml", compat=compat)


def _evaluate(
    tasks: dict[str, Task], samples: list[Sample], ctx: RunContext
) -> dict[tuple[str, str], Outcome]:
    runner = JavaProjectRunner()
    try:
        assert runner.prepare(list(tasks.values()), ctx) == {}
        with ThreadPoolExecutor(max_workers=2) as pool:
            outcomes = list(pool.map(lambda s: runner.run(tasks[s.task_id], s, ctx), samples))
    finally:
        runner.close()
    return {(tasks[s.task_id].name, s.model): o for s, o in zip(samples, outcomes, strict=True)}


@pytest.fixture(scope="session")
def outcomes(
    tasks: dict[str, Task], samples: list[Sample], java_env_root: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[tuple[str, str], Outcome]:
    ctx = _ctx(java_env_root, tmp_path_factory.mktemp("java-work"), compat=False)
    env = JavaEnvironmentBuilder().build(load_manifest(MINI / "projects.toml")[0],
                                         root=java_env_root)
    before = source_hash(env.path)
    got = _evaluate(tasks, samples, ctx)
    BASE_HASHES.update(before=before, after=source_hash(env.path))
    return got


BASE_HASHES: dict[str, str] = {}


def test_records_are_official_java_records() -> None:
    records = json.loads((MINI / "records.json").read_text(encoding="utf-8"))["RECORDS"]
    assert 8 <= len(records) <= 12
    levels = {r["level"] for r in records}
    assert levels == {"self_contained", "slib_runnable", "plib_runnable", "class_runnable",
                      "project_runnable"}
    kinds = {r["test_kind"] for r in records}
    assert {"java_main", "junit4", "junit5"} <= kinds
    for record in records:
        assert set(JAVA_KEYS) <= set(record)
        assert all(isinstance(v, str) for v in record.values())
        assert re.fullmatch(r"[0-9a-f]{24}", record["_id"])
        # Unquoted items, as in the official Java release.
        assert re.search(r'"apis" : "\[[^"\']*\]"', record["oracle_context"])
        lines = record["file_content"].splitlines(keepends=True)
        span = "".join(lines[int(record["lineno"]) - 1: int(record["end_lineno"])])
        assert span == record["code"]
        test_class = Path(record["test_path"]).stem
        assert test_class == f"{record['class_name']}_{record['name']}"


@pytest.mark.slow
def test_every_reference_passes(outcomes: dict[tuple[str, str], Outcome]) -> None:
    references = {k: o for k, o in outcomes.items() if k[1] == "reference"}
    assert len(references) == 10
    for key, outcome in references.items():
        assert outcome.verdict is Verdict.PASSED, (key, outcome.detail, outcome.stderr_tail)


@pytest.mark.slow
def test_every_trivial_body_fails(outcomes: dict[tuple[str, str], Outcome]) -> None:
    trivial = {k: o for k, o in outcomes.items() if k[1] == "trivial"}
    assert len(trivial) == 10
    for key, outcome in trivial.items():
        assert outcome.verdict in (Verdict.FAILED, Verdict.RUNTIME_ERROR), (key, outcome)
    assert outcomes["joinSorted", "trivial"].verdict is Verdict.FAILED  # JUnit 4 assertion
    assert outcomes["gcd", "trivial"].verdict is Verdict.FAILED  # JUnit 5 assertion


@pytest.mark.slow
def test_non_compiling_samples_carry_javac_diagnostics(
    outcomes: dict[tuple[str, str], Outcome],
) -> None:
    broken = {k: o for k, o in outcomes.items() if k[1] == "broken"}
    for (name, _), outcome in broken.items():
        assert outcome.verdict is Verdict.COMPILE_ERROR
        first = outcome.detail.splitlines()[0]
        assert re.fullmatch(r"io/textkit/(store/)?\w+\.java:\d+: error: cannot find symbol", first)
        assert f'undefinedHelper("{name}")' in outcome.detail


@pytest.mark.slow
def test_hostile_and_slow_samples(outcomes: dict[tuple[str, str], Outcome]) -> None:
    exit0 = outcomes["reverseWords", "hostile-exit0"]
    assert exit0.verdict is Verdict.RUNTIME_ERROR and "before the test finished" in exit0.detail
    assert outcomes["reverseWords", "hostile-halt"].verdict is Verdict.RUNTIME_ERROR
    assert outcomes["totalQuantity", "hostile-print-true"].verdict is Verdict.FAILED
    assert outcomes["countWords", "slow-loop"].verdict is Verdict.TIMEOUT
    assert outcomes["initials", "memory-hog"].verdict is Verdict.MEMORY_EXCEEDED
    junit_error = outcomes["gcd", "runtime-error"]
    assert junit_error.verdict is Verdict.RUNTIME_ERROR
    assert "IllegalStateException: not implemented" in junit_error.detail
    assert outcomes["orderTotal", "wrong-no-skip"].verdict is Verdict.FAILED
    for outcome in outcomes.values():
        assert outcome.verdict is not Verdict.INFRA_ERROR, outcome
        if outcome.verdict is not Verdict.COMPILE_ERROR:
            assert outcome.isolation  # ran in the sandbox and says which


@pytest.mark.slow
def test_compat_mode_reproduces_the_stdout_check_and_private_rewrite(
    tasks: dict[str, Task], samples: list[Sample], java_env_root: Path, tmp_path: Path,
) -> None:
    chosen = [s for s in samples if (tasks[s.task_id].name, s.model) in {
        ("reverseWords", "hostile-exit0"), ("remove", "reference"),
        ("totalQuantity", "hostile-print-true")}]
    got = _evaluate(tasks, chosen, _ctx(java_env_root, tmp_path, compat=True))
    # The original platform's quirk: "true" on stdout and an early exit(0) is a pass.
    assert got["reverseWords", "hostile-exit0"].verdict is Verdict.PASSED
    assert got["totalQuantity", "hostile-print-true"].verdict is Verdict.FAILED
    remove = got["remove", "reference"]
    assert remove.verdict is Verdict.PASSED
    assert "rewrote 2 'private ' to 'public '" in remove.detail


@pytest.mark.slow
def test_the_base_is_never_modified(
    outcomes: dict[tuple[str, str], Outcome], java_env_root: Path,
) -> None:
    assert len(outcomes) > 30  # every sample has run against this environment
    assert BASE_HASHES["before"] == BASE_HASHES["after"]
    spec = load_manifest(MINI / "projects.toml")[0]
    env = JavaEnvironmentBuilder().build(spec, root=java_env_root)
    assert JavaEnvironmentBuilder().check(env) is None
    # The shipped project and the environment's copy of it are identical.
    assert source_hash(Path(spec.resolved_source())) == source_hash(env.path / "src")


def test_no_code_and_unknown_projects(
    tasks: dict[str, Task], java_env_root: Path, tmp_path: Path,
) -> None:
    runner = JavaProjectRunner()
    task = next(iter(tasks.values()))
    ctx = _ctx(java_env_root, tmp_path, compat=False)
    empty = runner.run(task, Sample(task_id=task.task_id, code=None), ctx)
    assert empty.verdict is Verdict.NO_CODE
    stranger = task.model_copy(update={"location": task.location.model_copy(  # type: ignore[union-attr]
        update={"project": "nobody/nothing"})})
    lost = runner.run(stranger, Sample(task_id=task.task_id, code="int x() { return 1; }"), ctx)
    assert lost.verdict is Verdict.INFRA_ERROR
    assert "nobody/nothing" in lost.detail and "not in the projects manifest" in lost.detail


def test_a_project_that_does_not_compile_is_an_infra_error(tmp_path: Path) -> None:
    project = tmp_path / "broken---proj"
    (project / "src" / "p").mkdir(parents=True)
    (project / "src" / "p" / "A.java").write_text("package p;\nclass A { int f() { return x; } }\n")
    manifest = tmp_path / "projects.toml"
    manifest.write_text('[projects."broken/proj"]\nlanguage = "java"\nsource = "broken---proj"\n')
    task = Task(task_id="t1", benchmark="codereval-java", language="java", name="f",
                location={"project": "broken/proj", "file_path": "p/A.java", "lineno": 2,
                          "end_lineno": 2, "class_name": "A", "package": "p"})
    ctx = RunContext(sandbox=get_sandbox("auto"), limits=LIMITS, work_root=tmp_path / "w",
                     env_root=tmp_path / "envs", projects_dir=manifest)
    runner = JavaProjectRunner()
    blocked = runner.prepare([task], ctx)
    assert "compiling the project failed" in blocked["t1"]
    assert "A.java:2: error: cannot find symbol" in blocked["t1"]
    outcome = runner.run(task, Sample(task_id="t1", code="int f() { return 1; }"), ctx)
    assert outcome.verdict is Verdict.INFRA_ERROR
    runner.close()
