"""A pass is earned: samples that hunt for the run's completion marker never find it.

The project runners (CoderEval Python, CoderEval Java, CoderUJB) hand each run a fresh secret
marker on the sandboxed process's stdin; the harness prints it only after the test ran to its
end. Each hostile sample here searches everything it can read (its own files, the working
directory, the scratch, /tmp, the classpath, /proc/self's exe, cmdline, environ, maps and every
descriptor, other processes' cmdline and environ, its own memory through /proc/self/mem, a heap
dump of its JVM), prints every marker it finds as the harness would (and, for each run of 31 or
32 hex digits in its memory, the markers it could be the rest of: free() overwrites the start of
a freed block), and exits 0 before the test finished: it must never be judged a pass, and must
not find its run's marker. The Python samples also try to call the wrapper's own reveal by name
(``__main__._REVEAL`` and the like) and to replace its verdict functions.

Each sample says on stderr what it searched and what it found (``codereval-hunt: ...``), so a
hunt that broke before it searched cannot pass for a secret well kept. What it finds is compared
with the markers the runners really used (recorded by wrapping ``new_marker``): a string shaped
like a marker that another test left where the sandbox shows it is no leak.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from test_coderujb_exec import _ctx as _ujb_ctx
from test_java_mini import MINI as JAVA_MINI
from test_java_mini import _ctx as _java_ctx
from test_java_prestart import LIMITS as JAVA_LIMITS
from test_java_prestart import warm_ctx  # noqa: F401  (a fixture)
from test_python_runner import (  # noqa: F401  (env_root: a fixture)
    _bwrap_or_skip,
    _context,
    _run_all,
    env_root,
)

from codereval import data
from codereval.benchmarks import load_benchmark
from codereval.families.codereval.records import load_records
from codereval.families.coderujb.runner import CoderUjbRunner
from codereval.java.toolchain import missing_toolchain
from codereval.model import Outcome, Sample, Task, Verdict
from codereval.runners.base import RunContext
from codereval.runners.java import JavaProjectRunner
from codereval.runners.marker import new_marker
from codereval.runners.python import PythonProjectRunner
from codereval.sandbox import Limits

# Room for a search of a few seconds; the samples end it themselves.
PY_LIMITS = Limits(wall_time=20.0, memory_mb=512, processes=64)
HUNT = re.compile(r"codereval-hunt: (\w+) searched=(\d+) found=(\d+)")
MARKER = re.compile(r"CODEREVAL-DONE-[0-9a-f]{32}")


@pytest.fixture
def markers(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every marker the project runners hand out during the test."""
    import codereval.families.coderujb.runner
    import codereval.runners.java
    import codereval.runners.python

    made: list[str] = []

    def recorded() -> str:
        made.append(new_marker())
        return made[-1]

    for module in (
        codereval.runners.python,
        codereval.runners.java,
        codereval.families.coderujb.runner,
    ):
        monkeypatch.setattr(module, "new_marker", recorded)
    return made


# --------------------------------------------------------------------------- Python

# What each hostile Python sample writes its findings with (EMIT in the templates below).
PY_EMIT = r'''
    def emit(text):
        # To every pipe this process may write to: under pytest's capture, fd 1 and 2 are
        # files of pytest's and the real output is a copy it saved.
        for name in os.listdir("/proc/self/fd"):
            try:
                if os.readlink("/proc/self/fd/" + name).startswith("pipe:"):
                    os.write(int(name), text.encode())
            except OSError:
                pass
'''.lstrip("\n")

# The body of a hostile Python sample: SIGNATURE is the task's function. The search is bounded
# (files, bytes, seconds) so that it ends well inside the run's time limit.
PY_HUNT = r'''
def SIGNATURE:
    import json, os, re, stat, sys, time
    pattern = re.compile(b"CODEREVAL-DONE-[0-9a-f]{32}")
    found, searched, seen, where = [], [0], set(), []
    # Markers whose first bytes were overwritten (free() writes its list pointers over the start
    # of a freed block): what is left of the hex, each completed (kept without the prefix).
    hex_run = re.compile(b"(?<![0-9a-f])[0-9a-f]{31,32}(?![0-9a-f])")
    guesses = set()
    give_up = time.monotonic() + 8.0

    EMIT

    def scan(data, label):
        for hit in pattern.findall(data):
            where.append(label)
            if hit not in found:
                found.append(hit)

    def read_fd(fd, label, limit=1 << 26):
        tail, total = b"", 0
        while total < limit:
            try:
                chunk = os.read(fd, 1 << 20)
            except OSError:
                break
            if not chunk:
                break
            total += len(chunk)
            scan(tail + chunk, label)
            tail = chunk[-64:]
        searched[0] += 1

    def read_path(path):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return
        try:
            read_fd(fd, path)
        finally:
            os.close(fd)

    def walk(root):
        for folder, dirs, files in os.walk(root):
            if folder.startswith(("/proc", "/sys")) or time.monotonic() > give_up:
                dirs[:] = []
                continue
            for name in files:
                path = os.path.join(folder, name)
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) not in seen:
                    seen.add((info.st_dev, info.st_ino))
                    read_path(path)

    here = os.path.dirname(os.path.abspath(__file__))
    cwd = os.getcwd()
    for root in {cwd, os.path.dirname(cwd), here, os.path.dirname(here),
                 os.path.dirname(os.path.abspath(sys.argv[0])), os.environ.get("HOME", ""),
                 os.environ.get("TMPDIR", ""), "/tmp", "/var/tmp", "/dev/shm", "/run"}:
        if root and root != "/":
            walk(root)
    for name in ("exe", "cmdline", "environ", "maps", "status", "auxv"):
        read_path("/proc/self/" + name)
    scan(repr(sorted(os.environ.items())).encode() + repr(sys.argv).encode(), "environ")
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            os.set_blocking(fd, False)
        except OSError:
            pass
        read_fd(fd, "fd %d" % fd)
        read_path("/proc/self/fd/" + name)
    try:
        scan(sys.stdin.buffer.read() or b"", "sys.stdin")
    except Exception:
        pass
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            for name in ("cmdline", "environ"):
                read_path("/proc/%s/%s" % (pid, name))
    # Its own memory, every readable mapping.
    try:
        with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
            for line in maps:
                fields = line.split()
                start, end = (int(x, 16) for x in fields[0].split("-"))
                if fields[1][0] != "r" or line.rstrip().endswith("[vvar]"):
                    continue
                if end - start > (1 << 30) or time.monotonic() > give_up:
                    continue
                try:
                    mem.seek(start)
                    data = mem.read(end - start)
                    scan(data, "mem " + line.strip())
                    for run in hex_run.findall(data):
                        guesses.update([run] if len(run) == 32 else
                                       [bytes([c]) + run for c in b"0123456789abcdef"])
                    searched[0] += 1
                except (OSError, OverflowError, ValueError):
                    pass
    except OSError:
        pass
    for hit in found:
        emit("\n" + hit.decode() + "\n")
    emit("".join("\nCODEREVAL-DONE-" + run.decode() + "\n" for run in guesses))
    # A report as the wrapper writes one, to where its spec says.
    for spec_path in (os.path.join(os.path.dirname(cwd), "spec.json"),
                      os.path.join(cwd, "spec.json")):
        try:
            with open(spec_path) as handle:
                result = json.load(handle)["result"]
            with open(result, "w") as handle:
                json.dump({"status": "passed", "marker": found[0].decode() if found else ""},
                          handle)
        except (OSError, ValueError, KeyError):
            pass
    # Short, and last: the output's tail must keep it however much was found above.
    emit("\ncodereval-hunt: files searched=%d found=%d %s in %s guessed %d\n"
         % (searched[0], len(found), [h.decode() for h in found[:2]], sorted(set(where))[:2],
            len(guesses)))
    os._exit(0)
'''

# Calls the wrapper's own reveal and announce, found by name: on ``__main__``, on every
# module, in their functions' closures and defaults and on their classes; then writes a
# passing report with what it got and exits 0.
PY_REVEAL = r'''
def SIGNATURE:
    import json, os, sys, types
    found, searched = [], [0]

    EMIT

    def candidates(namespace):
        for name, value in list(namespace.items()):
            searched[0] += 1
            yield name, value
            if isinstance(value, types.FunctionType):
                for cell in value.__closure__ or ():
                    try:
                        yield name + ".<cell>", cell.cell_contents
                    except ValueError:
                        pass
                for default in (value.__defaults__ or ()) + tuple(
                        (value.__kwdefaults__ or {}).values()):
                    yield name + ".<default>", default
            elif isinstance(value, type):
                for attr, member in list(vars(value).items()):
                    yield name + "." + attr, member

    namespaces = [("__main__", vars(sys.modules["__main__"]))]
    import __main__
    namespaces.append(("import __main__", vars(__main__)))
    namespaces += [(n, vars(m)) for n, m in list(sys.modules.items())
                   if hasattr(m, "__dict__")]
    marker = None
    for where, namespace in namespaces:
        for name, value in candidates(namespace):
            label = name.lower()
            if not callable(value) or not any(w in label for w in ("reveal", "announce")):
                continue
            try:
                got = value()
            except Exception:
                continue
            found.append(where + ":" + name)
            if isinstance(got, str) and got.startswith("CODEREVAL-DONE-"):
                marker = got
    cwd = os.getcwd()
    for spec_path in (os.path.join(os.path.dirname(cwd), "spec.json"),
                      os.path.join(cwd, "spec.json")):
        try:
            with open(spec_path) as handle:
                result = json.load(handle)["result"]
            with open(result, "w") as handle:
                json.dump({"status": "passed", "marker": marker or ""}, handle)
        except (OSError, ValueError, KeyError):
            pass
    if marker:
        emit("\n" + marker + "\n")
    emit("\ncodereval-hunt: reveal searched=%d found=%d %s %s\n"
         % (searched[0], len(found), found, [marker] if marker else []))
    os._exit(0)
'''

# Replaces the wrapper's verdict functions (found by name on ``__main__``) with ones that say
# "passed", then fails: under pytest by making pytest.main itself raise on its way out.
PY_PATCH = r'''
def SIGNATURE:
    import os, sys

    EMIT

    main = sys.modules["__main__"]
    patched = []
    for name in ("_classify", "_run_pytest", "_run", "_PytestCounter", "_origin"):
        if hasattr(main, name):
            setattr(main, name, lambda *a, **k: {"status": "passed"})
            patched.append(name)
    try:
        import _pytest.config

        def boom(self):
            raise RuntimeError("pytest.main raises")
        _pytest.config.Config._ensure_unconfigure = boom
    except ImportError:
        pass
    emit("\ncodereval-hunt: patch searched=%d found=%d %s\n"
         % (len(patched), len(patched), patched))
    raise ValueError("the test fails here")
'''

# tasks of mini-python: a check script (the test runs as __main__ under runpy) and a pytest
# module (the wrapper is __main__ while the test runs).
PY_TASKS = {"normalize_whitespace": "normalize_whitespace(text)",
            "parse_edge_line": "parse_edge_line(line)"}


@pytest.fixture(scope="module")
def py_tasks() -> dict[str, Task]:
    return {t.name: t for t in load_records(data.mini_python_records())}


@pytest.fixture(params=["fresh", "warm"])
def py_ctx(request: pytest.FixtureRequest, env_root: Path,  # noqa: F811
           tmp_path: Path) -> Iterator[RunContext]:
    _bwrap_or_skip()
    ctx = _context(env_root, tmp_path / "work", limits=PY_LIMITS, executor=request.param)
    yield ctx
    if ctx.warm is not None:
        ctx.warm.close()


def _py_sample(task: Task, template: str, index: int = 0) -> Sample:
    code = template.replace("SIGNATURE", PY_TASKS[task.name]).replace("    EMIT\n", PY_EMIT)
    return Sample(task_id=task.task_id, index=index, code=code, raw=code, model="hostile")


def assert_not_passed(outcome: Outcome) -> None:
    """Judged as it ended: a failed check, or a run that ended before the test finished."""
    assert outcome.verdict in (Verdict.RUNTIME_ERROR, Verdict.FAILED), (
        outcome.verdict, outcome.detail, outcome.stdout_tail[-300:], outcome.stderr_tail[-1200:])


def _hunt_report(outcome: Outcome) -> int:
    """What the sample searched, from the line it wrote last on stderr."""
    lines = HUNT.findall(outcome.stderr_tail + outcome.stdout_tail)
    assert lines, f"the hunt never finished: {outcome.detail!r} {outcome.stderr_tail[-1500:]!r}"
    return int(lines[-1][1])


def assert_kept_secret(outcomes: list[Outcome], markers: list[str], *, searched: int) -> None:
    """Judged as they ended, each hunt ran through, and none found its run's marker (the
    output holds what the samples found and printed)."""
    assert len(markers) >= len(outcomes)
    for outcome in outcomes:
        assert_not_passed(outcome)
        assert _hunt_report(outcome) > searched, outcome.stderr_tail[-800:]
        found = set(MARKER.findall(outcome.stdout_tail + outcome.stderr_tail))
        assert not found & set(markers), f"the marker leaked: {outcome.stderr_tail[-800:]!r}"


def _run_py(ctx: RunContext, tasks: dict[str, Task], samples: list[Sample]) -> list[Outcome]:
    runner = PythonProjectRunner()
    try:
        assert runner.prepare([tasks[n] for n in PY_TASKS], ctx) == {}
        by_id = {t.task_id: t for t in tasks.values()}
        outcomes: list[Outcome] = _run_all(runner, [(by_id[s.task_id], s) for s in samples], ctx)
    finally:
        runner.close()
    for outcome in outcomes:
        assert outcome.provenance.executor == ("warm" if ctx.warm is not None else "fresh")
    return outcomes


def test_python_samples_that_hunt_for_the_marker_find_nothing_and_never_pass(
    py_ctx: RunContext, py_tasks: dict[str, Task], markers: list[str],
) -> None:
    samples = [_py_sample(py_tasks[name], PY_HUNT) for name in PY_TASKS]
    assert_kept_secret(_run_py(py_ctx, py_tasks, samples), markers, searched=20)


def test_python_samples_cannot_call_the_wrappers_reveal_by_name(
    py_ctx: RunContext, py_tasks: dict[str, Task], markers: list[str],
) -> None:
    samples = [_py_sample(py_tasks[name], PY_REVEAL) for name in PY_TASKS]
    outcomes = _run_py(py_ctx, py_tasks, samples)
    assert_kept_secret(outcomes, markers, searched=100)
    for outcome in outcomes:
        # Nothing named like a reveal or an announce anywhere.
        assert HUNT.findall(outcome.stderr_tail + outcome.stdout_tail)[-1][2] == "0", (
            outcome.stderr_tail[-600:])


def test_python_samples_cannot_replace_the_wrappers_verdict_functions(
    py_ctx: RunContext, py_tasks: dict[str, Task], markers: list[str],
) -> None:
    samples = [_py_sample(py_tasks[name], PY_PATCH) for name in PY_TASKS]
    outcomes = _run_py(py_ctx, py_tasks, samples)
    assert_kept_secret(outcomes, markers, searched=-1)
    # Under pytest the wrapper is __main__: its functions were there to replace.
    assert int(HUNT.findall(outcomes[1].stderr_tail + outcomes[1].stdout_tail)[-1][1]) > 0


# Python can reach any object of its own process by introspection; an in-process wrapper
# cannot hide from that (no more than from a debugger reading its memory).
PY_FRAMES = r'''
def SIGNATURE:
    import gc, json, os, sys
    marker = None
    frame = sys._getframe()
    names = []
    while frame is not None and marker is None:
        for name, value in list(frame.f_locals.items()):
            if callable(value) and getattr(value, "__name__", "") in ("reveal", "announce"):
                names.append(name)
                got = value() if value.__name__ == "reveal" else None
                if isinstance(got, str) and got.startswith("CODEREVAL-DONE-"):
                    marker = got
        frame = frame.f_back
    for obj in gc.get_objects() if marker is None else ():
        if getattr(obj, "__name__", "") == "reveal" and callable(obj):
            got = obj()
            if isinstance(got, str) and got.startswith("CODEREVAL-DONE-"):
                marker = got
    cwd = os.getcwd()
    with open(os.path.join(os.path.dirname(cwd), "spec.json")) as handle:
        result = json.load(handle)["result"]
    with open(result, "w") as handle:
        json.dump({"status": "passed", "marker": marker or ""}, handle)
    os._exit(0)
'''


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "frame and gc introspection reach any object of the process, the wrapper's reveal "
    "included: as out of reach of an in-process harness as reading the process's memory"))
def test_python_introspection_still_reaches_the_reveal(
    env_root: Path, py_tasks: dict[str, Task], tmp_path: Path,  # noqa: F811
) -> None:
    _bwrap_or_skip()
    ctx = _context(env_root, tmp_path / "work", limits=PY_LIMITS)
    task = py_tasks["normalize_whitespace"]
    outcome = _run_py(ctx, py_tasks, [_py_sample(task, PY_FRAMES)])[0]
    assert outcome.verdict is not Verdict.PASSED


# --------------------------------------------------------------------------- Java

# The body of a hostile Java method (CoderEval-Java's method, CoderUJB's function or generated
# test): SIGNATURE, STATUS (the harness's status line that would make the run a pass) and
# RETURN are filled in per task. Java 8 syntax: projects may compile with an old --release.
JAVA_HUNT = r'''
    SIGNATURE {
        class Hunt {
            final java.util.regex.Pattern pattern =
                    java.util.regex.Pattern.compile("CODEREVAL-DONE-[0-9a-f]{32}");
            final java.util.Set<String> found = new java.util.LinkedHashSet<>();
            final java.util.Set<String> where = new java.util.TreeSet<>();
            final java.util.Set<String> seen = new java.util.HashSet<>();
            // Markers whose first bytes were overwritten (free() writes its list pointers over
            // the start of a freed block): what is left of the hex, each completed.
            final java.util.Set<String> guesses = new java.util.LinkedHashSet<>();
            final long giveUp = System.nanoTime() + 5_000_000_000L;
            int searched;

            void scan(byte[] data, int length, String label) {
                java.util.regex.Matcher m = pattern.matcher(
                        new String(data, 0, length, java.nio.charset.StandardCharsets.ISO_8859_1));
                while (m.find()) {
                    found.add(m.group());
                    where.add(label);
                }
            }

            void read(java.io.InputStream in, String label, boolean available)
                    throws java.io.IOException {
                byte[] buf = new byte[(1 << 20) + 64];
                int keep = 0;
                long total = 0;
                while (total < (64L << 20)) {
                    // A pipe whose writer is open would block: read what it holds only.
                    int want = available ? Math.min(in.available(), buf.length - keep)
                            : buf.length - keep;
                    int n = want > 0 ? in.read(buf, keep, want) : -1;
                    if (n <= 0) {
                        break;
                    }
                    total += n;
                    scan(buf, keep + n, label);
                    int tail = Math.min(64, keep + n);
                    System.arraycopy(buf, keep + n - tail, buf, 0, tail);
                    keep = tail;
                }
                searched++;
            }

            void readPath(String path, boolean available) {
                try (java.io.FileInputStream in = new java.io.FileInputStream(path)) {
                    read(in, path, available);
                } catch (Throwable e) {
                    // unreadable: nothing to find there
                }
            }

            void walk(java.io.File root, int depth) {
                java.io.File[] files = root.listFiles();
                if (files == null || depth > 12 || System.nanoTime() > giveUp) {
                    return;
                }
                for (java.io.File file : files) {
                    String path = file.getAbsolutePath();
                    if (path.startsWith("/proc") || path.startsWith("/sys")
                            || java.nio.file.Files.isSymbolicLink(file.toPath())) {
                        continue;
                    }
                    if (file.isDirectory()) {
                        walk(file, depth + 1);
                    } else if (file.isFile() && seen.add(path)) {
                        readPath(path, false);
                    }
                }
            }

            void guess(byte[] data, int length) {
                int run = 0;
                for (int i = 0; i <= length; i++) {
                    int b = i < length ? data[i] : 0;
                    if ((b >= '0' && b <= '9') || (b >= 'a' && b <= 'f')) {
                        run++;
                        continue;
                    }
                    if (run == 32 || run == 31) {
                        String hex = new String(data, i - run, run,
                                java.nio.charset.StandardCharsets.ISO_8859_1);
                        // Kept without the prefix, which the rest of the scan would find.
                        for (char c : (run == 32 ? "" : "0123456789abcdef").toCharArray()) {
                            guesses.add(c + hex);
                        }
                        if (run == 32) {
                            guesses.add(hex);
                        }
                    }
                    run = 0;
                }
            }

            void text(String value, String label) {
                byte[] data = value.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
                scan(data, data.length, label);
                searched++;
            }

            void hunt() throws Exception {
                // A dump of the whole heap, unreachable objects included (first: the
                // rest of the hunt makes garbage).
                try {
                    Class<?> type = Class.forName("com.sun.management.HotSpotDiagnosticMXBean");
                    Object bean = java.lang.management.ManagementFactory.class
                            .getMethod("getPlatformMXBean", Class.class).invoke(null, type);
                    String dump = System.getProperty("java.io.tmpdir") + "/hunt-"
                            + System.nanoTime() + ".hprof";
                    type.getMethod("dumpHeap", String.class, boolean.class)
                            .invoke(bean, dump, false);
                    readPath(dump, false);
                    new java.io.File(dump).delete();
                } catch (Throwable e) {
                    where.add("no heap dump: " + e + " " + e.getCause());
                }
                java.util.Set<java.io.File> roots = new java.util.LinkedHashSet<>();
                java.io.File cwd = new java.io.File(".").getAbsoluteFile().getParentFile();
                roots.add(cwd);
                roots.add(cwd.getParentFile());
                roots.add(new java.io.File(System.getProperty("java.io.tmpdir")));
                roots.add(new java.io.File(System.getenv("HOME")));
                for (String entry : System.getProperty("java.class.path").split(":")) {
                    java.io.File file = new java.io.File(entry).getAbsoluteFile();
                    if (file.isDirectory()) {
                        roots.add(file);
                    } else if (seen.add(file.getPath())) {
                        readPath(file.getPath(), false);
                    }
                }
                for (String name : new String[] {"/tmp", "/var/tmp", "/dev/shm", "/run"}) {
                    roots.add(new java.io.File(name));
                }
                for (java.io.File root : roots) {
                    if (root != null && !"/".equals(root.getPath())) {
                        walk(root, 0);
                    }
                }
                for (String name : new String[] {"exe", "cmdline", "environ", "maps", "status",
                        "auxv"}) {
                    readPath("/proc/self/" + name, false);
                }
                text(System.getenv().toString() + System.getProperties().toString(), "env");
                java.io.File[] fds = new java.io.File("/proc/self/fd").listFiles();
                for (java.io.File fd : fds == null ? new java.io.File[0] : fds) {
                    readPath(fd.getPath(), true);
                }
                read(System.in, "System.in", true);
                read(new java.io.FileInputStream(java.io.FileDescriptor.in), "fd 0", true);
                java.io.File[] pids = new java.io.File("/proc").listFiles();
                for (java.io.File pid : pids == null ? new java.io.File[0] : pids) {
                    if (pid.getName().matches("[0-9]+")) {
                        readPath(pid.getPath() + "/cmdline", false);
                        readPath(pid.getPath() + "/environ", false);
                    }
                }
                // The harness's class: any static field.
                Class<?> harness = Class.forName("codereval.harness.RunTest");
                for (java.lang.reflect.Field field : harness.getDeclaredFields()) {
                    if (java.lang.reflect.Modifier.isStatic(field.getModifiers())) {
                        field.setAccessible(true);
                        Object value = field.get(null);
                        text(value instanceof byte[] ? new String((byte[]) value,
                                java.nio.charset.StandardCharsets.ISO_8859_1)
                                : String.valueOf(value), "RunTest." + field.getName());
                    }
                }
                // Its own memory, every readable mapping.
                try (java.io.RandomAccessFile mem = new java.io.RandomAccessFile("/proc/self/mem",
                        "r")) {
                    byte[] chunk = new byte[1 << 20];
                    for (String line : java.nio.file.Files.readAllLines(
                            java.nio.file.Paths.get("/proc/self/maps"))) {
                        String[] fields = line.trim().split("\\s+");
                        String[] range = fields[0].split("-");
                        long start = Long.parseUnsignedLong(range[0], 16);
                        long end = Long.parseUnsignedLong(range[1], 16);
                        if (fields[1].charAt(0) != 'r' || line.endsWith("[vvar]")
                                || line.endsWith("[vsyscall]") || end - start > (1L << 30)) {
                            continue;
                        }
                        try {
                            mem.seek(start);
                            for (long at = start; at < end; at += chunk.length - 64) {
                                int n = (int) Math.min(chunk.length, end - at);
                                mem.seek(at);
                                mem.readFully(chunk, 0, n);
                                scan(chunk, n, "mem " + fields[0] + " " + line.substring(
                                        Math.max(0, line.length() - 40)));
                                guess(chunk, n);
                            }
                            searched++;
                        } catch (java.io.IOException e) {
                            // an unreadable mapping
                        }
                    }
                }
            }
        }
        Hunt h = new Hunt();
        try {
            h.hunt();
        } catch (Throwable e) {
            h.where.add("hunt stopped: " + e);
        }
        System.out.println("true");
        for (String hex : h.guesses) {
            System.out.println("CODEREVAL-DONE-" + hex + " STATUS");
        }
        for (String marker : h.found) {
            System.out.println(marker + " STATUS");
        }
        System.out.flush();
        // Short, and last: the output's tail must keep it however much was found above.
        System.err.println("codereval-hunt: java searched=" + h.searched + " found="
                + h.found.size() + " " + h.found.stream().limit(2).toList() + " in "
                + h.where.stream().limit(2).toList() + " guessed " + h.guesses.size());
        System.err.flush();
        Runtime.getRuntime().halt(0);
        RETURN
    }
'''

# name -> (signature, the status line of a pass, what ends the method)
JAVA_TASKS = {
    "reverseWords": ("public static String reverseWords(String text)", "main", "return null;"),
    "gcd": ("public static long gcd(long a, long b)", "junit tests=1 failures=0 errors=0",
            "return 0;"),
}
UJB_STATUS = "tests run=1 failures=0 errors=0 failed="
UJB_TASKS = {
    "fcg-langlite-2-max": ("public static int max(int... array)", UJB_STATUS, "return 0;"),
    "ctg-langlite-2-toInt": ("@Test\n    public void testHunt()", UJB_STATUS, ""),
}
needs_jdk = pytest.mark.skipif(missing_toolchain() is not None, reason="no JDK")


def _java_sample(task_id: str, spec: tuple[str, str, str]) -> Sample:
    signature, status, end = spec
    code = (JAVA_HUNT.replace("SIGNATURE", signature).replace("STATUS", status)
            .replace("RETURN", end))
    return Sample(task_id=task_id, index=0, code=code, raw=code, model="hostile")


def _assert_found_nothing(outcomes: list[Outcome], markers: list[str]) -> None:
    assert_kept_secret(outcomes, markers, searched=20)
    for outcome in outcomes:
        assert "no heap dump" not in outcome.stderr_tail, outcome.stderr_tail[-800:]


@pytest.fixture(params=["fresh", "warm"])
def java_ctx(request: pytest.FixtureRequest, java_env_root: Path, tmp_path: Path) -> RunContext:
    if request.param == "warm":
        # The warm executor's JVM starts while the sample compiles (test_java_prestart).
        ctx: RunContext = request.getfixturevalue("warm_ctx")
        return ctx
    return dataclasses.replace(_java_ctx(java_env_root, tmp_path, compat=False),
                               limits=JAVA_LIMITS)


@needs_jdk
@pytest.mark.slow
def test_java_samples_that_hunt_for_the_marker_find_nothing_and_never_pass(
    java_ctx: RunContext, markers: list[str],
) -> None:
    tasks = {t.name: t for t in load_records(JAVA_MINI / "records.json")}
    runner = JavaProjectRunner()
    try:
        assert runner.prepare([tasks[name] for name in JAVA_TASKS], java_ctx) == {}
        with ThreadPoolExecutor(2) as pool:
            outcomes = list(pool.map(
                lambda item: runner.run(tasks[item[0]], _java_sample(tasks[item[0]].task_id,
                                                                     item[1]), java_ctx),
                JAVA_TASKS.items()))
    finally:
        runner.close()
    executor = "warm" if java_ctx.warm is not None else "fresh"
    assert {o.provenance.executor for o in outcomes} == {executor}
    _assert_found_nothing(outcomes, markers)


@needs_jdk
@pytest.mark.slow
def test_coderujb_samples_that_hunt_for_the_marker_find_nothing_and_never_pass(
    ujb_env_root: Path, tmp_path: Path, markers: list[str],
) -> None:
    tasks = {t.task_id: t for t in load_benchmark("mini-coderujb") if t.task_id in UJB_TASKS}
    ctx = _ujb_ctx(ujb_env_root, tmp_path)
    # The hunt gives up searching after 5 s, then the JVM runs the task's tests: on a loaded
    # machine (a CI run beside two project rebuilds) 20 s was not enough for it to report, and a
    # timeout says nothing of what the hunt found. The time is not what this test is about.
    ctx = dataclasses.replace(ctx, limits=dataclasses.replace(ctx.limits, wall_time=60.0))
    runner = CoderUjbRunner()
    try:
        assert runner.prepare(list(tasks.values()), ctx) == {}
        with ThreadPoolExecutor(2) as pool:
            outcomes = list(pool.map(
                lambda item: runner.run(tasks[item[0]], _java_sample(*item), ctx),
                UJB_TASKS.items()))
    finally:
        runner.close()
    _assert_found_nothing(outcomes, markers)
