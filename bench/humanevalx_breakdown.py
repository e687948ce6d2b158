"""Where a HumanEval-X sample's time goes, per language: sandbox launch, compile, link, run.

    PYTHONPATH=src .venv/bin/python bench/humanevalx_breakdown.py [--tasks 20] [--rounds 3]
        [--languages python,js,java,cpp,go,rust] [--data-dir ../shared/data/humanevalx]

For the first ``--tasks`` canonical solutions of each language, one at a time (no parallelism,
so the phases do not compete with each other), each phase best of ``--rounds``, variants
interleaved task by task; the table shows the median over tasks in milliseconds:

* launch: a no-op command through the sandbox with the sample's mounts and limits (bubblewrap,
  cgroups), paid once for the compile and once for the run;
* compile: the compiler up to an object file, bare (C++ ``g++ -c``; Go both ``go tool compile``
  calls; Rust ``rustc --emit=obj``; Java the warm in-process compiler);
* link: the linker, bare (C++ ``g++`` on the object; Go ``go tool link``; Rust the whole
  ``rustc`` minus the object-only run, i.e. the link ``rustc`` drives);
* run: the program, bare;
* sandboxed: the compile request and the run request through the sandbox, one launch each
  (the runner's workspace and judging excluded);
* one launch: the same two requests as a sample pays them now, in one launch
  (``Sandbox.run_staged``: the build, then the run under its own limits).

Variants, so the table shows before and after: C++ ``no pch`` (the headers as text, GNU ld),
``pch`` (precompiled header, GNU ld: what was merged before), ``pch+mold``; Go ``dwarf`` (the
packages compiled as ``go list -export`` leaves them) and ``no dwarf``; Rust ``static std`` and
``dynamic std``. Verdict-relevant flags are the same in every variant of a language.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from tables import table

from codereval.evaluation.engine import default_env_root
from codereval.families.humanevalx.dataset import load_humanevalx
from codereval.java.compiler import JavaCompiler, WarmJavac
from codereval.model import Task
from codereval.runners.program_source import build_program
from codereval.runners.program_toolchains import (
    CPP_FLAGS,
    CPP_HEADER,
    CPP_LIBS,
    TOOLCHAINS,
    CppToolchain,
    GoToolchain,
    RustToolchain,
    Toolchain,
)
from codereval.sandbox import ExecRequest, Limits, Sandbox, get_sandbox

REPO = Path(__file__).resolve().parents[1]
PHASES = ("launch", "compile", "link", "run", "sandboxed", "one launch")
Argv = list[str] | None


def variants(language: str) -> dict[str, Toolchain]:
    if language == "cpp":
        return {"no pch": CppToolchain(precompiled=False, fast_linker=False),
                "pch": CppToolchain(fast_linker=False), "pch+mold": CppToolchain()}
    if language == "go":
        return {"dwarf": GoToolchain(lean_packages=False, lean_testify=False,
                                     minimal_deps=False),
                "no dwarf": GoToolchain(lean_testify=False, minimal_deps=False),
                "lean testify": GoToolchain(minimal_deps=False),
                "minimal deps": GoToolchain()}
    if language == "rust":
        return {"static std": RustToolchain(dynamic_std=False), "dynamic std": RustToolchain()}
    return {"ours": TOOLCHAINS[language]()}


def split(tc: Toolchain, workdir: Path, main: str) -> tuple[Argv, Argv]:
    """The compile (to an object) and the link of a sample as two bare commands."""
    if isinstance(tc, CppToolchain):
        compile_ = [tc.gxx, *CPP_FLAGS, "-include", str(tc.cache / CPP_HEADER), "-c", main,
                    "-o", "program.o"]
        return compile_, [tc.gxx, "program.o", "-o", "program", *tc.linker, *CPP_LIBS]
    if isinstance(tc, GoToolchain) and tc.direct:
        source = (workdir / main).read_text(encoding="utf-8")
        lines = tc._direct_script(workdir, tc.packages_for(source)[1]).splitlines()
        return (["/bin/sh", "-c", "\n".join(lines[:3])],
                ["/bin/sh", "-c", "\n".join([lines[0], lines[3]])])
    if isinstance(tc, RustToolchain):
        argv = tc._argv(main, tc.link)
        return [*argv[:-2], "--emit=obj", "-o", "program.o"], argv
    return None, None


def best_of(rounds: int, action: Callable[[], object]) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def bare(argv: list[str], request: ExecRequest) -> None:
    done = subprocess.run(argv, cwd=request.cwd, env=request.env, capture_output=True,
                          timeout=120, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]} failed: {done.stderr.decode(errors='replace')[-400:]}")


def sandboxed(sandbox: Sandbox, request: ExecRequest) -> None:
    result = sandbox.run(request)
    if result.exit_code != 0:
        raise SystemExit(f"sandboxed {request.argv[0]} failed: "
                         f"{(result.stderr + result.stdout).decode(errors='replace')[-400:]}")


def measure(language: str, tc: Toolchain, task_index: int, *, data: list[Task],
            sandbox: Sandbox, limits: Limits, root: Path, rounds: int,
            javac: JavaCompiler | None) -> dict[str, float]:
    task = data[task_index]
    workdir = Path(tempfile.mkdtemp(prefix=f"{language}-", dir=root))
    program = build_program(task, task.reference)
    for name, text in program.files.items():
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        (workdir / name).write_text(text, encoding="utf-8")
    times: dict[str, float] = {}
    compile_request = tc.compile_request(workdir, program.main, limits)
    if javac is not None and language == "java":
        def java_compile() -> None:
            assert javac is not None
            result = javac.compile(program.files, classpath=[], out_dir=workdir / "classes",
                                   timeout=60.0)
            if not result.ok:
                raise SystemExit(f"javac failed: {result.diagnostics[-400:]}")
        times["compile"] = best_of(rounds, java_compile)
    compile_argv, link_argv = split(tc, workdir, program.main)
    if compile_request is not None:
        if compile_argv is not None:
            times["compile"] = best_of(rounds, lambda: bare(compile_argv, compile_request))
        if link_argv is not None:
            times["link"] = best_of(rounds, lambda: bare(link_argv, compile_request))
            if isinstance(tc, RustToolchain):
                times["link"] = max(0.0, times["link"] - times["compile"])
        if compile_argv is None:
            times["compile"] = best_of(rounds, lambda: bare(list(compile_request.argv),
                                                            compile_request))
    run_request = tc.run_request(workdir, program.main, limits)
    noop = replace(run_request, argv=("/bin/true",))
    times["launch"] = best_of(rounds, lambda: sandboxed(sandbox, noop))
    # The sandboxed pair last: it leaves the binary the run needs (built by the real request).
    def both() -> None:
        if compile_request is not None:
            sandboxed(sandbox, compile_request)
        sandboxed(sandbox, run_request)
    times["sandboxed"] = best_of(rounds, both)
    if compile_request is not None:
        def staged() -> None:
            assert compile_request is not None
            built, ran = sandbox.run_staged(compile_request, run_request)
            if ran is None or ran.exit_code != 0:
                raise SystemExit(f"staged run failed: {built} {ran}")
        times["one launch"] = best_of(rounds, staged)
    times["run"] = best_of(rounds, lambda: bare(list(run_request.argv), run_request))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data" /
                        "humanevalx")
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--languages", default="python,js,java,cpp,go,rust")
    args = parser.parse_args()

    sandbox = get_sandbox("auto")
    limits = Limits(wall_time=30.0)
    cache_root = default_env_root() / "toolchains"
    javac: JavaCompiler | None = None
    rows = []
    loads = []
    with tempfile.TemporaryDirectory(prefix="hx-breakdown-") as tmp:
        root = Path(tmp)
        try:
            for language in args.languages.split(","):
                data = load_humanevalx(language, data_dir=args.data_dir)
                chosen = variants(language)
                for tc in chosen.values():
                    tc.ensure(cache_root)
                if language == "java" and javac is None:
                    javac = WarmJavac(pool_size=1)
                per: dict[str, dict[str, list[float]]] = {v: {} for v in chosen}
                for index in range(min(args.tasks, len(data))):
                    for name, tc in chosen.items():
                        times = measure(language, tc, index, data=data, sandbox=sandbox,
                                        limits=limits, root=root, rounds=args.rounds,
                                        javac=javac)
                        for phase, seconds in times.items():
                            per[name].setdefault(phase, []).append(seconds)
                loads.append(os.getloadavg()[0])
                for name, phases in per.items():
                    cells = [f"{1000 * statistics.median(phases[p]):.0f}" if p in phases
                             else "-" for p in PHASES]
                    rows.append([language, name, *cells, f"{loads[-1]:.1f}"])
        finally:
            if javac is not None:
                javac.close()
    headers = ["language", "variant", *(f"{p} ms" for p in PHASES), "load"]
    print(f"sandbox: {sandbox.isolation}; {args.tasks} tasks per language, one at a time, "
          f"best of {args.rounds}; median over tasks")
    print(table(headers, rows))
    print("sandboxed = compile and run requests in a launch each; one launch = both in one "
          "(what a compiled sample pays); load = 1-minute load average after the language")


if __name__ == "__main__":
    main()
