"""CoderUJB samples on real Defects4J checkouts, behind the same verdict rules as our engine.

Used for projects whose versions are Defects4J's own (``defects4j = "<id>"`` in the bugs
manifest, and the published ``coderujb`` benchmark's projects): each version is checked out
once (``defects4j checkout -p P -v Nb|Nf -w DIR``) into the environment cache; a sample gets a
copy, and every ``defects4j`` command it causes runs in the sandbox with only that copy writable
(no network: Defects4J's checkouts are local once ``init.sh`` ran).

- ``defects4j compile`` -> compiled or not;
- ``defects4j test [-t pkg.Class::method]`` -> the ``failing_tests`` file it writes
  (``--- pkg.Class::method`` followed by the stack trace, ``--- pkg.Class`` for a class that
  failed as a whole) and its ``Failing tests: N`` summary;
- ``defects4j coverage -t T -i CLASSES`` -> its summary ("Lines total: 10", ..., "Line
  coverage: 80.0%", "Condition coverage: 50.0%") and Cobertura's ``coverage.xml``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from codereval.errors import UserError
from codereval.families.coderujb.bugs import split_version
from codereval.families.coderujb.splice import NO_TEST_METHOD, spliced_test
from codereval.families.coderujb.verdicts import (
    Baseline,
    TestRun,
    buggy_failed,
    outcome_of,
    suite_verdict,
    suite_wall_time,
    trigger_verdict,
    ujb_spec,
    versions_for,
)
from codereval.java.splice import (
    SpliceError,
    declared_tests,
    is_junit3_test_file,
    parses,
    replace_lines,
)
from codereval.model import Outcome, Sample, Stage, Task, UjbKind, UjbMeasures, UjbSpec, Verdict
from codereval.runners.base import RunContext, Runner
from codereval.sandbox.base import ExecRequest, ExecResult, Mount
from codereval.storage.jsonl import atomic_write_text
from codereval.workspace.views import remove_tree

D4J_MISSING = ("defects4j is not on PATH: install Defects4J (git clone "
               "https://github.com/rjust/defects4j, cpanm --installdeps ., ./init.sh, then add "
               "framework/bin to PATH) or describe the project's versions in bugs.toml to run "
               "them on codereval's own engine")
CHECKOUT_TIMEOUT = 1800.0
COMPILE_SECONDS = 900.0
TAIL = 2000
ASSERTION = re.compile(r"(AssertionFailedError|AssertionError|ComparisonFailure)")


class Defects4JOutputError(Exception):
    """Defects4J printed or wrote something we cannot read."""


# --- parsing what Defects4J writes ------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class FailingTest:
    name: str  # pkg.Class::method, or pkg.Class for a class that failed as a whole
    reason: str  # the first line of the stack trace
    assertion: bool


def parse_failing_tests(text: str) -> list[FailingTest]:
    """The ``failing_tests`` file: each ``--- name`` line, with the line after it as reason."""
    lines = text.splitlines()
    found: list[FailingTest] = []
    for index, line in enumerate(lines):
        match = re.match(r"--- ([^:\s]+(?:::[^:\s]+)?)\s*$", line)
        if match is None:
            continue
        reason = lines[index + 1].strip() if index + 1 < len(lines) else ""
        if reason.startswith("--- "):
            reason = ""
        found.append(FailingTest(name=match.group(1), reason=reason,
                                 assertion=bool(ASSERTION.search(reason))))
    return found


def parse_test_summary(stdout: str) -> tuple[str, ...]:
    """``defects4j test``'s stdout: "Failing tests: N" then N lines "  - name"."""
    match = re.search(r"^Failing tests: (\d+)\s*$", stdout, re.M)
    if match is None:
        raise Defects4JOutputError("no 'Failing tests: N' line in defects4j test's output")
    names = tuple(re.findall(r"^\s+- (\S+)\s*$", stdout[match.end():], re.M))
    if len(names) != int(match.group(1)):
        raise Defects4JOutputError(f"defects4j test said {match.group(1)} failing tests but "
                                   f"listed {len(names)}")
    return names


@dataclass(frozen=True, kw_only=True)
class CoverageSummary:
    lines_total: int
    lines_covered: int
    conditions_total: int
    conditions_covered: int
    line_coverage: float  # percent, as printed
    condition_coverage: float


def parse_coverage_summary(stdout: str) -> CoverageSummary:
    """``defects4j coverage``'s summary lines (right-aligned labels, percentages to 0.1)."""
    values: dict[str, str] = {}
    for line in stdout.splitlines():
        label, sep, value = line.partition(":")
        if sep:
            values[label.strip()] = value.strip()
    needed = ("Lines total", "Lines covered", "Conditions total", "Conditions covered",
              "Line coverage", "Condition coverage")
    missing = [n for n in needed if n not in values]
    if missing:
        raise Defects4JOutputError(f"no '{missing[0]}:' line in defects4j coverage's output")
    try:
        return CoverageSummary(
            lines_total=int(values["Lines total"]), lines_covered=int(values["Lines covered"]),
            conditions_total=int(values["Conditions total"]),
            conditions_covered=int(values["Conditions covered"]),
            line_coverage=float(values["Line coverage"].rstrip("%")),
            condition_coverage=float(values["Condition coverage"].rstrip("%")))
    except ValueError as exc:
        raise Defects4JOutputError(f"unreadable coverage summary: {exc}") from None


def cobertura_counts(xml_text: str, classes: Sequence[str]) -> CoverageSummary:
    """Line and condition counts of ``classes`` (and their nested classes) in Cobertura's
    ``coverage.xml``: a line is covered when its hits are above 0; a branch line's
    ``condition-coverage="50% (1/2)"`` gives its conditions covered and total."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise Defects4JOutputError(f"coverage.xml unreadable: {exc}") from None
    wanted = set(classes)
    lines_total = lines_covered = cond_total = cond_covered = 0
    seen: set[str] = set()
    for element in root.iter("class"):
        outer = element.get("name", "").split("$", 1)[0]
        if outer not in wanted:
            continue
        seen.add(outer)
        block = element.find("lines")
        for line in block.findall("line") if block is not None else []:
            lines_total += 1
            lines_covered += int(line.get("hits", "0")) > 0
            if line.get("branch") == "true":
                match = re.search(r"\((\d+)/(\d+)\)", line.get("condition-coverage", ""))
                if match:
                    cond_covered += int(match.group(1))
                    cond_total += int(match.group(2))
    missing = sorted(wanted - seen)
    if missing:
        raise Defects4JOutputError(f"coverage.xml has no class {missing[0]}")
    return CoverageSummary(
        lines_total=lines_total, lines_covered=lines_covered, conditions_total=cond_total,
        conditions_covered=cond_covered,
        line_coverage=round(100 * lines_covered / lines_total, 1) if lines_total else 0.0,
        condition_coverage=round(100 * cond_covered / cond_total, 1) if cond_total else 0.0)


def d4j_test_run(result: ExecResult, failing_file: str, *, what: str, ran: int = 0) -> TestRun:
    """How one ``defects4j test`` ended, from its exit and the failing_tests file it wrote;
    ``ran`` is how many tests it ran (the lines of its ``all_tests`` file; 0 when unknown)."""
    stdout = result.stdout.decode("utf-8", "replace")
    stderr = result.stderr.decode("utf-8", "replace")
    base = TestRun(status=Verdict.INFRA_ERROR, stdout_tail=stdout[-TAIL:],
                   stderr_tail=stderr[-TAIL:], exit_code=result.exit_code, signal=result.signal,
                   wall_time=result.wall_time, cpu_time=result.cpu_time,
                   isolation=result.isolation)
    if result.sandbox_error:
        return dataclasses.replace(base, detail=f"sandbox: {result.sandbox_error}")
    if result.limit_exceeded:
        return dataclasses.replace(base, status=Verdict.RUNTIME_ERROR,
                                   detail=f"{what}: {result.limit_exceeded}")
    if result.timed_out:
        return dataclasses.replace(base, status=Verdict.TIMEOUT, detail=f"{what} ran out of time")
    if result.memory_exceeded:
        return dataclasses.replace(base, status=Verdict.MEMORY_EXCEEDED,
                                   detail=f"{what} ran out of memory")
    if result.exit_code != 0:
        last = stderr.strip().splitlines()[-1:] or [f"exit code {result.exit_code}"]
        return dataclasses.replace(base, detail=f"{what} failed: {last[0][:300]}")
    try:
        listed = parse_test_summary(stdout)
    except Defects4JOutputError as exc:
        return dataclasses.replace(base, detail=str(exc))
    failing = parse_failing_tests(failing_file)
    names = tuple(dict.fromkeys([*listed, *(f.name for f in failing)]))
    if not names:
        return dataclasses.replace(base, status=Verdict.PASSED, tests=max(1, ran),
                                   detail="no failing test")
    status = (Verdict.FAILED if all(f.assertion for f in failing) and failing
              else Verdict.RUNTIME_ERROR)
    reason = next((f.reason for f in failing if f.reason), "")
    return dataclasses.replace(base, status=status, failed=names, tests=max(ran, len(names)),
                               detail=f"{len(names)} failing: {', '.join(names[:3])}; {reason}")


# --- the executor -----------------------------------------------------------------------


class Defects4JExecutor(Runner):
    """Runs CoderUJB samples with the ``defects4j`` command on real checkouts."""

    name = "coderujb-defects4j"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._checkouts: dict[tuple[str, str], Path | str] = {}
        self._baselines: dict[tuple[str, str], Baseline | str] = {}

    def missing_toolchain(self) -> str | None:
        return D4J_MISSING if shutil.which("defects4j") is None else None

    def prepare(self, tasks: Sequence[Task], ctx: RunContext) -> dict[str, str]:
        if self.missing_toolchain():
            raise UserError(D4J_MISSING)
        blocked: dict[str, str] = {}
        for task in tasks:
            spec = ujb_spec(task)
            for version in versions_for(spec):
                found = self._checkout(spec.project, f"{spec.bug_id}{version}", ctx)
                if isinstance(found, str):
                    blocked[task.task_id] = found
                elif spec.kind in (UjbKind.FCG, UjbKind.APR):
                    baseline = self._baseline(spec.project, f"{spec.bug_id}{version}", ctx)
                    if isinstance(baseline, str):
                        blocked[task.task_id] = baseline
        return blocked

    def _checkout(self, project: str, version: str, ctx: RunContext) -> Path | str:
        split_version(version)
        with self._lock:
            known = self._checkouts.get((project, version))
        if known is not None:
            return known
        target = ctx.env_root / "defects4j" / f"{project}-{version}"
        result: Path | str = target
        if not (target / ".defects4j.config").is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=f".{project}-{version}.", dir=target.parent))
            done = subprocess.run(["defects4j", "checkout", "-p", project, "-v", version, "-w",
                                   str(staging / "tree")], capture_output=True, text=True,
                                  timeout=CHECKOUT_TIMEOUT, check=False)
            if done.returncode != 0 or not (staging / "tree" / ".defects4j.config").is_file():
                tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
                result = f"defects4j checkout -p {project} -v {version} failed: {tail[0]}"
            else:
                if target.exists():
                    shutil.rmtree(target)
                (staging / "tree").rename(target)
            shutil.rmtree(staging, ignore_errors=True)
        with self._lock:
            self._checkouts[(project, version)] = result
        return result

    def _baseline(self, project: str, version: str, ctx: RunContext) -> Baseline | str:
        with self._lock:
            known = self._baselines.get((project, version))
        if known is not None:
            return known
        cache = ctx.env_root / "defects4j" / f"{project}-{version}.failing.json"
        result: Baseline | str
        kept = json.loads(cache.read_text(encoding="utf-8")) if cache.is_file() else {}
        if "wall_time" in kept:  # older files lack the suite's time: measured again
            result = Baseline(failing=tuple(kept["failing"]), wall_time=float(kept["wall_time"]))
        else:
            pristine = self._checkout(project, version, ctx)
            if isinstance(pristine, str):
                return pristine
            with tempfile.TemporaryDirectory(dir=ctx.work_root) as tmp:
                work = Path(tmp) / "tree"
                shutil.copytree(pristine, work, symlinks=True)
                run = self._test(work, ctx, test=None, wall=max(1800.0, ctx.limits.wall_time))
            if run.status not in (Verdict.PASSED, Verdict.FAILED, Verdict.RUNTIME_ERROR):
                result = f"defects4j test on {project}-{version} did not finish: {run.detail}"
            else:
                result = Baseline(failing=run.failed, wall_time=run.wall_time or 0.0)
                atomic_write_text(cache, json.dumps({"failing": list(run.failed),
                                                     "wall_time": result.wall_time}) + "\n")
        with self._lock:
            self._baselines[(project, version)] = result
        return result

    # ------------------------------------------------------------------ commands

    def _d4j(self, work: Path, ctx: RunContext, args: Sequence[str], *, wall: float) -> ExecResult:
        """One defects4j command in the sandbox: only the sample's checkout is writable."""
        scratch = work.parent / "scratch"
        scratch.mkdir(exist_ok=True)
        limits = dataclasses.replace(ctx.limits, wall_time=wall, cpu_time=2 * wall,
                                     address_space=False)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(scratch),
               "TMPDIR": str(scratch), "LC_ALL": "C.UTF-8",
               **{k: v for k, v in os.environ.items() if k in ("JAVA_HOME", "TZ")}}
        return ctx.sandbox.run(ExecRequest(
            argv=("defects4j", *args, "-w", str(work)), cwd=work, scratch=scratch, env=env,
            mounts=(Mount(source=work, target=work, writable=True),), stdin=b"",
            limits=limits))

    def _test(self, work: Path, ctx: RunContext, *, test: str | None,
              wall: float | None = None) -> TestRun:
        args = ["test", *(["-t", test] if test else [])]
        result = self._d4j(work, ctx, args, wall=wall or ctx.limits.wall_time)
        failing = work / "failing_tests"
        text = failing.read_text(encoding="utf-8", errors="replace") if failing.is_file() else ""
        listed = work / "all_tests"
        ran = (sum(1 for line in listed.read_text(encoding="utf-8", errors="replace")
                   .splitlines() if line.strip()) if listed.is_file() else 0)
        return d4j_test_run(result, text, what=f"defects4j {' '.join(args)}", ran=ran)

    def _compile(self, work: Path, ctx: RunContext) -> ExecResult:
        return self._d4j(work, ctx, ["compile"], wall=max(COMPILE_SECONDS, ctx.limits.wall_time))

    # ------------------------------------------------------------------ one sample

    def run(self, task: Task, sample: Sample, ctx: RunContext) -> Outcome:
        base = {"task_id": task.task_id, "sample_index": sample.index}
        spec = ujb_spec(task)
        code = sample.code or ""
        ctx.work_root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix="d4j-", dir=ctx.work_root))
        try:
            trees: dict[str, Path] = {}
            for version in versions_for(spec):
                pristine = self._checkout(spec.project, f"{spec.bug_id}{version}", ctx)
                if isinstance(pristine, str):
                    return Outcome(**base, verdict=Verdict.INFRA_ERROR, stage=Stage.ENVIRONMENT,
                                   detail=pristine)
                trees[version] = tmp / version / "tree"
                trees[version].parent.mkdir()
                shutil.copytree(pristine, trees[version], symlinks=True)
            first = trees[versions_for(spec)[0]]
            if spec.kind in (UjbKind.FCG, UjbKind.APR):
                path, text = first / spec.location, ""
                text = replace_lines(path.read_text(encoding="utf-8"), code, start=spec.start,
                                     end=spec.end, where=spec.location)
            else:
                path = first / spec.test_file
                text = spliced_test(spec, code, path.read_text(encoding="utf-8"), version="f")
            syntax_ok = parses(text)
            for version, tree in trees.items():
                own = (version == "b" and spec.kind is UjbKind.ITG
                       and spec.start_buggy is not None)
                # The buggy checkout's own test file at its own lines when the task gives them.
                written = (spliced_test(spec, code, (tree / spec.test_file).read_text(
                    encoding="utf-8"), version="b") if own else text)
                (tree / path.relative_to(first)).write_text(written, encoding="utf-8")
            compiled = self._compile(first, ctx)
            if compiled.exit_code != 0 or compiled.timed_out:
                verdict = (Verdict.TIMEOUT if compiled.timed_out else
                           Verdict.COMPILE_ERROR if syntax_ok else Verdict.SYNTAX_ERROR)
                return Outcome(**base, verdict=verdict, stage=Stage.COMPILE,
                               detail=compiled.stderr.decode("utf-8", "replace")[-4000:],
                               ujb=UjbMeasures(syntax_ok=syntax_ok, compiled=False))
            if spec.kind in (UjbKind.FCG, UjbKind.APR):
                return self._method(spec, first, ctx, base)
            return self._generated_test(spec, code, trees, ctx, base)
        except (SpliceError, OSError, subprocess.SubprocessError) as exc:
            return Outcome(**base, verdict=Verdict.INFRA_ERROR, stage=Stage.INJECT,
                           detail=f"{task.task_id}: {exc}")
        finally:
            with contextlib.suppress(OSError):
                remove_tree(tmp)

    def _method(self, spec: UjbSpec, work: Path, ctx: RunContext,
                base: dict[str, object]) -> Outcome:
        version = f"{spec.bug_id}{versions_for(spec)[0]}"
        baseline = self._baseline(spec.project, version, ctx)
        if isinstance(baseline, str):
            return Outcome(**base, verdict=Verdict.INFRA_ERROR, stage=Stage.ENVIRONMENT,
                           detail=baseline)
        named = TestRun(status=Verdict.PASSED, tests=0)
        for test in spec.test_methods:  # defects4j test takes one -t at a time
            named = self._test(work, ctx, test=test)
            if not named.passed:
                break
        apr = spec.kind is UjbKind.APR
        wall = suite_wall_time(ctx.limits.wall_time, baseline)
        suite = self._test(work, ctx, test=None, wall=wall) if named.passed or apr else None
        verdict, detail = suite_verdict(named, suite, baseline.failing)
        after = suite.failed if apr and suite is not None and suite.ended_normally else None
        shown = suite if suite is not None and named.passed else named
        return outcome_of(base, verdict, detail, shown, UjbMeasures(
            syntax_ok=True, compiled=True, passed_fixed=named.passed,
            tests_failed_before=baseline.failing if apr else None, tests_failed_after=after))

    def _generated_test(self, spec: UjbSpec, code: str, trees: dict[str, Path],
                        ctx: RunContext, base: dict[str, object]) -> Outcome:
        spliced = (trees["f"] / spec.test_file).read_text(encoding="utf-8", errors="replace")
        names = declared_tests(code, junit3=is_junit3_test_file(spliced))
        if not names:
            return Outcome(**base, verdict=Verdict.NO_CODE, stage=Stage.CHECK,
                           detail=NO_TEST_METHOD,
                           ujb=UjbMeasures(syntax_ok=True, compiled=True))
        test = f"{spec.test_class}::{names[0]}"
        fixed = self._test(trees["f"], ctx, test=test)
        measures = UjbMeasures(syntax_ok=True, compiled=True, passed_fixed=fixed.passed)
        note = ""
        if fixed.passed and spec.classes_under_test:
            listing = trees["f"].parent / "instrument.txt"
            listing.write_text("\n".join(spec.classes_under_test) + "\n", encoding="utf-8")
            result = self._d4j(trees["f"], ctx, ["coverage", "-t", test, "-i", str(listing)],
                               wall=max(ctx.limits.wall_time, 300.0))
            try:
                summary = parse_coverage_summary(result.stdout.decode("utf-8", "replace"))
            except Defects4JOutputError as exc:
                return outcome_of(base, Verdict.INFRA_ERROR, f"coverage: {exc}", fixed, measures)
            measures = measures.model_copy(update={
                "lines_covered": summary.lines_covered, "lines_total": summary.lines_total,
                "branches_covered": summary.conditions_covered,
                "branches_total": summary.conditions_total})
            note = (f"line coverage {summary.line_coverage}%, condition coverage "
                    f"{summary.condition_coverage}%")
        if spec.kind is UjbKind.CTG:
            verdict, detail = fixed.status, fixed.detail
            if fixed.passed and spec.classes_under_test and not measures.lines_covered:
                verdict, detail = Verdict.FAILED, "the test passes but covers no line of it"
            return outcome_of(base, verdict, "; ".join(p for p in (detail, note) if p), fixed,
                            measures)
        buggy = None
        if fixed.status not in (Verdict.TIMEOUT, Verdict.MEMORY_EXCEEDED):
            compiled = self._compile(trees["b"], ctx)
            buggy = (self._test(trees["b"], ctx, test=test) if compiled.exit_code == 0 else
                     TestRun(status=Verdict.PASSED, detail="does not compile on the buggy "
                             "version"))
        measures = measures.model_copy(update={"failed_buggy": buggy_failed(buggy)})
        verdict, detail = trigger_verdict(fixed, buggy)
        return outcome_of(base, verdict, "; ".join(p for p in (detail, note) if p), fixed,
                        measures)





