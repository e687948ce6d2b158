"""From a model's raw output to the code to inject.

Chat answers: pick the fenced block that holds the target function, drop prose around it.
Completion answers: cut at stop sequences and join with the prompt's head (CoderEval's prompt
ends inside the body, so the completion continues it). Then keep only the target function (with
its decorators) and, for Python, the imports it uses. Output that is empty, or cut off by the
token limit before the function is whole, gives no code (the runner reports ``no_code``).
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass

from codereval.benchmarks import family_of
from codereval.model import Language, Task
from codereval.prompting.prompts import Prompt, PromptStyle, is_program_task
from codereval.source import pyast
from codereval.source.skeleton import mask_java, matching_brace


@dataclass(frozen=True)
class Extraction:
    """``code`` is None when nothing usable came out; ``note`` says why or what was done."""

    code: str | None
    truncated: bool = False
    note: str = ""


def extract(raw: str, *, task: Task, prompt: Prompt, finish_reason: str = "") -> Extraction:
    truncated = finish_reason == "length"
    text = cut_at_stop(raw, prompt.stop)
    if not text.strip():
        return Extraction(None, truncated, "empty output")
    family = family_of(task)
    own = family.extract(text, task=task, prompt=prompt, truncated=truncated) if family else None
    if own is not None:
        return own
    if is_program_task(task):
        return _program(text, task=task, prompt=prompt, truncated=truncated)
    chat = prompt.style is PromptStyle.CHAT
    if task.language is Language.PYTHON:
        return python_code(text, name=task.name, head=prompt.head, chat=chat, truncated=truncated)
    if task.language is Language.JAVA:
        return java_code(text, name=task.name, head=prompt.head, chat=chat, truncated=truncated)
    return Extraction(text, truncated)


def cut_at_stop(text: str, stops: Iterable[str]) -> str:
    """The text before the first stop sequence (servers usually cut already; local models not)."""
    cut = len(text)
    for stop in stops:
        if stop:
            found = text.find(stop)
            if 0 <= found < cut:
                cut = found
    return text[:cut]


# ---------------------------------------------------------------------------- fences


@dataclass(frozen=True)
class Block:
    code: str
    closed: bool


_FENCE = re.compile(r"^[ \t]*(```+|~~~+)")


def fenced_blocks(text: str) -> list[Block]:
    """Markdown fenced blocks in order; an unclosed last fence runs to the end of the text."""
    blocks: list[Block] = []
    current: list[str] | None = None
    fence = ""
    for line in text.splitlines():
        match = _FENCE.match(line)
        if current is None:
            if match:
                current, fence = [], match.group(1)
        elif match and line.strip() == fence[0] * len(line.strip()) and line.strip():
            blocks.append(Block("\n".join(current) + "\n", closed=True))
            current = None
        else:
            current.append(line)
    if current is not None:
        blocks.append(Block("\n".join(current) + ("\n" if current else ""), closed=False))
    return blocks


def pick_block(blocks: list[Block], defines: re.Pattern[str]) -> Block | None:
    """The block that defines the target; else the longest one."""
    if not blocks:
        return None
    for block in blocks:
        if defines.search(block.code):
            return block
    return max(blocks, key=lambda block: len(block.code))


# ---------------------------------------------------------------------------- Python

_PY_CODE_LINE = re.compile(r"^(@|def |async def |class |import |from \S+ import )")


def _python_defines(name: str) -> re.Pattern[str]:
    return re.compile(rf"^[ \t]*(async[ \t]+)?def[ \t]+{re.escape(name)}[ \t]*\(", re.M)


def _code_part(
    text: str, defines: re.Pattern[str], *, chat: bool, code_line: re.Pattern[str], truncated: bool
) -> tuple[str, bool]:
    """The part of a model's answer that holds code: the fenced block defining the target (an
    unclosed fence means the answer was cut off), else a chat answer without its preamble."""
    block = pick_block(fenced_blocks(text), defines)
    if block is not None:
        return block.code, truncated or not block.closed
    if chat:
        return _drop_preamble(text, code_line), truncated
    return text, truncated


def python_code(text: str, *, name: str, head: str, chat: bool, truncated: bool) -> Extraction:
    defines = _python_defines(name)
    body, truncated = _code_part(
        text, defines, chat=chat, code_line=_PY_CODE_LINE, truncated=truncated
    )
    # A continuation of the prompt (or a chat answer with only the body) is joined with it.
    source = body if defines.search(body) else head + body
    tree, source = _parse_python(source)
    if tree is None:
        block_source = _python_def_block(source, name)
        if block_source is not None:
            tree, source = _parse_python(block_source)
    if tree is None:
        if truncated:
            return Extraction(None, True, "cut off at the token limit: the function is incomplete")
        # The model's own syntax error: keep it, the runner reports syntax_error.
        return Extraction(_python_def_block(source, name) or source, False, "does not parse")
    node = _find_function(tree, name)
    if node is None:
        if truncated:
            return Extraction(None, True, f"cut off before defining {name}")
        return Extraction(None, False, f"no function named {name} in the output")
    return Extraction(_python_function_source(source, tree, node), truncated)


def _drop_preamble(text: str, code_line: re.Pattern[str]) -> str:
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if code_line.match(line.lstrip()):
            return "".join(lines[index:])
    return text


def _parse_python(source: str) -> tuple[ast.Module | None, str]:
    """Parse as is, then with tabs expanded: the official prompt indents with tabs and models
    often continue with spaces, which Python refuses to mix."""
    for candidate in (source, source.expandtabs(4)):
        try:
            return pyast.parse(candidate), candidate
        except (SyntaxError, ValueError):
            continue
    return None, source


def _python_def_block(source: str, name: str) -> str | None:
    """The target ``def`` (with decorators) to the end of its indented block, by indentation:
    drops prose or junk after the function that keeps the whole text from parsing."""
    lines = source.splitlines(keepends=True)
    defines = _python_defines(name)
    start = next((i for i, line in enumerate(lines) if defines.match(line)), None)
    if start is None:
        return None
    indent = len(lines[start]) - len(lines[start].lstrip())
    first = start
    while first > 0 and lines[first - 1].strip().startswith("@"):
        first -= 1
    end = start + 1
    depth = lines[start].count("(") - lines[start].count(")")
    while end < len(lines):
        line = lines[end]
        stripped = line.strip()
        line_indent = len(line) - len(line.lstrip())
        if depth <= 0 and stripped and line_indent <= indent and not stripped.startswith(")"):
            break
        depth += line.count("(") - line.count(")")
        end += 1
    return textwrap.dedent("".join(lines[first:end]))


def _find_function(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return node
    for inner in ast.walk(tree):
        if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef) and inner.name == name:
            return inner
    return None


def _python_function_source(
    source: str, tree: ast.Module, node: ast.FunctionDef | ast.AsyncFunctionDef
) -> str:
    lines = source.splitlines(keepends=True)
    first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
    code = textwrap.dedent("".join(lines[first - 1 : node.end_lineno]))
    if not code.endswith("\n"):
        code += "\n"
    imports = _needed_imports(tree, node, lines)
    return _insert_imports(code, imports) if imports else code


def _needed_imports(
    tree: ast.Module, node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]
) -> list[str]:
    """Module-level imports the model wrote that bind names the function uses."""
    used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    needed: list[str] = []
    for stmt in tree.body:
        if not isinstance(stmt, ast.Import | ast.ImportFrom):
            continue
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            continue
        bound = {
            (alias.asname or alias.name).split(".")[0] for alias in stmt.names if alias.name != "*"
        }
        if bound & used:
            text = "".join(lines[stmt.lineno - 1 : stmt.end_lineno]).strip()
            needed.append(" ".join(text.split()) if "\n" in text and "(" not in text else text)
    return needed


def _insert_imports(code: str, imports: list[str]) -> str:
    """Put the imports first in the body (after the docstring): the function may be a method,
    where class-level imports would not be visible inside it."""
    try:
        func = pyast.parse(code).body[0]
    except (SyntaxError, IndexError):
        return code
    if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
        return code
    first = func.body[0]
    if first.lineno == func.lineno:
        return code  # a one-line function: no room without rewriting it
    lines = code.splitlines(keepends=True)
    indent = lines[first.lineno - 1][: first.col_offset]
    is_docstring = (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and (isinstance(first.value.value, str))
    )
    at = (first.end_lineno or first.lineno) if is_docstring else first.lineno - 1
    block = "".join(indent + line + "\n" for text in imports for line in text.splitlines())
    return "".join(lines[:at]) + block + "".join(lines[at:])


# ------------------------------------------------------------------------------ Java

_JAVA_CODE_LINE = re.compile(
    r"^(@|public |private |protected |static |final |abstract |synchronized |import |"
    r"[\w<>\[\],.? ]+\s+\w+\s*\()"
)
_NOT_DECLARATION = {"new", "return", "throw", "else", "if", "while", "for", "switch", "catch"}


def java_code(text: str, *, name: str, head: str, chat: bool, truncated: bool) -> Extraction:
    defines = re.compile(rf"\b{re.escape(name)}\s*\([^;]*?\)[^;{{]*\{{", re.S)
    body, truncated = _code_part(
        text, defines, chat=chat, code_line=_JAVA_CODE_LINE, truncated=truncated
    )
    span = java_method_span(body, name)
    source = body
    if span is None:
        # A continuation of the prompt: the official Java prompt ends at the body's brace.
        source = head + body
        span = java_method_span(source, name)
    if span is None:
        if truncated:
            return Extraction(None, True, f"cut off before defining {name}")
        return Extraction(None, False, f"no method named {name} in the output")
    start, end = span
    if end < 0:
        if truncated:
            return Extraction(None, True, "cut off at the token limit: the method is incomplete")
        return Extraction(source[start:].rstrip() + "\n", False, "unbalanced braces")
    return Extraction(_dedent_java(source[start : end + 1]) + "\n", truncated)


def java_method_span(source: str, name: str) -> tuple[int, int] | None:
    """(start, index of the closing brace) of the method declaration ``name``.

    The start includes annotations and modifiers but not the Javadoc. The end is -1 when the
    body never closes (cut-off output). None when there is no such declaration.
    """
    mask = mask_java(source)
    for match in re.finditer(rf"\b{re.escape(name)}\s*\(", mask):
        before = mask[: match.start()].rstrip()
        previous_word = re.search(r"([\w$]+)$", before)
        if (
            not before
            or before[-1] in ".=(,!&|+-*/?:"
            or (previous_word and previous_word.group(1) in _NOT_DECLARATION)
        ):
            continue
        close_paren = _matching_paren(mask, match.end() - 1)
        if close_paren < 0:
            continue
        after = mask[close_paren + 1 :]
        brace = re.match(r"\s*(throws\s+[\w.<>,\s]+?)?\s*\{", after)
        if brace is None:
            continue
        open_brace = close_paren + 1 + brace.end() - 1
        start = _declaration_start(mask, match.start())
        return start, matching_brace(mask, open_brace)
    return None


def _matching_paren(mask: str, open_index: int) -> int:
    depth = 0
    for index in range(open_index, len(mask)):
        if mask[index] == "(":
            depth += 1
        elif mask[index] == ")":
            depth -= 1
            if depth == 0:
                return index
    return -1


def _declaration_start(mask: str, name_index: int) -> int:
    """Back from the name to just after the previous ``;``, ``{`` or ``}`` (annotation
    arguments may hold parentheses and braces, so those inside ``(...)`` are skipped)."""
    depth = 0
    index = name_index - 1
    while index >= 0:
        char = mask[index]
        if char == ")":
            depth += 1
        elif char == "(":
            depth -= 1
        elif char in ";{}" and depth == 0:
            break
        index -= 1
    start = index + 1
    while start < name_index and mask[start].isspace():
        start += 1
    return start


def _dedent_java(code: str) -> str:
    """The first line was cut at the declaration: dedent the rest by the closing brace's
    indentation so the method reads as written."""
    lines = code.splitlines()
    if len(lines) < 2:
        return code
    last = lines[-1]
    indent = len(last) - len(last.lstrip())
    if indent == 0:
        return code
    prefix = last[:indent]
    rest = [line[indent:] if line.startswith(prefix) else line.lstrip() for line in lines[1:]]
    return "\n".join([lines[0], *rest])


# ---------------------------------------------------------------------- HumanEval(-X)


def _program(text: str, *, task: Task, prompt: Prompt, truncated: bool) -> Extraction:
    """HumanEval-style tasks: the runner writes prefix + code + test, so ``code`` is what
    follows the prompt (the body). A chat answer's whole function is cut back to its body."""
    chat = prompt.style is PromptStyle.CHAT
    prefix = task.extra.get("prefix", prompt.head)
    if task.language is Language.PYTHON:
        if chat:
            found = python_code(text, name=task.name, head=prefix, chat=True, truncated=truncated)
            if found.code is None:
                return found
            return Extraction(_python_body(found.code), found.truncated, found.note)
        return _python_continuation(text, prefix=prefix, truncated=truncated)
    if chat:
        block = pick_block(fenced_blocks(text), re.compile(rf"\b{re.escape(task.name)}\b"))
        code = block.code if block is not None else text
        truncated = truncated or (block is not None and not block.closed)
        body = _brace_function_body(code, task.name)
        text = body if body is not None else code
    return _brace_continuation(text, prefix=prefix, truncated=truncated)


def _python_continuation(text: str, *, prefix: str, truncated: bool) -> Extraction:
    try:
        pyast.parse(prefix + text)
    except (SyntaxError, ValueError):
        if truncated:
            return Extraction(None, True, "cut off at the token limit: the function is incomplete")
    return Extraction(text, truncated)


def _python_body(function: str) -> str:
    """The statements of a function after its docstring, indented by four spaces."""
    func = pyast.parse(function).body[0]
    assert isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef)
    statements = func.body
    first: ast.stmt = statements[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and len(statements) > 1
    ):
        first = statements[1]
    if first.lineno == func.lineno:
        return "    " + ast.unparse(first) + "\n"
    lines = function.splitlines(keepends=True)
    body = textwrap.dedent("".join(lines[first.lineno - 1 : func.end_lineno]))
    return textwrap.indent(body, "    ")


def _brace_function_body(code: str, name: str) -> str | None:
    """Text after the opening brace of function ``name`` (through its closing brace)."""
    mask = mask_java(code)
    for match in re.finditer(rf"\b{re.escape(name)}\b", mask):
        brace = mask.find("{", match.end())
        semicolon = mask.find(";", match.end())
        if brace < 0 or (0 <= semicolon < brace and "=>" not in mask[match.end() : brace]):
            continue
        rest = code[brace + 1 :]
        return rest[1:] if rest.startswith("\n") else rest
    return None


def _brace_continuation(text: str, *, prefix: str, truncated: bool) -> Extraction:
    """Cut where the braces the prefix left open are all closed; close the enclosing ones
    (e.g. Java's class) when the model stopped right after the function."""
    open_in_prefix = _open_braces(prefix)
    if open_in_prefix <= 0:
        return Extraction(text, truncated)
    mask = mask_java(text)
    depth = open_in_prefix
    for index, char in enumerate(mask):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return Extraction(text[: index + 1] + "\n", truncated)
    if depth < open_in_prefix:
        return Extraction(text.rstrip() + "\n" + "}\n" * depth, truncated)
    if truncated:
        return Extraction(None, True, "cut off at the token limit: the function is incomplete")
    return Extraction(text, False, "unbalanced braces")


def _open_braces(code: str) -> int:
    mask = mask_java(code)
    return mask.count("{") - mask.count("}")
