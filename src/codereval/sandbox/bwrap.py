"""The default sandbox: bubblewrap namespaces, per-run cgroups, and rlimits for CPU and file size.

Inside: a read-only view of the host filesystem except the scratch dir and mounts marked writable;
private /tmp and /run; a minimal /dev; a new /proc; new pid, ipc, uts and network namespaces (only
loopback); a new session; the parent's death kills it; and no capabilities at all. Running as
root, bubblewrap would otherwise keep every capability, and sandboxed code could remount a
read-only bind writable.

The command line is ``sh`` (joins the run's cgroups) -> ``prlimit`` (CPU, file size) -> ``bwrap``
-> the command; each execs the next, so nothing extra stays running. Where cgroups cannot be
created (no v1 hierarchy, no permission), memory falls back to RLIMIT_AS and the process limit
does not hold for root; the isolation string and ``isolation`` say so.

A mount's target must already exist on the host or lie below /tmp, /run or the scratch dir: the
read-only root has no room for new mount points.

bubblewrap folds a signal that killed the command into the exit status 128+N; statuses 129..192
are reported as that signal, so a command that really exits with 137 is reported as SIGKILL.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import signal
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

from codereval.sandbox._common import (
    allocation_failed,
    cpu_limit_hit,
    error_result,
    to_result,
)
from codereval.sandbox._supervise import (
    STAGE_STDIN_MAX,
    Stage,
    Supervised,
    find_program,
    kill_group_and_descendants,
    supervise,
)
from codereval.sandbox.base import ExecRequest, ExecResult, Limits, Mount, Sandbox
from codereval.sandbox.cgroup import (
    JOIN_FAILED,
    JOIN_FAILED_STATUS,
    RunCgroup,
    cgroup_unavailable_reason,
    probe,
)
from codereval.sandbox.disk import disk_guard, either
from codereval.sandbox.rlimit import prlimit_prefix

_MIB = 1 << 20
# bwrap's own processes in the run's pids cgroup: the monitor and the pid-1 reaper.
_BWRAP_PROCESSES = 2
_INSTALL_HINT = "install bubblewrap (apt-get install bubblewrap; scripts/setup-system.sh does it)"
# The line a staged run's launcher writes when its first stage has ended, with the status.
_STAGE_WORD = b"codereval-stage"
# A staged run needs every limit of the second stage to be settable from outside between the
# stages: memory and processes by changing the cgroup, CPU time measured from the switch.
_STAGE_CONTROLLERS = ("memory", "pids", "cpuacct")


@functools.cache
def _probe_bwrap() -> str | None:
    """Run bwrap once with the namespaces we use: it can be installed yet refused by the kernel."""
    bwrap = find_program("bwrap")
    if bwrap is None:
        return f"bubblewrap (bwrap) not found on PATH: {_INSTALL_HINT}"
    for tool in ("prlimit", "sh"):
        if find_program(tool) is None:
            return f"{tool} not found on PATH (install util-linux / dash)"
    argv = [bwrap, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
    argv += ["--unshare-pid", "--unshare-net", "--cap-drop", "ALL", "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bwrap cannot run here: {error}"
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip().splitlines()
        return f"bwrap cannot create namespaces here: {why[-1] if why else done.returncode}"
    return None


class BwrapSandbox(Sandbox):
    name = "bwrap"

    def __init__(self, *, use_cgroups: bool = True, one_launch: bool = True) -> None:
        """``use_cgroups=False`` runs without cgroups even where they work, ``one_launch=False``
        a staged request in two launches (both for comparison)."""
        reason = self.unavailable_reason()
        if reason is not None:
            raise RuntimeError(reason)
        self._bwrap = _required("bwrap")
        self._prlimit = _required("prlimit")
        self._sh = _required("sh")
        self._one_launch = one_launch
        # The staged launcher needs a shell that takes file descriptors above 9 (dash does not).
        self._bash = find_program("bash")
        self._env = find_program("env")
        self._root = os.geteuid() == 0
        self._cgroups = tuple(probe()[0]) if use_cgroups else ()
        self._cgroup_reason = (
            cgroup_unavailable_reason() if use_cgroups else "turned off by the caller"
        )

    @classmethod
    def unavailable_reason(cls) -> str | None:
        return _probe_bwrap()

    @property
    def isolation(self) -> str:
        if self._cgroup_reason is None:
            return f"bwrap+cgroup({','.join(self._cgroups)})"
        return f"bwrap+rlimit (cgroups unavailable: {self._cgroup_reason})"

    def run(self, request: ExecRequest) -> ExecResult:
        limits = request.limits
        cgroup: RunCgroup | None = None
        if self._cgroups:
            try:
                cgroup = RunCgroup.create(**_cgroup_limits(limits))
            except OSError as error:
                return error_result(f"cannot create the run's cgroup: {error}", isolation="bwrap")
        try:
            result = self._run(request, cgroup)
        except OSError as error:
            # e.g. the cgroup vanished under us: the sandbox failed, not the command.
            result = error_result(f"sandbox failure: {error}", isolation="bwrap")
        finally:
            problem = _empty_and_remove(cgroup) if cgroup is not None else ""
        if problem:
            result = replace(result, sandbox_error=problem)
        return result

    def _run(self, request: ExecRequest, cgroup: RunCgroup | None) -> ExecResult:
        limits = request.limits
        controllers = cgroup.controllers if cgroup is not None else ()
        prefix, applied = prlimit_prefix(
            self._prlimit,
            limits,
            memory="memory" not in controllers,
            processes="pids" not in controllers and not self._root,
        )
        isolation = "bwrap"
        if controllers:
            isolation += f"+cgroup({','.join(controllers)})"
        if applied:
            isolation += f"+rlimit({','.join(applied)})"
        if request.network:
            isolation += "+net"
        try:
            argv = [*prefix, *self._bwrap_argv(request), *request.argv]
        except ValueError as error:
            return error_result(f"sandbox setup: {error}", isolation=isolation)
        if cgroup is not None:
            argv = [*cgroup.join_prefix(self._sh), *argv]

        def watch() -> str | None:
            used = cgroup.cpu_time() if cgroup is not None else None
            if used is not None and limits.cpu_time is not None and used > limits.cpu_time:
                return f"CPU time of the process tree exceeded {limits.cpu_time:g}s"
            return None

        disk = disk_guard(request)
        try:
            seen = supervise(
                argv,
                cwd=request.scratch,
                env={"PATH": os.defpath},
                stdin=request.stdin,
                wall_time=limits.wall_time,
                output_bytes=limits.output_bytes,
                kill_tree=functools.partial(_kill_tree, cgroup),
                watch=either(
                    watch if "cpuacct" in controllers and limits.cpu_time is not None else None,
                    disk.check if disk is not None else None),
            )
        except OSError as error:
            return error_result(f"cannot start the sandbox: {error}", isolation=isolation)
        problem = _setup_failure(seen)
        if problem:
            return error_result(problem, isolation=isolation)
        seen = _unfold_signal(seen)
        # Without cpuacct the CPU time is unknown: bwrap's monitor does not reap the pid-1 reaper,
        # so its rusage holds none of the command's time.
        cpu_time = cgroup.cpu_time() if cgroup is not None else None
        if cgroup is not None and "memory" in controllers:
            memory_exceeded = cgroup.oom_killed() and not seen.timed_out
        else:
            memory_exceeded = "as" in applied and allocation_failed(seen)
        exceeded = disk.exceeded if disk is not None else ""
        timed_out = (
            seen.timed_out
            or bool(seen.watch_reason)
            or cpu_limit_hit(seen, cpu_time=cpu_time, limit=limits.cpu_time)
        )
        return to_result(
            seen,
            isolation=isolation,
            cpu_time=cpu_time,
            limit_exceeded=exceeded,
            timed_out=timed_out,
            memory_exceeded=memory_exceeded and not timed_out,
        )

    # -- a build and its run in one launch -----------------------------------------------------

    def run_staged(self, first: ExecRequest,
                   then: ExecRequest) -> tuple[ExecResult, ExecResult | None]:
        """Both requests in one bubblewrap launch, with the same limits, environment and verdicts
        as two: a launcher (bash) runs ``first``; when it exits 0 the launcher reports it and
        waits; the host then sets the cgroup's memory and process limits to ``then``'s, starts
        ``then``'s wall clock and CPU count and lets the launcher ``exec`` ``then`` under
        ``then``'s CPU and file-size rlimits, its environment and no descriptor of ours. A failed
        first stage ends the launch with its status. Where that cannot hold (no cgroups to
        change, requests that differ in where they run), two launches."""
        mounts = _merged_mounts(first, then)
        if mounts is None or not self._can_stage(first, then):
            return super().run_staged(first, then)
        try:
            cgroup = RunCgroup.create(**_cgroup_limits(first.limits))
        except OSError as error:
            return error_result(f"cannot create the run's cgroup: {error}", isolation="bwrap"), None
        results: tuple[ExecResult, ExecResult | None]
        try:
            results = self._run_staged(replace(first, mounts=mounts), then, cgroup)
        except OSError as error:
            results = error_result(f"sandbox failure: {error}", isolation="bwrap"), None
        finally:
            problem = _empty_and_remove(cgroup)
        if problem:
            done, ran = results
            if ran is None:
                results = replace(done, sandbox_error=problem), None
            else:
                results = done, replace(ran, sandbox_error=problem)
        return results

    def _can_stage(self, first: ExecRequest, then: ExecRequest) -> bool:
        grow = (then.limits.file_size_mb is None and first.limits.file_size_mb is not None) or (
            then.limits.file_size_mb is not None and first.limits.file_size_mb is not None
            and then.limits.file_size_mb > first.limits.file_size_mb)
        return (
            self._one_launch and self._bash is not None and self._env is not None
            and all(c in self._cgroups for c in _STAGE_CONTROLLERS)
            and self._cgroup_reason is None
            and first.cwd == then.cwd and first.scratch == then.scratch
            and first.stdin is None
            and (then.stdin is None or len(then.stdin) <= STAGE_STDIN_MAX)
            and first.network == then.network and first.hostname == then.hostname
            # Without CAP_SYS_RESOURCE the launcher can lower an rlimit, never raise it.
            and not grow
        )

    def _run_staged(self, first: ExecRequest, then: ExecRequest,
                    cgroup: RunCgroup) -> tuple[ExecResult, ExecResult | None]:
        assert self._bash is not None and self._env is not None
        outer, applied_first = prlimit_prefix(self._prlimit, first.limits, memory=False,
                                              processes=False)
        inner, applied_then = prlimit_prefix(self._prlimit, then.limits, memory=False,
                                             processes=False)
        base = "bwrap" + f"+cgroup({','.join(cgroup.controllers)})"
        net = "+net" if first.network else ""
        isolation_first = base + (f"+rlimit({','.join(applied_first)})" if applied_first else "")
        isolation_then = base + (f"+rlimit({','.join(applied_then)})" if applied_then else "")
        read_fd, write_fd = os.pipe()
        try:
            os.set_inheritable(write_fd, True)
            env_words = [f"{key}={value}" for key, value in then.env.items()]
            # The build gets neither our pipe nor stdin; the run gets no descriptor of ours and
            # stdin as a run of its own would: what follows "run" in the pipe (bash's read takes
            # one byte at a time from a pipe, so it leaves the rest), or /dev/null.
            run_stdin = "" if then.stdin is not None else " </dev/null"
            script = (
                f"{shlex.join(first.argv)} </dev/null {write_fd}>&-\n"
                "s=$?\n"
                f'echo "{_STAGE_WORD.decode()} $s" >&{write_fd}\n'
                f"exec {write_fd}>&-\n"
                'read -r go || exit "$s"\n'
                '[ "$go" = run ] || exit "$s"\n'
                f"exec {shlex.join([self._env, '-i', *env_words, *inner, *then.argv])}"
                f"{run_stdin}\n"
            )
            bwrap = self._bwrap_argv(first, also=(then.argv[0], then.env.get("PATH")))
        except BaseException:
            os.close(read_fd)
            os.close(write_fd)
            raise
        argv = [*cgroup.join_prefix(self._sh), *outer, *bwrap, self._bash, "-c", script,
                "codereval-stage"]
        state = _Switch()

        def switch(line: bytes) -> float | None:
            word, _, status = line.partition(b" ")
            if word != _STAGE_WORD or status != b"0":
                return None
            try:
                state.cpu_base = cgroup.cpu_time() or 0.0
                state.oom_base = cgroup.oom_kills()
                cgroup.set_limits(**_cgroup_limits(then.limits))
            except OSError as error:
                state.error = f"cannot apply the run's limits to its cgroup: {error}"
                return None
            state.switched = True
            return then.limits.wall_time

        def watch() -> str | None:
            limit = then.limits.cpu_time
            used = cgroup.cpu_time()
            if state.switched and limit is not None and used is not None \
                    and used - state.cpu_base > limit:
                return f"CPU time of the process tree exceeded {limit:g}s"
            return None

        disk = disk_guard(first, then)
        try:
            seen = supervise(
                argv, cwd=first.scratch, env={"PATH": os.defpath}, stdin=None,
                wall_time=first.limits.wall_time, output_bytes=first.limits.output_bytes,
                kill_tree=functools.partial(_kill_tree, cgroup),
                watch=either(watch if then.limits.cpu_time is not None else None,
                             disk.check if disk is not None else None),
                stage=Stage(read_fd=read_fd, write_fd=write_fd, switch=switch,
                            then_stdin=then.stdin or b""),
                then_output_bytes=then.limits.output_bytes,
            )
        except OSError as error:
            return error_result(f"cannot start the sandbox: {error}",
                                isolation=isolation_first + net), None
        total_cpu = cgroup.cpu_time()
        if seen.first_stage is None:
            # The launch ended in its first stage (failed, timed out, or not let on).
            problem = _setup_failure(seen)
            if problem:
                return error_result(problem, isolation=isolation_first + net), None
            seen = _unfold_signal(seen)
            exceeded = disk.exceeded if disk is not None else ""
            timed_out = seen.timed_out or bool(seen.watch_reason)
            done = to_result(seen, isolation=isolation_first + net, cpu_time=total_cpu,
                             timed_out=timed_out, limit_exceeded=exceeded,
                             memory_exceeded=cgroup.oom_killed() and not timed_out)
            ran = (error_result(state.error, isolation=isolation_then + net)
                   if state.error else None)
            return done, ran
        done = to_result(seen.first_stage, isolation=isolation_first + net,
                         cpu_time=state.cpu_base, timed_out=False, memory_exceeded=False)
        problem = _setup_failure(seen)
        if problem:
            return done, error_result(problem, isolation=isolation_then + net)
        seen = _unfold_signal(seen)
        cpu = None if total_cpu is None else max(total_cpu - state.cpu_base, 0.0)
        exceeded = disk.exceeded if disk is not None else ""
        timed_out = (seen.timed_out or bool(seen.watch_reason)
                     or cpu_limit_hit(seen, cpu_time=cpu, limit=then.limits.cpu_time))
        memory_exceeded = cgroup.oom_killed(since=state.oom_base) and not timed_out
        return done, to_result(seen, isolation=isolation_then + net, cpu_time=cpu,
                               timed_out=timed_out, memory_exceeded=memory_exceeded,
                               limit_exceeded=exceeded)

    def _bwrap_argv(self, request: ExecRequest,
                    also: tuple[str, str | None] | None = None) -> list[str]:
        """``also``: another program (and its PATH) the sandbox must be able to start."""
        limits = request.limits
        argv = [self._bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        # Without a memory cgroup a private tmpfs would be unmetered memory: bound it.
        for private in ("/tmp", "/run"):
            if limits.memory_mb is not None:
                argv += ["--size", str(limits.memory_mb * _MIB)]
            argv += ["--tmpfs", private]
        if "memory" not in self._cgroups and limits.memory_mb is not None:
            # bwrap's /dev is a tmpfs as well, /dev/shm in it: a bounded /dev/shm of its own,
            # and the rest read-only (its device nodes are bind mounts and stay usable).
            argv += ["--size", str(limits.memory_mb * _MIB), "--tmpfs", "/dev/shm",
                     "--remount-ro", "/dev"]
        binds: list[tuple[Path, Path, bool]] = [
            (m.source, m.target, m.writable) for m in request.mounts
        ]
        binds.append((request.scratch, request.scratch, True))
        # A mount at a path the host lacks (the original platform's /home/travis/...) needs a
        # private tmpfs over its deepest existing ancestor: the read-only root has no room.
        virtual = virtual_roots([m.target for m in request.mounts], request.scratch)
        for root in virtual:
            argv += ["--tmpfs", str(root)]
        covered = (*PRIVATE_DIRS, *virtual)
        programs = [(request.argv[0], request.env.get("PATH"))]
        if also is not None:
            programs.append(also)
        for program, path in programs:
            # Already visible through a bind (the scratch dir, when the program was built
            # there; a project environment the runner mounts): a bind of its own would be
            # wider than needed, or hide that one.
            visible = [target for _, target, _ in binds]
            for hidden in _hidden_program_dirs(program, path, covered, visible):
                binds.append((hidden, hidden, False))
        # Parents before children, so a nested mount is not hidden by the one around it.
        for source, target, writable in sorted(binds, key=lambda b: len(b[1].parts)):
            argv += ["--bind" if writable else "--ro-bind", str(source), str(target)]
        argv += ["--chdir", str(request.cwd)]
        argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        if request.hostname:
            argv += ["--hostname", request.hostname]
        if not request.network:
            argv.append("--unshare-net")
        argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv"]
        for key, value in request.env.items():
            argv += ["--setenv", key, value]
        argv.append("--")
        return argv


PRIVATE_DIRS = (Path("/tmp"), Path("/run"))


def _cgroup_limits(limits: Limits) -> dict[str, int | None]:
    """A request's memory and process limits as its cgroup holds them (bwrap's own two
    processes count against the pids limit)."""
    return {
        "memory_bytes": None if limits.memory_mb is None else limits.memory_mb * _MIB,
        "pids_max": None if limits.processes is None else limits.processes + _BWRAP_PROCESSES,
    }


def _kill_tree(cgroup: RunCgroup | None, pid: int, alive: bool) -> None:
    """Everything a launch started: its cgroup's members, then its process tree."""
    if cgroup is not None:
        cgroup.kill_all()
    kill_group_and_descendants(pid, alive=alive)


def _empty_and_remove(cgroup: RunCgroup) -> str:
    """Kill what is left in a finished launch's cgroup and remove it; what went wrong, if
    anything, as the result's sandbox error."""
    survivors = not cgroup.kill_all()
    leftover = not cgroup.remove()
    if not (survivors or leftover):
        return ""
    what = "processes survived the kill" if survivors else "cannot remove the cgroup"
    return f"{what} in {cgroup.dirs}"


@dataclass
class _Switch:
    """What the host did when a staged run's first stage ended."""

    switched: bool = False
    cpu_base: float = 0.0
    oom_base: int = 0
    error: str = ""


def _merged_mounts(first: ExecRequest, then: ExecRequest) -> tuple[Mount, ...] | None:
    """The mounts of both requests, for one launch; None when they disagree about a target."""
    merged = {m.target: m for m in first.mounts}
    for mount in then.mounts:
        known = merged.get(mount.target)
        if known is not None and known != mount:
            return None
        merged[mount.target] = mount
    return tuple(merged.values())


def virtual_roots(targets: list[Path], scratch: Path) -> list[Path]:
    """The existing folders to cover with a private tmpfs so that every mount target can be made.

    For a target the host lacks, that is the parent of its first missing component (for
    ``/home/travis/builds/repos`` on a host without ``/home/travis``: ``/home``). What the tmpfs
    hides is bound back where a mount or the program needs it.
    """
    roots: list[Path] = []
    for target in targets:
        if target.exists() or any(
            target.is_relative_to(p) for p in (*PRIVATE_DIRS, scratch) if p != Path("/")
        ):
            continue
        missing = target
        while not missing.parent.exists():
            missing = missing.parent
        root = missing.parent
        if root == Path("/"):
            raise ValueError(f"cannot mount at {target}: / has no {missing.name}")
        if root not in roots and not any(root.is_relative_to(r) for r in roots):
            roots = [r for r in roots if not r.is_relative_to(root)] + [root]
    return roots


def _hidden_program_dirs(
    program: str, path: str | None, private: tuple[Path, ...] = PRIVATE_DIRS,
    visible: list[Path] | None = None,
) -> list[Path]:
    """Folders under a private tmpfs (/tmp, /run, a virtual root) that the program lives in.

    A checkout or virtualenv under /tmp (a CI clone, `pip install` into /tmp/venv) would vanish
    behind the private tmpfs, and with it the interpreter: its installation is bound back,
    read-only. Only the installation (``<prefix>`` of ``<prefix>/bin/<program>``, else the
    program's own folder), never the top folder under /tmp: that would show the sandboxed
    code whatever else lives beside it (other runs' work trees and results).
    """
    found = shutil.which(program, path=path) if "/" not in program else program
    if found is None:
        return []
    dirs: list[Path] = []
    for candidate in (Path(found).absolute(), Path(found).resolve()):
        if any(candidate.is_relative_to(v) for v in visible or ()):
            continue
        for folder in private:
            if candidate.is_relative_to(folder) and len(candidate.parts) > len(folder.parts) + 1:
                home = candidate.parent
                if home.name == "bin" and len(home.parts) > len(folder.parts) + 1:
                    home = home.parent
                if home not in dirs:
                    dirs.append(home)
    return dirs


def _required(program: str) -> str:
    path = find_program(program)
    if path is None:
        raise RuntimeError(f"{program} not found on PATH")
    return path


def _setup_failure(seen: Supervised) -> str:
    """The sandbox failed before the command ran (bwrap, prlimit or the cgroup join said so)."""
    first = seen.stderr.split(b"\n", 1)[0]
    if seen.exit_code == JOIN_FAILED_STATUS and first == JOIN_FAILED:
        return first.decode()
    if seen.exit_code == 1 and first.startswith(b"bwrap: "):
        return first.decode(errors="replace")
    if seen.exit_code in (126, 127) and first.startswith(b"prlimit: "):
        return first.decode(errors="replace")
    return ""


def _unfold_signal(seen: Supervised) -> Supervised:
    code = seen.exit_code
    if code is None or not 128 < code <= 128 + signal.SIGRTMAX:
        return seen
    return Supervised(
        exit_code=None,
        signal=code - 128,
        wall_time=seen.wall_time,
        rusage_cpu=seen.rusage_cpu,
        stdout=seen.stdout,
        stderr=seen.stderr,
        timed_out=seen.timed_out,
        watch_reason=seen.watch_reason,
        output_truncated=seen.output_truncated,
    )
