"""Which functions of a repository become tasks (`codereval build`), and the rules why.

A candidate is a function or a method (not one nested in another function) that:
- lives in a Python file outside the tests (``tests/``, ``test/``, ``testing/``, ``test_*.py``,
  ``*_test.py``, ``conftest.py``), the docs, examples and ``setup.py``;
- has a docstring (the prompt's task description, as in CoderEval);
- has at least ``min_statements`` statements besides its docstring (counted over its whole
  body, nested blocks included), so that ``return self._x`` is not a task;
- is not a dunder (``__init__``, ``__repr__``...): the suite reaches them through everything;
- with ``since``, has a line whose last change (``git blame``) is on or after that date, so a
  benchmark can postdate a model's training data.
"""

from __future__ import annotations

import ast
import datetime as dt
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from codereval.errors import UserError

EXCLUDED_DIRS = frozenset(
    {"tests", "test", "testing", "docs", "doc", "examples", "example", "benchmarks", "build"}
)


@dataclass(frozen=True, kw_only=True)
class Candidate:
    file_path: str  # relative to the project root, POSIX
    module: str  # importable name, from its source root
    root: str  # the source root the module is found from ("." or "src")
    qualname: str  # "f" or "Class.method"
    name: str
    class_name: str
    lineno: int  # first line of the definition, decorators included
    end_lineno: int
    docstring: str
    code: str  # the reference: the definition's text, decorators included

    @property
    def task_id(self) -> str:
        return f"{self.module}.{self.qualname}"


def _excluded(path: PurePosixPath) -> bool:
    if any(part in EXCLUDED_DIRS or part.startswith(".") for part in path.parts[:-1]):
        return True
    name = path.name
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name in ("conftest.py", "setup.py", "noxfile.py", "__main__.py")
    )


def _module_name(path: PurePosixPath, root: Path) -> tuple[str, str] | None:
    """(module, source root) of a file: its packages up from the file (each with an
    __init__.py), rooted at the folder above the topmost one; None when the file's folder is
    not a package and not a root itself."""
    parts = list(path.with_suffix("").parts)
    folder = root.joinpath(*path.parts[:-1])
    depth = 0
    while depth < len(parts) - 1 and (folder / "__init__.py").is_file():
        folder = folder.parent
        depth += 1
    source_root = PurePosixPath(*path.parts[: len(parts) - 1 - depth])
    module_parts = parts[len(parts) - 1 - depth :]
    if module_parts[-1] == "__init__":
        module_parts = module_parts[:-1]
    if not module_parts:
        return None
    return ".".join(module_parts), str(source_root) if source_root.parts else "."


def _statements(body: list[ast.stmt]) -> int:
    count = 0
    for node in body:
        count += 1
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                count += _statements([n for n in inner if isinstance(n, ast.stmt)])
    return count


def _definitions(
    tree: ast.Module,
) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    found: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append((node, ""))
        elif isinstance(node, ast.ClassDef):
            for member in node.body:
                if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
                    found.append((member, node.name))
    return found


def find_candidates(root: Path, *, min_statements: int = 3) -> list[Candidate]:
    """Every function of the tree at ``root`` that the rules above accept, in file order."""
    chosen: list[Candidate] = []
    for file in sorted(root.rglob("*.py")):
        relative = PurePosixPath(file.relative_to(root).as_posix())
        if _excluded(relative) or file.is_symlink():
            continue
        named = _module_name(relative, root)
        if named is None:
            continue
        module, source_root = named
        try:
            text = file.read_text(encoding="utf-8")
            tree = ast.parse(text)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        lines = text.splitlines(keepends=True)
        for node, class_name in _definitions(tree):
            docstring = ast.get_docstring(node)
            if not docstring or re.fullmatch(r"__\w+__", node.name):
                continue
            if isinstance(node, ast.AsyncFunctionDef):
                continue  # the replay calls functions; a coroutine needs a loop of its own
            body = node.body[1:]  # the docstring is the first statement
            if _statements(body) < min_statements:
                continue
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            end = node.end_lineno or node.lineno
            code = "".join(lines[first - 1 : end])
            qualname = f"{class_name}.{node.name}" if class_name else node.name
            chosen.append(
                Candidate(
                    file_path=str(relative),
                    module=module,
                    root=source_root,
                    qualname=qualname,
                    name=node.name,
                    class_name=class_name,
                    lineno=first,
                    end_lineno=end,
                    docstring=docstring,
                    code=code,
                )
            )
    return chosen


def parse_since(value: str) -> dt.datetime:
    try:
        day = dt.date.fromisoformat(value)
    except ValueError:
        raise UserError(f"--since {value!r} is not a date", hint="give YYYY-MM-DD") from None
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)


def changed_since(
    repo: Path, commit: str, candidates: list[Candidate], since: dt.datetime
) -> list[Candidate]:
    """The candidates with a line last changed on or after ``since`` (git blame at
    ``commit``; author time, which rebases and cherry-picks keep)."""
    kept = []
    for candidate in candidates:
        done = subprocess.run(
            [
                "git", "-C", str(repo), "blame", "--line-porcelain",
                "-L", f"{candidate.lineno},{candidate.end_lineno}",
                commit, "--", candidate.file_path,
            ],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            continue
        times = [int(t) for t in re.findall(r"^author-time (\d+)$", done.stdout, flags=re.M)]
        if any(dt.datetime.fromtimestamp(t, dt.UTC) >= since for t in times):
            kept.append(candidate)
    return kept


__all__ = ["Candidate", "changed_since", "find_candidates", "parse_since"]
