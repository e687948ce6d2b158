"""Measure ways to give each sample a private view of a project (per-sample cost, ms).

    .venv/bin/python bench/bench_workspace.py [--repeat 30]

Rows: the mini projects and a synthetic 2,000-file tree. Columns: full copy, symlink farm,
hard-link farm (each with one changed file, then removed), and an overlay mounted by bubblewrap
(`--overlay-src BASE --tmp-overlay DIR`, timed as a whole bwrap launch minus a plain launch).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from codereval.data import mini_python_root
from codereval.workspace.views import make_workspace, remove_tree


def _synthetic(root: Path, files: int) -> Path:
    base = root / "synthetic"
    for index in range(files):
        path = base / f"pkg{index % 40}" / f"mod{index}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {index}\n" * 40)
    return base


def _time_strategy(base: Path, work: Path, strategy: str, repeat: int) -> float:
    changed_rel = next(p for p in base.rglob("*.py")).relative_to(base)
    times = []
    for index in range(repeat):
        dest = work / f"{strategy}-{index}"
        started = time.perf_counter()
        make_workspace(base, dest, changed={str(changed_rel): "x = 1\n"}, strategy=strategy)
        remove_tree(dest)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def _time_bwrap(base: Path, repeat: int, *, overlay: bool) -> float:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return float("nan")
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--cap-drop", "ALL"]
    if overlay:
        argv += ["--overlay-src", str(base), "--tmp-overlay", "/mnt"]
    argv += ["true"]
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, check=False)
        if done.returncode != 0:
            return float("nan")
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        trees = {p.name: p for p in sorted((mini_python_root() / "projects").iterdir())}
        trees["synthetic-2000"] = _synthetic(root, 2000)
        print(f"{'tree':<18}{'files':>6}{'copy':>9}{'symlink':>9}{'hardlink':>9}{'overlay':>9}")
        for name, base in trees.items():
            files = sum(1 for p in base.rglob("*") if p.is_file())
            cells = [_time_strategy(base, root, s, args.repeat) for s in ("copy", "symlink",
                                                                            "hardlink")]
            overlay = _time_bwrap(base, args.repeat, overlay=True) - _time_bwrap(
                base, args.repeat, overlay=False)
            row = "".join(f"{c:9.2f}" for c in [*cells, overlay])
            print(f"{name:<18}{files:>6}{row}")
        print("(median ms per sample; overlay = extra cost of the overlay inside one bwrap launch)")


if __name__ == "__main__":
    main()
