"""The sandbox interface: run one untrusted command with limits, and say what isolation was used.

Every backend (bubblewrap + cgroups, rlimits only, none) implements ``Sandbox`` and passes the
same conformance suite (tests/test_sandbox_conformance.py).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_DISK_MB = 4096


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Resource limits for one run. ``None`` means no limit of that kind."""

    wall_time: float = 10.0
    cpu_time: float | None = None
    memory_mb: int | None = 2048
    processes: int | None = 256
    file_size_mb: int | None = 64
    # What the run may write to disk in all (files it creates or changes under its writable
    # folders); the file-size limit caps one file only (see codereval.sandbox.disk).
    disk_mb: int | None = DEFAULT_DISK_MB
    # Captured output beyond this is dropped (the tail is what verdicts need).
    output_bytes: int = 1 << 20
    # Where no memory cgroup is available, memory_mb is enforced as an address-space limit
    # (RLIMIT_AS). JVMs reserve far more address space than they use: the Java runner sets False
    # and limits the heap with -Xmx instead.
    address_space: bool = True


@dataclass(frozen=True, kw_only=True)
class Mount:
    """A host path made visible inside the sandbox. Read-only unless ``writable``."""

    source: Path
    target: Path
    writable: bool = False


@dataclass(frozen=True, kw_only=True)
class ProjectPreload:
    """The project's own modules a warm worker may import before forking (see
    sandbox.warm): ``modules``, from ``root`` (put last on ``sys.path`` while they are
    imported, as the official tests append it) with ``cwd`` the working directory; never
    one of ``banned`` (the files samples change), which the worker checks after each import."""

    root: str
    cwd: str
    modules: tuple[str, ...]
    banned: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ExecRequest:
    argv: tuple[str, ...]
    cwd: Path
    # The only place the command may write (plus anything mounted writable).
    scratch: Path
    env: dict[str, str] = field(default_factory=dict)
    mounts: tuple[Mount, ...] = ()
    stdin: bytes | None = None
    limits: Limits = Limits()
    network: bool = False
    # The host name the command sees (sandboxes with their own UTS namespace); None keeps it.
    hostname: str | None = None


@dataclass(frozen=True, kw_only=True)
class ExecResult:
    exit_code: int | None
    signal: int | None
    wall_time: float
    cpu_time: float | None
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    memory_exceeded: bool = False
    output_truncated: bool = False
    # What isolation was really applied, e.g. "bwrap+cgroup", "rlimit", "none".
    isolation: str = ""
    # Set when the sandbox itself failed (not the command): the outcome is infra_error.
    sandbox_error: str = ""
    # Why the sandbox stopped the command for a limit other than time and memory (it wrote
    # too much to disk): the outcome is a runtime_error saying so.
    limit_exceeded: str = ""


class Sandbox(ABC):
    """Runs commands in isolation. Implementations must be safe to call from several threads."""

    name: str = ""

    @classmethod
    @abstractmethod
    def unavailable_reason(cls) -> str | None:
        """None when this backend works on this machine, else why not (one line, with a fix)."""

    @abstractmethod
    def run(self, request: ExecRequest) -> ExecResult:
        """Run ``request.argv`` to completion or to its limits; kill every process it started."""

    def run_staged(self, first: ExecRequest,
                   then: ExecRequest) -> tuple[ExecResult, ExecResult | None]:
        """Run ``first`` (a build) and, only if it succeeded, ``then`` (what it built) in the same
        scratch directory; ``None`` in place of ``then``'s result when it did not run. Each
        request keeps its own limits, environment and output, and each result says what
        happened in its own stage, exactly as two ``run`` calls would. Backends may do both in
        one launch (bubblewrap does, which saves a sandbox start per compiled sample); this
        default makes two."""
        done = self.run(first)
        if not succeeded(done):
            return done, None
        return done, self.run(then)

    @property
    def isolation(self) -> str:
        return self.name


def succeeded(result: ExecResult) -> bool:
    """Exit status 0 within the limits, and the sandbox did its part."""
    return (result.exit_code == 0 and not result.timed_out and not result.memory_exceeded
            and not result.sandbox_error and not result.limit_exceeded)
