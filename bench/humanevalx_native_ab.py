"""HumanEval-X's compiled languages as they ran before and as they run now, side by side.

    PYTHONPATH=src .venv/bin/python bench/humanevalx_native_ab.py [--rounds 2] [--jobs 2]
        [--languages cpp,go,rust] [--tasks 164] [--data-dir ../shared/data/humanevalx]

The canonical solutions of each language through the program runner and the bubblewrap
sandbox, ``--jobs`` workers (the per-sample work of ``codereval evaluate`` without its results
store), in two configurations, alternating round by round, best round kept:

* before: each sample's build and run in a sandbox launch of their own; Go linked against the
  full testify (212 packages);
* now: build and run in one launch (``Sandbox.run_staged``); Go linked against testify without
  its HTTP assertions (129 packages) unless the program mentions HTTP.

Both configurations must give the same verdict for every sample (checked, sample by sample);
the load average is printed beside each row, since on a shared machine only rows measured close
together compare.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tables import table

from codereval.evaluation.engine import default_env_root
from codereval.families.humanevalx.dataset import load_humanevalx
from codereval.model import Outcome, Sample, Task, Verdict
from codereval.runners.base import RunContext
from codereval.runners.program import ProgramRunner
from codereval.runners.program_toolchains import (
    CppToolchain,
    GoToolchain,
    RustToolchain,
    Toolchain,
)
from codereval.sandbox import Limits, Sandbox
from codereval.sandbox.bwrap import BwrapSandbox

REPO = Path(__file__).resolve().parents[1]

Config = tuple[Callable[[], Toolchain], Sandbox]


def configs(language: str) -> dict[str, Config]:
    before: Callable[[], Toolchain] = {
        "cpp": CppToolchain, "go": lambda: GoToolchain(lean_testify=False, minimal_deps=False),
        "rust": RustToolchain}[language]
    now: Callable[[], Toolchain] = {"cpp": CppToolchain, "go": GoToolchain,
                                    "rust": RustToolchain}[language]
    return {"before": (before, BwrapSandbox(one_launch=False)), "now": (now, BwrapSandbox())}


def evaluate(tasks: list[Task], config: Config, jobs: int,
             root: Path) -> tuple[float, list[Outcome]]:
    make, sandbox = config
    toolchain = make()
    runner = ProgramRunner(toolchains={toolchain.language: toolchain})
    ctx = RunContext(sandbox=sandbox, limits=Limits(wall_time=30.0, cpu_time=60.0),
                     work_root=Path(tempfile.mkdtemp(dir=root)), env_root=default_env_root())
    runner.prepare(tasks, ctx)
    try:
        started = time.perf_counter()
        with ThreadPoolExecutor(jobs) as pool:
            outcomes = list(pool.map(
                lambda t: runner.run(t, Sample(task_id=t.task_id, code=t.reference), ctx), tasks))
        return time.perf_counter() - started, outcomes
    finally:
        runner.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path,
                        default=REPO.parent / "shared" / "data" / "humanevalx")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--tasks", type=int, default=164)
    parser.add_argument("--languages", default="cpp,go,rust")
    args = parser.parse_args()

    rows = []
    with tempfile.TemporaryDirectory(prefix="hx-ab-") as tmp:
        for language in args.languages.split(","):
            tasks = load_humanevalx(language, data_dir=args.data_dir)[: args.tasks]
            chosen = configs(language)
            best: dict[str, tuple[float, float, list[Outcome]]] = {}
            for _ in range(args.rounds):
                for name, config in chosen.items():
                    wall, outcomes = evaluate(tasks, config, args.jobs, Path(tmp))
                    if name not in best or wall < best[name][0]:
                        best[name] = (wall, os.getloadavg()[0], outcomes)
            verdicts = {name: [o.verdict for o in b[2]] for name, b in best.items()}
            # Go/95's reference fails by map order about one run in three (docs/humanevalx.md).
            flaky = {i for i, t in enumerate(tasks) if t.task_id == "Go/95"}
            same = all(v[i] == verdicts["before"][i] for v in verdicts.values()
                       for i in range(len(tasks)) if i not in flaky)
            base = best["before"][0]
            for name, (wall, load, outcomes) in best.items():
                passed = sum(o.verdict is Verdict.PASSED for o in outcomes)
                rows.append([language, name, f"{passed}/{len(tasks)}", f"{wall:.1f}",
                             f"{1000 * wall / len(tasks):.0f}", f"{base / wall:.2f}x",
                             f"{load:.1f}", "yes" if same else "NO"])
    headers = ["language", "config", "passed", "wall s", "ms/sample", "vs before", "load",
               "same verdicts"]
    print(f"{args.tasks} canonical solutions per language, {args.jobs} workers, best of "
          f"{args.rounds} alternating rounds; load = 1-minute load average after the best round")
    print(table(headers, rows))


if __name__ == "__main__":
    main()
