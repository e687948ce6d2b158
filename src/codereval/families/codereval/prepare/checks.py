"""What `prepare` checks for each task, and the table that says what is missing.

Per task: its official test was found (and from where), its project is in place, the record's
file exists in the project and defines the function, and, where the record carries the file's
content, how far the checkout differs from it.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich.table import Table

OK = "ok"


@dataclass(frozen=True, kw_only=True)
class TaskCheck:
    task_id: str
    project: str
    kind: str  # "module" | "standalone" | ""
    test: str  # "map" | "tree" | "missing" | "not published" (CoderEval-Java: no tests exist)
    project_state: str  # Placed.origin, or "n/a" for standalone tests
    file: str  # "ok" | "missing: <path>" | "not checked"
    # "ok" | "not defined" | "not checked"; Java tasks located from public material:
    # "ok (by Javadoc)" | "ok (by arity)" | "not found: ..." | "ambiguous: ..."
    function: str
    content: str  # "identical" | "N lines differ (similarity S%)" | "no file_content" | ...
    # Where the reference came from: "record", "official test" (a record of an official result
    # file has none: the function the official test holds is it), or "none".
    reference: str = "record"

    @property
    def problems(self) -> list[str]:
        found = []
        if self.test == "missing":
            found.append("no official test")
        if self.project_state == "missing":
            found.append("project missing")
        if self.file.startswith("missing"):
            found.append("file missing")
        if self.function == "not defined":
            found.append("function not in file")
        if self.function.startswith(("not found", "ambiguous")):
            found.append(f"method {self.function.split(':')[0]}")
        if self.reference == "none":
            found.append("no reference")
        return found

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "problems": self.problems}


def check_file(project_dir: Path | None, rel: str, name: str, file_content: str) \
        -> tuple[str, str, str]:
    """(file, function, content) checks for one task's project file."""
    if project_dir is None or not project_dir.is_dir():
        return "not checked", "not checked", "not checked"
    path = project_dir / rel
    if not path.is_file():
        return f"missing: {rel}", "not checked", "not checked"
    text = path.read_text(encoding="utf-8", errors="replace")
    defined = re.search(rf"^\s*(async\s+)?def\s+{re.escape(name)}\s*\(", text, re.M)
    function = OK if defined else "not defined"
    return OK, function, content_difference(text, file_content)


def content_difference(actual: str, recorded: str) -> str:
    if not recorded.strip():
        return "no file_content"
    if actual == recorded or actual.strip() == recorded.strip():
        return "identical"
    a, b = actual.splitlines(), recorded.splitlines()
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    changed = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes()
                  if tag != "equal")
    return f"{changed} lines differ (similarity {matcher.ratio():.0%})"


def summary_table(checks: Sequence[TaskCheck]) -> Table:
    """One row per project: tasks, tests found, project state, files/functions found."""
    table = Table(title="prepared tasks by project")
    for column in ("project", "tasks", "tests", "project", "files", "functions", "content"):
        table.add_column(column, justify="left" if column == "project" else "right")
    by_project: dict[str, list[TaskCheck]] = {}
    for check in checks:
        by_project.setdefault(check.project, []).append(check)
    for project in sorted(by_project):
        rows = by_project[project]
        states = Counter(r.project_state for r in rows if r.kind == "module")
        contents = Counter(r.content.split(" ")[0] if r.content[0].isdigit() else r.content
                           for r in rows if r.file == OK)
        table.add_row(
            project,
            str(len(rows)),
            _tests_cell(rows),
            ", ".join(f"{k} {v}" for k, v in sorted(states.items())) or "n/a",
            _found(rows, "file"),
            _found(rows, "function"),
            _content_cell(rows) if contents else "",
        )
    return table


def _tests_cell(rows: Sequence[TaskCheck]) -> str:
    if all(r.test == "not published" for r in rows):
        return "not published"
    return f"{sum(r.test not in ('missing', 'not published') for r in rows)}/{len(rows)}"


def _found(rows: Sequence[TaskCheck], field: str) -> str:
    checked = [getattr(r, field) for r in rows if getattr(r, field) != "not checked"]
    if not checked:
        return "-"
    # "ok" or "ok (how)": Java methods located by signature, Javadoc or arity.
    return f"{sum(v == OK or v.startswith(OK + ' (') for v in checked)}/{len(checked)}"


def _content_cell(rows: Sequence[TaskCheck]) -> str:
    identical = sum(r.content == "identical" for r in rows)
    differ = sum(r.content[:1].isdigit() for r in rows)
    located = sum(r.content.startswith("located at") for r in rows)
    if located and not identical and not differ:
        return f"{located} rebuilt"
    return f"{identical} same, {differ} differ" if differ else f"{identical} same"


def problems_table(checks: Sequence[TaskCheck]) -> Table | None:
    bad = [c for c in checks if c.problems]
    if not bad:
        return None
    table = Table(title="what is missing")
    for column in ("task", "project", "problem", "detail"):
        table.add_column(column)
    for check in bad:
        if check.file.startswith("missing"):
            detail = check.file
        elif check.function.startswith(("not found", "ambiguous")):
            detail = check.function
        else:
            detail = check.project_state
        table.add_row(check.task_id, check.project, ", ".join(check.problems), detail)
    return table
