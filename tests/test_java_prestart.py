"""The test JVM starts while the sample compiles (warm slots): it reads the completion marker
before it loads any class, and gets it only once javac has written them. What must hold: the
JVM really is up during the compile, the verdicts are those of a JVM started after it, a
compile that fails kills the waiting JVM, and a classpath that the compile changed (a class a
shared jar holds too) gets a JVM started for it instead."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest
from live_processes import live_pids_with

from codereval.benchmarks import builtin_dir
from codereval.benchmarks.samples import load_samples
from codereval.families.codereval.records import load_records
from codereval.java.compiler import CompileResult, WarmJavac
from codereval.java.toolchain import missing_toolchain
from codereval.model import Outcome, Sample, Task
from codereval.runners.base import RunContext
from codereval.runners.java import JavaProjectRunner
from codereval.sandbox import get_sandbox
from codereval.sandbox.base import Limits
from codereval.sandbox.bwrap import BwrapSandbox
from codereval.sandbox.warm import WarmPool

MINI = builtin_dir("mini_java")
LIMITS = Limits(wall_time=30.0, memory_mb=1024)


@pytest.fixture(autouse=True)
def _needs_jdk_and_bwrap() -> None:
    if missing_toolchain() is not None:
        pytest.skip("no JDK here")
    reason = BwrapSandbox.unavailable_reason()
    if reason is not None:
        pytest.skip(f"bwrap unavailable: {reason}")


class WatchingCompiler:
    """The warm compiler, noting for each compile whether the sample's test JVM was up while
    it ran (found by the sample's private tmpdir on its command line)."""

    def __init__(self) -> None:
        self.inner = WarmJavac(pool_size=1)
        self.jvm_during_compile: list[bool] = []

    def compile(self, sources: Mapping[str, str], *, classpath: Sequence[Path], out_dir: Path,
                options: Sequence[str] = (), timeout: float = 120.0) -> CompileResult:
        tmpdir = f"-Djava.io.tmpdir={out_dir.parent / 'scratch'}"
        # Started before the compile, the JVM is exec'd by the worker's child shortly after:
        # on a loaded machine later than a quick compile ends. Its marker is only written
        # after the compile, so a JVM started early shows up while we wait here; one started
        # late never does.
        # (After one miss the test has failed: no more waiting.)
        give_up = time.monotonic() + (15.0 if all(self.jvm_during_compile) else 0.0)
        seen = bool(live_pids_with(tmpdir))
        while not seen and time.monotonic() < give_up:
            time.sleep(0.01)
            seen = bool(live_pids_with(tmpdir))
        self.jvm_during_compile.append(seen)
        return self.inner.compile(sources, classpath=classpath, out_dir=out_dir,
                                  options=options, timeout=timeout)

    def close(self) -> None:
        self.inner.close()


@pytest.fixture(scope="module")
def tasks() -> dict[str, Task]:
    return {t.task_id: t for t in load_records(MINI / "records.json")}


def _samples(*models: str) -> list[Sample]:
    return [s for s in load_samples(MINI / "samples.jsonl") if s.model in models]


@pytest.fixture
def warm_ctx(tmp_path: Path, java_env_root: Path) -> Iterator[RunContext]:
    sandbox = get_sandbox("auto")
    if "cgroup" not in sandbox.isolation:
        pytest.skip(f"cgroups unavailable: {sandbox.isolation}")
    pool = WarmPool(sandbox=sandbox, root=tmp_path / "warm")
    yield RunContext(sandbox=sandbox, limits=LIMITS, work_root=tmp_path, env_root=java_env_root,
                     projects_dir=MINI / "projects.toml", warm=pool)
    pool.close()


def _run(runner: JavaProjectRunner, tasks: dict[str, Task], samples: list[Sample],
         ctx: RunContext) -> list[Outcome]:
    assert runner.prepare(list(tasks.values()), ctx) == {}
    try:
        return [runner.run(tasks[s.task_id], s, ctx) for s in samples]
    finally:
        runner.close()


def _key(outcome: Outcome) -> tuple[object, ...]:
    return (outcome.verdict, outcome.stage, outcome.exit_code, outcome.detail,
            outcome.provenance.executor, outcome.provenance.jvm)


def test_the_jvm_is_up_during_the_compile_and_judges_as_one_started_after_it(
    tasks: dict[str, Task], warm_ctx: RunContext,
) -> None:
    samples = _samples("reference", "trivial", "runtime-error", "hostile-exit0")
    watching = WatchingCompiler()
    early = _run(JavaProjectRunner(compiler=watching), tasks, samples, warm_ctx)
    late = _run(JavaProjectRunner(prestart=False), tasks, samples, warm_ctx)
    assert all(watching.jvm_during_compile)
    assert [_key(o) for o in early] == [_key(o) for o in late]
    assert {o.verdict.value for o in early} >= {"passed", "failed", "runtime_error"}
    assert {o.provenance.executor for o in early} == {"warm"}


def test_a_failed_compile_kills_the_waiting_jvm_and_the_slot_serves_on(
    tasks: dict[str, Task], warm_ctx: RunContext,
) -> None:
    broken, reference = _samples("broken")[0], _samples("reference")[0]
    watching = WatchingCompiler()
    runner = JavaProjectRunner(compiler=watching)
    outcomes = _run(runner, tasks, [broken, reference], warm_ctx)
    assert [o.verdict.value for o in outcomes] == ["compile_error", "passed"]
    assert watching.jvm_during_compile == [True, True]
    # No JVM of either sample outlives it.
    assert live_pids_with(f"-Djava.io.tmpdir={warm_ctx.work_root}") == []
    assert warm_ctx.warm is not None and len(warm_ctx.warm.workers()) == 1


def test_a_classpath_the_compile_changed_gets_a_jvm_started_for_it(
    tasks: dict[str, Task], warm_ctx: RunContext, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # After the compile the plan is made again from what was compiled; here the second plan
    # turns the archive off, as a sample class that a shared jar also holds would.
    runner = JavaProjectRunner()
    real = runner._plan
    calls: list[str] = []

    def plan(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        made = real(*args, **kwargs)  # type: ignore[arg-type]
        calls.append("plan")
        if len(calls) % 2 == 0:
            return dataclasses.replace(made, archive=None, why_not="a clash, for the test",
                                       classpath=made.classpath)
        return made

    monkeypatch.setattr(runner, "_plan", plan)
    outcomes = _run(runner, tasks, _samples("reference")[:2], warm_ctx)
    assert [o.verdict.value for o in outcomes] == ["passed", "passed"]
    assert {o.provenance.jvm for o in outcomes} == {"no cds: a clash, for the test"}
    assert live_pids_with(f"-Djava.io.tmpdir={warm_ctx.work_root}") == []
