"""Source edits a projects manifest asks for: the changes the original platform's copy of a
project had over its public history.

Some platform copies were edited by hand before the benchmark ran (a LeetCode file with its
imports added and its constructor renamed, so that it compiles at all). Without the same edits
every sample of such a task fails to compile here while it compiled there. Each edit replaces
one exact text, which must occur exactly once in its file, so an edit that no longer fits the
pinned source fails loudly instead of editing something else. Edits work on bytes: the project's
own encoding is left alone.

An edit without ``old`` creates its file (which must not exist): with ``new`` as its content (a
file only the platform's copy had, rebuilt from public evidence: what the official test expects
to read from it), as a copy of another file of the project (``copy``: the platform's copy of
a fixture, placed where its tests read it), or as a zip archive holding the entries ``zip``
names, empty (an archive whose listing is all its test reads).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

EDIT_KEYS = {"file", "old", "new", "copy", "zip", "why"}


@dataclass(frozen=True)
class SourceEdit:
    """Replace ``old`` by ``new`` in ``file`` (relative to the project root), or, with no
    ``old``, create ``file`` holding ``new``; ``why`` is the evidence, kept for the reader and
    the prepare report."""

    file: str
    old: str
    new: str
    why: str = ""
    copy: str = ""  # with no old: create ``file`` as a copy of this file of the project
    # with no old: create ``file`` as a zip of these entries, empty ("dir/" for a folder)
    zip: tuple[str, ...] = ()

    @property
    def creates(self) -> bool:
        return not self.old

    def recipe(self) -> dict[str, Any]:
        return {"file": self.file, "old": self.old, "new": self.new,
                **({"copy": self.copy} if self.copy else {}),
                **({"zip": list(self.zip)} if self.zip else {})}


class EditFailed(ValueError):
    """An edit does not fit the source (file missing, text absent or not unique)."""


def parse_edits(value: Any) -> tuple[SourceEdit, ...]:
    """The manifest's ``edits`` (an array of tables); ValueError saying what is wrong."""
    if not isinstance(value, list):
        raise ValueError("edits must be an array of tables ([[projects.\"x\".edits]])")
    edits = []
    for number, entry in enumerate(value, start=1):
        if not isinstance(entry, dict):
            raise ValueError(f"edit {number} must be a table with file, old and new")
        unknown = set(entry) - EDIT_KEYS
        makes = [k for k in ("copy", "zip") if k in entry]
        missing = {"file"} - set(entry) if makes else {"file", "new"} - set(entry)
        if unknown or missing:
            what = f"unknown keys {sorted(unknown)}" if unknown else f"no {sorted(missing)}"
            raise ValueError(f"edit {number} has {what} (keys: file, old, new, copy, zip, why)")
        entry = dict(entry)
        entries = entry.pop("zip", None)
        if entries is not None and (not isinstance(entries, list) or not entries
                                    or not all(isinstance(e, str) and e for e in entries)):
            raise ValueError(f"edit {number}: zip must be a list of entry names")
        if not all(isinstance(entry[k], str) for k in entry):
            raise ValueError(f"edit {number}: file, old, new, copy and why must be strings")
        file, copy = _inside(entry["file"], number), ""
        if makes:
            if "old" in entry or "new" in entry or len(makes) > 1:
                raise ValueError(f"edit {number}: {makes[0]} creates a file; it takes no old, "
                                 "new, copy or zip besides")
            if "copy" in entry:
                copy = _inside(entry["copy"], number)
        if "old" in entry and not entry["old"]:
            raise ValueError(f"edit {number}: old must not be empty (it says where to edit; "
                             "leave it out to create the file)")
        edits.append(SourceEdit(file=file, old=entry.get("old", ""), new=entry.get("new", ""),
                                why=entry.get("why", ""), copy=copy,
                                zip=tuple(entries or ())))
    return tuple(edits)


def _inside(raw: str, number: int) -> str:
    path = PurePosixPath(raw)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise ValueError(f"edit {number}: {raw!r} must be a path inside the project")
    return str(path)


def apply_edits(root: Path, edits: Sequence[SourceEdit]) -> None:
    """Apply ``edits`` in order to the tree at ``root``; EditFailed on the first that does not
    fit, naming it (the tree may then hold the edits before it: callers discard it)."""
    for number, edit in enumerate(edits, start=1):
        path = root / edit.file
        # A symlinked folder of the project must not carry an edit outside it.
        if not path.parent.resolve().is_relative_to(root.resolve()):
            raise EditFailed(f"edit {number}: {edit.file} lies outside the source")
        if edit.creates:
            if path.exists() or path.is_symlink():
                raise EditFailed(f"edit {number}: {edit.file} is already in the source (an "
                                 "edit without old creates a file)")
            if edit.copy:
                source = root / edit.copy
                if not source.is_file() or not source.resolve().is_relative_to(root.resolve()):
                    raise EditFailed(f"edit {number}: {edit.copy} (to copy to {edit.file}) is "
                                     "not in the source")
                content = source.read_bytes()
            elif edit.zip:
                content = _empty_zip(edit.zip)
            else:
                content = edit.new.encode("utf-8")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
            continue
        if not path.is_file():
            raise EditFailed(f"edit {number}: {edit.file} is not in the source")
        data = path.read_bytes()
        old = edit.old.encode("utf-8")
        found = data.count(old)
        if found != 1:
            where = "not found" if found == 0 else f"found {found} times"
            raise EditFailed(f"edit {number} of {edit.file}: {edit.old.splitlines()[0]!r} "
                             f"{where}, expected once (fix the edit or the pinned commit)")
        path.write_bytes(data.replace(old, edit.new.encode("utf-8")))


def _empty_zip(entries: Sequence[str]) -> bytes:
    """A zip of ``entries`` in order, each empty, with fixed times: the same bytes every build."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name in entries:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o40755 if name.endswith("/") else 0o100644) << 16
            archive.writestr(info, b"")
    return buffer.getvalue()
