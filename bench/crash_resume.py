"""Crash-resume at scale: a mixed-language evaluation killed at random moments, resumed each time.

    .venv/bin/python bench/crash_resume.py [--hx ../shared/data/humanevalx] [--repeat 12]
        [--kills 20] [--seed 34] [--ray]

The samples: HumanEval's Python programs and HumanEval-X's JavaScript ones (but the four
whose tests draw unseeded random inputs), each task's reference and a body that exits 3
before the test runs, C++ references, and mini-java's samples in their Java project
(references, wrong answers, build errors, hostile ones), ``--repeat`` times each (12: 8,304
samples).
First one uninterrupted run, timed; then the same samples into a new run directory, killed
with SIGKILL ``--kills`` times at moments drawn from ``--seed`` (the number of outcomes
stored by then) — the driver, one of its warm workers, or with
``--ray`` a Ray node (replaced by a new one) — and resumed after each driver kill. Checked and
printed: one outcome per sample, the uninterrupted run's verdicts, no sample finished before a
crash run again (its row keeps the time it was recorded), and nothing left by the killed
drivers (processes, work roots, /dev/shm folders, cgroups named with their pid).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
FAILS = {"python": "\nimport sys\nsys.exit(3)\n", "js": "\nprocess.exit(3);\n"}


def drive(hx: Path, run_dir: Path, repeat: int, ray_address: str | None) -> None:
    """The evaluation itself (the process that is killed)."""
    from codereval.api import evaluate, load_benchmark
    from codereval.benchmarks import builtin_dir
    from codereval.benchmarks.samples import load_samples
    from codereval.families.humaneval.dataset import load_humaneval
    from codereval.families.humanevalx.dataset import load_humanevalx

    chosen = {
        "python": load_humaneval(path=None),
        # Not the tests that draw unseeded random inputs (JavaScript/32's Math.random
        # polynomials): their reference fails now and then, in any run.
        "js": [t for t in load_humanevalx("js", data_dir=hx)
               if "Math.random" not in (t.test.code if t.test else "")],
        "cpp": load_humanevalx("cpp", data_dir=hx)[:8],
    }
    tasks, rows = [], []
    for language, group in chosen.items():
        for task in group:
            tasks.append(task)
            for copy in range(repeat):
                rows.append({"task_id": task.task_id, "index": 2 * copy, "code": task.reference})
                if language in FAILS:
                    rows.append({"task_id": task.task_id, "index": 2 * copy + 1,
                                 "code": task.reference + FAILS[language]})
    # mini-java's Java project: its samples (references, wrong answers, build errors, hostile
    # ones; not the one that loops until the limit), compiled and run in the project.
    mini_java = builtin_dir("mini_java")
    tasks += load_benchmark("mini-java").tasks
    for copy in range(repeat):
        rows += [{"task_id": s.task_id, "index": 100 * copy + s.index, "code": s.code}
                 for s in load_samples(mini_java / "samples.jsonl") if s.model != "slow-loop"]
    how: dict[str, object] = (
        {"executor": "ray", "ray_address": ray_address} if ray_address else {"jobs": 2})
    evaluate(load_benchmark(tasks, projects=mini_java / "projects.toml"), rows, run_dir=run_dir,
             timeout=30, **how)  # type: ignore[arg-type]


Key = tuple[str, int, str]


def stored(run: Path) -> list[tuple[str, int, str, str, float]]:
    try:
        with sqlite3.connect(run / "results.sqlite") as db:
            return [tuple(r) for r in db.execute(  # type: ignore[misc]
                "SELECT task_id, sample_index, code_hash, verdict, recorded_at FROM outcomes")]
    except sqlite3.Error:
        return []


def live_with(token: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if token.encode() in (entry / "cmdline").read_bytes():
                state = (entry / "stat").read_bytes().rpartition(b")")[2].split()[0]
                if state != b"Z":
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def ours(pid: int, driver: int, cluster: object) -> bool:
    """A warm worker of this run: the driver's (its work root is named with the driver's pid),
    or, on Ray, one started by a node of our cluster (a worker leads a session of its own; its
    parent, the node's actor, is in the session of that node's `ray start`). Never anyone
    else's on the machine."""
    if cluster is None:
        return pid in live_with(f"codereval-work-{driver}-")
    sessions = {node.session for node in cluster.nodes}  # type: ignore[attr-defined]
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        parent = int(stat.rpartition(")")[2].split()[1])
        return os.getsid(parent) in sessions
    except (OSError, ValueError):
        return False


def leftovers(pid: int) -> list[str]:
    from codereval.sandbox.cgroup import probe

    found = [f"process {p}" for p in live_with(f"codereval-work-{pid}-")]
    found += [str(p) for p in Path(tempfile.gettempdir()).glob(f"codereval-work-{pid}-*")]
    found += [str(p) for p in Path("/dev/shm").glob(f"codereval-warm-{pid}-*")]
    for base in probe()[0].values():
        found += [str(p) for p in base.glob(f"run-{pid}-*")]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hx", type=Path, default=HERE.parents[2] / "shared/data/humanevalx")
    parser.add_argument("--repeat", type=int, default=12)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--ray", action="store_true", help="on a loopback Ray cluster")
    parser.add_argument("--drive", nargs=2, metavar=("RUN_DIR", "RAY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.drive:
        run_dir, address = args.drive
        drive(args.hx, Path(run_dir), args.repeat, address if address != "-" else None)
        return

    root = Path(tempfile.mkdtemp(prefix="bench-crash-"))
    cluster = None
    if args.ray:
        from codereval.executors.ray_local import LocalRayCluster

        cluster = LocalRayCluster(workers=2, head_cpus=0, worker_cpus=1)
        cluster.start()
    address = cluster.address if cluster else "-"

    def start(run: Path) -> subprocess.Popen[bytes]:
        argv = [sys.executable, str(HERE), "--hx", str(args.hx), "--repeat", str(args.repeat),
                "--drive", str(run), address]
        return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    try:
        began = time.perf_counter()
        whole = start(root / "whole")
        _, err = whole.communicate()
        assert whole.returncode == 0, err.decode()
        uninterrupted = time.perf_counter() - began
        expected = {(t, i, h): v for t, i, h, v, _ in stored(root / "whole")}
        n = len(expected)

        chance = random.Random(args.seed)
        moments = sorted(chance.sample(range(50, n - 200), args.kills))
        kinds = ["driver", "worker"] + (["node"] if cluster else [])
        run = root / "run"
        killed: list[int] = []
        counts = {kind: 0 for kind in kinds}
        finished: dict[Key, float] = {}
        began = time.perf_counter()
        proc = start(run)
        for moment in moments:
            while len(stored(run)) < moment:
                assert proc.poll() is None, proc.stderr.read().decode()  # type: ignore[union-attr]
                time.sleep(0.05)
            kind = chance.choice(kinds)
            if kind == "worker":
                workers = [p for p in live_with("warm_server") if ours(p, proc.pid, cluster)]
                for pid in workers:
                    os.kill(pid, signal.SIGKILL)
                counts[kind] += bool(workers)
                continue
            if kind == "node" and cluster is not None:
                victim = cluster.nodes[-1]
                cluster.kill(victim)
                cluster.add_worker()
                counts[kind] += 1
                continue
            proc.kill()
            proc.wait()
            killed.append(proc.pid)
            counts[kind] += 1
            for task, index, code, verdict, at in stored(run):
                if verdict != "infra_error":
                    finished.setdefault((task, index, code), at)
            proc = start(run)
        _, err = proc.communicate()
        assert proc.returncode == 0, err.decode()
        resumes = 0
        while any(r[3] == "infra_error" for r in stored(run)) and resumes < 3:
            again = start(run)
            again.communicate()
            resumes += 1
        interrupted = time.perf_counter() - began

        final = stored(run)
        keys = [(t, i, h) for t, i, h, _, _ in final]
        recorded = {(t, i, h): at for t, i, h, _, at in final}
        verdicts = {(t, i, h): v for t, i, h, v, _ in final}
        rerun = [k for k, at in finished.items() if recorded.get(k) != at]
        left = {pid: leftovers(pid) for pid in killed}
        print(f"\n{n} samples ({'Ray, 2 nodes' if cluster else 'local, --jobs 2'}); "
              f"uninterrupted {uninterrupted:.1f} s; with {len(moments)} kills "
              f"{interrupted:.1f} s ({', '.join(f'{k} {v}' for k, v in counts.items())}; "
              f"{resumes} extra resume(s) for infra errors)")
        print(f"  outcomes stored: {len(final)}, distinct samples: {len(set(keys))} "
              f"(expected {n})")
        print(f"  verdicts different from the uninterrupted run: "
              f"{sum(verdicts.get(k) != v for k, v in expected.items())}")
        print(f"  finished before a crash: {len(finished)}; run again: {len(rerun)}")
        print(f"  left by the {len(killed)} killed drivers: "
              f"{sum(len(v) for v in left.values())} {[x for v in left.values() for x in v][:5]}")
    finally:
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
