"""Class-data sharing for test JVMs (codereval.java.cds): built once per environment and mode,
reused, rebuilt when the classpath changes or the archive is damaged, really mapped by the JVM,
and never a reason for another verdict."""

from __future__ import annotations

import dataclasses
import os
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from codereval.benchmarks import builtin_dir
from codereval.benchmarks.samples import load_samples
from codereval.families.codereval.records import load_records
from codereval.java import cds
from codereval.java.build import ensure_built
from codereval.java.cds import SharedArchives, split_classpath
from codereval.java.toolchain import missing_toolchain
from codereval.model import Outcome, Sample, Task, Verdict
from codereval.runners.base import RunContext
from codereval.runners.java import JVM_FLAGS, JavaProjectRunner
from codereval.sandbox import get_sandbox
from codereval.sandbox.base import ExecRequest, ExecResult, Limits, Sandbox

pytestmark = [pytest.mark.skipif(missing_toolchain() is not None, reason="no JDK")]

MINI = builtin_dir("mini_java")
LIMITS = Limits(wall_time=20.0, memory_mb=512)
# The test JVM's flags before they were chosen by measurement (the serial collector).
FLAGS_BEFORE = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
                "-XX:+ExitOnOutOfMemoryError", "-Xss8m", "-Djava.awt.headless=true")


class Recording(Sandbox):
    """The real sandbox, keeping each request; ``also`` runs while the sample's files exist."""

    name = "recording"

    def __init__(self, inner: Sandbox,
                 also: Callable[[ExecRequest, Sandbox], None] | None = None) -> None:
        self.inner = inner
        self.also = also
        self.requests: list[ExecRequest] = []

    @classmethod
    def unavailable_reason(cls) -> str | None:
        return None

    @property
    def isolation(self) -> str:
        return self.inner.isolation

    def run(self, request: ExecRequest) -> ExecResult:
        self.requests.append(request)
        if self.also is not None and "codereval.harness.RunTest" in request.argv:
            self.also(request, self.inner)
        return self.inner.run(request)


@pytest.fixture(scope="module")
def tasks() -> dict[str, Task]:
    return {t.task_id: t for t in load_records(MINI / "records.json")}


@pytest.fixture(scope="module")
def samples() -> list[Sample]:
    return load_samples(MINI / "samples.jsonl")


@pytest.fixture()
def env_root(tmp_path: Path) -> Path:
    # A private copy of the environment: these tests build, damage and rebuild its archives.
    return tmp_path / "envs"


def _ctx(env_root: Path, work: Path, sandbox: Sandbox | None = None) -> RunContext:
    return RunContext(sandbox=sandbox or get_sandbox("auto"), limits=LIMITS, work_root=work,
                      env_root=env_root, projects_dir=MINI / "projects.toml")


def _evaluate(tasks: dict[str, Task], samples: list[Sample], ctx: RunContext, *,
              class_sharing: bool) -> list[Outcome]:
    runner = JavaProjectRunner(class_sharing=class_sharing)
    try:
        assert runner.prepare(list(tasks.values()), ctx) == {}
        with ThreadPoolExecutor(max_workers=2) as pool:
            return list(pool.map(lambda s: runner.run(tasks[s.task_id], s, ctx), samples))
    finally:
        runner.close()


def _verdicts(outcomes: list[Outcome]) -> list[tuple[object, ...]]:
    return [(o.task_id, o.sample_index, o.verdict, o.stage, o.exit_code, o.signal, o.detail)
            for o in outcomes]


def _archives(env_root: Path) -> dict[str, tuple[int, int]]:
    """Each archive's name -> (inode, modification time): a rebuilt archive changes both."""
    found = sorted((env_root / "envs").glob("*.cds/*.jsa"))
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in found}


@pytest.mark.slow
def test_verdicts_are_the_same_as_before_the_archive_and_the_new_flags(
    tasks: dict[str, Task], samples: list[Sample], env_root: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every mini-java sample, hostile ones included: the JVM as it started before (serial
    collector, no archive) and as it starts now give the same verdict, stage, exit and detail."""
    with monkeypatch.context() as before:
        before.setattr("codereval.runners.java.JVM_FLAGS", FLAGS_BEFORE)
        plain = _evaluate(tasks, samples, _ctx(env_root, tmp_path / "a"), class_sharing=False)
    shared = _evaluate(tasks, samples, _ctx(env_root, tmp_path / "b"), class_sharing=True)
    assert len(shared) == len(samples) > 30
    assert _verdicts(shared) == _verdicts(plain)
    # Both kinds of test ran with an archive, and said so; compile errors started no JVM.
    for outcome in shared:
        if outcome.verdict is Verdict.COMPILE_ERROR:
            assert outcome.provenance.jvm is None
        else:
            assert outcome.provenance.jvm is not None
            assert outcome.provenance.jvm == "cds", outcome.provenance.jvm
    assert {o.provenance.jvm for o in plain if o.provenance.jvm} == {"no cds: turned off"}
    assert sorted(n.split("-")[0] for n in _archives(env_root)) == ["junit", "main"]


@pytest.mark.slow
def test_the_archive_is_built_once_and_reused_by_the_next_run(
    tasks: dict[str, Task], env_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    JavaProjectRunner().prepare(list(tasks.values()), _ctx(env_root, tmp_path / "a"))
    first = _archives(env_root)
    assert len(first) == 2
    builds: list[Path] = []
    real_build = SharedArchives._build

    def counted(self: SharedArchives, path: Path, **kwargs: object) -> None:
        builds.append(path)
        real_build(self, path, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(SharedArchives, "_build", counted)
    # A new runner is a new process's view: it checks the archive, and does not build it again.
    JavaProjectRunner().prepare(list(tasks.values()), _ctx(env_root, tmp_path / "b"))
    assert builds == []
    assert _archives(env_root) == first


@pytest.mark.slow
def test_a_damaged_archive_is_rebuilt_and_verdicts_do_not_change(
    tasks: dict[str, Task], samples: list[Sample], env_root: Path, tmp_path: Path,
) -> None:
    chosen = [s for s in samples if s.model in ("reference", "trivial")
              and tasks[s.task_id].name in ("gcd", "countWords", "joinSorted")]
    before = _evaluate(tasks, chosen, _ctx(env_root, tmp_path / "a"), class_sharing=True)
    for archive in (env_root / "envs").glob("*.cds/*.jsa"):
        archive.chmod(0o644)
        with archive.open("r+b") as handle:
            handle.seek(0)
            handle.write(b"\0" * 4096)  # the header: no JVM maps this
    damaged = _archives(env_root)
    after = _evaluate(tasks, chosen, _ctx(env_root, tmp_path / "b"), class_sharing=True)
    assert _verdicts(after) == _verdicts(before)
    assert all(o.provenance.jvm == "cds" for o in after)
    rebuilt = _archives(env_root)
    assert rebuilt.keys() == damaged.keys()
    assert all(rebuilt[name] != damaged[name] for name in rebuilt)


@pytest.mark.slow
def test_the_jvm_maps_the_archive(tasks: dict[str, Task], env_root: Path,
                                  tmp_path: Path) -> None:
    """A sample's own command, with -Xshare:on (no start without the archive) and class
    loading logged: the JUnit launcher and the harness come from the archive."""
    checked: list[str] = []

    def strict(request: ExecRequest, inner: Sandbox) -> None:
        argv = [a for a in request.argv if not a.startswith(("-Xshare", "-Xlog"))]
        argv[1:1] = ["-Xshare:on", "-Xlog:class+load=info"]
        result = inner.run(dataclasses.replace(request, argv=tuple(argv)))
        assert result.exit_code == 0, result.stdout[-2000:] + result.stderr[-2000:]
        loaded = result.stdout.decode()
        assert "codereval.harness.RunTest source: shared objects file (top)" in loaded
        if "junit" in request.argv:
            assert ("org.junit.platform.launcher.core.LauncherFactory source: "
                    "shared objects file (top)") in loaded
        checked.append(request.argv[-2])

    box = Recording(get_sandbox("auto"), also=strict)
    chosen = [t for t in tasks.values() if t.name in ("gcd", "countWords")]
    runner = JavaProjectRunner()
    ctx = _ctx(env_root, tmp_path, box)
    runner.prepare(chosen, ctx)
    for task in chosen:
        outcome = runner.run(task, Sample(task_id=task.task_id, code=task.reference), ctx)
        assert outcome.verdict is Verdict.PASSED, outcome
    runner.close()
    assert sorted(checked) == ["junit", "main"]


@pytest.mark.slow
def test_the_test_jvm_gets_the_flags_and_the_archive_first_on_its_classpath(
    tasks: dict[str, Task], env_root: Path, tmp_path: Path,
) -> None:
    box = Recording(get_sandbox("auto"))
    task = next(t for t in tasks.values() if t.name == "gcd")
    ctx = _ctx(env_root, tmp_path, box)
    runner = JavaProjectRunner()
    runner.prepare([task], ctx)
    box.requests.clear()
    outcome = runner.run(task, Sample(task_id=task.task_id, code=task.reference), ctx)
    runner.close()
    assert outcome.verdict is Verdict.PASSED
    (request,) = box.requests
    argv = list(request.argv)
    assert all(flag in argv for flag in JVM_FLAGS)
    archive_flag = next(a for a in argv if a.startswith("-XX:SharedArchiveFile="))
    archive = Path(archive_flag.partition("=")[2])
    assert archive.parent.parent == env_root / "envs" and archive.name.startswith("junit-")
    env = archive.parent.with_suffix("")  # <env>.cds holds <env>'s archives
    assert outcome.provenance.jvm == "cds"
    assert "-Xshare:auto" in argv
    classpath = [Path(p) for p in argv[argv.index("-cp") + 1].split(os.pathsep)]
    jars, folders = split_classpath(classpath)
    # Every jar first (the archive's classpath), then the folders in their own order: the
    # sample's classes before the project's.
    assert classpath == [*jars, *folders]
    assert folders[0].name == "classes" and folders[0].is_relative_to(tmp_path)
    assert folders.index(folders[0]) < folders.index(env / "classes")
    assert ensure_built().harness_jar in jars


def _jar(path: Path, names: list[str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            archive.writestr(name, b"x")
    return path


def test_a_folder_holding_a_name_a_jar_holds_keeps_the_order_and_no_archive(
    tmp_path: Path,
) -> None:
    env = tmp_path / "env"
    (env / "res" / "conf").mkdir(parents=True)
    (env / "res" / "conf" / "app.properties").write_text("a=1\n")
    jar = _jar(tmp_path / "lib.jar", ["conf/app.properties", "lib/A.class"])
    shared = SharedArchives(flags=JVM_FLAGS, sandbox=get_sandbox("auto"))
    sample = tmp_path / "sample"
    sample.mkdir()
    plan = shared.plan(env_root=env, mode="main", classpath=[env / "res", jar],
                       sample_folders=[sample])
    assert plan.archive is None
    assert plan.classpath == (sample, env / "res", jar)
    assert plan.jvm == "no cds: a folder and a jar of the environment both hold conf/app.properties"
    assert not cds.archive_folder(env).exists()  # nothing was built


@pytest.mark.slow
def test_a_sample_class_a_jar_also_holds_runs_without_the_archive(tmp_path: Path) -> None:
    env = tmp_path / "env"
    env.mkdir()
    jar = _jar(tmp_path / "lib.jar", ["lib/A.class", "lib/B.class"])
    shared = SharedArchives(flags=JVM_FLAGS, sandbox=get_sandbox("auto"))
    ok, clashing = tmp_path / "ok", tmp_path / "clash"
    (ok / "app").mkdir(parents=True)
    (ok / "app" / "Main.class").write_bytes(b"x")
    (clashing / "lib").mkdir(parents=True)
    (clashing / "lib" / "A.class").write_bytes(b"x")
    harness = ensure_built().harness_jar
    good = shared.plan(env_root=env, mode="main", classpath=[jar, harness], sample_folders=[ok])
    assert good.archive is not None, good.why_not
    assert good.classpath == (jar, harness, ok)
    bad = shared.plan(env_root=env, mode="main", classpath=[jar, harness],
                      sample_folders=[clashing])
    assert bad.archive is None and bad.classpath == (clashing, jar, harness)
    assert bad.why_not == "the sample's classes and a jar both hold lib/A.class"


@pytest.mark.slow
def test_a_changed_jar_gets_a_new_archive(tmp_path: Path) -> None:
    env = tmp_path / "env"
    env.mkdir()
    jar = _jar(tmp_path / "lib.jar", ["lib/A.txt"])
    harness = ensure_built().harness_jar
    first = SharedArchives(flags=JVM_FLAGS, sandbox=get_sandbox("auto")).archive(
        env_root=env, mode="main", classpath=[jar, harness])
    assert not isinstance(first, str), first
    _jar(jar, ["lib/A.txt", "lib/B.txt"])  # same path, new content
    second = SharedArchives(flags=JVM_FLAGS, sandbox=get_sandbox("auto")).archive(
        env_root=env, mode="main", classpath=[jar, harness])
    assert not isinstance(second, str), second
    assert second.path != first.path
    # The stale one is removed.
    assert [p.name for p in cds.archive_folder(env).glob("*.jsa")] == [second.path.name]


@pytest.mark.slow
def test_an_archive_no_jvm_can_build_is_reported_and_not_used(tmp_path: Path) -> None:
    env = tmp_path / "env"
    env.mkdir()
    jar = _jar(tmp_path / "lib.jar", ["lib/A.txt"])
    # A flag this JVM rejects: the training run fails, as any broken JDK would.
    shared = SharedArchives(flags=(*JVM_FLAGS, "-XX:+NoSuchOptionAnywhere"),
                            sandbox=get_sandbox("auto"))
    plan = shared.plan(env_root=env, mode="main", classpath=[jar, ensure_built().harness_jar],
                       sample_folders=[])
    assert plan.archive is None and plan.flags() == ()
    assert plan.why_not.startswith("archive unusable: the training run failed (exit 1)")
    assert "NoSuchOptionAnywhere" in plan.why_not
    assert list(cds.archive_folder(env).glob("*.jsa")) == []


def test_the_archive_key_follows_the_jdk_flags_and_jars(tmp_path: Path) -> None:
    jar = _jar(tmp_path / "lib.jar", ["a.txt"])
    key = cds.archive_key(jars=[jar], flags=JVM_FLAGS, mode="main")
    assert key == cds.archive_key(jars=[jar], flags=JVM_FLAGS, mode="main")
    assert key != cds.archive_key(jars=[jar], flags=JVM_FLAGS, mode="junit")
    assert key != cds.archive_key(jars=[jar], flags=(*JVM_FLAGS, "-Xint"), mode="main")
    os.utime(jar, ns=(1, 1))
    assert key != cds.archive_key(jars=[jar], flags=JVM_FLAGS, mode="main")
