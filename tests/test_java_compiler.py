"""The warm compiler service compiles like javac: same verdicts, same diagnostics, any thread."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from codereval.java.compiler import CompileResult, PlainJavac, WarmJavac
from codereval.java.toolchain import missing_toolchain

pytestmark = pytest.mark.skipif(missing_toolchain() is not None, reason="no JDK")

GOOD = (
    "package demo;\n\npublic class Calc {\n"
    "    public static int twice(int x) {\n        return 2 * x;\n    }\n}\n"
)

# One broken body per common mistake in generated code.
BROKEN = {
    "unknown symbol": "return y;",
    "type mismatch": 'return "two";',
    "missing semicolon": "return 2 * x",
    "missing return": "int y = x;",
    "unreachable": "return x; x++;",
    "wrong arguments": "return Math.abs(x, x);",
    "unclosed brace": "if (x > 0) { return x;",
    "unicode": 'String s = "héllo"; return s.length() + undefinedThing;',
    "two errors": "int a = b; return c;",
}


def _source(body: str) -> dict[str, str]:
    return {"demo/Calc.java": GOOD.replace("return 2 * x;", body)}


@pytest.fixture(scope="module")
def warm() -> Iterator[WarmJavac]:
    compiler = WarmJavac(pool_size=2)
    yield compiler
    compiler.close()


@pytest.mark.slow
def test_warm_and_javac_agree_on_broken_samples(warm: WarmJavac, tmp_path: Path) -> None:
    plain = PlainJavac()

    def javac(index: int) -> CompileResult:
        body = list(BROKEN.values())[index]
        return plain.compile(_source(body), classpath=[], out_dir=tmp_path / f"p{index}")

    with ThreadPoolExecutor(max_workers=2) as pool:
        expected = list(pool.map(javac, range(len(BROKEN))))
    for index, (what, body) in enumerate(BROKEN.items()):
        ours = warm.compile(_source(body), classpath=[], out_dir=tmp_path / f"w{index}")
        theirs = expected[index]
        assert not ours.ok and not theirs.ok, what
        assert ours.diagnostics.splitlines()[0] == theirs.diagnostics.splitlines()[0], what
        assert ours.diagnostics == theirs.diagnostics, what
        assert ours.diagnostics.startswith("demo/Calc.java:"), what
        assert ": error: " in ours.diagnostics.splitlines()[0]
        # javac's layout: the message, the source line, then a caret under the column.
        assert ours.diagnostics.splitlines()[2].strip() == "^", what


def test_a_good_source_compiles_into_the_private_directory(warm: WarmJavac, tmp_path: Path) -> None:
    result = warm.compile(_source("return 2 * x;"), classpath=[], out_dir=tmp_path / "out")
    assert result.ok, result.diagnostics
    assert result.diagnostics == ""
    assert (tmp_path / "out" / "demo" / "Calc.class").is_file()


def test_classes_on_the_classpath_are_found(warm: WarmJavac, tmp_path: Path) -> None:
    assert warm.compile(_source("return 2 * x;"), classpath=[], out_dir=tmp_path / "base").ok
    user = {"demo/User.java": "package demo;\nclass User { int f() { return Calc.twice(3); } }\n"}
    assert warm.compile(user, classpath=[tmp_path / "base"], out_dir=tmp_path / "u1").ok
    missing = warm.compile(user, classpath=[], out_dir=tmp_path / "u2")
    assert not missing.ok and "cannot find symbol" in missing.diagnostics


def test_concurrent_compiles_from_many_threads(warm: WarmJavac, tmp_path: Path) -> None:
    def one(i: int) -> tuple[int, bool, str]:
        body = "return 2 * x;" if i % 2 else f"return undefined{i};"
        result = warm.compile(_source(body), classpath=[], out_dir=tmp_path / f"c{i}")
        return i, result.ok, result.diagnostics

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(one, range(12)))
    for i, ok, diagnostics in results:
        assert ok == bool(i % 2)
        if not ok:
            # Each answer belongs to its own request, never to a neighbour's.
            assert f"undefined{i}" in diagnostics


def test_a_dead_service_is_restarted(tmp_path: Path) -> None:
    compiler = WarmJavac(pool_size=1)
    try:
        assert compiler.compile(_source("return 2 * x;"), classpath=[], out_dir=tmp_path / "a").ok
        for service in list(compiler._all):
            service.process.kill()
            service.process.wait()
        again = compiler.compile(_source("return y;"), classpath=[], out_dir=tmp_path / "b")
        assert not again.ok and "cannot find symbol" in again.diagnostics
        assert again.backend == "warm"
        assert compiler.restarts == 1
    finally:
        compiler.close()
