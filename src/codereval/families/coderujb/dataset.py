"""CoderUJB (ISSTA 2024): the five published datasets, read by path into ``Task``s.

The datasets exist in two shapes: the artifact's ``task_<kind>_bench_<suffix>.json`` files
(``{"code_ujb_complete": [row, ...]}``) and the Hugging Face datasets
(``ZHENGRAN/code_ujb_{complete,testgen,testgenissue,repair,defectdetection}``), which come as
parquet or can be exported as JSON Lines. Every shape holds the same rows; which kind a file
holds is read from its columns (or from the artifact's top-level key), or given.

The rows count lines from 0 (the original harness splices ``lines[:start] + patch +
lines[end + 1:]``); ``UjbSpec`` and ``Location`` count from 1, so every line number is moved by
one here and nowhere else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from codereval.errors import UserError, name_some
from codereval.model import IssueReport, Language, Location, Task, UjbKind, UjbSpec
from codereval.storage.jsonl import read_json_or_jsonl, require_file

BENCHMARK = "coderujb"
KIND_NAMES = ", ".join(kind.value for kind in UjbKind)

# The artifact's top-level key for each kind (and the Hub dataset's name).
DATASET_KEYS: dict[str, UjbKind] = {
    "code_ujb_complete": UjbKind.FCG,
    "code_ujb_testgen": UjbKind.CTG,
    "code_ujb_testgenissue": UjbKind.ITG,
    "code_ujb_repair": UjbKind.APR,
    "code_ujb_defectdetection": UjbKind.DD,
}

_COMMON = ("task_id", "project", "bug_id", "function_signature", "prompt_complete", "prompt_chat")
# The columns a kind needs to build its tasks (see extract_task_*.py in the artifact).
REQUIRED: dict[UjbKind, tuple[str, ...]] = {
    UjbKind.FCG: (
        *_COMMON, "testmethods", "source_dir", "location", "start", "end", "function",
        "function_name", "source", "indent", "prompt_complete_with_comment",
    ),
    UjbKind.CTG: (
        *_COMMON, "testmethods", "source_dir", "location", "start", "end", "function",
        "function_name", "source", "indent", "prompt_complete_with_comment", "classmethods",
    ),
    UjbKind.ITG: (
        *_COMMON, "testmethod", "source_dir", "classes_modified", "location_fixed",
        "location_buggy", "start_fixed", "end_fixed", "start_buggy", "end_buggy", "function",
        "function_name", "source_fixed", "source_buggy", "indent",
        "prompt_complete_without_signature",
    ),
    UjbKind.APR: (
        *_COMMON, "testmethods", "source_dir", "location", "start", "end", "buggy", "fix",
        "source", "indent",
    ),
    UjbKind.DD: (*_COMMON, "code", "defective"),
}

# Columns only one kind has, in the order they are tried.
_SIGNS: tuple[tuple[str, UjbKind], ...] = (
    ("defective", UjbKind.DD),
    ("fix", UjbKind.APR),
    ("classes_modified", UjbKind.ITG),
    ("testmethod", UjbKind.ITG),
    ("classmethods", UjbKind.CTG),
    ("be_test_class_long_name", UjbKind.CTG),
    ("prompt_complete_with_comment", UjbKind.FCG),
)

# The ITG prompts carry the issue as markdown: "## Issue-ID: ...", "## Issue-Title:", ...
_ISSUE_BLOCK = re.compile(r"```markdown\n(.*?)\n```", re.S)
_ISSUE_FIELD = re.compile(
    r"## Issue-ID:\s*(?P<id>[^\n]*)\n.*?## Issue-Title:\s*\n(?P<title>.*?)\n\s*\n"
    r"## Issue-Description:\s*\n(?P<body>.*)",
    re.S,
)
_METHOD_NAME = re.compile(r"([\w$]+)\s*\(")
# CoderEval records have neither: a file with both is a CoderUJB dataset.
_BUG_COLUMN = re.compile(r'"bug_id"\s*:')
_UJB_COLUMN = re.compile(
    r'"(?:prompt_complete|prompt_chat|defective|testmethods?|classmethods)"\s*:'
)


def parse_kind(text: str) -> UjbKind:
    """A kind by name (fcg, ctg, itg, apr, dd); anything else is a UserError."""
    try:
        return UjbKind(text.strip().lower())
    except ValueError:
        raise UserError(
            f"unknown CoderUJB task kind {text!r}", hint=f"choose one of: {KIND_NAMES}"
        ) from None


def detect_kind(columns: Sequence[str] | Mapping[str, Any]) -> UjbKind | None:
    """The kind a row's columns say, or None when they fit no kind."""
    names = set(columns)
    for column, kind in _SIGNS:
        if column in names:
            return kind
    return None


def is_coderujb_file(path: Path) -> bool:
    """Whether a file looks like a CoderUJB dataset (parquet, the artifact's JSON, or rows with
    CoderUJB's columns). Cheap enough for commands that accept several formats: it reads the
    head of the file only (a row holds whole source files, so the head is generous)."""
    if path.suffix == ".parquet":
        return True
    if not path.is_file():
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(1 << 20).decode("utf-8", errors="replace")
    except OSError:
        return False
    if any(f'"{key}"' in head[:4096] for key in DATASET_KEYS):
        return True
    return bool(_BUG_COLUMN.search(head) and _UJB_COLUMN.search(head))


def read_rows(path: Path) -> tuple[list[tuple[int, dict[str, Any]]], UjbKind | None]:
    """(row number, row) pairs of a dataset file, and the kind its top-level key names."""
    require_file(path, what="CoderUJB dataset")
    if path.suffix == ".parquet":
        return _parquet_rows(path), None
    text_head = _head(path)
    if text_head.lstrip().startswith("{") and any(key in text_head for key in DATASET_KEYS):
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise UserError(f"{path}: malformed JSON ({exc})") from None
        if isinstance(document, dict) and len(document) == 1:
            (key, rows), = document.items()
            if key in DATASET_KEYS:
                if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                    raise UserError(f"{path}: {key!r} must hold a list of rows")
                return list(enumerate(rows, start=1)), DATASET_KEYS[key]
    return read_json_or_jsonl(path), None


def _head(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            return handle.read(4096).decode("utf-8", errors="replace")
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc})") from None


def _parquet_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise UserError(
            f"reading {path.name} needs pyarrow, which is not installed",
            hint="pip install 'codereval[coderujb]' (or export the dataset as JSON Lines)",
        ) from None
    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"{path}: not a readable parquet file ({first})") from None
    return list(enumerate(table.to_pylist(), start=1))


def load_coderujb(path: Path, *, kind: UjbKind | str | None = None) -> list[Task]:
    """Every task of one CoderUJB dataset file (parquet, JSON or JSON Lines), in file order.

    ``kind`` overrides what the file's columns say. A row missing a column its kind needs, a
    value of the wrong type, an id seen twice: one UserError naming the file, row and column.
    """
    rows, named = read_rows(path)
    if not rows:
        raise UserError(f"{path}: no rows", hint="is it a CoderUJB dataset file?")
    chosen = parse_kind(kind) if isinstance(kind, str) else kind
    if chosen is None:
        chosen = named or detect_kind(rows[0][1])
    if chosen is None:
        raise UserError(
            f"{path}: cannot tell which CoderUJB task kind the file holds "
            f"(columns: {name_some(sorted(rows[0][1]), limit=8)})",
            hint=f"pass --kind ({KIND_NAMES})",
        )
    build = _BUILDERS[chosen]
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for number, row in rows:
        reader = _Row(path=path, number=number, row=row, kind=chosen)
        reader.require(REQUIRED[chosen])
        task = build(reader)
        if task.task_id in seen:
            raise UserError(
                f"{path}: row {number}: task_id {task.task_id} repeats row {seen[task.task_id]}",
                hint="each row needs its own task_id",
            )
        seen[task.task_id] = number
        tasks.append(task)
    return tasks


class _Row:
    """One row with typed getters whose errors name the file, row and column."""

    def __init__(self, *, path: Path, number: int, row: dict[str, Any], kind: UjbKind) -> None:
        self.path, self.number, self.row, self.kind = path, number, row, kind

    def where(self, column: str) -> str:
        return f"{self.path}: row {self.number}: column {column!r}"

    def require(self, columns: Sequence[str]) -> None:
        missing = [c for c in columns if c not in self.row]
        if missing:
            raise UserError(
                f"{self.path}: row {self.number}: missing column {missing[0]!r} that "
                f"{self.kind.value} tasks need"
                + (f" (and {', '.join(repr(c) for c in missing[1:4])})" if missing[1:] else ""),
                hint=f"pass the {self.kind.value} dataset, or --kind if the file holds another",
            )

    def text(self, column: str, *, default: str | None = None) -> str:
        value = self.row.get(column, default)
        if value is None:
            return ""
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        if not isinstance(value, str):
            raise UserError(f"{self.where(column)} must be text, got {type(value).__name__}")
        return value

    def integer(self, column: str) -> int:
        value = self.row.get(column)
        if isinstance(value, bool) or value is None:
            raise UserError(f"{self.where(column)} must be a line number, got {value!r}")
        if isinstance(value, int):
            return value
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
        raise UserError(f"{self.where(column)} must be a line number, got {value!r}")

    def line(self, column: str) -> int:
        """A 0-based line of the published rows as a 1-based one."""
        value = self.integer(column)
        if value < 0:
            raise UserError(f"{self.where(column)} must not be negative, got {value}")
        return value + 1

    def texts(self, column: str) -> tuple[str, ...]:
        value = self.row.get(column)
        if isinstance(value, str):
            # Some exports keep list columns as JSON text.
            try:
                value = json.loads(value) if value.lstrip().startswith("[") else [value]
            except json.JSONDecodeError:
                value = [value]
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise UserError(f"{self.where(column)} must be a list of text, got {value!r:.60}")
        return tuple(value)

    def flag(self, column: str) -> bool:
        value = self.row.get(column)
        if isinstance(value, bool):
            return value
        if value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise UserError(f"{self.where(column)} must be true or false, got {value!r}")

    def records(self, column: str) -> list[dict[str, Any]]:
        value = self.row.get(column)
        if not isinstance(value, list | tuple) or not all(isinstance(v, dict) for v in value):
            raise UserError(f"{self.where(column)} must be a list of objects, got {value!r:.60}")
        return list(value)


def _span(row: _Row, start: str, end: str) -> tuple[int, int]:
    first, last = row.line(start), row.line(end)
    if last < first:
        raise UserError(f"{row.where(end)} ({last - 1}) is before {start!r} ({first - 1})")
    return first, last


def _test_methods(row: _Row, column: str) -> tuple[str, ...]:
    methods = row.texts(column)
    for method in methods:
        if "::" not in method:
            raise UserError(
                f"{row.where(column)}: {method!r} is not a test method",
                hint="expected pkg.Class::method, as Defects4J writes them",
            )
    return methods


def _class_of_file(location: str, source_dir: str) -> str:
    """``src/test/java/org/x/FooTest.java`` under ``src/test/java`` -> ``org.x.FooTest``."""
    path = location.removeprefix(source_dir.rstrip("/") + "/") if source_dir else location
    return path.removesuffix(".java").replace("/", ".")


def _extra(row: _Row, columns: Sequence[str]) -> dict[str, str]:
    """Prompt texts and contexts the extraction and `tasks --show` read."""
    extra = {"kind": row.kind.value, "bug": f"{row.text('project')}-{row.text('bug_id')}"}
    for column in columns:
        if column in row.row and row.row[column] is not None:
            extra[column] = row.text(column)
    return extra


def _task(
    row: _Row,
    *,
    name: str,
    spec: UjbSpec,
    reference: str,
    docstring: str = "",
    file_content: str = "",
    extra_columns: Sequence[str] = (),
    extra: Mapping[str, str] | None = None,
) -> Task:
    task_id = row.text("task_id").strip()
    if not task_id:
        raise UserError(f"{row.where('task_id')} is empty")
    qualified = spec.test_class or _class_of_file(spec.location, spec.source_dir)
    package, _, class_name = qualified.rpartition(".")
    location = Location(
        project=spec.project,
        file_path=spec.location,
        lineno=spec.start,
        end_lineno=spec.end,
        class_name=class_name,
        package=package,
    )
    return Task(
        task_id=task_id,
        benchmark=BENCHMARK,
        language=Language.JAVA,
        name=name,
        signature=row.text("function_signature").strip(),
        docstring=docstring,
        reference=reference,
        location=location if spec.location else Location(project=spec.project),
        file_content=file_content,
        prompt=row.text("prompt_complete"),
        extra=_extra(row, ("prompt_chat", *extra_columns)) | dict(extra or {}),
        ujb=spec,
    )


def _fcg(row: _Row) -> Task:
    start, end = _span(row, "start", "end")
    name = row.text("function_name")
    spec = UjbSpec(
        kind=UjbKind.FCG,
        project=row.text("project"),
        bug_id=row.text("bug_id"),
        source_dir=row.text("source_dir"),
        location=row.text("location"),
        start=start,
        end=end,
        function_name=name,
        function_signature=row.text("function_signature").strip(),
        indent=row.text("indent"),
        test_methods=_test_methods(row, "testmethods"),
        fixed_function=row.text("function"),
    )
    return _task(
        row,
        name=name,
        spec=spec,
        reference=row.text("function"),
        docstring=row.text("comment", default=""),
        file_content=row.text("source"),
        extra_columns=("prompt_complete_with_comment", "prompt_chat_with_comment"),
    )


def _ctg(row: _Row) -> Task:
    start, end = _span(row, "start", "end")
    name = row.text("function_name")
    methods = _test_methods(row, "testmethods")
    location, source_dir = row.text("location"), row.text("source_dir")
    # The harness measures the coverage of the classes the mapping says the test exercises.
    under_test: list[str] = []
    for index, method in enumerate(row.records("classmethods")):
        value = method.get("be_test_class_name")
        if not isinstance(value, str) or not value:
            raise UserError(
                f"{row.where('classmethods')}: item {index + 1} has no be_test_class_name"
            )
        if value not in under_test:
            under_test.append(value)
    if not under_test and row.row.get("be_test_class_long_name"):
        under_test.append(row.text("be_test_class_long_name"))
    spec = UjbSpec(
        kind=UjbKind.CTG,
        project=row.text("project"),
        bug_id=row.text("bug_id"),
        test_dir=source_dir,
        location=location,
        start=start,
        end=end,
        function_name=name,
        function_signature=row.text("function_signature").strip(),
        indent=row.text("indent"),
        test_methods=methods,
        test_class=_class_of_file(location, source_dir),
        test_file=location,
        classes_under_test=tuple(under_test),
        fixed_function=row.text("function"),
    )
    return _task(
        row,
        name=name,
        spec=spec,
        reference=row.text("function"),
        docstring=row.text("comment", default=""),
        file_content=row.text("source"),
        extra_columns=("prompt_complete_with_comment", "prompt_chat_with_comment"),
    )


def issue_from_prompt(prompt_chat: str) -> tuple[str, IssueReport | None]:
    """(issue id, report) from an ITG chat prompt's markdown block; ("", None) if absent."""
    block = _ISSUE_BLOCK.search(prompt_chat)
    if block is None:
        return "", None
    fields = _ISSUE_FIELD.search(block.group(1))
    if fields is None:
        return "", IssueReport(body=block.group(1).strip())
    return fields["id"].strip(), IssueReport(
        title=fields["title"].strip(), body=fields["body"].strip()
    )


def _itg(row: _Row) -> Task:
    start, end = _span(row, "start_fixed", "end_fixed")
    start_buggy, end_buggy = _span(row, "start_buggy", "end_buggy")
    name = row.text("function_name")
    methods = _test_methods(row, "testmethod")
    if len(methods) != 1:
        raise UserError(f"{row.where('testmethod')} must name one test method, got {methods!r}")
    method = methods[0]
    location = row.text("location_fixed")
    if row.text("location_buggy") != location:
        raise UserError(
            f"{row.where('location_buggy')} names another file than 'location_fixed' "
            f"({row.text('location_buggy')} vs {location})",
            hint="the test must live in the same file in both versions",
        )
    issue_id, issue = issue_from_prompt(row.text("prompt_chat"))
    if "issue_title" in row.row or "issue_report" in row.row:
        # Rows exported with the issue's own columns: those win over the prompt's copy.
        issue = IssueReport(
            title=row.text("issue_title", default=issue.title if issue else ""),
            body=row.text("issue_report", default=issue.body if issue else ""),
            url=row.text("issue_url", default=""),
        )
    spec = UjbSpec(
        kind=UjbKind.ITG,
        project=row.text("project"),
        bug_id=row.text("bug_id"),
        test_dir=row.text("source_dir"),
        location=location,
        start=start,
        end=end,
        start_buggy=start_buggy,
        end_buggy=end_buggy,
        function_name=name,
        function_signature=row.text("function_signature").strip(),
        indent=row.text("indent"),
        test_methods=(method,),
        test_class=method.partition("::")[0],
        test_file=location,
        classes_under_test=row.texts("classes_modified"),
        issue=issue,
        fixed_function=row.text("function"),
    )
    extra = {"issue_id": row.text("issue_id", default=issue_id)}
    return _task(
        row,
        name=name,
        spec=spec,
        reference=row.text("function"),
        docstring=row.text("comment", default=""),
        file_content=row.text("source_fixed"),
        extra_columns=("prompt_complete_without_signature", "source_buggy"),
        extra=extra,
    )


def method_name(signature: str) -> str:
    """The method a signature declares (the last name before a parenthesis, outside
    annotations such as ``@Test(expected = X.class)``)."""
    text = re.sub(r"@[\w.]+\s*(\([^()]*\))?", " ", signature)
    names = _METHOD_NAME.findall(text)
    return names[0] if names else ""


def _apr(row: _Row) -> Task:
    start, end = _span(row, "start", "end")
    signature = row.text("function_signature").strip()
    name = row.text("function_name", default="") or method_name(signature)
    spec = UjbSpec(
        kind=UjbKind.APR,
        project=row.text("project"),
        bug_id=row.text("bug_id"),
        source_dir=row.text("source_dir"),
        location=row.text("location"),
        start=start,
        end=end,
        function_name=name,
        function_signature=signature,
        indent=row.text("indent"),
        test_methods=_test_methods(row, "testmethods"),
        buggy_function=row.text("buggy"),
        fixed_function=row.text("fix"),
    )
    return _task(
        row, name=name, spec=spec, reference=row.text("fix"), file_content=row.text("source")
    )


def _dd(row: _Row) -> Task:
    signature = row.text("function_signature").strip()
    defective = row.flag("defective")
    code = row.text("code")
    spec = UjbSpec(
        kind=UjbKind.DD,
        project=row.text("project"),
        bug_id=row.text("bug_id"),
        function_name=method_name(signature),
        function_signature=signature,
        defective=defective,
        buggy_function=code if defective else "",
        fixed_function="" if defective else code,
    )
    return _task(
        row,
        name=spec.function_name,
        spec=spec,
        reference=code,
        # The truth as a word, so listings can show it without reading the spec.
        extra={"answer": "defective" if defective else "clean"},
    )


_BUILDERS: dict[UjbKind, Callable[[_Row], Task]] = {
    UjbKind.FCG: _fcg,
    UjbKind.CTG: _ctg,
    UjbKind.ITG: _itg,
    UjbKind.APR: _apr,
    UjbKind.DD: _dd,
}


def iter_kinds(tasks: Sequence[Task]) -> Iterator[tuple[UjbKind, list[Task]]]:
    """The CoderUJB tasks of a list grouped by kind, in the paper's order."""
    for kind in UjbKind:
        group = [t for t in tasks if t.ujb is not None and t.ujb.kind is kind]
        if group:
            yield kind, group


__all__ = [
    "BENCHMARK",
    "DATASET_KEYS",
    "REQUIRED",
    "detect_kind",
    "is_coderujb_file",
    "issue_from_prompt",
    "iter_kinds",
    "load_coderujb",
    "method_name",
    "parse_kind",
    "read_rows",
]
