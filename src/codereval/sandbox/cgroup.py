"""Per-run cgroups (v1): memory and process limits that hold for root, exact CPU time, tree kill.

Each run gets a child cgroup in every usable controller, below this process's own cgroup (so a
nested memory limit of ours still applies): ``<mount>/<own path>/codereval/run-<pid>-<n>``. The
sandboxed command joins them before anything of the sample runs: a tiny ``sh`` writes its own pid
into each ``cgroup.procs`` and then execs the rest of the command line, so every descendant is
born inside. Afterwards everything left in the cgroup is killed and the directories are removed.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import shlex
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

CGROUP_MOUNT = Path("/sys/fs/cgroup")
# memory and pids do the limiting; cpuacct measures the CPU time of the whole tree; freezer holds
# the tree still while it is killed (see RunCgroup.kill_all).
CONTROLLERS = ("memory", "pids", "cpuacct", "freezer")
# What the joining shell prints (and its exit status) when it cannot enter the cgroup.
JOIN_FAILED = b"codereval-sandbox: cannot join cgroup"
JOIN_FAILED_STATUS = 125

_counter = itertools.count()
# How long a launch's processes may take to go once killed. A sample's exit is fast on a
# quiet host; on one running a JVM build and two evaluations beside the suite, a killed
# tree outlived 3 s (a passing sample then read as infra_error). Waiting longer costs
# nothing when they go at once.
_KILL_PATIENCE = 10.0
_FREEZE_PATIENCE = 0.5
_REMOVE_PATIENCE = 1.0


def _own_paths() -> dict[str, str]:
    """controller -> our cgroup path in that hierarchy (v1 lines of /proc/self/cgroup)."""
    paths: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(","):
            if controller:
                paths[controller] = path
    return paths


def _base(controller: str, own: dict[str, str]) -> Path | None:
    mount = CGROUP_MOUNT / controller
    if not (mount / "cgroup.procs").exists():
        return None
    nested = mount / own.get(controller, "/").lstrip("/")
    # Inside a cgroup namespace the hierarchy may be mounted at our own cgroup already.
    return (nested if nested.is_dir() else mount) / "codereval"


@functools.cache
def probe() -> tuple[dict[str, Path], str]:
    """The controllers we can create run cgroups in (controller -> parent dir), and, for those we
    cannot use, why. Probed once per process by creating and removing a cgroup."""
    try:
        own = _own_paths()
    except OSError as error:
        return {}, f"cannot read /proc/self/cgroup: {error}"
    usable: dict[str, Path] = {}
    problems: list[str] = []
    for controller in CONTROLLERS:
        base = _base(controller, own)
        if base is None:
            problems.append(f"no v1 {controller} hierarchy at {CGROUP_MOUNT / controller}")
            continue
        probe_dir = base / f"probe-{os.getpid()}-{next(_counter)}"
        try:
            base.mkdir(exist_ok=True)
            probe_dir.mkdir()
            probe_dir.rmdir()
        except OSError as error:
            problems.append(f"{controller}: cannot create a cgroup in {base} ({error.strerror})")
            continue
        usable[controller] = base
    _sweep(usable)
    return usable, "; ".join(problems)


def _read(path: str) -> str:
    # Plain descriptors: pathlib's text wrappers cost more than the kernel's answer, and these
    # files are read several times per sample.
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 1 << 16).decode()
    finally:
        os.close(fd)


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _sweep(usable: dict[str, Path]) -> None:
    """Remove run cgroups left by supervisors that died (their pid is in the name), and kill
    what is still in them. A supervisor killed while it held its cgroup frozen (kill_all
    freezes, kills, thaws) leaves the members frozen, where not even SIGKILL ends them; the
    same freeze, kill and thaw ends them here, and their cgroups go with them."""
    stale: dict[str, dict[str, Path]] = {}
    for controller, base in usable.items():
        for entry in base.glob("run-*"):
            owner = entry.name.split("-")[1]
            if owner.isdigit() and not Path(f"/proc/{owner}").exists():
                stale.setdefault(entry.name, {})[controller] = entry
    for dirs in stale.values():
        left = RunCgroup(dirs, memory_bytes=None)
        with contextlib.suppress(OSError):
            left.kill_all()
            left.remove()


@dataclass(frozen=True)
class RunCgroup:
    """One run's cgroups, one directory per controller."""

    dirs: dict[str, Path]
    memory_bytes: int | None
    _files: dict[tuple[str, str], str] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def create(cls, *, memory_bytes: int | None, pids_max: int | None) -> RunCgroup:
        """Create and configure the run's cgroups; OSError if the kernel refuses."""
        usable, _ = probe()
        name = f"run-{os.getpid()}-{next(_counter)}"
        made: dict[str, Path] = {}
        group = cls(made, memory_bytes if "memory" in usable else None)
        try:
            for controller, base in usable.items():
                path = base / name
                path.mkdir()
                made[controller] = path
            if memory_bytes is not None and "memory" in made:
                memory = made["memory"]
                (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
                # Without a memory+swap limit a hog could page out to swap and keep going.
                memsw = memory / "memory.memsw.limit_in_bytes"
                if memsw.exists():
                    memsw.write_text(str(memory_bytes))
            if pids_max is not None and "pids" in made:
                (made["pids"] / "pids.max").write_text(str(pids_max))
        except OSError:
            group.remove()
            raise
        return group

    def set_limits(self, *, memory_bytes: int | None, pids_max: int | None) -> None:
        """Change the limits of a cgroup in use (between the stages of a staged run). Lowering
        the memory limit makes the kernel reclaim what is charged above it (page cache of the
        first stage's files); OSError if it cannot."""
        if "memory" in self.dirs:
            memory = self.dirs["memory"]
            value = str(memory_bytes) if memory_bytes is not None else "-1"
            current = int(_read(self.file("memory", "memory.limit_in_bytes")))
            files = ["memory.limit_in_bytes"]
            if (memory / "memory.memsw.limit_in_bytes").exists():
                # memory+swap may never be below memory: lower memory first, raise it last.
                lowering = memory_bytes is not None and memory_bytes < current
                files = (["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"] if lowering
                         else ["memory.memsw.limit_in_bytes", "memory.limit_in_bytes"])
            for name in files:
                _write(self.file("memory", name), value)
        if "pids" in self.dirs:
            _write(self.file("pids", "pids.max"), str(pids_max) if pids_max is not None else "max")

    @property
    def controllers(self) -> tuple[str, ...]:
        return tuple(c for c in CONTROLLERS if c in self.dirs)

    def join_prefix(self, sh: str) -> list[str]:
        """Words that put the command that follows them into this cgroup, then exec it."""
        joins = " && ".join(
            f"echo $$ > {shlex.quote(str(path / 'cgroup.procs'))}" for path in self.dirs.values()
        )
        script = (
            f"{{ {joins}; }} 2>/dev/null || {{ echo '{JOIN_FAILED.decode()}' >&2; "
            f'exit {JOIN_FAILED_STATUS}; }}; exec "$@"'
        )
        return [sh, "-c", script, "codereval-join"]

    def file(self, controller: str, name: str) -> str:
        """The path of one of the cgroup's files, as a string (cached: read per sample)."""
        key = (controller, name)
        path = self._files.get(key)
        if path is None:
            path = self._files[key] = str(self.dirs[controller] / name)
        return path

    def pids(self) -> list[int]:
        for controller in ("pids", "memory", "cpuacct"):
            if controller in self.dirs:
                return [int(word) for word in _read(self.file(controller, "cgroup.procs")).split()]
        return []

    def kill_all(self) -> bool:
        """SIGKILL every process in the cgroup until none is left. False if some survived.

        Pids read from cgroup.procs are only safe to signal while their processes cannot exit:
        one that exits (or is reaped when its namespace's init dies) frees its pid, which on a
        busy host with a small pid_max may already belong to an unrelated process by the time
        the signal is sent. So the cgroup is frozen first, its members read and killed while
        frozen, then thawed so the kills take effect. Without a freezer, plain kills."""
        give_up = time.monotonic() + _KILL_PATIENCE
        pause = 0.001
        while True:
            try:
                pids = self.pids()
            except FileNotFoundError:
                return True
            if not pids:
                return True
            if time.monotonic() > give_up:
                return False
            frozen = self._freeze()
            try:
                for pid in self.pids() if frozen else pids:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
            except FileNotFoundError:
                return True
            finally:
                if frozen is not None:
                    self._thaw()
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def _freeze(self) -> bool | None:
        """Freeze the cgroup: True once every member is frozen, False if that did not happen in
        time (members may still run), None without a freezer."""
        if "freezer" not in self.dirs:
            return None
        state = self.file("freezer", "freezer.state")
        try:
            _write(state, "FROZEN")
        except OSError:
            return None
        give_up = time.monotonic() + _FREEZE_PATIENCE
        pause = 0.0005
        while True:
            try:
                if _read(state).strip() == "FROZEN":
                    return True
            except OSError:
                return False
            if time.monotonic() > give_up:
                # e.g. a member in uninterruptible sleep: kill what is there rather than wait.
                return False
            time.sleep(pause)
            pause = min(pause * 2, 0.01)

    def _thaw(self) -> None:
        with contextlib.suppress(OSError):
            _write(self.file("freezer", "freezer.state"), "THAWED")

    def cpu_time(self) -> float | None:
        """CPU seconds used by every process that ever ran in the cgroup."""
        if "cpuacct" not in self.dirs:
            return None
        return int(_read(self.file("cpuacct", "cpuacct.usage"))) / 1e9

    def oom_killed(self, *, since: int = 0) -> bool:
        """True when the kernel OOM-killed a process of this cgroup (memory limit reached) since
        its count was ``since`` (what ``oom_kills`` said when a reused cgroup was reset)."""
        return self.oom_kills() > since

    def oom_kills(self) -> int:
        """How many OOM kills the cgroup has seen (never reset by the kernel)."""
        if "memory" not in self.dirs:
            return 0
        for line in _read(self.file("memory", "memory.oom_control")).splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        # Kernels before 4.13 do not count OOM kills: fall back to "the limit was hit" (reset
        # to 0 by ``reset``).
        return int(_read(self.file("memory", "memory.failcnt")))

    def memory_usage(self) -> int:
        """Bytes still charged to the cgroup (page cache and kernel memory outlive processes)."""
        if "memory" not in self.dirs:
            return 0
        return int(_read(self.file("memory", "memory.usage_in_bytes")))

    def reset(self) -> int:
        """Ready an emptied cgroup for its next run: CPU time and the memory limit's hit count
        back to zero. Returns the OOM-kill count to pass to ``oom_killed(since=...)``. OSError
        when the kernel refuses (the caller makes a new cgroup instead)."""
        if "cpuacct" in self.dirs:
            _write(self.file("cpuacct", "cpuacct.usage"), "0")
        if "memory" in self.dirs:
            _write(self.file("memory", "memory.failcnt"), "0")
        return self.oom_kills()

    def remove(self) -> bool:
        """Remove the directories (children first). False if one could not be removed."""
        ok = True
        for path in self.dirs.values():
            give_up = time.monotonic() + _REMOVE_PATIENCE
            while True:
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    # Busy: a dying process has not left yet.
                    if time.monotonic() > give_up:
                        ok = False
                        break
                    time.sleep(0.005)
        return ok


def cgroup_unavailable_reason() -> str | None:
    """None when memory and pids cgroups can be created here, else why not."""
    usable, problems = probe()
    if "memory" in usable and "pids" in usable:
        return None
    return problems or "memory and pids cgroups are not available"
