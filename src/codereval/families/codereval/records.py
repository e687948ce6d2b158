"""CoderEval records (Python and Java) to Tasks.

The public release is ``{"RECORDS": [...]}`` where every value is a string (line numbers too);
we also read a plain JSON list or JSON Lines of the same records. The two context fields are
pseudo-JSON: JSON on the outside, list literals inside strings (Python writes them as Python
literals, Java as unquoted items such as ``"[isEmpty, trim]"``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from codereval.errors import UserError
from codereval.model import (
    AllContext,
    Language,
    Level,
    Location,
    OracleContext,
    Task,
    TestKind,
    TestSpec,
)
from codereval.source import pyast
from codereval.storage.jsonl import read_json_or_jsonl

PYTHON_KEYS = (
    "_id", "name", "project", "file_path", "package", "docstring", "human_label", "code",
    "file_content", "lineno", "end_lineno", "level", "oracle_context", "all_context",
    "dependency", "test_name", "test_lineno",
)  # fmt: skip
JAVA_KEYS = (
    "_id", "all_context", "class_name", "code", "docstring", "end_lineno", "file_content",
    "file_name", "human_label", "level", "lineno", "name", "oracle_context", "package",
    "project",
)  # fmt: skip
# Keys without which a record cannot become a task; the rest default to empty.
REQUIRED_KEYS = ("_id", "name", "project", "code")
REQUIRED_BY_LANGUAGE = {Language.PYTHON: ("file_path",), Language.JAVA: ("file_name",)}

# Where a user with network access gets the official files (we never download them).
RECORDS_HINT = (
    "CoderEval4Python.json and CoderEval4Java.json are published in the CoderEval/CoderEval "
    "repository on GitHub; pass the downloaded file's path"
)

BENCHMARK_NAMES = {Language.PYTHON: "codereval-python", Language.JAVA: "codereval-java"}


def detect_language(record: dict[str, Any]) -> Language:
    """Java records name a file and a class; Python records carry a file path."""
    if "file_name" in record or "class_name" in record:
        return Language.JAVA
    return Language.PYTHON


def load_records(path: Path, *, language: Language | None = None) -> list[Task]:
    """Read CoderEval records from ``path`` (official form, JSON list, or JSON Lines)."""
    if not path.exists():
        raise UserError(f"records file not found: {path}", hint=RECORDS_HINT)
    rows = read_json_or_jsonl(path)
    if not rows:
        raise UserError(f"{path}: no records found", hint="expected CoderEval records")
    tasks: list[Task] = []
    seen: set[str] = set()
    for where, record in rows:
        task = record_to_task(record, language=language, origin=f"{path}: record {where}")
        if task.task_id in seen:
            raise UserError(f"{path}: duplicate task id {task.task_id}")
        seen.add(task.task_id)
        tasks.append(task)
    return tasks


def record_to_task(
    record: dict[str, Any], *, language: Language | None = None, origin: str = "record"
) -> Task:
    ident = str(record.get("_id", "")).strip()
    label = f"{origin} ({ident})" if ident else origin
    lang = language or detect_language(record)
    for key in (*REQUIRED_KEYS, *REQUIRED_BY_LANGUAGE[lang]):
        if key not in record:
            raise UserError(f"{label}: missing required key {key!r}")

    def text(key: str) -> str:
        value = record.get(key, "")
        return "" if value is None else str(value)

    def number(key: str) -> int:
        raw = text(key).strip()
        if not raw:
            return 0
        try:
            return int(raw)
        except ValueError:
            raise UserError(f"{label}: {key} must be a whole number, got {raw!r}") from None

    level = parse_level(text("level"), label=label)
    # An official result file's record (Raw_Input.jsonl_out.jsonl) holds the model's samples in
    # `code`, a list: it has no reference (`prepare` takes it from the official test).
    code = "" if isinstance(record.get("code"), list) else text("code")
    if lang is Language.JAVA:
        package = text("package")
        file_name = text("file_name")
        file_path = "/".join([*package.split("."), file_name]) if package else file_name
        class_name = text("class_name")
    else:
        file_path = text("file_path")
        class_name = ""
        package = text("package")
    location = Location(
        project=text("project"),
        file_path=file_path,
        lineno=number("lineno"),
        end_lineno=number("end_lineno"),
        class_name=class_name,
        package=package,
    )
    return Task(
        task_id=ident,
        benchmark=BENCHMARK_NAMES[lang],
        language=lang,
        name=text("name"),
        signature=extract_signature(code, language=lang),
        docstring=text("docstring"),
        human_label=text("human_label"),
        reference=code,
        level=level,
        oracle_context=parse_oracle_context(text("oracle_context")),
        all_context=parse_all_context(text("all_context")),
        location=location,
        file_content=text("file_content"),
        test=_test_spec(record, text, number, label=label),
    )


def parse_level(raw: str, *, label: str = "record") -> Level | None:
    raw = raw.strip()
    if not raw:
        return None
    try:
        return Level(raw)
    except ValueError:
        valid = ", ".join(level.value for level in Level)
        raise UserError(f"{label}: unknown level {raw!r}", hint=f"one of {valid}") from None


def _test_spec(record: dict[str, Any], text: Any, number: Any, *, label: str) -> TestSpec | None:
    kind_raw = text("test_kind").strip()
    if not kind_raw:
        return None
    try:
        kind = TestKind(kind_raw)
    except ValueError:
        valid = ", ".join(kind.value for kind in TestKind)
        raise UserError(
            f"{label}: unknown test_kind {kind_raw!r}", hint=f"one of {valid}"
        ) from None
    return TestSpec(
        kind=kind,
        path=text("test_path"),
        code=text("test_code"),
        name=text("test_name"),
        lineno=number("test_lineno"),
    )


def extract_signature(code: str, *, language: Language) -> str:
    """The declaration line(s) of the reference: up to the colon (Python) or the brace (Java)."""
    lines = code.splitlines()
    if language is Language.PYTHON:
        collected: list[str] = []
        for line in lines:
            stripped = line.strip()
            if not collected and (stripped.startswith("@") or not stripped):
                continue
            if not collected and not re.match(r"(async\s+)?def\s", stripped):
                continue
            collected.append(line)
            if _python_header_complete("\n".join(collected)):
                break
        return "\n".join(collected).strip()
    head = code.split("{", 1)[0]
    # Drop a leading Javadoc or annotations-only lines: the signature is the declaration.
    head = re.sub(r"/\*.*?\*/", "", head, flags=re.S)
    kept = [ln for ln in head.splitlines() if ln.strip() and not ln.strip().startswith("//")]
    return " ".join(" ".join(kept).split())


def _python_header_complete(header: str) -> bool:
    text = header.strip()
    if not text.endswith(":"):
        return False
    try:
        pyast.parse(text + "\n    pass\n")
    except SyntaxError:
        return False
    return True


# ----------------------------------------------------------------------------- context parsing

_PAIR = re.compile(r'"(?P<key>[A-Za-z_]+)"\s*:\s*"(?P<value>(?:[^"\\]|\\.)*)"', re.S)


def _context_pairs(raw: str) -> dict[str, str]:
    """The key/value strings of a pseudo-JSON context field."""
    raw = raw.strip()
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = None
    if isinstance(value, dict):
        return {str(k): "" if v is None else str(v) for k, v in value.items()}
    # Not valid JSON (stray quotes inside): take the "key" : "value" pairs we can see.
    return {m.group("key"): m.group("value") for m in _PAIR.finditer(raw)}


def parse_token_list(raw: str) -> tuple[str, ...]:
    """A list written as a Python literal (``"['a', 'b']"``), unquoted (``"[a, b]"``),
    separated by `` ; `` (all_context's file and class entries) or by spaces (imports)."""
    raw = raw.strip()
    if not raw:
        return ()
    if raw.startswith("[") and raw.endswith("]"):
        try:
            value = pyast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = None
        if isinstance(value, list | tuple):
            return tuple(str(item).strip() for item in value if str(item).strip())
        inner = raw[1:-1]
        return tuple(item.strip().strip("'\"") for item in inner.split(",") if item.strip())
    if ";" in raw:
        # all_context's file and class fields: "name ; func(a, b) ; " (entries hold spaces).
        return tuple(item.strip() for item in raw.split(";") if item.strip())
    return tuple(raw.split())


def parse_oracle_context(raw: str) -> OracleContext | None:
    pairs = _context_pairs(raw)
    if not pairs:
        return None
    return OracleContext(
        apis=parse_token_list(pairs.get("apis", "")),
        classes=parse_token_list(pairs.get("classes", "")),
        vars=parse_token_list(pairs.get("vars", "")),
    )


def parse_all_context(raw: str) -> AllContext | None:
    pairs = _context_pairs(raw)
    if not pairs:
        return None
    return AllContext(
        imports=parse_token_list(pairs.get("import", "")),
        file=parse_token_list(pairs.get("file", "")),
        class_=parse_token_list(pairs.get("class", "")),
        class_level=parse_token_list(pairs.get("class_level", "")),
    )
