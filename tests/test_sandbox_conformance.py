"""What every sandbox backend must do, run against each of them, hostile samples included.

A backend that cannot do something lists it in WEAKNESSES: those cases are strict expected
failures, so the day a backend gains (or loses) the ability, this file says so.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from _pytest.mark.structures import ParameterSet
from live_processes import live_pids_with

from codereval.sandbox import ExecRequest, ExecResult, Limits, Mount, Sandbox, sandbox_class
from codereval.sandbox.bwrap import BwrapSandbox
from codereval.sandbox.warm import WarmSandbox

# "warm": the warm executor (codereval.sandbox.warm) behind the same interface: Python runs
# are forked from a sandboxed worker, other programs exec'd from a forked child.
BACKENDS = ("none", "rlimit", "bwrap", "bwrap-nocgroup", "warm")
ROOT = os.geteuid() == 0
PY = sys.executable

_NO_FS = "no filesystem isolation"
_NO_NET = "no network namespace"
_NO_PIDNS = "no pid namespace or cgroup: processes that leave the process group survive"
_PARENT = "the command's parent is the supervisor itself, which it may kill"
WEAKNESSES: dict[tuple[str, str], str] = {
    ("none", "memory"): "no memory limit",
    ("bwrap-nocgroup", "cpu_measured"): "without cpuacct the sandboxed tree's CPU time is unknown",
    ("none", "cpu"): "no CPU time limit",
    ("none", "fsize"): "no file size limit",
    ("none", "disk"): "no disk limit",
    ("none", "processes"): "no process limit",
    ("none", "daemons"): _NO_PIDNS,
    ("rlimit", "daemons"): _NO_PIDNS,
    ("none", "write_outside"): _NO_FS,
    ("rlimit", "write_outside"): _NO_FS,
    ("none", "remount"): _NO_FS,
    ("rlimit", "remount"): _NO_FS,
    ("none", "network"): _NO_NET,
    ("rlimit", "network"): _NO_NET,
    ("none", "kill_parent"): _PARENT,
    ("rlimit", "kill_parent"): _PARENT,
    ("bwrap", "exit_above_128"): "bubblewrap reports a signal N as exit status 128+N",
    ("bwrap-nocgroup", "exit_above_128"): "bubblewrap reports a signal N as exit status 128+N",
}
if ROOT:
    WEAKNESSES[("rlimit", "processes")] = "RLIMIT_NPROC does not bind root"
    WEAKNESSES[("bwrap-nocgroup", "processes")] = "RLIMIT_NPROC does not bind root, no pids cgroup"


def backends(check: str) -> list[ParameterSet]:
    params = []
    for name in BACKENDS:
        reason = WEAKNESSES.get((name, check))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(name, marks=marks, id=name))
    return params


_WARM: list[WarmSandbox] = []


@pytest.fixture(scope="module", autouse=True)
def _close_warm_workers() -> Iterator[None]:
    yield
    while _WARM:
        _WARM.pop().close()


def make(name: str) -> Sandbox:
    if name == "warm":
        bwrap = make("bwrap")
        if not _WARM:
            _WARM.append(WarmSandbox(root=Path(tempfile.mkdtemp(prefix="codereval-warm-"))))
        assert _WARM[0].isolation == bwrap.isolation
        return _WARM[0]
    cls = BwrapSandbox if name == "bwrap-nocgroup" else sandbox_class(name)
    reason = cls.unavailable_reason()
    if reason is not None:
        pytest.skip(f"{name} unavailable: {reason}")
    if name == "bwrap-nocgroup":
        return BwrapSandbox(use_cgroups=False)
    sandbox = cls()
    if name == "bwrap" and "cgroup" not in sandbox.isolation:
        pytest.skip(f"cgroups unavailable: {sandbox.isolation}")
    return sandbox


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    path = tmp_path / "scratch"
    path.mkdir()
    return path


def run_py(
    sandbox: Sandbox,
    scratch: Path,
    code: str,
    *,
    limits: Limits | None = None,
    **options: object,
) -> ExecResult:
    request = ExecRequest(
        argv=(PY, "-c", textwrap.dedent(code)),
        cwd=scratch,
        scratch=scratch,
        env={"PATH": os.environ["PATH"]},
        limits=limits or Limits(wall_time=10),
        **options,  # type: ignore[arg-type]
    )
    return sandbox.run(request)


# --- reporting ------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", backends("exit"))
def test_exit_code_and_output_are_reported(backend: str, scratch: Path) -> None:
    result = run_py(
        make(backend),
        scratch,
        "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)",
    )
    assert (result.exit_code, result.signal) == (3, None)
    assert (result.stdout, result.stderr) == (b"out\n", b"err\n")
    assert not (result.timed_out or result.memory_exceeded or result.sandbox_error)
    assert result.isolation.startswith("bwrap" if backend == "warm" else backend.split("-")[0])
    assert result.wall_time > 0


@pytest.mark.parametrize("backend", backends("cpu_measured"))
def test_cpu_time_of_the_whole_tree_is_measured(backend: str, scratch: Path) -> None:
    # Half a second of work in a grandchild: the time must be counted all the same.
    busy = "import time; end = time.process_time() + 0.5\nwhile time.process_time() < end: pass"
    code = f"import subprocess; subprocess.run([{PY!r}, '-c', {busy!r}], check=True)"
    result = run_py(make(backend), scratch, code)
    assert result.exit_code == 0
    assert result.cpu_time is not None and 0.5 <= result.cpu_time < 2.0


@pytest.mark.parametrize("backend", backends("signal"))
def test_death_by_signal_is_reported_as_the_signal(backend: str, scratch: Path) -> None:
    result = run_py(make(backend), scratch, "import os, signal; os.kill(os.getpid(), 15)")
    assert (result.exit_code, result.signal) == (None, 15)


@pytest.mark.parametrize("backend", backends("exit_above_128"))
def test_exit_status_above_128_is_an_exit_code(backend: str, scratch: Path) -> None:
    result = run_py(make(backend), scratch, "import sys; sys.exit(137)")
    assert (result.exit_code, result.signal) == (137, None)


@pytest.mark.parametrize("backend", backends("missing"))
def test_a_program_that_cannot_start_is_a_sandbox_error(backend: str, scratch: Path) -> None:
    request = ExecRequest(argv=("no-such-program-xyz",), cwd=scratch, scratch=scratch, env={})
    result = make(backend).run(request)
    assert result.sandbox_error and "no-such-program-xyz" in result.sandbox_error


@pytest.mark.parametrize("backend", backends("stdin"))
def test_stdin_is_delivered_whole(backend: str, scratch: Path) -> None:
    # Larger than a pipe buffer both ways, so feeding and reading must interleave.
    data = os.urandom(300_000)
    code = "import sys; sys.stdout.buffer.write(sys.stdin.buffer.read()[::-1])"
    result = run_py(make(backend), scratch, code, stdin=data)
    assert result.exit_code == 0
    assert result.stdout == data[::-1]


@pytest.mark.parametrize("backend", backends("env"))
def test_env_is_exactly_what_was_given(
    backend: str, scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEREVAL_HOST_SECRET", "must-not-leak")
    request = ExecRequest(
        # env(1), not Python: Python itself may add LC_CTYPE (PEP 538).
        argv=("/usr/bin/env",),
        cwd=scratch,
        scratch=scratch,
        env={"PATH": "/usr/bin:/bin", "GIVEN": "yes"},
    )
    result = make(backend).run(request)
    seen = dict(line.split("=", 1) for line in result.stdout.decode().splitlines())
    # bubblewrap sets PWD to the working directory; nothing else may be added.
    if "PWD" in seen:
        assert seen.pop("PWD") == str(scratch)
    assert seen == {"PATH": "/usr/bin:/bin", "GIVEN": "yes"}


@pytest.mark.parametrize("backend", backends("cwd"))
def test_command_runs_in_cwd_and_may_write_scratch(backend: str, scratch: Path) -> None:
    work = scratch / "work"
    work.mkdir()
    request = ExecRequest(
        argv=(PY, "-c", "import os; open('made.txt', 'w').write('x'); print(os.getcwd())"),
        cwd=work,
        scratch=scratch,
        env={},
    )
    result = make(backend).run(request)
    assert result.stdout.decode().strip() == str(work)
    assert (work / "made.txt").read_text() == "x"


@pytest.mark.parametrize("backend", backends("concurrent"))
def test_concurrent_runs_from_threads_keep_their_own_output(backend: str, tmp_path: Path) -> None:
    sandbox = make(backend)
    results: dict[int, ExecResult] = {}

    def one(index: int) -> None:
        scratch = tmp_path / f"s{index}"
        scratch.mkdir()
        code = f"import time; time.sleep(0.3); print({index})"
        results[index] = run_py(sandbox, scratch, code)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert time.monotonic() - started < 8 * 0.3
    assert {i: r.stdout for i, r in results.items()} == {i: f"{i}\n".encode() for i in range(8)}


# --- limits ---------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", backends("wall"))
def test_infinite_loop_times_out_within_the_wall_limit(backend: str, scratch: Path) -> None:
    started = time.monotonic()
    result = run_py(make(backend), scratch, "while True: pass", limits=Limits(wall_time=1.0))
    assert result.timed_out and not result.memory_exceeded
    assert result.signal == 9
    assert 1.0 <= result.wall_time < 1.5
    assert time.monotonic() - started < 2.0


@pytest.mark.slow
@pytest.mark.parametrize("backend", backends("cpu"))
def test_cpu_time_limit_stops_a_busy_command(backend: str, scratch: Path) -> None:
    limits = Limits(wall_time=5, cpu_time=1)
    result = run_py(make(backend), scratch, "while True: pass", limits=limits)
    # Stopped well before the wall limit: it was the CPU limit that did it.
    assert result.timed_out
    assert result.wall_time < 4.5


@pytest.mark.parametrize("backend", backends("memory"))
def test_memory_hog_is_memory_exceeded(backend: str, scratch: Path) -> None:
    code = "data = b'x' * (1 << 30); print(len(data))"
    result = run_py(make(backend), scratch, code, limits=Limits(wall_time=20, memory_mb=256))
    assert result.memory_exceeded
    assert not result.timed_out and result.exit_code != 0
    assert result.stdout == b""


@pytest.mark.parametrize("backend", ["bwrap", "bwrap-nocgroup", "warm"])
def test_what_a_run_writes_to_dev_is_bounded_memory(backend: str, scratch: Path) -> None:
    # bwrap's /dev (and /dev/shm in it) is a tmpfs: memory, metered by the memory cgroup or,
    # without one, sized (and the rest of /dev read-only). none and rlimit would write the
    # host's own /dev: they are not run.
    for target in ("/dev/shm/hog", "/dev/hog"):
        # 192 MB in files under the file-size limit, against 64 MB of memory.
        code = f"""
            import os
            names = [{target!r} + str(i) for i in range(4)]
            try:
                for name in names:
                    with open(name, 'wb') as out:
                        for _ in range(6):
                            out.write(b'x' * (8 << 20))
                print('wrote all')
            finally:
                for name in names:
                    if os.path.exists(name):
                        os.remove(name)
        """
        result = run_py(make(backend), scratch, code,
                        limits=Limits(wall_time=20, memory_mb=64))
        assert b"wrote all" not in result.stdout, (target, result)
        assert result.exit_code != 0 or result.memory_exceeded, (target, result)


@pytest.mark.parametrize("backend", backends("fsize"))
def test_file_size_limit(backend: str, scratch: Path) -> None:
    code = """
        with open('big', 'wb') as out:
            for _ in range(8):
                out.write(b'x' * (1 << 20))
    """
    result = run_py(make(backend), scratch, code, limits=Limits(wall_time=10, file_size_mb=1))
    assert result.exit_code != 0
    assert (scratch / "big").stat().st_size <= 1 << 20


# 1 GB at most, so that a backend with no disk limit ends it by itself; then it stays (files
# other processes delete meanwhile can hide its writes from the filesystem's free space).
_DISK_HOG = """
    import time
    block = b'x' * (1 << 20)
    for i in range(32):
        with open(f'f{i}', 'wb') as out:
            for _ in range(32):
                out.write(block)
    time.sleep(4)
"""


@pytest.mark.parametrize("backend", backends("disk"))
def test_writing_past_the_disk_limit_stops_the_run(backend: str, scratch: Path) -> None:
    # Files of 32 MB, each under the file-size limit: only the total can stop it.
    started = time.monotonic()
    result = run_py(make(backend), scratch, _DISK_HOG, limits=Limits(wall_time=20, disk_mb=128))
    assert result.limit_exceeded == "wrote more than 128 MB to disk"
    assert not result.timed_out and not result.memory_exceeded and not result.sandbox_error
    assert time.monotonic() - started < 20
    assert sum(f.stat().st_size for f in scratch.iterdir()) < 512 << 20


@pytest.mark.parametrize("backend", backends("disk"))
def test_a_run_beside_a_disk_hog_is_not_stopped_for_the_hogs_writes(
        backend: str, tmp_path: Path) -> None:
    sandbox = make(backend)
    quiet_scratch, hog_scratch = tmp_path / "quiet", tmp_path / "hog"
    quiet_scratch.mkdir()
    hog_scratch.mkdir()
    limits = Limits(wall_time=20, disk_mb=128)
    results: dict[str, ExecResult] = {}

    def hog() -> None:
        results["hog"] = run_py(sandbox, hog_scratch, _DISK_HOG, limits=limits)

    # Its own 16 MB, then it waits while the other writes hundreds.
    quiet = """
        import time
        with open('mine', 'wb') as out:
            out.write(b'x' * (16 << 20))
        time.sleep(3)
        print('done')
    """
    thread = threading.Thread(target=hog)
    thread.start()
    results["quiet"] = run_py(sandbox, quiet_scratch, quiet, limits=limits)
    thread.join()
    assert results["hog"].limit_exceeded
    assert results["quiet"].limit_exceeded == ""
    assert results["quiet"].exit_code == 0 and b"done" in results["quiet"].stdout


@pytest.mark.parametrize("backend", backends("output"))
def test_output_flood_is_capped_keeping_head_and_tail(backend: str, scratch: Path) -> None:
    code = """
        import sys
        sys.stderr.write('noise\\n' * 300_000)
        for i in range(100_000):
            print('line', i)
        print('END')
    """
    cap = 16 * 1024
    limits = Limits(wall_time=20, output_bytes=cap)
    result = run_py(make(backend), scratch, code, limits=limits)
    assert result.exit_code == 0 and result.output_truncated
    assert len(result.stdout) <= cap + 200 and len(result.stderr) <= cap + 200
    assert result.stdout.startswith(b"line 0\nline 1\n")
    assert result.stdout.endswith(b"line 99999\nEND\n")
    assert b"bytes of output dropped" in result.stdout


# --- containment ----------------------------------------------------------------------------


@pytest.mark.parametrize("backend", backends("processes"))
def test_fork_bomb_is_held_to_the_process_limit(backend: str, scratch: Path) -> None:
    token = f"bomb-{uuid.uuid4().hex}"
    # A bounded bomb: counts how many children it could start (each sleeps under the token).
    code = f"""
        import os, time
        made = 0
        for _ in range(60):
            try:
                pid = os.fork()
            except OSError:
                continue
            if pid == 0:
                os.execv({PY!r}, [{PY!r}, '-c', 'import time; time.sleep(30)', {token!r}])
            made += 1
        print(made, flush=True)
    """
    result = run_py(make(backend), scratch, code, limits=Limits(wall_time=15, processes=10))
    assert result.exit_code == 0
    assert int(result.stdout) <= 10
    assert live_pids_with(token) == []


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b == "bwrap"])
def test_real_fork_bomb_is_contained_and_the_machine_stays_responsive(
    backend: str, scratch: Path
) -> None:
    code = """
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
    """
    result = run_py(make(backend), scratch, code, limits=Limits(wall_time=1.0, processes=16))
    assert result.timed_out
    started = time.monotonic()
    subprocess.run(["true"], check=True)
    assert time.monotonic() - started < 1.0


@pytest.mark.parametrize("backend", backends("daemons"))
def test_daemons_and_background_children_are_dead_after_run(backend: str, scratch: Path) -> None:
    token = f"daemon-{uuid.uuid4().hex}"
    sleeper = f"[{PY!r}, '-c', 'import time; time.sleep(60)', {token!r}]"
    code = f"""
        import os, subprocess
        # nohup-style background child that stays in the process group
        subprocess.Popen({sleeper}, start_new_session=False)
        # classic daemon: fork, setsid, fork again, exec
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv({PY!r}, {sleeper})
            os._exit(0)
        print('started', flush=True)
    """
    result = run_py(make(backend), scratch, code)
    assert result.exit_code == 0
    deadline = time.monotonic() + 1.0
    while live_pids_with(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert live_pids_with(token) == []


@pytest.mark.parametrize("backend", backends("write_outside"))
def test_writing_outside_scratch_fails_and_host_file_is_unchanged(
    backend: str, tmp_path: Path, scratch: Path
) -> None:
    host_file = tmp_path / "host.txt"
    host_file.write_text("original")
    code = f"""
        try:
            open({str(host_file)!r}, 'w').write('changed')
        except OSError as error:
            print('refused', error)
    """
    run_py(make(backend), scratch, code)
    assert host_file.read_text() == "original"


@pytest.mark.parametrize("backend", backends("remount"))
def test_remounting_a_read_only_mount_writable_fails(
    backend: str, tmp_path: Path, scratch: Path
) -> None:
    shared = tmp_path / "readonly"
    shared.mkdir()
    (shared / "data.txt").write_text("original")
    script = (
        f"mount -o remount,rw,bind {shared} 2>&1; mount -o remount,rw {shared} 2>&1; "
        f"echo changed > {shared}/data.txt; echo done"
    )
    request = ExecRequest(
        argv=("sh", "-c", script),
        cwd=scratch,
        scratch=scratch,
        env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
        mounts=(Mount(source=shared, target=shared),),
    )
    result = make(backend).run(request)
    assert b"done" in result.stdout
    assert (shared / "data.txt").read_text() == "original"


@pytest.mark.parametrize("backend", backends("network"))
def test_network_is_off_unless_asked(backend: str, scratch: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        code = f"""
            import socket
            try:
                socket.create_connection(('127.0.0.1', {port}), timeout=2).close()
                print('connected')
            except OSError as error:
                print('blocked', error)
        """
        result = run_py(make(backend), scratch, code)
    assert result.stdout.startswith(b"blocked")


@pytest.mark.parametrize("backend", backends("network_allowed"))
def test_network_can_be_allowed(backend: str, scratch: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)"
        result = run_py(make(backend), scratch, code, network=True)
    assert result.exit_code == 0, result.stderr


_KILL_PARENT_DRIVER = """
import json, sys
from pathlib import Path
from codereval.sandbox import ExecRequest, Limits
sys.path.insert(0, {tests!r})
from test_sandbox_conformance import make
code = (
    "import os, signal, time\\n"
    "os.kill(os.getppid(), signal.SIGKILL)\\n"
    "time.sleep(0.3)\\n"
    "print('still here', flush=True)\\n"
)
result = make({backend!r}).run(ExecRequest(
    argv=({py!r}, '-c', code), cwd=Path({scratch!r}), scratch=Path({scratch!r}), env={{}},
    limits=Limits(wall_time=5),
))
print(json.dumps({{"exit": result.exit_code, "signal": result.signal}}))
"""


@pytest.mark.parametrize("backend", backends("kill_parent"))
def test_killing_the_parent_from_inside_neither_escapes_nor_hangs(
    backend: str, scratch: Path
) -> None:
    # The sandbox runs in a child interpreter: a weak backend loses that one, not pytest.
    driver = _KILL_PARENT_DRIVER.format(
        tests=str(Path(__file__).parent), backend=backend, py=PY, scratch=str(scratch)
    )
    done = subprocess.run(
        [PY, "-c", driver], capture_output=True, timeout=20, check=False, cwd=scratch
    )
    assert done.returncode == 0, done.stderr.decode()[-500:]
    assert json.loads(done.stdout.splitlines()[-1])["exit"] is not None
