"""The warm executor: long-lived sandboxed Python workers that fork each sample.

A fresh sandbox, interpreter and cgroup per sample costs tens of milliseconds before the test
starts, and a project's imports are paid again for every sample. Here a worker is started once
per (environment, worker slot): bubblewrap as in the fresh path (read-only root, no network,
private /tmp, /run and /dev, no capabilities), its own cgroup, and inside it a fork server
(warm_server.py, pid 1 of the sandbox) with the interpreter initialised and the project's
third-party modules imported. Each sample runs in a child forked from it.

Per sample the host makes fresh cgroups (memory, pids, cpuacct, the fresh path's limits), hands
the server pipes for stdin/stdout/stderr and descriptors of the cgroups' ``cgroup.procs``, and
supervises as the fresh path does (wall time, CPU time of the whole tree, output caps). The
child joins its cgroups before any sample code runs. When the sample ends the server kills
every process left in its sandbox and empties /tmp, /run and /dev/shm, the cgroups are
emptied and removed, and when the slot is released its directory is emptied; any sign that this
failed retires the worker, and the next sample gets a new one.

Slots: a slot is one engine worker's lease (``WarmPool.slot()``); it owns a directory mounted
writable in its workers, where each sample's scratch is created with an unguessable name. Only
one sample at a time runs in a slot, so a sample sees no other sample's files.

A request is served warm when its program is a Python interpreter run as ``python [-I -u -E
-s -B] script|-c code [args]``; anything else (``sh``, a compiler) is exec'd from a forked child
in the same sandbox. A worker keeps its mounts for every sample it serves, so a request is
served warm only when each of its mounts will be the same for the next sample: read-only and
not the sample's own scratch, or one of the slot's fixed folders (``Slot.fixed``), which the
worker empties after every sample, keeping the mount points in them. That is how ``--compat``
runs warm: the original platform's tree, its project folder and its home are mounted at the
original machine's paths from fixed folders the runner fills per sample. Any other request goes
to the fresh sandbox.
"""

from __future__ import annotations

import array
import contextlib
import dataclasses
import json
import logging
import os
import re
import secrets
import selectors
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from codereval.errors import UserError
from codereval.sandbox._common import allocation_failed, cpu_limit_hit, error_result, to_result
from codereval.sandbox._supervise import OutputCap, Supervised, find_program
from codereval.sandbox.base import (
    ExecRequest,
    ExecResult,
    Limits,
    Mount,
    ProjectPreload,
    Sandbox,
)
from codereval.sandbox.bwrap import BwrapSandbox, virtual_roots
from codereval.sandbox.cgroup import RunCgroup, probe
from codereval.sandbox.disk import DiskGuard, disk_guard
from codereval.sandbox.preload_hints import PreloadHints
from codereval.workspace.views import empty_folder, remove_tree

log = logging.getLogger("codereval.warm")

EXECUTORS = ("fresh", "warm")
_MIB = 1 << 20
_PY_NAME = re.compile(r"python(\d+(\.\d+)?)?$")
# Interpreter flags a warm worker can reproduce: it is started with the same ones.
_PY_FLAGS = frozenset({"-I", "-u", "-E", "-s", "-B"})
_START_TIMEOUT = 180.0
_REPLY_TIMEOUT = 10.0
# After the wall time or a kill, how long the server may take to report the child's end.
_KILL_GRACE = 3.0
_DRAIN_GRACE = 0.3
_WATCH_INTERVAL = 0.1
_CHUNK = 1 << 16
_SERVER_PROCESSES = 8
_MAX_PACKET = 4 << 20
# What a sample may leave charged to its cgroup (page cache it read, kernel memory) for the
# cgroup to be reused by the next sample of the slot.
_REUSE_CHARGE = 16 * _MIB


@dataclass(frozen=True, kw_only=True)
class Preload:
    """Which third-party modules a project's worker imports before forking.

    ``auto``: what the project's tests import (without that list, every top-level module in
    the environment's site-packages), each kept only if its import shows no side effect
    (threads, processes, open files, signal handlers, files written, hooks, the project's own
    modules imported); ``none``: nothing; ``modules``: exactly these, imported even when a
    probe finds side effects (the probe's findings are logged).
    """

    mode: str = "auto"
    modules: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Preload:
        value = text.strip()
        if value in ("auto", "none"):
            return cls(mode=value)
        names = tuple(n.strip() for n in value.split(",") if n.strip())
        bad = [n for n in names if not all(part.isidentifier() for part in n.split("."))]
        if not names or bad:
            raise UserError(
                f"--preload {text!r} is not auto, none or a comma-separated list of modules",
                hint="e.g. --preload auto, --preload none, --preload numpy,requests",
            )
        return cls(mode="modules", modules=names)

    def config(self) -> str | list[str]:
        return list(self.modules) if self.mode == "modules" else self.mode


@dataclass(frozen=True, kw_only=True)
class PythonCall:
    """A request's program read as a Python invocation."""

    flags: tuple[str, ...]
    script: str | None
    code: str | None
    argv: tuple[str, ...]  # what sys.argv holds in a fresh interpreter


def python_call(argv: Sequence[str]) -> PythonCall | None:
    """``python [flags] script|-c code [args]`` with flags a worker reproduces, else None."""
    if not argv or not os.path.isabs(argv[0]) or not _PY_NAME.match(os.path.basename(argv[0])):
        return None
    flags: list[str] = []
    rest = list(argv[1:])
    while rest and rest[0] in _PY_FLAGS:
        flags.append(rest.pop(0))
    if not rest or (rest[0].startswith("-") and rest[0] != "-c"):
        return None
    if rest[0] == "-c":
        if len(rest) < 2:
            return None
        return PythonCall(flags=tuple(sorted(set(flags))), script=None, code=rest[1],
                          argv=("-c", *rest[2:]))
    return PythonCall(flags=tuple(sorted(set(flags))), script=rest[0], code=None,
                      argv=tuple(rest))


@dataclass(frozen=True)
class WorkerKey:
    """Everything fixed when a worker starts; requests that agree on it share workers."""

    python: str
    flags: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    mounts: tuple[Mount, ...]
    hostname: str | None
    network: bool
    stdlib: tuple[str, ...]
    project_dirs: tuple[str, ...]
    # Modules the project's tests import, candidates for the auto preload (python_imports.py).
    imports: tuple[str, ...] = ()
    # Sources of our own scripts (the harness) the server compiles once for all its samples.
    scripts: tuple[str, ...] = ()
    # A scratch outside every slot (the Sandbox adapter's callers): bound into this worker only.
    extra_scratch: str = ""
    # The project's own modules it may preload (auto preload only).
    project: ProjectPreload | None = None


def _server_env(env: dict[str, str], scratch: Path) -> tuple[tuple[str, str], ...]:
    """The request's environment minus what changes per sample (set again in each child)."""
    marker = str(scratch)
    kept = {k: v for k, v in env.items() if k != "PYTHONPATH" and marker not in v}
    return tuple(sorted(kept.items()))


def _child_rlimits(limits: Limits, *, memory_cgroup: bool, pids_cgroup: bool) -> list[Any]:
    """The fresh path's prlimit words, as setrlimit calls made in the child after fork."""
    words: list[Any] = [["RLIMIT_CORE", 0, 0]]
    if limits.cpu_time is not None:
        soft = max(1, int(-(-limits.cpu_time // 1)))
        words.append(["RLIMIT_CPU", soft, soft + 1])
    if limits.file_size_mb is not None:
        size = limits.file_size_mb * _MIB
        words.append(["RLIMIT_FSIZE", size, size])
    if not pids_cgroup and limits.processes is not None and os.geteuid() != 0:
        words.append(["RLIMIT_NPROC", limits.processes, limits.processes])
    if not memory_cgroup and limits.memory_mb is not None and limits.address_space:
        size = limits.memory_mb * _MIB
        words.append(["RLIMIT_AS", size, size])
    return words


def _applied(words: list[Any]) -> list[str]:
    names = {"RLIMIT_CPU": "cpu", "RLIMIT_FSIZE": "fsize", "RLIMIT_NPROC": "nproc",
             "RLIMIT_AS": "as"}
    return [names[w[0]] for w in words if w[0] in names]


class WorkerError(Exception):
    """The worker could not start or stopped answering (ours to handle, not the sample's)."""


def _send(sock: socket.socket, message: dict[str, Any], fds: Sequence[int] = ()) -> None:
    data = json.dumps(message).encode()
    if fds:
        sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    else:
        sock.send(data)


def _receive(sock: socket.socket, timeout: float) -> dict[str, Any]:
    sock.settimeout(timeout)
    try:
        # The packet's own length, not the largest: a big buffer costs a page fault per page.
        length = sock.recv_into(bytearray(1), 1, socket.MSG_PEEK | socket.MSG_TRUNC)
        data = sock.recv(max(1, min(length, _MAX_PACKET)))
    except TimeoutError:
        raise WorkerError(f"the warm worker did not answer within {timeout:g}s") from None
    except OSError as error:
        raise WorkerError(f"the warm worker's channel failed: {error}") from None
    finally:
        sock.settimeout(None)
    if not data:
        raise WorkerError("the warm worker exited")
    value = json.loads(data)
    if not isinstance(value, dict):
        raise WorkerError("the warm worker sent a malformed message")
    return value


@dataclass(kw_only=True)
class Started:
    """A request a worker's server has started: its process runs (a JVM booting, say) and
    waits for stdin, which only ``WarmWorker.finish`` writes; its output waits in the pipes."""

    request: ExecRequest
    cgroup: RunCgroup | None
    words: list[Any]
    isolation: str
    stdin_w: int
    out_r: int
    err_r: int


class WarmWorker:
    """One fork server in its sandbox. Used by one thread at a time (its slot's holder)."""

    def __init__(self, *, key: WorkerKey, slot_dirs: tuple[Path, ...], home: Path,
                 bwrap: BwrapSandbox,
                 limits: Limits, preload: Preload, trusted: Sequence[str] | None,
                 kept: frozenset[Path] = frozenset(),
                 hint: dict[str, str] | None = None) -> None:
        self.key = key
        # Writable mounts the worker empties after each sample (see Slot.fixed).
        self.emptied = tuple(m for m in key.mounts if m.writable and m.source not in kept)
        self.slot_dirs = slot_dirs
        self.home = home
        self.broken = ""
        self.preloaded: list[str] = []
        self.skipped: dict[str, str] = {}
        self.last_used = time.monotonic()
        self._bwrap = bwrap
        self._cgroups = tuple(probe()[0]) if bwrap.isolation.startswith("bwrap+cgroup") else ()
        self._cgroup: RunCgroup | None = None
        # The cgroup samples run in (reused while emptied, see _sample_cgroup).
        self._runs: RunCgroup | None = None
        self._runs_limits: tuple[int | None, int | None] | None = None
        self._runs_fds: list[int] = []
        self._oom_base = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._cleaning = False
        # Servers started for this worker: 2 when a preloaded module tainted the first.
        self.launches = 1
        # Did its server choose what to preload (auto), so that its skipped list is a finding?
        self.preload_ran = preload.mode == "auto" and trusted is None
        started = time.monotonic()
        # ``hint``: what an earlier run found unfit (preload_hints), skipped from the start.
        retry = self._start(limits, preload, trusted, optimistic=True, skip=hint)
        if retry:
            # A module left the first server unfit to fork from: one that skips it and
            # probes the rest in forked children, importing what was clean first.
            self.close()
            self.launches += 1
            clean = [m for m in self.preloaded if m not in key.stdlib]
            # Its skipped list names the tainting module too (from ``skip``).
            self._start(limits, preload, [*(trusted or ()), *clean], optimistic=False,
                        skip={**(hint or {}), **retry})
        log.debug("warm worker for %s started in %.2f s: %d module(s) preloaded, %d not; "
                  "%d server(s)", key.python, time.monotonic() - started, len(self.preloaded),
                  len(self.skipped), self.launches)

    # -- lifecycle ------------------------------------------------------------------------

    def _start(self, limits: Limits, preload: Preload, trusted: Sequence[str] | None, *,
               optimistic: bool, skip: dict[str, str] | None = None) -> dict[str, str]:
        """Start the server; what it could not preload without tainting itself ({} when
        nothing did: the worker is ready)."""
        key = self.key
        self.home.mkdir(parents=True, exist_ok=True)
        server = self.home / "warm_server.py"
        server.write_text(
            resources.files("codereval.sandbox").joinpath("warm_server.py").read_text("utf-8"),
            encoding="utf-8",
        )
        mounts = [*key.mounts, Mount(source=self.home, target=self.home)]
        # The worker decides what the projects' own modules are by listing their folders: it
        # must see them where its samples will, wherever they are (under /tmp too).
        targets = {m.target for m in mounts}
        mounts += [Mount(source=Path(d), target=Path(d)) for d in key.project_dirs
                   if Path(d).is_dir() and Path(d) not in targets]
        # The slot's folders are where its samples' scratch directories are made.
        scratch = Path(key.extra_scratch) if key.extra_scratch else self.slot_dirs[0]
        mounts += [Mount(source=d, target=d, writable=True) for d in self.slot_dirs
                   if d != scratch]
        host, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        request = ExecRequest(
            argv=(key.python, *key.flags, str(server), str(child.fileno())),
            cwd=Path("/"),
            scratch=scratch,
            env=dict(key.env),
            mounts=tuple(mounts),
            limits=limits,
            network=key.network,
            hostname=key.hostname,
        )
        try:
            words = self._bwrap._bwrap_argv(request)
        except ValueError as error:
            host.close()
            child.close()
            raise WorkerError(f"sandbox setup: {error}") from None
        # The server is the sandbox's init: signals from inside cannot reach it.
        argv = [*words[:-1], "--as-pid-1", "--", *request.argv]
        prlimit = find_program("prlimit")
        if prlimit is not None:
            argv = [prlimit, "--core=0", "--", *argv]
        if self._cgroups:
            memory = None if limits.memory_mb is None else limits.memory_mb * _MIB
            self._cgroup = RunCgroup.create(memory_bytes=memory, pids_max=_SERVER_PROCESSES)
            argv = [*self._cgroup.join_prefix(_sh()), *argv]
        with open(self.home / "server.log", "wb") as log_file:
            try:
                self._proc = subprocess.Popen(
                    argv, cwd="/", env={"PATH": os.defpath}, stdin=subprocess.DEVNULL,
                    stdout=log_file, stderr=log_file, pass_fds=(child.fileno(),),
                    start_new_session=True,
                )
            except OSError as error:
                host.close()
                child.close()
                self.close()
                raise WorkerError(f"cannot start the warm worker: {error}") from None
        child.close()
        self._sock = host
        config = {"stdlib": list(key.stdlib), "project_dirs": list(key.project_dirs),
                  # Emptied after each sample as /tmp is: the private tmpfs bubblewrap lays
                  # where a mount's target is missing, and the request's writable mounts (a
                  # slot's fixed folders, see Slot.fixed); mount points in them stay.
                  "wipe": [str(r) for r in virtual_roots([m.target for m in mounts], scratch)]
                  + [str(m.target) for m in self.emptied],
                  "imports": list(key.imports),
                  "scripts": list(key.scripts),
                  "environ": dict(key.env),
                  # Third-party modules are a project's; a bare interpreter gets the stdlib.
                  # A later worker of the key imports what the first found clean (trusted);
                  # a restarted one (skip) goes on with the candidates after them.
                  "preload": "none" if (trusted is not None and skip is None)
                  or not (key.project_dirs or key.imports) else preload.config(),
                  "trusted": list(trusted or []),
                  "project": None if key.project is None else {
                      "root": key.project.root, "cwd": key.project.cwd,
                      "modules": list(key.project.modules) if preload.mode == "auto" else [],
                      "banned": list(key.project.banned)},
                  "optimistic": optimistic, "skip": dict(skip or {})}
        try:
            _send(host, config)
            ready = _receive(host, _START_TIMEOUT)
        except (WorkerError, OSError) as error:
            self.close()
            raise WorkerError(f"{error}; {self._log_tail()}") from None
        self.preloaded = list(ready.get("preloaded", []))
        self.skipped = dict(ready.get("skipped", {}))
        retry = {str(k): str(v) for k, v in dict(ready.get("retry") or {}).items()}
        if retry and optimistic:
            return retry
        if not ready.get("ready"):
            self.close()
            raise WorkerError(str(ready.get("error") or "the warm worker refused to start"))
        return {}

    def _log_tail(self) -> str:
        try:
            text = (self.home / "server.log").read_text(errors="replace").strip()
        except OSError:
            return "no server log"
        return f"server log: {text[-400:]}" if text else "the server printed nothing"

    @property
    def alive(self) -> bool:
        return not self.broken and self._proc is not None and self._proc.poll() is None

    def settle(self) -> bool:
        """Wait for the last sample's clean-up; True when the worker may serve the next."""
        if self._cleaning and self._sock is not None and not self.broken:
            self._cleaning = False
            try:
                problems = list(_receive(self._sock, _REPLY_TIMEOUT).get("problems", []))
            except WorkerError as failure:
                problems = [str(failure)]
            if problems:
                self.broken = "; ".join(problems)
                log.info("retiring a warm worker after a sample: %s", self.broken)
        return self.alive

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                _send(sock, {"op": "exit"})
            sock.close()
        proc, self._proc = self._proc, None
        if proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        self._drop_sample_cgroup()
        if self._cgroup is not None:
            self._cgroup.kill_all()
            self._cgroup.remove()
            self._cgroup = None
        remove_tree(self.home)
        # What its samples left in the fixed folders it mounted writable, had it not emptied
        # them (retired after a failed clean-up): with its mount namespace gone, ours to empty.
        for mount in self.emptied:
            if mount.source.is_dir():
                with contextlib.suppress(OSError):
                    empty_folder(mount.source)

    # -- one sample -----------------------------------------------------------------------

    def run(self, request: ExecRequest, call: PythonCall | None) -> ExecResult:
        """Run one request in a child of the server; the server kills what it left."""
        started = self.start(request, call)
        return started if isinstance(started, ExecResult) else self.finish(started)

    def start(self, request: ExecRequest, call: PythonCall | None) -> Started | ExecResult:
        """Hand the request to the server, which starts its process at once; its stdin, output
        and clocks wait for ``finish`` (or ``abandon``), which must follow. An error result
        when it could not start."""
        assert self._sock is not None
        if not self.settle():
            return error_result(f"the warm worker is unusable: {self.broken}", isolation="bwrap")
        self.last_used = time.monotonic()
        limits = request.limits
        cgroup: RunCgroup | None = None
        if self._cgroups:
            try:
                cgroup = self._sample_cgroup(limits)
            except OSError as error:
                return error_result(f"cannot create the run's cgroup: {error}",
                                    isolation="bwrap")
        controllers = cgroup.controllers if cgroup is not None else ()
        words = _child_rlimits(limits, memory_cgroup="memory" in controllers,
                               pids_cgroup="pids" in controllers)
        isolation = "bwrap"
        if controllers:
            isolation += f"+cgroup({','.join(controllers)})"
        if _applied(words):
            isolation += f"+rlimit({','.join(_applied(words))})"
        if request.network:
            isolation += "+net"
        try:
            return self._send_request(request, call, cgroup, words, isolation)
        except BaseException:
            if cgroup is not None:
                self._after_sample(cgroup)
            raise

    def finish(self, started: Started) -> ExecResult:
        """Feed the started request its stdin and supervise it to its end; its wall clock
        starts now (what ran before, waiting for stdin, counts only in its CPU time)."""
        try:
            return self._supervised(started)
        finally:
            if started.cgroup is not None:
                self._after_sample(started.cgroup)

    def abandon(self, started: Started) -> None:
        """Kill a started request that will not be needed, and clean up after it as after any
        sample (the worker then serves the next one)."""
        try:
            self._supervise(self._sock_or_fail(), None, started.stdin_w, started.out_r,
                            started.err_r, started=time.monotonic(),
                            # Past its deadline from the start: killed at once, then reaped.
                            limits=dataclasses.replace(started.request.limits, wall_time=0.0),
                            cgroup=started.cgroup, watch=None)
            if not self.broken:
                self._cleaning = True
        finally:
            if started.cgroup is not None:
                self._after_sample(started.cgroup)

    def _sock_or_fail(self) -> socket.socket:
        assert self._sock is not None
        return self._sock

    def _sample_cgroup(self, limits: Limits) -> RunCgroup:
        """The slot's sample cgroup, made on first use and for new limits, else the last one.

        Reusing it is as safe as a new one: a cgroup is handed to the next sample only once its
        ``cgroup.procs`` was read empty after the kill (a process cannot re-enter it: only the
        host's descriptors can write there, and the child closes them before any sample code
        runs), with its CPU time and limit-hit count reset and the OOM-kill count read.
        """
        wanted = (None if limits.memory_mb is None else limits.memory_mb * _MIB,
                  limits.processes)
        if self._runs is not None and self._runs_limits == wanted:
            return self._runs
        self._drop_sample_cgroup()
        cgroup = RunCgroup.create(memory_bytes=wanted[0], pids_max=wanted[1])
        try:
            # Held while the cgroup lives; the server gets copies of them with each request.
            self._runs_fds = [os.open(cgroup.file(c, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC)
                              for c in cgroup.dirs]
            self._oom_base = cgroup.oom_kills()
        except OSError:
            self._runs = cgroup
            self._drop_sample_cgroup()
            raise
        self._runs, self._runs_limits = cgroup, wanted
        return cgroup

    def _after_sample(self, cgroup: RunCgroup) -> None:
        if not cgroup.kill_all():
            self.broken = "processes survived the sample's cgroup kill"
            self._drop_sample_cgroup()
            return
        try:
            # Page cache and kernel memory charged by the sample outlive it; past a little, a
            # new cgroup gives the next sample its whole limit (removing moves the charge up).
            if cgroup.memory_usage() > _REUSE_CHARGE:
                self._drop_sample_cgroup()
                return
            self._oom_base = cgroup.reset()
        except OSError:
            self._drop_sample_cgroup()

    def _drop_sample_cgroup(self) -> None:
        cgroup, self._runs, self._runs_limits = self._runs, None, None
        fds, self._runs_fds = self._runs_fds, []
        for fd in fds:
            os.close(fd)
        if cgroup is not None and not (cgroup.kill_all() and cgroup.remove()):
            self.broken = "processes survived the sample's cgroup kill"

    def _send_request(self, request: ExecRequest, call: PythonCall | None,
                      cgroup: RunCgroup | None, words: list[Any],
                      isolation: str) -> Started | ExecResult:
        sock = self._sock_or_fail()
        message: dict[str, Any] = {
            "op": "run", "mode": "python" if call is not None else "exec",
            "argv": list(request.argv), "cwd": str(request.cwd), "env": request.env,
            "rlimits": words,
        }
        if call is not None:
            message.update(script=call.script, code=call.code, py_argv=list(call.argv),
                           isolated="-I" in call.flags,
                           ignore_env="-I" in call.flags or "-E" in call.flags)
        cg_fds = self._runs_fds if cgroup is not None else []
        stdin_r, stdin_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            _send(sock, message, [stdin_r, out_w, err_w, *cg_fds])
        except OSError as error:
            for fd in (stdin_r, stdin_w, out_r, out_w, err_r, err_w):
                os.close(fd)
            self.broken = f"cannot reach the warm worker: {error}"
            if cgroup is not None:
                self._after_sample(cgroup)
            return error_result(self.broken, isolation=isolation)
        for fd in (stdin_r, out_w, err_w):
            os.close(fd)
        return Started(request=request, cgroup=cgroup, words=words, isolation=isolation,
                       stdin_w=stdin_w, out_r=out_r, err_r=err_r)

    def _supervised(self, started: Started) -> ExecResult:
        sock = self._sock_or_fail()
        request, cgroup, words = started.request, started.cgroup, started.words
        isolation, limits = started.isolation, started.request.limits
        watch = cgroup if cgroup is not None and "cpuacct" in cgroup.controllers else None
        # The slot's folders too: a sample may write beside its scratch.
        disk = disk_guard(request, also=self.slot_dirs)
        seen = self._supervise(sock, request.stdin, started.stdin_w, started.out_r,
                               started.err_r, started=time.monotonic(), limits=limits,
                               cgroup=cgroup, watch=watch, disk=disk)
        if not self.broken:
            # Unasked, the server empties its folders and forks the next sample's process
            # while we judge; its answer is read before the worker serves again (settle).
            self._cleaning = True
        status, setup_error = seen.pop("status"), str(seen.pop("error"))
        if status is None and not seen["timed_out"] and not seen["watch_reason"]:
            return error_result(f"the warm worker died during the sample ({self.broken})",
                                isolation=isolation)
        if setup_error:
            return error_result(_setup_message(setup_error), isolation=isolation)
        code = None if status is None else os.waitstatus_to_exitcode(status)
        supervised = Supervised(
            exit_code=code if code is not None and code >= 0 else None,
            signal=-code if code is not None and code < 0 else signal.SIGKILL
            if code is None else None,
            wall_time=seen["wall"], rusage_cpu=0.0, stdout=seen["stdout"],
            stderr=seen["stderr"], timed_out=seen["timed_out"],
            watch_reason=seen["watch_reason"], output_truncated=seen["truncated"],
        )
        cpu_time = cgroup.cpu_time() if cgroup is not None else None
        controllers = cgroup.controllers if cgroup is not None else ()
        if cgroup is not None and "memory" in controllers:
            memory_exceeded = (cgroup.oom_killed(since=self._oom_base)
                               and not supervised.timed_out)
        else:
            memory_exceeded = any(w[0] == "RLIMIT_AS" for w in words) and allocation_failed(
                supervised)
        exceeded = disk.exceeded if disk is not None else ""
        timed_out = (supervised.timed_out or bool(supervised.watch_reason)
                     or cpu_limit_hit(supervised, cpu_time=cpu_time, limit=limits.cpu_time))
        return to_result(supervised, isolation=isolation, cpu_time=cpu_time,
                         timed_out=timed_out, limit_exceeded=exceeded,
                         memory_exceeded=memory_exceeded and not timed_out)

    def _supervise(self, sock: socket.socket, stdin: bytes | None, stdin_w: int, out_r: int,
                   err_r: int, *, started: float, limits: Limits, cgroup: RunCgroup | None,
                   watch: RunCgroup | None, disk: DiskGuard | None = None) -> dict[str, Any]:
        """Feed stdin, collect output, enforce wall and CPU time until the server reports."""
        outputs = {"stdout": OutputCap(limits.output_bytes),
                   "stderr": OutputCap(limits.output_bytes)}
        selector = selectors.DefaultSelector()
        selector.register(sock, selectors.EVENT_READ, "exit")
        selector.register(out_r, selectors.EVENT_READ, "stdout")
        selector.register(err_r, selectors.EVENT_READ, "stderr")
        pending = memoryview(stdin or b"")
        os.set_blocking(stdin_w, False)
        if pending:
            selector.register(stdin_w, selectors.EVENT_WRITE, "stdin")
        else:
            os.close(stdin_w)
            stdin_w = -1
        deadline = started + limits.wall_time
        next_watch = started + _WATCH_INTERVAL
        timed_out = False
        watch_reason = ""
        killed_at: float | None = None
        status: int | None = None
        error = ""
        ended: float | None = None
        try:
            while ended is None:
                now = time.monotonic()
                if killed_at is None:
                    if now >= deadline:
                        timed_out = True
                    elif (watch is not None or disk is not None) and now >= next_watch:
                        next_watch = now + _WATCH_INTERVAL
                        used = watch.cpu_time() if watch is not None else None
                        if (used is not None and limits.cpu_time is not None
                                and used > limits.cpu_time):
                            watch_reason = (f"CPU time of the process tree exceeded "
                                            f"{limits.cpu_time:g}s")
                        elif disk is not None:
                            watch_reason = disk.check() or ""
                    if timed_out or watch_reason:
                        killed_at = now
                        self._kill(sock, cgroup)
                elif now - killed_at > _KILL_GRACE:
                    self.broken = "the warm worker did not report a killed sample's end"
                    break
                watching = watch is not None or disk is not None
                limit = (killed_at + _KILL_GRACE if killed_at is not None
                         else min(deadline, next_watch if watching else deadline))
                for key, _ in selector.select(max(limit - now, 0.0)):
                    if key.data == "exit":
                        try:
                            reply = _receive(sock, _REPLY_TIMEOUT)
                        except WorkerError as failure:
                            self.broken = str(failure)
                            ended = time.monotonic()
                            break
                        status, error = reply.get("exit"), str(reply.get("error", ""))
                        ended = time.monotonic()
                    elif key.data == "stdin":
                        try:
                            written = os.write(stdin_w, pending[:_CHUNK])
                        except BlockingIOError:
                            continue
                        except BrokenPipeError:
                            written = len(pending)
                        pending = pending[written:]
                        if not pending:
                            selector.unregister(stdin_w)
                            os.close(stdin_w)
                            stdin_w = -1
                    else:
                        _read(selector, key.fd, outputs[key.data])
            wall = (ended or time.monotonic()) - started
            if cgroup is not None:
                # Daemons the sample left must not hold the pipes open while we drain.
                cgroup.kill_all()
            _drain(selector, outputs)
        finally:
            selector.close()
            for fd in (stdin_w, out_r, err_r):
                if fd >= 0:
                    with contextlib.suppress(OSError):
                        os.close(fd)
        return {"status": status, "error": error, "wall": wall, "timed_out": timed_out,
                "watch_reason": watch_reason, "stdout": outputs["stdout"].value(),
                "stderr": outputs["stderr"].value(),
                "truncated": outputs["stdout"].truncated or outputs["stderr"].truncated}

    def _kill(self, sock: socket.socket, cgroup: RunCgroup | None) -> None:
        if cgroup is not None:
            cgroup.kill_all()
        else:
            with contextlib.suppress(OSError):
                _send(sock, {"op": "kill"})


def _read(selector: selectors.BaseSelector, fd: int, cap: OutputCap) -> None:
    try:
        data = os.read(fd, _CHUNK)
    except BlockingIOError:
        return
    if data:
        cap.add(data)
    else:
        selector.unregister(fd)


def _drain(selector: selectors.BaseSelector, outputs: dict[str, OutputCap]) -> None:
    for key in list(selector.get_map().values()):
        if key.data not in outputs:
            selector.unregister(key.fd)
    grace_end = time.monotonic() + _DRAIN_GRACE
    while selector.get_map():
        remaining = grace_end - time.monotonic()
        if remaining <= 0:
            return
        for key, _ in selector.select(remaining):
            _read(selector, key.fd, outputs[key.data])


def _setup_message(error: str) -> str:
    if error.startswith("execvp "):
        return f"bwrap: {error}"
    return f"warm worker: {error}"


def _sh() -> str:
    return find_program("sh") or "/bin/sh"


def _host_python() -> str:
    """The interpreter that serves requests for other programs (they are exec'd by a child)."""
    import sys

    return os.path.realpath(getattr(sys, "_base_executable", sys.executable))


_SHM = Path("/dev/shm")
_SHM_PREFIX = "codereval-warm-"


def _memory_root() -> Path | None:
    """A private folder on the /dev/shm tmpfs for small scratch, or None where there is none.

    Named with our pid, so that folders left by evaluations killed with -9 are swept here.
    """
    if not (_SHM.is_dir() and os.access(_SHM, os.W_OK)):
        return None
    for stale in _SHM.glob(f"{_SHM_PREFIX}*-*"):
        pid = stale.name[len(_SHM_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            with contextlib.suppress(OSError):
                remove_tree(stale)
    try:
        path = _SHM / f"{_SHM_PREFIX}{os.getpid()}-{secrets.token_hex(6)}"
        path.mkdir(mode=0o700)
    except OSError:
        return None
    return path


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


class Slot:
    """One engine worker's lease on the pool: a private directory and the workers bound to it."""

    def __init__(self, pool: WarmPool, index: int, dirs: tuple[Path, ...]) -> None:
        self.pool = pool
        self.index = index
        # On the work root's filesystem (workspaces hard-link their base), then on a tmpfs
        # when there is one (small scratch: creating and removing it costs a tenth there).
        self.dirs = dirs

    def new_scratch(self, *, in_memory: bool = False) -> Path:
        """A fresh scratch directory for one sample: unguessable name, mode 0700."""
        path = self.dirs[-1 if in_memory else 0] / f"s-{secrets.token_hex(16)}"
        path.mkdir(mode=0o700)
        return path

    def fixed(self, name: str, *, kept: bool = False) -> Path:
        """A folder of this slot that lives as long as the pool, for a request to mount where
        a sample must find it (the original platform's tree, its home): a worker started with
        it sees what each sample puts there. Nothing of it is another slot's.

        Mounted writable, the worker empties it after each sample, keeping the mount points
        bubblewrap made in it (removing one from the host would unmount it in the worker).
        ``kept``: its user keeps what it holds between samples and empties it when needed (a
        workspace reused in place); the worker never does, so no mount may be made in it."""
        path = self.pool.root / "fixed" / f"slot-{self.index}" / name
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        if kept:
            with self.pool._lock:
                self.pool._kept.add(path)
        return path

    def with_folders(self, request: ExecRequest) -> ExecRequest:
        """The request with this slot's folders mounted as its workers have them (writable),
        for a request of the slot that the fresh sandbox serves instead.

        A runner may count on a worker's view: the Java runner leaves a sample's compiled
        classes beside its scratch, not in a mount of their own. Served fresh without them,
        the test JVM found the project's own build of the method first and judged the
        original instead of the sample: wrong samples passed."""
        targets = {m.target for m in request.mounts}
        folders = tuple(Mount(source=d, target=d, writable=True) for d in self.dirs
                        if d not in targets and d != request.scratch)
        return dataclasses.replace(request, mounts=(*request.mounts, *folders))

    def accepts(self, request: ExecRequest) -> str:
        """'' when a warm worker can serve the request, else why the fresh sandbox must.

        A worker keeps its mounts for every sample it serves: a mount is fine when it is the
        same for the next sample (read-only, not the sample's own scratch) or is one of this
        slot's fixed folders, which their user empties between samples."""
        fixed = self.pool.root / "fixed" / f"slot-{self.index}"
        for mount in request.mounts:
            if mount.source.is_relative_to(fixed):
                continue
            if mount.writable:
                return f"the request mounts {mount.source} writable at {mount.target}"
            # A path mounted at itself needs no resolving (the usual case: no syscalls).
            if mount.source != mount.target and mount.source.is_relative_to(request.scratch):
                return f"the request mounts its own {mount.source} at {mount.target}"
        return ""

    def run(self, request: ExecRequest, *, stdlib: Sequence[str] = (),
            project_dirs: Sequence[Path] = (), imports: Sequence[str] = (),
            scripts: Sequence[str] = (),
            project: ProjectPreload | None = None) -> tuple[ExecResult, str]:
        """Run the request; returns the result and the executor that produced it.

        ``scripts``: sources of trusted scripts (ours, never a sample's) that requests run;
        the worker compiles them once and a child whose script file holds exactly one of them
        runs that code instead of compiling it again. ``project``: the project's own modules
        the worker may preload (see ProjectPreload).
        """
        with self.start(request, stdlib=stdlib, project_dirs=project_dirs, imports=imports,
                        scripts=scripts, project=project) as held:
            return held.go()

    def start(self, request: ExecRequest, *, stdlib: Sequence[str] = (),
              project_dirs: Sequence[Path] = (), imports: Sequence[str] = (),
              scripts: Sequence[str] = (), project: ProjectPreload | None = None) -> HeldRun:
        """Start the request's process now and give it its stdin later (``HeldRun.go``), so
        that its start-up (a JVM's) overlaps other work of the same sample (its compile).
        Served fresh, nothing starts before ``go``. Used as a context manager: leaving it
        without ``go`` kills what started."""
        return self.pool._start(self, request, stdlib=tuple(stdlib),
                                project_dirs=tuple(str(p) for p in project_dirs),
                                imports=tuple(imports), scripts=tuple(scripts),
                                project=project)


class HeldRun:
    """A request started by ``Slot.start``: ``go`` once to run it to its end, or leave it."""

    def __init__(self, go: Callable[[], tuple[ExecResult, str]],
                 cancel: Callable[[], None] = lambda: None) -> None:
        self._go: Callable[[], tuple[ExecResult, str]] | None = go
        self._cancel = cancel

    def go(self) -> tuple[ExecResult, str]:
        go, self._go = self._go, None
        if go is None:
            raise RuntimeError("this run has already gone or was cancelled")
        return go()

    def cancel(self) -> None:
        if self._go is not None:
            self._go = None
            self._cancel()

    def __enter__(self) -> HeldRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()


@dataclass(kw_only=True)
class _Entry:
    worker: WarmWorker
    busy: bool = False


@dataclass(kw_only=True)
class _State:
    slots: int = 0
    free: list[int] = field(default_factory=list)
    # The thread that leased each slot last.
    owners: dict[int, threading.Thread] = field(default_factory=dict)
    workers: dict[tuple[WorkerKey, int], _Entry] = field(default_factory=dict)
    # Modules an earlier worker of the environment preloaded after probing them.
    trusted: dict[WorkerKey, list[str]] = field(default_factory=dict)
    # Trust keys whose first worker is starting: another slot waits for its list.
    starting: dict[WorkerKey, threading.Event] = field(default_factory=dict)
    unavailable: dict[WorkerKey, str] = field(default_factory=dict)
    # Workers started so far (a restart after a sample killed one counts again).
    started: int = 0
    closed: bool = False


class WarmPool:
    """Warm workers keyed by (environment, slot), owned by one evaluation; thread-safe."""

    def __init__(self, *, sandbox: Sandbox, root: Path, preload: Preload | None = None,
                 max_workers: int = 4, hints: PreloadHints | None = None) -> None:
        if not isinstance(sandbox, BwrapSandbox):
            raise UserError(
                f"the warm executor needs the bwrap sandbox (isolation here: {sandbox.isolation})",
                hint="install bubblewrap, or pass --executor fresh",
            )
        self.sandbox = sandbox
        self.root = root
        self.preload = preload or Preload()
        self.max_workers = max(1, max_workers)
        # What earlier runs found unfit to preload (None: every run finds it again).
        self.hints = hints
        self._lock = threading.Lock()
        self._state = _State()
        root.mkdir(parents=True, exist_ok=True)
        memory = _memory_root()
        self._roots = (root,) if memory is None else (root, memory)
        # Slots whose folders exist (made on a slot's first lease, kept until close).
        self._made: set[int] = set()
        # Fixed folders their user empties (Slot.fixed(kept=True)), never the workers.
        self._kept: set[Path] = set()

    @contextlib.contextmanager
    def slot(self) -> Iterator[Slot]:
        with self._lock:
            if self._state.closed:
                raise RuntimeError("the warm pool is closed")
            # A thread keeps its slot, and with it the warm workers of the samples it keeps
            # to (executors/affinity.py); it takes no slot another live thread keeps.
            me = threading.current_thread()
            owners = self._state.owners
            free = self._state.free
            index = next((i for i in free if owners.get(i) is me), None)
            if index is None:
                index = next((i for i in free if i not in owners or not owners[i].is_alive()),
                             None)
            if index is None:
                index = self._state.slots
                self._state.slots += 1
            else:
                free.remove(index)
            owners[index] = me
        dirs = tuple(root / f"slot-{index}" for root in self._roots)
        if index not in self._made:
            for directory in dirs:
                directory.mkdir(mode=0o700, exist_ok=True)
            self._made.add(index)
        try:
            yield Slot(self, index, dirs)
        finally:
            # Whatever the sample left beside its scratch goes before the next lease.
            for directory in dirs:
                empty_folder(directory)
            with self._lock:
                self._state.free.append(index)

    def _start(self, slot: Slot, request: ExecRequest, *, stdlib: tuple[str, ...],
               project_dirs: tuple[str, ...], imports: tuple[str, ...] = (),
               scripts: tuple[str, ...] = (),
               project: ProjectPreload | None = None) -> HeldRun:
        # A scratch from slot.new_scratch sits right in a slot folder: no need to resolve paths.
        in_slot = request.scratch.parent in slot.dirs or any(
            _inside(request.scratch, d) for d in slot.dirs)

        def fresh() -> tuple[ExecResult, str]:
            return self.sandbox.run(slot.with_folders(request) if in_slot else request), "fresh"

        if slot.accepts(request):
            return HeldRun(fresh)
        call = python_call(request.argv)
        key = WorkerKey(
            python=request.argv[0] if call is not None else _host_python(),
            flags=call.flags if call is not None else (),
            env=_server_env(request.env, request.scratch),
            mounts=tuple(sorted(request.mounts, key=lambda m: (str(m.target), str(m.source)))),
            hostname=request.hostname,
            network=request.network,
            stdlib=stdlib,
            project_dirs=project_dirs,
            imports=imports,
            scripts=scripts,
            extra_scratch="" if in_slot else str(request.scratch),
            project=project,
        )
        with self._lock:
            reason = self._state.unavailable.get(key)
        if reason is not None:
            return HeldRun(fresh)
        try:
            entry = self._acquire(key, slot, request.limits)
        except WorkerError as error:
            log.warning("warm worker unavailable, running fresh: %s", error)
            with self._lock:
                self._state.unavailable[key] = str(error)
            return HeldRun(fresh)
        worker = entry.worker
        try:
            started = worker.start(request, call)
        except BaseException:
            self._release(key, slot, entry)
            raise
        if isinstance(started, ExecResult):
            self._release(key, slot, entry)
            result = started
            return HeldRun(lambda: (result, "warm"))
        handle = started

        def go() -> tuple[ExecResult, str]:
            try:
                result = worker.finish(handle)
                if worker.emptied:
                    # The worker empties the fixed folders after the sample: their user fills
                    # them for the next one only when that is done.
                    worker.settle()
                return result, "warm"
            finally:
                self._release(key, slot, entry)

        def cancel() -> None:
            try:
                worker.abandon(handle)
            finally:
                self._release(key, slot, entry)

        return HeldRun(go, cancel)

    def _acquire(self, key: WorkerKey, slot: Slot, limits: Limits) -> _Entry:
        with self._lock:
            entry = self._state.workers.get((key, slot.index))
            if entry is not None:
                entry.busy = True
        if entry is not None:
            if entry.worker.settle():
                return entry
            self._release(key, slot, entry)
        trust = self._trust_key(key)
        mine: threading.Event | None = None
        while mine is None:
            with self._lock:
                trusted = self._state.trusted.get(trust)
                other = self._state.starting.get(trust) if trusted is None else None
                if trusted is None and other is None:
                    mine = self._state.starting[trust] = threading.Event()
            if other is None:
                break
            # The first worker of these samples is finding what is clean to preload: what it
            # finds, this one imports without probing again (or it starts on its own).
            other.wait(_START_TIMEOUT)
        try:
            return self._started(key, slot, limits, trust, trusted)
        finally:
            if mine is not None:
                with self._lock:
                    self._state.starting.pop(trust, None)
                mine.set()

    def _trust_key(self, key: WorkerKey) -> WorkerKey:
        """The key without the slot: workers that differ only in the slot's fixed folders they
        mount (the same contents for another sample) trust each other's preload findings."""
        fixed = self.root / "fixed"

        def common(path: Path) -> Path:
            if not path.is_relative_to(fixed):
                return path
            return fixed.joinpath("*", *path.relative_to(fixed).parts[1:])

        return dataclasses.replace(
            key, mounts=tuple(dataclasses.replace(m, source=common(m.source)) for m in key.mounts),
            project_dirs=tuple(str(common(Path(d))) for d in key.project_dirs))

    def _started(self, key: WorkerKey, slot: Slot, limits: Limits, trust: WorkerKey,
                 trusted: list[str] | None) -> _Entry:
        with self._lock:
            evicted = self._evict()
        for old in evicted:
            old.close()
        home = self.root / f"worker-{secrets.token_hex(8)}"
        with self._lock:
            kept = frozenset(self._kept)
        # Only the first worker of the key in this run looks: later ones import its findings.
        hint_key = self._hint_key(key) if trusted is None else ""
        hint = self.hints.read(hint_key) if self.hints is not None and hint_key else None
        try:
            worker = WarmWorker(key=key, slot_dirs=slot.dirs, home=home, bwrap=self.sandbox,
                                limits=limits, preload=self.preload, trusted=trusted,
                                kept=kept, hint=hint)
        except WorkerError:
            if (trusted is not None or self.preload.mode == "none"
                    or not (key.project_dirs or key.imports)):
                raise
            # A preload that breaks the server: start without it rather than not at all.
            worker = WarmWorker(key=key, slot_dirs=slot.dirs, home=home, bwrap=self.sandbox,
                                limits=limits, preload=Preload(mode="none"), trusted=None,
                                kept=kept)
        if trusted is None and worker.skipped:
            log.info("warm worker %s: not preloaded: %s", key.python, worker.skipped)
        if self.hints is not None and hint_key and worker.preload_ran:
            self.hints.write(hint_key, worker.skipped)
        entry = _Entry(worker=worker, busy=True)
        with self._lock:
            if trust not in self._state.trusted:
                self._state.trusted[trust] = [m for m in worker.preloaded
                                              if m not in key.stdlib]
            self._state.workers[(key, slot.index)] = entry
            self._state.started += 1
        return entry

    def _hint_key(self, key: WorkerKey) -> str:
        """The key of the preload hint of a worker's first start ('' when it preloads nothing
        it could find unfit: no candidates, or a list the user named)."""
        if self.hints is None or self.preload.mode != "auto" \
                or not (key.project_dirs or key.imports):
            return ""
        project = None if key.project is None else dataclasses.asdict(key.project)
        return self.hints.key(python=key.python, stdlib=key.stdlib, imports=key.imports,
                              project=project)

    def _evict(self) -> list[WarmWorker]:
        """Least recently used idle workers beyond the limit (the caller holds the lock)."""
        workers = self._state.workers
        idle = sorted((e.worker.last_used, k) for k, e in workers.items() if not e.busy)
        out: list[WarmWorker] = []
        while len(workers) - len(out) >= self.max_workers and idle:
            _, k = idle.pop(0)
            out.append(workers.pop(k).worker)
        return out

    def _release(self, key: WorkerKey, slot: Slot, entry: _Entry) -> None:
        with self._lock:
            entry.busy = False
            retire = not entry.worker.alive
            if retire and self._state.workers.get((key, slot.index)) is entry:
                del self._state.workers[(key, slot.index)]
        if retire:
            entry.worker.close()

    @property
    def workers_started(self) -> int:
        """How many workers this pool has started: the warm path's fixed cost."""
        with self._lock:
            return self._state.started

    def workers(self) -> list[WarmWorker]:
        with self._lock:
            return [e.worker for e in self._state.workers.values()]

    def close(self) -> None:
        with self._lock:
            self._state.closed = True
            entries = list(self._state.workers.values())
            self._state.workers.clear()
        for entry in entries:
            entry.worker.close()
        for folder in self._roots:
            # Samples' scratches are in these folders (on /dev/shm too): whatever they
            # made read-only goes as well.
            with contextlib.suppress(OSError):
                remove_tree(folder)


class WarmSandbox(Sandbox):
    """The warm executor behind the plain Sandbox interface (for the conformance suite).

    Each call leases a slot; a request whose scratch lies outside the slot gets a worker with
    that scratch bound (reused while the same scratch comes again).
    """

    name = "warm"

    def __init__(self, *, root: Path, preload: Preload | None = None) -> None:
        self.pool = WarmPool(sandbox=BwrapSandbox(), root=root, preload=preload)

    @classmethod
    def unavailable_reason(cls) -> str | None:
        return BwrapSandbox.unavailable_reason()

    @property
    def isolation(self) -> str:
        return self.pool.sandbox.isolation

    def run(self, request: ExecRequest) -> ExecResult:
        with self.pool.slot() as slot:
            result, _ = slot.run(request)
        return result

    def close(self) -> None:
        self.pool.close()
