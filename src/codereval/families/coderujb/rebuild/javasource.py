"""The pieces of a Java file CoderUJB's task construction reads: its functions (with their
comments, signatures and rows), its class's contexts and its indent.

Rules as CoderUJB's ``code_parser`` applies them (docs/coderujb.md, "Tasks from rebuilt bugs"):
the text is normalised to ``\\n`` line ends without a final newline; rows are 0-based; a
function's ``source`` is its whole lines (indentation included); its comment is the comments
right above it, nearest first; its signature is its text up to its body.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from codereval.analysis.java import java_parser

FUNCTIONS = ("method_declaration", "constructor_declaration")
# Where a function counts as a class's member (not an interface's): CoderUJB's "complete".
_MEMBER_OF = {"method_declaration": ("class_body", "enum_body_declarations"),
              "constructor_declaration": ("class_body",)}


class ContextError(Exception):
    """The file has no top-level class to take contexts from."""


def normalise(text: str) -> str:
    """CoderUJB reads files as ``"\\n".join(text.splitlines())``."""
    return "\n".join(text.splitlines())


@dataclass(frozen=True, kw_only=True)
class Function:
    name: str
    start: int  # 0-based rows, inclusive
    end: int
    source: str  # the whole lines start..end
    code: str  # the node's own text
    comment: str
    signature: str  # from the function's first byte to its body's
    complete: bool
    nested: bool


@dataclass(frozen=True, kw_only=True)
class ClassContext:
    import_context: str
    class_signature: str
    class_field_context: str
    class_function_signature_context: str


class JavaSource:
    """One parsed file."""

    def __init__(self, text: str) -> None:
        self.text = normalise(text)
        self.data = self.text.encode("utf-8")
        self.lines = self.text.split("\n")
        self.root = java_parser().parse(self.data).root_node

    def slice(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8", "replace")

    def node_text(self, node: Node) -> str:
        return self.slice(node.start_byte, node.end_byte)

    def source_line(self, node: Node) -> str:
        return "\n".join(self.lines[node.start_point[0]:node.end_point[0] + 1])

    def bfs(self) -> Iterator[Node]:
        queue = deque([self.root])
        while queue:
            node = queue.popleft()
            yield node
            queue.extend(node.children)

    def functions(self) -> list[Function]:
        """Every method and constructor, shallower first (CoderUJB's order)."""
        return [self._function(n) for n in self.bfs() if n.type in FUNCTIONS]

    def _function(self, node: Node) -> Function:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        parent = node.parent.type if node.parent is not None else ""
        inner = sum(1 for n in _descendants(node) if n.type in FUNCTIONS)
        return Function(
            name=self.node_text(name) if name is not None else "",
            start=node.start_point[0], end=node.end_point[0],
            source=self.source_line(node), code=self.node_text(node),
            comment=self.comment(node),
            signature=self.slice(node.start_byte,
                                 body.start_byte if body is not None else node.end_byte),
            complete=body is not None and parent in _MEMBER_OF[node.type], nested=inner > 1,
        )

    def comment(self, node: Node) -> str:
        """The comments right above a node, whole lines each, nearest first."""
        found = []
        sibling = node.prev_sibling
        while sibling is not None and sibling.type.endswith("comment"):
            found.append(self.source_line(sibling))
            sibling = sibling.prev_sibling
        return "\n".join(found)

    def enclosing(self, row: int) -> Function | None:
        """The outermost complete function whose rows hold the 1-based line ``row``."""
        chosen: Function | None = None
        for function in self.functions():
            if not function.complete or not function.start + 1 <= row <= function.end + 1:
                continue
            if chosen is None or chosen.code in function.code:
                chosen = function
        return chosen

    def indent(self) -> str:
        """The file's indent: the shortest whitespace that follows a line break between two
        nodes (tabs as four spaces)."""
        gaps = []
        for node in self.bfs():
            for before, after in zip(node.children, node.children[1:], strict=False):
                gap = self.slice(before.end_byte, after.start_byte)
                if "\n" in gap:
                    flat = gap.replace("\r\n", "").replace("\n", "").replace("\t", "    ")
                    if flat:
                        gaps.append(flat)
        return min(gaps, key=len) if gaps else ""

    def class_context(self) -> ClassContext:
        top = next((n for n in self.root.children if n.type == "class_declaration"), None)
        if top is None:
            raise ContextError("no top-level class")
        body = top.child_by_field_name("body")
        if body is None:
            raise ContextError("the class has no body")
        indent = self.indent()
        package = [self.node_text(n) for n in self.root.children
                   if n.type == "package_declaration"]
        imports = [self.node_text(n) for n in self.root.children
                   if n.type == "import_declaration"]
        context = (package[0] + "\n\n" if package else "") + (
            "\n".join(imports) + "\n\n" if imports else "")
        fields = [indent + self.node_text(n) for n in body.children
                  if n.type == "field_declaration"]
        signatures = []
        for node in self.bfs():
            if node.type in FUNCTIONS and node.parent is not None and \
                    node.parent.type == "class_body":
                own = node.child_by_field_name("body")
                text = self.slice(node.start_byte,
                                  own.start_byte if own is not None else node.end_byte).strip()
                signatures.append(indent + (text if text.endswith(";") else text + ";"))
        return ClassContext(
            import_context=context,
            class_signature=self.slice(top.start_byte, body.start_byte),
            class_field_context="\n".join(fields),
            class_function_signature_context="\n".join(signatures),
        )


def _descendants(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


CODE_CONTEXT = ("{import_context}\n\n{class_signature} {{\n{class_field_context}\n\n"
                "{class_function_signature_context}\n}}")


def code_context(context: ClassContext) -> str:
    return CODE_CONTEXT.format(**context.__dict__).strip()


def commented(text: str) -> str:
    return "// " + "\n// ".join(text.split("\n"))
