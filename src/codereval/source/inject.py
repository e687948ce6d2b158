"""Putting a generated Python function into a file: find the target's span, re-indent, splice.

Two rules, both from CoderEval:
- the official test modules: replace the LAST ``def name`` (or ``def _name``) in the module;
- our own task tests: replace the function at ``lineno..end_lineno`` of the project file.
In both, the original decorators are kept unless the sample brings its own, and the sample takes
the indentation of the original ``def`` (tabs included), so methods land inside their class.
Lines inside multi-line strings are never re-indented: that would change the string.
"""

from __future__ import annotations

import ast
import functools
import io
import tokenize
from dataclasses import dataclass

from codereval.source import pyast


class InjectionError(Exception):
    """The sample (``syntax``) or the target file cannot be spliced; ``detail`` says why."""

    def __init__(self, detail: str, *, syntax: bool) -> None:
        super().__init__(detail)
        self.detail = detail
        self.syntax = syntax


@dataclass(frozen=True, kw_only=True)
class Span:
    """1-based inclusive line span of a definition, and the ``def`` line's indentation."""

    start: int
    end: int
    def_line: int
    indent: str


@dataclass(frozen=True, kw_only=True)
class Injected:
    text: str
    # Where the sample's lines now sit in ``text`` (1-based, inclusive).
    start: int
    end: int


def syntax_problem(code: str) -> str | None:
    """None when ``code`` (after dedenting) parses, else the error in one line."""
    try:
        # compile, not just parse: `return` outside a function is only caught there.
        compile(dedent_code(code), "<sample>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return _describe(exc)
    except ValueError as exc:  # null bytes
        return f"SyntaxError: {exc}"
    return None


def _describe(exc: SyntaxError) -> str:
    where = f" (line {exc.lineno})" if exc.lineno else ""
    return f"{type(exc).__name__}: {exc.msg}{where}"


def _leading(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def dedent_code(code: str) -> str:
    """Shift the sample left so its first code line starts at column 0.

    Only the first line's indentation is removed from each line that has it; lines that do not
    (a string's continuation written at column 0) are left alone.
    """
    lines = code.splitlines()
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        return ""
    text, _ = strip_first_indent("\n".join(lines))
    return text + "\n"


def strip_first_indent(code: str) -> tuple[str, str]:
    """(code shifted left, the indentation removed): the first code line's indentation comes
    off every line that has it.

    Unlike ``textwrap.dedent``, a line with less (a docstring's continuation at column 0, as
    real projects write them) does not stop the shift: it is left as it is.
    """
    lines = code.splitlines(keepends=True)
    first = next((line for line in lines if line.strip()), "")
    indent = _leading(first)
    if not indent:
        return code, ""
    shifted = [line[len(indent) :] if line.startswith(indent) else line for line in lines]
    return "".join(shifted), indent


def _string_continuation_lines(code: str) -> set[int]:
    """Line numbers (1-based) that start inside a multi-line string or f-string."""
    inside: set[int] = set()
    fstring_starts: list[int] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            kind = tok.type
            if kind == tokenize.STRING and tok.end[0] > tok.start[0]:
                inside.update(range(tok.start[0] + 1, tok.end[0] + 1))
            elif tok.exact_type == getattr(tokenize, "FSTRING_START", -1):
                fstring_starts.append(tok.start[0])
            elif tok.exact_type == getattr(tokenize, "FSTRING_END", -1) and fstring_starts:
                first = fstring_starts.pop()
                inside.update(range(first + 1, tok.end[0] + 1))
    except (tokenize.TokenError, SyntaxError) as exc:
        raise InjectionError(f"SyntaxError: {exc}", syntax=True) from None
    return inside


def reindent(code: str, indent: str) -> str:
    """Prefix every code line of the dedented ``code`` with ``indent`` (strings untouched)."""
    code = dedent_code(code)
    if not indent:
        return code
    skip = _string_continuation_lines(code)
    out = []
    for number, line in enumerate(code.splitlines(), start=1):
        if number in skip or not line.strip():
            out.append(line)
        else:
            out.append(indent + line)
    return "\n".join(out) + "\n"


def _defs(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def _span(
    node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str], *, with_decorators: bool
) -> Span:
    start = node.lineno
    if with_decorators and node.decorator_list:
        start = node.decorator_list[0].lineno
    end = node.end_lineno or node.lineno
    return Span(start=start, end=end, def_line=node.lineno, indent=_leading(lines[node.lineno - 1]))


def _parse_target(source: str, *, what: str) -> ast.Module:
    try:
        return pyast.parse(source)
    except SyntaxError as exc:
        raise InjectionError(f"{what} does not parse: {_describe(exc)}", syntax=False) from None


def _sample_has_decorators(code: str) -> bool:
    tree = pyast.parse(dedent_code(code))
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and bool(node.decorator_list)
        for node in tree.body[:1]
    )


# Every sample of a task asks for the same span of the same file: parsing a project file of a
# thousand lines costs milliseconds, a cached answer nothing (Span is frozen).
@functools.lru_cache(maxsize=64)
def last_def_span(source: str, name: str, *, with_decorators: bool = False) -> Span:
    """The last ``def name`` in ``source``, leading underscores aside (the official platform's
    rule: ``def _name`` too, and a name-mangled ``def __name`` whose record says ``_name``)."""
    tree = _parse_target(source, what="the test module")
    lines = source.splitlines()
    found = [node for node in _defs(tree) if node.name.lstrip("_") == name.lstrip("_")]
    if not found:
        raise InjectionError(f"no 'def {name}' in the test module", syntax=False)
    # "Last" by position in the file, as a text search from the end would find it.
    node = max(found, key=lambda n: n.lineno)
    return _span(node, lines, with_decorators=with_decorators)


@functools.lru_cache(maxsize=64)
def span_at(
    source: str, name: str, *, lineno: int, end_lineno: int, with_decorators: bool = False
) -> Span:
    """The function named ``name`` whose ``def`` lies in ``lineno..end_lineno``.

    Falls back to the raw line span when no such definition exists (a record whose numbers
    point at something else), taking the indentation of its first line.
    """
    tree = _parse_target(source, what="the project file")
    lines = source.splitlines()
    wanted = {name, "_" + name.lstrip("_"), name.lstrip("_")}
    candidates = [
        node
        for node in _defs(tree)
        if node.name in wanted
        and (lineno <= node.lineno <= max(end_lineno, lineno) or
             (node.decorator_list and lineno <= node.decorator_list[0].lineno <= end_lineno))
    ]
    if candidates:
        first = min(candidates, key=lambda n: n.lineno)
        return _span(first, lines, with_decorators=with_decorators)
    if not 1 <= lineno <= end_lineno <= len(lines):
        raise InjectionError(
            f"lines {lineno}..{end_lineno} are outside the file ({len(lines)} lines)", syntax=False
        )
    return Span(start=lineno, end=end_lineno, def_line=lineno, indent=_leading(lines[lineno - 1]))


def splice(source: str, code: str, span: Span) -> Injected:
    """Replace ``span`` of ``source`` with ``code`` indented like the original ``def``."""
    body = reindent(code, span.indent)
    lines = source.splitlines(keepends=True)
    before, after = lines[: span.start - 1], lines[span.end:]
    if before and not before[-1].endswith("\n"):
        before[-1] += "\n"
    new_lines = body.splitlines(keepends=True)
    text = "".join([*before, *new_lines, *after])
    start = len(before) + 1
    return Injected(text=text, start=start, end=start + len(new_lines) - 1)


def check_injected(result: Injected) -> Injected:
    """``result`` when its whole text compiles, else the InjectionError saying where it does
    not (in the sample: a syntax error; outside it: the file was broken by the splice)."""
    try:
        compile(result.text, "<injected>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        line = exc.lineno or 0
        in_sample = result.start <= line <= result.end
        raise InjectionError(
            f"{_describe(exc)} after injection" + ("" if in_sample else " (outside the sample)"),
            syntax=in_sample,
        ) from None
    return result


def last_def_text(source: str, name: str) -> str:
    """The function :func:`inject_last_def` would replace, decorators included, dedented: in an
    official test module, the platform's reference."""
    span = last_def_span(source, name, with_decorators=True)
    lines = source.splitlines(keepends=True)[span.start - 1:span.end]
    return dedent_code("".join(lines))


def inject_last_def(source: str, code: str, name: str, *, check: bool = True) -> Injected:
    """The official rule: replace the last ``def name``/``def _name`` of a test module.

    ``check=False`` leaves the whole text's compile (:func:`check_injected`) to the caller:
    the test module is the file that runs, so its run tells first whether it compiled."""
    problem = syntax_problem(code)
    if problem:
        raise InjectionError(problem, syntax=True)
    span = last_def_span(source, name, with_decorators=_sample_has_decorators(code))
    injected = splice(source, code, span)
    return check_injected(injected) if check else injected


@functools.lru_cache(maxsize=256)
def compiles(source: str) -> bool:
    """Does ``source`` compile here (this interpreter's grammar)?"""
    try:
        compile(source, "<source>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def inject_at(source: str, code: str, name: str, *, lineno: int, end_lineno: int) -> Injected:
    """Our rule: replace the function at ``lineno..end_lineno`` of a project file."""
    problem = syntax_problem(code)
    if problem:
        raise InjectionError(problem, syntax=True)
    span = span_at(
        source, name, lineno=lineno, end_lineno=end_lineno,
        with_decorators=_sample_has_decorators(code),
    )
    return check_injected(splice(source, code, span))
