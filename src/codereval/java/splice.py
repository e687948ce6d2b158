"""Putting CoderUJB samples into Java files: a method over a line span, a test into its class.

CoderUJB's own harness replaces lines ``start..end`` of the file with the generation (FCG, APR)
and judges syntax with a Java parser before anything is compiled; here the parser is
tree-sitter's Java grammar (already used by ``codereval.analysis``), and a file is syntactically
fine when its tree holds no error and no missing node.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from tree_sitter import Node, Parser


class SpliceError(Exception):
    """The task's span or test class does not fit the file (the task's fault, not the sample's)."""


@cache
def _parser() -> Parser:
    import tree_sitter_java
    from tree_sitter import Language as TSLanguage

    return Parser(TSLanguage(tree_sitter_java.language()))


def parses(source: str) -> bool:
    """Does ``source`` (a whole compilation unit) parse as Java without errors?"""
    # has_error covers error and missing nodes anywhere below the root.
    return not _parser().parse(source.encode("utf-8")).root_node.has_error


def replace_lines(source: str, code: str, *, start: int, end: int, where: str = "") -> str:
    """``source`` with its lines ``start..end`` (1-based, inclusive) replaced by ``code``."""
    lines = source.splitlines(keepends=True)
    if not 1 <= start <= end <= len(lines):
        raise SpliceError(f"lines {start}..{end} are outside {where or 'the file'} "
                          f"({len(lines)} lines)")
    body = code if code.endswith("\n") else code + "\n"
    return "".join([*lines[: start - 1], body, *lines[end:]])


def add_to_class(source: str, code: str, *, class_name: str, where: str = "") -> str:
    """``source`` with ``code`` (one or more members) added at the end of class ``class_name``.

    ``class_name`` is the simple name of a top-level class of the file; its closing brace is
    found in the syntax tree, so braces in strings and comments do not mislead it.
    """
    tree = _parser().parse(source.encode("utf-8"))
    for node in tree.root_node.children:
        if node.type != "class_declaration":
            continue
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name is None or body is None or name.text is None:
            continue
        if name.text.decode("utf-8") != class_name:
            continue
        data = source.encode("utf-8")
        close = body.end_byte - 1
        if data[close:close + 1] != b"}":
            break
        member = code if code.endswith("\n") else code + "\n"
        before = data[:close].decode("utf-8")
        if not before.endswith("\n"):
            before += "\n"
        return before + member + data[close:].decode("utf-8")
    raise SpliceError(f"class {class_name} not found in {where or 'the test file'}")


def annotated_tests(code: str) -> list[str]:
    """Names of the methods annotated ``@Test`` in ``code`` (one method or several, as a
    model writes them), in order; [] when none is annotated or the code does not parse."""
    return _methods(code, _annotated_test)


def _methods(code: str, chosen: Callable[[Node], bool]) -> list[str]:
    """Names of the methods of ``code`` (a class body's members) that ``chosen`` accepts, in
    order."""
    wrapped = "class __Sample__ {\n" + code + "\n}\n"
    tree = _parser().parse(wrapped.encode("utf-8"))
    names: list[str] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "method_declaration" and chosen(node):
            name = node.child_by_field_name("name")
            if name is not None and name.text is not None:
                names.append(name.text.decode("utf-8"))
        stack.extend(reversed(node.children))
    return names


_TEST_ANNOTATION = re.compile(r"@(?:[\w.]*\.)?Test\b")


def is_junit3_test_file(source: str) -> bool:
    """A test class that annotates nothing ``@Test``: JUnit 3's, whose tests are its public
    ``test*`` methods (Commons Codec's and Lang's older suites)."""
    return _TEST_ANNOTATION.search(source) is None


def declared_tests(code: str, *, junit3: bool = False) -> list[str]:
    """The test methods ``code`` declares: those annotated ``@Test``; in a JUnit 3 class
    (``junit3``), when none is annotated, its public void ``test*`` methods without
    parameters, the ones JUnit 3 runs."""
    names = annotated_tests(code)
    if names or not junit3:
        return names
    return _methods(code, _junit3_test)


def _junit3_test(method: Node) -> bool:
    name = method.child_by_field_name("name")
    kind = method.child_by_field_name("type")
    parameters = method.child_by_field_name("parameters")
    modifiers = next((c for c in method.children if c.type == "modifiers"), None)
    return (
        name is not None
        and (name.text or b"").startswith(b"test")
        and kind is not None
        and kind.type == "void_type"
        and parameters is not None
        and parameters.named_child_count == 0
        and modifiers is not None
        and any(c.type == "public" for c in modifiers.children)
    )


def _annotated_test(method: Node) -> bool:
    for child in method.children:
        if child.type != "modifiers":
            continue
        for modifier in child.children:
            if modifier.type in ("marker_annotation", "annotation"):
                name = modifier.child_by_field_name("name")
                text = name.text.decode("utf-8") if name is not None and name.text else ""
                if text.rsplit(".", 1)[-1] == "Test":
                    return True
    return False
