"""The Java tools (compiler service, test harness) build themselves on first use.

An installed wheel ships their sources, not their classes, and nobody runs
``python -m codereval.java.build`` after ``pip install``: the first compile or run builds them
into the cache, once.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from codereval.java import build
from codereval.java.toolchain import missing_toolchain

pytestmark = pytest.mark.skipif(missing_toolchain() is not None, reason="no JDK here")


def _built(home: Path) -> list[Path]:
    return sorted((home / "java-tools").glob("*/ok"))


def test_the_first_compile_builds_the_tools_into_an_empty_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codereval.java.compiler import WarmJavac

    home = tmp_path / "home"
    monkeypatch.setenv("CODEREVAL_HOME", str(home))
    assert _built(home) == []
    compiler = WarmJavac(pool_size=1)
    try:
        result = compiler.compile(
            {"demo/Hello.java": "package demo; public class Hello { int one() { return 1; } }"},
            classpath=[],
            out_dir=tmp_path / "classes",
        )
    finally:
        compiler.close()
    assert result.ok, result.diagnostics
    assert (tmp_path / "classes" / "demo" / "Hello.class").is_file()
    (ok,) = _built(home)
    tools = ok.parent
    assert (tools / "service" / "codereval" / "service" / "CompileServer.class").is_file()
    assert (tools / "harness" / "codereval" / "harness" / "RunTest.class").is_file()


def test_built_tools_are_reused_and_rebuilt_only_when_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = build.ensure_built(root=tmp_path)
    assert first.service.is_dir() and first.harness.is_dir()
    calls: list[list[str]] = []
    real_run = subprocess.run

    def counting_run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        calls.append(argv)
        return real_run(argv, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(build.subprocess, "run", counting_run)
    assert build.ensure_built(root=tmp_path) == first
    assert calls == []  # found, not compiled again
    # A cache whose build vanished (or never finished: no "ok") is built again, in place.
    (tmp_path / "java-tools" / first.key / "ok").unlink()
    again = build.ensure_built(root=tmp_path)
    assert again == first and len(calls) == len(build.PARTS)
    assert (tmp_path / "java-tools" / first.key / "ok").is_file()


def test_the_harness_concatenates_strings_without_invokedynamic(tmp_path: Path) -> None:
    # An indy concatenation spins the JDK's method-handle classes in every test JVM that
    # reaches it (the marker line does): about 10 ms of each Java sample's start.
    tools = build.ensure_built(root=tmp_path)
    classes = sorted(tools.harness.rglob("*.class"))
    assert classes
    for path in classes:
        assert b"makeConcatWithConstants" not in path.read_bytes(), path.name
