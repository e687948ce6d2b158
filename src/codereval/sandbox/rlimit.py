"""Resource limits only (the fallback where bubblewrap or cgroups are missing).

Limits are applied by running the command under util-linux ``prlimit``, which sets them on itself
and then execs the command: no ``preexec_fn`` (unsafe with threads) and no shell. What this backend
does not do, and the conformance suite lists as expected failures: no filesystem or network
isolation, no process limit for root (RLIMIT_NPROC counts per user and root is exempt), daemons that
leave the process group survive, and memory is limited by address space (RLIMIT_AS), which JVMs
cannot live with (``Limits.address_space=False`` leaves memory to the caller, e.g. ``-Xmx``).
"""

from __future__ import annotations

import math
import os

from codereval.sandbox._common import (
    allocation_failed,
    cpu_limit_hit,
    error_result,
    remapped_mounts_error,
    to_result,
)
from codereval.sandbox._supervise import find_program, supervise
from codereval.sandbox.base import ExecRequest, ExecResult, Limits, Sandbox
from codereval.sandbox.disk import disk_guard

_MIB = 1 << 20


def prlimit_prefix(
    prlimit: str, limits: Limits, *, memory: bool, processes: bool
) -> tuple[list[str], list[str]]:
    """The ``prlimit ... --`` words that apply ``limits``, and the names of the limits applied.

    ``memory``: limit the address space to ``limits.memory_mb`` (when the request allows it);
    ``processes``: apply RLIMIT_NPROC (pointless for root).
    """
    words = [prlimit, "--core=0"]
    applied: list[str] = []
    if limits.cpu_time is not None:
        soft = max(1, math.ceil(limits.cpu_time))
        # Soft limit: SIGXCPU; the hard one a second later: SIGKILL, for those who catch SIGXCPU.
        words.append(f"--cpu={soft}:{soft + 1}")
        applied.append("cpu")
    if limits.file_size_mb is not None:
        words.append(f"--fsize={limits.file_size_mb * _MIB}")
        applied.append("fsize")
    if processes and limits.processes is not None:
        words.append(f"--nproc={limits.processes}")
        applied.append("nproc")
    if memory and limits.memory_mb is not None and limits.address_space:
        words.append(f"--as={limits.memory_mb * _MIB}")
        applied.append("as")
    words.append("--")
    return words, applied


class RlimitSandbox(Sandbox):
    name = "rlimit"

    def __init__(self) -> None:
        prlimit = find_program("prlimit")
        if prlimit is None:
            raise RuntimeError(self.unavailable_reason())
        self._prlimit = prlimit

    @classmethod
    def unavailable_reason(cls) -> str | None:
        if find_program("prlimit") is None:
            return "prlimit not found (install util-linux: apt-get install util-linux)"
        return None

    def run(self, request: ExecRequest) -> ExecResult:
        limits = request.limits
        prefix, applied = prlimit_prefix(
            self._prlimit, limits, memory=True, processes=os.geteuid() != 0
        )
        isolation = f"rlimit({','.join(applied)})" if applied else "rlimit()"
        problem = remapped_mounts_error(request, self.name)
        if problem:
            return error_result(problem, isolation=isolation)
        disk = disk_guard(request)
        try:
            seen = supervise(
                [*prefix, *request.argv],
                cwd=request.cwd,
                env=dict(request.env),
                stdin=request.stdin,
                wall_time=limits.wall_time,
                output_bytes=limits.output_bytes,
                watch=disk.check if disk is not None else None,
            )
        except OSError as error:
            return error_result(f"cannot start prlimit: {error}", isolation=isolation)
        if seen.exit_code in (126, 127) and seen.stderr.startswith(b"prlimit: failed to execute"):
            # The command itself could not be started: that is our problem, not the sample's.
            message = seen.stderr.decode(errors="replace").strip()
            return error_result(message, isolation=isolation)
        exceeded = disk.exceeded if disk is not None else ""
        return to_result(
            seen,
            isolation=isolation,
            cpu_time=seen.rusage_cpu,
            timed_out=seen.timed_out
            or cpu_limit_hit(seen, cpu_time=seen.rusage_cpu, limit=limits.cpu_time),
            memory_exceeded="as" in applied and allocation_failed(seen),
            limit_exceeded=exceeded,
        )
