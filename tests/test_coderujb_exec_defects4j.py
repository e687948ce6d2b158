"""The Defects4J executor: reading what ``defects4j`` writes, from recorded outputs in its
real formats (tests/data/defects4j), and the one line a user gets without it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codereval.errors import UserError
from codereval.families.coderujb.defects4j import (
    D4J_MISSING,
    Defects4JExecutor,
    Defects4JOutputError,
    cobertura_counts,
    d4j_test_run,
    parse_coverage_summary,
    parse_failing_tests,
    parse_test_summary,
)
from codereval.model import Verdict
from codereval.runners.base import RunContext
from codereval.sandbox import get_sandbox
from codereval.sandbox.base import ExecResult, Limits

DATA = Path(__file__).parent / "data" / "defects4j"


def _read(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def test_failing_tests_file_names_methods_and_classes_with_their_reasons() -> None:
    found = parse_failing_tests(_read("failing_tests"))
    assert [f.name for f in found] == [
        "org.apache.commons.lang3.math.NumberUtilsTest::TestLang747",
        "org.apache.commons.lang3.StringUtilsTest::testAbbreviate",
        "org.apache.commons.lang3.time.FastDateFormatTest",
    ]
    assert found[0].reason == 'java.lang.NumberFormatException: For input string: "80000000"'
    assert [f.assertion for f in found] == [False, True, False]


def test_failing_tests_file_ignores_stack_frames_and_blank_lines() -> None:
    assert parse_failing_tests("") == []
    assert parse_failing_tests("\tat a.B.c(B.java:1)\n\n") == []


def test_test_summary_lists_the_failing_tests() -> None:
    assert parse_test_summary(_read("test.stdout")) == (
        "org.apache.commons.lang3.time.FastDateFormatTest",
        "org.apache.commons.lang3.math.NumberUtilsTest::TestLang747",
        "org.apache.commons.lang3.StringUtilsTest::testAbbreviate",
    )
    assert parse_test_summary(_read("test-passing.stdout")) == ()


def test_test_summary_that_does_not_add_up_is_an_error() -> None:
    with pytest.raises(Defects4JOutputError, match="said 2 failing tests but listed 1"):
        parse_test_summary("Failing tests: 2\n  - a.B::c\n")
    with pytest.raises(Defects4JOutputError, match="no 'Failing tests: N' line"):
        parse_test_summary("Running ant (run.dev.tests)... FAIL\n")


def test_coverage_summary_lines() -> None:
    summary = parse_coverage_summary(_read("coverage.stdout"))
    assert (summary.lines_total, summary.lines_covered) == (1245, 1016)
    assert (summary.conditions_total, summary.conditions_covered) == (830, 702)
    assert (summary.line_coverage, summary.condition_coverage) == (81.6, 84.6)


def test_coverage_summary_without_its_lines_is_an_error() -> None:
    text = _read("coverage.stdout").replace("Condition coverage", "Something else")
    with pytest.raises(Defects4JOutputError, match="no 'Condition coverage:' line"):
        parse_coverage_summary(text)


def test_cobertura_counts_the_class_and_its_nested_classes_only() -> None:
    counts = cobertura_counts(_read("coverage.xml"),
                              ["org.apache.commons.lang3.math.NumberUtils"])
    # NumberUtils: 6 lines (4 hit), conditions 2/2 + 0/4; NumberUtils$1: 1 line hit, 1/2.
    # Fraction (2 lines, none hit) is not asked for.
    assert (counts.lines_covered, counts.lines_total) == (5, 7)
    assert (counts.conditions_covered, counts.conditions_total) == (3, 8)
    both = cobertura_counts(_read("coverage.xml"), ["org.apache.commons.lang3.math.NumberUtils",
                                                    "org.apache.commons.lang3.math.Fraction"])
    # The same totals as the report's own header (lines-valid 9, branches-valid 8).
    assert (both.lines_covered, both.lines_total, both.conditions_covered,
            both.conditions_total) == (5, 9, 3, 8)


def test_cobertura_without_the_class_is_an_error() -> None:
    with pytest.raises(Defects4JOutputError, match=r"has no class org\.example\.Missing"):
        cobertura_counts(_read("coverage.xml"), ["org.example.Missing"])


def _result(stdout: str, *, exit_code: int = 0, timed_out: bool = False) -> ExecResult:
    return ExecResult(exit_code=exit_code, signal=None, wall_time=1.0, cpu_time=1.0,
                      stdout=stdout.encode(), stderr=b"", timed_out=timed_out,
                      isolation="bwrap")


def test_a_d4j_test_run_defects4j_output() -> None:
    run = d4j_test_run(_result(_read("test.stdout")), _read("failing_tests"), what="test")
    # An error that is not an assertion is among them: a runtime error, as our engine says.
    assert run.status is Verdict.RUNTIME_ERROR
    assert len(run.failed) == 3
    passing = d4j_test_run(_result(_read("test-passing.stdout")), "", what="test", ran=2294)
    assert passing.status is Verdict.PASSED and passing.failed == ()
    assert passing.tests == 2294  # the lines of the all_tests file it wrote
    assertion_only = (
        "--- org.apache.commons.lang3.StringUtilsTest::testAbbreviate\n"
        "junit.framework.AssertionFailedError: expected:<abc[def]> but was:<abc[...]>\n"
        "\tat junit.framework.Assert.fail(Assert.java:57)\n")
    only_assert = d4j_test_run(
        _result("Failing tests: 1\n  - org.apache.commons.lang3.StringUtilsTest::testAbbreviate\n"),
        assertion_only, what="test")
    assert only_assert.status is Verdict.FAILED
    timed = d4j_test_run(_result("", timed_out=True), "", what="defects4j test")
    assert timed.status is Verdict.TIMEOUT
    broken = d4j_test_run(_result("", exit_code=1), "", what="defects4j test")
    assert broken.status is Verdict.INFRA_ERROR


def test_without_defects4j_one_line_says_how_to_install(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = RunContext(sandbox=get_sandbox("rlimit"), limits=Limits(), work_root=tmp_path,
                     env_root=tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing named defects4j on it
    executor = Defects4JExecutor()
    assert executor.missing_toolchain() == D4J_MISSING
    with pytest.raises(UserError) as raised:
        executor.prepare([], ctx)
    line = raised.value.one_line()
    assert "\n" not in line and "defects4j is not on PATH" in line
    assert "https://github.com/rjust/defects4j" in line and "init.sh" in line
    assert os.environ["PATH"] == str(tmp_path)
