"""Which modules outside a project a task's test will import: what a warm worker may preload.

Measured on CoderEval's real projects, a sample's time is mostly imports: of ~80 ms after the
interpreter starts, 36 ms import the standard library and 31 ms third-party modules (their
submodules: ``oslo_config.cfg``, ``email.mime.text``), against 8 ms for the project's own. This
module names what a warm worker should preload, read from the source with ``ast``: every module
the test and the task's file import, and, through the project's own modules they import
(followed, never listed — they are the code under test), every module those import. Only
statements that run when a module is imported count: an import inside a function runs only if
the test calls it (federation's lazy imports made a worker start in 1.6 s instead of 0.16 s
for tests that never reach them), one under ``if TYPE_CHECKING`` never. Nothing a sample wrote
is read: only the project and its tests.

A name here is only a candidate. The worker keeps only those whose import shows no side
effect it can detect (``warm_server._import_checked``); a name that is not a module (``from a
import b`` where ``b`` is a function) is not found there and is skipped.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable
from pathlib import Path

from codereval.analysis.python import source_roots
from codereval.runners.import_statements import ImportStatements, imports_of
from codereval.source import pyast

# Enough for the largest CoderEval closures; a worker checks each name once per environment.
MAX_MODULES = 600
# Project files followed per closure; a project bigger than this is followed in part.
MAX_FILES = 2000
NEVER = frozenset({"__future__", "__main__"})


def _project_file(roots: Iterable[Path], dotted: str) -> Path | None:
    parts = [p for p in dotted.split(".") if p]
    if not parts:
        return None
    for root in roots:
        base = root.joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
        if base.is_dir():  # a namespace package of the project: its name is the project's
            return base
    return None


def _relative_base(project: Path, rel: str, level: int) -> Path:
    base = (project / rel).parent
    for _ in range(level - 1):
        base = base.parent
    return base


class ImportClosure:
    """The external modules reachable from entry files of one project (``project`` None: a
    file on its own). Files are parsed once per instance."""

    def __init__(self, project: Path | None, *,
                 statements: ImportStatements | None = None) -> None:
        self.project = project
        # Each file's import statements, read once per text (kept between runs when the
        # caller's are: see import_statements).
        self.statements = statements if statements is not None else ImportStatements()
        self.external: dict[str, None] = {}  # insertion-ordered set
        # The project's files each visited file imports when it is imported (see own_modules).
        self.edges: dict[Path, list[Path]] = {}
        self._seen: set[Path] = set()
        self._own: set[str] = set()
        if project is not None and project.is_dir():
            for entry in os.listdir(project):
                self._own.add(entry.removesuffix(".py"))

    def add_file(self, path: Path, *, rel: str | None = None, text: str | None = None) -> None:
        """Follow one entry file. ``rel``: where it sits in the project (a test kept elsewhere
        that runs at a path inside the project); ``text``: its source, when not read from disk."""
        pending: list[tuple[str, str]] = []
        if text is None:
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return
        if rel is None and self.project is not None and path.is_relative_to(self.project):
            rel = str(path.relative_to(self.project))
        pending.append((rel or path.name, text))
        while pending and len(self._seen) < MAX_FILES and len(self.external) < MAX_MODULES:
            file_rel, source = pending.pop()
            follow = self._visit(file_rel, source)
            if self.project is not None:
                self.edges[self.project / file_rel] = follow
            for found in follow:
                if found in self._seen:
                    continue
                self._seen.add(found)
                if found.is_file():
                    try:
                        body = found.read_text(encoding="utf-8")
                    except (OSError, UnicodeDecodeError):
                        continue
                    assert self.project is not None
                    pending.append((str(found.relative_to(self.project)), body))

    def modules(self) -> list[str]:
        return list(self.external)[:MAX_MODULES]

    def own_modules(self, changed: Iterable[Path]) -> tuple[list[str], list[str]]:
        """The project's modules the entry files import that no sample can change: (those, in
        the order to import them, and the module names of the ``changed`` files).

        A module qualifies when neither it nor anything its import runs is a changed file (the
        file a sample goes into, the test): what it imports at module level, followed through
        the project, and the packages above each of those (importing ``a.b.c`` runs
        ``a/__init__.py`` and ``a/b/__init__.py`` first). A file whose imports were not all
        followed (the closure hit its limits) does not. Named from the project's root, as the
        original tests import them (they put it on ``sys.path``). A lazy import (in a function)
        runs only when called, in the sample's own process: it sees the sample's code. An
        import this cannot see (``importlib``) is the worker's probe's to find."""
        project = self.project
        if project is None:
            return [], []
        forbidden = {Path(os.path.normpath(p)) for p in changed}

        def imports_of(path: Path) -> list[Path] | None:
            """The project files ``path`` imports at module level; None: not known (too many
            files followed already)."""
            if path not in self.edges:
                if not path.is_file() or path.suffix != ".py":
                    return []  # a namespace package's folder runs nothing
                if len(self.edges) >= MAX_FILES:
                    return None
                try:
                    text = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    return None
                self.edges[path] = self._visit(str(path.relative_to(project)), text)
            return self.edges[path]

        def runs(path: Path) -> list[Path] | None:
            """The files importing ``path``'s module runs directly: its packages and imports."""
            packages = []
            folder = path.parent
            while folder != project and folder.is_relative_to(project):
                init = folder / "__init__.py"
                if init.is_file():
                    packages.append(init)
                folder = folder.parent
            own = imports_of(path)
            return None if own is None else packages + own

        verdict: dict[Path, bool] = {}

        def clean(start: Path) -> bool:
            # Iterative: a project's import graph can be deep, and has cycles.
            seen, stack = {start}, [start]
            while stack:
                path = stack.pop()
                if path in forbidden:
                    return False
                if verdict.get(path) is True:
                    continue
                following = runs(path)
                if following is None:
                    return False
                for nxt in following:
                    if nxt not in seen:
                        seen.add(nxt)
                        stack.append(nxt)
            return True

        names: list[str] = []
        for path in list(self.edges):
            if path.suffix != ".py" or not path.is_relative_to(project):
                continue
            verdict[path] = ok = clean(path)
            name = _module_name(project, path)
            if ok and name is not None:
                # Its packages run first: clean as well (clean() followed them).
                parts = name.split(".")
                names += [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
        banned = [n for n in (_module_name(project, p) for p in sorted(forbidden)) if n]
        # Packages first: importing a submodule imports them anyway.
        return sorted(dict.fromkeys(names), key=lambda n: n.count(".")), banned

    def _visit(self, rel: str, source: str) -> list[Path]:
        """Record the file's external imports; return the project files it imports."""
        statements = self.statements.of(source)
        if statements is None:
            return []
        project = self.project
        roots = source_roots(project, rel) if project is not None else []
        follow: list[Path] = []
        for module, level, names in statements:
            if level > 0:
                if project is None:
                    continue
                base = _relative_base(project, rel, level)
                for dotted in [module, *(f"{module}.{n}" if module else n for n in names)]:
                    hit = _project_file([base], dotted) if dotted else None
                    if hit is not None:
                        follow.append(hit)
                continue
            hit = _project_file(roots, module)
            if hit is not None or module.split(".", 1)[0] in self._own:
                if hit is not None:
                    follow.append(hit)
                for name in names:
                    sub = _project_file(roots, f"{module}.{name}")
                    if sub is not None:
                        follow.append(sub)
                continue
            if module.split(".", 1)[0] in NEVER:
                continue
            self.external.setdefault(module, None)
            # ``from a import b`` imports a.b when b is a submodule; the probe tells. Modules
            # are named in lower case (PEP 8): ``from typing import Any`` names no module.
            for name in names:
                if name.islower():
                    self.external.setdefault(f"{module}.{name}", None)
        return follow


def puts_root_first(source: str, root: str, own: Iterable[str]) -> bool:
    """Does this test, at module level, put ``root`` on ``sys.path`` (``sys.path.append`` or
    ``insert`` of that very path) before it imports any of the project's modules (``own``:
    their top-level names)? Only then is a project module it imports the one under ``root``
    in a fresh interpreter too, so a worker may have imported it from there beforehand (a
    test that never does, or does it later, would fail to import it, or find another)."""
    try:
        tree = pyast.parse(source)
    except (SyntaxError, ValueError):
        return False
    names, want = set(own), root.rstrip("/")
    for node in tree.body:
        if _adds_to_path(node, want):
            return True
        for module, level, _names in imports_of(ast.Module(body=[node], type_ignores=[])):
            if level or module.split(".", 1)[0] in names:
                return False
    return False


def _adds_to_path(node: ast.stmt, want: str) -> bool:
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return False
    call = node.value
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in ("append", "insert")
            and isinstance(func.value, ast.Attribute) and func.value.attr == "path"
            and isinstance(func.value.value, ast.Name) and func.value.value.id == "sys"):
        return False
    args = call.args[1:] if func.attr == "insert" else call.args
    return bool(args) and isinstance(args[0], ast.Constant) \
        and isinstance(args[0].value, str) and args[0].value.rstrip("/") == want


def _module_name(project: Path, path: Path) -> str | None:
    """``a/b/c.py`` -> ``a.b.c``, ``a/b/__init__.py`` -> ``a.b``: the name the project's root
    on ``sys.path`` imports it by. None for a file in a folder that is no package (a script's,
    or ``src/``): its modules are imported by another name, from another path."""
    try:
        parts = list(path.relative_to(project).with_suffix("").parts)
    except ValueError:
        return None
    if parts and parts[-1] == "__init__":
        parts.pop()
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    folder = project
    for part in parts[:-1] if path.name != "__init__.py" else parts:
        folder = folder / part
        if not (folder / "__init__.py").is_file():
            return None
    return ".".join(parts)


def shadowing_names(folders: Iterable[Path]) -> set[str]:
    """Top-level module names the folders hold (modules, packages, folders, extensions)."""
    names: set[str] = set()
    for folder in folders:
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for entry in entries:
            if entry.endswith((".py", ".pyc", ".so")) or os.path.isdir(os.path.join(folder, entry)):
                names.add(entry.split(".", 1)[0])
    return names
