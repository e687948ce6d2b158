"""Defects4J's bugs rebuilt from public git: how many reproduce, per project, and what it costs.

Reads the ``rebuild.jsonl`` that ``codereval prepare defects4j`` writes (or runs it first with
``--run`` and the prepare command's own arguments after ``--``) and prints, per project, the
bugs asked for, how many reproduced, were not reproduced or not rebuilt, the tasks made, and the
time to build both versions and to run the trigger tests (median and total, per bug). There
is no baseline to put beside it: Defects4J's own `defects4j checkout && compile` needs its
archives, which this machine cannot fetch.

    python bench/defects4j_rebuild.py bench/d4j
    python bench/defects4j_rebuild.py bench/d4j-lang bench/d4j-math   # several runs, one table
    (a bug in several of them counts once, as the last one given has it)
    python bench/defects4j_rebuild.py bench/d4j --run -- --defects4j defects4j \\
        --checkouts repos --projects Lang,Cli --issues bug_report.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("outs", type=Path, nargs="+", metavar="OUT",
                        help="the folder(s) prepare defects4j wrote (--out)")
    parser.add_argument("--run", action="store_true",
                        help="run prepare defects4j first, with the arguments after --")
    args, rest = parser.parse_known_args()
    rest = [a for a in rest if a != "--"]
    wall = None
    if args.run and len(args.outs) != 1:
        parser.error("--run writes one folder: give one OUT")
    if args.run:
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "codereval", "prepare", "defects4j",
                               *rest, "--out", str(args.outs[0]), "--force"])
        wall = time.monotonic() - started
        if done.returncode != 0:
            sys.exit(done.returncode)
    # A bug in several runs counts once: the last OUT given holds its latest rebuild.
    latest: dict[str, dict[str, object]] = {}
    for out in args.outs:
        for line in (out / "rebuild.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            latest.pop(str(row["bug"]), None)
            latest[str(row["bug"])] = row
    rows = list(latest.values())
    per: dict[str, list[dict[str, object]]] = defaultdict(list)
    for row in rows:
        per[str(row["project"])].append(row)
    header = (f"{'project':<12} {'bugs':>5} {'reprod':>6} {'not rep':>7} {'not built':>9} "
              f"{'FCG':>4} {'CTG':>4} {'ITG':>4} {'APR':>4} {'DD':>4} {'build s/bug':>11} "
              f"{'test s/bug':>10} {'build s':>8}")
    print(header)
    print("-" * len(header))
    for project, bugs in [*per.items(), ("all", rows)]:
        status = Counter(str(b["status"]) for b in bugs)
        kinds: Counter[str] = Counter()
        for bug in bugs:
            kinds.update(bug.get("tasks") or {})  # type: ignore[arg-type]
        built = [float(b["build_seconds"]) for b in bugs  # type: ignore[arg-type]
                 if b["status"] != "not_rebuilt"]
        tested = [float(b["test_seconds"]) for b in bugs  # type: ignore[arg-type]
                  if b["status"] == "reproduced"]
        print(f"{project:<12} {len(bugs):>5} {status['reproduced']:>6} "
              f"{status['not_reproduced']:>7} {status['not_rebuilt']:>9} {kinds['fcg']:>4} "
              f"{kinds['ctg']:>4} {kinds['itg']:>4} {kinds['apr']:>4} {kinds['dd']:>4} "
              f"{statistics.median(built) if built else 0:>11.1f} "
              f"{statistics.median(tested) if tested else 0:>10.1f} {sum(built):>8.0f}")
    reasons = Counter(_kind(str(b["reason"])) for b in rows if b["status"] != "reproduced")
    if reasons:
        print("\nwhy not reproduced or not rebuilt:")
        for reason, count in reasons.most_common():
            print(f"  {count:>4}  {reason}")
    if wall is not None:
        print(f"\nwall time of prepare defects4j: {wall:.0f} s")
    print("(build s/bug and test s/bug are medians; a bug's build is both versions, and a "
          "version already built for an earlier run counts about 0)")


def _kind(reason: str) -> str:
    """A reason without the bug's own names, to count alike ones together."""
    for cut in (":", " (", " at "):
        if cut in reason:
            reason = reason.split(cut, 1)[0]
    return reason


if __name__ == "__main__":
    main()
