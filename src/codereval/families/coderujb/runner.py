"""Run CoderUJB samples (FCG, CTG, ITG, APR) on our sandboxed Java engine, or on Defects4J.

A task lives in one bug of one project; its versions (``<bug>b``, ``<bug>f``) come from the bugs
manifest beside the projects manifest (``codereval.families.coderujb.bugs``). Each version is built
once into an ordinary Java environment, cached by content. Per sample, exactly as the Java
runner does for CoderEval: the changed file is compiled by the warm compiler into a private
folder placed first on the classpath, and the tests run in their own sandboxed JVM (no network,
read-only base, private scratch, limits), through codereval's harness, which confirms with the
per-run marker that the tests ran to their end and names the failing ones.

- FCG / APR: lines ``start..end`` of ``location`` are replaced by the sample in the fixed (FCG)
  or buggy (APR) version; the named tests run, then the whole suite.
- CTG / ITG: the sample's test method(s) join ``test_class`` in ``test_file`` and run alone on
  the fixed version under JaCoCo, which counts the lines and branches of
  ``classes_under_test`` they execute; ITG also runs them on the buggy version.

The verdict rules are in ``ujb_verdicts``. Projects whose bugs manifest entry says
``defects4j = "<id>"`` (and every task of the published ``coderujb`` benchmark when no bugs
manifest names its project) run through ``Defects4JExecutor`` instead, behind the same rules.
DD tasks never come here: ``coderujb-dd`` reads their answers.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from codereval.environments.java import JavaEnvInfo, JavaEnvironmentBuilder, load_env_info
from codereval.errors import UserError
from codereval.families.coderujb.bugs import (
    BUGS_FILE,
    ProjectBugs,
    bugs_manifest_for,
    load_bugs,
    split_version,
    version_spec,
)
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
from codereval.java.artifacts import ArtifactUnavailable, ensure_artifact, newer_junit
from codereval.java.build import HARNESS_MAIN
from codereval.java.classfile import ClassFileError, UsageIndex, api_change
from codereval.java.compiler import JavaCompiler, WarmJavac
from codereval.java.jacoco import (
    JACOCO_AGENT,
    JACOCO_CLI,
    CoverageReportError,
    agent_option,
    class_coverage,
)
from codereval.java.module_patches import patch_flags
from codereval.java.splice import (
    SpliceError,
    declared_tests,
    is_junit3_test_file,
    parses,
    replace_lines,
)
from codereval.java.test_selection import selected_test_classes
from codereval.java.toolchain import JAVA_LOCALE_FLAGS, find_jdk, missing_toolchain
from codereval.model import Outcome, Sample, Stage, Task, UjbKind, UjbMeasures, UjbSpec, Verdict
from codereval.runners.base import RunContext, Runner
from codereval.runners.java import (
    COMPILE_TIMEOUT,
    JVM_FLAGS,
    OOM_EXIT,
    SAMPLE_CLASSES,
    TAIL,
    JavaProjectRunner,
    classes_not_run,
    compile_stopped,
    exception_line,
    split_marker,
)
from codereval.runners.marker import new_marker
from codereval.sandbox.base import ExecRequest, ExecResult, Limits, Mount
from codereval.storage.jsonl import atomic_write_text
from codereval.workspace.views import remove_tree

# The benchmark names whose tasks this runner takes (the published dataset, our mini one).
UJB_BENCHMARKS = ("coderujb", "mini-coderujb")
# Defects4J's projects were written for, and are tested by Defects4J on, Java 8, where code
# may reflect into the JDK's own classes (Commons CSV's tests open java.io.Writer's
# constructor); Java 17 refuses that unless the package is opened. Their tests run with
# java.base's packages open, as on Java 8. (Module encapsulation is no security boundary
# here: the sandbox is.)
JAVA8_OPENS = tuple(f"--add-opens=java.base/{package}=ALL-UNNAMED" for package in (
    "java.io", "java.lang", "java.lang.invoke", "java.lang.reflect", "java.math", "java.net",
    "java.nio", "java.nio.charset", "java.security", "java.text", "java.time", "java.util",
    "java.util.concurrent", "java.util.concurrent.atomic", "java.util.regex", "sun.nio.ch"))
DD_NOT_RUN = ("defect detection (dd) is not executed here: the coderujb-dd runner reads its "
              "answer")
# A version's own failing tests are measured once, with more time than one sample gets: a
# Defects4J project's suite takes minutes of CPU (Compress, Math), more on a loaded machine.
BASELINE_MIN_SECONDS = 900.0
# 2 adds the suite's wall time, from which each sample's suite run gets its time; a baseline of
# format 1 (without it) is measured again.
BASELINE_FORMAT = "ujb-baseline/2"


def _read_baseline(cache: Path) -> Baseline | None:
    """The baseline kept in ``cache``; None when there is none of this format."""
    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT:
        return None
    return Baseline(failing=tuple(data["failing"]), wall_time=float(data["wall_time"]))


@dataclass(frozen=True, kw_only=True)
class VersionEnv:
    info: JavaEnvInfo
    key: str
    # What runs as the whole suite: the test classes the project's suite patterns name, or
    # (without patterns) every class the tests compiled.
    suite: tuple[str, ...] = ()
    # The bug's excluded tests: Defects4J removes them from its checkouts (flaky, looping,
    # failing on the fixed version), so the whole suite runs without them.
    skipped: tuple[str, ...] = ()
    # Tests known to fail on this version: a buggy version's trigger tests.
    failing: tuple[str, ...] = ()

    @property
    def suite_selectors(self) -> tuple[str, ...]:
        return (*(self.suite or (f"@{self.info.test_classes}",)),
                *(f"!{test}" for test in self.skipped))

    @property
    def baseline_selectors(self) -> tuple[str, ...]:
        """The unchanged suite's run: without the tests known to fail (a sample's run of the
        suite keeps them; its named tests are the trigger tests, and run first)."""
        return (*self.suite_selectors, *(f"!{test}" for test in self.failing))


class CoderUjbRunner(Runner):
    name = "coderujb"

    def __init__(self, *, compiler: JavaCompiler | None = None) -> None:
        self._java = JavaProjectRunner(compiler=compiler)
        self._lock = threading.Lock()
        self._bugs: dict[str, ProjectBugs] | None = None
        self._envs: dict[tuple[str, str], VersionEnv | str] = {}
        self._baselines: dict[str, Baseline | str] = {}
        # Per environment: which main and which test sources use each class (read once, and
        # only when a sample changes what other classes link to).
        self._usage: dict[str, tuple[UsageIndex, UsageIndex]] = {}
        self._jacoco: tuple[Path, Path] | str | None = None
        self._d4j: Runner | None = None

    def missing_toolchain(self) -> str | None:
        return missing_toolchain()

    # ------------------------------------------------------------------ preparation

    def prepare(self, tasks: Sequence[Task], ctx: RunContext) -> dict[str, str]:
        """Check every task against its version (one line for what is wrong, before anything
        runs), build the versions' environments and measure their baselines."""
        blocked: dict[str, str] = {}
        local: list[Task] = []
        d4j: list[Task] = []
        for task in tasks:
            spec = ujb_spec(task)
            if spec.kind is UjbKind.DD:
                blocked[task.task_id] = DD_NOT_RUN
            elif self._uses_defects4j(task, ctx):
                d4j.append(task)
            else:
                local.append(task)
        if d4j:
            blocked.update(self._defects4j().prepare(d4j, ctx))
        for task in local:
            spec = ujb_spec(task)
            bugs = self._project(spec.project, ctx)
            for version in versions_for(spec):
                bugs.recipe(f"{spec.bug_id}{version}")  # an unknown bug: one line, now
        for task in local:
            reason = self._prepare_task(task, ctx)
            if reason:
                blocked[task.task_id] = reason
        if any(ujb_spec(t).kind in (UjbKind.CTG, UjbKind.ITG) for t in local):
            jacoco = self._jacoco_jars()
            if isinstance(jacoco, str):
                blocked.update({t.task_id: jacoco for t in local
                                if ujb_spec(t).kind in (UjbKind.CTG, UjbKind.ITG)})
        if local:
            junit = self._java.junit_launcher()
            if isinstance(junit, str):
                blocked.update({t.task_id: junit for t in local})
            self._java.harness()
            compiler = self._java.compiler()
            if isinstance(compiler, WarmJavac):
                compiler.warm_up()
        return blocked

    def _prepare_task(self, task: Task, ctx: RunContext) -> str:
        spec = ujb_spec(task)
        for version in versions_for(spec):
            env = self._version_env(spec.project, f"{spec.bug_id}{version}", ctx)
            if isinstance(env, str):
                return env
            if spec.kind in (UjbKind.FCG, UjbKind.APR):
                _check_span(spec, task, _source_file(env.info, spec.location, task=task),
                            version=f"{spec.bug_id}{version}", info=env.info)
                baseline = self._baseline(env, ctx)
                if isinstance(baseline, str):
                    return baseline
            else:
                test_file = _source_file(env.info, spec.test_file, task=task)
                if spec.location == spec.test_file and spec.start > 0:
                    own = version == "b" and spec.start_buggy is not None
                    _check_span(spec, task, test_file, version=f"{spec.bug_id}{version}",
                                info=env.info,
                                lines=(spec.start_buggy or 0, spec.end_buggy or 0) if own
                                else None)
                if not spec.test_class:
                    raise UserError(f"task {task.task_id}: no test_class for its generated test",
                                    hint="give ujb.test_class (pkg.Class)")
        return ""

    def _uses_defects4j(self, task: Task, ctx: RunContext) -> bool:
        spec = ujb_spec(task)
        bugs = self._all_bugs(ctx)
        if spec.project in bugs:
            return bool(bugs[spec.project].defects4j)
        return task.benchmark == "coderujb"

    def _defects4j(self) -> Runner:
        with self._lock:
            if self._d4j is None:
                from codereval.families.coderujb.defects4j import Defects4JExecutor

                self._d4j = Defects4JExecutor()
            return self._d4j

    def _all_bugs(self, ctx: RunContext) -> dict[str, ProjectBugs]:
        with self._lock:
            if self._bugs is None:
                manifest = bugs_manifest_for(ctx.projects_dir)
                self._bugs = load_bugs(manifest) if manifest is not None else {}
            return self._bugs

    def _project(self, project: str, ctx: RunContext) -> ProjectBugs:
        bugs = self._all_bugs(ctx)
        if project not in bugs:
            where = bugs_manifest_for(ctx.projects_dir)
            raise UserError(
                f"project {project!r} has no bugs in "
                f"{where or f'a {BUGS_FILE} beside the projects manifest'}",
                hint=f"describe its bugs' versions in {BUGS_FILE} (see docs/coderujb.md)")
        return bugs[project]

    def _version_env(self, project: str, version: str, ctx: RunContext) -> VersionEnv | str:
        with self._lock:
            known = self._envs.get((project, version))
        if known is not None:
            return known
        bugs = self._project(project, ctx)
        spec = version_spec(bugs, version, root=ctx.env_root)
        env = JavaEnvironmentBuilder().build(spec, root=ctx.env_root)
        result: VersionEnv | str = env.error
        if env.ready:
            info = load_env_info(env.path)
            patterned = bool(bugs.suite_includes or bugs.suite_excludes)
            suite = tuple(selected_test_classes(
                info.test_classes, bugs.suite_includes or ("**/*",), bugs.suite_excludes)
                ) if patterned else ()
            bug, which = split_version(version)
            skipped = bugs.excluded.get(bug, ())
            failing = bugs.triggers.get(bug, ()) if which == "b" else ()
            result = (VersionEnv(info=info, key=env.key, suite=suite, skipped=skipped,
                                 failing=failing)
                      if suite or not patterned
                      else f"no test class of {project} {version} matches its suite's patterns "
                           f"(includes {list(bugs.suite_includes)}, excludes "
                           f"{list(bugs.suite_excludes)} in {BUGS_FILE})")
        with self._lock:
            self._envs[(project, version)] = result
        return result

    def version_environment(self, project: str, version: str,
                            ctx: RunContext) -> VersionEnv | str:
        """A version's built environment (``1b``, ``1f``), or why it could not be built."""
        return self._version_env(project, version, ctx)

    def run_tests(self, env: VersionEnv, ctx: RunContext, *, selectors: Sequence[str],
                  limits: Limits) -> TestRun:
        """The version's own tests (``pkg.Class``, ``pkg.Class::method``), unchanged, in the
        sandbox: what rebuilding a bug checks its versions with."""
        return self._run_tests(env.info, ctx, classes=None, selectors=selectors, limits=limits)

    def run_tests_per_test_coverage(self, env: VersionEnv, ctx: RunContext, *,
                                    selectors: Sequence[str], limits: Limits,
                                    folder: Path, packages: Sequence[str]) -> TestRun:
        """The version's tests with each test's own JaCoCo coverage of ``packages`` (``pkg.*``
        patterns) written into ``folder``: CoderUJB's map of the methods each test runs."""
        jars = self._jacoco_jars()
        if isinstance(jars, str):
            return TestRun(status=Verdict.INFRA_ERROR, detail=jars)
        return self._run_tests(env.info, ctx, classes=None, selectors=selectors, limits=limits,
                               coverage=(jars[0], folder / "all.exec", packages), per_test=True)

    def jacoco_cli(self) -> Path | str:
        jars = self._jacoco_jars()
        return jars if isinstance(jars, str) else jars[1]

    def _jacoco_jars(self) -> tuple[Path, Path] | str:
        with self._lock:
            if self._jacoco is None:
                try:
                    self._jacoco = (ensure_artifact(JACOCO_AGENT), ensure_artifact(JACOCO_CLI))
                except ArtifactUnavailable as exc:
                    self._jacoco = f"JaCoCo unavailable: {exc}"
            return self._jacoco

    def _baseline(self, env: VersionEnv, ctx: RunContext) -> Baseline | str:
        """The version's own failing tests and the time its whole suite took (unchanged),
        measured once per environment and kept beside the environment cache."""
        with self._lock:
            known = self._baselines.get(env.key)
        if known is not None:
            return known
        cache = self.baseline_file(env, ctx)
        found = _read_baseline(cache)
        result = found if found is not None else self._measure_baseline(env, ctx, cache)
        with self._lock:
            self._baselines[env.key] = result
        return result

    def baseline_file(self, env: VersionEnv, ctx: RunContext) -> Path:
        """Where a version's baseline is kept, beside the environment cache."""
        # The harness decides what counts as a failing test: its version is part of the key,
        # and so is what runs as the suite when patterns chose its classes or tests are left out.
        chosen = ("-" + hashlib.sha256("\n".join(env.baseline_selectors).encode()
                                       ).hexdigest()[:12]
                  if env.suite or env.skipped or env.failing else "")
        return (ctx.env_root / "ujb-baselines"
                / f"{env.key}-{self._java.harness().key}{chosen}.json")

    def _measure_baseline(self, env: VersionEnv, ctx: RunContext, cache: Path) -> Baseline | str:
        wall = max(BASELINE_MIN_SECONDS, 10 * ctx.limits.wall_time)
        limits = dataclasses.replace(ctx.limits, wall_time=wall, cpu_time=2 * wall)
        run = self._run_tests(env.info, ctx, classes=None, selectors=env.baseline_selectors,
                              limits=limits)
        if not run.ended_normally:
            return (f"the unchanged suite of {env.info.project_root.parent.name} did not "
                    f"run to its end ({run.status.value}: {run.detail})")
        failing = (*run.failed, *(t for t in env.failing if t not in run.failed))
        result = Baseline(failing=failing, wall_time=run.wall_time or 0.0)
        payload = {"format": BASELINE_FORMAT, "tests": run.tests,
                   "failing": list(result.failing), "wall_time": result.wall_time}
        # Two processes may measure the same version at once: each writes a whole file.
        atomic_write_text(cache, json.dumps(payload, indent=1) + "\n")
        return result

    def environment_fingerprint(self, task: Task, ctx: RunContext) -> str:
        spec = task.ujb
        if spec is None:
            return ""
        with self._lock:
            keys = [self._envs.get((spec.project, f"{spec.bug_id}{v}")) for v in versions_for(spec)]
        return "java:" + "+".join(k.key for k in keys if isinstance(k, VersionEnv))

    def close(self) -> None:
        self._java.close()
        if self._d4j is not None:
            self._d4j.close()

    # ------------------------------------------------------------------ one sample

    def run(self, task: Task, sample: Sample, ctx: RunContext) -> Outcome:
        base = {"task_id": task.task_id, "sample_index": sample.index}
        spec = task.ujb
        if spec is None:
            return Outcome(**base, verdict=Verdict.INFRA_ERROR, stage=Stage.INJECT,
                           detail="not a CoderUJB task (no ujb spec)")
        if spec.kind is UjbKind.DD:
            return Outcome(**base, verdict=Verdict.INFRA_ERROR, stage=Stage.CHECK,
                           detail=DD_NOT_RUN)
        if sample.code is None or not sample.code.strip():
            return Outcome(**base, verdict=Verdict.NO_CODE, stage=Stage.EXTRACT,
                           detail="no code was extracted")
        try:
            if self._uses_defects4j(task, ctx):
                return self._defects4j().run(task, sample, ctx)
            envs = {v: self._version_env(spec.project, f"{spec.bug_id}{v}", ctx)
                    for v in versions_for(spec)}
        except UserError as exc:
            return Outcome(**base, verdict=Verdict.INFRA_ERROR, stage=Stage.ENVIRONMENT,
                           detail=exc.one_line())
        broken = next((e for e in envs.values() if isinstance(e, str)), None)
        if broken is not None:
            return Outcome(**base, verdict=Verdict.INFRA_ERROR, stage=Stage.ENVIRONMENT,
                           detail=broken)
        ready = {v: e for v, e in envs.items() if isinstance(e, VersionEnv)}
        ctx.work_root.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="ujb-", dir=ctx.work_root))
        try:
            if spec.kind in (UjbKind.FCG, UjbKind.APR):
                return self._method_sample(task, spec, sample.code, ctx,
                                           env=ready[versions_for(spec)[0]], work=work, base=base)
            return self._test_sample(task, spec, sample.code, ctx, envs=ready, work=work,
                                     base=base)
        except (SpliceError, OSError) as exc:
            return Outcome(**base, verdict=Verdict.INFRA_ERROR, stage=Stage.INJECT,
                           detail=f"{task.task_id}: {exc}")
        finally:
            with contextlib.suppress(OSError):
                remove_tree(work)

    def _method_sample(self, task: Task, spec: UjbSpec, code: str, ctx: RunContext, *,
                       env: VersionEnv, work: Path, base: dict[str, object]) -> Outcome:
        """FCG / APR: the method replaced, the named tests, then the whole suite."""
        info = env.info
        target = _source_file(info, spec.location, task=task)
        # APR's lines are the *fixed* function's, in the row's file (CoderUJB splices into its
        # `source`, the fixed file, and writes that over the buggy checkout's): spliced into
        # the buggy file instead, a fix longer or shorter than the bug would cut the wrong lines.
        original = (task.file_content if spec.kind is UjbKind.APR and task.file_content
                    else info.read_source(target))
        text = replace_lines(original, code, start=spec.start, end=spec.end,
                             where=spec.location)
        syntax_ok = parses(text)
        classes = work / "classes"
        failure = self._compile(info, {_root_relative(info, target): text}, classes,
                                syntax_ok=syntax_ok, base=base)
        if failure is None:
            failure = self._relink(env, classes, base=base)
        apr = spec.kind is UjbKind.APR
        baseline = self._baseline(env, ctx)
        if isinstance(baseline, str):
            return Outcome(**base, verdict=Verdict.INFRA_ERROR, stage=Stage.ENVIRONMENT,
                           detail=baseline)
        if failure is not None:
            measures = UjbMeasures(syntax_ok=syntax_ok and failure.verdict is not
                                   Verdict.SYNTAX_ERROR, compiled=False,
                                   tests_failed_before=baseline.failing if apr else None)
            return failure.model_copy(update={"ujb": measures})
        if not spec.test_methods:
            return Outcome(**base, verdict=Verdict.INFRA_ERROR, stage=Stage.CHECK,
                           detail=f"task {task.task_id} names no test methods")
        named = self._run_tests(info, ctx, classes=classes, selectors=spec.test_methods,
                                limits=ctx.limits)
        suite: TestRun | None = None
        if named.passed or (apr and named.ended_normally):
            wall = suite_wall_time(ctx.limits.wall_time, baseline)
            cpu = ctx.limits.cpu_time
            suite_limits = dataclasses.replace(
                ctx.limits, wall_time=wall,
                cpu_time=None if cpu is None else cpu * wall / ctx.limits.wall_time)
            suite = self._run_tests(info, ctx, classes=classes, selectors=env.suite_selectors,
                                    limits=suite_limits)
        verdict, detail = suite_verdict(named, suite, (*baseline.failing, *env.skipped))
        after: tuple[str, ...] | None = None
        if apr and suite is not None and suite.ended_normally:
            after = suite.failed
        measures = UjbMeasures(syntax_ok=True, compiled=True, passed_fixed=named.passed,
                               tests_failed_before=baseline.failing if apr else None,
                               tests_failed_after=after)
        shown = suite if suite is not None and named.passed else named
        return outcome_of(base, verdict, detail, shown, measures)

    def _test_sample(self, task: Task, spec: UjbSpec, code: str, ctx: RunContext, *,
                     envs: dict[str, VersionEnv], work: Path, base: dict[str, object]) -> Outcome:
        """CTG / ITG: the test method(s) join the test class; run under JaCoCo on the fixed
        version, and (ITG) on the buggy one."""
        fixed = envs["f"]
        target = _source_file(fixed.info, spec.test_file, task=task)
        original = fixed.info.read_source(target)
        text = spliced_test(spec, code, original, version="f")
        syntax_ok = parses(text)
        texts = {"f": text}
        if "b" in envs and spec.start_buggy is not None:
            # The buggy version's own test file, at its own lines (the published ITG rows).
            buggy_file = _source_file(envs["b"].info, spec.test_file, task=task)
            texts["b"] = spliced_test(spec, code, envs["b"].info.read_source(buggy_file),
                                       version="b")
        names = declared_tests(code, junit3=is_junit3_test_file(original))
        relative = _root_relative(fixed.info, target)
        runs: dict[str, TestRun] = {}
        compiled_on: dict[str, Path] = {}
        for version, env in envs.items():
            classes = work / f"classes-{version}"
            # Without lines of its own, the buggy version gets the fixed version's test file,
            # as Defects4J gives a buggy checkout the fixed version's tests.
            failure = self._compile(env.info, {relative: texts.get(version, text)}, classes,
                                    syntax_ok=syntax_ok, base=base, test=True)
            if failure is not None:
                if version == "f":
                    return failure.model_copy(update={"ujb": UjbMeasures(
                        syntax_ok=syntax_ok and failure.verdict is not Verdict.SYNTAX_ERROR,
                        compiled=False)})
                # The test does not compile against the buggy version: it cannot fail there.
                runs[version] = TestRun(status=Verdict.COMPILE_ERROR,
                                        detail="does not compile against the buggy version")
                continue
            compiled_on[version] = classes
        if not names:
            return Outcome(**base, verdict=Verdict.NO_CODE, stage=Stage.CHECK,
                           detail=NO_TEST_METHOD,
                           ujb=UjbMeasures(syntax_ok=True, compiled=True))
        selectors = tuple(f"{spec.test_class}::{n}" for n in names)
        cut = spec.classes_under_test
        jacoco = self._jacoco_jars()
        if isinstance(jacoco, str):
            return Outcome(**base, verdict=Verdict.INFRA_ERROR, stage=Stage.RUN, detail=jacoco)
        scratch_exec = work / "coverage" / "jacoco.exec"
        runs["f"] = self._run_tests(fixed.info, ctx, classes=compiled_on["f"], selectors=selectors,
                                    limits=ctx.limits,
                                    coverage=(jacoco[0], scratch_exec, cut) if cut else None)
        measures = UjbMeasures(syntax_ok=True, compiled=True, passed_fixed=runs["f"].passed)
        coverage_note = ""
        if runs["f"].passed and cut:
            try:
                covered = self._coverage_report(fixed.info, ctx, cli=jacoco[1],
                                                exec_file=scratch_exec, classes=cut)
            except CoverageReportError as exc:
                return outcome_of(base, Verdict.INFRA_ERROR, f"coverage: {exc}", runs["f"],
                                  measures)
            measures = measures.model_copy(update=dataclasses.asdict(covered))
            coverage_note = (f"lines {covered.lines_covered}/{covered.lines_total}, branches "
                             f"{covered.branches_covered}/{covered.branches_total} of "
                             f"{', '.join(c.rsplit('.', 1)[-1] for c in cut)}")
        if spec.kind is UjbKind.CTG:
            verdict = runs["f"].status
            detail = "the test passes on the fixed version" if runs["f"].passed else _join(
                "the test does not pass on the fixed version", runs["f"].detail)
            if runs["f"].passed and cut and not measures.lines_covered:
                # As CoderUJB counts it: a passing test that runs no line of the code under
                # test has not tested it.
                verdict, detail = Verdict.FAILED, "the test passes but covers no line of it"
            return outcome_of(base, verdict, _join(detail, coverage_note), runs["f"], measures)
        buggy: TestRun | None = runs.get("b")
        if buggy is None and runs["f"].status not in (Verdict.TIMEOUT, Verdict.MEMORY_EXCEEDED):
            buggy = self._run_tests(envs["b"].info, ctx, classes=compiled_on["b"],
                                    selectors=selectors, limits=ctx.limits)
        if buggy is not None and buggy.status is Verdict.COMPILE_ERROR:
            # It cannot fail there, so it reveals nothing: judged as a test that passes there.
            failed: bool | None = False
            verdict, detail = trigger_verdict(runs["f"], dataclasses.replace(
                buggy, status=Verdict.PASSED))
            if runs["f"].passed:
                detail = "passes on the fixed version; does not compile against the buggy one"
        else:
            failed = buggy_failed(buggy)
            verdict, detail = trigger_verdict(runs["f"], buggy)
        measures = measures.model_copy(update={"failed_buggy": failed})
        return outcome_of(base, verdict, _join(detail, coverage_note), runs["f"], measures)

    # ------------------------------------------------------------------ pieces

    def _compile(self, info: JavaEnvInfo, sources: dict[str, str], classes: Path, *,
                 syntax_ok: bool, base: dict[str, object], test: bool = False,
                 ahead: Sequence[Path] = (), why: str = "") -> Outcome | None:
        """None when the sources compiled into ``classes``, else the outcome saying why not
        (``why`` before javac's words); a ``test`` compiles as the project's tests do. Either
        kind sees ``ahead`` on its classpath before the project's."""
        compiled = self._java.compiler_for(info).compile(
            sources, out_dir=classes, timeout=COMPILE_TIMEOUT,
            classpath=[*ahead, *(info.test_compile_classpath() if test
                                 else info.compile_classpath())],
            options=info.test_compile_options() if test else info.compile_options())
        stopped = compile_stopped(compiled, base)
        if stopped is not None:
            return stopped
        if compiled.ok:
            return None
        # The parser and javac agree on what is a syntax error: only then is it one.
        verdict = Verdict.COMPILE_ERROR if syntax_ok else Verdict.SYNTAX_ERROR
        return Outcome(**base, verdict=verdict, stage=Stage.COMPILE,
                       detail=(why + compiled.diagnostics.strip())[:4000],
                       stderr_tail=compiled.diagnostics[-TAIL:])

    def _relink(self, env: VersionEnv, classes: Path, *, base: dict[str, object],
                ) -> Outcome | None:
        """Compile again, into ``classes``, the project's classes that use a class whose
        signatures the sample changed (a return type, a parameter, a member gone): compiled
        against the old ones they would stop with ``NoSuchMethodError``, where Defects4J
        compiles the whole project again. None when nothing changed or they compiled, else
        the compile error (the project no longer compiles with the sample)."""
        info = env.info
        try:
            change = api_change(classes, info.classes)
            if not change.changed:
                return None
            main_users, test_users = self._usage_of(env)
        except (ClassFileError, OSError) as exc:
            return Outcome(**base, verdict=Verdict.INFRA_ERROR, stage=Stage.COMPILE,
                           detail=f"reading the compiled classes: {exc}")
        names = ", ".join(sorted(n.replace("/", ".") for n in change.changed))
        for test, users in ((False, main_users), (True, test_users)):
            sources = {}
            for relative in sorted(users.sources_using(change.changed) - change.sources):
                path = info.find_source(relative)
                if path is not None:
                    sources[relative] = info.read_source(path)
            if not sources:
                continue
            what = "tests" if test else "classes"
            failure = self._compile(
                info, sources, classes, syntax_ok=True, base=base, test=test, ahead=(classes,),
                why=(f"the sample changes what {names} offers, and the project's {what} that "
                     "use it no longer compile:\n"))
            if failure is not None:
                return failure
        return None

    def _usage_of(self, env: VersionEnv) -> tuple[UsageIndex, UsageIndex]:
        with self._lock:
            known = self._usage.get(env.key)
        if known is None:
            known = (UsageIndex.of(env.info.classes), UsageIndex.of(env.info.test_classes))
            with self._lock:
                self._usage[env.key] = known
        return known

    def _run_tests(self, info: JavaEnvInfo, ctx: RunContext, *, classes: Path | None,
                   selectors: Sequence[str], limits: Limits,
                   coverage: tuple[Path, Path, Sequence[str]] | None = None,
                   per_test: bool = False) -> TestRun:
        """Run tests in a sandboxed JVM through the harness; ``coverage`` is (JaCoCo agent,
        where its .exec goes, the classes it records); ``per_test`` writes each test's own
        coverage beside that file instead (``N.exec`` and ``index.tsv``)."""
        junit = self._java.junit_launcher()
        if isinstance(junit, str):
            return TestRun(status=Verdict.INFRA_ERROR, detail=junit)
        scratch = Path(tempfile.mkdtemp(prefix="scratch-", dir=ctx.work_root))
        try:
            # Tests run from the project's folder under Maven, Ant and Defects4J, and open
            # files by relative paths (Compress: src/test/resources/test1.xml): the working
            # folder shows the project's files (read-only, through links) beside the scratch.
            for entry in info.build_root.iterdir():
                if not (scratch / entry.name).exists():
                    (scratch / entry.name).symlink_to(entry)
            prefix = [classes] if classes is not None else []
            classpath = [*prefix, info.test_classes, info.classes,
                         *newer_junit(info.dependencies), *info.dependencies,
                         self._java.harness().harness, junit]
            memory = limits.memory_mb
            heap = [f"-Xmx{max(64, memory * 3 // 5)}m"] if memory else []
            agent: list[str] = []
            outside = [p for p in classpath[len(prefix) + 2:] if not p.is_relative_to(info.root)]
            writable: list[Path] = []
            if coverage is not None:
                jar, exec_file, cut = coverage
                exec_file.parent.mkdir(parents=True, exist_ok=True)
                agent = [agent_option(str(jar), destfile=str(exec_file), classes=cut),
                         f"-Dcodereval.jacoco.pertest={exec_file.parent}" if per_test
                         else "-Dcodereval.jacoco=dump"]
                outside.append(jar)
                writable.append(exec_file.parent)
            patches = info.module_patches()
            outside += patches.values()
            argv = (str(find_jdk().java), *JAVA_LOCALE_FLAGS, *JVM_FLAGS, *JAVA8_OPENS, *heap,
                    *patch_flags(patches), *agent,
                    f"-Djava.io.tmpdir={scratch}",
                    *([f"{SAMPLE_CLASSES}{classes}"] if classes is not None else []),
                    "-cp", os.pathsep.join(map(str, classpath)), HARNESS_MAIN, "tests", *selectors)
            marker = new_marker()
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(scratch),
                   "LC_ALL": "C.UTF-8"}
            needed = [*prefix, info.root, *outside]
            mounts = tuple(Mount(source=p, target=p) for p in dict.fromkeys(needed) if p.exists())
            mounts += tuple(Mount(source=p, target=p, writable=True) for p in writable)
            result = ctx.sandbox.run(ExecRequest(
                argv=argv, cwd=scratch, scratch=scratch, env=env, mounts=mounts,
                stdin=(marker + "\n").encode(),
                limits=dataclasses.replace(limits, address_space=False)))
            return classify_tests(result, marker=marker)
        finally:
            with contextlib.suppress(OSError):
                remove_tree(scratch)

    def _coverage_report(self, info: JavaEnvInfo, ctx: RunContext, *, cli: Path, exec_file: Path,
                         classes: Sequence[str]) -> CoverageCounts:
        """JaCoCo's command line turns the .exec into XML (sandboxed: the file came from the
        sample's JVM); the counters of ``classes`` are read from it."""
        if not exec_file.is_file():
            raise CoverageReportError("the test's JVM wrote no coverage data")
        out = exec_file.parent / "report.xml"
        argv = (str(find_jdk().java), *JAVA_LOCALE_FLAGS, "-XX:+UseSerialGC", "-jar", str(cli),
                "report", str(exec_file), "--classfiles", str(info.classes), "--xml", str(out),
                "--quiet")
        mounts = (Mount(source=info.root, target=info.root), Mount(source=cli, target=cli),
                  Mount(source=exec_file.parent, target=exec_file.parent, writable=True))
        limits = dataclasses.replace(ctx.limits, wall_time=max(60.0, ctx.limits.wall_time),
                                     cpu_time=max(120.0, ctx.limits.cpu_time or 0.0),
                                     address_space=False)
        result = ctx.sandbox.run(ExecRequest(
            argv=argv, cwd=exec_file.parent, scratch=exec_file.parent,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"},
            mounts=mounts, stdin=b"", limits=limits))
        if result.exit_code != 0 or not out.is_file():
            why = result.sandbox_error or result.stderr.decode("utf-8", "replace").strip()[-300:]
            raise CoverageReportError(f"jacococli report failed: {why}")
        found = class_coverage(out.read_text(encoding="utf-8"), classes)
        return CoverageCounts(**dataclasses.asdict(found))


@dataclass(frozen=True, kw_only=True)
class CoverageCounts:
    lines_covered: int
    lines_total: int
    branches_covered: int
    branches_total: int


def classify_tests(result: ExecResult, *, marker: str) -> TestRun:
    """The harness's ``tests`` mode: the marker line says how many ran and which failed."""
    stdout = result.stdout.decode("utf-8", "replace")
    stderr = result.stderr.decode("utf-8", "replace")
    status, printed = split_marker(stdout, marker)
    raw = TestRun(status=Verdict.INFRA_ERROR, stdout_tail=printed[-TAIL:],
                  stderr_tail=stderr[-TAIL:], exit_code=result.exit_code, signal=result.signal,
                  wall_time=result.wall_time, cpu_time=result.cpu_time,
                  isolation=result.isolation)

    def ended(status: Verdict, detail: str, *, failed: tuple[str, ...] = (),
              tests: int = 0) -> TestRun:
        return dataclasses.replace(raw, status=status, detail=detail, failed=failed,
                                   tests=tests)

    if result.sandbox_error:
        return ended(Verdict.INFRA_ERROR, f"sandbox: {result.sandbox_error}")
    not_run = classes_not_run(status)
    if not_run is not None:
        return ended(Verdict.INFRA_ERROR, not_run)
    if result.limit_exceeded:
        return ended(Verdict.RUNTIME_ERROR, result.limit_exceeded)
    if result.timed_out:
        return ended(Verdict.TIMEOUT, "the tests ran out of time")
    if result.memory_exceeded or (result.exit_code == OOM_EXIT[0] and
                                  OOM_EXIT[1] in stdout + stderr):
        return ended(Verdict.MEMORY_EXCEEDED, "the JVM ran out of memory")
    if not status or result.exit_code != 0:
        why = ("the JVM exited 0 before the tests finished (System.exit in the code?)"
               if result.exit_code == 0 and result.signal is None else
               exception_line(stderr) or f"exit code {result.exit_code}")
        return ended(Verdict.RUNTIME_ERROR, why)
    fields = dict(part.split("=", 1) for part in status.split()[1:] if "=" in part)
    if not status.startswith("tests ") or not {"run", "failures", "errors"} <= set(fields):
        return ended(Verdict.INFRA_ERROR, f"unreadable harness status {status!r}")
    tests, failures, errors = int(fields["run"]), int(fields["failures"]), int(fields["errors"])
    failed = tuple(dict.fromkeys(n for n in fields.get("failed", "").split(",") if n))
    summary = f"{tests} tests, {failures} failed, {errors} errors"
    if tests == 0 and not failed:
        return ended(Verdict.INFRA_ERROR, "JUnit found no tests to run")
    if errors:
        return ended(Verdict.RUNTIME_ERROR, _join(summary, exception_line(stderr)),
                     failed=failed, tests=tests)
    if failures:
        return ended(Verdict.FAILED, _join(summary, exception_line(stderr)), failed=failed,
                     tests=tests)
    return ended(Verdict.PASSED, summary, tests=tests)


def _check_span(spec: UjbSpec, task: Task, target: Path, *, version: str, info: JavaEnvInfo,
                lines: tuple[int, int] | None = None) -> None:
    """The task's lines must lie inside its file in that version: else the task is wrong."""
    start, end = lines or (spec.start, spec.end)
    # APR's lines are in the row's own file (the fixed one), where the sample is spliced.
    text = (task.file_content if spec.kind is UjbKind.APR and task.file_content
            else info.read_source(target))
    try:
        replace_lines(text, "", start=start, end=end,
                      where=f"{spec.location} of {spec.project} {version}")
    except SpliceError as exc:
        raise UserError(f"task {task.task_id}: {exc}",
                        hint="fix the task's ujb.start / ujb.end (1-based, inclusive)") from None


def _source_file(info: JavaEnvInfo, relative: str, *, task: Task) -> Path:
    path = info.project_root / relative
    if not relative or not path.is_file():
        raise UserError(f"task {task.task_id}: {relative or '(no file)'} is not in "
                        f"{info.project_root.parent.name}",
                        hint="check the task's ujb.location / test_file against the version")
    return path


def _root_relative(info: JavaEnvInfo, path: Path) -> str:
    """A file's path as javac names it: below the source root that holds it."""
    for root in (*info.main_roots, *info.test_roots):
        if path.is_relative_to(root):
            return str(path.relative_to(root))
    raise SpliceError(f"{path} is in no source root of the project")


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)
