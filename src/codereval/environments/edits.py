"""Source edits a projects manifest asks for: the changes the original platform's copy of a
project had over its public history.

Some platform copies were edited by hand before the benchmark ran (a LeetCode file with its
imports added and its constructor renamed, so that it compiles at all). Without the same edits
every sample of such a task fails to compile here while it compiled there. Each edit replaces
one exact text, which must occur exactly once in its file, so an edit that no longer fits the
pinned source fails loudly instead of editing something else. Edits work on bytes: the project's
own encoding is left alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

EDIT_KEYS = {"file", "old", "new", "why"}


@dataclass(frozen=True)
class SourceEdit:
    """Replace ``old`` by ``new`` in ``file`` (relative to the project root); ``why`` is the
    evidence, kept for the reader and the prepare report."""

    file: str
    old: str
    new: str
    why: str = ""

    def recipe(self) -> dict[str, str]:
        return {"file": self.file, "old": self.old, "new": self.new}


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
        missing = {"file", "old", "new"} - set(entry)
        if unknown or missing:
            what = f"unknown keys {sorted(unknown)}" if unknown else f"no {sorted(missing)}"
            raise ValueError(f"edit {number} has {what} (keys: file, old, new, why)")
        if not all(isinstance(entry[k], str) for k in entry):
            raise ValueError(f"edit {number}: file, old, new and why must be strings")
        file = PurePosixPath(entry["file"])
        if file.is_absolute() or ".." in file.parts or not file.parts:
            raise ValueError(f"edit {number}: file {entry['file']!r} must be a path inside the "
                             "project")
        if not entry["old"]:
            raise ValueError(f"edit {number}: old must not be empty (it says where to edit)")
        edits.append(SourceEdit(file=str(file), old=entry["old"], new=entry["new"],
                                why=entry.get("why", "")))
    return tuple(edits)


def apply_edits(root: Path, edits: Sequence[SourceEdit]) -> None:
    """Apply ``edits`` in order to the tree at ``root``; EditFailed on the first that does not
    fit, naming it (the tree may then hold the edits before it: callers discard it)."""
    for number, edit in enumerate(edits, start=1):
        path = root / edit.file
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
