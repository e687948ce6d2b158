"""The ray executor against the local ones, on the same samples, in the same run.

A real Ray cluster on loopback (LocalRayCluster: a head with no CPUs of its own, so it only
coordinates, and 1 or 2 worker nodes of 1 CPU each, every node a `ray start` of its own) runs
the same samples as `codereval evaluate` does locally with the same number of samples at once:
ray with 1 worker beside --jobs 1, ray with 2 workers beside --jobs 2; each side fresh (a new
sandboxed process per sample) and warm (forked from a sandboxed worker; on Ray, the nodes'
own workers, --node-executor warm). Rounds are interleaved and the best of each kept (the
machine is shared, so load comes and goes).

Each evaluation also has a fixed cost (connecting, starting node actors, preparing runners),
measured as a re-run with every sample already finished; the per-sample overhead Ray adds is
what remains of the difference once that is taken out.

Samples are HumanEval references (a program per sample: the shortest real samples, so the
overhead shows most).

    .venv/bin/python bench/ray_executor.py [--tasks 164] [--repeat 1] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from codereval.api import evaluate, load_benchmark
from codereval.executors.ray_local import LocalRayCluster
from codereval.model import Sample, Verdict

KINDS = ("local fresh", "local warm", "ray fresh", "ray warm")


@dataclass
class Timing:
    wall: float = float("inf")
    fixed: float = float("inf")
    passed: int = 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=164, help="HumanEval tasks (of 164)")
    parser.add_argument("--repeat", type=int, default=1, help="samples per task")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (best kept)")
    parser.add_argument("--sandbox", default="auto")
    args = parser.parse_args()

    full = load_benchmark("humaneval")
    bench = load_benchmark(full.tasks[: args.tasks])
    samples = [
        Sample(task_id=t.task_id, index=i, code=t.reference, raw=t.reference)
        for t in bench.tasks
        for i in range(args.repeat)
    ]
    n = len(samples)
    root = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    rows: list[tuple[int, dict[str, Timing]]] = []
    isolation = ""

    def timed(label: str, **how: object) -> Callable[[Timing], None]:
        def measure(best: Timing) -> None:
            nonlocal isolation
            run_dir = root / label
            start = time.perf_counter()
            run = evaluate(
                bench, samples, run_dir=run_dir, sandbox=args.sandbox, rerun=True, **how  # type: ignore[arg-type]
            )
            wall = time.perf_counter() - start
            start = time.perf_counter()
            evaluate(bench, samples, run_dir=run_dir, sandbox=args.sandbox, **how)  # type: ignore[arg-type]
            fixed = time.perf_counter() - start
            isolation = run.isolation
            if wall < best.wall:
                best.wall, best.passed = wall, run.counts.get(Verdict.PASSED.value, 0)
            best.fixed = min(best.fixed, fixed)

        return measure

    # Untimed warm-up: the interpreter's page cache, the toolchain probes.
    evaluate(bench, samples[: min(n, 8)], run_dir=root / "warm", sandbox=args.sandbox)
    for workers in (1, 2):
        timings = {how: Timing() for how in KINDS}
        with LocalRayCluster(workers=workers, head_cpus=0, worker_cpus=1) as cluster:
            runs = {
                "local fresh": timed(f"fresh-j{workers}", executor="fresh", jobs=workers),
                "local warm": timed(f"warm-j{workers}", executor="warm", jobs=workers),
                "ray fresh": timed(f"ray-fresh-w{workers}", executor="ray",
                                   ray_address=cluster.address, node_executor="fresh"),
                "ray warm": timed(f"ray-warm-w{workers}", executor="ray",
                                  ray_address=cluster.address, node_executor="warm"),
            }
            for _ in range(args.rounds):
                for how, measure in runs.items():
                    measure(timings[how])
        rows.append((workers, timings))

    print(f"\nHumanEval references: {len(bench.tasks)} tasks x {args.repeat} = {n} samples; "
          f"isolation {isolation}; {os.cpu_count()} cores; best of {args.rounds} rounds; "
          f"load average {os.getloadavg()[0]:.1f}\n")
    print(f"{'':36} {'wall s':>7} {'fixed s':>8} {'samples/s':>10} {'ms/sample':>10} "
          f"{'passed':>8}  vs local fresh")
    for workers, timings in rows:
        base = timings["local fresh"]
        for how, t in timings.items():
            where = (f"--jobs {workers}" if how.startswith("local") else
                     f"{workers} node{'s' if workers > 1 else ''} x 1 CPU")
            label = f"{how}, {where}"
            print(f"{label:36} {t.wall:7.2f} {t.fixed:8.2f} {n / t.wall:10.2f} "
                  f"{1000 * t.wall / n:10.1f} {t.passed:>4}/{n}  {base.wall / t.wall:5.2f}x")
        for kind in ("fresh", "warm"):
            local, remote = timings[f"local {kind}"], timings[f"ray {kind}"]
            steady_local = (local.wall - local.fixed) / n
            steady_ray = (remote.wall - remote.fixed) / n
            added = 1000 * (steady_ray - steady_local) * workers
            print(f"  ray {kind} adds per sample (fixed cost out, per CPU): {added:+.1f} ms of "
                  f"{1000 * steady_local * workers:.1f} ms; fixed cost "
                  f"{remote.fixed - local.fixed:+.2f} s per evaluation")
        print()
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
