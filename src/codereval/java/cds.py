"""Class-data sharing for test JVMs: an archive per Java environment, built once, read-only after.

A test JVM spends most of its start loading, parsing and verifying classes: the JUnit Platform
launcher alone is about 900 classes. A dynamic CDS archive (``-XX:ArchiveClassesAtExit``, JDK
13+) holds those classes already parsed and verified; a JVM started with
``-XX:SharedArchiveFile`` maps it instead (bench/java_executor.py measures the gain).

What the JVM demands, and what follows from it:

* only classes from jars are archived, and a non-empty folder may not be on the classpath when
  the archive is dumped; a JVM uses the archive only when its classpath starts with exactly the
  dump-time classpath (the same jars, same sizes and modification times). So the archive is
  dumped with the classpath's jars alone, and a sample's JVM starts with those jars first and the
  folders (the sample's classes, the project's classes and resources) after them, in their own
  order. That reorders the classpath, which changes nothing only when no folder holds a name a
  jar also holds; ``ClassPathPlan`` checks that (once per environment for its folders, per sample
  for the sample's classes) and keeps the original order, without the archive, where it fails.
* the archive is keyed by everything that makes a JVM refuse it (the JDK, the flags, each jar's
  path, size and modification time) and by what the training run loads, and stored beside the
  environment, named for it (``<env>.cds/<mode>-<key>.jsa``: the environment's own folder stays
  as it was built), and mounted read-only for samples: a changed classpath or JDK gets a new
  archive, a second run reuses the first one's.
* the training run (``codereval.harness.Train``) runs in the sandbox, as samples do. It loads,
  without initialising, the classes of every jar up to ``MAX_TRAINING_CLASSES``, and in JUnit
  mode runs our own training tests through the harness's JUnit path. Then a second JVM must start
  with the archive under ``-Xshare:on`` (which refuses to start when the archive cannot be
  mapped) in the same sandbox, or the archive is not used. Each process checks a found archive
  the same way once before its samples use it, and builds it again if the check fails.

When anything fails the test JVM starts as before, without the archive; the reason is logged
(``codereval.java.cds``) and each outcome's ``provenance.jvm`` says how its JVM started. Should
the JVM itself decline an archive we checked (a jar touched during the run), it starts without it
and says so on stderr (``-Xlog:cds*=warning:stderr``, never on the stdout tests are judged by).
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import threading
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from codereval.java.build import TRAIN_MAIN
from codereval.java.toolchain import JAVA_LOCALE_FLAGS, find_jdk, tool_env
from codereval.sandbox.base import ExecRequest, Limits, Mount, Sandbox

log = logging.getLogger("codereval.java.cds")

# Part of every archive's key: bump it when what a training run loads changes.
ARCHIVE_FORMAT = "cds/1"
# Classes loaded from the classpath's jars in training, in classpath order. The largest CoderEval
# environment's jars hold 77,000 classes; loading all would make a 200 MB archive of mostly
# unused classes. The JUnit launcher and the first dependencies fit well within this.
MAX_TRAINING_CLASSES = 20_000
TRAINING_SOURCES = ("harness/training/JupiterTraining.java",
                    "harness/training/VintageTraining.java")
TRAINING_CLASSES = ("codereval.training.JupiterTraining", "codereval.training.VintageTraining")
TRAINING_LIMITS = Limits(wall_time=300.0, memory_mb=4096, processes=256, file_size_mb=2048,
                         address_space=False)
# Where a sample's JVM is pointed at the archive. -Xshare:auto: a JVM that cannot map it starts
# without it (same verdict, slower); its warning goes to stderr, not to the stdout tests print.
RUNTIME_FLAGS = ("-Xshare:auto", "-Xlog:cds*=off", "-Xlog:cds*=warning:stderr")
_MULTI_RELEASE = "META-INF/versions/"


@dataclass(frozen=True, kw_only=True)
class Archive:
    """A verified archive and the classpath prefix it was dumped with."""

    path: Path
    jars: tuple[Path, ...]
    # Every file name the jars hold (classes and resources, multi-release prefixes removed).
    names: frozenset[str]

    def flags(self) -> tuple[str, ...]:
        return (f"-XX:SharedArchiveFile={self.path}", *RUNTIME_FLAGS)


@dataclass(frozen=True, kw_only=True)
class ClassPathPlan:
    """How a test JVM's classpath is ordered: with the archive (jars first) or as given."""

    archive: Archive | None
    classpath: tuple[Path, ...]
    # Why the archive is not used ("" when it is).
    why_not: str = ""

    def flags(self) -> tuple[str, ...]:
        return self.archive.flags() if self.archive is not None else ()

    @property
    def jvm(self) -> str:
        """What ``provenance.jvm`` records: whether the archive was used, not which one (its
        name follows this machine's paths, and the same run on a Ray node says the same)."""
        return "cds" if self.archive else f"no cds: {self.why_not}"


def split_classpath(classpath: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """(the jars, everything else), each in classpath order."""
    jars = [p for p in classpath if p.suffix == ".jar" and p.is_file()]
    chosen = set(jars)
    return jars, [p for p in classpath if p not in chosen]


def jar_names(jars: Iterable[Path]) -> frozenset[str]:
    names: set[str] = set()
    for jar in jars:
        with zipfile.ZipFile(jar) as archive:
            for name in archive.namelist():
                if name.endswith("/"):
                    continue
                if name.startswith(_MULTI_RELEASE):
                    name = name[len(_MULTI_RELEASE):].partition("/")[2]
                names.add(name)
    return frozenset(names)


def folder_names(folders: Iterable[Path]) -> set[str]:
    names: set[str] = set()
    for folder in folders:
        if folder.is_dir():
            names.update(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                         if not p.is_dir())
    return names


def first_clash(names: frozenset[str], folders: Iterable[Path]) -> str | None:
    """A file name both a folder and a jar hold (moving jars first would change which is found)."""
    clashes = sorted(folder_names(folders) & names)
    return clashes[0] if clashes else None


def archive_key(*, jars: Sequence[Path], flags: Sequence[str], mode: str) -> str:
    jdk = find_jdk()
    digest = hashlib.sha256()
    for part in (ARCHIVE_FORMAT, jdk.version, os.path.realpath(jdk.java), mode,
                 str(MAX_TRAINING_CLASSES), *flags):
        digest.update(part.encode() + b"\0")
    for relative in TRAINING_SOURCES:
        digest.update(_training_source(relative) + b"\0")
    for jar in jars:
        stat = jar.stat()
        digest.update(f"{jar}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:20]


def archive_folder(env_root: Path) -> Path:
    """Where an environment's archives are: beside it, so the environment is never changed."""
    return env_root.with_name(env_root.name + ".cds")


def _training_source(relative: str) -> bytes:
    return resources.files("codereval.java").joinpath(relative).read_bytes()


class ArchiveFailed(Exception):
    """Building or checking an archive failed; the message says which step and why."""


class SharedArchives:
    """The archives of one runner: found or built once per (environment, mode), thread-safe.

    ``mode`` is the harness mode (``main`` or ``junit``): their classpaths differ (the JUnit
    launcher), so each has its own archive.
    """

    def __init__(self, *, flags: Sequence[str], sandbox: Sandbox) -> None:
        self.flags = tuple(flags)
        self.sandbox = sandbox
        self._lock = threading.Lock()
        self._known: dict[tuple[Path, str], Archive | str] = {}
        self._building: dict[tuple[Path, str], threading.Lock] = {}

    def plan(self, *, env_root: Path, mode: str, classpath: Sequence[Path],
             sample_folders: Sequence[Path]) -> ClassPathPlan:
        """The classpath and flags for one sample's JVM: as given, ``sample_folders`` first then
        the environment's ``classpath``; or with the archive, the jars first and then the same
        folders in the same order."""
        given = (*sample_folders, *classpath)
        archive = self.archive(env_root=env_root, mode=mode, classpath=classpath)
        if isinstance(archive, str):
            return ClassPathPlan(archive=None, classpath=given, why_not=archive)
        clash = first_clash(archive.names, sample_folders)
        if clash is not None:
            return ClassPathPlan(archive=None, classpath=given,
                                 why_not=f"the sample's classes and a jar both hold {clash}")
        jars, rest = split_classpath(given)
        return ClassPathPlan(archive=archive, classpath=(*jars, *rest))

    def archive(self, *, env_root: Path, mode: str, classpath: Sequence[Path]) -> Archive | str:
        """The environment's verified archive for this mode, or why there is none. The first
        call per (environment, mode) builds or finds it; the others wait for it."""
        slot = (env_root, mode)
        with self._lock:
            known = self._known.get(slot)
            if known is not None:
                return known
            building = self._building.setdefault(slot, threading.Lock())
        with building:
            with self._lock:
                known = self._known.get(slot)
            if known is not None:
                return known
            result: Archive | str
            try:
                result = self._find_or_build(env_root=env_root, mode=mode, classpath=classpath)
            except (ArchiveFailed, OSError, zipfile.BadZipFile, subprocess.SubprocessError) as exc:
                result = f"archive unusable: {exc}"
                log.warning("class-data sharing off for %s (%s): %s", env_root.name, mode, result)
            with self._lock:
                self._known[slot] = result
            return result

    def _find_or_build(self, *, env_root: Path, mode: str,
                       classpath: Sequence[Path]) -> Archive | str:
        jars, rest = split_classpath(classpath)
        if not jars:
            return "no jar on the classpath"
        names = jar_names(jars)
        clash = first_clash(names, [p for p in rest if p.is_dir()])
        if clash is not None:
            # Jars first would change which copy the JVM finds: keep the project's order.
            return f"a folder and a jar of the environment both hold {clash}"
        key = archive_key(jars=jars, flags=self.flags, mode=mode)
        folder = archive_folder(env_root)
        folder.mkdir(exist_ok=True)
        path = folder / f"{mode}-{key}.jsa"
        with (folder / f".{mode}-{key}.lock").open("w") as lock:
            # Two processes of the same environment: the second waits and reuses the first's.
            fcntl.flock(lock, fcntl.LOCK_EX)
            if path.is_file():
                try:
                    # Once per process: an archive a JVM cannot map (damaged, or written by a
                    # JVM that differs in a way the key misses) is built again.
                    self._check(path, jars=jars)
                    return Archive(path=path, jars=tuple(jars), names=names)
                except ArchiveFailed as exc:
                    log.warning("rebuilding %s: %s", path, exc)
                    path.unlink()
            self._build(path, jars=jars, mode=mode)
            log.info("built class-data sharing archive %s", path)
            for stale in folder.glob(f"{mode}-*.jsa"):
                if stale != path:
                    stale.unlink(missing_ok=True)
        return Archive(path=path, jars=tuple(jars), names=names)

    def _build(self, path: Path, *, jars: Sequence[Path], mode: str) -> None:
        staging = Path(tempfile.mkdtemp(prefix=".build-", dir=path.parent))
        try:
            training = staging / "training"
            tests = self._training_tests(training, jars=jars) if mode == "junit" else []
            dumped = staging / "archive.jsa"
            java = str(find_jdk().java)
            cp = os.pathsep.join(map(str, jars))
            train = [java, *JAVA_LOCALE_FLAGS, *self.flags, f"-XX:ArchiveClassesAtExit={dumped}",
                     "-cp", cp, TRAIN_MAIN, str(MAX_TRAINING_CLASSES)]
            if tests:
                train += [str(training), *tests]
            self._run(train, staging=staging, jars=jars, step="the training run")
            if not dumped.is_file():
                raise ArchiveFailed("the training run wrote no archive")
            self._check(dumped, jars=jars)
            dumped.chmod(0o444)
            dumped.rename(path)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _check(self, archive: Path, *, jars: Sequence[Path]) -> None:
        """A JVM must start with the archive mapped: -Xshare:on refuses to start otherwise."""
        check = [str(find_jdk().java), *JAVA_LOCALE_FLAGS, *self.flags,
                 f"-XX:SharedArchiveFile={archive}", "-Xshare:on",
                 "-cp", os.pathsep.join(map(str, jars)), TRAIN_MAIN, "0"]
        scratch = Path(tempfile.mkdtemp(prefix=".check-", dir=archive.parent))
        try:
            self._run(check, staging=scratch, jars=[*jars, archive],
                      step="starting a JVM with the archive (-Xshare:on)")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _training_tests(self, out: Path, *, jars: Sequence[Path]) -> list[str]:
        """Compile our JUnit training tests against the classpath (host javac: our own fixed
        sources); none when they do not compile here (no JUnit on this classpath)."""
        sources = out / "src"
        sources.mkdir(parents=True)
        files = []
        for relative in TRAINING_SOURCES:
            target = sources / Path(relative).name
            target.write_bytes(_training_source(relative))
            files.append(str(target))
        done = subprocess.run(
            [str(find_jdk().javac), *(f"-J{f}" for f in JAVA_LOCALE_FLAGS), "-nowarn",
             "-proc:none", "-d", str(out), "-cp", os.pathsep.join(map(str, jars)), *files],
            capture_output=True, text=True, timeout=300, env=tool_env(), check=False)
        if done.returncode != 0:
            log.info("CDS training without JUnit tests: %s", done.stderr.strip()[-300:])
            return []
        return list(TRAINING_CLASSES)

    def _run(self, argv: list[str], *, staging: Path, jars: Sequence[Path], step: str) -> None:
        mounts = tuple(Mount(source=j, target=j) for j in dict.fromkeys(jars)
                       if not j.is_relative_to(staging))
        result = self.sandbox.run(ExecRequest(
            argv=tuple(argv), cwd=staging, scratch=staging, mounts=mounts,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(staging),
                 "LC_ALL": "C.UTF-8"},
            stdin=b"", limits=TRAINING_LIMITS))
        printed = (result.stdout + result.stderr).decode("utf-8", "replace").strip()
        if result.sandbox_error:
            raise ArchiveFailed(f"{step}: sandbox: {result.sandbox_error}")
        if result.timed_out:
            raise ArchiveFailed(f"{step} took over {TRAINING_LIMITS.wall_time:.0f}s")
        if result.exit_code != 0 or "codereval-cds-training" not in printed:
            last = printed.splitlines()[-3:] if printed else ["no output"]
            raise ArchiveFailed(f"{step} failed (exit {result.exit_code}): {' | '.join(last)}")
