"""``ast.parse`` that threads may call at the same time.

CPython up to 3.12 keeps the recursion counter it uses while turning a parsed tree into Python
objects in the interpreter's AST state, which all threads share. When one thread's conversion
lets another thread run (a garbage collection can), the two count on one counter and the first
fails with ``SystemError: AST constructor recursion depth mismatch`` — reported against many
threaded programs, e.g. python/cpython#106905, pytest-dev/pytest#10763. The engine parses
samples, tests and project files in every worker thread (a gold run on CI lost a reference to
it), so every parse of ours goes through one lock. A parse takes microseconds to milliseconds;
the lock is never held while anything else runs.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, one thread at a time."""
    with _LOCK:
        return ast.parse(source, filename=filename)


def literal_eval(text: str) -> object:
    """``ast.literal_eval(text)`` (which parses), one thread at a time."""
    with _LOCK:
        return ast.literal_eval(text)
