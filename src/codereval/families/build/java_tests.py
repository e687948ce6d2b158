"""`codereval build java-tests`: tests for a prepared Java benchmark's tasks, recorded from the
projects' own test suites (CoderEval-Java's official tests were never published).

The steps, per project, each with what can stop it (a task's check says why; nothing is
guessed):
1. the project's environment is built as for evaluating (its modules' classes and test-scope
   classpath); each task's method is named as the JVM knows it (binary class name, parameter
   types) from its file with tree-sitter: a method in an anonymous or local class is
   ``unreached``;
2. the modules' test sources are compiled with javac against that classpath (a file that does
   not compile is left out, and the next round tries the rest);
3. each module's tests run once in the sandbox on the JUnit Platform (JUnit 3, 4 and 5), from
   the module's folder, with the recorder agent (``codereval.java.recording``), which writes the
   calls they make to the tasks' methods as XStream XML; a task no test calls is ``unreached``,
   one whose calls never serialise ``unrecorded``;
4. each reached task gets a replay test, ``<Class>_<method>.java`` in its package (CoderEval's
   own layout, so `evaluate` finds it as it would an official test), on the replay library;
   it replays three times against the project as built: a call it does not reproduce every time
   (time, randomness, state the suite set up elsewhere) is dropped, and a task that loses more
   than half of its calls is ``flaky``. Where the suite gives no test (it never calls the
   method, none of its calls serialise, or they do not replay), calls from generated inputs
   (``Generate``) are tried instead, calibrated the same way, and the check says so;
5. the tests are checked through the engine as `evaluate --prepared` runs them: the reference
   three times (it must pass every time, else ``broken``) and up to ``mutants`` mutants of it
   (``java_mutate``); a test that kills fewer than ``min_kill`` of them is ``weak``, kept only
   with ``include_weak``;
6. ``<bench>/tests`` is written: the kept tests in ``<owner>---<repo>/<folder>/``, and
   ``checks.jsonl`` with every task's status (staged beside it, renamed at the end).
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from tree_sitter import Node

from codereval.analysis.java import TYPE_DECLARATIONS, java_parser, node_text, param_types
from codereval.benchmarks import read_tasks_file
from codereval.environments.base import ProjectSpec, load_manifest
from codereval.environments.java import JavaEnvInfo, JavaEnvironmentBuilder, load_env_info
from codereval.errors import UserError
from codereval.evaluation import engine
from codereval.evaluation.gold import java_trivial_body
from codereval.executors.sample import default_env_root
from codereval.families.build.java_mutate import java_mutants
from codereval.families.build.pipeline import REFERENCE_RUNS, TaskCheck, _bar, judge
from codereval.java.artifacts import (
    JAVAX_ANNOTATION,
    JUNIT_CONSOLE,
    ArtifactUnavailable,
    ensure_artifact,
    newer_junit,
)
from codereval.java.module_patches import module_patches, patch_flags
from codereval.java.recording import (
    GENERATE_MAIN,
    REPLAY_JVM_FLAGS,
    RecorderTools,
    ensure_recorder,
)
from codereval.java.test_selection import ant_pattern
from codereval.java.toolchain import JAVA_LOCALE_FLAGS, find_jdk, tool_env
from codereval.model import Language, Sample, Task, Verdict
from codereval.runners.python import project_folder
from codereval.sandbox import get_sandbox
from codereval.sandbox.base import ExecRequest, ExecResult, Limits, Mount, Sandbox
from codereval.storage.jsonl import atomic_write_text
from codereval.workspace.views import remove_tree

# What the JUnit Platform runs of a module: Maven Surefire's default includes.
TEST_CLASSES = r"^(Test.*|.+[.$]Test.*|.*Tests?|.*TestCase)$"
COMPILE_ROUNDS = 6
JAVAC_TIMEOUT = 900.0
# The suite's JVM: as much memory as a project's own build would give it.
SUITE_HEAP_MB = 3072
# Threads (the pids limit counts each): a whole suite starts and leaks far more than a sample's
# test. atmosphere's broadcasters reach the default 256, and a test then waits forever on a
# thread that never started.
SUITE_THREADS = 4096


@dataclass(kw_only=True)
class JavaTestsOptions:
    prepared: Path
    out: Path | None = None  # default: <prepared>/tests
    projects: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    max_calls: int = 20
    mutants: int = 12
    min_kill: float = 0.5
    include_weak: bool = False
    suite_timeout: float = 1800.0
    timeout: float = 30.0
    jobs: int = 2
    sandbox: str = "auto"
    env_root: Path | None = None
    keep_work: bool = False
    force: bool = False
    # Calls from generated inputs for the methods no test calls (`Generate`).
    generate: bool = True
    # Generated inputs with empty values, negatives and throwing calls (see Generate).
    edge_inputs: bool = False
    # Replace only the named projects' tests and checks in an existing OUT.
    update: bool = False
    progress: bool = False


@dataclass(frozen=True, kw_only=True)
class Target:
    """A task's method as the JVM names it, and the constants its source holds (seeds for
    generated inputs)."""

    task_id: str
    class_name: str  # binary name: pkg.Outer$Inner
    method: str
    types: tuple[str, ...]  # parameters' simple erased names, "?" for a type variable
    package: str
    test_class: str  # <Class>_<method>
    relative: str  # the test's path below the project folder: <folder>/<Class>_<method>.java
    seeds: tuple[tuple[str, str], ...] = ()  # (text|char|number, value)


@dataclass(frozen=True, kw_only=True)
class Call:
    signature: str  # "<binary class>\t<method>\t<descriptor>"
    before: str
    outcome: str  # return, void, throw
    value: str
    after: str


@dataclass(kw_only=True)
class Recording:
    calls: dict[str, list[Call]] = field(default_factory=dict)
    dropped: Counter[str] = field(default_factory=Counter)
    reasons: dict[str, list[str]] = field(default_factory=dict)


@dataclass(kw_only=True)
class JavaTestsReport:
    out: Path
    checks: list[TaskCheck] = field(default_factory=list)
    suites: dict[str, dict[str, object]] = field(default_factory=dict)
    seconds: float = 0.0

    def count(self, status: str) -> int:
        return sum(1 for c in self.checks if c.status == status)

    @property
    def kept(self) -> int:
        return sum(1 for c in self.checks if c.status == "ok" or c.detail.startswith("kept"))


# ---------------------------------------------------------------------------- targets


def _erased(type_text: str, variables: set[str]) -> str:
    """A source parameter type as the agent compares it: the erased simple name."""
    text = type_text.replace("...", "[]")
    while "<" in text:
        text = re.sub(r"<[^<>]*>", "", text)
    dims = text.count("[]")
    base = text.replace("[]", "").rsplit(".", 1)[-1]
    if base in variables:
        return "?"
    return base + "[]" * dims


def _type_variables(node: Node | None) -> set[str]:
    found: set[str] = set()
    params = node.child_by_field_name("type_parameters") if node is not None else None
    if params is not None:
        for child in params.named_children:
            if child.type == "type_parameter":
                name = next((c for c in child.named_children if c.type == "type_identifier"),
                            None)
                if name is not None:
                    found.add(node_text(name))
    return found


def find_target(task: Task, source: str) -> Target | str:
    """The task's method in its file's text, or why the JVM cannot be told to record it."""
    location = task.location
    assert location is not None
    data = source.encode("utf-8")
    tree = java_parser().parse(data)
    line = location.lineno - 1
    best: Node | None = None
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.start_point[0] > line + 1 or node.end_point[0] < line:
            continue
        if (node.type == "method_declaration"
                and node_text(node.child_by_field_name("name")) == task.name
                and node.start_point[0] <= line <= node.end_point[0]
                and (best is None or node.start_byte >= best.start_byte)):
            best = node
        stack.extend(node.children)
    if best is None:
        return f"no method {task.name} at line {location.lineno} of {location.file_path}"
    variables = _type_variables(best)
    names: list[str] = []
    parent = best.parent
    while parent is not None:
        if parent.type in TYPE_DECLARATIONS:
            names.append(node_text(parent.child_by_field_name("name")))
            variables |= _type_variables(parent)
        elif parent.type in ("object_creation_expression", "block", "constructor_body"):
            return "the method is in an anonymous or local class: no test can name it"
        parent = parent.parent
    if not names:
        return "the method is not in a class"
    package = ""
    for child in tree.root_node.named_children:
        if child.type == "package_declaration":
            package = next((node_text(c) for c in child.named_children
                            if c.type in ("scoped_identifier", "identifier")), "")
    names.reverse()
    binary = "$".join(names)
    parameters = param_types(best.child_by_field_name("parameters"))
    types = tuple(_erased(t, variables) for t in parameters)
    # As `evaluate` looks for a task's test (runners.java._official_test).
    owner = location.class_name or Path(location.file_path).stem
    test_class = f"{owner}_{task.name}"
    folder = location.file_path.rpartition("/")[0]
    relative = f"{folder}/{test_class}.java" if folder else f"{test_class}.java"
    return Target(task_id=task.task_id, class_name=f"{package}.{binary}" if package else binary,
                  method=task.name, types=types, package=package, test_class=test_class,
                  relative=relative, seeds=_seeds(best.child_by_field_name("body")))


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "0": "\0", "s": " ",
            "\\": "\\", "'": "'", '"': '"'}
MAX_SEEDS = 12


def _unescape(text: str) -> str:
    return re.sub(r"\\(u+[0-9a-fA-F]{4}|.)", lambda m: (
        chr(int(m.group(1).lstrip("u"), 16)) if m.group(1).startswith("u")
        else _ESCAPES.get(m.group(1), m.group(1))), text)


def _seeds(body: Node | None) -> tuple[tuple[str, str], ...]:
    """The literals of a method's body, in order, each once: what generated inputs try first."""
    found: dict[tuple[str, str], None] = {}
    stack = [body] if body is not None else []
    while stack and len(found) < MAX_SEEDS:
        node = stack.pop()
        text = node_text(node)
        if node.type == "string_literal" and text.startswith('"') and not text.startswith('"""'):
            found[("text", _unescape(text[1:-1]))] = None
        elif node.type == "character_literal":
            value = _unescape(text[1:-1])
            if len(value) == 1:
                found[("char", value)] = None
        elif node.type == "decimal_integer_literal":
            digits = text.rstrip("lL").replace("_", "")
            if digits.isdigit():
                found[("number", digits)] = None
        stack.extend(reversed(node.children))
    return tuple(found)


# ---------------------------------------------------------------------------- the suite


def _javac(sources: Sequence[Path], *, classpath: Sequence[Path], out: Path, release: str,
           encoding: str, log: Path, processors: bool = False) -> tuple[list[Path], list[Path]]:
    """Compile what compiles: (compiled files, files left out), a failing file being left
    out and the rest compiled again, at most COMPILE_ROUNDS times."""
    remaining = list(sources)
    left_out: list[Path] = []
    for _ in range(COMPILE_ROUNDS):
        if not remaining:
            break
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        listing = out.parent / f"{out.name}.sources"
        listing.write_text("\n".join(f'"{p}"' for p in remaining) + "\n", encoding="utf-8")
        # Annotation processors run where the project has them (fastjson2's tests use Lombok).
        argv = [str(find_jdk().javac), *(f"-J{f}" for f in JAVA_LOCALE_FLAGS), "-nowarn",
                *([] if processors else ["-proc:none"]), "-g", "-encoding", encoding,
                "-d", str(out),
                "-cp", os.pathsep.join(map(str, classpath)), f"@{listing}"]
        if release:
            argv[1:1] = ["--release", release]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=JAVAC_TIMEOUT,
                              env=tool_env(), check=False)
        with log.open("a", encoding="utf-8") as handle:
            handle.write(done.stdout + done.stderr)
        if done.returncode == 0:
            return remaining, left_out
        failing = {Path(m) for m in re.findall(r"^(/.+?\.java):\d+: error:", done.stderr, re.M)}
        failing &= set(remaining)
        if not failing:
            break
        left_out += sorted(failing)
        remaining = [p for p in remaining if p not in failing]
    return [], left_out + remaining


@dataclass(frozen=True, kw_only=True)
class SuiteModule:
    """A module whose tests run: where its test sources and resources are, where they run."""

    folder: Path
    sources: tuple[Path, ...]  # test source roots (Java, and Groovy when the module has any)
    resources: tuple[Path, ...]
    workdir: Path  # Surefire's workingDirectory (the module's folder by default)
    # Surefire's includes and excludes (Ant patterns over test source paths; none: its default)
    includes: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    # Surefire's groups and excludedGroups (JUnit 4 categories, JUnit 5 tags, TestNG groups).
    groups: tuple[str, ...] = ()
    excluded_groups: tuple[str, ...] = ()
    # Surefire's systemPropertyVariables (fastjson2's tests expect user.timezone).
    properties: tuple[tuple[str, str], ...] = ()


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _child(node: ET.Element | None, *path: str) -> ET.Element | None:
    for name in path:
        if node is None:
            return None
        node = next((c for c in node if _local(c.tag) == name), None)
    return node


def _pom_path(folder: Path, text: str | None) -> Path | None:
    if not text or not text.strip():
        return None
    value = text.strip()
    for name in ("${project.basedir}", "${basedir}"):
        value = value.replace(name, str(folder))
    if "${" in value:
        return None
    path = Path(value)
    return path if path.is_absolute() else folder / path


def _pom_properties(folder: Path, root: Path) -> dict[str, str]:
    """The ``<properties>`` a module's POM sees: its own over its parents' (by folder, up to the
    project's root), for the ``${name}`` its Surefire configuration uses."""
    found: dict[str, str] = {}
    here = folder
    while True:
        pom = here / "pom.xml"
        if pom.is_file():
            with contextlib.suppress(ET.ParseError, OSError):
                listed = _child(ET.parse(pom).getroot(), "properties")
                for entry in listed if listed is not None else ():
                    found.setdefault(_local(entry.tag), (entry.text or "").strip())
        if here == root or here.parent == here or not here.is_relative_to(root):
            return found
        here = here.parent


def _surefire_configs(build: ET.Element | None) -> list[ET.Element]:
    """Surefire's configurations: the plugin's own and its default-test execution's."""
    configs = []
    for plugins in (_child(build, "plugins"), _child(build, "pluginManagement", "plugins")):
        for plugin in plugins if plugins is not None else ():
            if getattr(_child(plugin, "artifactId"), "text", "") != "maven-surefire-plugin":
                continue
            config = _child(plugin, "configuration")
            if config is not None:
                configs.append(config)
            executions = _child(plugin, "executions")
            for execution in executions if executions is not None else ():
                if getattr(_child(execution, "id"), "text", "default-test") == "default-test":
                    config = _child(execution, "configuration")
                    if config is not None:
                        configs.append(config)
    return configs


def suite_modules(info: JavaEnvInfo) -> list[SuiteModule]:
    """The modules holding the tasks, as their POMs lay out their tests: Maven's defaults
    (src/test/java, src/test/groovy, src/test/resources, run from the module's folder) unless
    the POM says otherwise (``testSourceDirectory``, ``testResources``; Surefire's
    ``workingDirectory``, includes and excludes, groups, system properties: log4j 1's tests
    live in tests/src/java and run from tests/, jgrapht leaves out its perf tests and slow
    groups)."""
    folders: list[Path] = []
    for root in info.main_roots:
        tail = root.parts[-3:]
        folder = root.parents[2] if tail == ("src", "main", "java") else info.project_root
        if folder not in folders:
            folders.append(folder)
    modules = []
    for folder in folders:
        build: ET.Element | None = None
        pom = folder / "pom.xml"
        if pom.is_file():
            with contextlib.suppress(ET.ParseError, OSError):
                build = _child(ET.parse(pom).getroot(), "build")
        values = _pom_properties(folder, info.project_root)

        def text(node: ET.Element | None, values: dict[str, str] = values) -> str:
            value = (node.text or "").strip() if node is not None else ""
            for _ in range(5):
                value = re.sub(r"\$\{([\w.-]+)\}",
                               lambda m: values.get(m.group(1), m.group(0)), value)
            return value

        declared = _pom_path(folder, text(_child(build, "testSourceDirectory")))
        sources = [declared] if declared is not None else [folder / "src" / "test" / "java"]
        sources.append(folder / "src" / "test" / "groovy")
        resources = [folder / "src" / "test" / "resources"]
        listed = _child(build, "testResources")
        if listed is not None:
            resources = [p for r in listed
                         if (p := _pom_path(folder, text(_child(r, "directory")))) is not None]
        workdir = folder
        includes: list[str] = []
        excludes: list[str] = []
        groups: list[str] = []
        excluded_groups: list[str] = []
        properties: list[tuple[str, str]] = []
        for config in _surefire_configs(build):
            found = _pom_path(folder, text(_child(config, "workingDirectory")))
            if found is not None and found.is_dir():
                workdir = found
            for kind, into in (("includes", includes), ("excludes", excludes)):
                entries = _child(config, kind)
                into += [value for e in (entries if entries is not None else ())
                         if (value := text(e))]
            for kind, into in (("groups", groups), ("excludedGroups", excluded_groups)):
                into += [g.strip() for g in text(_child(config, kind)).split(",")
                         if g.strip() and "${" not in g]
            variables = _child(config, "systemPropertyVariables")
            properties += [(_local(e.tag), value)
                           for e in (variables if variables is not None else ())
                           if "${" not in (value := text(e))]
        modules.append(SuiteModule(
            folder=folder, sources=tuple(p for p in sources if p.is_dir()),
            resources=tuple(p for p in resources if p.is_dir()), workdir=workdir,
            includes=tuple(includes), excludes=tuple(excludes), groups=tuple(groups),
            excluded_groups=tuple(excluded_groups), properties=tuple(properties)))
    return modules


def _groovy_jar(dependencies: Sequence[Path]) -> Path | None:
    for jar in dependencies:
        if re.fullmatch(r"groovy(-all)?-\d[\w.-]*\.jar", jar.name) and "indy" not in jar.name:
            return jar
    return None


def _compile_tests(module: SuiteModule, *, classpath: Sequence[Path], out: Path,
                   encoding: str, log: Path,
                   processors: bool = False) -> tuple[list[Path], list[Path]]:
    """The module's tests compiled into ``out``: (compiled files, files left out). Java alone
    with javac (a file that does not compile left out); with Groovy sources and Groovy on the
    test classpath, both at once with Groovy's joint compiler (all or nothing)."""
    java = sorted(p for root in module.sources for p in root.rglob("*.java"))
    groovy = sorted(p for root in module.sources for p in root.rglob("*.groovy"))
    compiler = _groovy_jar(classpath)
    if groovy and compiler is not None:
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        cp = os.pathsep.join(map(str, classpath))
        # The files as arguments: Groovy 2.4's command line reads no @file.
        argv = [str(find_jdk().java), *JAVA_LOCALE_FLAGS, "-cp", cp,
                "org.codehaus.groovy.tools.FileSystemCompiler", "-j", "-Jnowarn=true",
                "--encoding", encoding, "-d", str(out), "-cp", cp, *map(str, [*java, *groovy])]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=JAVAC_TIMEOUT,
                              env=tool_env(), check=False)
        with log.open("a", encoding="utf-8") as handle:
            handle.write(done.stdout + done.stderr)
        if done.returncode == 0:
            return [*java, *groovy], []
    compiled, left_out = _javac(java, classpath=classpath, out=out, release="",
                                encoding=encoding, log=log, processors=processors)
    return compiled, left_out + groovy


def _sandbox_run(sandbox: Sandbox, argv: Sequence[str], *, cwd: Path, scratch: Path,
                 readable: Sequence[Path], writable: Sequence[Path], wall: float,
                 memory_mb: int, processes: int = 256) -> ExecResult:
    scratch.mkdir(parents=True, exist_ok=True)
    mounts = [Mount(source=p, target=p) for p in dict.fromkeys(readable) if p.exists()]
    mounts += [Mount(source=p, target=p, writable=True) for p in writable]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(scratch),
           "LC_ALL": "C.UTF-8", "TMPDIR": str(scratch)}
    return sandbox.run(ExecRequest(
        argv=tuple(argv), cwd=cwd, scratch=scratch, env=env, mounts=tuple(mounts),
        limits=Limits(wall_time=wall, cpu_time=2 * wall, memory_mb=memory_mb, disk_mb=4096,
                      processes=processes, address_space=False)))


def java_ee_removed(info: JavaEnvInfo) -> list[Path]:
    """For a project built for Java 8 or older, the Java EE API its suite ran with there and
    Java 17 lacks (javax.annotation), last on the classpath: a project's own copy wins. [] when
    it cannot be fetched: the suite then runs as before, its failures in its log."""
    release = info.java_release.removeprefix("1.")
    if not release.isdigit() or int(release) > 8:
        return []
    try:
        return [ensure_artifact(JAVAX_ANNOTATION)]
    except ArtifactUnavailable:
        return []


def _outside(paths: Sequence[Path], root: Path) -> list[Path]:
    return [p for p in paths if not p.is_relative_to(root)]


def record_suite(info: JavaEnvInfo, targets: Sequence[Target], *, tools: RecorderTools,
                 junit: Path, sandbox: Sandbox, work: Path, max_calls: int,
                 timeout: float) -> tuple[Recording, dict[str, object]]:
    """Run the modules' own tests with the recorder; what they called, and how the suite ran."""
    calls_file = work / "calls.tsv"
    config = work / "recorder.cfg"
    lines = [f"out\t{calls_file}", f"max\t{max_calls}"]
    lines += [f"target\t{t.task_id}\t{t.class_name}\t{t.method}\t{','.join(t.types)}"
              for t in targets]
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    log = work / "suite.log"
    summary: dict[str, object] = {"modules": []}
    floor = newer_junit(info.dependencies)
    java_ee = java_ee_removed(info)
    for number, module in enumerate(suite_modules(info)):
        out = work / f"test-classes-{number}"
        classpath = [info.classes, *floor, *info.dependencies]
        entry: dict[str, object] = {
            "module": str(module.folder.relative_to(info.project_root)) or ".",
            "test_roots": [str(r.relative_to(module.folder)) for r in module.sources]}
        modules = summary["modules"]
        assert isinstance(modules, list)
        modules.append(entry)
        compiled, left_out = _compile_tests(module, classpath=[*classpath, junit], out=out,
                                            encoding=info.encoding, log=log,
                                            processors=info.processors)
        entry.update(test_files=len(compiled) + len(left_out), left_out=len(left_out))
        if not compiled:
            entry["error"] = "no test sources" if not left_out else "no test compiled"
            continue
        for resource in module.resources:
            shutil.copytree(resource, out, dirs_exist_ok=True)
        # The tests run from a private copy of the module (they write beside their inputs);
        # the copy keeps the module's layout, so relative paths resolve as in its build.
        copy = work / f"module-{number}"
        shutil.copytree(module.folder, copy, symlinks=True,
                        ignore=shutil.ignore_patterns("target", ".git", "node_modules"))
        workdir = copy / module.workdir.relative_to(module.folder)
        # The launcher brings its own JUnit Platform and engines: a project's older ones on
        # the same classpath break it (NoSuchMethodError between platform versions).
        run_cp = [*tools.recorder_classpath, out,
                  *(p for p in classpath if not _PLATFORM_JAR.fullmatch(p.name)), junit,
                  *java_ee]
        # A source whose class is not where its path says (another package, another name)
        # would make the launcher's whole discovery fail: only classes that exist are named.
        chosen = [(c, text) for c, text in _test_classes(module, compiled)
                  if (out / (c.replace(".", "/") + ".class")).is_file()]
        testng = [c for c, text in chosen if "org.testng" in text]
        selection = work / f"junit-{number}.args"
        selection.write_text("".join(
            [*(f"--select-class={c}\n" for c, text in chosen if "org.testng" not in text),
             *(f"--include-tag={g}\n" for g in module.groups),
             *(f"--exclude-tag={g}\n" for g in module.excluded_groups)]), encoding="utf-8")
        entry["test_classes"] = len(chosen)
        launches = []
        if len(chosen) > len(testng):
            launches.append(("junit", ["org.junit.platform.console.ConsoleLauncher",
                                       "--disable-banner", "--disable-ansi-colors",
                                       "--details=summary", f"@{selection}"]))
        if testng and any(_TESTNG_JAR.fullmatch(p.name) for p in classpath):
            # TestNG's own runner (the Platform's TestNG engine needs TestNG 6.14.3 or later).
            groups = [*(["-groups", ",".join(module.groups)] if module.groups else []),
                      *(["-excludegroups", ",".join(module.excluded_groups)]
                        if module.excluded_groups else [])]
            launches.append(("testng", ["org.testng.TestNG", "-d", str(work / "testng-output"),
                                        *groups, "-testclass", ",".join(testng)]))
        started = time.monotonic()
        patches = module_patches(run_cp)
        for kind, main in launches:
            # The JDK's packages opened to every unnamed module, as projects moving to Java 17
            # open them in their Surefire argLine (mocking libraries reflect into java.lang).
            argv = [str(find_jdk().java), *JAVA_LOCALE_FLAGS, f"-Xmx{SUITE_HEAP_MB}m",
                    *(f"-D{name}={value}" for name, value in module.properties),
                    *REPLAY_JVM_FLAGS, *patch_flags(patches),
                    f"-javaagent:{tools.agent_jar}={config}",
                    f"-Djava.io.tmpdir={work / f'scratch-{number}'}",
                    "-cp", os.pathsep.join(map(str, run_cp)), *main]
            result = _sandbox_run(
                sandbox, argv, cwd=workdir, scratch=work / f"scratch-{number}",
                readable=[info.project_root, info.root, tools.agent_jar,
                          *_outside(run_cp, info.root), *patches.values()],
                writable=[work], wall=timeout, memory_mb=SUITE_HEAP_MB + 1024,
                processes=SUITE_THREADS)
            stdout = result.stdout.decode("utf-8", "replace")
            with log.open("a", encoding="utf-8") as handle:
                handle.write(stdout + result.stderr.decode("utf-8", "replace"))
            counts = _suite_counts(kind, stdout)
            for key, value in counts.items():
                entry[key] = int(str(entry.get(key, 0))) + value
            entry[f"{kind}_exit"] = result.exit_code
            if result.timed_out:
                entry["timed_out"] = True
            if not counts:
                # The launcher never reported: say why, as the JVM did.
                lines = result.stderr.decode("utf-8", "replace").strip().splitlines()
                entry[f"{kind}_error"] = ("timed out" if result.timed_out else
                                          result.sandbox_error or (lines[-1] if lines
                                                                   else "no output"))
        entry["seconds"] = round(time.monotonic() - started, 1)
    recording = read_calls(calls_file, max_calls=max_calls)
    return recording, summary


_PLATFORM_JAR = re.compile(r"(junit-(jupiter|platform|vintage)[\w-]*|opentest4j|apiguardian"
                           r"[\w-]*)-[\d.]+(-[\w.]+)?\.jar")
_TESTNG_JAR = re.compile(r"testng-[\d.]+\.jar")


def _test_classes(module: SuiteModule, compiled: Sequence[Path]) -> list[tuple[str, str]]:
    """(class name, source text) of the compiled test files Surefire would run: its includes
    and excludes when the POM gives them, else its default names."""
    includes = [ant_pattern(p) for p in module.includes]
    excludes = [ant_pattern(p) for p in module.excludes]
    found = []
    for path in compiled:
        root = next((r for r in module.sources if path.is_relative_to(r)), None)
        if root is None:
            continue
        relative = path.relative_to(root).with_suffix("").as_posix()
        chosen = (any(p.fullmatch(relative) for p in includes) if includes
                  else re.fullmatch(TEST_CLASSES, path.stem) is not None)
        if not chosen or any(p.fullmatch(relative) for p in excludes):
            continue
        name = relative.replace("/", ".")
        found.append((name, path.read_text(encoding="utf-8", errors="replace")))
    return found


def _suite_counts(kind: str, stdout: str) -> dict[str, int]:
    """Tests found, successful and failed, as the launcher's summary says."""
    counts: dict[str, int] = {}
    if kind == "testng":
        found = re.search(r"Total tests run: (\d+),(?: Passes: \d+,)? Failures: (\d+)", stdout)
        if found:
            run, failed = int(found.group(1)), int(found.group(2))
            counts = {"tests_found": run, "tests_failed": failed,
                      "tests_successful": run - failed}
        return counts
    for key in ("tests successful", "tests failed", "tests found"):
        found = re.search(rf"\[\s*(\d+) {key}\s*\]", stdout)
        if found:
            counts[key.replace(" ", "_")] = int(found.group(1))
    return counts


def read_calls(path: Path, *, max_calls: int) -> Recording:
    recording = Recording()
    if not path.is_file():
        return recording

    def text(field_: str) -> str:
        return base64.b64decode(field_).decode("utf-8")

    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if fields[0] == "call" and len(fields) == 7:
            calls = recording.calls.setdefault(fields[1], [])
            call = Call(signature=text(fields[2]), before=text(fields[3]), outcome=fields[4],
                        value=text(fields[5]), after=text(fields[6]))
            if len(calls) < max_calls and all(c.before != call.before for c in calls):
                calls.append(call)
        elif fields[0] == "drop" and len(fields) == 3:
            reasons = recording.reasons.setdefault(fields[1], [])
            if len(reasons) < 5:
                reasons.append(text(fields[2]))
        elif fields[0] == "count" and len(fields) == 4:
            recording.dropped[fields[1]] += int(fields[3])
    return recording


def generate_calls(info: JavaEnvInfo, targets: Sequence[Target], *, tools: RecorderTools,
                   sandbox: Sandbox, work: Path, max_calls: int, timeout: float,
                   edges: bool = False) -> Recording:
    """Calls from generated inputs for methods the suite never called (``Generate``): run on
    the project as built, in the sandbox, written as the recorder writes recorded calls."""
    calls_file = work / "generated.tsv"
    config = work / "generate.cfg"
    lines = [f"out\t{calls_file}", f"max\t{max_calls}", f"edges\t{str(edges).lower()}",
             f"classes\t{info.classes}"]
    lines += [f"target\t{t.task_id}\t{t.class_name}\t{t.method}\t{','.join(t.types)}"
              for t in targets]
    lines += [f"seed\t{t.task_id}\t{kind}\t{base64.b64encode(value.encode()).decode()}"
              for t in targets for kind, value in t.seeds]
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run_cp = [*tools.generator_classpath, info.classes, *info.dependencies]
    patches = module_patches(run_cp)
    argv = [str(find_jdk().java), *JAVA_LOCALE_FLAGS, "-Xmx1g", *REPLAY_JVM_FLAGS,
            *patch_flags(patches), f"-Djava.io.tmpdir={work / 'scratch-generate'}",
            "-cp", os.pathsep.join(map(str, run_cp)), GENERATE_MAIN, str(config)]
    result = _sandbox_run(sandbox, argv, cwd=info.project_root,
                          scratch=work / "scratch-generate",
                          readable=[info.project_root, info.root, *_outside(run_cp, info.root),
                                    *patches.values()],
                          writable=[work], wall=timeout, memory_mb=2048)
    with (work / "generate.log").open("a", encoding="utf-8") as handle:
        handle.write(result.stdout.decode("utf-8", "replace")
                     + result.stderr.decode("utf-8", "replace"))
    return read_calls(calls_file, max_calls=max_calls)


# ---------------------------------------------------------------------------- the tests


def _java_string(text: str) -> str:
    """A Java string literal of ``text``: \\n and \\r escaped as such (a \\u000a escape would
    end the line before the lexer sees the string), other control and non-ASCII characters as
    \\u escapes, surrogate pairs for the rest."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif 0x20 <= code < 0x7F:
            out.append(char)
        elif code > 0xFFFF:
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            out.append(f"\\u{code:04x}")
    out.append('"')
    return "".join(out)


def _pieces(text: str, size: int = 8000) -> str:
    """A long text as Replay.join("…", "…"): each piece far below a class file's 64 KiB."""
    parts = [text[i:i + size] for i in range(0, len(text), size)] or [""]
    if len(parts) == 1:
        return _java_string(parts[0])
    inner = ",\n                ".join(_java_string(p) for p in parts)
    return f"codereval.replay.Replay.join(\n                {inner})"


def replay_source(target: Target, calls: Sequence[Call], *, project: str) -> str:
    """The replay test of one task, in CoderEval's form (``main`` prints true or false)."""
    descriptor = calls[0].signature.split("\t")[2]
    methods = []
    for index, call in enumerate(calls):
        methods.append(
            f"    private static String[] call{index}() {{\n"
            f"        return new String[] {{\n"
            f"            {_java_string(call.outcome)},\n"
            f"            {_pieces(call.before)},\n"
            f"            {_pieces(call.value)},\n"
            f"            {_pieces(call.after)}}};\n"
            f"    }}\n")
    listed = ", ".join(f"call{i}()" for i in range(len(calls)))
    package = f"package {target.package};\n\n" if target.package else ""
    return (
        f"// Recorded by codereval build java-tests: {len(calls)} call(s) {project}'s own test\n"
        f"// suite made to {target.class_name}.{target.method}. Each call's receiver and\n"
        "// arguments are rebuilt from XStream XML, the method is called, and what it returns\n"
        "// (or throws) and leaves in its receiver and arguments is compared with the original.\n"
        f"{package}"
        f"public class {target.test_class} {{\n"
        "    public static void main(String[] args) throws Exception {\n"
        f"        codereval.replay.Replay.check({_java_string(target.class_name)}, "
        f"{_java_string(target.method)},\n"
        f"            {_java_string(descriptor)}, calls());\n"
        "    }\n\n"
        "    private static String[][] calls() {\n"
        f"        return new String[][] {{{listed}}};\n"
        "    }\n\n"
        + "\n".join(methods) + "}\n")


def _dominant(calls: Sequence[Call]) -> list[Call]:
    """The calls of the method most called (several overloads may have matched a signature
    that names type variables)."""
    if not calls:
        return []
    top, _ = Counter(c.signature for c in calls).most_common(1)[0]
    return [c for c in calls if c.signature == top]


def calibrate(info: JavaEnvInfo, tests: dict[str, tuple[Target, list[Call]]], *,
              tools: RecorderTools, sandbox: Sandbox, work: Path, jobs: int, timeout: float,
              project: str, progress: bool) -> dict[str, set[int] | str]:
    """Replay each test against the project as built, REFERENCE_RUNS times: the calls that
    fail in any run (or why the test cannot run at all)."""
    sources = work / "replay-src"
    paths: dict[str, Path] = {}
    for task_id, (target, calls) in tests.items():
        path = sources / task_id / target.relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(replay_source(target, calls, project=project), encoding="utf-8")
        paths[task_id] = path
    results: dict[str, set[int] | str] = {}
    classes = work / "replay-classes"
    classpath = [info.classes, *info.dependencies, *tools.replay_classpath]
    # One javac for all of them: they are separate classes of separate names.
    _compiled, left_out = _javac(list(paths.values()), classpath=classpath, out=classes,
                                release="", encoding="UTF-8", log=work / "replay.log")
    for task_id, path in paths.items():
        if path in left_out:
            results[task_id] = "the replay test does not compile"
    runnable = [t for t in tests if t not in results]
    run_cp = [classes, *classpath]
    patches = module_patches(run_cp)

    def one(task_id: str, run: int) -> tuple[str, set[int] | str]:
        target = tests[task_id][0]
        name = f"{target.package}.{target.test_class}" if target.package else target.test_class
        report = work / "calibrate" / f"{task_id}-{run}.txt"
        report.parent.mkdir(parents=True, exist_ok=True)
        argv = [str(find_jdk().java), *JAVA_LOCALE_FLAGS, *REPLAY_JVM_FLAGS, "-Xmx1g",
                "-XX:TieredStopAtLevel=1", *patch_flags(patches),
                f"-Dcodereval.replay.calibrate={report}",
                "-cp", os.pathsep.join(map(str, run_cp)), name]
        result = _sandbox_run(sandbox, argv, cwd=info.project_root,
                              scratch=work / "scratch-replay" / f"{task_id}-{run}",
                              readable=[info.project_root, info.root,
                                        *_outside(run_cp, info.root), *patches.values()],
                              writable=[report.parent], wall=timeout, memory_mb=2048)
        if not report.is_file():
            error = result.stderr.decode("utf-8", "replace").strip().splitlines()
            why = "timed out" if result.timed_out else (error[-1] if error else "no output")
            return task_id, f"the replay did not finish: {why[:200]}"
        failing: set[int] = set()
        for line in report.read_text(encoding="utf-8").splitlines():
            index = line.split("\t", 1)[0]
            if index == "-1":
                return task_id, line.split("\t", 1)[1]
            failing.add(int(index))
        return task_id, failing

    jobs_list = [(t, r) for t in runnable for r in range(REFERENCE_RUNS)]
    with _bar(progress, f"replaying {project}", len(jobs_list)) as advance, \
            ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(one, t, r) for t, r in jobs_list]
        for future in futures:
            task_id, found = future.result()
            advance()
            known = results.get(task_id)
            if isinstance(found, str):
                results[task_id] = found
            elif not isinstance(known, str):
                results[task_id] = (known or set()) | found
    return results


# ---------------------------------------------------------------------------- the command


def build_java_tests(options: JavaTestsOptions) -> JavaTestsReport:
    started = time.monotonic()
    records, manifest = _prepared(options.prepared)
    out = options.out or options.prepared / "tests"
    if options.update:
        if not (out / "checks.jsonl").is_file():
            raise UserError(f"{out} holds no recorded tests to update",
                            hint="record them first, without --update")
        if options.tasks or not options.projects:
            raise UserError("--update replaces whole projects' tests",
                            hint="name them with --project, without --task")
    elif out.exists() and not options.force:
        raise UserError(f"{out} exists", hint="pass --force to record the tests again, or "
                                              "--update with --project to redo one project")
    if not 0.0 <= options.min_kill <= 1.0:
        raise UserError(f"--min-kill {options.min_kill} is not a share", hint="give 0 to 1")
    _, tasks = read_tasks_file(records)
    tasks = [t for t in tasks if t.language is Language.JAVA]
    if not tasks:
        raise UserError(f"{options.prepared} has no Java tasks",
                        hint="give a benchmark made by `codereval prepare codereval-java`")
    if options.projects:
        unknown = set(options.projects) - {t.project for t in tasks}
        if unknown:
            raise UserError(f"no tasks of project {sorted(unknown)[0]!r} in {options.prepared}",
                            hint="name projects as owner/repo, as the benchmark does")
        tasks = [t for t in tasks if t.project in options.projects]
    if options.tasks:
        tasks = [t for t in tasks if t.task_id in set(options.tasks)]
        if not tasks:
            raise UserError("none of the --task ids is in the benchmark")
    try:
        tools = ensure_recorder()
        junit = ensure_artifact(JUNIT_CONSOLE)
    except ArtifactUnavailable as exc:
        raise UserError(f"the recorder's jars are unavailable: {exc}",
                        hint="run once with Maven Central reachable") from None
    sandbox = get_sandbox(options.sandbox)
    specs = {s.name: s for s in load_manifest(manifest)}
    env_root = options.env_root or default_env_root()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    work = staging / ".work"
    report = JavaTestsReport(out=out)
    try:
        written = _record_all(tasks, options, specs=specs, env_root=env_root, tools=tools,
                              junit=junit, sandbox=sandbox, staging=staging, work=work,
                              report=report)
        _validate(report, written, options, staging=staging, manifest=manifest,
                  env_root=env_root)
        _finish(report, written, staging, options)
        report.seconds = time.monotonic() - started
        suites = dict(report.suites)
        if options.update:
            suites = _keep_others(out, staging, tasks, suites)
        checks = [json.loads(line) for line in
                  (staging / "checks.jsonl").read_text(encoding="utf-8").splitlines()]
        statuses = Counter(str(c["status"]) for c in checks)
        summary = {"tasks": len(checks), **{s: statuses[s] for s in STATUSES},
                   "kept": sum(1 for c in checks if c["status"] == "ok"
                               or str(c["detail"]).startswith("kept")),
                   "suites": suites,
                   "seconds": round(report.seconds, 1),
                   "options": {"max_calls": options.max_calls, "mutants": options.mutants,
                               "min_kill": options.min_kill,
                               "include_weak": options.include_weak,
                               "edge_inputs": options.edge_inputs}}
        atomic_write_text(staging / "summary.json", json.dumps(summary, indent=2) + "\n")
        if not options.keep_work:
            remove_tree(work)
        if out.exists():
            remove_tree(out)
        staging.rename(out)
    finally:
        if staging.exists():
            remove_tree(staging)
    return report


def _compiled_per_file(info: JavaEnvInfo, tasks: Sequence[Task], *, work: Path) -> JavaEnvInfo:
    """A folder of independent programs has nothing compiled ahead (each sample compiles its
    own file): the tasks' files are compiled here, each that compiles, for the generator and
    the replays to load."""
    files = sorted({found for task in tasks if task.location is not None
                    and (found := info.find_source(task.location.file_path)) is not None})
    classes = work / "classes-per-file"
    _javac(files, classpath=info.dependencies, out=classes, release=info.java_release,
           encoding=info.encoding, log=work / "compile.log")
    return dataclasses.replace(info, classes=classes)


def _distinct_names(targets: dict[str, Target]) -> dict[str, Target]:
    """Overloads (several tasks of one class with one method name) cannot share CoderEval's
    ``<Class>_<method>`` test: each gets ``<Class>_<method>_<task id>``, which `evaluate`
    looks for first."""
    named = Counter(t.relative for t in targets.values())
    distinct = {}
    for task_id, target in targets.items():
        if named[target.relative] > 1:
            name = f"{target.test_class}_{task_id}"
            folder = target.relative.rpartition("/")[0]
            target = dataclasses.replace(
                target, test_class=name, relative=f"{folder}/{name}.java" if folder
                else f"{name}.java")
        distinct[task_id] = target
    return distinct


def _prepared(path: Path) -> tuple[Path, Path]:
    """(records, projects manifest) of a prepared benchmark directory."""
    if not (path / "benchmark.json").is_file() or not (path / "records.json").is_file():
        raise UserError(f"{path} is not a prepared benchmark (no benchmark.json, records.json)",
                        hint="make one with `codereval prepare codereval-java`")
    return path / "records.json", path / "projects.toml"


STATUSES = ("ok", "weak", "flaky", "broken", "unrecorded", "unreached")


@dataclass(kw_only=True)
class _Settled:
    """What calibration left of a task's calls: ``recorded`` with the calls kept, or why not
    (``broken``: the replay cannot run; ``flaky``: the reference loses most of its calls)."""
    status: str
    detail: str = ""
    calls: int = 0
    kept: list[Call] = field(default_factory=list)
    unstable: int = 0


def _settle(calls: Sequence[Call], failing: set[int] | str) -> _Settled:
    if isinstance(failing, str):
        return _Settled(status="broken", detail=failing, calls=len(calls))
    kept = [c for i, c in enumerate(calls) if i not in failing]
    if not kept or len(failing) * 2 > len(calls):
        return _Settled(status="flaky", calls=len(calls), unstable=len(failing),
                        detail=f"the reference does not reproduce {len(failing)} of "
                               f"{len(calls)} recorded calls")
    return _Settled(status="recorded", calls=len(calls), kept=kept, unstable=len(failing))


def _record_all(tasks: Sequence[Task], options: JavaTestsOptions, *, specs: dict[str, ProjectSpec],
                env_root: Path, tools: RecorderTools, junit: Path, sandbox: Sandbox,
                staging: Path, work: Path, report: JavaTestsReport) -> dict[str, Path]:
    """Record and calibrate every project's tests into the staging folder: task id -> test."""
    written: dict[str, Path] = {}
    by_project: dict[str, list[Task]] = defaultdict(list)
    for task in tasks:
        by_project[task.project].append(task)
    for project in sorted(by_project):
        project_tasks = by_project[project]

        def check(task: Task, status: str, detail: str = "", *, calls: int = 0,
                  dropped: int = 0, unstable: int = 0) -> TaskCheck:
            location = task.location
            made = TaskCheck(task_id=task.task_id, function=task.name,
                             file_path=location.file_path if location else "", status=status,
                             detail=detail, calls=calls, dropped=dropped, unstable=unstable,
                             project=task.project)
            report.checks.append(made)
            return made

        spec = specs.get(project)
        if spec is None:
            for task in project_tasks:
                check(task, "unreached", "the project is not in the benchmark's manifest")
            continue
        env = JavaEnvironmentBuilder().build(spec, root=env_root)
        if not env.ready:
            for task in project_tasks:
                check(task, "unreached", f"the environment does not build: {env.error[:200]}")
            continue
        info = load_env_info(env.path)
        targets: dict[str, Target] = {}
        for task in project_tasks:
            location = task.location
            source = info.find_source(location.file_path) if location is not None else None
            if location is None or not location.file_path or source is None:
                check(task, "unreached", "the task has no file location in the project")
                continue
            found = find_target(task, info.read_source(source))
            if isinstance(found, str):
                check(task, "unreached", found)
            else:
                targets[task.task_id] = found
        if not targets:
            continue
        targets = _distinct_names(targets)
        project_work = work / project_folder(project)
        project_work.mkdir(parents=True, exist_ok=True)
        if info.compile_per_file:
            info = _compiled_per_file(info, project_tasks, work=project_work)
        if options.progress:
            Console(stderr=True).print(f"[bold]recording[/] {project}: {len(targets)} "
                                       "task(s), the tests of their modules")
        recording, suite = record_suite(info, list(targets.values()), tools=tools, junit=junit,
                                        sandbox=sandbox, work=project_work,
                                        max_calls=options.max_calls,
                                        timeout=options.suite_timeout)
        report.suites[project] = suite

        def generated_in(folder: Path, wanted: Sequence[Target], *,
                         info: JavaEnvInfo = info) -> Recording:
            return generate_calls(info, wanted, tools=tools, sandbox=sandbox, work=folder,
                                  max_calls=options.max_calls, timeout=options.suite_timeout,
                                  edges=options.edge_inputs)

        def calibrated_in(folder: Path, wanted: dict[str, tuple[Target, list[Call]]], *,
                          info: JavaEnvInfo = info, project: str = project
                          ) -> dict[str, _Settled]:
            failing = calibrate(info, wanted, tools=tools, sandbox=sandbox, work=folder,
                                jobs=options.jobs, timeout=options.timeout, project=project,
                                progress=options.progress)
            return {task_id: _settle(calls, failing.get(task_id, set()))
                    for task_id, (_target, calls) in wanted.items()}

        generated: set[str] = set()
        # Generated inputs stand in wherever the suite gives no test: a method it never calls,
        # or calls none of which serialise.
        without = [t for t in targets.values() if not recording.calls.get(t.task_id)]
        if options.generate and without:
            made = generated_in(project_work, without)
            for missing in without:
                if made.calls.get(missing.task_id):
                    recording.calls[missing.task_id] = made.calls[missing.task_id]
                    generated.add(missing.task_id)
                elif made.reasons.get(missing.task_id):
                    recording.reasons[missing.task_id] = made.reasons[missing.task_id]
        tests: dict[str, tuple[Target, list[Call]]] = {}
        for task in project_tasks:
            target = targets.get(task.task_id)
            if target is None:
                continue
            calls = _dominant(recording.calls.get(task.task_id, []))
            dropped = recording.dropped.get(task.task_id, 0)
            if not calls:
                why = "; ".join(recording.reasons.get(task.task_id, []))[:300]
                if dropped:
                    check(task, "unrecorded", f"{dropped} call(s), none serialised: {why}",
                          dropped=dropped)
                else:
                    tried = f"; generated inputs: {why}" if why else ""
                    check(task, "unreached", f"no test of the suite calls it{tried}")
                continue
            tests[task.task_id] = (target, calls)
        if not tests:
            continue
        settled = calibrated_in(project_work, tests)
        for task_id in generated:
            if recording.dropped.get(task_id):
                done = settled[task_id]
                lost = f"the suite's {recording.dropped[task_id]} call(s) did not serialise"
                done.detail = (f"{lost}; generated inputs instead" if done.status == "recorded"
                               else f"{lost}; generated inputs: {done.detail}")
        # A suite whose calls the reference does not reproduce (time, state another test left,
        # identity-hash order) gets a second chance from generated inputs, in a fresh JVM,
        # calibrated the same way; the check says which calls were used and why.
        retry = [targets[t] for t, s in settled.items()
                 if s.status != "recorded" and t not in generated]
        if options.generate and retry:
            again = project_work / "fallback"
            again.mkdir(parents=True, exist_ok=True)
            made = generated_in(again, retry)
            second = {t.task_id: (t, _dominant(made.calls[t.task_id])) for t in retry
                      if made.calls.get(t.task_id)}
            if second:
                for task_id, fresh in calibrated_in(again, second).items():
                    if fresh.status == "recorded":
                        fresh.detail = (f"the suite's calls: {settled[task_id].detail}; "
                                        "generated inputs instead")
                        settled[task_id] = fresh
                        tests[task_id] = second[task_id]
                        generated.add(task_id)
                    else:
                        settled[task_id].detail += f"; generated inputs: {fresh.detail}"
            for target in retry:
                if target.task_id not in second:
                    why = "; ".join(made.reasons.get(target.task_id, [])) or "no call kept"
                    settled[target.task_id].detail += f"; generated inputs: {why[:200]}"
        by_id = {t.task_id: t for t in project_tasks}
        for task_id, (target, _calls) in tests.items():
            task = by_id[task_id]
            outcome = settled[task_id]
            dropped = recording.dropped.get(task_id, 0)
            if outcome.status != "recorded":
                check(task, outcome.status, outcome.detail, calls=outcome.calls,
                      dropped=dropped, unstable=outcome.unstable)
                continue
            path = staging / project_folder(project) / target.relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(replay_source(target, outcome.kept, project=project),
                            encoding="utf-8")
            written[task_id] = path
            entry = check(task, "recorded", outcome.detail, calls=len(outcome.kept),
                          dropped=dropped, unstable=outcome.unstable)
            entry.source = "generated" if task_id in generated else "suite"
    return written


def _validate(report: JavaTestsReport, written: dict[str, Path], options: JavaTestsOptions, *,
              staging: Path, manifest: Path, env_root: Path) -> None:
    """Reference ×3 and the mutants, through the engine as `evaluate --prepared` runs them."""
    if not written:
        return
    records, _manifest = _prepared(options.prepared)
    _, tasks = read_tasks_file(records)
    tasks = [t for t in tasks if t.task_id in written]
    samples: list[Sample] = []
    probes: dict[tuple[str, int], str] = {}
    for task in tasks:
        original = task.reference
        for index in range(REFERENCE_RUNS):
            samples.append(Sample(task_id=task.task_id, index=index, raw=original,
                                  code=original))
            probes[(task.task_id, index)] = "reference"
        for offset, mutant in enumerate(java_mutants(original, options.mutants)):
            index = REFERENCE_RUNS + offset
            samples.append(Sample(task_id=task.task_id, index=index, raw=mutant, code=mutant))
            probes[(task.task_id, index)] = "mutant"
        empty = java_trivial_body(original, name=task.name)
        if empty is not None:
            index = REFERENCE_RUNS + options.mutants
            samples.append(Sample(task_id=task.task_id, index=index, raw=empty, code=empty))
            probes[(task.task_id, index)] = "trivial"
    run = engine.evaluate(
        benchmark=engine.Benchmark(name="java-tests-validation", tasks=tasks),
        samples=samples,
        run_dir=staging / ".work" / "validation",
        options=engine.EvalOptions(jobs=options.jobs, timeout=options.timeout,
                                   sandbox=options.sandbox, projects=manifest,
                                   tests_dir=staging, env_root=env_root, mode="gold",
                                   progress=options.progress),
        console=Console(stderr=True, quiet=not options.progress),
    )
    checks = {c.task_id: c for c in report.checks}
    for task in tasks:
        check = checks[task.task_id]
        outcomes = [o for o in run.outcomes if o.task_id == task.task_id]
        reference = [o for o in outcomes if probes[(o.task_id, o.sample_index)] == "reference"]
        # A mutant that does not compile says nothing of the test (the mutator cannot always
        # tell string + from numeric +): it is not counted.
        others = [o for o in outcomes if probes[(o.task_id, o.sample_index)] == "mutant"
                  and o.verdict is not Verdict.COMPILE_ERROR]
        trivial = [o for o in outcomes if probes[(o.task_id, o.sample_index)] == "trivial"]
        judge(check, reference, others, min_kill=options.min_kill, trivial=trivial)


def _keep_others(out: Path, staging: Path, tasks: Sequence[Task],
                 suites: dict[str, dict[str, object]]) -> dict[str, dict[str, object]]:
    """--update: the other projects' tests, checks and suites, as the existing OUT has them."""
    redone = {project_folder(t.project) for t in tasks}
    ids = {t.task_id for t in tasks}
    for folder in out.iterdir():
        if folder.is_dir() and not folder.name.startswith(".") and folder.name not in redone:
            shutil.copytree(folder, staging / folder.name)
    kept = [line for line in (out / "checks.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip() and json.loads(line)["task_id"] not in ids]
    fresh = (staging / "checks.jsonl").read_text(encoding="utf-8").splitlines()
    lines = sorted([*kept, *fresh], key=lambda line: str(json.loads(line)["task_id"]))
    atomic_write_text(staging / "checks.jsonl", "\n".join(lines) + "\n")
    merged: dict[str, dict[str, object]] = {}
    with contextlib.suppress(OSError, ValueError):
        merged = dict(json.loads((out / "summary.json").read_text(encoding="utf-8"))["suites"])
    merged.update(suites)
    return merged


def _finish(report: JavaTestsReport, written: dict[str, Path], staging: Path,
            options: JavaTestsOptions) -> None:
    """Keep the tests of ok tasks (and weak ones with include_weak); write checks.jsonl."""
    for check in report.checks:
        path = written.get(check.task_id)
        if path is None:
            continue
        keep = check.status == "ok" or (check.status == "weak" and options.include_weak)
        if check.status == "weak" and keep:
            check.detail = f"kept (--include-weak): {check.detail}"
        if not keep:
            path.unlink()
    for folder in sorted(staging.rglob("*"), reverse=True):
        if folder.is_dir() and folder.name != ".work" and ".work" not in folder.parts:
            with contextlib.suppress(OSError):
                folder.rmdir()
    lines = [c.to_json() for c in sorted(report.checks, key=lambda c: c.task_id)]
    atomic_write_text(staging / "checks.jsonl", "\n".join(lines) + "\n")


__all__ = ["JavaTestsOptions", "JavaTestsReport", "build_java_tests", "find_target",
           "read_calls", "replay_source"]
