"""Finding a CoderEval-Java task's method in its project from public material only.

The official Java records (file, class, line span) are not obtainable; the prompt files give the
method's signature and Javadoc and the result files its name. Every method of the project's
source roots is indexed with tree-sitter; a task's method is the one with its name whose
parameter types are the signature's, and, among several, the one whose Javadoc is the prompt's.
Anything else — no such method, or several left — is reported, never guessed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from tree_sitter import Node

from codereval.analysis.java import TYPE_DECLARATIONS, java_parser, node_text, param_types

METHOD_NODES = ("method_declaration", "constructor_declaration")
SKIP = frozenset({".git", "target", "build", "node_modules"})


@dataclass(frozen=True, kw_only=True)
class Method:
    """One method declaration of the project."""

    file: str  # relative to the project root
    package: str
    class_name: str
    name: str
    params: tuple[str, ...]  # parameter types, whitespace removed
    lineno: int  # 1-based, the declaration with its annotations, without the Javadoc
    end_lineno: int
    javadoc: str  # the raw Javadoc before the method ("" when none), with its indentation


@dataclass(frozen=True, kw_only=True)
class Found:
    """The answer for one task: the method, or why there is none."""

    method: Method | None
    status: str  # "ok", "ok (by Javadoc)", "ok (by arity)", "not found: ...", "ambiguous: ..."


def _walk(node: Node) -> Iterator[Node]:
    yield node
    for child in node.children:
        yield from _walk(child)


def _enclosing_type(node: Node) -> str:
    parent = node.parent
    while parent is not None:
        if parent.type in TYPE_DECLARATIONS:
            return node_text(parent.child_by_field_name("name"))
        parent = parent.parent
    return ""


def _javadoc(node: Node, lines: list[str]) -> str:
    comment = node.prev_sibling
    if comment is None or comment.type != "block_comment":
        return ""
    text = node_text(comment)
    if not text.startswith("/**"):
        return ""
    line = lines[comment.start_point[0]] if comment.start_point[0] < len(lines) else ""
    indent = line[: comment.start_point[1]]
    return (indent if not indent.strip() else "") + text + "\n"


def methods_of(source: str, *, file: str) -> list[Method]:
    tree = java_parser().parse(source.encode("utf-8"))
    lines = source.splitlines()
    package = ""
    for child in tree.root_node.named_children:
        if child.type == "package_declaration":
            package = next((node_text(c) for c in child.named_children
                            if c.type in ("scoped_identifier", "identifier")), "")
    found = []
    for node in _walk(tree.root_node):
        if node.type not in METHOD_NODES:
            continue
        found.append(Method(
            file=file, package=package, class_name=_enclosing_type(node),
            name=node_text(node.child_by_field_name("name")),
            params=param_types(node.child_by_field_name("parameters")),
            lineno=node.start_point[0] + 1, end_lineno=node.end_point[0] + 1,
            javadoc=_javadoc(node, lines),
        ))
    return found


def index_methods(project: Path, roots: Sequence[str]) -> dict[str, list[Method]]:
    """Every method of the ``.java`` files under ``roots`` (folders of ``project``), by name."""
    index: dict[str, list[Method]] = {}
    for root in roots or ("",):
        base = project / root
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP)
            for name in sorted(filenames):
                if not name.endswith(".java"):
                    continue
                path = Path(dirpath) / name
                text = path.read_text(encoding="utf-8", errors="replace")
                for method in methods_of(text, file=str(path.relative_to(project))):
                    index.setdefault(method.name, []).append(method)
    return index


def signature_of(signature: str) -> tuple[str, tuple[str, ...]] | None:
    """(name, parameter types) of a prompt's signature line (``public int f(int a){``)."""
    body = signature.strip()
    body = body + "}" if body.endswith("{") else body.rstrip(";") + "{}"
    tree = java_parser().parse(f"class CodeReval__ {{\n{body}\n}}\n".encode())
    for node in _walk(tree.root_node):
        if node.type in METHOD_NODES:
            return (node_text(node.child_by_field_name("name")),
                    param_types(node.child_by_field_name("parameters")))
    return None


def javadoc_key(text: str) -> str:
    """A Javadoc's words, comment markers and layout dropped (the prompts reformat it)."""
    text = re.sub(r"^\s*/\*\*|\*/\s*$", "", text.strip())
    text = re.sub(r"^\s*\*", "", text, flags=re.M)
    return " ".join(text.split())


def _where(methods: Sequence[Method]) -> str:
    shown = ", ".join(f"{m.file}:{m.lineno}" for m in methods[:3])
    return shown + (f" and {len(methods) - 3} more" if len(methods) > 3 else "")


def locate(
    index: dict[str, list[Method]], *, name: str, signature: str, javadoc: str
) -> Found:
    """The task's method in ``index``: by name, then parameter types, then Javadoc."""
    parsed = signature_of(signature)
    if parsed is not None and parsed[0] != name:
        return Found(method=None, status=f"not found: the signature names {parsed[0]!r}")
    candidates = index.get(name, [])
    if not candidates:
        return Found(method=None, status=f"not found: no method {name} in the source roots")
    how = ""
    if parsed is not None:
        exact = [m for m in candidates if m.params == parsed[1]]
        if not exact:
            exact = [m for m in candidates if len(m.params) == len(parsed[1])]
            how = "by arity"
        if not exact:
            return Found(method=None, status=f"not found: no {name}({', '.join(parsed[1])}) "
                                              f"among {_where(candidates)}")
        candidates = exact
    if len(candidates) > 1:
        wanted = javadoc_key(javadoc)
        same = [m for m in candidates if wanted and javadoc_key(m.javadoc) == wanted]
        if len(same) != 1:
            return Found(method=None,
                         status=f"ambiguous: {len(candidates)} candidates ({_where(candidates)})")
        candidates = same
        how = how or "by Javadoc"
    return Found(method=candidates[0], status=f"ok ({how})" if how else "ok")
