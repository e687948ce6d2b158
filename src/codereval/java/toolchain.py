"""Finding the JDK and Maven, and the cache directory Java tools are built into."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from codereval.errors import ToolchainMissing

JDK_HINT = (
    "install a JDK 11 or newer (e.g. apt-get install openjdk-17-jdk-headless) or set JAVA_HOME"
)
MAVEN_HINT = "install Maven (e.g. apt-get install maven)"


@dataclass(frozen=True, kw_only=True)
class Jdk:
    java: Path
    javac: Path
    version: str


def cache_home() -> Path:
    """$CODEREVAL_HOME or ~/.cache/codereval (the team's default cache root)."""
    configured = os.environ.get("CODEREVAL_HOME")
    return Path(configured) if configured else Path.home() / ".cache" / "codereval"


def maven_repository() -> Path:
    """Maven's local repository: shared with the user's own builds so downloads happen once."""
    configured = os.environ.get("CODEREVAL_MAVEN_REPO")
    return Path(configured) if configured else Path.home() / ".m2" / "repository"


def _tool(name: str) -> Path | None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / name
        if candidate.exists():
            return candidate
    found = shutil.which(name)
    return Path(found) if found else None


@cache
def find_jdk() -> Jdk:
    java, javac = _tool("java"), _tool("javac")
    if java is None or javac is None:
        raise ToolchainMissing(f"{'javac' if java else 'java'} not found", hint=JDK_HINT)
    try:
        done = subprocess.run(
            [str(javac), "-version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolchainMissing(f"javac does not run ({exc})", hint=JDK_HINT) from None
    version = (done.stdout + done.stderr).strip()
    if done.returncode != 0 or not version.startswith("javac"):
        raise ToolchainMissing(f"javac does not run ({version[:200]})", hint=JDK_HINT)
    return Jdk(java=java, javac=javac, version=version)


def find_maven() -> Path:
    mvn = _tool("mvn") or (Path(os.environ["MAVEN_HOME"]) / "bin" / "mvn"
                           if os.environ.get("MAVEN_HOME") else None)
    if mvn is None or not mvn.exists():
        raise ToolchainMissing("mvn not found", hint=MAVEN_HINT)
    return mvn


def missing_toolchain() -> str | None:
    """None when java and javac work, else a one-line fix."""
    try:
        find_jdk()
    except ToolchainMissing as exc:
        return exc.one_line()
    return None


# javac and the JVM print English messages whatever the machine's locale, so diagnostics compare.
JAVA_LOCALE_FLAGS = ("-Duser.language=en", "-Duser.country=US")


def tool_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAVA_TOOL_OPTIONS", "_JAVA"))}
    env["LC_ALL"] = "C.UTF-8"
    return env
