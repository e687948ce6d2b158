"""A Java test runs the sample's classes, or it does not run at all.

The sample's method is compiled into a private folder put ahead of the project's own build on
the test JVM's classpath. Should the JVM not find the sample's classes there (the folder
missing or empty where the JVM looks, or a class of the same name found first elsewhere), it
would load the project's original class, the reference, and a wrong sample would pass. The
harness checks, before the test runs and before any of the sample's code could, that every
class in the folder is the one the JVM loads; when one is not, no test runs and the sample is
an infra_error (run again on resume), never a verdict about code that did not run.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from codereval.benchmarks import builtin_dir, load_benchmark
from codereval.benchmarks.samples import load_samples
from codereval.families.codereval.records import load_records
from codereval.families.coderujb import runner as ujb_runner
from codereval.families.coderujb.runner import CoderUjbRunner
from codereval.java.build import HARNESS_MAIN, ensure_built
from codereval.java.compiler import CompileResult, PlainJavac, WarmJavac
from codereval.java.toolchain import find_jdk, missing_toolchain
from codereval.model import Outcome, Sample, Task, Verdict
from codereval.runners import java as java_runner
from codereval.runners.base import RunContext
from codereval.runners.java import JavaProjectRunner
from codereval.runners.marker import new_marker
from codereval.sandbox import get_sandbox, warm
from codereval.sandbox.base import Limits
from codereval.sandbox.bwrap import BwrapSandbox
from codereval.sandbox.warm import WarmPool

pytestmark = [pytest.mark.skipif(missing_toolchain() is not None, reason="no JDK")]

MINI = builtin_dir("mini_java")
LIMITS = Limits(wall_time=30.0, memory_mb=1024)
NOT_RUN = "did not run the sample's classes"
# A java_main task and a JUnit 5 one, each with a wrong body that fails its test.
MAIN_TASK, JUNIT_TASK = "914ce03f053a26baafe5e514", "1ad67bd2eadffd936a3a768f"


class LostOutput:
    """A compiler whose classes end up where the test JVM does not look: it compiles (javac's
    own answer), but into a folder beside the one it was given, which stays empty."""

    def __init__(self) -> None:
        self.inner = WarmJavac(pool_size=1)

    def compile(self, sources: Mapping[str, str], *, classpath: Sequence[Path], out_dir: Path,
                options: Sequence[str] = (), timeout: float = 120.0) -> CompileResult:
        out_dir.mkdir(parents=True, exist_ok=True)
        return self.inner.compile(sources, classpath=classpath, out_dir=out_dir.parent / "lost",
                                  options=options, timeout=timeout)

    def close(self) -> None:
        self.inner.close()


@pytest.fixture(scope="module")
def tasks() -> dict[str, Task]:
    return {t.task_id: t for t in load_records(MINI / "records.json")}


def wrong(task_id: str) -> Sample:
    (sample,) = [s for s in load_samples(MINI / "samples.jsonl")
                 if s.task_id == task_id and s.model == "trivial"]
    return sample


@pytest.fixture(params=["fresh", "warm"])
def ctx(request: pytest.FixtureRequest, tmp_path: Path,
        java_env_root: Path) -> Iterator[RunContext]:
    sandbox = get_sandbox("auto")
    pool = None
    if request.param == "warm":
        if BwrapSandbox.unavailable_reason() is not None or "cgroup" not in sandbox.isolation:
            pytest.skip(f"no warm workers here ({sandbox.isolation})")
        pool = WarmPool(sandbox=sandbox, root=tmp_path / "warm")
    yield RunContext(sandbox=sandbox, limits=LIMITS, work_root=tmp_path, env_root=java_env_root,
                     projects_dir=MINI / "projects.toml", warm=pool)
    if pool is not None:
        pool.close()


def run(runner: JavaProjectRunner, tasks: dict[str, Task], samples: list[Sample],
        ctx: RunContext) -> list[Outcome]:
    try:
        assert runner.prepare(list(tasks.values()), ctx) == {}
        return [runner.run(tasks[s.task_id], s, ctx) for s in samples]
    finally:
        runner.close()


@pytest.mark.slow
@pytest.mark.parametrize("compat", [False, True], ids=["default", "compat"])
def test_a_wrong_sample_whose_classes_the_jvm_does_not_see_is_never_judged(
    tasks: dict[str, Task], ctx: RunContext, compat: bool,
) -> None:
    ctx = dataclasses.replace(ctx, compat=compat)
    outcomes = run(JavaProjectRunner(compiler=LostOutput()), tasks,
                   [wrong(MAIN_TASK), wrong(JUNIT_TASK)], ctx)
    for outcome in outcomes:
        assert outcome.verdict is Verdict.INFRA_ERROR, outcome.detail
        assert NOT_RUN in outcome.detail and "no class in" in outcome.detail
        # Nothing of the test ran: not the original method, not the test's checks.
        assert "true" not in outcome.stdout_tail


@pytest.mark.slow
def test_without_the_check_the_project_original_method_passes_the_wrong_sample(
    tasks: dict[str, Task], ctx: RunContext, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The hazard the check is for: the harness is not told which folder is the sample's.
    monkeypatch.setattr(java_runner, "SAMPLE_CLASSES", "-Dcodereval.unchecked=")
    outcomes = run(JavaProjectRunner(compiler=LostOutput()), tasks,
                   [wrong(MAIN_TASK), wrong(JUNIT_TASK)], ctx)
    assert [o.verdict for o in outcomes] == [Verdict.PASSED, Verdict.PASSED]


# ------------------------------------------------------------------ the harness itself


def compile_class(folder: Path, text: str) -> None:
    done = PlainJavac().compile({"p/Probe.java": text}, classpath=[], out_dir=folder)
    assert done.ok, done.diagnostics


def harness(classpath: list[Path], sample: Path) -> tuple[int, str, str]:
    marker = new_marker()
    done = subprocess.run(
        [str(find_jdk().java), f"-Dcodereval.sample.classes={sample}",
         "-cp", os.pathsep.join(map(str, [*classpath, ensure_built().harness_jar])),
         HARNESS_MAIN, "main", "p.Probe"],
        input=f"{marker}\n", capture_output=True, text=True, timeout=120, check=False)
    status, printed = java_runner.split_marker(done.stdout, marker)
    return done.returncode, status, printed


PROBE = 'package p; public class Probe { public static void main(String[] a) { ' \
        'System.out.println("%s"); } }'


def test_a_class_found_first_elsewhere_is_reported_and_the_test_does_not_run(
    tmp_path: Path,
) -> None:
    original, sample = tmp_path / "original", tmp_path / "sample"
    compile_class(original, PROBE % "original ran")
    compile_class(sample, PROBE % "sample ran")
    code, status, printed = harness([original, sample], sample)
    assert code == 1 and printed == ""
    assert status.startswith("unverified: p.Probe was loaded from file:")
    assert str(original) in status
    # In the sample's own place, the same run is the test's.
    assert harness([sample, original], sample) == (0, "main", "sample ran")


def test_a_missing_or_empty_sample_folder_is_reported(tmp_path: Path) -> None:
    original, empty = tmp_path / "original", tmp_path / "empty"
    compile_class(original, PROBE % "original ran")
    empty.mkdir()
    for folder in (empty, tmp_path / "missing"):
        code, status, printed = harness([folder, original], folder)
        assert (code, printed) == (1, "")
        assert status == f"unverified: no class in {folder}"


# ------------------------------------------------------------------ CoderUJB


@pytest.mark.slow
@pytest.mark.parametrize("checked", [True, False], ids=["checked", "unchecked-control"])
def test_a_coderujb_sample_whose_classes_the_jvm_does_not_see_is_never_judged(
    ujb_env_root: Path, tmp_path: Path, checked: bool, monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not checked:
        monkeypatch.setattr(ujb_runner, "SAMPLE_CLASSES", "-Dcodereval.unchecked=")
    bench = load_benchmark("mini-coderujb")
    task = next(t for t in bench if t.task_id == "fcg-langlite-1-abbreviate")
    ctx = RunContext(sandbox=get_sandbox("auto"), limits=LIMITS, work_root=tmp_path,
                     env_root=ujb_env_root, projects_dir=builtin_dir("mini_coderujb")
                     / "projects.toml")
    # The task's method returning null: it fails the task's tests, where they run.
    body = ("public static String abbreviate(String str, int maxWidth) { return null; }")
    runner = CoderUjbRunner(compiler=LostOutput())
    try:
        assert runner.prepare([task], ctx) == {}
        outcome = runner.run(task, Sample(task_id=task.task_id, index=0, code=body, raw=body),
                             ctx)
    finally:
        runner.close()
    if not checked:
        # The version's own method ran in the sample's place: a wrong sample passed.
        assert outcome.verdict is Verdict.PASSED, outcome.detail
        return
    assert outcome.verdict is Verdict.INFRA_ERROR, outcome.detail
    assert NOT_RUN in outcome.detail


# ------------------------------------------------------------------ a slot served fresh


@pytest.mark.slow
def test_a_slot_whose_warm_worker_cannot_start_runs_its_samples_fresh_with_their_classes(
    tasks: dict[str, Task], tmp_path: Path, java_env_root: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sandbox = get_sandbox("auto")
    if BwrapSandbox.unavailable_reason() is not None or "cgroup" not in sandbox.isolation:
        pytest.skip(f"no warm workers here ({sandbox.isolation})")

    def refuse(self: object, **kwargs: object) -> None:
        raise warm.WorkerError("refused, for the test")

    # A worker that cannot start (killed while starting, or out of time on a loaded machine):
    # the slot's samples run in the fresh sandbox, which must see the slot's folders as the
    # worker would have (the sample's classes are there).
    monkeypatch.setattr(warm.WarmWorker, "__init__", refuse)
    pool = WarmPool(sandbox=sandbox, root=tmp_path / "warm")
    ctx = RunContext(sandbox=sandbox, limits=LIMITS, work_root=tmp_path, env_root=java_env_root,
                     projects_dir=MINI / "projects.toml", warm=pool)
    try:
        outcomes = run(JavaProjectRunner(), tasks, [wrong(MAIN_TASK), wrong(JUNIT_TASK)], ctx)
    finally:
        pool.close()
    assert [o.verdict for o in outcomes] == [Verdict.FAILED, Verdict.FAILED], outcomes
    assert {o.provenance.executor for o in outcomes} == {"fresh"}
