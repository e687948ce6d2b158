"""How long a CoderUJB sample's run of the whole suite may take.

`--timeout` is the sample's: its named tests run under it. The whole suite that follows (FCG,
APR) is as long as the developers made it — minutes for Defects4J's Compress or Math — so it gets
the sample's limit plus three times what the unchanged suite took, measured once per version with
its failing tests. With the sample's 10 s alone, every correct sample of such a project timed out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_coderujb_exec import _ctx, references

from codereval.benchmarks import load_benchmark
from codereval.families.coderujb import runner as ujb_runner
from codereval.families.coderujb.defects4j import Defects4JExecutor
from codereval.families.coderujb.runner import BASELINE_FORMAT, CoderUjbRunner
from codereval.families.coderujb.verdicts import (
    SUITE_FACTOR,
    Baseline,
    TestRun,
    suite_wall_time,
    versions_for,
)
from codereval.java.toolchain import missing_toolchain
from codereval.model import UjbKind, Verdict
from codereval.runners.base import RunContext
from codereval.sandbox import get_sandbox
from codereval.sandbox.base import Limits


def test_the_suite_gets_the_samples_limit_plus_three_times_the_unchanged_suite() -> None:
    assert SUITE_FACTOR == 3.0
    assert suite_wall_time(10.0, Baseline(failing=(), wall_time=50.0)) == 160.0
    # A version whose suite time is unknown gives the sample's limit alone.
    assert suite_wall_time(10.0, Baseline(failing=("a.B::c",))) == 10.0


def test_a_kept_baseline_of_the_old_format_is_measured_again(tmp_path: Path) -> None:
    cache = tmp_path / "b.json"
    cache.write_text(json.dumps({"format": "ujb-baseline/1", "tests": 3, "failing": []}))
    assert ujb_runner._read_baseline(cache) is None
    cache.write_text(json.dumps({"format": BASELINE_FORMAT, "tests": 3, "failing": ["a.B::c"],
                                 "wall_time": 41.5}))
    assert ujb_runner._read_baseline(cache) == Baseline(failing=("a.B::c",), wall_time=41.5)
    assert ujb_runner._read_baseline(tmp_path / "none.json") is None


@pytest.mark.slow
@pytest.mark.skipif(missing_toolchain() is not None, reason="no JDK")
def test_a_samples_suite_run_gets_the_time_the_measured_baseline_allows(
    ujb_env_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    task, sample = references()[UjbKind.APR]
    seen: list[tuple[tuple[str, ...], float]] = []
    real = CoderUjbRunner._run_tests

    def spy(self: CoderUjbRunner, *args: object, **kwargs: object) -> TestRun:
        run = real(self, *args, **kwargs)  # type: ignore[arg-type]
        seen.append((tuple(kwargs["selectors"]), kwargs["limits"].wall_time))  # type: ignore[arg-type, attr-defined]
        return run

    monkeypatch.setattr(CoderUjbRunner, "_run_tests", spy)
    ctx = _ctx(ujb_env_root, tmp_path)
    runner = CoderUjbRunner()
    try:
        done = runner.run(task, sample, ctx)
        spec = task.ujb
        assert spec is not None
        keys = [runner._envs[(spec.project, f"{spec.bug_id}{v}")] for v in versions_for(spec)]
        kept = [json.loads(runner.baseline_file(k, ctx).read_text())
                for k in keys if not isinstance(k, str)]
    finally:
        runner.close()
    assert done.verdict is Verdict.PASSED, done.detail
    assert kept and all(k["format"] == BASELINE_FORMAT and k["wall_time"] > 0 for k in kept)
    named, suite = seen[-2], seen[-1]
    assert named[1] == 20.0  # the sample's own tests: its limit
    assert named[0] == tuple(spec.test_methods)
    allowed = {20.0 + SUITE_FACTOR * k["wall_time"] for k in kept}
    assert suite[1] in allowed and suite[1] > 20.0


def test_defects4j_executor_gives_the_suite_the_same_time(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    tasks = [t for t in load_benchmark("mini-coderujb") if t.ujb is not None
             and t.ujb.kind is UjbKind.FCG]
    spec = tasks[0].ujb
    assert spec is not None
    walls: list[tuple[str | None, float | None]] = []

    def fake_test(self: Defects4JExecutor, work: Path, ctx: RunContext, *, test: str | None,
                  wall: float | None = None) -> TestRun:
        walls.append((test, wall))
        return TestRun(status=Verdict.PASSED, tests=1)

    monkeypatch.setattr(Defects4JExecutor, "_test", fake_test)
    monkeypatch.setattr(Defects4JExecutor, "_baseline",
                        lambda self, project, version, ctx: Baseline(failing=(), wall_time=30.0))
    ctx = RunContext(sandbox=get_sandbox("rlimit"), limits=Limits(wall_time=10.0),
                     work_root=tmp_path, env_root=tmp_path)
    done = Defects4JExecutor()._method(spec, tmp_path, ctx, {"task_id": tasks[0].task_id,
                                                             "sample_index": 0})
    assert done.verdict is Verdict.PASSED
    assert walls[:-1] == [(t, None) for t in spec.test_methods]  # the sample's limit
    assert walls[-1] == (None, 100.0)


def test_defects4j_executor_measures_a_baseline_kept_without_its_time_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    kept = tmp_path / "defects4j" / "Lang-1f.failing.json"
    kept.parent.mkdir()
    kept.write_text(json.dumps({"failing": ["a.B::c"]}))
    measured: list[str] = []

    def fake_test(self: Defects4JExecutor, work: Path, ctx: RunContext, *, test: str | None,
                  wall: float | None = None) -> TestRun:
        return TestRun(status=Verdict.FAILED, tests=5, failed=("a.B::c",), wall_time=12.0)

    monkeypatch.setattr(Defects4JExecutor, "_test", fake_test)
    (tmp_path / "tree-src").mkdir()
    monkeypatch.setattr(Defects4JExecutor, "_checkout",
                        lambda self, project, version, ctx: measured.append(version)
                        or tmp_path / "tree-src")
    ctx = RunContext(sandbox=get_sandbox("rlimit"), limits=Limits(wall_time=10.0),
                     work_root=tmp_path, env_root=tmp_path)
    executor = Defects4JExecutor()
    assert executor._baseline("Lang", "1f", ctx) == Baseline(failing=("a.B::c",), wall_time=12.0)
    assert measured == ["1f"]
    assert json.loads(kept.read_text()) == {"failing": ["a.B::c"], "wall_time": 12.0}
    # Kept with its time, it is read, not measured again.
    assert Defects4JExecutor()._baseline("Lang", "1f", ctx).wall_time == 12.0
    assert measured == ["1f"]
