"""Per-sample time on the Java mini benchmark: warm compiler service vs a javac process each.

Both columns evaluate the same samples (reference, trivial and non-compiling ones) through the
same runner, sandbox and test JVM; only the compiler differs. A last table measures compile
throughput from two threads against a pool of one and of two compiler JVMs.

    .venv/bin/python bench/java_compile.py [--sandbox auto] [--repeat 1]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from codereval.benchmarks import builtin_dir
from codereval.benchmarks.samples import load_samples
from codereval.families.codereval.records import load_records
from codereval.java.compiler import (
    DEFAULT_OPTIONS,
    CompileResult,
    JavaCompiler,
    PlainJavac,
    WarmJavac,
)
from codereval.runners.base import RunContext
from codereval.runners.java import JavaProjectRunner
from codereval.sandbox import get_sandbox
from codereval.sandbox.base import Limits

KINDS = ("reference", "trivial", "broken")


class Timed:
    """Wraps a compiler and keeps each compile's wall time."""

    def __init__(self, inner: JavaCompiler) -> None:
        self.inner = inner
        self.times: list[float] = []
        self._lock = threading.Lock()

    def compile(
        self, sources: Mapping[str, str], *, classpath: Sequence[Path], out_dir: Path,
        options: Sequence[str] = DEFAULT_OPTIONS, timeout: float = 120.0,
    ) -> CompileResult:
        result = self.inner.compile(sources, classpath=classpath, out_dir=out_dir,
                                    options=options, timeout=timeout)
        with self._lock:
            self.times.append(result.wall_time)
        return result

    def close(self) -> None:
        self.inner.close()


def evaluate(label: str, compiler: JavaCompiler, ctx: RunContext, repeat: int) -> dict[str, object]:
    mini = builtin_dir("mini_java")
    tasks = {t.task_id: t for t in load_records(mini / "records.json")}
    samples = [s for s in load_samples(mini / "samples.jsonl") if s.model in KINDS]
    timed = Timed(compiler)
    runner = JavaProjectRunner(compiler=timed)
    runner.prepare(list(tasks.values()), ctx)
    timed.times.clear()  # warm-up (the service's first compile) is not a sample's cost
    per_sample: list[float] = []
    verdicts: list[str] = []
    for _ in range(repeat):
        for sample in samples:
            start = time.monotonic()
            outcome = runner.run(tasks[sample.task_id], sample, ctx)
            per_sample.append(time.monotonic() - start)
            verdicts.append(outcome.verdict.value)
    runner.close()
    return {"label": label, "n": len(per_sample), "compile": timed.times,
            "sample": per_sample, "verdicts": verdicts}


def throughput(pool_size: int, rounds: int) -> float:
    source = {"demo/Calc.java": "package demo;\npublic class Calc { int f(int x) { return x; } }\n"}
    compiler = WarmJavac(pool_size=pool_size)
    compiler.warm_up()
    with tempfile.TemporaryDirectory() as tmp:
        with ThreadPoolExecutor(max_workers=2) as pool:  # JIT warm-up of every JVM
            list(pool.map(lambda i: compiler.compile(source, classpath=[],
                                                     out_dir=Path(tmp) / f"w{i}"), range(20)))
        start = time.monotonic()
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(lambda i: compiler.compile(source, classpath=[],
                                                     out_dir=Path(tmp) / f"c{i}"), range(rounds)))
        elapsed = time.monotonic() - start
    compiler.close()
    return rounds / elapsed


def ms(values: list[float]) -> str:
    return f"{statistics.mean(values) * 1000:7.0f} / {statistics.median(values) * 1000:5.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-java-") as work:
        ctx = RunContext(sandbox=get_sandbox(args.sandbox), limits=Limits(wall_time=20.0),
                         work_root=Path(work), env_root=Path(work) / "envs",
                         projects_dir=builtin_dir("mini_java") / "projects.toml")
        rows = [evaluate("warm service (ours)", WarmJavac(pool_size=1), ctx, args.repeat),
                evaluate("javac process per sample", PlainJavac(), ctx, args.repeat)]
    same = rows[0]["verdicts"] == rows[1]["verdicts"]
    print(f"Java mini benchmark, {rows[0]['n']} samples per column "
          f"({', '.join(KINDS)}), sandbox {ctx.sandbox.isolation}; verdicts identical: {same}")
    print(f"{'compiler':28} {'compile ms mean/median':>24} {'per-sample ms mean/median':>27}")
    for row in rows:
        print(f"{row['label']:28} {ms(row['compile']):>24} {ms(row['sample']):>27}")  # type: ignore[arg-type]
    c0, c1 = (statistics.mean(r["compile"]) for r in rows)  # type: ignore[arg-type]
    s0, s1 = (statistics.mean(r["sample"]) for r in rows)  # type: ignore[arg-type]
    print(f"speed-up: compile x{c1 / c0:.1f}, whole sample x{s1 / s0:.1f}")
    print()
    print("compile throughput from 2 threads (compiles/s):")
    for size in (1, 2):
        print(f"  pool of {size} JVM(s): {throughput(size, 60):6.1f}")


if __name__ == "__main__":
    main()
