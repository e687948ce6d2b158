"""Sealed toolchain caches: built once, checked before a process uses them, set aside if broken.

A precompiled header, a directory of compiled Go packages or of Rust rlibs is an input of every
sample's compilation, so a cache damaged on the host (a truncated write, a disk full, someone's
edit) would turn correct samples into compile errors, or worse, into silently different
programs. The builder seals a finished cache with the SHA-256 of every file in it; a process
checks the seal once before its first sample and, when it does not hold, sets the directory aside
and builds it again. Samples never see a cache writable (it is mounted read-only), so the check
guards against the host, not against them.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from pathlib import Path

SEAL = "codereval-seal.json"
# Part of every sealed cache's key: caches from before sealing (or from another layout) live in
# other directories and are left alone for the processes still using them.
LAYOUT = "sealed-v2"


def _digest(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.is_file() and p.name != SEAL)


def seal(directory: Path) -> None:
    """Record what the finished cache holds; written last, so a cache without it is unfinished."""
    digests = {str(p.relative_to(directory)): _digest(p) for p in _files(directory)}
    temporary = directory / f".{SEAL}.{secrets.token_hex(4)}"
    temporary.write_text(json.dumps({"files": digests}, indent=0, sort_keys=True),
                         encoding="utf-8")
    temporary.rename(directory / SEAL)


def intact(directory: Path) -> bool:
    """The cache is there and holds exactly what its seal says."""
    try:
        recorded = json.loads((directory / SEAL).read_text(encoding="utf-8"))["files"]
        found = {str(p.relative_to(directory)): p for p in _files(directory)}
        return (isinstance(recorded, dict) and set(recorded) == set(found)
                and all(_digest(found[name]) == recorded[name] for name in recorded))
    except (OSError, ValueError, KeyError, TypeError):
        return False


def set_aside(directory: Path) -> None:
    """Move a broken cache out of the way (atomically, so a concurrent builder can publish a new
    one under the same name), then delete it."""
    # Checked again: another process may have replaced the broken cache with a good one since
    # this one looked (the window left is the rename itself).
    if not directory.exists() or intact(directory):
        return
    aside = directory.with_name(f"{directory.name}.broken-{os.getpid()}-{secrets.token_hex(3)}")
    try:
        directory.rename(aside)
    except OSError:
        return
    shutil.rmtree(aside, ignore_errors=True)


__all__ = ["LAYOUT", "SEAL", "intact", "seal", "set_aside"]
