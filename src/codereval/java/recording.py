"""The Java parts of `codereval build java-tests`: the recorder agent and the replay library.

The recorder (``recorder/*.java``) is a Java agent on ByteBuddy that records the calls a test
suite makes to the tasks' methods as XStream XML; the replay library (``replay/Replay.java``)
is what a recorded test runs on. Both are compiled on first use, like the harness
(``codereval.java.build``), into ``<cache>/java-recorder/<hash of the sources, the jars and
javac>``; their Maven Central jars are pinned by SHA-256 and fetched once.

A test JVM that replays needs ``REPLAY_JVM_FLAGS``: XStream rebuilds objects field by field,
which Java 17 refuses on the JDK's own classes unless their packages are opened.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

from codereval.errors import ToolchainMissing
from codereval.java.artifacts import Artifact, ArtifactUnavailable, ensure_artifact
from codereval.java.build import JAVAC_FLAGS, _compile_part, _jar, _source_text, build_once
from codereval.java.toolchain import cache_home, find_jdk

BYTE_BUDDY = Artifact(group="net.bytebuddy", artifact="byte-buddy", version="1.18.17",
                      sha256="bb78cc9d290d13e27e86fe89fb171521516a33c9822a528c0f151bece5790276")
XSTREAM = Artifact(group="com.thoughtworks.xstream", artifact="xstream", version="1.4.21",
                   sha256="f56586f3de59ae2a49430acbc9f27942b8c5cebec9245c869fae7136733333ec")
MXPARSER = Artifact(group="io.github.x-stream", artifact="mxparser", version="1.2.2",
                    sha256="aeeee23a3303d811bca8790ea7f25b534314861c03cff36dafdcc2180969eb97")
XMLPULL = Artifact(group="xmlpull", artifact="xmlpull", version="1.1.3.1",
                   sha256="34e08ee62116071cbb69c0ed70d15a7a5b208d62798c59f2120bb8929324cb63")
XSTREAM_JARS = (XSTREAM, MXPARSER, XMLPULL)

# XStreams is in both: what the recorder writes, the replay reads with the same set-up.
RECORDER_SOURCES = ("recorder/Agent.java", "recorder/CallAdvice.java", "recorder/Generate.java",
                    "recorder/Recorder.java", "replay/XStreams.java")
REPLAY_SOURCES = ("replay/Replay.java", "replay/Structure.java", "replay/XStreams.java")
GENERATE_MAIN = "codereval.recorder.Generate"
# What a recorded test's source imports: the runner puts the replay library on its classpath.
REPLAY_PACKAGE = "codereval.replay"
# The java.base packages whose classes XStream rebuilds field by field (collections, numbers,
# dates, text, regular expressions, ...), opened to the test's unnamed module.
OPENED = ("java.lang", "java.lang.invoke", "java.lang.ref", "java.lang.reflect", "java.util",
          "java.util.concurrent", "java.util.concurrent.atomic", "java.util.concurrent.locks",
          "java.util.function", "java.util.regex", "java.util.stream", "java.util.zip",
          "java.util.jar", "java.text", "java.math", "java.net", "java.io", "java.nio",
          "java.nio.charset", "java.nio.file", "java.time", "java.time.chrono",
          "java.time.format", "java.time.temporal", "java.time.zone", "java.security",
          "javax.crypto", "sun.nio.ch", "sun.nio.cs", "sun.util.calendar", "jdk.internal.math")
REPLAY_JVM_FLAGS = tuple(f"--add-opens=java.base/{package}=ALL-UNNAMED" for package in OPENED)


@dataclass(frozen=True, kw_only=True)
class RecorderTools:
    """The built agent and replay library, and the jars each needs on the classpath."""

    agent_jar: Path
    replay_jar: Path
    byte_buddy: Path
    xstream: tuple[Path, ...]

    @property
    def recorder_classpath(self) -> tuple[Path, ...]:
        """Ahead of the project's own jars: a project's older ByteBuddy (Mockito's) cannot
        read Java 17's classes, this one can."""
        return (self.byte_buddy, *self.xstream)

    @property
    def generator_classpath(self) -> tuple[Path, ...]:
        """What Generate (``GENERATE_MAIN``) runs with, ahead of the project's classpath."""
        return (self.agent_jar, *self.xstream)

    @property
    def replay_classpath(self) -> tuple[Path, ...]:
        return (self.replay_jar, *self.xstream)


def ensure_recorder(*, root: Path | None = None) -> RecorderTools:
    """The recorder and replay library, fetching their jars and compiling them first if this
    source + JDK has not been built yet (raises ArtifactUnavailable without the jars)."""
    byte_buddy = ensure_artifact(BYTE_BUDDY)
    xstream = tuple(ensure_artifact(a) for a in XSTREAM_JARS)
    digest = hashlib.sha256(find_jdk().version.encode() + b"\0" + " ".join(JAVAC_FLAGS).encode())
    for artifact in (BYTE_BUDDY, *XSTREAM_JARS):
        digest.update(artifact.coordinates.encode() + b"\0")
    for relative in (*RECORDER_SOURCES, *REPLAY_SOURCES):
        digest.update(relative.encode() + b"\0" + _source_text(relative) + b"\0")
    key = digest.hexdigest()[:16]
    base = (root or cache_home()) / "java-recorder"
    target = base / key
    tools = RecorderTools(agent_jar=target / "recorder.jar", replay_jar=target / "replay.jar",
                          byte_buddy=byte_buddy, xstream=xstream)

    def make(staging: Path) -> None:
        _compile_part(staging, "recorder", RECORDER_SOURCES, classpath=(byte_buddy, *xstream))
        _compile_part(staging, "replay", REPLAY_SOURCES, classpath=xstream)
        _jar(staging / "recorder", staging / "recorder.jar",
             manifest="Premain-Class: codereval.recorder.Agent\n"
                      "Can-Redefine-Classes: true\nCan-Retransform-Classes: true")
        _jar(staging / "replay", staging / "replay.jar")

    build_once(base, key, make)
    return tools


def uses_replay(test_source: str) -> bool:
    """Is this test a recorded one (it runs on the replay library)?"""
    return f"{REPLAY_PACKAGE}." in test_source


def main() -> int:
    """``python -m codereval.java.recording`` (run by ``make`` setup): fetch and build now, so
    that recording and replaying need no network; say why not when Java is missing."""
    try:
        tools = ensure_recorder()
    except (ArtifactUnavailable, ToolchainMissing) as exc:
        print(f"codereval: the recorder is not built: {exc}", file=sys.stderr)
        return 0
    print(f"codereval: recorder and replay library ready in {tools.agent_jar.parent}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
