"""Java per sample, side by side: javac + java as before the warm compiler, against ours.

Every row evaluates the same mini-java samples (reference, trivial and non-compiling ones, x
``--repeat``) through JavaProjectRunner in the same sandbox, from ``--jobs`` threads:

* javac + java (baseline): a ``javac`` process per sample, then the test in a fresh JVM with
  no archive beyond the JDK's own;
* ours, no CDS: the warm compiler service, then the same fresh JVM;
* ours, CDS: the warm compiler, then a fresh JVM with the environment's class-data sharing
  archive (codereval.java.cds);
* ours, + warm worker: the same, the JVM exec'd from a warm worker's fork (no sandbox of its
  own to set up);
* ours, + JVM during compile: the same JVM started before the compile and given the marker
  (and so its test) once the classes are there, as ``codereval evaluate`` runs it by default.

Rows are interleaved, best of ``--rounds``; each evaluation's preparation (environment,
archives, compiler start) is done before its clock starts. Verdicts must be identical across
rows, sample by sample.

    .venv/bin/python bench/java_executor.py [--rounds 3] [--repeat 2] [--jobs 1,2]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from codereval.benchmarks import builtin_dir
from codereval.benchmarks.samples import load_samples
from codereval.families.codereval.records import load_records
from codereval.java.compiler import JavaCompiler, PlainJavac, WarmJavac
from codereval.runners.base import RunContext
from codereval.runners.java import JavaProjectRunner
from codereval.sandbox import get_sandbox
from codereval.sandbox.base import Limits
from codereval.sandbox.warm import WarmPool

KINDS = ("reference", "trivial", "broken")
# (compiler, class-data sharing, test JVM from a warm worker's fork, JVM started during compile)
ROWS: dict[str, tuple[Callable[[], JavaCompiler], bool, bool, bool]] = {
    "javac + java (baseline)": (PlainJavac, False, False, False),
    "ours: warm javac, fresh JVM, no CDS": (lambda: WarmJavac(pool_size=1), False, False, False),
    "ours: warm javac, fresh JVM + CDS": (lambda: WarmJavac(pool_size=1), True, False, False),
    "ours: + JVM from warm worker": (lambda: WarmJavac(pool_size=1), True, True, False),
    "ours: + JVM starts during compile (default)": (
        lambda: WarmJavac(pool_size=1), True, True, True),
}


def evaluate(row: str, ctx: RunContext, *, jobs: int, repeat: int) -> tuple[float, list[str]]:
    """(wall seconds for the samples, their verdicts in order)."""
    make, sharing, warm, prestart = ROWS[row]
    workers = (WarmPool(sandbox=ctx.sandbox, root=ctx.work_root / "warm", max_workers=2 * jobs + 2)
            if warm else None)
    ctx = dataclasses.replace(ctx, warm=workers)
    mini = builtin_dir("mini_java")
    tasks = {t.task_id: t for t in load_records(mini / "records.json")}
    samples = [s for s in load_samples(mini / "samples.jsonl") if s.model in KINDS] * repeat
    runner = JavaProjectRunner(compiler=make(), class_sharing=sharing, prestart=prestart)
    runner.prepare(list(tasks.values()), ctx)
    # The warm service's first compiles warm its JIT: a run of any length pays them once.
    for sample in samples[:3]:
        runner.run(tasks[sample.task_id], sample, ctx)
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        outcomes = list(pool.map(lambda s: runner.run(tasks[s.task_id], s, ctx), samples))
    elapsed = time.monotonic() - started
    runner.close()
    if workers is not None:
        workers.close()
    return elapsed, [o.verdict.value for o in outcomes]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--jobs", default="1,2")
    parser.add_argument("--sandbox", default="auto")
    args = parser.parse_args()
    job_counts = [int(j) for j in args.jobs.split(",")]
    box = get_sandbox(args.sandbox)
    best: dict[tuple[str, int], float] = {}
    verdicts: dict[str, list[str]] = {}
    loads = [os.getloadavg()[0]]
    n = 0
    with tempfile.TemporaryDirectory(prefix="bench-java-") as work:
        ctx = RunContext(sandbox=box, limits=Limits(wall_time=20.0), work_root=Path(work),
                         env_root=Path(work) / "envs",
                         projects_dir=builtin_dir("mini_java") / "projects.toml")
        for _ in range(args.rounds):
            for jobs in job_counts:
                for row in ROWS:
                    elapsed, got = evaluate(row, ctx, jobs=jobs, repeat=args.repeat)
                    n = len(got)
                    best[row, jobs] = min(best.get((row, jobs), elapsed), elapsed)
                    verdicts.setdefault(row, got)
                    if got != verdicts[row]:
                        verdicts[row] = []  # differed between rounds: reported below
                    loads.append(os.getloadavg()[0])
    same = len({tuple(v) for v in verdicts.values()}) == 1 and all(verdicts.values())
    print(f"Java mini benchmark: {n} samples per evaluation ({', '.join(KINDS)} x {args.repeat}); "
          f"sandbox {box.isolation}; best of {args.rounds} interleaved rounds; "
          f"load average {min(loads):.1f}-{max(loads):.1f}")
    print(f"verdicts identical across rows and rounds, sample by sample: {same}")
    baseline = {jobs: best["javac + java (baseline)", jobs] for jobs in job_counts}
    print(f"\n{'':44}" + "".join(f"{f'--jobs {j}':>30}" for j in job_counts))
    print(f"{'':44}" + "".join(f"{'ms/sample  samples/s  vs base':>30}" for _ in job_counts))
    for row in ROWS:
        cells = []
        for jobs in job_counts:
            wall = best[row, jobs]
            cells.append(f"{wall / n * 1000:9.0f} {n / wall:10.2f} {baseline[jobs] / wall:8.1f}x")
        print(f"{row:44}" + "".join(f"{c:>30}" for c in cells))


if __name__ == "__main__":
    main()
