"""Bytecode of an environment's sealed source, compiled once and linked into workspaces.

Samples run with ``PYTHONDONTWRITEBYTECODE`` in workspaces made afresh (or kept) from the
sealed source, which has no ``__pycache__``: so every sample compiled each project module its
test imported, from source, again. On the real CoderEval projects that was a large part of a
sample's CPU (neo4j-python-driver: importing the package takes 0.19 s from source, 0.13 s with
bytecode). The original platform ran its tests in the live tree, where Python wrote bytecode
beside the sources after the first run; this gives every sample that bytecode from the start.

Why the bytecode can never be stale: it is compiled *checked-hash* (PEP 552), so the
interpreter that imports a module reads the source, hashes it and uses the bytecode only when
the hash is the one compiled from; the file a sample changes (or one a test writes) is compiled
from its source, as before. It is compiled by the environment's own interpreter (the magic
number and cache tag are that interpreter's), needs Python 3.7 or newer, and is sealed like the
source (read-only, owned by nobody) because it is hard-linked into workspaces: a sample can
neither write nor chmod it, only unlink its own links, which a kept workspace's check sees.

Layout, beside the environments: ``<root>/bytecode/<environment folder>/``,
mirroring the source's folders, each with its ``__pycache__/<module>.<tag>.pyc``, and a
``bytecode.json`` (tag, modules compiled, seconds) written last.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import subprocess
import threading
import time
from pathlib import Path

from codereval.environments.base import Environment
from codereval.workspace.views import SKIP_DIRS, remove_tree, seal

log = logging.getLogger(__name__)

FOLDER = "bytecode"
RECORD = "bytecode.json"
_TIMEOUT = 600.0

# Run by the environment's interpreter: argv is the source, the output folder and the folders
# never walked. Prints the cache tag and how many modules compiled; exit 3 before Python 3.7.
_COMPILE = r"""
import os, py_compile, sys
if sys.version_info < (3, 7):
    sys.exit(3)
src, out, skip = sys.argv[1], sys.argv[2], set(sys.argv[3:])
tag = sys.implementation.cache_tag
mode = py_compile.PycInvalidationMode.CHECKED_HASH
count = 0
for dirpath, dirnames, filenames in os.walk(src):
    dirnames[:] = [d for d in dirnames if d not in skip]
    rel = os.path.relpath(dirpath, src)
    for name in filenames:
        if not name.endswith(".py"):
            continue
        cfile = os.path.join(out, rel, "__pycache__", name[:-3] + "." + tag + ".pyc")
        try:
            py_compile.compile(os.path.join(dirpath, name), cfile=cfile, doraise=True,
                               invalidation_mode=mode)
            count += 1
        except Exception:
            pass  # what does not compile here is compiled (and fails) as a sample imports it
print(tag, count)
"""

_lock = threading.Lock()


def bytecode_folder(root: Path, env: Environment) -> Path:
    """Where ``env``'s bytecode lives below the cache ``root`` (named as the environment,
    whose key covers its source)."""
    return root / FOLDER / env.path.name


def compiled_bytecode(root: Path, env: Environment, python: Path) -> Path | None:
    """The sealed bytecode of ``env``'s source, compiled by ``python`` now unless already
    there; None where there can be none (Python before 3.7, not allowed to seal, the compile
    failed)."""
    folder = bytecode_folder(root, env)
    if (folder / RECORD).is_file():
        return folder
    if os.geteuid() != 0:
        return None  # only root can hand the bytecode to nobody (seal): none to compile
    with _lock:
        if (folder / RECORD).is_file():
            return folder
        return _compile(env.source_dir, folder, python)


def _compile(source: Path, folder: Path, python: Path) -> Path | None:
    started = time.monotonic()
    staging = folder.with_name(f".{folder.name}.{secrets.token_hex(4)}")
    try:
        staging.mkdir(parents=True)
        done = subprocess.run(
            [str(python), "-E", "-s", "-c", _COMPILE, str(source), str(staging),
             *sorted(SKIP_DIRS)],
            capture_output=True, text=True, timeout=_TIMEOUT, check=False,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"},
        )
        if done.returncode != 0:
            if done.returncode != 3:
                log.info("no bytecode for %s: %s", source, done.stderr.strip()[-500:])
            return None
        tag, count = done.stdout.split()
        record = {"tag": tag, "modules": int(count),
                  "seconds": round(time.monotonic() - started, 2)}
        (staging / RECORD).write_text(json.dumps(record) + "\n", encoding="utf-8")
        # Hard-linked into workspaces: only when a sample can neither write nor chmod it.
        if not seal(staging):
            return None
        try:
            os.rename(staging, folder)
        except OSError:
            if not (folder / RECORD).is_file():  # another process's, finished: use it
                raise
        log.info("bytecode of %s: %s modules in %.1f s", source, count, record["seconds"])
        return folder
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        log.info("no bytecode for %s: %s", source, exc)
        return None
    finally:
        if staging.exists():
            remove_tree(staging)
