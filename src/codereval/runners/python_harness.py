"""The wrapper that runs one Python test inside the sandbox and reports how it ended.

This file is copied into each run's scratch directory and executed by the project's interpreter
(which may be older than ours: keep it to Python 3.6 syntax and the standard library). It is
never imported by codereval itself.

Order matters: the per-run marker is read from stdin and stdin is closed *before* any project
or sample code is imported (this file imports only os and sys before that: a project file named
like a module of the standard library would be found first on the path), and the marker is
printed (on a private copy of stdout) only after the test returned.

What a sample could reach by name, it could call or replace: the marker, and the functions that
reveal it, live only in locals of ``_main`` (its frame) and in the cells of two closures, never
in a module's namespace (the wrapper runs as ``__main__``, which a test run by pytest sees as
``sys.modules["__main__"]``). Whatever decides the verdict once sample code has run is captured
in locals before it runs. Python's own introspection (``sys._getframe().f_back.f_locals``,
``gc.get_objects()``) still reaches any object of the process: that is reading the process's
memory, which no harness running in the same process can prevent (see
tests/test_marker_secrecy_projects.py).
"""

# ruff: noqa: B905, UP031, SIM102  (runs under Python 3.6+: no zip(strict=), no f-string habits)
import os
import sys

MARKER_MAX = 512  # bytes read from stdin at most (a marker is 47 and a newline)
_SPACE = b" \t\r\n\x0b\x0c"


def _take_marker():  # type: ignore[no-untyped-def]  # (3.6-compatible: no generics)
    """Read the marker from stdin, put /dev/null in its place, and return the two closures that
    hand it out: ``announce()`` prints it on a copy of stdout, ``reveal()`` returns it.

    The plaintext is read by readv straight into a bytearray, which is zeroed once the marker
    is kept XOR-masked with a random pad: no immutable copy of it (a bytes or str object that
    cannot be wiped) exists in the process until the test has ended and it is revealed.
    """
    plain = bytearray(MARKER_MAX)
    got = 0
    while got < MARKER_MAX:
        window = memoryview(plain)[got:]
        try:
            count = os.readv(0, [window])
        except OSError:
            count = 0
        finally:
            window.release()
        if count <= 0:
            break
        got += count
        if plain.find(b"\n", got - count, got) >= 0:
            break
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    start, end = 0, got
    while start < end and plain[start] in _SPACE:
        start += 1
    while end > start and plain[end - 1] in _SPACE:
        end -= 1
    pad = os.urandom(end - start)
    masked = bytearray(end - start)
    for index in range(end - start):
        masked[index] = plain[start + index] ^ pad[index]
    for index in range(MARKER_MAX):
        plain[index] = 0
    del plain
    out_fd = os.dup(1)
    write = os.write

    # Only ever called after the test has ended: the plaintext they make may then exist.
    def announce() -> None:
        write(out_fd, b"\n" + bytes(bytearray(a ^ b for a, b in zip(masked, pad))) + b"\n")

    def reveal() -> str:
        return bytearray(a ^ b for a, b in zip(masked, pad)).decode("ascii", "replace")

    return announce, reveal


def _last_line(exc: BaseException) -> str:
    import traceback

    text = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()
    name = type(exc).__name__
    for line in text:
        if line.startswith(name):
            return line
    return text[-1] if text else name


def _origin(exc: BaseException, target: str, span: list) -> str:  # type: ignore[type-arg]
    """Where the exception was raised: 'sample' (inside the injected lines), 'test' or 'other'."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "other"
    last = frames[-1]
    if os.path.abspath(last.filename) != target:
        return "other"
    if span and span[0] <= (last.lineno or 0) <= span[1]:
        return "sample"
    return "test"


def _classify(exc: BaseException, target: str, span: list) -> dict:  # type: ignore[type-arg]
    import traceback

    origin = _origin(exc, target, span)
    detail = _last_line(exc)
    tail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:]
    if isinstance(exc, SystemExit):
        return {"status": "exit", "exc_type": "SystemExit", "detail": "SystemExit(%r) before the "
                "test finished" % (exc.code,), "origin": origin, "traceback": tail}
    if isinstance(exc, MemoryError):
        status = "memory"
    elif isinstance(exc, AssertionError):
        status = "failed"
    elif type(exc) is Exception and origin == "test":
        # The official modules' check block ends with `raise Exception("Result not True!!!")`.
        status = "failed"
    else:
        status = "error"
    return {"status": status, "exc_type": type(exc).__name__, "detail": detail,
            "origin": origin, "traceback": tail}


class _PytestCounter:
    def __init__(self) -> None:
        self.collected = 0
        self.passed = 0
        # (is it the test's own verdict (assert, pytest.fail), "Type: message") per failure
        self.failures = []  # type: list[tuple[bool, str]]

    def pytest_collection_modifyitems(self, items) -> None:  # type: ignore[no-untyped-def]
        self.collected = len(items)

    def pytest_collectreport(self, report) -> None:  # type: ignore[no-untyped-def]
        if report.failed:
            text = str(report.longrepr).strip().splitlines()
            self.failures.append((False, text[-1] if text else "collection failed"))

    def pytest_exception_interact(self, node, call, report) -> None:  # type: ignore[no-untyped-def]
        excinfo = getattr(call, "excinfo", None)
        if excinfo is None:
            return
        exc = excinfo.value
        # pytest.fail() and a missed pytest.raises raise Failed: the test's verdict, like assert.
        verdict = isinstance(exc, AssertionError) or type(exc).__name__ == "Failed"
        self.failures.append((verdict, _last_line(exc)))

    def pytest_runtest_logreport(self, report) -> None:  # type: ignore[no-untyped-def]
        if report.when == "call" and report.passed:
            self.passed += 1


def _run_pytest(target: str, root: str) -> dict:  # type: ignore[type-arg]
    try:
        import pytest
    except ImportError:
        return {"status": "infra", "detail": "pytest is not installed in the project environment "
                "(add it to the project's requirements)"}
    counter = _PytestCounter()
    code = pytest.main([target, "-q", "-p", "no:cacheprovider", "--rootdir", root],
                       plugins=[counter])
    if int(code) == 0 and counter.collected > 0 and counter.passed == counter.collected \
            and not counter.failures:
        return {"status": "passed"}
    crashes = [line for verdict, line in counter.failures if not verdict]
    if crashes:
        return {"status": "error", "exc_type": crashes[0].split(":", 1)[0], "detail": crashes[0]}
    if counter.failures:
        first = counter.failures[0][1]
        return {"status": "failed", "exc_type": first.split(":", 1)[0], "detail": first}
    return {"status": "error", "detail": "pytest exited with %s after collecting %d test(s), "
            "%d passed" % (code, counter.collected, counter.passed)}


def _run(spec: dict) -> dict:  # type: ignore[type-arg]
    import runpy

    # Taken before any sample code runs, which could replace _classify (a global of __main__)
    # or the builtin callable.
    classify, is_callable = _classify, callable
    target = spec["target"]
    span = spec.get("span") or []
    sys.argv = [target]
    sys.path.insert(0, os.path.dirname(target))
    warm = sys.modules.get("_codereval_warm")
    if warm is not None:
        # Forked from a warm worker: a file in the test's folder named like a preloaded module
        # must win, as it does in a fresh interpreter (federation/utils/django.py).
        warm.path_changed()
    try:
        if spec["mode"] == "pytest":
            return _run_pytest(target, spec["root"])
        namespace = runpy.run_path(target, run_name="__main__")
        test_func = spec.get("test_func")
        if test_func and spec.get("call_test_func") and is_callable(namespace.get(test_func)):
            if namespace[test_func]() is False:
                return {"status": "failed", "exc_type": "", "detail": "%s() returned False"
                        % test_func}
    except BaseException as exc:
        return classify(exc, target, span)
    return {"status": "passed"}


def _main() -> None:
    announce, reveal = _take_marker()  # type: ignore[no-untyped-call]
    # Imported only now that the marker is read and stdin closed, and before the test: the
    # helpers above import them again from sys.modules.
    import json
    import runpy  # noqa: F401
    import traceback  # noqa: F401

    # What runs after the test, taken before it starts (the test may patch what it can name).
    open_, dumps, exit_ = open, json.dumps, os._exit
    with open_(sys.argv[1], encoding="utf-8") as handle:
        spec = json.load(handle)
    result_path = spec["result"]
    outcome = _run(spec)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        outcome.setdefault("note", "stdout/stderr unusable at the end")
    passed = outcome.get("status") == "passed"
    if passed:
        outcome["marker"] = reveal()
    with open_(result_path, "w", encoding="utf-8") as handle:
        handle.write(dumps(outcome))
    if passed:
        announce()
        exit_(0)
    exit_(1)


if __name__ == "__main__":
    _main()
