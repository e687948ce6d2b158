"""A CoderUJB sample that is a test (CTG, ITG) compiles as the project's tests were compiled;
a sample that is code (FCG, APR) as its sources were.

Defects4J compiles a project's tests with its JUnit 4 on the classpath, and Commons Lang 2's at
Java 5 while its sources build here at 1.4: the developer's own trigger test of Lang-53 and 65
(in a `DateUtilsTest` carrying JUnit 4.11's `@FixMethodOrder`) did not compile as an ITG sample
until tests compiled so (`JavaEnvInfo.test_compile_options`, covered on a built 1.4 project in
tests/test_real_project_quirks.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_coderujb_exec import _ctx, references

from codereval.environments.java import JavaEnvInfo
from codereval.families.coderujb.runner import CoderUjbRunner
from codereval.java.toolchain import missing_toolchain
from codereval.model import UjbKind, Verdict


@pytest.mark.slow
@pytest.mark.skipif(missing_toolchain() is not None, reason="no JDK")
def test_test_samples_compile_with_the_tests_options_and_code_with_the_sources(
    ujb_env_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    chosen = references()
    compiled: list[str] = []
    real_tests, real_sources = JavaEnvInfo.test_compile_options, JavaEnvInfo.compile_options

    def as_tests(self: JavaEnvInfo) -> list[str]:
        compiled.append("tests")
        return real_tests(self)

    def as_sources(self: JavaEnvInfo) -> list[str]:
        compiled.append("sources")
        return real_sources(self)

    monkeypatch.setattr(JavaEnvInfo, "test_compile_options", as_tests)
    monkeypatch.setattr(JavaEnvInfo, "compile_options", as_sources)
    ctx = _ctx(ujb_env_root, tmp_path)
    runner = CoderUjbRunner()
    seen: dict[UjbKind, list[str]] = {}
    try:
        for kind in (UjbKind.ITG, UjbKind.CTG, UjbKind.FCG, UjbKind.APR):
            task, sample = chosen[kind]
            compiled.clear()
            done = runner.run(task, sample, ctx)
            assert done.verdict is Verdict.PASSED, (kind, done.detail)
            seen[kind] = sorted(set(compiled))
    finally:
        runner.close()
    assert "tests" in seen[UjbKind.ITG] and "tests" in seen[UjbKind.CTG]
    assert seen[UjbKind.FCG] == seen[UjbKind.APR] == ["sources"]
