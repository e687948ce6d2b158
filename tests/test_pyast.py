"""Our Python parsing is safe from several threads at once (codereval.source.pyast).

CPython up to 3.12 counts the depth of a tree being converted to Python objects on a counter
all threads share: when one thread's conversion lets another run (a garbage collection running
finalizers), ``ast.parse`` fails with "SystemError: AST constructor recursion depth mismatch".
A gold run on CI lost a reference to it.
"""

from __future__ import annotations

import ast
import gc
import re
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from codereval.source import pyast

SOURCE = "\n".join(
    f"def f{i}(a, b):\n    return [x for x in range(a) if (x + b) * {i} > 3 and (lambda y: y)(x)]"
    for i in range(200)
)


class _CyclicWithFinalizer:
    """Garbage only the cycle collector frees, running Python code when it does."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        sum(range(200))


@contextmanager
def _switchy() -> Iterator[None]:
    interval, thresholds = sys.getswitchinterval(), gc.get_threshold()
    sys.setswitchinterval(1e-6)
    gc.set_threshold(50, 1, 1)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)
        gc.set_threshold(*thresholds)


def _errors_parsing_in_threads(parse: Callable[[str], object]) -> list[str]:
    errors: list[str] = []

    def work() -> None:
        for _ in range(20):
            try:
                _garbage = [_CyclicWithFinalizer() for _ in range(200)]
                del _garbage
                parse(SOURCE)
            except SystemError as exc:
                errors.append(str(exc))
                return

    with _switchy():
        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return errors


def test_parsing_from_four_threads_under_collections_never_fails() -> None:
    assert _errors_parsing_in_threads(pyast.parse) == []
    assert isinstance(pyast.parse("x = [1]"), ast.Module)
    assert pyast.literal_eval("['a', 'b']") == ["a", "b"]


def test_no_module_of_ours_parses_python_without_the_lock() -> None:
    package = Path(pyast.__file__).parent
    direct = re.compile(r"\bast\.(parse|literal_eval)\(")
    offenders = [
        f"{path.relative_to(package)}:{number}"
        for path in sorted(package.rglob("*.py"))
        if path.name not in ("pyast.py", "warm_server.py", "python_harness.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if direct.search(line)
    ]
    assert offenders == [], "use codereval.source.pyast.parse / literal_eval"
