"""Java project environments: the source copied once, the classpath resolved once, compiled once.

An environment directory (``<root>/envs/<slug>-<key>/``) holds ``src/`` (the project, copied from a
directory or fetched from git at a commit or from an archive, see ``sources``),
``classes/`` and ``test-classes/`` (the project compiled by javac), ``env.json`` (source roots,
the resolved dependency classpath, the JDK) and ``build.log``. It is keyed by the recipe, the
source content, the harness version and the JDK, and is only read afterwards: every sample
compiles its changed file into a private directory placed first on the classpath.

Maven projects (a ``pom.xml``) get their dependency classpath from
``mvn dependency:build-classpath`` (test scope), tried offline first so a warm local repository
needs no network; plain projects list source roots and jars in the manifest.
"""

from __future__ import annotations

import codecs
import fcntl
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import time
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from codereval.environments.base import Environment, EnvironmentBuilder, ProjectSpec
from codereval.environments.edits import EditFailed, apply_edits
from codereval.environments.python import BuildReport
from codereval.environments.sources import fetch_source, local_source_dir
from codereval.environments.staging import staging_dir, sweep_staging, temporary_staging
from codereval.errors import ToolchainMissing, UserError
from codereval.java.artifacts import ECJ, ArtifactUnavailable, ensure_artifact, newer_junit
from codereval.java.module_patches import module_patches
from codereval.java.platform_api import release_api
from codereval.java.toolchain import (
    JAVA_LOCALE_FLAGS,
    find_jdk,
    find_maven,
    maven_repository,
    tool_env,
)
from codereval.model import HARNESS_VERSION, Language

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "target", "build", ".idea", ".gradle"})
MAVEN_MAIN_ROOTS = ("src/main/java",)
MAVEN_TEST_ROOTS = ("src/test/java",)
RESOURCE_ROOTS = ("src/main/resources", "src/test/resources")
MAVEN_TIMEOUT = 900.0
# Part of every Java environment's key: bump it when what a build produces changes (2: Maven
# module environments record their annotation processors; 3: pom profiles' dependencies,
# generated sources, test files javac rejects left out (with test_roots), non-UTF-8 bytes of
# UTF-8 sources read as U+FFFD, build_dir).
ENV_FORMAT = "java-env/3"
JAVAC_TIMEOUT = 900.0


class BuildFailed(Exception):
    """A step of the environment build failed; the message names the step and its last lines."""


@dataclass(frozen=True, kw_only=True)
class JavaEnvInfo:
    """What a built Java environment offers a runner (read from ``env.json``)."""

    root: Path
    project_root: Path
    main_roots: tuple[Path, ...]
    test_roots: tuple[Path, ...]
    classes: Path
    test_classes: Path
    # Dependency jars and resource folders, in classpath order.
    dependencies: tuple[Path, ...]
    processors: bool
    # The javac --release samples compile with ("" for the JDK's own).
    java_release: str = ""
    # Nothing compiled ahead (a folder of independent programs): a sample's file finds the
    # classes it names in the main roots' sources.
    compile_per_file: bool = False
    # The encoding of the project's sources (pom.xml's project.build.sourceEncoding; UTF-8
    # otherwise): what javac compiled them with and what a runner must read them with.
    encoding: str = "UTF-8"
    # The folder (below project_root) whose pom built it; "" for the root.
    build_dir: str = ""
    # "ecj" when only Eclipse's compiler could compile the sources (older than Java 5), at
    # ``java_source`` compliance; samples then compile with it too.
    compiler: str = "javac"
    java_source: str = ""

    @property
    def build_root(self) -> Path:
        """Where the build ran: the folder a test runs from under Maven, Ant, Defects4J."""
        return self.project_root / self.build_dir if self.build_dir else self.project_root

    def read_source(self, path: Path) -> str:
        return path.read_text(encoding=python_codec(self.encoding))

    def module_patches(self) -> dict[str, Path]:
        """The classes its dependency jars add to the JDK's packages, as a jar per module to
        start its JVMs with (``--patch-module``): Java 8 loaded them, Java 9's modules hide
        them (``codereval.java.module_patches``)."""
        return module_patches(self.dependencies)

    def compile_options(self) -> list[str]:
        """javac options for a sample: as the project was compiled."""
        return self._compile_options(self.java_source)

    def test_compile_options(self) -> list[str]:
        """javac options for a sample that is a test: as the project's tests were compiled.
        Sources older than Java 5 compile their tests at 1.5, as Defects4J does (and as the
        project's test files 1.4 rejects were compiled here)."""
        return self._compile_options(JAVA5_SOURCE if self.compiler == "ecj" else self.java_source)

    def _compile_options(self, source: str) -> list[str]:
        options = ["-proc:none", "-g"] if not self.processors else ["-g"]
        if self.compiler == "ecj":
            options += ecj_options(source, self.java_release)
        elif self.java_release:
            options += ["--release", self.java_release]
            if self.java_release in OLDER_RELEASE.values():
                options.append("-Xlint:-options")  # "release 7 is obsolete", for every sample
        if self.compile_per_file:
            options += ["-sourcepath", os.pathsep.join(str(r) for r in self.main_roots)]
        return options

    def compile_classpath(self) -> list[Path]:
        return [self.classes, self.test_classes, *self.dependencies]

    def test_compile_classpath(self) -> list[Path]:
        """The classpath a test sample compiles against: the project's, with the JUnit its
        tests run with ahead of a JUnit older than 4.12 (Defects4J puts its JUnit 4 on every
        test classpath; a test written for JUnit 4 compiles and runs there)."""
        return [self.classes, self.test_classes, *newer_junit(self.dependencies),
                *self.dependencies]

    def find_source(self, relative: str) -> Path | None:
        """The file ``relative`` (``<package path>/<File>.java``) in a main or test root."""
        for root in (*self.main_roots, *self.test_roots):
            candidate = root / relative
            if candidate.is_file():
                return candidate
        return None


def python_codec(java_charset: str) -> str:
    """Python's name for a Java charset name (``ISO-8859-1``, ``Cp1252``, ``UTF-8``)."""
    try:
        return codecs.lookup(java_charset).name
    except LookupError:
        raise BuildFailed(f"source encoding {java_charset!r} is not one Python knows") from None


def pom_source_encoding(project: Path, *, default: str = "UTF-8") -> str:
    """``project.build.sourceEncoding`` (or the compiler plugin's ``encoding``) from the
    project's pom.xml, or ``default``.

    Maven compiles with it (old Apache projects, Defects4J's among them, are ISO-8859-1), and
    so must we: javac's UTF-8 rejects their Latin-1 comments, and a runner reading their files
    as UTF-8 would fail on them."""
    pom = project / "pom.xml"
    if not pom.is_file():
        return default
    try:
        root = ElementTree.parse(pom).getroot()
    except ElementTree.ParseError:
        return default
    found = ""
    for element in root.iter():
        tag = element.tag.rsplit("}", 1)[-1]
        value = (element.text or "").strip()
        if tag == "project.build.sourceEncoding" and value:
            return value if "${" not in value else default
        if tag == "encoding" and value and "${" not in value and not found:
            found = value  # <plugin><configuration><encoding> of maven-compiler-plugin
    return found or default


def source_encoding(project: Path, roots: list[Path]) -> str:
    """The encoding the project's sources are compiled in: what the pom declares, else UTF-8
    when every source file is UTF-8, else ISO-8859-1.

    A pom that declares nothing compiled with the platform's encoding of its day; projects from
    before UTF-8 platforms (Defects4J's Codec has ``ç`` in a test) wrote Latin-1, which no
    UTF-8 javac accepts and into which any byte decodes."""
    declared = pom_source_encoding(project, default="")
    if declared:
        return declared
    for root in roots:
        for path in root.rglob("*.java"):
            try:
                path.read_bytes().decode("utf-8")
            except UnicodeDecodeError:
                return "ISO-8859-1"
            except OSError:
                continue
    return "UTF-8"


def _as_java8_read(roots: list[Path], *, log: Path) -> None:
    """Bytes that are not UTF-8 in a project compiled as UTF-8 become U+FFFD in the copy, as
    Java 8's javac read them (a warning then; Java 9 and later refuse the file): Defects4J's
    Codec declares UTF-8 and has Latin-1 test files."""
    for root in roots:
        for path in root.rglob("*.java"):
            data = path.read_bytes()
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                path.write_text(data.decode("utf-8", "replace"), encoding="utf-8")
                with log.open("a", encoding="utf-8") as handle:
                    handle.write(f"{path}: bytes that are not UTF-8 read as U+FFFD, as Java "
                                 "8's javac did\n")


def source_hash(root: Path) -> str:
    """Hash of every file's relative path and content (build outputs and VCS data skipped)."""
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            digest.update(str(path.relative_to(root)).encode() + b"\0")
            digest.update(path.read_bytes() if not path.is_symlink() else b"link")
            digest.update(b"\0")
    return digest.hexdigest()


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _run(argv: list[str], *, cwd: Path, log: Path, step: str, timeout: float) -> str:
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"$ {' '.join(argv)}\n")
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                              env=tool_env(), check=False)
    except subprocess.TimeoutExpired:
        raise BuildFailed(f"{step}: timed out after {timeout:.0f}s") from None
    printed = done.stdout + done.stderr
    with log.open("a", encoding="utf-8") as handle:
        handle.write(printed + f"[exit {done.returncode}]\n")
    if done.returncode != 0:
        raise BuildFailed(f"{step} failed (exit {done.returncode}):\n{_tail(printed)}")
    return printed


class JavaEnvironmentBuilder(EnvironmentBuilder):
    language = Language.JAVA

    def __init__(self) -> None:
        self.last_report: BuildReport | None = None

    def build(self, spec: ProjectSpec, *, root: Path, force: bool = False) -> Environment:
        jdk = find_jdk()
        envs = root / "envs"
        envs.mkdir(parents=True, exist_ok=True)
        sweep_staging(envs)
        with temporary_staging(envs, "fetch") as tmp:
            fetched = Path(tmp) / "src"
            try:
                # The key needs the source's hash: a local directory is hashed where it is (so
                # a cached environment costs one read), a git or archive source is fetched first.
                local = local_source_dir(spec)
                if local is None:
                    fetch_source(spec, fetched, downloads=root / "downloads", ignore=SKIP_DIRS)
                elif not local.is_dir():
                    raise UserError(f"subdir {spec.subdir!r} not found in the source")
            except UserError as exc:
                # A failed environment, not an exception: the runner makes its tasks infra_error.
                return Environment(
                    spec=spec, path=root, key="", ready=False,
                    error=f"Java project {spec.name}: cannot get the source: {exc.one_line()}",
                )
            source = local if local is not None else fetched
            steps = _exec_steps(source / spec.build_dir if spec.build_dir else source)
            # An environment built before the pom's exec steps ran was built without their
            # output: such projects' keys name the steps (others' keys stay as they were).
            extra = f"|exec:{_steps_key(steps)}" if steps else ""
            key = spec.key(source_hash=source_hash(source),
                           harness_version=f"{HARNESS_VERSION}|{jdk.version}|{ENV_FORMAT}{extra}")
            target = envs / f"{spec.slug}-{key}"
            with (envs / f".{spec.slug}-{key}.lock").open("w") as lock:
                # Two processes building the same environment: the second waits and reuses it.
                fcntl.flock(lock, fcntl.LOCK_EX)
                if force and target.exists():
                    shutil.rmtree(target)
                if (target / "env.json").exists():
                    env = Environment(spec=spec, path=target, key=key, ready=True)
                    self.last_report = BuildReport(env=env, action="cached")
                    return env
                staging = staging_dir(envs, f"{spec.slug}-{key}")
                try:
                    self._build_into(staging, spec=spec, source=source, move=local is None)
                except (BuildFailed, ToolchainMissing, OSError) as exc:
                    log = staging / "build.log"
                    kept = envs / f"{spec.slug}-{key}.failed.log"
                    if log.exists():
                        shutil.copyfile(log, kept)
                    shutil.rmtree(staging, ignore_errors=True)
                    message = exc.one_line() if isinstance(exc, ToolchainMissing) else str(exc)
                    env = Environment(
                        spec=spec, path=target, key=key, ready=False,
                        error=f"Java environment for {spec.name} failed: {message} (log: {kept})",
                    )
                    self.last_report = BuildReport(env=env, action="failed")
                    return env
                if target.exists():
                    shutil.rmtree(target)
                staging.rename(target)
        env = Environment(spec=spec, path=target, key=key, ready=True)
        self.last_report = BuildReport(env=env, action="built")
        return env

    def _build_into(self, staging: Path, *, spec: ProjectSpec, source: Path, move: bool) -> None:
        """Compile the project at ``source`` into ``staging``; a fetched ``source`` is moved."""
        started = time.monotonic()
        log = staging / "build.log"
        origin = spec.resolved_source() + (f" at {spec.commit}" if spec.commit else "")
        log.write_text(f"building {spec.name} from {origin}\n", encoding="utf-8")
        project = staging / "src"
        if move:
            shutil.move(str(source), str(project))
        else:
            shutil.copytree(source, project, symlinks=True,
                            ignore=shutil.ignore_patterns(*SKIP_DIRS))
        if spec.edits:
            try:
                apply_edits(project, spec.edits)
            except EditFailed as exc:
                raise BuildFailed(f"the manifest's source edits do not fit: {exc}") from None
            with log.open("a", encoding="utf-8") as handle:
                handle.write(f"applied {len(spec.edits)} source edit(s) from the manifest\n")
        # The folder whose pom builds the project: the root, or a module in it.
        build = project / spec.build_dir if spec.build_dir else project
        maven = (build / "pom.xml").is_file()
        if maven and not spec.maven_modules:
            release_snapshot_parent(build, log=log)
        classes, test_classes = staging / "classes", staging / "test-classes"
        tests_left_out: list[str] = []
        compiler, java_source = "javac", ""
        java_release = spec.java_release
        if spec.maven_modules:
            if not maven:
                raise BuildFailed(f"maven_modules given but {origin} has no pom.xml")
            main_roots, test_roots, dependencies = _maven_modules(
                spec, project, staging=staging, log=log)
            encoding = pom_source_encoding(project)
            python_codec(encoding)
            classes.mkdir()
            test_classes.mkdir()
            # As Maven's compiler plugin does by default: the processors on the classpath run
            # (Lombok writes the `log` fields and setters the project's code calls).
            processors = any(_has_processor(p) for p in dependencies if p.suffix == ".jar")
        else:
            main_roots, test_roots = _source_roots(spec, project, maven=maven)
            if not main_roots:
                raise BuildFailed(
                    f"no Java source root in {origin} (give source_roots in the projects "
                    "manifest)"
                )
            encoding = source_encoding(build, [*main_roots, *test_roots])
            if python_codec(encoding) == "utf-8":
                _as_java8_read(main_roots + test_roots, log=log)
            dependencies = []
            if maven:
                dependencies += _maven_classpath(build, staging=staging, log=log)
                main_roots += _generated_sources(build, log=log)
            dependencies += _jars(spec, project)
            dependencies += [build / r for r in RESOURCE_ROOTS if (build / r).is_dir()]
            processors = any(_has_processor(p) for p in dependencies if p.suffix == ".jar")
            python_codec(encoding)  # an unknown charset fails the build here, with its name
            options = ["--release", spec.java_release] if spec.java_release else []
            options += ["-encoding", encoding]
            if spec.compile_per_file:
                classes.mkdir()
                test_classes.mkdir()
                with log.open("a", encoding="utf-8") as handle:
                    handle.write("compile_per_file: nothing compiled ahead; each sample "
                                 "compiles its own file\n")
            else:
                try:
                    _javac(main_roots, out=classes, classpath=dependencies,
                           processors=processors, log=log, step="compiling the project",
                           options=options)
                except BuildFailed as failed:
                    printed = log.read_text(encoding="utf-8", errors="replace")
                    older = OLDER_RELEASE.get(spec.java_release, "")
                    if OLD_KEYWORD in printed.rsplit("$ ", 1)[-1]:
                        # Sources of Java 1.4 or older (an identifier `enum`), below what Java
                        # 17's javac accepts: Eclipse's compiler at 1.4 compliance, for the
                        # tests and every sample too.
                        compiler, java_source = "ecj", ECJ_SOURCE
                        try:
                            options = [*ecj_options(ECJ_SOURCE, spec.java_release),
                                       "-encoding", encoding]
                        except ToolchainMissing as missing:
                            raise BuildFailed(missing.one_line()) from None
                        with log.open("a", encoding="utf-8") as handle:
                            handle.write(f"sources older than Java 5: compiling with Eclipse's "
                                         f"compiler at {ECJ_SOURCE} compliance\n")
                        shutil.rmtree(classes, ignore_errors=True)
                        _javac(main_roots, out=classes, classpath=dependencies,
                               processors=processors, log=log,
                               step="compiling the project (ecj)", options=options,
                               compiler=compiler)
                    elif older:
                        # Java 8's type inference rejects some generic code that Java 5 to 7
                        # accepted (a raw Comparator in a conditional, as in Commons
                        # Collections 4.0), which the project's own older level compiled.
                        # javac's --release 7 keeps the old inference; the tests and every
                        # sample compile at it too. When it fails as well, the first error is
                        # the one reported.
                        options = ["--release", older, "-Xlint:-options", "-encoding", encoding]
                        with log.open("a", encoding="utf-8") as handle:
                            handle.write(f"--release {spec.java_release} rejects the sources: "
                                         f"compiling at --release {older}\n")
                        shutil.rmtree(classes, ignore_errors=True)
                        try:
                            _javac(main_roots, out=classes, classpath=dependencies,
                                   processors=processors, log=log,
                                   step=f"compiling the project (--release {older})",
                                   options=options)
                        except BuildFailed:
                            raise failed from None
                        java_release = older
                    else:
                        raise
                if maven:
                    _run_exec_steps(build, classes=classes, log=log)
                # A test file that does not compile here (a benchmark needing a profile's
                # dependency, an API gone from Java 17) is left out, listed in env.json,
                # rather than losing the whole suite: its tests do not run.
                tests_left_out = _javac(
                    test_roots, out=test_classes, classpath=[classes, *dependencies],
                    processors=processors, log=log, step="compiling the project's tests",
                    options=options, leave_out=bool(spec.test_roots), compiler=compiler)
                if compiler == "ecj" and tests_left_out:
                    tests_left_out = _tests_at_java5(
                        tests_left_out, test_classes=test_classes,
                        classpath=[classes, *dependencies], processors=processors, log=log,
                        encoding=encoding, release=spec.java_release)
            if spec.test_roots:
                # Files beside the sources (an old layout's .properties, test data) are on
                # the classpath after the compiled classes, where the project's own build
                # copies them (not on javac's: it would compile sources it finds there).
                dependencies += [r for r in (*main_roots, *test_roots) if r not in dependencies]
        info = {
            "name": spec.name,
            "project_root": str(project.relative_to(staging)),
            "build_dir": spec.build_dir,
            "main_roots": [str(r.relative_to(staging)) for r in main_roots],
            "test_roots": [str(r.relative_to(staging)) for r in test_roots],
            "dependencies": [_relative_or_absolute(p, staging) for p in dependencies],
            "processors": processors,
            "maven": maven,
            "jdk": find_jdk().version,
            "java_release": java_release,
            **({"compiler": compiler, "java_source": java_source} if compiler != "javac"
               else {}),
            "maven_modules": list(spec.maven_modules),
            "compile_per_file": spec.compile_per_file,
            "encoding": encoding,
            "build_seconds": round(time.monotonic() - started, 2),
            **({"tests_left_out": [_relative_or_absolute(Path(f), staging)
                                   for f in tests_left_out]} if tests_left_out else {}),
        }
        (staging / "env.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")

    def check(self, env: Environment) -> str | None:
        if not env.ready:
            return env.error or "not built"
        if not (env.path / "env.json").is_file():
            return f"{env.path}: env.json missing (rebuild with `codereval env build --force`)"
        try:
            info = load_env_info(env.path)
        except (OSError, ValueError, KeyError) as exc:
            return f"{env.path}: env.json unreadable ({exc})"
        missing = [p for p in (info.classes, *info.dependencies) if not p.exists()]
        if missing:
            return f"{env.path}: missing {missing[0]} (dependencies moved? rebuild with --force)"
        return None


def load_env_info(path: Path) -> JavaEnvInfo:
    data: dict[str, Any] = json.loads((path / "env.json").read_text(encoding="utf-8"))

    def here(entry: str) -> Path:
        candidate = Path(entry)
        return candidate if candidate.is_absolute() else path / candidate

    return JavaEnvInfo(
        root=path,
        project_root=here(data["project_root"]),
        build_dir=str(data.get("build_dir", "") or ""),
        main_roots=tuple(here(r) for r in data["main_roots"]),
        test_roots=tuple(here(r) for r in data["test_roots"]),
        classes=path / "classes",
        test_classes=path / "test-classes",
        dependencies=tuple(here(d) for d in data["dependencies"]),
        processors=bool(data.get("processors", False)),
        java_release=str(data.get("java_release", "") or ""),
        compile_per_file=bool(data.get("compile_per_file", False)),
        encoding=str(data.get("encoding", "") or "UTF-8"),
        compiler=str(data.get("compiler", "") or "javac"),
        java_source=str(data.get("java_source", "") or ""),
    )


def _relative_or_absolute(path: Path, staging: Path) -> str:
    try:
        return str(path.relative_to(staging))
    except ValueError:
        return str(path)


def _source_roots(
    spec: ProjectSpec, project: Path, *, maven: bool
) -> tuple[list[Path], list[Path]]:
    if spec.source_roots:
        main = [project / r for r in spec.source_roots]
        missing = [str(r) for r in main if not r.is_dir()]
        if missing:
            raise BuildFailed(f"source root(s) not found: {', '.join(missing)}")
    elif maven or (project / MAVEN_MAIN_ROOTS[0]).is_dir():
        main = [project / r for r in MAVEN_MAIN_ROOTS if (project / r).is_dir()]
    elif (project / "src").is_dir():
        main = [project / "src"]
    else:
        main = [project]
    if spec.test_roots:
        tests = [project / r for r in spec.test_roots]
        missing = [str(r) for r in tests if not r.is_dir()]
        if missing:
            raise BuildFailed(f"test root(s) not found: {', '.join(missing)}")
        return main, tests
    tests = [project / r for r in MAVEN_TEST_ROOTS if (project / r).is_dir() and
             project / r not in main]
    return main, tests


def _maven(argv: list[str], *, cwd: Path, log: Path, step: str) -> None:
    """Run Maven offline first (a local repository that already has everything needs no
    network), then, if that fails, with the network."""
    try:
        _run([argv[0], "-o", *argv[1:]], cwd=cwd, log=log, step=f"{step}, offline",
             timeout=MAVEN_TIMEOUT)
    except BuildFailed:
        _run(argv, cwd=cwd, log=log, step=step, timeout=MAVEN_TIMEOUT)


_PARENT = re.compile(rb"<parent>(.*?)</parent>", re.S)
_RELATIVE_PATH = re.compile(rb"<relativePath>\s*([^<]*?)\s*</relativePath>")
_SNAPSHOT_VERSION = re.compile(rb"<version>\s*([^<\s]+)-SNAPSHOT\s*</version>")


def release_snapshot_parent(build: Path, *, log: Path) -> None:
    """A pom whose parent is a snapshot no checkout holds (Commons Lang's
    ``commons-parent:28-SNAPSHOT`` between two releases) builds against the parent's release:
    snapshots live in repositories only while they are developed, and Maven Central serves
    none. The change is made in the environment's copy and written to the build log."""
    pom = build / "pom.xml"
    data = pom.read_bytes()
    parent = _PARENT.search(data)
    if parent is None:
        return
    block = parent.group(1)
    relative = _RELATIVE_PATH.search(block)
    if relative is None or relative.group(1):
        # The parent Maven looks for in the tree first (``../pom.xml`` unless told otherwise):
        # a parent there is built from the checkout, snapshot or not.
        local = build / (relative.group(1).decode() if relative else "..")
        if (local / "pom.xml").is_file() or (local.suffix == ".xml" and local.is_file()):
            return
    version = _SNAPSHOT_VERSION.search(block)
    if version is None:
        return
    start = parent.start(1) + version.end(1)
    pom.write_bytes(data[:start] + data[start + len(b"-SNAPSHOT"):])
    released = version.group(1).decode()
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"the parent pom {released}-SNAPSHOT is a snapshot no registry serves: "
                     f"built against its release {released}\n")


# The phases up to compiling the classes: a program a pom runs then makes files the build's
# classes come with (Joda-Time compiles its time-zone database into them).
EXEC_PHASES = frozenset({"generate-resources", "process-resources", "compile",
                         "process-classes"})


# The plugins whose goals run a program at those phases, by artifact: the goal, and its prefix
# on Maven's command line. Older Joda-Time poms compile the time-zone database with an Ant
# `<java>` task (antrun:run) where later ones use exec:java.
BUILD_PROGRAMS = {"exec-maven-plugin": ("java", "exec"), "maven-antrun-plugin": ("run", "antrun")}


def _exec_steps(build: Path) -> list[str]:
    """The Maven goals (``exec:java@id``, ``antrun:run@id``) of the pom's executions that run
    a program at those phases."""
    try:
        root = ElementTree.parse(build / "pom.xml").getroot()
    except (OSError, ElementTree.ParseError):
        return []

    def local(element: ElementTree.Element) -> str:
        return element.tag.rsplit("}", 1)[-1] if isinstance(element.tag, str) else ""

    def child(element: ElementTree.Element, name: str) -> ElementTree.Element | None:
        return next((c for c in element if local(c) == name), None)

    steps: list[str] = []
    build_element = child(root, "build")
    plugins = child(build_element, "plugins") if build_element is not None else None
    for plugin in plugins if plugins is not None else []:
        artifact = child(plugin, "artifactId")
        executions = child(plugin, "executions")
        program = BUILD_PROGRAMS.get((artifact.text or "").strip() if artifact is not None
                                     else "")
        if program is None or executions is None:
            continue
        goal, prefix = program
        for execution in executions:
            phase = child(execution, "phase")
            goals = child(execution, "goals")
            named = [(g.text or "").strip() for g in goals] if goals is not None else []
            if phase is None or (phase.text or "").strip() not in EXEC_PHASES \
                    or goal not in named:
                continue
            ident = child(execution, "id")
            steps.append(f"{prefix}:{goal}@"
                         f"{(ident.text or '').strip() if ident is not None else 'default'}")
    return steps


def _steps_key(steps: list[str]) -> str:
    """What an environment's key says of the pom's steps: exec:java steps by their id alone,
    as keys said before antrun's steps were run, so that those environments stay valid."""
    return ",".join(s.removeprefix("exec:java@") for s in steps)


def _run_exec_steps(build: Path, *, classes: Path, log: Path) -> None:
    """Run the pom's program steps (``_exec_steps``) as Maven would after compiling: the
    program runs from the compiled classes and writes into them, Maven's output folder being
    our classes folder for the while."""
    steps = _exec_steps(build)
    if not steps:
        return
    output = build / "target" / "classes"
    if output.exists() or output.is_symlink():
        raise BuildFailed(f"{output} exists: cannot run the pom's exec steps into the classes")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.symlink_to(classes, target_is_directory=True)
    try:
        for step in steps:
            _maven([str(find_maven()), "-B", "-q", f"-Dmaven.repo.local={maven_repository()}",
                    step], cwd=build, log=log,
                   step=f"running the pom's step {step!r} (mvn {step})")
    finally:
        output.unlink()


def dependency_profiles(pom: Path) -> list[str]:
    """The pom's profiles that add dependencies (Commons CSV's ``benchmark``, whose libraries
    some of its tests import): their dependencies join the classpath, as in a build that
    compiles every test (Defects4J's)."""
    try:
        root = ElementTree.parse(pom).getroot()
    except (OSError, ElementTree.ParseError):
        return []
    found = []
    for element in root.iter():
        if element.tag.rsplit("}", 1)[-1] != "profile":
            continue
        children = {c.tag.rsplit("}", 1)[-1]: c for c in element}
        if "dependencies" in children and "id" in children and (children["id"].text or ""):
            found.append((children["id"].text or "").strip())
    return found


def _maven_classpath(project: Path, *, staging: Path, log: Path) -> list[Path]:
    output = staging / "maven-classpath.txt"
    base = [str(find_maven()), "-B", "-q", f"-Dmaven.repo.local={maven_repository()}",
            "dependency:build-classpath", f"-Dmdep.outputFile={output}",
            "-Dmdep.includeScope=test"]
    profiles = dependency_profiles(project / "pom.xml")
    attempts = ([[f"-P{','.join(profiles)}"]] if profiles else []) + [[]]
    for number, extra in enumerate(attempts):
        try:
            _maven([*base, *extra], cwd=project, log=log,
                   step="resolving the Maven classpath (mvn dependency:build-classpath)")
            break
        except BuildFailed:
            # A profile whose dependencies cannot be had: the classpath without it.
            if number == len(attempts) - 1:
                raise
    text = output.read_text(encoding="utf-8").strip() if output.exists() else ""
    return [Path(entry) for entry in text.split(os.pathsep) if entry]


MAVEN_SKIPS = ("-DskipTests", "-Dmaven.test.skip=true", "-Dmaven.javadoc.skip=true",
               "-Dcheckstyle.skip", "-Drat.skip", "-Dlicense.skip", "-Denforcer.skip",
               "-Dgpg.skip", "-Dspotless.check.skip=true")
MODULE_CLASSPATH = "codereval-classpath.txt"


def _maven_modules(
    spec: ProjectSpec, project: Path, *, staging: Path, log: Path
) -> tuple[list[Path], list[Path], list[Path]]:
    """A multi-module project: Maven compiles the modules (and what they need, ``-am``) and
    writes each module's classpath; the environment is their classes and classpaths.

    Returns (main roots, test roots, classpath): the modules' own classes first, then every
    dependency (jars, and the classes of the sibling modules they use) once, in order.
    """
    missing = [m for m in spec.maven_modules if not (project / m / "pom.xml").is_file()]
    if missing:
        raise BuildFailed(f"Maven module(s) not found: {', '.join(missing)}")
    base = [str(find_maven()), "-B", "-q", f"-Dmaven.repo.local={maven_repository()}",
            *MAVEN_SKIPS, *spec.maven_args, "-pl", ",".join(spec.maven_modules), "-am",
            "compile", "dependency:build-classpath", f"-Dmdep.outputFile={MODULE_CLASSPATH}",
            "-Dmdep.includeScope=test"]
    _maven(base, cwd=project, log=log, step="compiling the Maven modules (mvn compile)")
    modules = [project / m for m in spec.maven_modules]
    entries: list[Path] = [m / "target" / "classes" for m in modules]
    for module in modules:
        listed = module / MODULE_CLASSPATH
        if not listed.is_file():
            raise BuildFailed(f"Maven wrote no classpath for {module.relative_to(project)}")
        text = listed.read_text(encoding="utf-8").strip()
        entries += [Path(entry) for entry in text.split(os.pathsep) if entry]
    main_roots = [m / r for m in modules for r in MAVEN_MAIN_ROOTS if (m / r).is_dir()]
    test_roots = [m / r for m in modules for r in MAVEN_TEST_ROOTS if (m / r).is_dir()]
    return main_roots, test_roots, list(dict.fromkeys(entries))


_PACKAGE = re.compile(rb"^\s*package\s+([\w.]+)\s*;", re.M)


SOURCE_TEMPLATES = ("*.java.in", "*.java.template")


def _has_source_templates(project: Path) -> bool:
    main = project / "src" / "main"
    return main.is_dir() and any(
        next(main.rglob(pattern), None) is not None for pattern in SOURCE_TEMPLATES)


def _generated_sources(project: Path, *, log: Path) -> list[Path]:
    """Sources the project's build writes before compiling (Jackson's ``PackageVersion`` from a
    template): Maven runs its ``generate-sources`` phase, and each folder it filled is a root.

    Only for a pom that binds something to that phase, or a tree with source templates
    (``PackageVersion.java.in``, which a parent pom's plugin fills in: Jackson's later
    versions): everything else needs no Maven run."""
    pom = (project / "pom.xml").read_text(encoding="utf-8", errors="replace")
    if "generate-sources" not in pom and not _has_source_templates(project):
        return []
    base = [str(find_maven()), "-B", "-q", f"-Dmaven.repo.local={maven_repository()}",
            *MAVEN_SKIPS, "generate-sources"]
    _maven(base, cwd=project, log=log, step="generating sources (mvn generate-sources)")
    generated = project / "target" / "generated-sources"
    roots: list[Path] = []
    for path in sorted(generated.rglob("*.java")) if generated.is_dir() else []:
        found = _PACKAGE.search(path.read_bytes())
        depth = found.group(1).count(b".") + 1 if found else 0
        root = path.parents[depth]
        if root not in roots:
            roots.append(root)
    return roots


def _jars(spec: ProjectSpec, project: Path) -> list[Path]:
    found: list[Path] = []
    for pattern in spec.jars:
        matches = sorted(glob.glob(str(project / pattern)))
        if not matches:
            raise BuildFailed(f"jar {pattern!r} not found in the project")
        found += [Path(m) for m in matches]
    return found


def _has_processor(jar: Path) -> bool:
    try:
        with zipfile.ZipFile(jar) as archive:
            return "META-INF/services/javax.annotation.processing.Processor" in archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


_JAVAC_ERROR = re.compile(r"^(/.+?\.java):\d+: error:", re.M)
_ECJ_ERROR = re.compile(r"^\d+\. ERROR in (/.+?\.java) \(at line \d+\)", re.M)
# What javac says of Java 1.4 sources that name a package or variable `enum`.
OLD_KEYWORD = "'enum' is a keyword"
ECJ_SOURCE = "1.4"
# Where test files that 1.4 rejects are tried next (annotations, generics).
JAVA5_SOURCE = "1.5"
# The --release to retry at when a project's sources do not compile at the one asked for.
OLDER_RELEASE = {"8": "7"}


def ecj_options(source: str, release: str) -> list[str]:
    """Eclipse's compiler at ``source`` compliance against the Java API of ``release`` (8 by
    default, as javac's --release 8), not the running JDK's newer one."""
    api = release_api(release or "8")
    return ["-source", source, "-target", source, "-bootclasspath", str(api)]


def _tests_at_java5(
    files: list[str], *, test_classes: Path, classpath: list[Path], processors: bool,
    log: Path, encoding: str, release: str,
) -> list[str]:
    """The test files 1.4 compliance rejected, compiled at 1.5 against the rest (the classes
    join ``test_classes``); returns those still rejected.

    Defects4J compiles Commons Lang 2 at 1.5 with a JUnit 4 on the classpath, and its fixes to
    the tests rely on both (``@FixMethodOrder`` on a JUnit 3 test case); the suite runs with
    that newer JUnit here too (``newer_junit``)."""
    floor = newer_junit(classpath)
    try:
        options = [*ecj_options(JAVA5_SOURCE, release), "-encoding", encoding]
    except ToolchainMissing:
        return files
    out = test_classes.parent / f"{test_classes.name}-{JAVA5_SOURCE}"
    try:
        rejected = _javac([], only=files, out=out,
                          classpath=[test_classes, *floor, *classpath], processors=processors,
                          log=log, step=f"compiling the rejected tests at {JAVA5_SOURCE} (ecj)",
                          options=options, leave_out=True, compiler="ecj")
    except BuildFailed:
        shutil.rmtree(out, ignore_errors=True)
        return files
    shutil.copytree(out, test_classes, dirs_exist_ok=True)
    shutil.rmtree(out, ignore_errors=True)
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"compiled {len(files) - len(rejected)} test file(s) at "
                     f"{JAVA5_SOURCE} compliance\n")
    return rejected


# Rounds of leaving out the test files javac rejects (a base class left out takes its
# subclasses with it in the next round).
LEAVE_OUT_ROUNDS = 5


def _javac(
    roots: list[Path], *, out: Path, classpath: list[Path], processors: bool, log: Path,
    step: str, options: list[str] | None = None, leave_out: bool = False,
    compiler: str = "javac", only: Sequence[str] = (),
) -> list[str]:
    """Compile every source under ``roots`` (or the files ``only``), with javac or Eclipse's
    compiler; with ``leave_out``, files the compiler rejects are left out (and returned) until
    the rest compiles."""
    out.mkdir(parents=True, exist_ok=True)
    files = sorted(only) or sorted(str(p) for root in roots for p in root.rglob("*.java"))
    if not files:
        return []
    argfile = out.parent / f"{out.name}.sources"
    if compiler == "ecj":
        try:
            ecj = ensure_artifact(ECJ)
        except ArtifactUnavailable as exc:
            raise BuildFailed(f"{step}: {exc}") from None
        command = [str(find_jdk().java), *JAVA_LOCALE_FLAGS, "-jar", str(ecj)]
        errors = _ECJ_ERROR
    else:
        command = [str(find_jdk().javac), *(f"-J{flag}" for flag in JAVA_LOCALE_FLAGS)]
        errors = _JAVAC_ERROR
    argv = [*command,
            *([] if "-encoding" in (options or []) else ["-encoding", "UTF-8"]),
            "-g", "-nowarn", *(options or []), "-d", str(out)]
    if not processors:
        argv.append("-proc:none")
    if classpath:
        argv += ["-cp", os.pathsep.join(str(p) for p in classpath)]
    argv.append(f"@{argfile}")
    left_out: list[str] = []
    for round_ in range(LEAVE_OUT_ROUNDS + 1):
        argfile.write_text("\n".join(f'"{f}"' for f in files) + "\n", encoding="utf-8")
        try:
            _run(argv, cwd=out.parent, log=log, step=step, timeout=JAVAC_TIMEOUT)
            return left_out
        except BuildFailed:
            if not leave_out or round_ == LEAVE_OUT_ROUNDS:
                raise
            printed = log.read_text(encoding="utf-8", errors="replace").rsplit("$ ", 1)[-1]
            rejected = set(errors.findall(printed)) & set(files)
            if not rejected:
                raise
            files = [f for f in files if f not in rejected]
            left_out += sorted(rejected)
            with log.open("a", encoding="utf-8") as handle:
                handle.write(f"left out {len(rejected)} test file(s) javac rejects: "
                             f"{', '.join(sorted(rejected))}\n")
            if not files:
                raise
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)
    return left_out
