"""The import statements of Python files, by their content, kept between runs.

A warm run reads the import graph of every project it runs (``python_imports.ImportClosure``):
thousands of files parsed once per run, the largest part of the driver's time on CoderEval's
official set after the samples' own work was moved out of it. A file's import statements
depend on its text alone, so they are kept under the digest of that text: a file that changes
is parsed again, one that does not is never parsed twice.
"""

from __future__ import annotations

import ast
import hashlib
import json
import logging
import sys
import threading
from pathlib import Path

from codereval.source import pyast
from codereval.storage.jsonl import atomic_write_text

log = logging.getLogger("codereval.warm")

# Below the machine's cache root ($CODEREVAL_HOME), beside the environments.
STATEMENTS_FOLDER = "import-statements"
# What a statement is (module, level, names) and which grammar read the files: a file another
# Python cannot parse may parse here.
FORMAT = f"import-statements-1-py{sys.version_info[0]}.{sys.version_info[1]}"

# More files than this kept (every project of several benchmarks): the oldest are let go.
MAX_FILES = 200_000

Statement = tuple[str, int, list[str]]


def imports_of(tree: ast.Module) -> list[Statement]:
    """(module, level, names imported from it) for every import statement that runs when the
    module is imported: at module level, in class bodies and in ``if``/``try``/``with`` blocks,
    not in functions (run only if called) nor under ``if TYPE_CHECKING`` (never run)."""
    found: list[Statement] = []
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import):
            found += [(alias.name, 0, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [alias.name for alias in node.names if alias.name != "*"]
            found.append((node.module or "", node.level, names))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        elif isinstance(node, ast.If) and _type_checking(node.test):
            pending.extend(node.orelse)
        else:
            pending.extend(ast.iter_child_nodes(node))
    found.reverse()
    return found


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


class ImportStatements:
    """Each source text's import statements (None: it does not parse), read once per text.

    ``folder`` None keeps them for this process only. Otherwise they are read from it at the
    start and written back by :meth:`save` when new texts were read; two runs saving at once
    each write a whole file, and the one that loses only costs the next run some parsing."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._known: dict[str, list[Statement] | None] = {}
        self._new = 0
        self.parsed = 0
        if folder is not None:
            self._known.update(self._read(folder / f"{FORMAT}.json"))

    @staticmethod
    def _read(path: Path) -> dict[str, list[Statement] | None]:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.debug("import statements in %s unreadable (%s): parsed again", path, exc)
            return {}
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return {}
        found: dict[str, list[Statement] | None] = {}
        for digest, statements in (data.get("files") or {}).items():
            if statements is None:
                found[digest] = None
            elif isinstance(statements, list):
                try:
                    found[digest] = [(str(m), int(level), [str(n) for n in names])
                                     for m, level, names in statements]
                except (TypeError, ValueError):
                    continue
        return found

    def of(self, source: str) -> list[Statement] | None:
        """The import statements of this text, or None when it does not parse."""
        digest = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()
        with self._lock:
            if digest in self._known:
                return self._known[digest]
        try:
            statements: list[Statement] | None = imports_of(pyast.parse(source))
        except (SyntaxError, ValueError):
            statements = None
        with self._lock:
            self._known[digest] = statements
            self._new += 1
            self.parsed += 1
        return statements

    def save(self) -> None:
        """Write what this process read (with what is there now) back to the folder."""
        if self.folder is None:
            return
        with self._lock:
            if not self._new:
                return
            self._new = 0
            path = self.folder / f"{FORMAT}.json"
            merged = {**self._read(path), **self._known}
            if len(merged) > MAX_FILES:
                merged = dict(list(merged.items())[-MAX_FILES:])
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps({"format": FORMAT, "files": merged},
                                               separators=(",", ":")))
        except OSError as exc:
            log.debug("import statements not kept in %s: %s", path, exc)
