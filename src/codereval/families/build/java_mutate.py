"""Small mutants of a reference Java method, to measure how much a recorded test can tell apart.

The Java counterpart of ``mutate.py``. Each mutant changes one site of the method's body: an
arithmetic operator (``+``/``-``, ``*``/``/``, ``%`` to ``*``; a ``+`` with a string literal on
either side, string concatenation, is left alone), a comparison (``<``/``<=``, ``>``/``>=``,
``==``/``!=``), a boolean operator (``&&``/``||``), a ``!`` dropped, an ``if`` or ``while``
condition negated, a constant changed (decimal integers +1, booleans flipped, a non-empty string
emptied), a returned value replaced (by ``null`` for a reference return type, ``0`` or ``0.0``
for a numeric one, its negation for ``boolean``), or an increment turned into a decrement (and
back). The method is parsed with tree-sitter inside a stand-in class and every change is a text
edit on the byte range of one node, so formatting, comments, Javadoc, annotations and the
signature stay as written. A mutant equal to the reference, or that tree-sitter no longer
parses, is skipped. At most ``limit`` are kept, spread over the sites in order so every kind
that applies is represented.

Some mutants tree-sitter cannot tell apart from valid Java would not compile: flipping the
constant condition of a loop (``while (true)``, unreachable code) and changing an integer in a
``case`` label (a duplicate label) are therefore not made, and an integer that would overflow its
type is not incremented. Others (a ``+`` between two ``String`` variables, ``byte b = 127``) are
out of reach of a syntax tree and remain possible.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from codereval.analysis.java import METHOD_DECLARATIONS, java_parser, walk_nodes

_PREFIX = b"class __M__ {\n"
_SUFFIX = b"\n}\n"
_OFFSET = len(_PREFIX)  # where the method's text starts in the stand-in class

_ARITHMETIC = {b"+": b"-", b"-": b"+", b"*": b"/", b"/": b"*", b"%": b"*"}
_COMPARISON = {b"<": b"<=", b"<=": b"<", b">": b">=", b">=": b">", b"==": b"!=", b"!=": b"=="}
_BOOLEAN = {b"&&": b"||", b"||": b"&&"}
_UPDATE = {b"++": b"--", b"--": b"++"}
_UPDATE_TOKENS = ("++", "--")
_BOOLEANS = ("true", "false")
_QUOTES = ('"', '"""')
# Bytes that fuse into one token with a neighbour of the same class (`return` `x`, `<` `-`).
_WORD = frozenset(
    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$" + bytes(range(0x80, 0x100))
)
_OPERATOR = frozenset(b"+-*/%<>=!&|^~?:")
_INT_MAX = 2**31 - 1
_LONG_MAX = 2**63 - 1
_LOOPS = ("while_statement", "do_statement", "for_statement")
# Bodies of their own: a `return` inside one does not return from the method.
_OWN_BODIES = ("lambda_expression", "class_body")


@dataclass(frozen=True)
class _Edit:
    kind: str
    start: int  # byte offsets into the method's text
    end: int
    replacement: bytes


def java_mutants(method: str, limit: int) -> list[str]:
    """Up to ``limit`` mutants of ``method``, the source of one Java method declaration."""
    return [text for _, text in java_mutants_by_kind(method, limit)]


def java_mutants_by_kind(method: str, limit: int) -> list[tuple[str, str]]:
    """(kind, mutant) pairs, as :func:`java_mutants`; [] when ``method`` does not parse.

    Kinds: ``operator``, ``comparison``, ``boolean``, ``not``, ``condition``, ``constant``,
    ``return``, ``increment``.
    """
    source = method.encode("utf-8")
    declaration = _declaration(source)
    if declaration is None:
        return []
    body = declaration.child_by_field_name("body")
    if body is None:
        return []
    edits = list(_edits(body, _return_replacement(declaration)))
    # Round-robin over kinds, each kind's sites in order: every kind that applies shows up.
    by_kind: dict[str, list[_Edit]] = {}
    for edit in edits:
        by_kind.setdefault(edit.kind, []).append(edit)
    queue: list[_Edit] = []
    while any(by_kind.values()):
        for pending in by_kind.values():
            if pending:
                queue.append(pending.pop(0))
    made: list[tuple[str, str]] = []
    seen = {source}
    for edit in queue:
        if len(made) >= limit:
            break
        mutant = _apply(source, edit)
        if mutant in seen or _parse(mutant).has_error:
            continue
        seen.add(mutant)
        made.append((edit.kind, mutant.decode("utf-8")))
    return made


def _parse(method: bytes) -> Node:
    return java_parser().parse(_PREFIX + method + _SUFFIX).root_node


def _declaration(source: bytes) -> Node | None:
    root = _parse(source)
    if root.has_error:
        return None
    return next((n for n in walk_nodes(root) if n.type in METHOD_DECLARATIONS), None)


def _return_replacement(declaration: Node) -> bytes | None:
    """What a mutated `return` gives back (``!`` for a negation), None when nothing can."""
    if declaration.type != "method_declaration":
        return None  # a constructor
    if declaration.child_by_field_name("dimensions") is not None:
        return b"null"  # `int f()[]`, an array
    returned = declaration.child_by_field_name("type")
    if returned is None or returned.type == "void_type":
        return None
    if returned.type == "boolean_type":
        return b"!"
    if returned.type == "integral_type":
        return b"0"
    if returned.type == "floating_point_type":
        return b"0.0f" if _text(returned) == b"float" else b"0.0"
    return b"null"


def _edits(body: Node, returned: bytes | None) -> Iterator[_Edit]:
    """The edits of ``body``'s sites in document order; ``returned`` as _return_replacement."""
    # A stack, not recursion: a long string concatenation nests deeper than Python recurses.
    stack: list[tuple[Node, bool]] = [(body, False)]
    while stack:
        node, in_own_body = stack.pop()
        kind = node.type
        if kind in ("annotation", "marker_annotation") or kind.endswith("comment"):
            continue
        yield from _site(node, returned if not in_own_body else None)
        own = in_own_body or kind in _OWN_BODIES
        stack.extend((child, own) for child in reversed(node.children))


def _site(node: Node, returned: bytes | None) -> Iterator[_Edit]:
    kind = node.type
    if kind == "binary_expression":
        yield from _binary(node)
    elif kind == "unary_expression":
        operator = node.child_by_field_name("operator")
        operand = node.child_by_field_name("operand")
        if operator is not None and operand is not None and _text(operator) == b"!":
            # From the `!` to its operand: `! /* c */ x` becomes `x`.
            yield _Edit("not", operator.start_byte - _OFFSET, operand.start_byte - _OFFSET, b"")
    elif kind == "update_expression":
        operator = next((c for c in node.children if c.type in _UPDATE_TOKENS), None)
        if operator is not None:
            yield _edit("increment", operator, _UPDATE[_text(operator)])
    elif kind in ("if_statement", "while_statement"):
        condition = node.child_by_field_name("condition")
        inner = _inside(condition)
        # `while (true)` negated leaves its body unreachable, which javac refuses.
        constant = kind == "while_statement" and inner is not None and inner.type in _BOOLEANS
        if condition is not None and inner is not None and not constant:
            yield _edit("condition", condition, b"(!(" + _text(condition)[1:-1] + b"))")
    elif kind == "return_statement" and returned is not None:
        value = _inside(node)
        if value is not None and value.type != "null_literal":
            replacement = b"!(" + _text(value) + b")" if returned == b"!" else returned
            yield _edit("return", value, replacement)
    elif kind == "decimal_integer_literal":
        changed = _incremented(_text(node))
        if changed is not None and not _in_case_label(node):
            yield _edit("constant", node, changed)
    elif kind in _BOOLEANS:
        if not _is_loop_condition(node):
            yield _edit("constant", node, b"false" if kind == "true" else b"true")
    elif kind == "string_literal" and any(c.type not in _QUOTES for c in node.children):
        yield _edit("constant", node, b'""')


def _edit(kind: str, node: Node, replacement: bytes) -> _Edit:
    """An edit of ``node``'s bytes, found in the stand-in class, on the method's own text."""
    return _Edit(kind, node.start_byte - _OFFSET, node.end_byte - _OFFSET, replacement)


def _binary(node: Node) -> Iterator[_Edit]:
    operator = node.child_by_field_name("operator")
    if operator is None:
        return
    symbol = _text(operator)
    if symbol in _ARITHMETIC:
        if symbol == b"+" and (_stringy(node.child_by_field_name("left")) or _stringy(
            node.child_by_field_name("right")
        )):
            return
        yield _edit("operator", operator, _ARITHMETIC[symbol])
    elif symbol in _COMPARISON:
        yield _edit("comparison", operator, _COMPARISON[symbol])
    elif symbol in _BOOLEAN:
        yield _edit("boolean", operator, _BOOLEAN[symbol])


def _stringy(node: Node | None) -> bool:
    """A string literal, or a concatenation or parenthesis around one: `+` is concatenation."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current is None:
            continue
        if current.type == "string_literal":
            return True
        if current.type == "parenthesized_expression":
            stack.append(_inside(current))
        elif current.type == "binary_expression":
            operator = current.child_by_field_name("operator")
            if operator is not None and _text(operator) == b"+":
                stack.append(current.child_by_field_name("left"))
                stack.append(current.child_by_field_name("right"))
    return False


def _incremented(literal: bytes) -> bytes | None:
    suffix = literal[-1:] if literal[-1:] in (b"l", b"L") else b""
    digits = literal[: len(literal) - len(suffix)].replace(b"_", b"")
    if not digits.isdigit():
        return None
    value = int(digits) + 1
    if value > (_LONG_MAX if suffix else _INT_MAX):
        return None
    return str(value).encode() + suffix


def _inside(parenthesized: Node | None) -> Node | None:
    """The expression in ``(...)`` (or after ``return``), comments aside."""
    if parenthesized is None:
        return None
    return next((c for c in parenthesized.named_children if not c.type.endswith("comment")), None)


def _in_case_label(node: Node) -> bool:
    parent = node.parent
    while parent is not None and parent.type not in ("block", "switch_block"):
        if parent.type == "switch_label":
            return True
        parent = parent.parent
    return False


def _is_loop_condition(node: Node) -> bool:
    """`while (true)`, `do ... while (false)`, `for (;; true)`: flipping leaves dead code."""
    parent = node.parent
    if parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    return parent is not None and parent.type in _LOOPS


def _apply(source: bytes, edit: _Edit) -> bytes:
    return _join(_join(source[: edit.start], edit.replacement), source[edit.end :])


def _join(left: bytes, right: bytes) -> bytes:
    """left + right, with a space where their touching bytes would fuse into one token."""
    if left and right:
        a, b = left[-1], right[0]
        if (a in _WORD and b in _WORD) or (a in _OPERATOR and b in _OPERATOR):
            return left + b" " + right
    return left + right


def _text(node: Node) -> bytes:
    return node.text or b""


__all__ = ["java_mutants", "java_mutants_by_kind"]
