"""No isolation: the wall-time limit and the process-group kill, nothing else. For debugging only.

The command runs as this process's user with full access to the filesystem and the network; runs
recorded with isolation "none" say so.
"""

from __future__ import annotations

from codereval.sandbox._common import error_result, remapped_mounts_error, to_result
from codereval.sandbox._supervise import supervise
from codereval.sandbox.base import ExecRequest, ExecResult, Sandbox


class NoSandbox(Sandbox):
    name = "none"

    @classmethod
    def unavailable_reason(cls) -> str | None:
        return None

    def run(self, request: ExecRequest) -> ExecResult:
        problem = remapped_mounts_error(request, self.name)
        if problem:
            return error_result(problem, isolation=self.isolation)
        try:
            seen = supervise(
                request.argv,
                cwd=request.cwd,
                env=dict(request.env),
                stdin=request.stdin,
                wall_time=request.limits.wall_time,
                output_bytes=request.limits.output_bytes,
            )
        except OSError as error:
            return error_result(f"cannot start {request.argv[0]!r}: {error}", isolation=self.name)
        return to_result(
            seen,
            isolation=self.isolation,
            cpu_time=seen.rusage_cpu,
            timed_out=seen.timed_out,
            memory_exceeded=False,
        )
