"""Build the Java parts of codereval (compiler service, test harness) from their shipped source.

``python -m codereval.java.build`` (run by ``make`` setup) also fetches the Maven Central jars
the runners need: the JUnit console launcher and JaCoCo's agent and command line.

They are compiled with the machine's javac on first use (and by ``make`` setup via
``python -m codereval.java.build``) into ``<cache>/java-tools/<hash of the sources + javac>``, so a
changed source or JDK gets a fresh build and concurrent processes never see a half-built one.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from codereval.errors import ToolchainMissing, UserError
from codereval.java.toolchain import JAVA_LOCALE_FLAGS, cache_home, find_jdk, tool_env

# Output directory name -> shipped source files (relative to this package).
PARTS: dict[str, tuple[str, ...]] = {
    "service": ("service/CompileServer.java",),
    "harness": ("harness/RunTest.java", "harness/Train.java"),
}
SERVICE_MAIN = "codereval.service.CompileServer"
HARNESS_MAIN = "codereval.harness.RunTest"
TRAIN_MAIN = "codereval.harness.Train"
JAR_TIME = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True, kw_only=True)
class JavaTools:
    """Where the built classes are: put a directory on -cp and run its main class."""

    service: Path
    harness: Path
    # The harness's classes as a jar: a class-data sharing archive can hold classes from jars
    # only (codereval.java.cds).
    harness_jar: Path
    key: str


def _source_text(relative: str) -> bytes:
    return resources.files("codereval.java").joinpath(relative).read_bytes()


# String concatenation compiled to StringBuilder calls, not invokedynamic: the harness's one
# concatenation (the marker line) would otherwise spin the JDK's method-handle classes in
# every test JVM, about 10 ms of its start (bench/java_jvm_start.py).
JAVAC_FLAGS = ("-nowarn", "--release", "11", "-XDstringConcat=inline")


def tools_key() -> str:
    digest = hashlib.sha256(find_jdk().version.encode() + b"\0" + " ".join(JAVAC_FLAGS).encode())
    for part in sorted(PARTS):
        for relative in PARTS[part]:
            digest.update(relative.encode() + b"\0" + _source_text(relative) + b"\0")
    return digest.hexdigest()[:16]


def ensure_built(*, root: Path | None = None) -> JavaTools:
    """The built tools, compiling them first if this source + JDK has not been built yet."""
    key = tools_key()
    base = (root or cache_home()) / "java-tools"
    target = base / key
    tools = JavaTools(service=target / "service", harness=target / "harness",
                      harness_jar=target / "harness.jar", key=key)

    def make(staging: Path) -> None:
        for part, files in PARTS.items():
            _compile_part(staging, part, files)
        _jar(staging / "harness", staging / "harness.jar")

    build_once(base, key, make)
    return tools


def build_once(base: Path, key: str, make: Callable[[Path], None]) -> None:
    """Make ``base/key`` once: ``make`` fills a staging folder beside it, which is renamed into
    place with an ``ok`` stamp, under a lock, so concurrent processes never see a half-built
    one and a finished one is never built again."""
    target = base / key
    if (target / "ok").exists():
        return
    base.mkdir(parents=True, exist_ok=True)
    with (base / f".{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / "ok").exists():
            return
        staging = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=base))
        try:
            make(staging)
            (staging / "ok").write_text(key + "\n", encoding="utf-8")
            if target.exists():
                shutil.rmtree(target)
            staging.rename(target)
        finally:
            if staging.exists():
                shutil.rmtree(staging)


def _compile_part(staging: Path, part: str, files: tuple[str, ...],
                  classpath: tuple[Path, ...] = ()) -> None:
    sources = staging / "src" / part
    for relative in files:
        path = sources / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_source_text(relative))
    javac = find_jdk().javac
    argv = [str(javac), *(f"-J{flag}" for flag in JAVA_LOCALE_FLAGS), "-encoding", "UTF-8",
            *JAVAC_FLAGS, "-d", str(staging / part)]
    if classpath:
        argv += ["-cp", os.pathsep.join(map(str, classpath))]
    argv += [str(sources / relative) for relative in files]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=tool_env(),
                          check=False)
    if done.returncode != 0:
        raise UserError(
            f"building codereval's Java {part} failed: {done.stderr.strip()[-400:]}",
            hint="check that javac works (javac -version)",
        )


def _jar(classes: Path, jar: Path, *, manifest: str = "") -> None:
    """Zip a folder of classes into a jar with fixed timestamps (the same bytes every build);
    ``manifest`` holds extra main attributes (``Name: value`` lines)."""
    with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as archive:
        extra = "".join(f"{line}\r\n" for line in manifest.splitlines() if line)
        archive.writestr(zipfile.ZipInfo("META-INF/MANIFEST.MF", JAR_TIME),
                         f"Manifest-Version: 1.0\r\n{extra}\r\n")
        for path in sorted(classes.rglob("*.class")):
            info = zipfile.ZipInfo(str(path.relative_to(classes)), JAR_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, path.read_bytes())


def main() -> int:
    """``python -m codereval.java.build``: build now (setup), or say why Java is skipped."""
    try:
        tools = ensure_built()
    except ToolchainMissing as exc:
        print(f"codereval: Java tools not built: {exc.one_line()}", file=sys.stderr)
        return 0
    except UserError as exc:
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return 2
    print(f"codereval: Java compiler service and harness ready in {tools.service.parent}")
    # The jars the runners start tests with, fetched now so that evaluating needs no network.
    from codereval.java.artifacts import (
        HAMCREST_CORE,
        JUNIT4,
        JUNIT_CONSOLE,
        ArtifactUnavailable,
        ensure_artifact,
    )
    from codereval.java.jacoco import JACOCO_AGENT, JACOCO_CLI

    for artifact in (JUNIT_CONSOLE, JUNIT4, HAMCREST_CORE, JACOCO_AGENT, JACOCO_CLI):
        try:
            path = ensure_artifact(artifact)
        except ArtifactUnavailable as exc:
            print(f"codereval: {artifact.coordinates} not fetched: {exc}", file=sys.stderr)
            continue
        print(f"codereval: {artifact.coordinates} ready ({path})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
