"""Cost of one sandboxed launch, per backend, against a plain subprocess.

Runs N launches of ``true`` and of ``python3 -c pass`` with: plain ``subprocess.run`` (the
baseline), the ``none``, ``rlimit`` and ``bwrap`` backends (bwrap once without and once with
per-run cgroups), and prints mean and median milliseconds per launch and the overhead over the
baseline, in one table.

    .venv/bin/python bench/sandbox_overhead.py [-n 50]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from codereval.sandbox import ExecRequest, Limits, Sandbox, sandbox_class
from codereval.sandbox.bwrap import BwrapSandbox

COMMANDS: dict[str, tuple[str, ...]] = {
    "true": ("true",),
    "python3 -c pass": (sys.executable, "-c", "pass"),
}


def _sandboxes() -> dict[str, Sandbox | None]:
    """Label -> backend (None = plain subprocess). Backends this machine lacks are skipped."""
    chosen: dict[str, Sandbox | None] = {"subprocess (baseline)": None}
    for name in ("none", "rlimit"):
        cls = sandbox_class(name)
        if cls.unavailable_reason() is None:
            chosen[name] = cls()
    if BwrapSandbox.unavailable_reason() is None:
        chosen["bwrap (no cgroup)"] = BwrapSandbox(use_cgroups=False)
        with_cgroups = BwrapSandbox()
        chosen[with_cgroups.isolation.split(" ")[0]] = with_cgroups
    return chosen


def _launcher(sandbox: Sandbox | None, argv: tuple[str, ...], scratch: Path) -> Callable[[], None]:
    if sandbox is None:

        def plain() -> None:
            subprocess.run(argv, cwd=scratch, capture_output=True, check=True)

        return plain
    request = ExecRequest(
        argv=argv,
        cwd=scratch,
        scratch=scratch,
        env={"PATH": "/usr/bin:/bin"},
        limits=Limits(wall_time=30, cpu_time=10),
    )

    def sandboxed() -> None:
        result = sandbox.run(request)
        if result.exit_code != 0 or result.sandbox_error:
            raise SystemExit(f"launch failed: {result}")

    return sandboxed


def _measure(launch: Callable[[], None], count: int) -> list[float]:
    launch()  # warm caches (bwrap's probe, page cache)
    times = []
    for _ in range(count):
        started = time.perf_counter()
        launch()
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=50, help="launches per cell (default 50)")
    args = parser.parse_args()
    sandboxes = _sandboxes()
    load = os.getloadavg()[0]
    print(f"{args.n} launches per cell; times in ms per launch; load average {load:.1f}")
    print(f"{'command':<16} {'sandbox':<38} {'mean':>7} {'median':>7} {'overhead':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        for label, argv in COMMANDS.items():
            baseline = 0.0
            for name, sandbox in sandboxes.items():
                times = _measure(_launcher(sandbox, argv, scratch), args.n)
                median = statistics.median(times)
                if sandbox is None:
                    baseline = median
                print(
                    f"{label:<16} {name:<38} {statistics.mean(times):7.2f} {median:7.2f} "
                    f"{median - baseline:+8.2f}"
                )


if __name__ == "__main__":
    main()
