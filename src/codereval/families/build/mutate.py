"""Small mutants of a reference function, to measure how much a recorded test can tell apart.

Each mutant changes one site of the reference: an arithmetic operator (``+``/``-``, ``*``/``/``,
``//``/``%``), a comparison (``<``/``<=``, ``>``/``>=``, ``==``/``!=``, ``in``/``not in``,
``is``/``is not``), a boolean operator (``and``/``or``), a ``not`` dropped, an ``if`` or
``while`` condition negated, a constant changed (integers +1, booleans flipped, a non-empty
string emptied), or a returned value replaced by ``None``. The docstring is never touched. A
mutant equal to the reference as code, or not valid Python, is skipped. At most ``limit`` are
kept, spread over the sites in order so every kind that applies is represented.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator

from codereval.source.inject import strip_first_indent

_ARITHMETIC: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mod,
    ast.Mod: ast.FloorDiv,
}
_COMPARISON: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}

def _sites(function: ast.FunctionDef) -> Iterator[tuple[str, ast.AST, Callable[[ast.AST], None]]]:
    first = function.body[0]
    docstring = first.value if ast.get_docstring(function) and isinstance(first, ast.Expr) else None
    for node in ast.walk(function):
        if node is docstring:
            continue
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:

            def swap_op(n: ast.AST) -> None:
                assert isinstance(n, ast.BinOp)
                n.op = _ARITHMETIC[type(n.op)]()

            yield "operator", node, swap_op
        elif isinstance(node, ast.Compare) and type(node.ops[0]) in _COMPARISON:

            def swap_cmp(n: ast.AST) -> None:
                assert isinstance(n, ast.Compare)
                n.ops[0] = _COMPARISON[type(n.ops[0])]()

            yield "comparison", node, swap_cmp
        elif isinstance(node, ast.BoolOp):

            def swap_bool(n: ast.AST) -> None:
                assert isinstance(n, ast.BoolOp)
                n.op = ast.Or() if isinstance(n.op, ast.And) else ast.And()

            yield "boolean", node, swap_bool
        elif isinstance(node, ast.If | ast.While):

            def negate(n: ast.AST) -> None:
                assert isinstance(n, ast.If | ast.While)
                n.test = ast.UnaryOp(op=ast.Not(), operand=n.test)

            yield "condition", node, negate
        elif isinstance(node, ast.Return) and node.value is not None:
            if isinstance(node.value, ast.Constant) and node.value.value is None:
                continue

            def to_none(n: ast.AST) -> None:
                assert isinstance(n, ast.Return)
                n.value = ast.Constant(value=None)

            yield "return", node, to_none
        elif isinstance(node, ast.Constant) and _mutable_constant(node.value):

            def change(n: ast.AST) -> None:
                assert isinstance(n, ast.Constant)
                value = n.value
                if isinstance(value, bool):
                    n.value = not value
                elif isinstance(value, int):
                    n.value = value + 1
                elif isinstance(value, str):
                    n.value = ""

            yield "constant", node, change


def _mutable_constant(value: object) -> bool:
    return isinstance(value, bool | int) or (isinstance(value, str) and value != "")


def _not_dropped(function: ast.FunctionDef) -> Iterator[tuple[str, ast.AST]]:
    for node in ast.walk(function):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield "not", node


def mutants(code: str, name: str, *, limit: int = 12) -> list[tuple[str, str]]:
    """(kind, mutant code) for the function ``name`` defined in ``code``; [] if none is found."""
    # A method's docstring may have lines at column 0, which textwrap.dedent gives up on.
    tree = ast.parse(strip_first_indent(code)[0])
    function = next(
        (
            n
            for n in tree.body
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name
        ),
        None,
    )
    if not isinstance(function, ast.FunctionDef):
        return []
    original = ast.unparse(function)
    order = {id(n): i for i, n in enumerate(ast.walk(function))}
    changes: list[tuple[str, int, Callable[[ast.AST], None] | None]] = [
        (kind, order[id(node)], apply) for kind, node, apply in _sites(function)
    ]
    changes += [(kind, order[id(node)], None) for kind, node in _not_dropped(function)]
    # Round-robin over kinds, each kind's sites in order: every kind that applies shows up.
    by_kind: dict[str, list[tuple[int, Callable[[ast.AST], None] | None]]] = {}
    for kind, index, apply in changes:
        by_kind.setdefault(kind, []).append((index, apply))
    queue: list[tuple[str, int, Callable[[ast.AST], None] | None]] = []
    while any(by_kind.values()):
        for kind in list(by_kind):
            if by_kind[kind]:
                index, apply = by_kind[kind].pop(0)
                queue.append((kind, index, apply))
    made: list[tuple[str, str]] = []
    seen = {original}
    for kind, index, apply in queue:
        if len(made) >= limit:
            break
        clone = copy.deepcopy(function)
        nodes = list(ast.walk(clone))
        target = nodes[index]
        if apply is not None:
            apply(target)
        else:
            # Drop a `not`: replace the UnaryOp by its operand in its parent.
            assert isinstance(target, ast.UnaryOp)
            for parent in nodes:
                for field, value in ast.iter_fields(parent):
                    if value is target:
                        setattr(parent, field, target.operand)
                    elif isinstance(value, list) and target in value:
                        value[value.index(target)] = target.operand
        ast.fix_missing_locations(clone)
        try:
            text = ast.unparse(clone)
            ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        if text not in seen:
            seen.add(text)
            made.append((kind, text + "\n"))
    return made


__all__ = ["mutants"]
