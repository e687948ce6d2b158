"""Pieces the backends share: request checks and turning what the supervisor saw into a result."""

from __future__ import annotations

import signal

from codereval.sandbox._supervise import Supervised
from codereval.sandbox.base import ExecRequest, ExecResult

# Words a program prints when an allocation fails under RLIMIT_AS (Python, C++, C, the JVM).
_ALLOCATION_FAILURES = (
    b"MemoryError",
    b"std::bad_alloc",
    b"Cannot allocate memory",
    b"java.lang.OutOfMemoryError",
    b"out of memory",
)


def remapped_mounts_error(request: ExecRequest, backend: str) -> str:
    """Backends without a mount namespace can only offer a mount at its own path."""
    moved = [m for m in request.mounts if m.source.resolve() != m.target.resolve()]
    if not moved:
        return ""
    first = moved[0]
    return (
        f"sandbox {backend!r} cannot mount {first.source} at {first.target} (no mount namespace); "
        "use target == source or the bwrap sandbox"
    )


def error_result(message: str, *, isolation: str) -> ExecResult:
    return ExecResult(
        exit_code=None,
        signal=None,
        wall_time=0.0,
        cpu_time=None,
        stdout=b"",
        stderr=b"",
        isolation=isolation,
        sandbox_error=message,
    )


def cpu_limit_hit(seen: Supervised, *, cpu_time: float | None, limit: float | None) -> bool:
    """RLIMIT_CPU ends a process with SIGXCPU (soft limit) or SIGKILL (hard limit)."""
    if limit is None:
        return False
    if seen.signal == signal.SIGXCPU:
        return True
    return seen.signal == signal.SIGKILL and cpu_time is not None and cpu_time >= limit * 0.95


def allocation_failed(seen: Supervised) -> bool:
    """Under RLIMIT_AS a hog is not killed: its allocation fails and it says so on stderr."""
    if seen.exit_code in (None, 0):
        return seen.signal == signal.SIGABRT and b"bad_alloc" in seen.stderr
    return any(word in seen.stderr for word in _ALLOCATION_FAILURES)


def to_result(
    seen: Supervised,
    *,
    isolation: str,
    cpu_time: float | None,
    timed_out: bool,
    memory_exceeded: bool,
    limit_exceeded: str = "",
) -> ExecResult:
    return ExecResult(
        exit_code=seen.exit_code,
        signal=seen.signal,
        wall_time=seen.wall_time,
        cpu_time=cpu_time,
        stdout=seen.stdout,
        stderr=seen.stderr,
        # A run stopped for another limit (it wrote too much to disk) is that, whatever else
        # its end looked like: not a timeout, not out of memory.
        timed_out=timed_out and not limit_exceeded,
        memory_exceeded=memory_exceeded and not limit_exceeded,
        output_truncated=seen.output_truncated,
        isolation=isolation,
        limit_exceeded=limit_exceeded,
    )
