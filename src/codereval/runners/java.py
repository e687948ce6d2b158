"""Run generated Java methods inside their projects (CoderEval Java, our own Java tasks).

Per sample: inject the method into its file, compile that file and the task's test class into a
private directory against the environment's prebuilt classes (the warm compiler by default),
then run the test in its own sandboxed JVM (exec'd from a warm worker's fork under the warm
executor) with the private directory on the classpath. Under the warm executor that JVM is
started before the compile: it boots while javac works and reads the per-run marker from stdin
before it loads any class, so it gets the marker (and goes on to the test) only once the classes
are written; a compile that fails kills it, and a classpath the compile changed gets a new one.
The base project and its environment are only read.

Verdicts. A ``<Class>_<method>`` test (``java_main``) prints booleans from ``main``: in compat
mode a sample passes when stdout holds "true" and no "false", as on the original platform; by
default the test must also have run to its end, which our harness (``RunTest``) confirms by
printing the per-run marker after ``main`` returned. JUnit 5 tests run through the JUnit
Platform launcher, plain JUnit 3/4 classes on JUnit 4's own runner (which the Platform's vintage
engine would only wrap): assertion failures are ``failed``, any other exception
``runtime_error``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from codereval.environments.base import ProjectSpec, load_manifest
from codereval.environments.java import JavaEnvInfo, JavaEnvironmentBuilder, load_env_info
from codereval.errors import UserError
from codereval.java.artifacts import (
    JUNIT_CONSOLE,
    ArtifactUnavailable,
    ensure_artifact,
    newer_junit,
)
from codereval.java.build import HARNESS_MAIN, JavaTools, ensure_built
from codereval.java.cds import ClassPathPlan, SharedArchives
from codereval.java.compiler import CompileResult, JavaCompiler, PlainEcj, WarmJavac
from codereval.java.inject import (
    JavaInjectionError,
    first_class_name,
    inject_method,
    package_of,
)
from codereval.java.module_patches import patch_flags
from codereval.java.recording import REPLAY_JVM_FLAGS, RecorderTools, ensure_recorder, uses_replay
from codereval.java.toolchain import JAVA_LOCALE_FLAGS, find_jdk, missing_toolchain
from codereval.model import (
    NO_TEST,
    Language,
    Outcome,
    Provenance,
    Sample,
    Stage,
    Task,
    TestKind,
    Verdict,
    compiled_untested,
)
from codereval.runners.base import RunContext, Runner, sample_workdir
from codereval.runners.marker import new_marker
from codereval.sandbox.base import ExecRequest, ExecResult, Mount, Sandbox

if TYPE_CHECKING:
    from codereval.sandbox.warm import HeldRun, Slot

TAIL = 2000
JUNIT_KINDS = (TestKind.JUNIT4, TestKind.JUNIT5)
# -XX:+ExitOnOutOfMemoryError prints this (to stdout) and exits with status 3.
OOM_EXIT = (3, "Terminating due to java.lang.OutOfMemoryError")
# Chosen by measurement (bench/java_jvm_start.py, docs/executors.md): G1, because only with G1
# does a JDK 17 JVM map the heap objects of the JDK's class-data sharing archive (with the serial
# collector it logs "CDS heap data is being ignored" and builds them again at every start); the
# C1 compiler only; no shared perf-data file.
JVM_FLAGS = ("-XX:+UseG1GC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
             "-XX:+ExitOnOutOfMemoryError", "-Xss8m", "-Djava.awt.headless=true")
COMPILE_TIMEOUT = 120.0
# The harness checks that every class below this folder is the one the JVM loads (RunTest's
# unverifiedClasses): a missing or shadowed folder would run the project's original method in
# the sample's place, and a wrong sample would pass. It then reports "unverified: ..." under the
# marker instead of running the test.
SAMPLE_CLASSES = "-Dcodereval.sample.classes="
UNVERIFIED = "unverified"


def classes_not_run(status: str) -> str | None:
    """The infra_error detail when the harness's status says the test JVM would not have run
    the sample's classes (so it ran no test); None otherwise."""
    if not status.startswith(UNVERIFIED):
        return None
    return f"the test JVM did not run the sample's classes, so no test ran ({status})"


@dataclass(frozen=True, kw_only=True)
class TestSource:
    """The test class to compile with the sample and run."""

    __test__ = False

    class_name: str  # fully qualified
    relative: str  # as javac prints it: <package path>/<Class>.java
    text: str
    kind: TestKind
    # A test recorded by `codereval build java-tests`: it runs on codereval's replay library.
    replay: bool = False


class JavaProjectRunner(Runner):
    name = "java-project"

    def __init__(self, *, compiler: JavaCompiler | None = None, class_sharing: bool = True,
                 prestart: bool = True) -> None:
        self._compiler = compiler
        # Start test JVMs with the environment's class-data sharing archive (codereval.java.cds).
        self.class_sharing = class_sharing
        # In a warm slot, start the test JVM while the sample compiles (see _compile_and_run).
        self.prestart = prestart
        self._archives: dict[int, SharedArchives] = {}
        self._lock = threading.Lock()
        self._envs: dict[str, tuple[JavaEnvInfo, str] | str] = {}
        self._tools: JavaTools | None = None
        self._junit: Path | str | None = None
        self._replay: RecorderTools | str | None = None

    def missing_toolchain(self) -> str | None:
        return missing_toolchain()

    # ------------------------------------------------------------------ preparation

    def prepare(self, tasks: Sequence[Task], ctx: RunContext) -> dict[str, str]:
        blocked: dict[str, str] = {}
        specs = self._specs(ctx)
        for project in sorted({t.project for t in tasks}):
            problem = self._environment(project, specs, ctx)
            if isinstance(problem, str):
                blocked.update({t.task_id: problem for t in tasks if t.project == project})
        if any(t.test is not None and t.test.kind in JUNIT_KINDS for t in tasks):
            junit = self._junit_launcher()
            if isinstance(junit, str):
                blocked.update({t.task_id: junit for t in tasks if t.test is not None
                                and t.test.kind in JUNIT_KINDS and t.task_id not in blocked})
        self._harness()
        compiler = self.compiler()
        if isinstance(compiler, WarmJavac):
            compiler.warm_up()
        if self.class_sharing:
            # Archives are built here, once per environment and harness mode, not by the first
            # sample (whose time would then include the training run).
            for task in tasks:
                env = self._envs.get(task.project)
                if task.task_id not in blocked and isinstance(env, tuple):
                    self._plan(ctx, info=env[0], mode=_mode(task), classes=None)
        return blocked

    def _shared_archives(self, sandbox: Sandbox) -> SharedArchives:
        with self._lock:
            archives = self._archives.get(id(sandbox))
            if archives is None:
                archives = self._archives[id(sandbox)] = SharedArchives(flags=JVM_FLAGS,
                                                                        sandbox=sandbox)
            return archives

    def _plan(
        self, ctx: RunContext, *, info: JavaEnvInfo, mode: str, classes: Path | None,
        extra: Sequence[Path] = (),
    ) -> ClassPathPlan:
        """The test JVM's classpath (the sample's classes first, then the environment's, then
        ``extra``: a recorded test's replay library) and its class-data sharing flags."""
        floor = newer_junit(info.dependencies) if mode == "junit" else []
        shared = [info.test_classes, info.classes, *floor, *info.dependencies,
                  self._harness().harness_jar]
        if mode == "junit":
            junit = self._junit_launcher()
            if isinstance(junit, Path):
                shared.append(junit)
        own = [classes] if classes is not None else []
        if extra:
            # The environment's archive was trained without the replay library.
            return ClassPathPlan(archive=None, classpath=(*own, *shared, *extra),
                                 why_not="a recorded test (its replay library)")
        if not self.class_sharing:
            return ClassPathPlan(archive=None, classpath=(*own, *shared), why_not="turned off")
        if info.module_patches():
            # The JDK turns class-data sharing off for a JVM whose modules are patched.
            return ClassPathPlan(archive=None, classpath=(*own, *shared),
                                 why_not="the JDK's modules patched (classpath classes)")
        return self._shared_archives(ctx.sandbox).plan(
            env_root=info.root, mode=mode, classpath=shared, sample_folders=own)

    def compiler(self) -> JavaCompiler:
        with self._lock:
            if self._compiler is None:
                # One warm JVM behind a lock: bench/java_compile.py measured a second one slower
                # on 2 cores (it competes with the test JVMs and needs its own JIT warm-up).
                self._compiler = WarmJavac(pool_size=1)
            return self._compiler

    def compiler_for(self, info: JavaEnvInfo) -> JavaCompiler:
        """The compiler a sample of this environment compiles with: the one its project
        compiled with (Eclipse's for sources older than Java 5, else the warm javac)."""
        if info.compiler == "ecj":
            return PlainEcj()
        return self.compiler()

    def harness(self) -> JavaTools:
        """codereval's Java harness (RunTest), built on first use."""
        return self._harness()

    def junit_launcher(self) -> Path | str:
        """The JUnit Platform launcher jar, or why it is unavailable."""
        return self._junit_launcher()

    def _harness(self) -> JavaTools:
        with self._lock:
            if self._tools is None:
                self._tools = ensure_built()
            return self._tools

    def _replay_tools(self) -> RecorderTools | str:
        """The replay library recorded tests run on, or why it is unavailable."""
        with self._lock:
            if self._replay is None:
                try:
                    self._replay = ensure_recorder()
                except (ArtifactUnavailable, UserError) as exc:
                    self._replay = f"the replay library of recorded tests is unavailable: {exc}"
            return self._replay

    def _junit_launcher(self) -> Path | str:
        with self._lock:
            if self._junit is None:
                try:
                    self._junit = ensure_artifact(JUNIT_CONSOLE)
                except ArtifactUnavailable as exc:
                    self._junit = f"JUnit launcher unavailable: {exc}"
            return self._junit

    @staticmethod
    def _specs(ctx: RunContext) -> dict[str, ProjectSpec]:
        where = ctx.projects_dir
        if where is None:
            return {}
        if where.is_dir():
            manifest = where / "projects.toml"
            if manifest.is_file():
                where = manifest
            else:
                return {
                    d.name.replace("---", "/", 1): ProjectSpec(
                        name=d.name.replace("---", "/", 1), language=Language.JAVA,
                        source=str(d.resolve()))
                    for d in sorted(where.iterdir()) if d.is_dir() and "---" in d.name
                }
        return {s.name: s for s in load_manifest(where)}

    def _environment(
        self, project: str, specs: dict[str, ProjectSpec] | None, ctx: RunContext
    ) -> tuple[JavaEnvInfo, str] | str:
        """(environment info, key) or why the project cannot run; built once per runner."""
        with self._lock:
            known = self._envs.get(project)
        if known is not None:
            return known
        if specs is None:
            specs = self._specs(ctx)
        spec = specs.get(project)
        result: tuple[JavaEnvInfo, str] | str
        if spec is None:
            result = (f"project {project!r} is not in the projects manifest "
                      f"({ctx.projects_dir or 'none given: pass --projects'})")
        else:
            env = JavaEnvironmentBuilder().build(spec, root=ctx.env_root)
            result = (load_env_info(env.path), env.key) if env.ready else env.error
        with self._lock:
            self._envs[project] = result
        return result

    def settled(self, outcome: Outcome, task: Task, tests_dir: Path | None) -> bool:
        # Compiled with no test to run: final while the tests folder still has none for the
        # task (the project's own test roots are part of its environment, which a resumed run
        # shares).
        return compiled_untested(outcome) and not any(
            p.is_file() for p in _tests_dir_candidates(task, tests_dir))

    def environment_fingerprint(self, task: Task, ctx: RunContext) -> str:
        with self._lock:
            known = self._envs.get(task.project)
        return f"java:{known[1]}" if isinstance(known, tuple) else ""

    def close(self) -> None:
        with self._lock:
            compiler = self._compiler
        if compiler is not None:
            compiler.close()

    # ------------------------------------------------------------------ one sample

    def run(self, task: Task, sample: Sample, ctx: RunContext) -> Outcome:
        def outcome(verdict: Verdict, stage: Stage, detail: str = "", **more: object) -> Outcome:
            return Outcome(task_id=task.task_id, sample_index=sample.index, verdict=verdict,
                           stage=stage, detail=detail, **more)

        if sample.code is None or not sample.code.strip():
            return outcome(Verdict.NO_CODE, Stage.EXTRACT, "no code was extracted")
        location = task.location
        if location is None or not location.file_path or location.lineno < 1:
            return outcome(Verdict.INFRA_ERROR, Stage.INJECT, "the task has no file location")
        try:
            env = self._environment(task.project, None, ctx)
        except UserError as exc:
            return outcome(Verdict.INFRA_ERROR, Stage.ENVIRONMENT, exc.one_line())
        if isinstance(env, str):
            return outcome(Verdict.INFRA_ERROR, Stage.ENVIRONMENT, env)
        info, _key = env
        target = info.find_source(location.file_path)
        if target is None:
            return outcome(Verdict.INFRA_ERROR, Stage.INJECT,
                           f"{location.file_path} is not in any source root of {task.project}")
        try:
            injected = inject_method(info.read_source(target), sample.code,
                                     lineno=location.lineno, end_lineno=location.end_lineno,
                                     compat=ctx.compat)
            test = self._test_source(task, info, ctx)
        except (JavaInjectionError, OSError, ValueError) as exc:
            return outcome(Verdict.INFRA_ERROR, Stage.INJECT, f"{task.task_id}: {exc}")
        notes = []
        if injected.privates_rewritten:
            notes.append(f"compat: rewrote {injected.privates_rewritten} 'private ' to 'public ' "
                         f"in {location.file_path}")
        # The test JVM starts from a warm worker's fork where there is one (a fresh JVM all
        # the same, without a sandbox of its own to set up), its classes in the slot's scratch.
        with sample_workdir(ctx, prefix="java-") as (work, slot):
            return self._compile_and_run(task, sample, ctx, info=info, work=work, test=test,
                                         sources={location.file_path: injected.text},
                                         notes=notes, slot=slot)

    def _compile_and_run(
        self, task: Task, sample: Sample, ctx: RunContext, *, info: JavaEnvInfo, work: Path,
        test: TestSource | None, sources: dict[str, str], notes: list[str],
        slot: Slot | None = None,
    ) -> Outcome:
        base = {"task_id": task.task_id, "sample_index": sample.index}
        note = "; ".join(notes)
        classes = work / "classes"
        options = info.compile_options()
        if test is not None and test.relative not in sources:
            sources[test.relative] = test.text
        marker = new_marker()
        mode = _mode(task)
        extra: tuple[Path, ...] = ()
        if test is not None and test.replay:
            tools = self._replay_tools()
            if isinstance(tools, str):
                return Outcome(**base, verdict=Verdict.INFRA_ERROR, stage=Stage.COMPILE,
                               detail=tools)
            extra = tools.replay_classpath
        early: tuple[ClassPathPlan, HeldRun] | None = None
        if slot is not None and test is not None and self.prestart:
            # The test JVM boots (its own, fresh, in the sample's cgroup) while javac works: it
            # reads the marker from stdin before it loads any class of the sample or the test,
            # and gets it only once they are compiled. A compile that fails kills it unused.
            classes.mkdir(parents=True, exist_ok=True)
            guess = self._plan(ctx, info=info, mode=mode, classes=classes, extra=extra)
            early = guess, slot.start(self._request(
                ctx, info=info, work=work, test=test, plan=guess, classes=classes,
                marker=marker, in_slot=True))
        with early[1] if early is not None else contextlib.nullcontext():
            compiled = self.compiler_for(info).compile(sources,
                                               classpath=[*info.compile_classpath(), *extra],
                                               out_dir=classes, options=options,
                                               timeout=COMPILE_TIMEOUT)
            stopped = compile_stopped(compiled, base, note=note)
            if stopped is not None:
                return stopped
            if not compiled.ok:
                return Outcome(**base, verdict=Verdict.COMPILE_ERROR, stage=Stage.COMPILE,
                               detail=_join(compiled.diagnostics.strip()[:4000], note),
                               stderr_tail=compiled.diagnostics[-TAIL:])
            if test is None:
                # Compiled, and nothing to run: not judged (never a pass), and says why.
                return Outcome(**base, verdict=Verdict.INFRA_ERROR, stage=Stage.COMPILE,
                               detail=_join(NO_TEST, note))
            # The plan as it would be made now: the classpath order depends on what compiled (a
            # class that a shared jar holds too turns the archive off).
            plan = self._plan(ctx, info=info, mode=mode, classes=classes, extra=extra)
            if early is not None and _same_plan(early[0], plan):
                result, executor = early[1].go()
            else:
                if early is not None:
                    early[1].cancel()
                request = self._request(ctx, info=info, work=work, test=test, plan=plan,
                                        classes=classes, marker=marker,
                                        in_slot=slot is not None)
                if slot is not None:
                    result, executor = slot.run(request)
                else:
                    result, executor = ctx.sandbox.run(request), "fresh"
        outcome = _classify(result, base=base, marker=marker, test=test, compat=ctx.compat,
                            note=note)
        return outcome.model_copy(
            update={"provenance": Provenance(jvm=plan.jvm, executor=executor)})

    def _request(
        self, ctx: RunContext, *, info: JavaEnvInfo, work: Path, test: TestSource,
        plan: ClassPathPlan, classes: Path, marker: str, in_slot: bool = False,
    ) -> ExecRequest:
        scratch = work / "scratch"
        # Made already when a JVM was started for this sample and then not used.
        scratch.mkdir(exist_ok=True)
        classpath = plan.classpath
        memory = ctx.limits.memory_mb
        heap = [f"-Xmx{max(64, memory * 3 // 5)}m"] if memory else []
        mode = "junit" if test.kind in JUNIT_KINDS else "main"
        opens = REPLAY_JVM_FLAGS if test.replay else ()
        patches = info.module_patches()
        argv = (str(find_jdk().java), *JAVA_LOCALE_FLAGS, *JVM_FLAGS, *plan.flags(), *heap, *opens,
                *patch_flags(patches),
                f"-Djava.io.tmpdir={scratch}", f"{SAMPLE_CLASSES}{classes}",
                "-cp", os.pathsep.join(map(str, classpath)), HARNESS_MAIN, mode, test.class_name)
        # The JVM reserves far more address space than it uses: memory is held by -Xmx and
        # the sandbox's cgroup, never by RLIMIT_AS.
        limits = dataclasses.replace(ctx.limits, address_space=False)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(scratch),
               "LC_ALL": "C.UTF-8"}
        # Everything the JVM reads, made visible read-only (the sandbox may hide /tmp).
        outside = [p for p in classpath if p != classes and not p.is_relative_to(info.root)]
        archive = [plan.archive.path] if plan.archive is not None else []
        # A warm worker has its slot's folders mounted already; a mount of the sample's own
        # classes would make every sample's request need a worker of its own.
        needed = [*([] if in_slot else [classes]), info.root, *outside, *archive,
                  *patches.values()]
        mounts = tuple(Mount(source=p, target=p) for p in dict.fromkeys(needed) if p.exists())
        return ExecRequest(argv=argv, cwd=scratch, scratch=scratch, env=env, mounts=mounts,
                           stdin=(marker + "\n").encode(), limits=limits)

    def _test_source(self, task: Task, info: JavaEnvInfo, ctx: RunContext) -> TestSource | None:
        """The task's test; None when it has no test of its own and the official layout
        holds none (CoderEval-Java's tests were never published): the sample only compiles."""
        spec = task.test
        location = task.location
        assert location is not None
        kind = spec.kind if spec is not None else TestKind.JAVA_MAIN
        if kind not in (TestKind.JAVA_MAIN, *JUNIT_KINDS):
            raise ValueError(f"test kind {kind.value} is not a Java test")
        text = ""
        if spec is not None and spec.code:
            text = spec.code
        elif spec is not None and spec.path:
            path = info.project_root / spec.path
            if not path.is_file() and ctx.tests_dir is not None:
                path = ctx.tests_dir / spec.path
            text = info.read_source(path)
        else:
            found = _official_test(task, info, ctx)
            if found is None:
                return None
            text = found
        package = package_of(text)
        name = first_class_name(text)
        if not name:
            raise ValueError("the test has no class declaration")
        prefix = package.replace(".", "/") + "/" if package else ""
        return TestSource(class_name=f"{package}.{name}" if package else name,
                          relative=f"{prefix}{name}.java", text=text, kind=kind,
                          replay=uses_replay(text))


def compile_stopped(compiled: CompileResult, base: dict[str, object], *,
                    note: str = "") -> Outcome | None:
    """The outcome of a compile that did not finish (the compiler failed, or ran out of time);
    None when it finished, whether or not the sources compiled."""
    if compiled.infra_error:
        return Outcome(**base, verdict=Verdict.INFRA_ERROR, stage=Stage.COMPILE,
                       detail=compiled.infra_error)
    if compiled.timed_out:
        return Outcome(**base, verdict=Verdict.TIMEOUT, stage=Stage.COMPILE,
                       detail=_join(f"compiling took over {COMPILE_TIMEOUT:.0f}s", note))
    return None


def _same_plan(a: ClassPathPlan, b: ClassPathPlan) -> bool:
    return a.classpath == b.classpath and a.flags() == b.flags()


def _mode(task: Task) -> str:
    """The harness mode a task's test runs in (RunTest main|junit)."""
    return "junit" if task.test is not None and task.test.kind in JUNIT_KINDS else "main"


def _official_test(task: Task, info: JavaEnvInfo, ctx: RunContext) -> str | None:
    """CoderEval's layout: a ``<Class>_<method>.java`` beside the class, in a test root or
    under --tests-dir (optionally inside a ``<owner>---<repo>`` folder)."""
    location = task.location
    assert location is not None
    folder = location.file_path.rpartition("/")[0]
    cls = location.class_name or Path(location.file_path).stem
    relative = f"{folder}/{cls}_{task.name}.java" if folder else f"{cls}_{task.name}.java"
    candidates = [root / relative for root in (*info.test_roots, *info.main_roots)]
    candidates += _tests_dir_candidates(task, ctx.tests_dir)
    for candidate in candidates:
        if candidate.is_file():
            return info.read_source(candidate)
    return None


def _tests_dir_candidates(task: Task, tests_dir: Path | None) -> list[Path]:
    """Where --tests-dir may hold the task's ``<Class>_<method>.java`` (optionally inside an
    ``<owner>---<repo>`` folder)."""
    location = task.location
    if tests_dir is None or location is None or not location.file_path:
        return []
    folder = location.file_path.rpartition("/")[0]
    cls = location.class_name or Path(location.file_path).stem
    prefix = f"{folder}/" if folder else ""
    slug = task.project.replace("/", "---")
    # The task's own test first (an overload's, named with its task id), then the layout's.
    names = (f"{prefix}{cls}_{task.name}_{task.task_id}.java", f"{prefix}{cls}_{task.name}.java")
    return [base / name for name in names for base in (tests_dir, tests_dir / slug)]


_BOOL = re.compile(r"\b(true|false)\b")
_JUNIT = re.compile(r"junit tests=(\d+) failures=(\d+) errors=(\d+)")


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


_THROWN = re.compile(r"(Exception in thread .*|(Caused by: )?[A-Za-z_$][\w$]*(\.[\w$]+)+(: .*)?)")


def exception_line(stderr: str) -> str:
    """The first line that names a thrown class (``java.lang.X: message``)."""
    for line in stderr.splitlines():
        if _THROWN.fullmatch(line.rstrip()):
            return line.strip()[:500]
    lines = stderr.strip().splitlines()
    return lines[-1][:500] if lines else ""


def split_marker(stdout: str, marker: str) -> tuple[str, str]:
    """(what the harness's marker line says, the output without it): the marker proves the
    harness ran to its end, and a sample's own prints are shown without it."""
    status = ""
    kept: list[str] = []
    for line in stdout.splitlines():
        if line.startswith(marker + " "):
            status = line[len(marker) + 1:].strip()
        else:
            kept.append(line)
    return status, "\n".join(kept)


def _because(verdict: str, stderr: str) -> str:
    """A failed check's detail with the test's own reason: the last line it wrote to stderr
    (a recorded test's replay names the call and what differed there)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return f"{verdict}: {lines[-1][:300]}" if lines else verdict


def _classify(
    result: ExecResult, *, base: dict[str, object], marker: str, test: TestSource,
    compat: bool, note: str,
) -> Outcome:
    stdout = result.stdout.decode("utf-8", "replace")
    stderr = result.stderr.decode("utf-8", "replace")
    status, printed = split_marker(stdout, marker)
    common = {
        **base,
        "exit_code": result.exit_code,
        "signal": result.signal,
        "wall_time": result.wall_time,
        "cpu_time": result.cpu_time,
        "stdout_tail": printed[-TAIL:],
        "stderr_tail": stderr[-TAIL:],
        "isolation": result.isolation,
    }

    def done(verdict: Verdict, stage: Stage, detail: str) -> Outcome:
        return Outcome(verdict=verdict, stage=stage, detail=_join(detail, note),
                       **common)

    if result.sandbox_error:
        return done(Verdict.INFRA_ERROR, Stage.RUN, f"sandbox: {result.sandbox_error}")
    not_run = classes_not_run(status)
    if not_run is not None:
        # Before compat's reading of stdout: the test did not run the sample's code.
        return done(Verdict.INFRA_ERROR, Stage.RUN, not_run)
    if result.limit_exceeded:
        return done(Verdict.RUNTIME_ERROR, Stage.RUN, result.limit_exceeded)
    if result.timed_out:
        return done(Verdict.TIMEOUT, Stage.RUN, "the test ran out of time")
    jvm_oom = result.exit_code == OOM_EXIT[0] and OOM_EXIT[1] in stdout + stderr
    if result.memory_exceeded or jvm_oom:
        return done(Verdict.MEMORY_EXCEEDED, Stage.RUN, "the JVM ran out of memory")
    words = _BOOL.findall(printed)
    if test.kind is TestKind.JAVA_MAIN and compat:
        # The original platform: stdout holds "true" and no "false", whatever else happened.
        if "true" in words and "false" not in words:
            return done(Verdict.PASSED, Stage.DONE, "compat: stdout has true and no false")
        if result.exit_code == 0 and result.signal is None:
            return done(Verdict.FAILED, Stage.CHECK,
                        _because("compat: stdout lacks true or has false", stderr))
        return done(Verdict.RUNTIME_ERROR, Stage.RUN, exception_line(stderr))
    finished = bool(status) and result.exit_code == 0
    if not finished:
        if result.exit_code == 0 and result.signal is None:
            # Ending the program early is abnormal termination, as in the other runners.
            return done(Verdict.RUNTIME_ERROR, Stage.RUN,
                        "the JVM exited 0 before the test finished (System.exit in the code?)")
        why = exception_line(stderr) or (
            f"killed by signal {result.signal}" if result.signal else
            f"exit code {result.exit_code}")
        return done(Verdict.RUNTIME_ERROR, Stage.RUN, why)
    if test.kind is TestKind.JAVA_MAIN:
        if "false" in words:
            return done(Verdict.FAILED, Stage.CHECK, _because("the test printed false", stderr))
        if "true" not in words:
            return done(Verdict.FAILED, Stage.CHECK, "the test printed no true")
        return done(Verdict.PASSED, Stage.DONE, "")
    match = _JUNIT.fullmatch(status)
    if match is None:
        return done(Verdict.INFRA_ERROR, Stage.CHECK, f"unreadable harness status {status!r}")
    tests, failures, errors = (int(g) for g in match.groups())
    summary = f"JUnit: {tests} tests, {failures} failed, {errors} errors"
    if errors:
        return done(Verdict.RUNTIME_ERROR, Stage.RUN, _join(summary, exception_line(stderr)))
    if failures:
        return done(Verdict.FAILED, Stage.CHECK, _join(summary, exception_line(stderr)))
    if tests == 0:
        return done(Verdict.INFRA_ERROR, Stage.CHECK, f"JUnit found no tests in {test.class_name}")
    return done(Verdict.PASSED, Stage.DONE, summary)
