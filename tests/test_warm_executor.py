"""The warm executor: samples forked from a long-lived sandboxed worker.

What it must guarantee beyond the sandbox conformance suite (which also runs against it): one
sample never sees or influences another's files, processes or verdict, whatever it does to its
worker; a forked sample behaves as it would in a fresh interpreter; a worker preloads only what
imports cleanly.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest
from live_processes import live_pids_with

from codereval.errors import UserError
from codereval.sandbox import ExecRequest, ExecResult, Limits, Mount
from codereval.sandbox.base import ProjectPreload
from codereval.sandbox.bwrap import BwrapSandbox
from codereval.sandbox.preload_hints import PreloadHints
from codereval.sandbox.warm import (
    Preload,
    Slot,
    WarmPool,
    WarmWorker,
    WorkerError,
    WorkerKey,
    python_call,
)

PY = os.path.realpath(getattr(sys, "_base_executable", sys.executable))


def _bwrap() -> BwrapSandbox:
    reason = BwrapSandbox.unavailable_reason()
    if reason is not None:
        pytest.skip(f"bwrap unavailable: {reason}")
    sandbox = BwrapSandbox()
    if "cgroup" not in sandbox.isolation:
        pytest.skip(f"cgroups unavailable: {sandbox.isolation}")
    return sandbox


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[WarmPool]:
    warm = WarmPool(sandbox=_bwrap(), root=tmp_path / "warm")
    yield warm
    warm.close()


def run_in(slot: Slot, code: str, *, limits: Limits | None = None, stdin: bytes | None = None,
           script: bool = False, flags: tuple[str, ...] = ()) -> tuple[ExecResult, str, Path]:
    scratch = slot.new_scratch()
    source = textwrap.dedent(code)
    if script:
        (scratch / "main.py").write_text(source)
        argv: tuple[str, ...] = (PY, *flags, str(scratch / "main.py"), "one", "two")
    else:
        argv = (PY, *flags, "-c", source)
    request = ExecRequest(
        argv=argv, cwd=scratch, scratch=scratch, stdin=stdin,
        env={"PATH": "/usr/bin:/bin", "HOME": str(scratch), "TMPDIR": str(scratch)},
        limits=limits or Limits(wall_time=10),
    )
    result, executor = slot.run(request)
    return result, executor, scratch


def run(pool: WarmPool, code: str, **options: object) -> ExecResult:
    with pool.slot() as slot:
        result, executor, _ = run_in(slot, code, **options)  # type: ignore[arg-type]
    assert executor == "warm"
    return result


def the_worker(pool: WarmPool) -> object:
    workers = pool.workers()
    assert len(workers) == 1
    return workers[0]


# --- served fresh from a slot -----------------------------------------------------------------


def _beside_scratch(slot: Slot, *, writable_mount: Path | None = None) -> tuple[ExecRequest, Path]:
    """A request whose program reads a file its runner left beside its scratch, in the slot."""
    scratch = slot.new_scratch()
    beside = slot.new_scratch() / "classes.txt"
    beside.write_text("the sample's own")
    mounts = (Mount(source=writable_mount, target=writable_mount, writable=True),) \
        if writable_mount is not None else ()
    request = ExecRequest(argv=(PY, "-c", f"print(open({str(beside)!r}).read())"), cwd=scratch,
                          scratch=scratch, env={"PATH": "/usr/bin:/bin"}, mounts=mounts,
                          limits=Limits(wall_time=20))
    return request, beside


def test_a_slot_request_served_fresh_sees_the_slot_folders_as_a_worker_would(
    pool: WarmPool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pool.slot() as slot:
        warm_result, executor = slot.run(_beside_scratch(slot)[0])
    assert (executor, warm_result.stdout) == ("warm", b"the sample's own\n")
    # Served fresh because the request mounts a folder writable (no worker may keep that).
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with pool.slot() as slot:
        result, executor = slot.run(_beside_scratch(slot, writable_mount=elsewhere)[0])
    assert (executor, result.stdout, result.exit_code) == ("fresh", b"the sample's own\n", 0)

    # Served fresh because no worker can start (killed while starting, out of time).
    def refuse(self: object, **kwargs: object) -> None:
        raise WorkerError("refused, for the test")

    monkeypatch.setattr(WarmWorker, "__init__", refuse)
    fresh_pool = WarmPool(sandbox=pool.sandbox, root=tmp_path / "fresh-pool")
    try:
        with fresh_pool.slot() as slot:
            result, executor = slot.run(_beside_scratch(slot)[0])
    finally:
        fresh_pool.close()
    assert (executor, result.stdout, result.exit_code) == ("fresh", b"the sample's own\n", 0)


# --- one worker, many samples -----------------------------------------------------------------


def test_consecutive_samples_share_one_worker_but_not_a_process(pool: WarmPool) -> None:
    first = run(pool, "import os; print(os.getpid(), os.getppid())")
    worker = the_worker(pool)
    second = run(pool, "import os; print(os.getpid(), os.getppid())")
    assert the_worker(pool) is worker
    assert first.exit_code == second.exit_code == 0
    pid_a, parent_a = first.stdout.split()
    pid_b, parent_b = second.stdout.split()
    # The server is init of the sandbox; each sample is a child of its own.
    assert parent_a == parent_b == b"1" and pid_a != pid_b


def test_killing_the_parent_neither_stops_the_sample_nor_the_worker(pool: WarmPool) -> None:
    run(pool, "pass")
    worker = the_worker(pool)
    code = """
        import os, signal, time
        os.kill(os.getppid(), signal.SIGKILL)
        os.kill(1, signal.SIGTERM)
        time.sleep(0.2)
        print('still here', flush=True)
    """
    result = run(pool, code)
    assert (result.exit_code, result.stdout) == (0, b"still here\n")
    after = run(pool, "print('next')")
    assert after.stdout == b"next\n"
    assert the_worker(pool) is worker


def test_processes_a_sample_leaves_are_dead_before_the_next_starts(pool: WarmPool) -> None:
    token = f"daemon-{uuid.uuid4().hex}"
    sleeper = f"[{PY!r}, '-c', 'import time; time.sleep(60)', {token!r}]"
    code = f"""
        import os, subprocess
        subprocess.Popen({sleeper})
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv({PY!r}, {sleeper})
            os._exit(0)
        print('started', flush=True)
    """
    assert run(pool, code).stdout == b"started\n"
    # Nothing to wait for: the worker killed them before handing the slot back.
    assert live_pids_with(token) == []
    seen = run(pool, "import os; print(sorted(int(p) for p in os.listdir('/proc') "
                     "if p.isdigit()), os.getpid())")
    pids, me = seen.stdout.decode().rsplit(" ", 1)
    assert json.loads(pids) == [1, int(me)]


def test_files_a_sample_leaves_are_gone_for_the_next(pool: WarmPool) -> None:
    leave = """
        import os
        here = os.getcwd()
        for path in ['/tmp/left', '/run/left', '/dev/shm/left', '/dev/left',
                     os.path.join(os.path.dirname(here), 'left'), os.path.join(here, 'left')]:
            with open(path, 'w') as handle:
                handle.write('for the next sample')
        os.makedirs('/tmp/deep/er')
        os.chmod('/tmp/deep', 0)
        os.chmod('/tmp', 0o500)
        print(here)
    """
    look = """
        import os, stat
        here = os.getcwd()
        paths = ['/tmp/left', '/run/left', '/dev/shm/left', '/dev/left', '/tmp/deep',
                 os.path.join(os.path.dirname(here), 'left')]
        print(sorted(p for p in paths if os.path.exists(p)))
        print(sorted(os.listdir(os.path.dirname(here))) == [os.path.basename(here)])
        print(oct(stat.S_IMODE(os.stat(here).st_mode)), os.access('/tmp', os.W_OK))
        print(here)
    """
    with pool.slot() as slot:
        first, _, scratch_a = run_in(slot, leave)
    assert first.exit_code == 0, first.stderr
    worker = the_worker(pool)
    with pool.slot() as slot:
        second, _, scratch_b = run_in(slot, look)
    assert the_worker(pool) is worker
    lines = second.stdout.decode().splitlines()
    assert lines[:3] == ["[]", "True", "0o700 True"]
    assert scratch_a != scratch_b and len(scratch_b.name) >= 32
    assert not scratch_a.exists()


def test_monkeypatching_a_shared_module_stays_in_its_own_sample(pool: WarmPool) -> None:
    patch = """
        import builtins, json, collections
        json.dumps = lambda *args, **kwargs: 'patched'
        builtins.len = lambda value: 0
        collections.OrderedDict = None
        print(json.dumps({'a': 1}), len('abc'))
    """
    assert run(pool, patch).stdout == b"patched 0\n"
    check = "import json, collections; print(json.dumps({'a': 1}), len('abc'), " \
            "collections.OrderedDict.__name__)"
    assert run(pool, check).stdout == b'{"a": 1} 3 OrderedDict\n'


def test_exhausting_memory_costs_only_that_sample(pool: WarmPool) -> None:
    run(pool, "pass")
    worker = the_worker(pool)
    hog = run(pool, "data = b'x' * (1 << 30); print(len(data))",
              limits=Limits(wall_time=20, memory_mb=256))
    assert hog.memory_exceeded and not hog.timed_out and hog.stdout == b""
    after = run(pool, "data = b'x' * (100 << 20); print(len(data))",
                limits=Limits(wall_time=20, memory_mb=256))
    assert (after.exit_code, after.stdout, after.memory_exceeded) == (0, b"104857600\n", False)
    assert the_worker(pool) is worker


def test_a_reused_cgroup_counts_each_samples_cpu_and_memory_from_zero(pool: WarmPool) -> None:
    run(pool, "pass")
    worker = the_worker(pool)
    cgroup = worker._runs  # type: ignore[attr-defined]
    assert cgroup is not None
    busy = run(pool, "import time\nend = time.process_time() + 0.4\n"
                     "while time.process_time() < end: pass")
    idle = run(pool, "pass")
    assert busy.cpu_time is not None and busy.cpu_time >= 0.4
    assert idle.cpu_time is not None and idle.cpu_time < 0.2
    limits = Limits(wall_time=20, memory_mb=256)
    run(pool, "pass", limits=limits)
    cgroup = worker._runs  # type: ignore[attr-defined]
    hog = run(pool, "data = b'x' * (1 << 30)", limits=limits)
    assert hog.memory_exceeded
    # The same cgroup serves the next sample, which is not taken for the hog's OOM kill.
    assert worker._runs is cgroup  # type: ignore[attr-defined]
    after = run(pool, "print('fine')", limits=limits)
    assert (after.stdout, after.memory_exceeded) == (b"fine\n", False)


def test_a_sample_that_leaves_memory_charged_gets_the_next_one_a_new_cgroup(
    pool: WarmPool,
) -> None:
    run(pool, "pass")
    worker = the_worker(pool)
    before = worker._runs  # type: ignore[attr-defined]
    with pool.slot() as slot:
        # 64 MiB of page cache in its scratch outlives the process, charged to its cgroup.
        result, _, _ = run_in(slot, "open('big', 'wb').write(b'x' * (64 << 20))")
        assert result.exit_code == 0
        assert worker._runs is None  # type: ignore[attr-defined]
        assert run_in(slot, "print('next')")[0].stdout == b"next\n"
    assert worker._runs is not None and worker._runs is not before  # type: ignore[attr-defined]
    assert the_worker(pool) is worker


def test_a_timeout_kills_the_sample_and_the_worker_serves_on(pool: WarmPool) -> None:
    run(pool, "pass")
    worker = the_worker(pool)
    started = time.monotonic()
    looping = run(pool, "while True: pass", limits=Limits(wall_time=1.0))
    assert looping.timed_out and looping.signal == signal.SIGKILL
    assert time.monotonic() - started < 3.0
    assert run(pool, "print('next')").stdout == b"next\n"
    assert the_worker(pool) is worker


def test_a_kill_that_arrives_after_a_sample_ended_spares_the_next_one(pool: WarmPool) -> None:
    # Without cgroups the host asks the server to kill a sample that ran out of time; the
    # request may cross the sample's end, when the next sample's process is already forked.
    run(pool, "pass")
    worker = the_worker(pool)
    worker.settle()  # type: ignore[attr-defined]
    worker._sock.send(json.dumps({"op": "kill"}).encode())  # type: ignore[attr-defined]
    result = run(pool, "print('alive')")
    assert (result.exit_code, result.signal, result.stdout) == (0, None, b"alive\n")
    assert the_worker(pool) is worker


def test_a_worker_that_dies_costs_that_sample_and_is_replaced(pool: WarmPool) -> None:
    run(pool, "pass")
    worker = the_worker(pool)
    process = worker._proc  # type: ignore[attr-defined]
    killer = threading.Timer(0.5, lambda: os.killpg(process.pid, signal.SIGKILL))
    killer.start()
    try:
        dying = run(pool, "import time; time.sleep(5); print('finished')")
    finally:
        killer.join()
    assert dying.sandbox_error.startswith("the warm worker died") and dying.stdout == b""
    assert pool.workers() == []
    assert run(pool, "print('clean')").stdout == b"clean\n"
    assert the_worker(pool) is not worker


def test_a_sample_cannot_read_or_trace_its_server(pool: WarmPool) -> None:
    code = """
        for path in ('/proc/1/mem', '/proc/1/environ'):
            try:
                open(path, 'rb').read(16)
                print('read', path)
            except OSError as error:
                print(type(error).__name__)
    """
    assert run(pool, code).stdout == b"PermissionError\nPermissionError\n"


def test_system_v_ipc_left_behind_retires_the_worker(pool: WarmPool) -> None:
    run(pool, "pass")
    worker = the_worker(pool)
    code = """
        import ctypes
        libc = ctypes.CDLL(None)
        print(libc.shmget(0, 4096, 0o1000 | 0o600) >= 0)  # IPC_PRIVATE, IPC_CREAT
    """
    assert run(pool, code).stdout == b"True\n"
    # Found by the clean-up: the next sample gets a new worker, with no segment in sight.
    assert run(pool, "import sys; print(open('/proc/sysvipc/shm').read().count(chr(10)))"
               ).stdout == b"1\n"
    assert the_worker(pool) is not worker


def test_concurrent_slots_never_see_each_other(pool: WarmPool) -> None:
    results: dict[int, str] = {}

    def one(index: int) -> None:
        code = f"""
            import os, time
            open('/tmp/mine', 'w').write('{index}')
            time.sleep(0.5)
            print(open('/tmp/mine').read(), sorted(os.listdir(os.path.dirname(os.getcwd()))))
        """
        with pool.slot() as slot:
            result, _, scratch = run_in(slot, code)
        results[index] = result.stdout.decode().strip() + " " + scratch.name

    threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for index, text in results.items():
        value, listing, name = text.split(" ", 2)
        assert value == str(index) and listing == f"['{name}']"


# --- a forked sample behaves as a fresh interpreter -----------------------------------------

STATE = """
    import json, os, random, signal, sys, tempfile, threading
    import __main__
    print(json.dumps({
        "argv": sys.argv, "name": __name__, "file": getattr(__main__, "__file__", None),
        "path0": sys.path[0], "cwd_in_path": os.getcwd() in sys.path,
        "signals": {s: repr(signal.getsignal(getattr(signal, s)))
                    for s in ("SIGINT", "SIGTERM", "SIGPIPE", "SIGCHLD", "SIGXFSZ", "SIGUSR1")},
        "threads": threading.active_count(),
        "environ": sorted(os.environ), "tmp": tempfile.gettempdir(),
        "sid": os.getsid(0) == os.getpid(), "pgid": os.getpgid(0) == os.getpid(),
        "flags": [sys.flags.isolated, sys.flags.ignore_environment, sys.flags.safe_path],
        "stdout": [sys.stdout.encoding, sys.stdout.line_buffering],
        "umask": os.umask(0o22), "random": random.random(),
    }))
"""


def _fresh_and_warm(pool: WarmPool, code: str, *, script: bool, flags: tuple[str, ...] = (),
                    stdin: bytes | None = None) -> tuple[ExecResult, ExecResult]:
    with pool.slot() as slot:
        warm, _, scratch = run_in(slot, code, script=script, flags=flags, stdin=stdin)
        # The same request, in the same scratch, through the fresh sandbox.
        argv = (PY, *flags, str(scratch / "main.py"), "one", "two") if script else (
            PY, *flags, "-c", textwrap.dedent(code))
        if script:
            (scratch / "main.py").write_text(textwrap.dedent(code))
        fresh = pool.sandbox.run(ExecRequest(
            argv=argv, cwd=scratch, scratch=scratch, stdin=stdin,
            env={"PATH": "/usr/bin:/bin", "HOME": str(scratch), "TMPDIR": str(scratch)},
            limits=Limits(wall_time=10),
        ))
    return fresh, warm


@pytest.mark.parametrize("script", [True, False], ids=["script", "dash-c"])
@pytest.mark.parametrize("flags", [(), ("-I", "-u")], ids=["plain", "isolated"])
def test_a_forked_sample_starts_in_a_fresh_interpreters_state(
    pool: WarmPool, script: bool, flags: tuple[str, ...]
) -> None:
    fresh, warm = _fresh_and_warm(pool, STATE, script=script, flags=flags)
    assert fresh.exit_code == warm.exit_code == 0, (fresh.stderr, warm.stderr)
    expected, seen = json.loads(fresh.stdout), json.loads(warm.stdout)
    assert expected.pop("random") != seen.pop("random")
    assert seen == expected


def test_random_generators_are_reseeded_for_every_sample(pool: WarmPool) -> None:
    draws = {run(pool, "import random; print(random.random())").stdout for _ in range(3)}
    assert len(draws) == 3


ENDINGS = {
    "uncaught": "def f():\n    raise ValueError('boom')\nf()\n",
    "syntax": "x = (1,\n",
    "exit_message": "import sys; print('out'); sys.exit('bye')",
    "exit_code": "import sys; sys.exit(7)",
    "os_exit": "import os; print('lost', end=''); os._exit(3)",
    "thread_joined": ("import threading, time\n"
                      "def late():\n    time.sleep(0.2)\n    print('thread done', flush=True)\n"
                      "threading.Thread(target=late).start()\nprint('main done')\n"),
    "atexit": "import atexit; atexit.register(print, 'at exit'); print('body')",
    "keyboard_interrupt": "raise KeyboardInterrupt",
    "signal_handler": ("import os, signal\n"
                       "signal.signal(signal.SIGUSR1, lambda *a: print('handled'))\n"
                       "os.kill(os.getpid(), signal.SIGUSR1)\n"),
    "sigterm_default": "import os, signal; os.kill(os.getpid(), signal.SIGTERM)",
    "stdin": "import sys; print(sys.stdin.read()[::-1])",
}


@pytest.mark.parametrize("name", sorted(ENDINGS))
def test_endings_match_a_fresh_interpreter(pool: WarmPool, name: str) -> None:
    fresh, warm = _fresh_and_warm(pool, ENDINGS[name], script=True, stdin=b"abc")
    assert (warm.exit_code, warm.signal) == (fresh.exit_code, fresh.signal)
    assert warm.stdout == fresh.stdout
    assert warm.stderr == fresh.stderr


def test_a_trusted_script_is_compiled_once_by_the_worker_and_named_for_each_sample(
    pool: WarmPool,
) -> None:
    script = textwrap.dedent("""
        import sys, traceback
        frame = sys._getframe()
        while frame is not None and "COMPILED" not in frame.f_globals:
            frame = frame.f_back
        compiled = frame.f_globals["COMPILED"] if frame is not None else {}
        with open(sys.argv[0], "rb") as handle:
            print("precompiled:", handle.read() in compiled)
        def inner():
            raise ValueError("boom")
        try:
            inner()
        except ValueError:
            print(traceback.extract_tb(sys.exc_info()[2])[-1].filename == sys.argv[0])
        """)
    with pool.slot() as slot:
        for trusted in ((script,), ()):
            scratch = slot.new_scratch()
            (scratch / "main.py").write_text(script)
            request = ExecRequest(argv=(PY, str(scratch / "main.py")), cwd=scratch,
                                  scratch=scratch, env={"PATH": "/usr/bin:/bin"},
                                  limits=Limits(wall_time=10))
            result, executor = slot.run(request, scripts=trusted)
            assert executor == "warm" and result.exit_code == 0, result.stderr
            # Tracebacks name the sample's own file either way.
            assert result.stdout == f"precompiled: {bool(trusted)}\nTrue\n".encode()


def test_other_programs_are_executed_inside_the_same_sandbox(pool: WarmPool) -> None:
    with pool.slot() as slot:
        scratch = slot.new_scratch()
        request = ExecRequest(argv=("/bin/sh", "-c", "echo $GIVEN; cat /proc/1/cmdline"),
                              cwd=scratch, scratch=scratch, env={"GIVEN": "yes"})
        result, executor = slot.run(request)
    assert executor == "warm" and result.exit_code == 0
    given, init = result.stdout.split(b"\n", 1)
    assert given == b"yes" and b"warm_server.py" in init


def test_a_mount_that_differs_per_sample_goes_to_the_fresh_sandbox(
    pool: WarmPool, tmp_path: Path
) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "f.txt").write_text("seen")
    read = "print(open('/tmp/view/f.txt').read())"
    with pool.slot() as slot:
        # Read-only and the same for every sample: a worker keeps it mounted.
        scratch = slot.new_scratch()
        shared = ExecRequest(
            argv=(PY, "-c", read), cwd=scratch, scratch=scratch,
            mounts=(Mount(source=tmp_path / "data", target=Path("/tmp/view")),))
        assert slot.run(shared)[1] == "warm"
        # Writable, outside the slot's fixed folders: another sample would find its writes.
        writable = ExecRequest(
            argv=(PY, "-c", read), cwd=scratch, scratch=scratch,
            mounts=(Mount(source=tmp_path / "data", target=Path("/tmp/view"), writable=True),))
        # The sample's own scratch, moved: a new source for every sample.
        (scratch / "own").mkdir()
        (scratch / "own" / "f.txt").write_text("seen")
        own = ExecRequest(
            argv=(PY, "-c", read), cwd=scratch, scratch=scratch,
            mounts=(Mount(source=scratch / "own", target=Path("/tmp/view")),))
        for request in (writable, own):
            result, executor = slot.run(request)
            assert (executor, result.stdout) == ("fresh", b"seen\n")


def test_a_slots_fixed_folder_is_emptied_after_each_sample_but_its_mount_points_stay(
    pool: WarmPool, tmp_path: Path
) -> None:
    """--compat mounts the original's tree and home at fixed paths from the slot's fixed
    folders: what a sample writes there, or in the tmpfs made for a path the host lacks, is
    gone for the next sample of the same worker; a mount inside one stays usable."""
    (tmp_path / "tool").mkdir()
    (tmp_path / "tool" / "lib.txt").write_text("library")
    missing = Path("/home") / f"codereval-absent-{os.getpid()}"
    assert not missing.exists()
    code = textwrap.dedent(f"""
        import os
        seen = sorted(os.listdir('/opt/ws')) + sorted(os.listdir('/home'))
        print(seen, open('/opt/ws/tool/lib.txt').read())
        open('/opt/ws/left.txt', 'w').write('x')
        os.makedirs('/opt/ws/tool-not', exist_ok=True)
        open('{missing}/dropped.txt', 'w').write('x')
        open('/home/junk.txt', 'w').write('x')
    """)
    results = []
    with pool.slot() as slot:
        for _ in range(2):
            fixed = slot.fixed("ws")
            scratch = slot.new_scratch()
            request = ExecRequest(
                argv=(PY, "-c", code), cwd=scratch, scratch=scratch,
                mounts=(Mount(source=fixed, target=Path("/opt/ws"), writable=True),
                        Mount(source=tmp_path / "tool", target=Path("/opt/ws/tool")),
                        Mount(source=tmp_path / "tool", target=missing / "tool")))
            result, executor = slot.run(request)
            assert (executor, result.exit_code) == ("warm", 0), result
            results.append(result.stdout.decode().strip())
            # Emptied by the worker before the run returned, the way to the mounts kept.
            assert sorted(p.name for p in fixed.iterdir()) == ["tool"]
    name = missing.name
    assert results == [f"['tool', '{name}'] library"] * 2
    assert len(pool.workers()) == 1


# --- preloading ------------------------------------------------------------------------------

SHOP = {
    "shop/__init__.py": "",
    "shop/cart.py": "VALUE = 'first sample'\n",
    "shop/prices.py": "RATES = {'eur': 1}\nimport decimal\n",
    "shop/lazy.py": "def cart():\n    from shop import cart\n    return cart.VALUE\n",
    "shop/dynamic.py": "import importlib\ncart = importlib.import_module('shop.cart')\n",
    "billing/__init__.py": "from shop import cart\n",
    "billing/tax.py": "RATE = 2\n",
    "shop/noisy.py": "open('/tmp/noisy', 'w').close()\n",  # a side effect: not preloaded
    "shop/loud.py": "from shop import noisy\n",  # needs it: not preloaded either
}


def _run_in_shop(slot: Slot, code: str, offer: ProjectPreload,
                 files: dict[str, str]) -> tuple[ExecResult, str]:
    """``code`` run in the slot with ``files`` in its fixed folder mounted at /opt/shop, as
    the runner puts a sample's tree in place, ``offer`` the project's modules to preload."""
    tree = slot.fixed("shop", kept=True)
    for rel, text in files.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    scratch = slot.new_scratch()
    request = ExecRequest(
        argv=(PY, "-c", code), cwd=scratch, scratch=scratch,
        env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
        mounts=(Mount(source=tree, target=Path("/opt/shop"), writable=True),))
    # (A list of what the tests import: without one, all of site-packages is a candidate.)
    return slot.run(request, project_dirs=(tree,), project=offer, imports=("decimal",))


def test_a_second_slots_worker_imports_what_the_first_found_clean_without_probing(
    pool: WarmPool,
) -> None:
    """Workers that differ only in their slot's fixed folders trust each other: started at
    the same time, the second waits for the first's findings instead of probing again."""
    code = "import sys; print('shop.prices' in sys.modules)"
    offer = ProjectPreload(root="/opt/shop", cwd="/opt/shop",
                           modules=("shop", "shop.prices", "billing"), banned=("shop.cart",))
    outputs: dict[int, str] = {}

    def one(index: int, slot: Slot) -> None:
        result, executor = _run_in_shop(slot, code, offer, SHOP)
        outputs[index] = f"{executor} {result.stdout.decode().strip()}"

    with pool.slot() as first, pool.slot() as second:
        threads = [threading.Thread(target=one, args=(i, s)) for i, s in enumerate((first, second))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        workers = pool.workers()
    assert outputs == {0: "warm True", 1: "warm True"}
    assert len(workers) == 2
    # One probed and skipped billing (it imports the cart); the other only imported the list.
    assert sorted(bool(w.skipped) for w in workers) == [False, True]  # type: ignore[attr-defined]


def test_a_projects_own_modules_are_preloaded_unless_they_reach_what_samples_change(
    pool: WarmPool,
) -> None:
    """The project's tree at a fixed path (compat's mounted tree): the modules that cannot
    reach the file samples change are imported once by the worker; every sample still sees
    its own version of that file, and no sample sees what another did to a preloaded one."""
    code = textwrap.dedent("""
        import sys
        preloaded = sorted(m for m in sys.modules if m.split('.')[0] in ('shop', 'billing'))
        sys.path.append('/opt/shop')
        from shop import cart, lazy, prices
        print(preloaded, cart.VALUE, lazy.cart(), prices.RATES)
        prices.RATES['eur'] = 99
    """)
    outputs: list[str] = []
    workers: list[object] = []
    # Offered everything but the cart: the worker's probe finds those that reach it.
    offer = ProjectPreload(root="/opt/shop", cwd="/opt/shop", modules=(
        "shop", "billing", "shop.prices", "shop.lazy", "shop.dynamic", "billing.tax",
        "shop.noisy", "shop.loud"), banned=("shop.cart",))
    with pool.slot() as slot:
        for value in ("first sample", "second sample"):
            # Each sample's version of the file in place, as the runner puts it.
            files = {**SHOP, "shop/cart.py": f"VALUE = {value!r}\n"}
            result, executor = _run_in_shop(slot, code, offer, files)
            assert (executor, result.exit_code) == ("warm", 0), result
            outputs.append(result.stdout.decode().strip())
            workers += pool.workers()
    # One worker served both.
    assert len(workers) == 2 and workers[0] is workers[1]
    preloaded = ["shop", "shop.lazy", "shop.prices"]
    assert outputs == [f"{preloaded} first sample first sample {{'eur': 1}}",
                       f"{preloaded} second sample second sample {{'eur': 1}}"]
    skipped = workers[0].skipped  # type: ignore[attr-defined]
    for name in ("shop.dynamic", "billing", "billing.tax"):
        assert "samples change (shop.cart)" in skipped[name], skipped
    assert "wrote files" in skipped["shop.noisy"]
    # Told from what was found before, without importing it again.
    assert skipped["shop.loud"] == "imports shop.noisy, which is not preloaded", skipped

MODULES = {
    "cleanlib": "VALUE = 42\n",
    "threadlib": "import threading, time\n"
                 "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n",
    "exitlib": "import atexit\natexit.register(print, 'exitlib at exit')\n",
    "filelib": "open('/tmp/filelib-cache', 'w').write('x')\n",
    "brokenlib": "raise RuntimeError('cannot import here')\n",
    "mathx": "# the project's own package name, installed too: never preloaded\n",
}


def _venv_with(root: Path, files: dict[str, str]) -> Path:
    """A virtual environment whose site-packages holds these files; its python."""
    subprocess.run([PY, "-m", "venv", "--without-pip", str(root / "env")], check=True)
    site = next((root / "env" / "lib").glob("python3*/site-packages"))
    for name, text in files.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(text)
    return root / "env" / "bin" / "python"


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _venv_with(tmp_path_factory.mktemp("venv"),
                      {f"{name}.py": text for name, text in MODULES.items()})


def test_auto_preload_imports_only_modules_without_side_effects(
    tmp_path: Path, venv: Path
) -> None:
    project = tmp_path / "project"
    (project / "mathx").mkdir(parents=True)
    (project / "mathx" / "__init__.py").write_text("")
    pool = WarmPool(sandbox=_bwrap(), root=tmp_path / "warm")
    try:
        with pool.slot() as slot:
            scratch = slot.new_scratch()
            request = ExecRequest(
                argv=(str(venv), "-c", f"import sys; print(sorted(m for m in sys.modules if "
                      f"m in {sorted(MODULES)!r}))"),
                cwd=scratch, scratch=scratch, env={"PATH": "/usr/bin:/bin"},
            )
            result, executor = slot.run(request, project_dirs=[project])
        worker = pool.workers()[0]
    finally:
        pool.close()
    assert executor == "warm"
    # An atexit handler is no reason: each child runs its own copy at its end, as a fresh
    # interpreter that imported the module would.
    assert result.stdout == b"['cleanlib', 'exitlib']\nexitlib at exit\n"
    assert worker.preloaded == ["cleanlib", "exitlib"]
    assert set(worker.skipped) == {"threadlib", "filelib", "brokenlib"}
    assert worker.skipped["threadlib"] == "started a thread"
    assert "wrote files" in worker.skipped["filelib"]
    assert worker.skipped["brokenlib"].startswith("import failed: RuntimeError")


def test_preload_none_and_named_modules(tmp_path: Path, venv: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    seen = {}
    for text in ("none", "filelib,cleanlib", "threadlib,cleanlib"):
        pool = WarmPool(sandbox=_bwrap(), root=tmp_path / f"warm-{len(seen)}",
                        preload=Preload.parse(text))
        try:
            with pool.slot() as slot:
                scratch = slot.new_scratch()
                request = ExecRequest(argv=(str(venv), "-c", "pass"), cwd=scratch,
                                      scratch=scratch)
                slot.run(request, project_dirs=[project])
            seen[text] = pool.workers()[0].preloaded
        finally:
            pool.close()
    assert seen == {
        "none": [],
        # Named modules are imported even when the probe finds a side effect...
        "filelib,cleanlib": ["filelib", "cleanlib"],
        # ...but not when forking would break: a worker without them serves instead.
        "threadlib,cleanlib": [],
    }


def test_a_file_beside_the_script_shadows_a_preloaded_module_as_in_a_fresh_interpreter(
    tmp_path: Path, venv: Path
) -> None:
    """CoderEval's federation: its utils/django.py shadows Django when a test runs as a script
    from that folder. A fresh interpreter imports the file beside the script; so must a sample
    forked from a worker that preloaded the real package."""
    project = tmp_path / "project"
    project.mkdir()
    script = "import cleanlib, json\nprint(getattr(cleanlib, 'VALUE', 'local'), json.dumps(1))\n"
    outputs = []
    pool = WarmPool(sandbox=_bwrap(), root=tmp_path / "warm")
    try:
        for shadow in (False, True, False):
            with pool.slot() as slot:
                scratch = slot.new_scratch()
                (scratch / "test.py").write_text(script)
                if shadow:
                    (scratch / "cleanlib.py").write_text("OTHER = 1\n")
                request = ExecRequest(argv=(str(venv), str(scratch / "test.py")), cwd=scratch,
                                      scratch=scratch, env={"PATH": "/usr/bin:/bin"})
                result, executor = slot.run(request, project_dirs=[project])
                assert executor == "warm" and result.exit_code == 0, result
                outputs.append(result.stdout.decode().splitlines()[0])
        assert "cleanlib" in pool.workers()[0].preloaded
        # Our harness puts the test's folder on sys.path itself, then says so.
        with pool.slot() as slot:
            scratch = slot.new_scratch()
            (scratch / "tests").mkdir()
            (scratch / "tests" / "cleanlib.py").write_text("OTHER = 1\n")
            code = ("import sys; sys.path.insert(0, sys.argv[1]); "
                    "sys.modules['_codereval_warm'].path_changed(); " + script.replace("\n", "; "))
            request = ExecRequest(argv=(str(venv), "-c", code, str(scratch / "tests")),
                                  cwd=scratch, scratch=scratch, env={"PATH": "/usr/bin:/bin"})
            result, _ = slot.run(request, project_dirs=[project])
            outputs.append(result.stdout.decode().splitlines()[0])
    finally:
        pool.close()
    fresh = subprocess.run([str(venv), "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                            "import cleanlib; print(getattr(cleanlib, 'VALUE', 'local'))",
                            str(tmp_path / "nothing")], capture_output=True, text=True)
    assert fresh.stdout == "42\n"
    # The shadowed sample gets the file beside it; the next sample the preloaded module again.
    assert outputs == ["42 1", "local 1", "42 1", "local 1"]


@pytest.mark.parametrize("text", ["", "numpy, bad name", "a,,-b"])
def test_a_bad_preload_value_is_one_clear_error(text: str) -> None:
    with pytest.raises(UserError, match=r"--preload .* is not auto, none or a comma-separated"):
        Preload.parse(text)


def test_only_plain_python_invocations_are_run_in_process() -> None:
    call = python_call([PY, "-I", "-u", "prog.py", "x"])
    assert call is not None and (call.flags, call.argv) == (("-I", "-u"), ("prog.py", "x"))
    dash_c = python_call([PY, "-c", "print(1)", "a"])
    assert dash_c is not None and dash_c.argv == ("-c", "a") and dash_c.code == "print(1)"
    assert python_call([PY, "-m", "pytest"]) is None
    assert python_call(["python3", "x.py"]) is None  # not a path: which interpreter?
    assert python_call(["/bin/sh", "-c", "true"]) is None


def test_the_fork_server_refuses_to_start_outside_its_own_pid_namespace() -> None:
    """Its clean-up kills every process it may signal: on the host that would be all of them."""
    server = resources.files("codereval.sandbox").joinpath("warm_server.py")
    with resources.as_file(server) as path:
        done = subprocess.run([sys.executable, str(path), "0"], capture_output=True, timeout=60)
    assert done.returncode == 70
    assert b"must run as pid 1" in done.stderr


# --- preloading what the tests import ------------------------------------------------------

IMPORTED = {
    "alib.py": "VALUE = 'a'\n",
    "blib.py": "VALUE = 'b'\n",
    "clib.py": "import blib\nVALUE = 'c' + blib.VALUE\n",
    "unused.py": "VALUE = 'never imported by the tests'\n",
    "pkglib/__init__.py": "",
    "pkglib/sub.py": "VALUE = 'sub'\n",
    # Like six: a finder appended after the standard ones, for its own names only.
    "sixlike.py": "import sys\nclass Finder:\n    def find_spec(self, *a, **k):\n"
                  "        return None\nsys.meta_path.append(Finder())\n",
    # A finder in front of the standard ones would change every import after it.
    "frontlib.py": "import sys\nclass Finder:\n    def find_spec(self, *a, **k):\n"
                   "        return None\nsys.meta_path.insert(0, Finder())\n",
}


@pytest.fixture(scope="module")
def venv_imports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _venv_with(tmp_path_factory.mktemp("venv-imports"), IMPORTED)


def _preloaded_in_child(tmp_path: Path, python: Path, imports: tuple[str, ...],
                        script: str, beside: dict[str, str] | None = None
                        ) -> tuple[ExecResult, WarmWorker]:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    pool = WarmPool(sandbox=_bwrap(), root=tmp_path / "warm")
    try:
        with pool.slot() as slot:
            scratch = slot.new_scratch()
            (scratch / "test.py").write_text(script)
            for name, text in (beside or {}).items():
                (scratch / name).write_text(text)
            request = ExecRequest(argv=(str(python), str(scratch / "test.py")), cwd=scratch,
                                  scratch=scratch, env={"PATH": "/usr/bin:/bin"})
            result, executor = slot.run(request, project_dirs=[project], imports=imports)
            assert executor == "warm", result
        return result, pool.workers()[0]
    finally:
        pool.close()


def test_the_modules_the_tests_import_are_preloaded_submodules_and_stdlib_too(
    tmp_path: Path, venv_imports: Path
) -> None:
    imports = ("email.mime.text", "pkglib.sub", "alib", "sixlike", "frontlib",
               "pkglib.not_a_module")
    script = ("import sys\nprint(sorted(m for m in ('email.mime.text', 'pkglib.sub', 'alib', "
              "'sixlike', 'frontlib', 'unused') if m in sys.modules))\n")
    result, worker = _preloaded_in_child(tmp_path, venv_imports, imports, script)
    assert result.exit_code == 0, result
    # Given the tests' imports, the worker preloads those, not every installed module.
    assert result.stdout == b"['alib', 'email.mime.text', 'pkglib.sub', 'sixlike']\n"
    assert "import hooks before the standard ones" in worker.skipped["frontlib"]
    assert worker.skipped["pkglib.not_a_module"].startswith("import failed")
    assert "unused" not in worker.skipped


def test_a_shadowed_preload_forgets_what_was_imported_from_it_on_and_keeps_the_rest(
    tmp_path: Path, venv_imports: Path
) -> None:
    """blib.py beside the script shadows the preloaded blib: the sample must get the local
    one, and so must clib, which imported blib when it was preloaded; alib, preloaded before
    blib existed, cannot refer to it and stays."""
    script = ("import sys\nkept = [m for m in ('alib', 'blib', 'clib') if m in sys.modules]\n"
              "import alib, clib\nprint(kept, alib.VALUE, clib.VALUE)\n")
    result, worker = _preloaded_in_child(
        tmp_path, venv_imports, ("alib", "blib", "clib"), script,
        beside={"blib.py": "VALUE = 'local'\n"})
    assert worker.preloaded == ["alib", "blib", "clib"]
    assert result.stdout == b"['alib'] a clocal\n", result
    # What a fresh interpreter prints for the same files.
    (tmp_path / "alone").mkdir()
    (tmp_path / "alone" / "blib.py").write_text("VALUE = 'local'\n")
    (tmp_path / "alone" / "test.py").write_text(
        "import alib, clib\nprint(alib.VALUE, clib.VALUE)\n")
    plain = subprocess.run([str(venv_imports), str(tmp_path / "alone" / "test.py")],
                           capture_output=True, text=True)
    assert plain.stdout == "a clocal\n"


# --- preloading in place, checked after ------------------------------------------------------

COUNTED = {
    # Each appends a line to $IMPORT_LOG when its module code runs (outside the folders the
    # side-effect check lists, so that is no reason to reject it).
    "onelib.py": "import os\nopen(os.environ['IMPORT_LOG'], 'a').write('onelib\\n')\n",
    "twolib.py": "import os\nopen(os.environ['IMPORT_LOG'], 'a').write('twolib\\n')\n",
    "threadlib.py": MODULES["threadlib"],
    "partlib.py": "import alib_missing_dependency\n",
}


@pytest.fixture(scope="module")
def venv_counted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _venv_with(tmp_path_factory.mktemp("venv-counted"), COUNTED)


def _worker_for(tmp_path: Path, python: Path, imports: tuple[str, ...], *,
                hints: PreloadHints | None = None,
                preload: Preload | None = None) -> tuple[ExecResult, WarmWorker, list[str]]:
    project = tmp_path / "project"
    project.mkdir(parents=True, exist_ok=True)
    pool = WarmPool(sandbox=_bwrap(), root=tmp_path / "warm", hints=hints, preload=preload)
    try:
        with pool.slot() as slot:
            log = slot.dirs[0] / "imports.log"
            log.touch()
            scratch = slot.new_scratch()
            names = sorted(n.removesuffix(".py") for n in COUNTED)
            request = ExecRequest(
                argv=(str(python), "-c", f"import sys; print(sorted(m for m in {names!r} "
                                         f"if m in sys.modules))"),
                cwd=scratch, scratch=scratch,
                env={"PATH": "/usr/bin:/bin", "IMPORT_LOG": str(log)},
            )
            result, executor = slot.run(request, project_dirs=[project], imports=imports)
            assert executor == "warm", result
            lines = log.read_text().split()
        return result, pool.workers()[0], lines
    finally:
        pool.close()


def test_a_clean_module_runs_once_per_worker_no_probe_import_before_it(
    tmp_path: Path, venv_counted: Path
) -> None:
    result, worker, imported = _worker_for(tmp_path, venv_counted, ("onelib", "twolib"))
    assert result.stdout == b"['onelib', 'twolib']\n"
    assert worker.preloaded[-2:] == ["onelib", "twolib"] and worker.launches == 1
    # Imported in the server and checked there: not once more in a forked probe.
    assert imported == ["onelib", "twolib"]


def test_a_module_found_dirty_after_its_import_costs_one_restart_and_nothing_else(
    tmp_path: Path, venv_counted: Path
) -> None:
    """threadlib starts a thread: the server it was imported in may no longer fork samples.
    Its replacement never imports it, probes what came after it and keeps what came before."""
    result, worker, imported = _worker_for(tmp_path, venv_counted,
                                           ("onelib", "threadlib", "twolib"))
    assert result.exit_code == 0, result
    assert result.stdout == b"['onelib', 'twolib']\n"
    assert worker.launches == 2
    assert worker.skipped["threadlib"] == "started a thread"
    assert worker.preloaded[-2:] == ["onelib", "twolib"]
    # onelib: the first server, then the second (clean, so not probed); twolib: the second
    # server's probe and its import.
    assert imported == ["onelib", "onelib", "twolib", "twolib"]


def test_a_module_that_is_not_there_is_skipped_without_a_restart(
    tmp_path: Path, venv_counted: Path
) -> None:
    # `from onelib import helper` offers onelib.helper: no such module, nothing of it ran.
    result, worker, _ = _worker_for(tmp_path, venv_counted,
                                    ("onelib.helper", "nosuchlib", "onelib"))
    assert result.stdout == b"['onelib']\n" and worker.launches == 1
    assert worker.skipped["onelib.helper"].startswith("import failed")
    assert worker.skipped["nosuchlib"].startswith("import failed")


def test_a_module_whose_own_import_fails_half_way_is_not_kept_half_imported(
    tmp_path: Path, venv_counted: Path
) -> None:
    # partlib exists and ran until its own import failed: that server is not a fresh one.
    result, worker, _ = _worker_for(tmp_path, venv_counted, ("partlib", "twolib"))
    assert result.stdout == b"['twolib']\n" and worker.launches == 2
    assert worker.skipped["partlib"].startswith("import failed: ModuleNotFoundError")


# --- what one run found unfit, skipped by the next (preload_hints) ---------------------------


def test_the_next_run_skips_what_tainted_the_last_and_starts_one_server(
    tmp_path: Path, venv_counted: Path
) -> None:
    hints = PreloadHints(tmp_path / "hints")
    imports = ("onelib", "threadlib", "twolib")
    first, worker, _ = _worker_for(tmp_path / "run1", venv_counted, imports, hints=hints)
    assert worker.launches == 2 and worker.skipped["threadlib"] == "started a thread"
    # A new pool is a new run: nothing of the first is left but the hint.
    again, worker, imported = _worker_for(tmp_path / "run2", venv_counted, imports, hints=hints)
    assert worker.launches == 1
    assert worker.skipped["threadlib"] == "started a thread"
    assert worker.preloaded[-2:] == ["onelib", "twolib"]
    # One server, each clean module imported once in it: no probe, no second import.
    assert imported == ["onelib", "twolib"]
    assert again.stdout == first.stdout == b"['onelib', 'twolib']\n"


def test_a_hint_only_skips_whatever_it_says_a_module_it_misses_is_still_checked(
    tmp_path: Path, venv_counted: Path
) -> None:
    """A stale hint (written when the candidates were the same but the modules were not) names
    twolib, not threadlib: threadlib is imported and checked as without a hint, taints the
    first server and is left out; the hint is rewritten with what this run found."""
    hints = PreloadHints(tmp_path / "hints")
    imports = ("onelib", "threadlib", "twolib")
    pool = WarmPool(sandbox=_bwrap(), root=tmp_path / "probe-key", hints=hints)
    key = pool._hint_key(_key_with(venv_counted, imports, tmp_path / "run" / "project"))
    hints.write(key, {"twolib": "an earlier run's finding"})
    result, worker, _ = _worker_for(tmp_path / "run", venv_counted, imports, hints=hints)
    assert worker.launches == 2
    assert worker.skipped == {"twolib": "an earlier run's finding",
                              "threadlib": "started a thread"}
    assert result.stdout == b"['onelib']\n"
    assert hints.read(key) == worker.skipped


def test_an_unreadable_hint_is_no_hint(tmp_path: Path, venv_counted: Path) -> None:
    hints = PreloadHints(tmp_path / "hints")
    imports = ("onelib", "threadlib", "twolib")
    _worker_for(tmp_path / "run1", venv_counted, imports, hints=hints)
    for written in (tmp_path / "hints").glob("*.json"):
        written.write_text("{not json")
    result, worker, _ = _worker_for(tmp_path / "run2", venv_counted, imports, hints=hints)
    assert worker.launches == 2 and result.stdout == b"['onelib', 'twolib']\n"


def test_a_preload_list_the_user_names_neither_reads_nor_writes_hints(
    tmp_path: Path, venv_counted: Path
) -> None:
    hints = PreloadHints(tmp_path / "hints")
    _worker_for(tmp_path / "run", venv_counted, ("onelib",), hints=hints,
                preload=Preload.parse("onelib,twolib"))
    assert not (tmp_path / "hints").exists()


def _key_with(python: Path, imports: tuple[str, ...], project: Path) -> WorkerKey:
    """The key _worker_for's request gets (what the hint key reads of it)."""
    return WorkerKey(python=str(python), flags=(), env=(), mounts=(), hostname=None,
                     network=False, stdlib=(), project_dirs=(str(project),), imports=imports)


# -- a request started ahead of its input (Slot.start: the Java test JVM boots during javac) --


def _held_request(slot: Slot, script: str, *, limits: Limits | None = None,
                  stdin: bytes = b"go\n") -> tuple[ExecRequest, Path]:
    scratch = slot.new_scratch()
    request = ExecRequest(argv=("/bin/sh", "-c", script), cwd=scratch, scratch=scratch,
                          env={"PATH": "/usr/bin:/bin"}, stdin=stdin,
                          limits=limits or Limits(wall_time=10))
    return request, scratch


def _wait_for(path: Path, seconds: float = 10.0) -> None:
    give_up = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < give_up, f"{path.name} never appeared"
        time.sleep(0.01)


def test_a_started_request_runs_before_go_and_reads_its_stdin_only_then(pool: WarmPool) -> None:
    with pool.slot() as slot:
        request, scratch = _held_request(slot, "touch booted; read line; echo got $line")
        with slot.start(request) as held:
            # The process is up (a JVM would be booting) while its stdin waits.
            _wait_for(scratch / "booted")
            result, executor = held.go()
    assert executor == "warm"
    assert (result.exit_code, result.stdout) == (0, b"got go\n")


def test_a_started_requests_wall_clock_starts_at_go(pool: WarmPool) -> None:
    with pool.slot() as slot:
        request, scratch = _held_request(slot, "touch booted; read line; sleep 0.2",
                                         limits=Limits(wall_time=2.0))
        with slot.start(request) as held:
            _wait_for(scratch / "booted")
            time.sleep(2.5)  # longer than its whole limit: the wait is not the sample's time
            result, _ = held.go()
    assert result.exit_code == 0 and not result.timed_out
    assert 0.2 <= result.wall_time < 2.0


def test_a_started_request_still_times_out_after_go(pool: WarmPool) -> None:
    with pool.slot() as slot:
        request, _ = _held_request(slot, "read line; while :; do :; done",
                                   limits=Limits(wall_time=1.0))
        with slot.start(request) as held:
            result, _ = held.go()
    assert result.timed_out and result.signal == signal.SIGKILL


def test_leaving_a_started_request_without_go_kills_it_and_the_worker_serves_on(
    pool: WarmPool,
) -> None:
    run(pool, "pass")
    worker = the_worker(pool)
    token = f"held-{uuid.uuid4().hex}"
    with pool.slot() as slot:
        # The child marks itself booted: its command line (with the token) is then in place.
        request, scratch = _held_request(
            slot, f"{PY} -c 'import pathlib, time; pathlib.Path(\"booted\").touch(); "
                  f"time.sleep(60)' {token} & read line")
        with slot.start(request):
            _wait_for(scratch / "booted")
            assert live_pids_with(token)
        # Dead, child and all, before the next sample of the slot.
        assert live_pids_with(token) == []
        after, executor, _ = run_in(slot, "import os; print(sorted(int(p) for p in "
                                          "os.listdir('/proc') if p.isdigit()), os.getpid())")
    pids, me = after.stdout.decode().rsplit(" ", 1)
    assert executor == "warm" and json.loads(pids) == [1, int(me)]
    assert the_worker(pool) is worker


def test_a_started_request_goes_once(pool: WarmPool) -> None:
    with pool.slot() as slot:
        request, _ = _held_request(slot, "read line")
        with slot.start(request) as held:
            held.go()
            with pytest.raises(RuntimeError, match="already gone"):
                held.go()


def test_a_request_the_workers_cannot_serve_starts_only_at_go(
    pool: WarmPool, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "moved"
    elsewhere.mkdir()
    with pool.slot() as slot:
        request, scratch = _held_request(slot, "touch booted; read line; echo fresh")
        # Writable, not a fixed folder of the slot: no worker may keep it.
        moved = dataclasses.replace(
            request, mounts=(Mount(source=elsewhere, target=Path("/opt/x"), writable=True),))
        with slot.start(moved) as held:
            time.sleep(0.3)
            assert not (scratch / "booted").exists()
            result, executor = held.go()
    assert executor == "fresh" and result.stdout == b"fresh\n"
