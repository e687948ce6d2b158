"""Where a Java sample's test run spends its time, and which JVM flags start it fastest.

Runs the mini-java references (8 ``main`` tests, 2 JUnit) through JavaProjectRunner and the first
HumanEval-X Java canonical solutions through ProgramRunner, in the real sandbox. Each sandbox
request the runners make is re-run, while the sample's files still exist, in variants: the sandbox
alone (``/bin/true``), the bare JVM (``-version``), the request as the runner made it, and the
request with other JVM flags; rounds interleaved, best of rounds per test, then the mean over
tests. Compile times come from the runner's own compiler. Last, for the mini-java tests, what a
warm test JVM would cost per sample (bench/java/WarmEstimate.java, run in the same sandbox: the
median of 20 runs of the test inside one JVM, each from a new class loader; measured, not built).

    .venv/bin/python bench/java_jvm_start.py [--rounds 5] [--humanevalx 20]
        [--data-dir ../shared/data/humanevalx] [--sandbox auto]
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import re
import statistics
import subprocess
import tempfile
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from codereval.benchmarks import builtin_dir
from codereval.benchmarks.samples import load_samples
from codereval.families.codereval.records import load_records
from codereval.families.humanevalx.dataset import load_humanevalx
from codereval.java.compiler import DEFAULT_OPTIONS, CompileResult, JavaCompiler, WarmJavac
from codereval.model import Sample
from codereval.runners.base import RunContext
from codereval.runners.java import JVM_FLAGS, JavaProjectRunner
from codereval.runners.program import ProgramRunner
from codereval.runners.program_toolchains import JAVA_RUN_FLAGS
from codereval.sandbox import get_sandbox
from codereval.sandbox.base import ExecRequest, ExecResult, Limits, Mount, Sandbox

Argv = tuple[str, ...]
HARNESS = "codereval.harness.RunTest"
WARM_ESTIMATES = {
    "warm JVM estimate: new loader for all classes": (),
    "warm JVM estimate: jars shared between samples": ("shared-jars",),
}
# name -> how the runner's argv is changed: (flags to drop, flags to add). The JVM's own flags
# only; the classpath, harness and test stay.
TIERED = ("-XX:TieredStopAtLevel=1",)
FLAG_VARIANTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "as the runner starts it": ((), ()),
    "full tiered (C1+C2)": (TIERED, ()),
    "interpreter only (-Xint)": (TIERED, ("-Xint",)),
    "C1, CICompilerCount=1": ((), ("-XX:CICompilerCount=1",)),
    "-Xms16m -Xmn8m": ((), ("-Xms16m", "-Xmn8m")),
    "-Xss default (no -Xss8m)": (("-Xss8m",), ()),
    "serial GC (the flags before)": (("-XX:+UseG1GC",), ("-XX:+UseSerialGC",)),
    "-XX:+UsePerfData (default)": (("-XX:-UsePerfData",), ()),
    "no verification (-Xverify:none, deprecated)": ((), ("-Xverify:none",)),
    "-Xshare:off (no CDS at all)": ((), ("-Xshare:off",)),
    "-XX:+AutoCreateSharedArchive (JDK 19+)": ((), ("-XX:+AutoCreateSharedArchive",)),
}


class Timed:
    """A compiler that keeps each compile's wall time."""

    def __init__(self, inner: JavaCompiler) -> None:
        self.inner = inner
        self.times: list[float] = []

    def compile(self, sources: Mapping[str, str], *, classpath: Sequence[Path], out_dir: Path,
                options: Sequence[str] = DEFAULT_OPTIONS, timeout: float = 120.0) -> CompileResult:
        result = self.inner.compile(sources, classpath=classpath, out_dir=out_dir,
                                    options=options, timeout=timeout)
        self.times.append(result.wall_time)
        return result

    def close(self) -> None:
        self.inner.close()


def without_archive(argv: Argv) -> Argv:
    return tuple(a for a in argv if not a.startswith(("-XX:SharedArchiveFile", "-Xshare",
                                                       "-Xlog:cds")))


def change_flags(argv: Argv, drop: Sequence[str], add: Sequence[str]) -> Argv:
    kept = [a for a in argv if a not in drop]
    # JVM options go right after the java binary; "-Xshare:off" also drops the archive flags.
    if "-Xshare:off" in add:
        kept = list(without_archive(tuple(kept)))
    return (kept[0], *add, *kept[1:])


def bare_jvm(argv: Argv) -> Argv:
    """The same JVM and flags, printing its version instead of running anything."""
    cut = argv.index("-cp")
    return (*argv[:cut], "-version")


class Probe(Sandbox):
    """Passes each request on, but first times it in variants (best of ``rounds``)."""

    name = "probe"

    def __init__(self, inner: Sandbox, variants: Mapping[str, Callable[[Argv], Argv]],
                 rounds: int, suite: Callable[[ExecRequest], str],
                 estimate: Path | None = None) -> None:
        self.inner = inner
        self.estimate = estimate
        self.variants = variants
        self.rounds = rounds
        self.suite = suite
        self.best: dict[tuple[str, str], list[float]] = defaultdict(list)
        self.best_cpu: dict[tuple[str, str], list[float]] = defaultdict(list)
        self.failed: dict[str, str] = {}
        self.failures: dict[str, int] = defaultdict(int)

    @classmethod
    def unavailable_reason(cls) -> str | None:
        return None

    @property
    def isolation(self) -> str:
        return self.inner.isolation

    def run(self, request: ExecRequest) -> ExecResult:
        if "java" not in Path(request.argv[0]).name:
            return self.inner.run(request)
        suite = self.suite(request)
        times: dict[str, list[float]] = defaultdict(list)
        cpu: dict[str, list[float]] = defaultdict(list)
        for _ in range(self.rounds):
            for name, change in self.variants.items():
                changed = dataclasses.replace(request, argv=change(request.argv))
                result = self.inner.run(changed)
                if result.exit_code != 0 and name != "sandbox only":
                    # Not timed: a JVM that refused the flag, or one that failed on a loaded
                    # machine (counted; "rejected" only when no run of it worked).
                    text = (result.stdout + result.stderr).decode(errors="replace").strip()
                    self.failed[name] = text.splitlines()[0][:90] if text else "failed"
                    self.failures[name] += 1
                    continue
                times[name].append(result.wall_time)
                cpu[name].append(result.cpu_time or 0.0)
        for name, values in times.items():
            self.best[(suite, name)].append(min(values))
            self.best_cpu[(suite, name)].append(min(cpu[name]))
        if self.estimate is not None and HARNESS in request.argv:
            self._warm_estimate(request, suite)
        return self.inner.run(request)

    def _warm_estimate(self, request: ExecRequest, suite: str) -> None:
        argv = request.argv
        at = argv.index(HARNESS)
        mode, test = argv[at + 1], argv[at + 2]
        classpath = argv[argv.index("-cp") + 1]
        flags = [a for a in argv[1:argv.index("-cp")] if not a.startswith(
            ("-XX:SharedArchiveFile", "-Xshare", "-Xlog"))]
        assert self.estimate is not None
        mounts = (*request.mounts, Mount(source=self.estimate, target=self.estimate))
        for label, extra in WARM_ESTIMATES.items():
            changed = dataclasses.replace(request, mounts=mounts, argv=(
                argv[0], *flags, "-cp", str(self.estimate), "WarmEstimate", "20", mode, test,
                classpath, *extra))
            result = self.inner.run(changed)
            found = re.search(rb"median_ms ([0-9.]+)", result.stdout)
            if found is None:
                self.failed[label] = (result.stdout + result.stderr).decode(
                    errors="replace").strip()[-90:]
                self.failures[label] += 1
            else:
                self.best[(suite, label)].append(float(found.group(1)) / 1000)


def variants() -> dict[str, Callable[[Argv], Argv]]:
    chosen: dict[str, Callable[[Argv], Argv]] = {
        "sandbox only": lambda argv: ("/bin/true",),
        "bare JVM (-version)": bare_jvm,
        "no project CDS archive": without_archive,
    }
    for name, (drop, add) in FLAG_VARIANTS.items():
        chosen[name] = functools.partial(_changed, drop=drop, add=add)
    return chosen


def _changed(argv: Argv, *, drop: Sequence[str], add: Sequence[str]) -> Argv:
    return change_flags(argv, drop, add)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--humanevalx", type=int, default=20,
                        help="HumanEval-X Java tasks (canonical solutions), 0 for none")
    parser.add_argument("--data-dir", type=Path,
                        default=Path(__file__).resolve().parents[2] / "shared/data/humanevalx")
    parser.add_argument("--sandbox", default="auto")
    args = parser.parse_args()
    load = os.getloadavg()
    base = get_sandbox(args.sandbox)

    def suite(request: ExecRequest) -> str:
        if HARNESS in request.argv:
            return "mini-java " + request.argv[request.argv.index(HARNESS) + 1]
        return "HumanEval-X Java"

    compile_times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-jvm-") as work:
        estimate = Path(work) / "estimate"
        subprocess.run(["javac", "-d", str(estimate),
                        str(Path(__file__).parent / "java" / "WarmEstimate.java")], check=True)
        probe = Probe(base, variants(), args.rounds, suite, estimate=estimate)
        limits = Limits(wall_time=30.0)
        ctx = RunContext(sandbox=probe, limits=limits, work_root=Path(work),
                         env_root=Path(work) / "envs",
                         projects_dir=builtin_dir("mini_java") / "projects.toml")
        mini = builtin_dir("mini_java")
        tasks = {t.task_id: t for t in load_records(mini / "records.json")}
        compiler = Timed(WarmJavac(pool_size=1))
        runner = JavaProjectRunner(compiler=compiler)
        runner.prepare(list(tasks.values()), dataclasses.replace(ctx, sandbox=base))
        compiler.times.clear()
        for sample in load_samples(mini / "samples.jsonl"):
            if sample.model == "reference":
                runner.run(tasks[sample.task_id], sample, ctx)
        compile_times["mini-java"] = compiler.times
        runner.close()
        if args.humanevalx:
            program = ProgramRunner()
            hx = load_humanevalx("java", data_dir=args.data_dir)[: args.humanevalx]
            program.run(hx[0], Sample(task_id=hx[0].task_id, code=hx[0].reference),
                        dataclasses.replace(ctx, sandbox=base))  # compiler warm-up
            for task in hx:
                program.run(task, Sample(task_id=task.task_id, code=task.reference), ctx)
            program.close()
    jdk = subprocess.run(["java", "-version"], capture_output=True, text=True, check=False)
    print(f"JVM start, {args.rounds} interleaved rounds, best per test, mean over tests "
          f"(wall ms / CPU ms of the sandbox's cgroup); "
          f"sandbox {base.isolation}; load average {load[0]:.1f} at start, "
          f"{os.getloadavg()[0]:.1f} at end; {jdk.stderr.splitlines()[0]}")
    print(f"runner flags: {' '.join(JVM_FLAGS)} (+ -Xmx, + CDS archive); "
          f"HumanEval-X: {' '.join(JAVA_RUN_FLAGS)}")
    suites = sorted({s for s, _ in probe.best})
    width = 50
    print(f"\n{'':{width}}" + "".join(f"{s:>22}" for s in suites))
    print(f"{'tests':{width}}" + "".join(f"{len(probe.best[(s, 'sandbox only')]):>22}"
                                        for s in suites))
    for name in [*variants(), *WARM_ESTIMATES]:
        cells = []
        for s in suites:
            values = probe.best.get((s, name))
            if not values and name in probe.failed:
                cells.append("rejected")
            elif not values or (s.startswith("HumanEval") and name == "no project CDS archive"):
                cells.append("-")
            elif (s, name) in probe.best_cpu:
                cpu = statistics.mean(probe.best_cpu[(s, name)]) * 1000
                cells.append(f"{statistics.mean(values) * 1000:.0f} / {cpu:.0f}")
            else:
                cells.append(f"{statistics.mean(values) * 1000:.0f}")
        print(f"{name:{width}}" + "".join(f"{c:>22}" for c in cells))
    for name, why in probe.failed.items():
        print(f"  {probe.failures[name] or 'all'} run(s) failed: {name}: {why}")
    for label, times in compile_times.items():
        if times:
            print(f"\ncompile ({label}, warm javac service): "
                  f"mean {statistics.mean(times) * 1000:.0f} ms, "
                  f"median {statistics.median(times) * 1000:.0f} ms over {len(times)} samples")


if __name__ == "__main__":
    main()
