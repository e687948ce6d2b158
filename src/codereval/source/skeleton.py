"""File skeletons for prompts: imports, fields and member signatures, no bodies.

Python is read with ``ast``; Java with a small scanner that masks comments and literals and then
matches braces (enough for declarations; it is not a parser).
"""

from __future__ import annotations

import ast
import re
import textwrap

from codereval.source import pyast

MAX_LINE = 200


# ------------------------------------------------------------------------------- Python


def python_skeleton(source: str, *, exclude: str = "", exclude_lineno: int = 0) -> str:
    """Imports, module and class fields, and ``def`` headers with ``...`` bodies.

    The function named ``exclude`` (at ``exclude_lineno`` when given) is left out: it is the
    one the model writes. Unparsable files give their import lines only.
    """
    try:
        tree = pyast.parse(source)
    except SyntaxError:
        lines = [line for line in source.splitlines() if re.match(r"(import|from)\s", line)]
        return "\n".join(lines) + ("\n" if lines else "")
    lines = source.splitlines()
    out: list[str] = []
    _python_body(tree.body, lines, out, indent="", exclude=exclude, exclude_lineno=exclude_lineno)
    return "\n".join(out) + ("\n" if out else "")


def _segment(lines: list[str], node: ast.stmt) -> list[str]:
    end = node.end_lineno or node.lineno
    return lines[node.lineno - 1 : end]


def _header(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
    """Decorators and the header up to the colon that opens the body."""
    first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
    body_line = node.body[0].lineno
    text = textwrap.dedent("\n".join(lines[first - 1 : body_line]))
    # The body may start on the header's own line (``def f(): return 1``).
    head_end = _header_colon(text)
    return text[: head_end + 1] if head_end >= 0 else text


def _header_colon(text: str) -> int:
    depth = 0
    for index, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == ":" and depth == 0 and not _in_decorator_line(text, index):
            return index
    return -1


def _in_decorator_line(text: str, index: int) -> bool:
    line_start = text.rfind("\n", 0, index) + 1
    return text[line_start:].lstrip().startswith("@")


def _python_body(
    body: list[ast.stmt],
    lines: list[str],
    out: list[str],
    *,
    indent: str,
    exclude: str,
    exclude_lineno: int,
) -> None:
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.extend(indent + line.strip() for line in _segment(lines, node))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            text = " ".join(line.strip() for line in _segment(lines, node))
            out.append(indent + (text if len(text) <= MAX_LINE else text[:MAX_LINE] + " ..."))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name == exclude and (
                not exclude_lineno or node.lineno <= exclude_lineno <= (node.end_lineno or 0)
            ):
                continue
            for line in _header(lines, node).splitlines():
                out.append(indent + line)
            out.append(indent + "    ...")
        elif isinstance(node, ast.ClassDef):
            for line in _header(lines, node).splitlines():
                out.append(indent + line)
            before = len(out)
            _python_body(
                node.body, lines, out, indent=indent + "    ",
                exclude=exclude, exclude_lineno=exclude_lineno,
            )
            if len(out) == before:
                out.append(indent + "    ...")


# --------------------------------------------------------------------------------- Java


def mask_java(source: str, *, strings: bool = True) -> str:
    """The source with comments (and string/char literal contents) blanked, same length.

    Positions in the mask are positions in the source, so braces can be matched on the mask.
    ``strings=False`` blanks comments only (to print declarations without their comments).
    """
    out = list(source)
    index = 0
    length = len(source)
    while index < length:
        if source.startswith("//", index):
            end = source.find("\n", index)
            end = length if end < 0 else end
            _blank(out, index, end)
            index = end
        elif source.startswith("/*", index):
            end = source.find("*/", index + 2)
            end = length if end < 0 else end + 2
            _blank(out, index, end)
            index = end
        elif source.startswith('"""', index):
            end = source.find('"""', index + 3)
            end = length if end < 0 else end + 3
            if strings:
                _blank(out, index + 3, end - 3)
            index = end
        elif source[index] in "\"'":
            quote = source[index]
            end = index + 1
            while end < length and source[end] != quote and source[end] != "\n":
                end += 2 if source[end] == "\\" else 1
            if strings:
                _blank(out, index + 1, min(end, length))
            index = end + 1
        else:
            index += 1
    return "".join(out)


def _blank(out: list[str], start: int, end: int) -> None:
    for position in range(start, min(end, len(out))):
        if out[position] != "\n":
            out[position] = " "


def matching_brace(mask: str, open_index: int) -> int:
    """Index of the brace closing the one at ``open_index``, or -1 when it never closes."""
    depth = 0
    for index in range(open_index, len(mask)):
        char = mask[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
    return -1


def java_skeleton(source: str, *, exclude: str = "", exclude_lineno: int = 0) -> str:
    """Package, imports, type headers, fields and method signatures (``;`` for bodies)."""
    mask = mask_java(source)
    out: list[str] = []
    # Declarations are printed from the source without its comments.
    _java_members(
        mask_java(source, strings=False), mask, 0, len(source), out,
        indent="", exclude=exclude, exclude_lineno=exclude_lineno,
    )
    return "\n".join(out) + ("\n" if out else "")


_TYPE_HEADER = re.compile(r"\b(class|interface|enum|record)\s+\w+")


def _java_members(
    source: str,
    mask: str,
    start: int,
    end: int,
    out: list[str],
    *,
    indent: str,
    exclude: str,
    exclude_lineno: int,
) -> None:
    """Walk the statements between ``start`` and ``end`` at one brace depth."""
    index = start
    piece_start = start
    while index < end:
        char = mask[index]
        if char == ";":
            text = " ".join(source[piece_start : index + 1].split())
            if text and text != ";":
                out.append(indent + (text if len(text) <= MAX_LINE else text[:MAX_LINE] + " ..."))
            index += 1
            piece_start = index
        elif char == "{":
            close = matching_brace(mask, index)
            close = end - 1 if close < 0 else close
            header = " ".join(mask[piece_start:index].split())
            header_text = " ".join(source[piece_start:index].split())
            lineno = source.count("\n", 0, index) + 1
            if _TYPE_HEADER.search(header):
                out.append(f"{indent}{header_text} {{")
                _java_members(source, mask, index + 1, close, out, indent=indent + "    ",
                              exclude=exclude, exclude_lineno=exclude_lineno)
                out.append(indent + "}")
            elif "(" in header and not header.rstrip().endswith("="):
                words = header.split("(", 1)[0].split()
                name = words[-1] if words else ""
                end_lineno = source.count("\n", 0, close) + 1
                target = name == exclude and (
                    not exclude_lineno
                    or source.count("\n", 0, piece_start) + 1 <= exclude_lineno <= end_lineno
                    or lineno <= exclude_lineno <= end_lineno
                )
                if header_text and not target:
                    out.append(f"{indent}{header_text};")
            elif header_text:
                # Initialisers (``static {``, array literals in field declarations): summarise.
                text = f"{header_text} {{ ... }}"
                if source[close + 1 : close + 2] == ";" or header.rstrip().endswith("="):
                    text += ";"
                out.append(indent + text)
            index = close + 1
            if index < end and mask[index] == ";":
                index += 1
            piece_start = index
        else:
            index += 1
