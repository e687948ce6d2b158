"""CoderEval-Python end to end on the real projects, as a new user runs it: all 230 tasks.

Prepares the benchmark from the public material (records or an official result file, the test
map, local clones of the 43 projects), builds the environments, validates every reference
(gold), evaluates the three released models' official samples and compares our verdicts with
the official ones, sample by sample, broken tasks included. Prints each step's time and the
2x2 tables; everything it makes is under --work.

    .venv/bin/python bench/codereval_python_agreement.py \
        --records CoderEval4Python.json \
        --test-map record_testcases_map_python.json \
        --checkouts projects \
        --results ../shared/data/codereval/results/python \
        --work /tmp/codereval-agreement

--records may be an official result file (Raw_Input.jsonl_out.jsonl): each reference is then
the function the official test holds. --checkouts holds one git clone per project,
``<owner>---<repo>`` (any commit whose history has the pinned one). Nothing is fetched.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

MODELS = ("ChatGPT", "CodeGen", "PanGu-Coder")


def _cli() -> list[str]:
    # The console script installed beside this interpreter (the project's venv).
    return [str(Path(sys.executable).parent / "codereval")]


def _step(label: str, argv: list[str], log: Path) -> float:
    started = time.monotonic()
    with log.open("w") as handle:
        done = subprocess.run(argv, stdout=handle, stderr=subprocess.STDOUT, check=False)
    seconds = time.monotonic() - started
    tail = log.read_text(errors="replace").strip().splitlines()[-1:] or [""]
    print(f"{label:<28} {seconds:8.1f} s   {tail[0][:100]}", flush=True)
    if done.returncode != 0:
        sys.exit(f"{label} failed (exit {done.returncode}); see {log}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=Path, required=True)
    parser.add_argument("--test-map", type=Path, required=True)
    parser.add_argument("--checkouts", type=Path, required=True)
    parser.add_argument("--results", type=Path, required=True,
                        help="folder holding <model>/Raw_Input.jsonl_out.jsonl")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--models", default=",".join(MODELS))
    args = parser.parse_args()
    models = [m for m in args.models.split(",") if m]
    for model in models:
        if not (args.results / model / "Raw_Input.jsonl_out.jsonl").is_file():
            sys.exit(f"no {model}/Raw_Input.jsonl_out.jsonl under {args.results}")
    work = args.work
    shutil.rmtree(work, ignore_errors=True)
    (work / "logs").mkdir(parents=True)
    bench, runs, logs = work / "bench", work / "runs", work / "logs"
    cli = _cli()
    total = _step("prepare (230 tasks)", [
        *cli, "prepare", "codereval-python", "--records", str(args.records),
        "--test-map", str(args.test_map), "--checkouts", str(args.checkouts),
        "--out", str(bench)], logs / "prepare.log")
    total += _step("environments", [
        *cli, "env", "build", "--projects", str(bench / "projects.toml")], logs / "env.log")
    total += _step("gold validation", [
        *cli, "evaluate", "--prepared", str(bench), "--reference", "--repeat", "3", "--compat",
        "--jobs", str(args.jobs), "--out", str(runs / "gold")], logs / "gold.log")
    evaluated = 0.0
    for model in models:
        evaluated += _step(f"evaluate {model}", [
            *cli, "evaluate", "--prepared", str(bench), "--samples",
            str(args.results / model / "Raw_Input.jsonl_out.jsonl"), "--compat",
            "--jobs", str(args.jobs), "--out", str(runs / model)], logs / f"{model}.log")
    total += evaluated
    pairs: list[str] = []
    for model in models:
        pairs += [str(runs / model), str(args.results / model / "Raw_Input.jsonl_out.jsonl")]
    # Each disagreeing sample re-run 10 times: a verdict that changes is a coin toss, not ours.
    compare = subprocess.run([*cli, "compare", *pairs, "--gold", str(runs / "gold" / "gold.jsonl"),
                              "--details", "--recheck", "10", "--jobs", str(args.jobs)],
                             capture_output=True, text=True, check=False)
    (logs / "compare.log").write_text(compare.stdout + compare.stderr)
    print(compare.stdout)
    print(f"the three models' samples: {evaluated:.0f} s with --jobs {args.jobs}; "
          f"everything: {total:.0f} s")


if __name__ == "__main__":
    main()
