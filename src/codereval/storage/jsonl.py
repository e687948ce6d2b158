"""Reading and writing JSON and JSON Lines, with errors that name the file and line."""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from codereval.errors import UserError


def _open_text(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open("r", encoding="utf-8")


def require_file(path: Path, *, what: str = "file") -> Path:
    if not path.exists():
        raise UserError(f"{what} not found: {path}", hint="check the path")
    if path.is_dir():
        raise UserError(f"{what} is a directory, expected a file: {path}")
    return path


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line; a bad line is a UserError."""
    require_file(path)
    try:
        with _open_text(path) as handle:
            for lineno, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise UserError(
                        f"{path}:{lineno}: malformed JSON ({exc.msg} at column {exc.colno})",
                        hint="each line must be one JSON object",
                    ) from None
                if not isinstance(value, dict):
                    raise UserError(
                        f"{path}:{lineno}: expected a JSON object, got {type(value).__name__}"
                    )
                yield lineno, value
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text") from None
    except (OSError, EOFError) as exc:
        raise UserError(f"{path}: cannot read ({exc})") from None


def read_json_or_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Read a JSON document (object or list of objects) or JSON Lines, whichever the file is.

    Returns (line number or item index, object) pairs. ``{"RECORDS": [...]}`` is unwrapped.
    """
    require_file(path)
    try:
        with _open_text(path) as handle:
            text = handle.read()
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text") from None
    except (OSError, EOFError) as exc:
        raise UserError(f"{path}: cannot read ({exc})") from None
    if not text.strip():
        raise UserError(f"{path}: the file is empty", hint="expected JSON or JSON Lines records")
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg})") from None
        return _objects(path, doc)
    if stripped.startswith("{"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            doc = None  # not one document: JSON Lines
        if isinstance(doc, dict):
            if "RECORDS" in doc:
                return _objects(path, doc["RECORDS"])
            return [(1, doc)]
    return list(iter_jsonl(path))


def _objects(path: Path, doc: Any) -> list[tuple[int, dict[str, Any]]]:
    if not isinstance(doc, list):
        raise UserError(f"{path}: expected a list of records, got {type(doc).__name__}")
    out: list[tuple[int, dict[str, Any]]] = []
    for index, item in enumerate(doc, start=1):
        if not isinstance(item, dict):
            raise UserError(f"{path}: record {index} is {type(item).__name__}, expected object")
        out.append((index, item))
    return out


def atomic_write_text(path: Path, text: str) -> None:
    """Write a whole file or nothing: a reader never sees half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        # mkstemp creates 0600; give the file the mode a plain open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_jsonl(path: Path, rows: Iterable[str | dict[str, Any]]) -> None:
    lines = []
    for row in rows:
        lines.append(row if isinstance(row, str) else json.dumps(row, ensure_ascii=False))
    atomic_write_text(path, "".join(line + "\n" for line in lines))
