"""The supervisor every backend shares: start, feed, capture, time, kill, reap.

One call of ``supervise`` owns one child from spawn to reaping, in the calling thread, with no
helper threads: stdin, stdout, stderr and a pidfd for the child's exit are multiplexed with one
selector. Nothing here uses ``preexec_fn`` (not safe with threads); the child gets its own session
through ``start_new_session`` (setsid in the spawning C code), and backends put any limits in front
of the command as wrapper programs (``prlimit``, a cgroup-joining ``sh``, ``bwrap``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

_CHUNK = 1 << 16
# Without a pidfd the child's exit is found by polling at this interval.
_POLL_INTERVAL = 0.02
# How often ``watch`` (e.g. a cgroup's total CPU time) is consulted.
_WATCH_INTERVAL = 0.1
# After the tree is killed, how long to wait for pipes still held by escaped processes.
_DRAIN_GRACE = 0.3


class OutputCap:
    """Keeps the first and last bytes of a stream: both the start and the verdict tail survive."""

    def __init__(self, limit: int) -> None:
        self._head_limit = max(limit // 2, 0)
        self._tail_limit = max(limit - self._head_limit, 0)
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if not data:
            return
        self._tail += data
        # Trim lazily (at twice the size) so a flood costs amortised O(1) per byte.
        if len(self._tail) > 2 * self._tail_limit:
            del self._tail[: len(self._tail) - self._tail_limit]

    @property
    def truncated(self) -> bool:
        return self.total > self._head_limit + self._tail_limit

    def value(self) -> bytes:
        if not self.truncated:
            return bytes(self._head + self._tail)
        tail = self._tail[len(self._tail) - self._tail_limit :] if self._tail_limit else b""
        dropped = self.total - len(self._head) - len(tail)
        note = f"\n[... codereval: {dropped} bytes of output dropped ...]\n".encode()
        return bytes(self._head) + note + bytes(tail)


@dataclass(frozen=True, kw_only=True)
class Stage:
    """A two-stage run (``supervise(stage=...)``): the command reports the end of its first
    stage with one line on the pipe whose ends are ``read_fd`` and ``write_fd`` (the command
    gets the write end at the same number; the supervisor closes both); ``switch(line)``
    returns the wall time the second stage gets, or None to let the command end as it is (it
    reads EOF on stdin then). When the second stage goes ahead, the supervisor answers ``run``
    on the command's stdin, followed by ``then_stdin`` (the second stage's input, left in the
    pipe for it: at most a pipe's buffer, so writing it never blocks), and output read until
    then belongs to the first stage. The first stage never sees ``then_stdin``: it is written
    only once that stage has ended."""

    read_fd: int
    write_fd: int
    switch: Callable[[bytes], float | None]
    then_stdin: bytes = b""


# What a second stage may be given on stdin: less than the smallest pipe buffer Linux gives.
STAGE_STDIN_MAX = 4096


@dataclass(frozen=True, kw_only=True)
class Supervised:
    """What the supervisor observed; backends turn it into an ExecResult."""

    exit_code: int | None
    signal: int | None
    wall_time: float
    # User + system time of the child and the descendants it reaped (wait4 rusage).
    rusage_cpu: float
    stdout: bytes
    stderr: bytes
    timed_out: bool
    # Set when ``watch`` asked for the kill; its reason.
    watch_reason: str
    output_truncated: bool
    # A staged run that went on to its second stage: what the first stage left (its exit status,
    # wall time and output; its rusage is not known apart). The fields above are the second's.
    first_stage: Supervised | None = None


def find_program(name: str) -> str | None:
    """Absolute path of a program on the host PATH (resolved here so a request's env needs none)."""
    for directory in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = Path(directory or ".") / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def descendants(root: int) -> list[tuple[int, int]]:
    """(pid, start time) of the processes below ``root`` by parent links, read from /proc
    (children that left the process group included; orphans already re-parented elsewhere are
    not). The start time tells the process from a later one given the same pid."""
    children: dict[int, list[tuple[int, int]]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields is not None and len(fields) > 19:
            children.setdefault(int(fields[1]), []).append((int(entry.name), int(fields[19])))
    found: list[tuple[int, int]] = []
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child[0])
    return found


def _stat_fields(pid: int) -> list[bytes] | None:
    """/proc/<pid>/stat from field 3 (state) on, or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    # The command name may hold spaces and parentheses: fields start after the last ')'.
    return stat[stat.rfind(b")") + 2 :].split()


def _kill_if_same(pid: int, start: int) -> None:
    """SIGKILL ``pid`` only if it is still the process that started at ``start``: a stray that
    exited since it was listed freed its pid, maybe for an unrelated process. A pidfd pins the
    process; the start time read after opening it says whether it is the one listed."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    except OSError:
        # No pidfd (old kernel): the best left is the plain kill.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
        return
    try:
        fields = _stat_fields(pid)
        if fields is not None and len(fields) > 19 and int(fields[19]) == start:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    finally:
        os.close(pidfd)


def kill_group_and_descendants(pid: int, *, alive: bool) -> None:
    """SIGKILL the child's process group, and, while the child lives, every descendant of it.

    The group needs no such care: the child is not reaped yet, so its pid (the group's id) is
    still its own."""
    strays = descendants(pid) if alive else []
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    for stray, start in strays:
        _kill_if_same(stray, start)


def supervise(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str],
    stdin: bytes | None,
    wall_time: float,
    output_bytes: int,
    kill_tree: Callable[[int, bool], None] = lambda pid, alive: kill_group_and_descendants(
        pid, alive=alive
    ),
    watch: Callable[[], str | None] | None = None,
    stage: Stage | None = None,
    then_output_bytes: int | None = None,
) -> Supervised:
    """Run ``argv`` to its end or to ``wall_time``; always kill what it left behind.

    ``kill_tree(pid, alive)`` kills everything the run started (its process group, its cgroup); it
    is called when the child exits, when the wall time expires and when ``watch`` returns a reason.
    ``stage``: a run in two stages (see Stage); the second stage's output is capped at
    ``then_output_bytes``. Raises OSError when the program cannot be started.
    """
    started = time.monotonic()
    deadline = started + wall_time
    if stage is not None and stdin is not None:
        raise ValueError("a staged run talks to the command on its stdin: it takes no input")
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE if stdin is not None or stage is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            close_fds=True,
            pass_fds=(stage.write_fd,) if stage is not None else (),
        )
    except BaseException:
        if stage is not None:
            os.close(stage.read_fd)
        raise
    finally:
        # Only the command may hold the write end: its end (or its report) is what the
        # supervisor waits for.
        if stage is not None:
            os.close(stage.write_fd)
    pid = proc.pid
    outputs = {"stdout": OutputCap(output_bytes), "stderr": OutputCap(output_bytes)}
    first_stage: Supervised | None = None
    selector = selectors.DefaultSelector()
    pidfd = -1
    status: int | None = None
    rusage_cpu = 0.0
    timed_out = False
    watch_reason = ""
    try:
        assert proc.stdout is not None and proc.stderr is not None
        selector.register(proc.stdout.fileno(), selectors.EVENT_READ, "stdout")
        selector.register(proc.stderr.fileno(), selectors.EVENT_READ, "stderr")
        pending = memoryview(stdin or b"")
        if proc.stdin is not None and stage is None:
            os.set_blocking(proc.stdin.fileno(), False)
            if pending:
                selector.register(proc.stdin.fileno(), selectors.EVENT_WRITE, "stdin")
            else:
                proc.stdin.close()
        if stage is not None:
            selector.register(stage.read_fd, selectors.EVENT_READ, "stage")
            report = b""
        try:
            pidfd = os.pidfd_open(pid)
            selector.register(pidfd, selectors.EVENT_READ, "exit")
        except OSError:
            pidfd = -1
        next_watch = started + _WATCH_INTERVAL
        exited = False
        while not exited:
            now = time.monotonic()
            if now >= deadline:
                timed_out = True
                break
            if watch is not None and now >= next_watch:
                next_watch = now + _WATCH_INTERVAL
                watch_reason = watch() or ""
                if watch_reason:
                    break
            timeout = deadline - now
            if watch is not None:
                timeout = min(timeout, max(next_watch - now, 0.0))
            if pidfd < 0:
                timeout = min(timeout, _POLL_INTERVAL)
            for key, _ in selector.select(timeout):
                if key.data == "exit":
                    exited = True
                elif key.data == "stage":
                    assert stage is not None and proc.stdin is not None
                    data = os.read(stage.read_fd, 256)
                    report += data
                    if data and not report.endswith(b"\n"):
                        continue
                    selector.unregister(stage.read_fd)
                    # Everything the first stage wrote is in the pipes by now: its processes
                    # ended before the line was written.
                    for name in ("stdout", "stderr"):
                        _read_available(selector, outputs, name, proc)
                    second = stage.switch(report.strip()) if data else None
                    if second is not None:
                        now = time.monotonic()
                        first_stage = Supervised(
                            exit_code=0, signal=None, wall_time=now - started, rusage_cpu=0.0,
                            stdout=outputs["stdout"].value(), stderr=outputs["stderr"].value(),
                            timed_out=False, watch_reason="",
                            output_truncated=(outputs["stdout"].truncated
                                              or outputs["stderr"].truncated))
                        size = then_output_bytes if then_output_bytes is not None else output_bytes
                        outputs = {"stdout": OutputCap(size), "stderr": OutputCap(size)}
                        started, deadline = now, now + second
                        next_watch = now + _WATCH_INTERVAL
                        with contextlib.suppress(BrokenPipeError):
                            proc.stdin.write(b"run\n" + stage.then_stdin)
                    with contextlib.suppress(BrokenPipeError):
                        proc.stdin.close()
                elif key.data == "stdin":
                    assert proc.stdin is not None
                    try:
                        written = os.write(proc.stdin.fileno(), pending[:_CHUNK])
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:
                        written = len(pending)
                    pending = pending[written:]
                    if not pending:
                        selector.unregister(proc.stdin.fileno())
                        proc.stdin.close()
                else:
                    _read_into(selector, key.fd, outputs[key.data])
            if pidfd < 0 and not exited:
                reaped, polled, usage = os.wait4(pid, os.WNOHANG)
                if reaped:
                    exited = True
                    status = polled
                    rusage_cpu = usage.ru_utime + usage.ru_stime
        kill_tree(pid, status is None and not exited)
        if status is None:
            _, status, usage = os.wait4(pid, 0)
            rusage_cpu = usage.ru_utime + usage.ru_stime
        # Popen must not try to reap a pid that is ours and already gone.
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - started
        _drain(selector, outputs, proc)
    finally:
        if proc.returncode is None:
            # Interrupted (e.g. KeyboardInterrupt): never leave the tree running.
            kill_tree(pid, True)
            with contextlib.suppress(ChildProcessError):
                os.wait4(pid, 0)
            proc.returncode = -signal.SIGKILL
        selector.close()
        if pidfd >= 0:
            os.close(pidfd)
        if stage is not None:
            os.close(stage.read_fd)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
    code = os.waitstatus_to_exitcode(status)
    return Supervised(
        exit_code=code if code >= 0 else None,
        signal=-code if code < 0 else None,
        wall_time=wall,
        rusage_cpu=rusage_cpu,
        stdout=outputs["stdout"].value(),
        stderr=outputs["stderr"].value(),
        timed_out=timed_out,
        watch_reason=watch_reason,
        output_truncated=outputs["stdout"].truncated or outputs["stderr"].truncated,
        first_stage=first_stage,
    )


def _read_available(selector: selectors.BaseSelector, outputs: dict[str, OutputCap], name: str,
                    proc: subprocess.Popen[bytes]) -> None:
    """Read what a pipe holds now, without waiting for more."""
    stream = proc.stdout if name == "stdout" else proc.stderr
    if stream is None or stream.fileno() not in selector.get_map():
        return
    fd = stream.fileno()
    blocking = os.get_blocking(fd)
    os.set_blocking(fd, False)
    try:
        while fd in selector.get_map() and _read_into(selector, fd, outputs[name], drain=True):
            pass
    finally:
        if fd in selector.get_map():
            os.set_blocking(fd, blocking)


def _read_into(selector: selectors.BaseSelector, fd: int, cap: OutputCap, *,
               drain: bool = False) -> bool:
    """Read one chunk; on EOF unregister the pipe. True while the pipe stays open (with
    ``drain``: and more may be waiting)."""
    try:
        data = os.read(fd, _CHUNK)
    except BlockingIOError:
        return not drain
    except OSError as error:
        if error.errno != errno.EIO:
            raise
        data = b""
    if data:
        cap.add(data)
        return True
    selector.unregister(fd)
    return False


def _drain(
    selector: selectors.BaseSelector, outputs: dict[str, OutputCap], proc: subprocess.Popen[bytes]
) -> None:
    """Read what the dead tree left in the pipes; stop early if an escaped process holds one."""
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            os.set_blocking(stream.fileno(), False)
    for key in list(selector.get_map().values()):
        if key.data not in outputs:
            selector.unregister(key.fd)
    grace_end = time.monotonic() + _DRAIN_GRACE
    while True:
        keys = [k for k in selector.get_map().values() if k.data in outputs]
        if not keys:
            return
        remaining = grace_end - time.monotonic()
        if remaining <= 0:
            return
        for key, _ in selector.select(remaining):
            if key.data in outputs:
                _read_into(selector, key.fd, outputs[key.data])
