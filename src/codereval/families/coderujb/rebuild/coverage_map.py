"""Which source methods each test runs, on a bug's fixed version: CoderUJB's function-test map
(its ``extract_function_test_map.py``), from which FCG and CTG tasks are chosen.

CoderUJB runs ``defects4j coverage`` once per test method and reads Cobertura's report; here the
version's whole suite runs once in the sandbox under JaCoCo, the harness writing each test's own
coverage (``-Dcodereval.jacoco.pertest``), and ``CoverageMap.java`` reads every test's file
against the compiled classes. Each mapping is one (test method, source method it ran) pair with
the method's executable lines (1-based, covered or not) and its line rate, as Cobertura gives.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from codereval.families.coderujb.runner import CoderUjbRunner, VersionEnv
from codereval.java.toolchain import JAVA_LOCALE_FLAGS, find_jdk
from codereval.runners.base import RunContext
from codereval.sandbox.base import ExecRequest, Limits, Mount
from codereval.workspace.views import remove_tree

# The whole suite under JaCoCo, each test's coverage written apart: minutes for Math.
SUITE_SECONDS = 3600.0
ANALYSIS_SECONDS = 1800.0


class CoverageMapError(Exception):
    """The map could not be made; the message says why."""


@dataclass(frozen=True, kw_only=True)
class Mapping:
    test_file: str  # the test class, pkg.FooTest
    test_function: str
    be_test_class_name: str  # the source class, binary name (pkg.Foo$Inner)
    be_test_class_file: str  # pkg/Foo.java, below the source root
    be_test_function_name: str  # <init> for constructors
    be_test_function_signature: str  # the JVM descriptor
    line_numbers: tuple[str, ...]
    method_line_rate: float


def packages_of(classes: Path) -> list[str]:
    """``pkg.*`` patterns covering every class file under ``classes`` (outermost only)."""
    found: set[str] = set()
    for dirpath, _dirs, files in os.walk(classes):
        if any(f.endswith(".class") for f in files):
            found.add(os.path.relpath(dirpath, classes).replace(os.sep, "."))
    ordered = sorted(found, key=len)
    kept: list[str] = []
    for package in ordered:
        if package == ".":
            return ["*"]
        if not any(package == k or package.startswith(k + ".") for k in kept):
            kept.append(package)
    return [f"{k}.*" for k in sorted(kept)]


def coverage_map(runner: CoderUjbRunner, ctx: RunContext, env: VersionEnv) -> list[Mapping]:
    info = env.info
    cli = runner.jacoco_cli()
    if isinstance(cli, str):
        raise CoverageMapError(cli)
    ctx.work_root.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="testmap-", dir=ctx.work_root))
    try:
        limits = Limits(wall_time=SUITE_SECONDS, cpu_time=2 * SUITE_SECONDS,
                        memory_mb=ctx.limits.memory_mb, processes=ctx.limits.processes,
                        file_size_mb=ctx.limits.file_size_mb, disk_mb=None)
        run = runner.run_tests_per_test_coverage(
            env, ctx, selectors=env.suite_selectors, limits=limits, folder=folder,
            packages=packages_of(info.classes))
        if not (folder / "index.tsv").is_file():
            raise CoverageMapError(f"the suite wrote no per-test coverage ({run.status.value}: "
                                   f"{run.detail})")
        source = resources.files("codereval.java").joinpath("coverage/CoverageMap.java")
        with resources.as_file(source) as program:
            argv = (str(find_jdk().java), *JAVA_LOCALE_FLAGS, "-XX:+UseSerialGC", "-cp",
                    str(cli), str(program), str(info.classes), str(folder),
                    str(folder / "map.jsonl"))
            mounts = (Mount(source=info.root, target=info.root), Mount(source=cli, target=cli),
                      Mount(source=program.parent, target=program.parent),
                      Mount(source=folder, target=folder, writable=True))
            result = ctx.sandbox.run(ExecRequest(
                argv=argv, cwd=folder, scratch=folder, mounts=mounts, stdin=b"",
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8",
                     "HOME": str(folder)},
                limits=Limits(wall_time=ANALYSIS_SECONDS, cpu_time=2 * ANALYSIS_SECONDS,
                              memory_mb=4096, disk_mb=None, file_size_mb=None,
                              address_space=False)))
        if result.exit_code != 0 or result.sandbox_error:
            why = result.sandbox_error or result.stderr.decode("utf-8", "replace")[-500:]
            raise CoverageMapError(f"reading the per-test coverage failed: {why}")
        return parse_map((folder / "map.jsonl").read_text(encoding="utf-8", errors="replace"))
    finally:
        remove_tree(folder)


def parse_map(text: str) -> list[Mapping]:
    mappings = []
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        row = json.loads(line)
        test_file, _, test_function = str(row["test"]).partition("::")
        if not test_function:
            continue
        mappings.append(Mapping(
            test_file=test_file, test_function=test_function,
            be_test_class_name=str(row["class"]), be_test_class_file=str(row["file"]),
            be_test_function_name=str(row["method"]),
            be_test_function_signature=str(row["desc"]),
            line_numbers=tuple(str(n) for n in row["lines"]),
            method_line_rate=float(row["rate"])))
    return mappings
