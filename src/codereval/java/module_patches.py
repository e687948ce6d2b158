"""Classes a classpath jar adds to a package of the JDK's own, as Java 8 loaded them.

Up to Java 8 a package was open: a jar on the classpath could add classes to one the JDK
ships, and they loaded as long as the JDK did not have a class of that name. Old XML parsers
did so: Xerces 2.4 (Defects4J's JxPath) carries DOM Level 3 drafts such as
``org.w3c.dom.ls.DocumentLS``, and its ``DocumentBuilderImpl`` needs them. From Java 9 on a
package belongs to one module, and the classpath's copies of its classes are never seen, so
every DOM test of such a project fails with ``NoClassDefFoundError`` on a JDK where they
passed on Java 8.

This module finds those classes (in the jars' classpath order, first one wins; classes the
JDK has are left alone, as Java 8 left them) and writes them, per module, into a jar that
``--patch-module <module>=<jar>`` adds to the module: what Java 8 loaded, and nothing that
shadows the JDK. The jars are made once per set of jars and kept in the cache. A JVM started
with ``--patch-module`` runs without class-data sharing (the JDK disables it).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from codereval.java.toolchain import cache_home, find_jdk

log = logging.getLogger(__name__)


@functools.cache
def _jdk_classes(modules: Path, jimage: Path) -> dict[str, tuple[str, frozenset[str]]]:
    """package path -> (its module, the class files the JDK has in it), from ``lib/modules``."""
    done = subprocess.run([str(jimage), "list", str(modules)], capture_output=True, text=True,
                          timeout=300, check=False)
    if done.returncode != 0:
        log.warning("jimage list %s failed (exit %s): classpath classes in the JDK's "
                    "packages stay hidden", modules, done.returncode)
        return {}
    module = ""
    found: dict[str, tuple[str, set[str]]] = {}
    for line in done.stdout.splitlines():
        if line.startswith("Module: "):
            module = line.split(None, 1)[1].strip()
            continue
        name = line.strip()
        if name.endswith(".class") and "/" in name and not name.startswith("META-INF/"):
            package = name.rsplit("/", 1)[0]
            found.setdefault(package, (module, set()))[1].add(name)
    return {package: (owner, frozenset(names)) for package, (owner, names) in found.items()}


def _runtime() -> tuple[Path, Path] | None:
    home = find_jdk().javac.resolve().parent.parent
    modules, jimage = home / "lib" / "modules", home / "bin" / "jimage"
    return (modules, jimage) if modules.is_file() and jimage.is_file() else None


def hidden_classes(jars: Sequence[Path]) -> dict[str, list[tuple[Path, str]]]:
    """module -> (jar, class file) of the classes ``jars`` add to the JDK's packages."""
    runtime = _runtime()
    if runtime is None:
        return {}
    jdk = _jdk_classes(*runtime)
    seen: set[str] = set()
    found: dict[str, list[tuple[Path, str]]] = {}
    for jar in jars:
        if jar.suffix != ".jar" or not jar.is_file():
            continue
        try:
            with zipfile.ZipFile(jar) as archive:
                names = archive.namelist()
        except (OSError, zipfile.BadZipFile):
            continue
        for name in names:
            if not name.endswith(".class") or "/" not in name or name in seen:
                continue
            owner = jdk.get(name.rsplit("/", 1)[0])
            if owner is not None and name not in owner[1] and not name.endswith(
                    "module-info.class"):
                seen.add(name)
                found.setdefault(owner[0], []).append((jar, name))
    return found


@functools.cache
def _patches(jars: tuple[Path, ...], key: str) -> dict[str, Path]:
    folder = cache_home() / "java-tools" / f"module-patches-{key}"
    index = folder / "patches.json"
    if index.is_file():
        listed: dict[str, str] = json.loads(index.read_text(encoding="utf-8"))
        return {module: folder / name for module, name in listed.items()}
    found = hidden_classes(jars)
    folder.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        names: dict[str, str] = {}
        for module, classes in sorted(found.items()):
            names[module] = f"{module}.jar"
            with zipfile.ZipFile(partial / names[module], "w", zipfile.ZIP_DEFLATED) as out:
                by_jar: dict[Path, list[str]] = {}
                for jar, name in classes:
                    by_jar.setdefault(jar, []).append(name)
                for jar, entries in by_jar.items():
                    with zipfile.ZipFile(jar) as source:
                        for name in entries:
                            out.writestr(name, source.read(name))
        (partial / "patches.json").write_text(json.dumps(names, indent=2) + "\n",
                                              encoding="utf-8")
        try:
            os.rename(partial, folder)
        except OSError:
            if not index.is_file():  # not another process's identical copy: a real failure
                raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    if found:
        log.info("classes of the JDK's packages from the classpath, patched into %s: %s",
                 ", ".join(sorted(found)), folder)
    return {module: folder / name for module, name in names.items()}


def module_patches(jars: Sequence[Path]) -> dict[str, Path]:
    """module -> the jar of classpath classes to patch into it (empty for most projects)."""
    wanted = tuple(jar for jar in jars if jar.suffix == ".jar" and jar.is_file())
    runtime = _runtime()
    if not wanted or runtime is None:
        return {}
    digest = hashlib.sha256()
    for path in (runtime[0], *wanted):
        stat = path.stat()
        digest.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return _patches(wanted, digest.hexdigest()[:16])


def patch_flags(patches: Mapping[str, Path]) -> tuple[str, ...]:
    return tuple(f"--patch-module={module}={jar}" for module, jar in sorted(patches.items()))
