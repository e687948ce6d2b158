"""Evaluate the 820 HumanEval-X canonical solutions; compare with the naive per-sample commands.

    .venv/bin/python bench/humanevalx.py [--data-dir ../shared/data/humanevalx] [--workers 2]
        [--baseline 20] [--languages python,cpp,java,js,go] [--sandbox auto]

Ours: ProgramRunner in the sandbox (C++ precompiled header, warm Java compiler, warm Go build
cache with ``go test -c``), ``--workers`` threads. Baseline: what CodeGeeX's harness runs for each
sample, with no sandbox — ``python3 f.py``; ``g++ -std=c++11`` on the program with its helper
headers prepended; ``javac`` then ``java``; ``node``; ``go test`` in a fresh directory (sharing the
default Go build cache) — on the first ``--baseline`` tasks of each language, same thread count,
extrapolated to 164. Prints one table with both side by side and the total wall time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from codereval.benchmarks.humanevalx import load_humanevalx
from codereval.engine import default_env_root
from codereval.model import Sample, Task, Verdict
from codereval.runners.base import RunContext
from codereval.runners.program import ProgramRunner
from codereval.runners.program_source import GO_STD_PACKAGES
from codereval.runners.program_toolchains import CPP_HEADERS, GoToolchain
from codereval.sandbox import Limits, get_sandbox

REPO = Path(__file__).resolve().parents[1]
# The bare interpreter, as the runner uses (not a pyenv or venv wrapper script).
PYTHON = os.path.realpath(getattr(sys, "_base_executable", sys.executable))


def ours(tasks: list[Task], ctx: RunContext, runner: ProgramRunner,
         workers: int) -> tuple[float, int]:
    started = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        outcomes = list(pool.map(
            lambda t: runner.run(t, Sample(task_id=t.task_id, code=t.reference), ctx), tasks))
    return time.perf_counter() - started, sum(o.verdict is Verdict.PASSED for o in outcomes)


def _sh(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> int:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, timeout=120, check=False,
                          env=env)
    return done.returncode


def naive_command(task: Task, work: Path, go_env: dict[str, str]) -> bool:
    """One sample the way CodeGeeX's harness runs it (its file layout, no sandbox)."""
    language = task.language.value
    prefix = task.extra["prefix"]
    test = task.test.code if task.test else ""
    code = task.reference
    if language == "python":
        (work / "f.py").write_text(f"{prefix}{code}\n{test}\n")
        return _sh([PYTHON, "f.py"], work) == 0
    if language == "cpp":
        # CodeGeeX's nine helper includes (the first nine of ours), no precompiled header.
        helpers = "".join(f"#include<{h}>\n" for h in CPP_HEADERS[:9])
        (work / "test.cpp").write_text(f"{helpers}{prefix}{code}\n{test}\n")
        if _sh(["g++", "-std=c++11", "test.cpp", "-lcrypto", "-lssl"], work) != 0:
            return False
        return _sh(["./a.out"], work) == 0
    if language == "java":
        (work / "Main.java").write_text(f"{prefix}{code}\n{test}\n")
        if _sh(["javac", "Main.java"], work) != 0:
            return False
        return _sh(["java", "-ea", "-cp", ".", "Main"], work) == 0
    if language == "js":
        (work / "test.js").write_text(f"{prefix}{code}\n{test}\n")
        return _sh(["node", "test.js"], work) == 0
    if language == "go":
        body = f"{prefix}{code}"
        used = [p for n, p in GO_STD_PACKAGES.items() if f"{n}." in body]
        imports = "import (\n" + "".join(f'    "{p}"\n' for p in used) + ")\n" if used else ""
        setup = task.extra["go_test_setup"]
        (work / "main_test.go").write_text(f"{setup}\n{imports}{body}\n{test}\n")
        for name in ("go.mod", "go.sum"):
            shutil.copyfile(Path(go_env["TEMPLATE"]) / name, work / name)
        return _sh(["go", "test", "./..."], work, env=go_env) == 0
    raise ValueError(language)


def baseline(tasks: list[Task], workers: int, go_env: dict[str, str]) -> tuple[float, int]:
    root = Path(tempfile.mkdtemp(prefix="hx-baseline-"))
    counter = iter(range(1 << 30))

    def one(task: Task) -> bool:
        work = root / str(next(counter))
        work.mkdir()
        try:
            return naive_command(task, work, go_env)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    started = time.perf_counter()
    try:
        with ThreadPoolExecutor(workers) as pool:
            passed = sum(pool.map(one, tasks))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return time.perf_counter() - started, passed


def _go_env(runner_go: GoToolchain) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"GOMODCACHE": str(runner_go.modcache), "GOFLAGS": "-mod=mod",
                "GOPROXY": "off", "GOSUMDB": "off", "GOTOOLCHAIN": "local",
                "TEMPLATE": str(runner_go.template)})
    # The naive harness keeps Go's default build cache (warm after the first sample).
    env.pop("GOCACHE", None)
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data" /
                        "humanevalx")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--baseline", type=int, default=20,
                        help="tasks per language for the naive baseline (0: skip)")
    parser.add_argument("--languages", default="python,cpp,java,js,go")
    parser.add_argument("--sandbox", default="auto")
    args = parser.parse_args()

    runner = ProgramRunner()
    work_root = Path(tempfile.mkdtemp(prefix="hx-bench-"))
    ctx = RunContext(sandbox=get_sandbox(args.sandbox), limits=Limits(wall_time=30.0),
                     work_root=work_root, env_root=default_env_root())
    rows = []
    total_started = time.perf_counter()
    ours_total = 0.0
    try:
        for language in args.languages.split(","):
            tasks = load_humanevalx(language, data_dir=args.data_dir)
            prepared = time.perf_counter()
            blocked = runner.prepare(tasks, ctx)
            prepare_time = time.perf_counter() - prepared
            if blocked:
                raise SystemExit(f"{language}: {next(iter(blocked.values()))}")
            wall, passed = ours(tasks, ctx, runner, args.workers)
            ours_total += wall
            row = [
                language, f"{passed}/{len(tasks)}", f"{wall:.1f}",
                f"{1000 * wall / len(tasks):.0f}", f"{prepare_time:.1f}",
            ]
            if args.baseline:
                subset = tasks[: args.baseline]
                go_tc = runner._toolchain("go", ctx) if language == "go" else None
                go_env = _go_env(go_tc) if isinstance(go_tc, GoToolchain) else {}
                b_wall, b_passed = baseline(subset, args.workers, go_env)
                per = b_wall / len(subset)
                row += [f"{b_passed}/{len(subset)}", f"{1000 * per:.0f}",
                        f"{per * len(tasks):.1f}", f"{per * len(tasks) / wall:.1f}x"]
            rows.append(row)
    finally:
        runner.close()
        shutil.rmtree(work_root, ignore_errors=True)
    headers = ["language", "ours pass", "ours wall s", "ours ms/sample", "prepare s"]
    if args.baseline:
        headers += ["naive pass", "naive ms/sample", "naive est. 164 s", "speedup"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    print(f"sandbox: {ctx.sandbox.isolation}; workers: {args.workers}; cores: {os.cpu_count()}")
    print("  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True)))
    for row in rows:
        print("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))
    print(f"ours, all languages: {ours_total:.1f} s for the canonical solutions "
          f"(whole script incl. baseline: {time.perf_counter() - total_started:.1f} s)")


if __name__ == "__main__":
    main()
