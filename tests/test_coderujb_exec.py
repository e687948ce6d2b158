"""CoderUJB samples on our Java engine, end to end on the mini benchmark (mini-coderujb).

Every built-in sample is evaluated once (each says what it is meant to be in its label); the
versions of the three bugs are built once per session; the tests read the outcomes.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from live_processes import live_pids_with

from codereval.benchmarks import builtin_dir, load_benchmark
from codereval.environments.java import source_hash
from codereval.families.coderujb.runner import DD_NOT_RUN, CoderUjbRunner
from codereval.families.coderujb.splice import NO_TEST_METHOD
from codereval.java.toolchain import missing_toolchain
from codereval.model import Outcome, Sample, Task, UjbKind, Verdict
from codereval.runners import runner_name_for
from codereval.runners.base import RunContext
from codereval.sandbox import get_sandbox
from codereval.sandbox.base import Limits

# The fork bombs run here sleep for a duration no other run uses (BOMB_SLEEP), so the check
# that none outlived its sample counts only this session's; the group keeps this file's
# session fixture to one worker (tests/conftest.py fails the tests if xdist cannot group).
pytestmark = [pytest.mark.skipif(missing_toolchain() is not None, reason="no JDK"),
              pytest.mark.xdist_group("mini-coderujb-fork-bombs")]

MINI = builtin_dir("mini_coderujb")
# A JUnit run takes about a second; the wall time leaves a loaded host room (at 8 s one stalled
# three of them into timeouts while the fork bomb ran beside them). The endless samples pay it.
LIMITS = Limits(wall_time=20.0, memory_mb=768)
ESCAPED = Path("/var/tmp/codereval-ujb-escaped")
# The built-in bombs start `sleep 6071`; here each starts `sleep 6071<pid>`.
BOMB_SLEEP = f"6071{os.getpid()}"

# What each built-in sample must come to (label -> verdict), whatever task it belongs to.
EXPECTED: dict[str, set[Verdict]] = {
    "reference": {Verdict.PASSED},
    "generated-trigger": {Verdict.PASSED},
    "partial-null-only": {Verdict.PASSED},
    "partial-inside": {Verdict.PASSED},
    "wrong-boundary": {Verdict.FAILED},
    "wrong-first-element": {Verdict.FAILED},
    "wrong-assertion": {Verdict.FAILED},
    "breaks-other-tests": {Verdict.FAILED},
    "covers-nothing": {Verdict.FAILED},
    "passes-on-both": {Verdict.FAILED},
    "fails-on-both": {Verdict.FAILED},
    "unchanged-buggy": {Verdict.FAILED, Verdict.RUNTIME_ERROR},
    "overfitting": {Verdict.FAILED},
    "half-fix": {Verdict.FAILED},
    "syntax-error": {Verdict.SYNTAX_ERROR},
    "compile-error": {Verdict.COMPILE_ERROR},
    "no-test-annotation": {Verdict.NO_CODE},
    "hostile-exit": {Verdict.RUNTIME_ERROR},
    "hostile-loop": {Verdict.TIMEOUT},
    "hostile-write-outside": {Verdict.RUNTIME_ERROR},
    # Spawning until the process limit: out of time, or the JVM cannot start a thread.
    "hostile-fork-bomb": {Verdict.TIMEOUT, Verdict.RUNTIME_ERROR},
    "changes-return-type": {Verdict.PASSED},
    "breaks-callers": {Verdict.COMPILE_ERROR},
}


@pytest.fixture(scope="session")
def tasks() -> dict[str, Task]:
    return {t.task_id: t for t in load_benchmark("mini-coderujb")}


@pytest.fixture(scope="session")
def labelled() -> list[tuple[Sample, str]]:
    rows = []
    for line in (MINI / "samples.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        code = row["code"]
        if row["label"] == "hostile-fork-bomb":
            assert '"sleep", "6071"' in code
            code = code.replace('"sleep", "6071"', f'"sleep", "{BOMB_SLEEP}"')
        rows.append((Sample(task_id=row["task_id"], index=row["index"], code=code,
                            raw=code, model=row["model"]), row["label"]))
    return rows


def _ctx(env_root: Path, work: Path) -> RunContext:
    return RunContext(sandbox=get_sandbox("auto"), limits=LIMITS, work_root=work,
                      env_root=env_root, projects_dir=MINI / "projects.toml")


def references() -> dict[UjbKind, tuple[Task, Sample]]:
    """The first built-in reference sample of each kind, with its task."""
    tasks = {t.task_id: t for t in load_benchmark("mini-coderujb")}
    found: dict[UjbKind, tuple[Task, Sample]] = {}
    for row in map(json.loads, (MINI / "samples.jsonl").read_text(encoding="utf-8").splitlines()):
        task = tasks[row["task_id"]]
        if row["label"] == "reference" and task.ujb is not None:
            found.setdefault(task.ujb.kind, (task, Sample(task_id=task.task_id, index=0,
                                                          code=row["code"], raw=row["code"])))
    return found


@pytest.fixture(scope="session")
def outcomes(tasks: dict[str, Task], labelled: list[tuple[Sample, str]], ujb_env_root: Path,
             tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Outcome]:
    ctx = _ctx(ujb_env_root, tmp_path_factory.mktemp("ujb-work"))
    ESCAPED.unlink(missing_ok=True)
    runner = CoderUjbRunner()
    # Defect detection has its own runner (coderujb-dd): nothing of it runs here.
    labelled = [(s, label) for s, label in labelled if runner_name_for(tasks[s.task_id])
                == "coderujb"]
    try:
        assert runner.prepare([t for t in tasks.values() if runner_name_for(t) == "coderujb"],
                              ctx) == {}
        envs = sorted(p for p in (ujb_env_root / "envs").iterdir() if (p / "env.json").is_file())
        before = {p.name: source_hash(p) for p in envs}
        with ThreadPoolExecutor(max_workers=2) as pool:
            found = list(pool.map(lambda s: runner.run(tasks[s[0].task_id], s[0], ctx), labelled))
        assert {p.name: source_hash(p) for p in envs} == before, "a sample changed a version"
    finally:
        runner.close()
    return {(s.task_id, label): o for (s, label), o in zip(labelled, found, strict=True)}


def test_every_task_kind_is_in_the_mini_benchmark(tasks: dict[str, Task]) -> None:
    kinds = {t.ujb.kind for t in tasks.values() if t.ujb is not None}
    assert kinds == set(UjbKind)
    assert {t.ujb.bug_id for t in tasks.values() if t.ujb is not None} == {"1", "2", "3"}
    assert {t.task_id: runner_name_for(t) for t in tasks.values()} == {
        t.task_id: "coderujb-dd" if t.task_id.startswith("dd-") else "coderujb"
        for t in tasks.values()}


def test_every_sample_gets_the_verdict_it_was_written_for(
    outcomes: dict[tuple[str, str], Outcome],
) -> None:
    wrong = {key: (o.verdict.value, o.detail[:200]) for key, o in outcomes.items()
             if o.verdict not in EXPECTED[key[1]]}
    assert wrong == {}


def test_fcg_reference_passes_named_tests_and_suite(
    outcomes: dict[tuple[str, str], Outcome],
) -> None:
    done = outcomes[("fcg-langlite-1-abbreviate", "reference")]
    assert done.ujb is not None
    assert (done.ujb.syntax_ok, done.ujb.compiled, done.ujb.passed_fixed) == (True, True, True)
    assert "the suite (18 tests) fails none" in done.detail


def test_fcg_sample_that_breaks_other_tests_fails_on_the_suite(
    outcomes: dict[tuple[str, str], Outcome],
) -> None:
    done = outcomes[("fcg-langlite-3-overlaps", "breaks-other-tests")]
    assert done.ujb is not None and done.ujb.passed_fixed is True  # its named test passes
    assert done.verdict is Verdict.FAILED
    assert ("org.langlite.IntRangeTest::testIntersectionWith, "
            "org.langlite.IntRangeTest::testOverlapsTouching") in done.detail


def test_a_sample_that_changes_a_signature_runs_with_the_project_compiled_again(
    outcomes: dict[tuple[str, str], Outcome],
) -> None:
    # Lang-29's fix turns a float method into an int one. Classes and tests compiled against
    # the old signature would stop with NoSuchMethodError; Defects4J compiles them again.
    # max() turned long: NumberUtilsTest and Stats (a main class that calls it) compile again
    # and pass, StatsTest included.
    wider = outcomes[("fcg-langlite-2-max", "changes-return-type")]
    assert wider.verdict is Verdict.PASSED, wider.detail
    assert "the suite (18 tests) fails none" in wider.detail
    assert "NoSuchMethodError" not in (wider.stderr_tail or "")
    # max() renamed: what calls it no longer compiles, and the verdict says so.
    renamed = outcomes[("fcg-langlite-2-max", "breaks-callers")]
    assert renamed.verdict is Verdict.COMPILE_ERROR
    assert "org.langlite.math.NumberUtils" in renamed.detail
    assert "no longer compile" in renamed.detail and "cannot find symbol" in renamed.detail
    assert renamed.ujb is not None
    assert (renamed.ujb.syntax_ok, renamed.ujb.compiled) == (True, False)


def test_syntax_and_compile_errors_are_told_apart(outcomes: dict[tuple[str, str], Outcome]) -> None:
    syntax = outcomes[("fcg-langlite-1-abbreviate", "syntax-error")].ujb
    compiled = outcomes[("fcg-langlite-1-abbreviate", "compile-error")].ujb
    assert syntax is not None and (syntax.syntax_ok, syntax.compiled) == (False, False)
    assert compiled is not None and (compiled.syntax_ok, compiled.compiled) == (True, False)


def test_apr_records_failing_tests_before_and_after(
    outcomes: dict[tuple[str, str], Outcome],
) -> None:
    exact = "org.langlite.StringUtilsTest::testAbbreviateExactWidth"
    fixed = outcomes[("apr-langlite-1-abbreviate", "reference")].ujb
    assert fixed is not None
    assert fixed.tests_failed_before == (exact,)
    assert fixed.tests_failed_after == ()
    unchanged = outcomes[("apr-langlite-1-abbreviate", "unchanged-buggy")].ujb
    assert unchanged is not None and unchanged.tests_failed_after == (exact,)
    overfit = outcomes[("apr-langlite-1-abbreviate", "overfitting")]
    assert overfit.verdict is Verdict.FAILED and overfit.ujb is not None
    assert overfit.ujb.passed_fixed is True  # the bug's own test passes ...
    assert set(overfit.ujb.tests_failed_after or ()) == {  # ... and two others break
        "org.langlite.StringUtilsTest::testAbbreviate",
        "org.langlite.StringUtilsTest::testAbbreviateTooNarrow"}
    # Bug 3 breaks two tests; fixing half of it leaves one failing.
    half = outcomes[("apr-langlite-3-overlaps", "half-fix")].ujb
    assert half is not None
    assert set(half.tests_failed_before or ()) == {
        "org.langlite.IntRangeTest::testIntersectionWith",
        "org.langlite.IntRangeTest::testOverlapsTouching"}
    assert half.tests_failed_after == ("org.langlite.IntRangeTest::testOverlapsTouching",)


def _coverage(outcome: Outcome) -> tuple[int | None, int | None, int | None, int | None]:
    assert outcome.ujb is not None
    m = outcome.ujb
    return (m.lines_covered, m.lines_total, m.branches_covered, m.branches_total)


def test_ctg_coverage_counts_what_the_test_really_runs(
    outcomes: dict[tuple[str, str], Outcome],
) -> None:
    # NumberUtils, as JaCoCo counts it (its private empty constructor is filtered out):
    # toInt 5 lines (if, return, return parseInt, catch, return) and 2 branches; isDigits 6
    # lines and 8 branches (null || empty, the loop, the digit test); max 7 lines, 8 branches.
    total = (18, 18)
    full = outcomes[("ctg-langlite-2-toInt", "reference")]
    # null, " 12 " and "twelve": every line of toInt, both sides of its null check.
    assert _coverage(full) == (5, total[0], 2, total[1])
    null_only = outcomes[("ctg-langlite-2-toInt", "partial-null-only")]
    assert _coverage(null_only) == (2, total[0], 1, total[1])
    assert full.ujb is not None and full.ujb.line_coverage == pytest.approx(5 / 18)
    # IntRange: 28 lines, 26 branches. new IntRange(2, 4) runs the constructor's 4 lines; fit
    # below, above and inside runs its 5 lines and 4 branches; inside only 3 lines, 2 branches.
    assert _coverage(outcomes[("ctg-langlite-3-fit", "reference")]) == (9, 28, 4, 26)
    assert _coverage(outcomes[("ctg-langlite-3-fit", "partial-inside")]) == (7, 28, 2, 26)


def test_ctg_test_that_covers_nothing_does_not_pass(
    outcomes: dict[tuple[str, str], Outcome],
) -> None:
    done = outcomes[("ctg-langlite-2-toInt", "covers-nothing")]
    assert done.ujb is not None and done.ujb.passed_fixed is True
    assert _coverage(done) == (0, 18, 0, 18)
    assert done.verdict is Verdict.FAILED


def test_ctg_failing_test_records_no_coverage(outcomes: dict[tuple[str, str], Outcome]) -> None:
    done = outcomes[("ctg-langlite-2-toInt", "wrong-assertion")]
    assert done.ujb is not None and done.ujb.passed_fixed is False
    assert done.ujb.lines_covered is None


@pytest.mark.parametrize(("task_id", "label"), [
    ("itg-langlite-1-abbreviate", "reference"),
    ("itg-langlite-2-isDigits", "reference"),
    ("itg-langlite-2-isDigits", "generated-trigger"),
    ("itg-langlite-3-overlaps", "reference"),
])
def test_itg_test_that_reveals_the_bug_triggers(
    outcomes: dict[tuple[str, str], Outcome], task_id: str, label: str,
) -> None:
    done = outcomes[(task_id, label)]
    assert done.ujb is not None
    assert (done.ujb.passed_fixed, done.ujb.failed_buggy, done.ujb.triggers) == (True, True, True)
    assert done.ujb.lines_covered and done.ujb.lines_covered > 0


def test_itg_tests_that_do_not_reveal_the_bug_do_not_trigger(
    outcomes: dict[tuple[str, str], Outcome],
) -> None:
    both = outcomes[("itg-langlite-1-abbreviate", "passes-on-both")]
    assert both.ujb is not None
    assert (both.ujb.passed_fixed, both.ujb.failed_buggy, both.ujb.triggers) == (True, False, False)
    assert "does not reveal the bug" in both.detail
    wrong = outcomes[("itg-langlite-1-abbreviate", "fails-on-both")]
    assert wrong.ujb is not None
    assert (wrong.ujb.passed_fixed, wrong.ujb.failed_buggy, wrong.ujb.triggers) == (
        False, True, False)


def test_hostile_samples_cost_only_their_own_verdict(
    outcomes: dict[tuple[str, str], Outcome],
) -> None:
    assert not ESCAPED.exists(), "a sample wrote outside its sandbox"
    survivors = live_pids_with(f"sleep {BOMB_SLEEP}", exact=True)
    assert survivors == [], f"the fork bomb's processes outlived their sample: {survivors}"
    loop = outcomes[("fcg-langlite-1-abbreviate", "hostile-loop")]
    assert loop.wall_time is not None and loop.wall_time < LIMITS.wall_time + 5
    # The samples next to them in the same task still pass.
    assert outcomes[("fcg-langlite-2-max", "reference")].verdict is Verdict.PASSED
    assert "System.exit" in outcomes[("ctg-langlite-2-toInt", "hostile-exit")].detail


def test_defect_detection_given_to_this_runner_is_not_run(
    tasks: dict[str, Task], tmp_path: Path,
) -> None:
    dd = tasks["dd-langlite-1-abbreviate"]
    runner = CoderUjbRunner()
    done = runner.run(dd, Sample(task_id=dd.task_id, code="Yes"), _ctx(tmp_path, tmp_path))
    assert done.verdict is Verdict.INFRA_ERROR and done.detail == DD_NOT_RUN


def test_no_test_method_in_a_generated_test_is_no_code(
    outcomes: dict[tuple[str, str], Outcome],
) -> None:
    done = outcomes[("ctg-langlite-2-toInt", "no-test-annotation")]
    assert done.verdict is Verdict.NO_CODE and done.detail == NO_TEST_METHOD


@pytest.mark.slow
def test_reference_validation_through_the_cli_says_ok_for_every_run_task(
    tmp_path: Path, run_cli,  # type: ignore[no-untyped-def]
) -> None:
    run_dir = tmp_path / "gold"
    done = run_cli("evaluate", "--benchmark", "mini-coderujb", "--reference", "--repeat", "1",
                   "--timeout", "20", "--out", run_dir)
    assert done.exit_code == 0, done
    status = {row["task_id"]: row["status"] for row in map(
        json.loads, (run_dir / "gold.jsonl").read_text(encoding="utf-8").splitlines())}
    # Defect detection too: the right answer is its reference, the opposite one its probe.
    assert status == {t: "ok" for t in status} and len(status) == 13
    # The outcomes the CLI wrote carry the measures (the reference test's coverage here).
    written = [json.loads(line) for line in
               (run_dir / "outcomes.jsonl").read_text(encoding="utf-8").splitlines()]
    ctg = next(o for o in written if o["task_id"] == "ctg-langlite-2-toInt"
               and o["verdict"] == "passed")
    assert (ctg["ujb"]["lines_covered"], ctg["ujb"]["lines_total"]) == (5, 18)
    summary = "gold validation: 13 ok, 0 broken, 0 flaky, 0 weak"
    assert summary in done.stderr + done.stdout
