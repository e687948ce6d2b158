"""The Java platform's API as an older release had it, for a compiler that has no ``--release``.

Java 17's javac compiles against Java 8's API with ``--release 8``, from the signatures the
JDK keeps in ``lib/ct.sym``. Eclipse's compiler at 1.4 compliance (the sources javac cannot
take, see ``codereval.environments.java``) would compile against the running JDK's own
classes instead, where Java 17 added what old code collides with (``java.util.Random``
implements ``RandomGenerator``, whose ``nextLong(long)`` a static method of Commons Lang 2's
``JVMRandom`` may not hide). This module writes the same ct.sym signatures of one release as a
jar of class files, which that compiler takes as its boot class path.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
from pathlib import Path

from codereval.errors import ToolchainMissing
from codereval.java.toolchain import cache_home, find_jdk


def _release_letter(release: str) -> str:
    """ct.sym names releases by one character: 7, 8, 9, then A for 10, B for 11 ..."""
    number = int(release.removeprefix("1.")) if release.startswith("1.") else int(release)
    return str(number) if number < 10 else chr(ord("A") + number - 10)


def release_api(release: str = "8") -> Path:
    """A jar of the Java platform's classes as of ``release`` (signatures only), made once
    from the running JDK's ct.sym and kept in the cache."""
    javac = find_jdk().javac.resolve()
    symbols = javac.parent.parent / "lib" / "ct.sym"
    if not symbols.is_file():
        raise ToolchainMissing(f"{symbols} not found: this JDK cannot give Java {release}'s API",
                               hint="use a full JDK (with lib/ct.sym), 9 or newer")
    letter = _release_letter(release)
    stat = symbols.stat()
    key = hashlib.sha256(f"{symbols}:{stat.st_size}:{stat.st_mtime_ns}:{letter}".encode())
    target = cache_home() / "java-tools" / f"java-api-{release}-{key.hexdigest()[:12]}.jar"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(handle)
    try:
        written: set[str] = set()
        with zipfile.ZipFile(symbols) as source, \
                zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as jar:
            for entry in source.infolist():
                # <releases>/<module>/<package path>/<Class>.sig, for the releases named.
                parts = entry.filename.split("/")
                if len(parts) < 3 or letter not in parts[0] or not parts[-1].endswith(".sig"):
                    continue
                name = "/".join(parts[2:]).removesuffix(".sig") + ".class"
                if name not in written:
                    written.add(name)
                    jar.writestr(name, source.read(entry))
        if not written:
            raise ToolchainMissing(f"{symbols} holds no Java {release} API",
                                   hint="use a JDK that compiles for that release")
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return target
