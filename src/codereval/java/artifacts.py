"""Single Maven Central artifacts the Java runner needs (the JUnit console launcher, JaCoCo).

Fetched once with ``mvn dependency:get`` into the local repository and used from there; a
file already in the repository is used without asking Maven (offline runs). An artifact pinned
with a SHA-256 is checked each time it is handed out, so a corrupted or substituted jar in the
local repository is refused rather than run.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from codereval.errors import ToolchainMissing
from codereval.java.toolchain import find_maven, maven_repository, tool_env


@dataclass(frozen=True, kw_only=True)
class Artifact:
    group: str
    artifact: str
    version: str
    # A classified jar (JaCoCo's agent is "runtime", its command line "nodeps").
    classifier: str = ""
    # The jar's SHA-256 as published on Maven Central ("" when not pinned).
    sha256: str = ""

    @property
    def coordinates(self) -> str:
        tail = f":jar:{self.classifier}" if self.classifier else ""
        return f"{self.group}:{self.artifact}:{self.version}{tail}"

    def path(self, repository: Path) -> Path:
        suffix = f"-{self.classifier}" if self.classifier else ""
        return (repository.joinpath(*self.group.split("."), self.artifact, self.version)
                / f"{self.artifact}-{self.version}{suffix}.jar")


# Bundles the JUnit Platform launcher with the Jupiter (JUnit 5) and Vintage (JUnit 4) engines.
JUNIT_CONSOLE = Artifact(group="org.junit.platform", artifact="junit-platform-console-standalone",
                         version="1.10.2")

# The JUnit Platform's vintage engine (in JUNIT_CONSOLE) runs JUnit 3 and 4 tests but refuses
# junit:junit older than 4.12, which projects of Defects4J's era depend on (commons-lang 3.1:
# 4.11). Their tests run against this one instead, first on the classpath: JUnit 4.13 runs 3.8
# and 4.x tests unchanged, and needs hamcrest-core 1.3.
JUNIT4 = Artifact(group="junit", artifact="junit", version="4.13.2",
                  sha256="8e495b634469d64fb8acfa3495a065cbacc8a0fff55ce1e31007be4c16dc57d3")
HAMCREST_CORE = Artifact(group="org.hamcrest", artifact="hamcrest-core", version="1.3",
                         sha256="66fdef91e9739348df7a096aa384a5685f4e875584cce89386a7a47251c4d8e9")
# Java 11 removed the Java EE modules that Java 8 carried; a project built for Java 8 may need
# javax.annotation (@PostConstruct, @Resource) at run time, which its build never declared.
JAVAX_ANNOTATION = Artifact(
    group="javax.annotation", artifact="javax.annotation-api", version="1.3.2",
    sha256="e04ba5195bcd555dc95650f7cc614d151e4bcd52d29a10b8aa2197f3ab89ab9b")
# Eclipse's compiler, for sources older than Java 5 (``package org.apache.commons.lang.enum``:
# Commons Lang 2): it still compiles at 1.4 compliance, below the --release 7 that Java 17's
# javac goes down to, and it runs on Java 17, against its class library.
ECJ = Artifact(group="org.eclipse.jdt", artifact="ecj", version="3.26.0",
               sha256="ac0ba5876eaf7ebb47749a0d1be179c51f194b9dd0b875d1c09e1b530f5a2db5")
_OLD_JUNIT = re.compile(r"junit-(\d+)\.(\d+)(?:\.\d+)?\.jar")


def needs_newer_junit(dependencies: Sequence[Path]) -> bool:
    """Whether the project's own junit:junit is older than the vintage engine accepts."""
    for jar in dependencies:
        found = _OLD_JUNIT.fullmatch(jar.name)
        if found and (int(found.group(1)), int(found.group(2))) < (4, 12):
            return True
    return False


def junit_floor(dependencies: Sequence[Path]) -> list[Path]:
    """What goes before a project's dependencies when its JUnit is too old (else nothing)."""
    if not needs_newer_junit(dependencies):
        return []
    return [ensure_artifact(JUNIT4), ensure_artifact(HAMCREST_CORE)]


def newer_junit(dependencies: Sequence[Path]) -> list[Path]:
    """JUnit 4.13 ahead of a project's junit:junit older than 4.12 (which the launcher's vintage
    engine refuses); nothing when it cannot be had, and the run says why."""
    try:
        return junit_floor(dependencies)
    except ArtifactUnavailable:
        return []


_fetch_lock = threading.Lock()


class ArtifactUnavailable(Exception):
    """The artifact is neither in the local repository nor downloadable."""


def ensure_artifact(artifact: Artifact) -> Path:
    repository = maven_repository()
    path = artifact.path(repository)
    if path.is_file():
        return _checked(artifact, path)
    with _fetch_lock:
        if path.is_file():
            return path
        try:
            mvn = find_maven()
        except ToolchainMissing as exc:
            raise ArtifactUnavailable(f"{artifact.coordinates}: {exc.one_line()}") from None
        argv = [str(mvn), "-B", "-q", f"-Dmaven.repo.local={repository}", "dependency:get",
                f"-Dartifact={artifact.coordinates}", "-Dtransitive=false"]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=600,
                                  env=tool_env(), check=False)
        except subprocess.TimeoutExpired:
            raise ArtifactUnavailable(f"{artifact.coordinates}: mvn timed out") from None
        if done.returncode != 0 or not path.is_file():
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-5:])
            raise ArtifactUnavailable(f"cannot fetch {artifact.coordinates} with Maven: {tail}")
    return _checked(artifact, path)


_verified: dict[Path, str] = {}


def _checked(artifact: Artifact, path: Path) -> Path:
    if not artifact.sha256:
        return path
    stamp = f"{path.stat().st_size}:{path.stat().st_mtime_ns}"
    if _verified.get(path) == stamp:
        return path
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != artifact.sha256:
        raise ArtifactUnavailable(
            f"{path} has SHA-256 {digest}, not the pinned {artifact.sha256} of "
            f"{artifact.coordinates}: delete it and it is fetched again")
    _verified[path] = stamp
    return path
