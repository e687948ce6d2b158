"""CoderUJB's tasks on rebuilt Defects4J bugs, run with the developers' own code: how long, and
how many pass.

For each folder `codereval prepare defects4j` wrote, the tasks of one kind (APR by default)
are evaluated with their reference as the sample — for APR the developer's fix, for FCG the
developer's method, for ITG the developer's trigger test, for CTG the developer's test — at
`--jobs` workers, and the bench prints per project the tasks, the verdicts and the wall time
(per task and in all). Every reference should pass: one that does not is a task to look at
(`outcomes.jsonl` in the run folder says why).

There is no baseline to put beside it: the original harness runs `defects4j test` in
Defects4J's checkouts, which need Defects4J's archives, out of this machine's reach.

    python bench/coderujb_gold.py bench/d4j/Lang bench/d4j/Cli --kind apr --jobs 2
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

KINDS = ("apr", "fcg", "ctg", "itg")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("outs", type=Path, nargs="+", metavar="OUT",
                        help="folder(s) prepare defects4j wrote")
    parser.add_argument("--kind", choices=KINDS, default="apr")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep the run folders here (default: a temporary folder)")
    args = parser.parse_args()

    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-coderujb-gold-"))
    root.mkdir(parents=True, exist_ok=True)
    header = (f"{'project':<14} {'tasks':>5} {'passed':>6} {'other':<40} {'wall s':>7} "
              f"{'s/task':>7}")
    print(f"kind {args.kind}, --jobs {args.jobs}, the reference as the sample")
    print(header)
    print("-" * len(header))
    total_tasks = total_passed = 0
    total_wall = 0.0
    for out in args.outs:
        tasks = [json.loads(line) for line in
                 (out / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
        chosen = [t for t in tasks if (t.get("ujb") or {}).get("kind") == args.kind]
        if not chosen:
            print(f"{out.name:<14} {0:>5}")
            continue
        run = root / f"{out.name}-{args.kind}"
        samples = root / f"{out.name}-{args.kind}.samples.jsonl"
        samples.write_text("".join(
            json.dumps({"task_id": t["task_id"], "index": 0, "code": t["reference"]}) + "\n"
            for t in chosen), encoding="utf-8")
        only = root / f"{out.name}-{args.kind}.ids"
        only.write_text("".join(t["task_id"] + "\n" for t in chosen), encoding="utf-8")
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "codereval", "evaluate", "--tasks", str(out / "tasks.jsonl"),
             "--projects", str(out / "projects.toml"), "--samples", str(samples),
             "--only-task", f"@{only}", "--jobs", str(args.jobs), "--timeout",
             str(args.timeout), "--out", str(run)],
            capture_output=True, text=True)
        wall = time.monotonic() - started
        if done.returncode != 0:
            print(f"{out.name}: evaluate failed ({done.returncode}): "
                  f"{done.stderr.strip().splitlines()[-1:]}")
            continue
        outcomes = [json.loads(line) for line in
                    (run / "outcomes.jsonl").read_text(encoding="utf-8").splitlines()]
        verdicts = Counter(o["verdict"] for o in outcomes)
        passed = verdicts.pop("passed", 0)
        other = ", ".join(f"{v} {n}" for v, n in verdicts.most_common()) or "-"
        print(f"{out.name:<14} {len(chosen):>5} {passed:>6} {other:<40} {wall:>7.0f} "
              f"{wall / len(chosen):>7.1f}")
        total_tasks += len(chosen)
        total_passed += passed
        total_wall += wall
    print("-" * len(header))
    per = total_wall / total_tasks if total_tasks else 0.0
    print(f"{'all':<14} {total_tasks:>5} {total_passed:>6} {'':<40} {total_wall:>7.0f} "
          f"{per:>7.1f}")
    print(f"(run folders in {root}; wall time includes building any environment not yet "
          "built)")


if __name__ == "__main__":
    main()
