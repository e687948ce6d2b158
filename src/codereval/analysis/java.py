"""Dependency analysis of one Java method with tree-sitter (tree-sitter-java grammar).

Tokens mirror the CoderEval Java records: invoked method names are APIs (``[isEmpty, trim]``),
referenced types are classes (array types written with their brackets, ``String[]``), and
accessed fields are variables. Types resolve through the current class, the file, the imports
(single-type, static and on-demand), ``java.lang``, the current package in the project's source
tree, and the classpath jars.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from tree_sitter import Language as TSLanguage
from tree_sitter import Node, Parser

from codereval.analysis.deps import Analysis, Dependency, RefKind, Scope
from codereval.analysis.levels import level_of, oracle_context_of
from codereval.analysis.stdlib import JAVA_LANG_TYPES, is_jdk_package
from codereval.errors import UserError
from codereval.model import AllContext, Language

TYPE_DECLARATIONS = (
    "class_declaration",
    "interface_declaration",
    "enum_declaration",
    "record_declaration",
    "annotation_type_declaration",
)
METHOD_DECLARATIONS = ("method_declaration", "constructor_declaration")
# Source roots tried, in order, besides the one implied by the file's package.
SOURCE_ROOTS = ("src/main/java", "src/test/java", "src/java", "src", "")


@cache
def java_parser() -> Parser:
    import tree_sitter_java

    return Parser(TSLanguage(tree_sitter_java.language()))


def node_text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


def parse_java(source: str, *, file_path: str) -> Node:
    tree = java_parser().parse(source.encode("utf-8"))
    root = tree.root_node
    if root.has_error:
        bad = next((n for n in walk_nodes(root) if n.type == "ERROR" or n.is_missing), root)
        raise UserError(f"cannot parse {file_path}: syntax error at line {bad.start_point[0] + 1}")
    return root


def walk_nodes(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


@dataclass
class _Imports:
    single: dict[str, str] = field(default_factory=dict)  # simple name -> qualified name
    static: dict[str, str] = field(default_factory=dict)  # member -> owning class
    on_demand: list[str] = field(default_factory=list)  # packages (or classes) imported with *
    written: list[str] = field(default_factory=list)  # as written, for all_context


def _read_imports(root: Node) -> tuple[str, _Imports]:
    package = ""
    imports = _Imports()
    for node in root.children:
        if node.type == "package_declaration":
            package = node_text(
                next(c for c in node.children if c.is_named and c.type != "annotation")
            )
        elif node.type == "import_declaration":
            is_static = any(c.type == "static" for c in node.children)
            name = node_text(
                next(c for c in node.children if c.type in ("scoped_identifier", "identifier"))
            )
            star = any(c.type == "asterisk" for c in node.children)
            imports.written.append(name + (".*" if star else ""))
            if star:
                imports.on_demand.append(name)
            elif is_static:
                owner, _, member = name.rpartition(".")
                imports.static[member] = owner
            else:
                imports.single[name.rsplit(".", 1)[-1]] = name
    return package, imports


@dataclass
class _TypeInfo:
    node: Node
    qualname: str  # Outer.Inner
    fields: list[str] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)


def _members(body: Node | None) -> list[Node]:
    """The member declarations of a type body; enum bodies keep theirs one level down."""
    members: list[Node] = []
    for member in body.children if body is not None else []:
        if member.type == "enum_body_declarations":
            members += member.children
        else:
            members.append(member)
    return members


def _types_in(node: Node | None, prefix: str = "") -> list[_TypeInfo]:
    found: list[_TypeInfo] = []
    for child in (
        _members(node)
        if node is not None and node.type != "program"
        else (node.children if node is not None else [])
    ):
        if child.type not in TYPE_DECLARATIONS:
            continue
        name = node_text(child.child_by_field_name("name"))
        info = _TypeInfo(node=child, qualname=prefix + name)
        body = child.child_by_field_name("body")
        for member in _members(body):
            if member.type in ("field_declaration", "constant_declaration"):
                for declarator in member.children_by_field_name("declarator"):
                    info.fields.append(node_text(declarator.child_by_field_name("name")))
            elif member.type in METHOD_DECLARATIONS:
                info.methods.append(node_text(member.child_by_field_name("name")))
            elif member.type == "enum_constant":
                info.fields.append(node_text(member.child_by_field_name("name")))
        if child.type == "record_declaration":
            params = child.child_by_field_name("parameters")
            for param in params.children if params is not None else []:
                if param.type == "formal_parameter":
                    info.fields.append(node_text(param.child_by_field_name("name")))
        found.append(info)
        found += _types_in(body, prefix + name + ".")
    return found


def _methods_of(info: _TypeInfo) -> list[Node]:
    return [
        m for m in _members(info.node.child_by_field_name("body")) if m.type in METHOD_DECLARATIONS
    ]


def find_method(
    types: Sequence[_TypeInfo], target: str, *, file_path: str, lineno: int = 0
) -> tuple[str, Node, _TypeInfo]:
    """The method ``name``, ``Class.method`` or ``Outer.Inner.method``: the overload spanning
    ``lineno`` when given, else the first."""
    candidates: list[tuple[str, Node, _TypeInfo]] = []
    for info in types:
        for method in _methods_of(info):
            candidates.append(
                (f"{info.qualname}.{node_text(method.child_by_field_name('name'))}", method, info)
            )
    exact = [c for c in candidates if c[0] == target or c[0].endswith("." + target)]
    at_line = [c for c in exact if c[1].start_point[0] + 1 <= lineno <= c[1].end_point[0] + 1]
    if at_line or exact:
        return (at_line or exact)[0]
    names = ", ".join(dict.fromkeys(c[0] for c in candidates)) or "none"
    raise UserError(f"method {target} not found in {file_path}; methods there: {names}")


class JavaResolver:
    """Where a type name comes from: class, file, java.lang, JDK, project or a classpath jar."""

    def __init__(
        self,
        *,
        project_root: Path | None,
        file_path: str,
        package: str,
        imports: _Imports,
        classpath: Sequence[Path],
    ) -> None:
        self.package = package
        self.imports = imports
        self.roots: list[Path] = []
        if project_root is not None:
            file_dir = (project_root / file_path).parent
            implied = file_dir.parents[package.count(".")] if package else file_dir
            candidates = [implied] + [project_root / r for r in SOURCE_ROOTS]
            for root in candidates:
                if root.is_dir() and root not in self.roots:
                    self.roots.append(root)
        self.project_root = project_root
        self.classpath = list(classpath)
        self._jar_entries: dict[Path, frozenset[str]] = {}

    def _project_file(self, qualified: str) -> Path | None:
        parts = qualified.split(".")
        # a nested type a.b.Outer.Inner lives in a/b/Outer.java
        for cut in range(len(parts), 0, -1):
            relative = Path(*parts[:cut]).with_suffix(".java")
            for root in self.roots:
                if (root / relative).is_file():
                    return root / relative
        return None

    def _jar_with(self, qualified: str) -> Path | None:
        entry = qualified.replace(".", "/") + ".class"
        for jar in self.classpath:
            if jar.is_dir():
                if (jar / entry).is_file():
                    return jar
                continue
            if jar not in self._jar_entries:
                try:
                    with zipfile.ZipFile(jar) as archive:
                        self._jar_entries[jar] = frozenset(archive.namelist())
                except (OSError, zipfile.BadZipFile) as exc:
                    raise UserError(f"cannot read classpath entry {jar}: {exc}") from exc
            if entry in self._jar_entries[jar]:
                return jar
        return None

    def qualified(self, qualified: str) -> tuple[Scope, str]:
        found = self._project_file(qualified)
        if found is not None and self.project_root is not None:
            return Scope.PROJECT, f"{qualified} ({found.relative_to(self.project_root)})"
        if is_jdk_package(qualified):
            if qualified.startswith("java.lang.") and qualified.count(".") == 2:
                return Scope.BUILTIN, qualified
            return Scope.STDLIB, f"{qualified} (JDK)"
        jar = self._jar_with(qualified)
        if jar is not None:
            return Scope.THIRD_PARTY, f"{qualified} ({jar.name})"
        return Scope.THIRD_PARTY, f"{qualified} (not on the classpath given)"

    def type_name(self, name: str) -> tuple[Scope, str] | None:
        """A simple type name seen outside the file's own declarations, or None if unknown."""
        head = name.split(".")[0]
        if head in self.imports.single:
            return self.qualified(self.imports.single[head])
        if head in JAVA_LANG_TYPES:
            return Scope.BUILTIN, f"java.lang.{head}"
        same_package = f"{self.package}.{head}" if self.package else head
        if self._project_file(same_package) is not None:
            return self.qualified(same_package)
        for package in self.imports.on_demand:
            candidate = f"{package}.{head}"
            if self._project_file(candidate) is not None or self._jar_with(candidate) is not None:
                return self.qualified(candidate)
        jdk = [p for p in self.imports.on_demand if is_jdk_package(p)]
        if jdk:
            return Scope.STDLIB, f"{jdk[0]}.{head} (JDK, on-demand import)"
        return None


def _array_locals(method: Node) -> set[str]:
    """Locals and parameters declared with an array type (their ``.length`` is no field)."""
    arrays: set[str] = set()
    for node in walk_nodes(method):
        if node.type in ("formal_parameter", "local_variable_declaration"):
            declared = node.child_by_field_name("type")
            is_array = declared is not None and declared.type == "array_type"
            targets = (
                [node]
                if node.type == "formal_parameter"
                else node.children_by_field_name("declarator")
            )
            for target in targets:
                dims = target.child_by_field_name("dimensions")
                if is_array or dims is not None:
                    arrays.add(node_text(target.child_by_field_name("name")))
        elif node.type == "spread_parameter":
            for child in node.children:
                if child.type == "variable_declarator":
                    arrays.add(node_text(child.child_by_field_name("name")))
    return arrays


def _locals(method: Node) -> set[str]:
    names: set[str] = set()
    for node in walk_nodes(method):
        if node.type in (
            "formal_parameter",
            "catch_formal_parameter",
            "variable_declarator",
            "enhanced_for_statement",
            "resource",
            "instanceof_expression",
            "record_pattern_component",
            "type_pattern",
        ):
            name = node.child_by_field_name("name")
            if name is not None:
                names.add(node_text(name))
            if node.type == "type_pattern":
                names.update(node_text(c) for c in node.children if c.type == "identifier")
        elif node.type == "spread_parameter":
            for child in node.children:
                if child.type == "variable_declarator":
                    names.add(node_text(child.child_by_field_name("name")))
        elif node.type == "lambda_expression":
            params = node.child_by_field_name("parameters")
            if params is not None and params.type == "identifier":
                names.add(node_text(params))
            elif params is not None and params.type == "inferred_parameters":
                names.update(node_text(c) for c in params.children if c.type == "identifier")
    return names


class _JavaCollector:
    def __init__(
        self,
        *,
        method: Node,
        current: _TypeInfo,
        types: Sequence[_TypeInfo],
        resolver: JavaResolver,
    ) -> None:
        self.method = method
        self.current = current
        self.resolver = resolver
        outer = current.qualname.split(".")
        self.class_chain = {".".join(outer[: i + 1]) for i in range(len(outer))}
        self.class_types = {
            t.qualname.rsplit(".", 1)[-1]: t for t in types if t.qualname in self.class_chain
        }
        self.nested = {
            t.qualname.rsplit(".", 1)[-1]
            for t in types
            if t.qualname.startswith(current.qualname + ".")
        }
        self.file_types = {t.qualname.rsplit(".", 1)[-1] for t in types} - set(self.class_types)
        self.fields = {f for t in types if t.qualname in self.class_chain for f in t.fields}
        self.methods = {m for t in types if t.qualname in self.class_chain for m in t.methods}
        self.local = _locals(method)
        self.arrays = _array_locals(method)
        self.deps: list[Dependency] = []
        self.seen: set[tuple[str, RefKind, Scope, str]] = set()
        self.unresolved: list[str] = []

    def add(self, name: str, kind: RefKind, scope: Scope, origin: str, node: Node) -> None:
        key = (name, kind, scope, origin)
        if key in self.seen:
            return  # one row per distinct reference; the first line it appears on
        self.seen.add(key)
        self.deps.append(
            Dependency(
                name=name, kind=kind, scope=scope, origin=origin, lineno=node.start_point[0] + 1
            )
        )
        if scope is Scope.UNRESOLVED and name not in self.unresolved:
            self.unresolved.append(name)

    def type_scope(self, name: str) -> tuple[Scope, str]:
        name = name.split("[")[0].split("<")[0]
        if "." in name and name[:1].islower():
            return self.resolver.qualified(name)  # written fully qualified
        head = name.split(".")[0]
        if head in self.class_types or head in self.nested:
            return Scope.CLASS, f"current class {self.current.qualname}"
        if head in self.file_types:
            return Scope.FILE, "declared in this file"
        found = self.resolver.type_name(name)
        if found is not None:
            return found
        return Scope.UNRESOLVED, "not imported, not in java.lang, not found in the project"

    def type_ref(self, node: Node) -> None:
        name = "".join(node_text(node).split())
        scope, origin = self.type_scope(name)
        # ``java.util.TreeSet`` is the token ``TreeSet``; ``Order.Line`` stays as written.
        parts = name.split("<")[0].split(".")
        while len(parts) > 1 and parts[0][:1].islower():
            parts.pop(0)
        brackets = name[len(name.split("[")[0]) :] if "[" in name else ""
        self.add(".".join(parts).split("[")[0] + brackets, RefKind.TYPE, scope, origin, node)

    def receiver_scope(self, node: Node | None) -> tuple[Scope, str]:
        """The scope of whatever a member is selected from (``a`` in ``a.b.c()``)."""
        root = node
        while root is not None and root.type in ("field_access", "method_invocation"):
            root = root.child_by_field_name("object")
        if root is None:
            return Scope.CLASS, f"member of {self.current.qualname} or a supertype"
        if root.type in ("this", "super"):
            return Scope.CLASS, f"member of {self.current.qualname}"
        if root.type == "identifier":
            name = node_text(root)
            if name in self.local:
                return Scope.VALUE, f"member of local {name}"
            if name in self.fields:
                return Scope.CLASS, f"member of field {name}"
            if name[:1].isupper():
                return self.type_scope(name)
            return Scope.CLASS, f"member of inherited field {name}"
        if root.type in ("type_identifier", "scoped_type_identifier"):
            return self.type_scope(node_text(root))
        return Scope.VALUE, "member of a computed value"

    def identifier(self, node: Node, *, as_receiver: bool) -> None:
        name = node_text(node)
        if name in self.local:
            return
        if name in self.fields:
            self.add(name, RefKind.VAR, Scope.CLASS, f"field of {self.current.qualname}", node)
        elif name in self.resolver.imports.static:
            owner = self.resolver.imports.static[name]
            scope, origin = self.resolver.qualified(owner)
            self.add(name, RefKind.VAR, scope, f"static import from {origin}", node)
        elif as_receiver and name[:1].isupper():
            self.type_ref(node)
        else:
            # Not local and not declared here: a field inherited from a supertype.
            self.add(name, RefKind.VAR, Scope.CLASS, "inherited field", node)

    def invocation(self, node: Node) -> None:
        name = node_text(node.child_by_field_name("name"))
        receiver = node.child_by_field_name("object")
        if receiver is None and name not in self.methods and name in self.resolver.imports.static:
            scope, origin = self.resolver.qualified(self.resolver.imports.static[name])
            origin = f"static import from {origin}"
        else:
            scope, origin = self.receiver_scope(receiver)
        self.add(name, RefKind.API, scope, origin, node)
        if receiver is not None:
            self.visit(receiver, as_receiver=True)
        for child in node.children_by_field_name("arguments"):
            self.visit(child)
        for child in node.children_by_field_name("type_arguments"):
            self.visit(child)

    def visit(self, node: Node, *, as_receiver: bool = False) -> None:
        kind = node.type
        if kind in (
            "modifiers",
            "marker_annotation",
            "annotation",
            "line_comment",
            "block_comment",
        ):
            return
        if kind == "method_invocation":
            self.invocation(node)
        elif kind == "field_access":
            field_name = node_text(node.child_by_field_name("field"))
            receiver = node.child_by_field_name("object")
            if field_name == "length" and node_text(receiver) in self.arrays:
                # An array's length is part of the language, not a field anyone declared.
                if receiver is not None:
                    self.visit(receiver, as_receiver=True)
                return
            scope, origin = self.receiver_scope(receiver)
            self.add(field_name, RefKind.VAR, scope, origin, node)
            if receiver is not None:
                self.visit(receiver, as_receiver=True)
        elif kind == "method_reference":
            parts = [c for c in node.children if c.is_named]
            if len(parts) >= 2 and parts[-1].type == "identifier":
                scope, origin = self.receiver_scope(parts[0])
                self.add(node_text(parts[-1]), RefKind.API, scope, origin, parts[-1])
            if parts:
                self.visit(parts[0], as_receiver=True)
        elif kind in ("type_identifier", "scoped_type_identifier"):
            self.type_ref(node)
        elif kind == "array_type":
            element = node.child_by_field_name("element")
            if (
                element is not None
                and element.type != "integral_type"
                and element.type
                not in (
                    "floating_point_type",
                    "boolean_type",
                )
            ):
                self.type_ref(node)
            if element is not None:
                self.visit(element)
        elif kind == "identifier":
            self.identifier(node, as_receiver=as_receiver)
        elif kind in ("labeled_statement", "break_statement", "continue_statement"):
            for child in node.children:
                if child.type != "identifier":
                    self.visit(child)
        else:
            for index, child in enumerate(node.children):
                if node.field_name_for_child(index) == "name" and child.type == "identifier":
                    continue  # a declaration's own name
                if kind == "lambda_expression" and node.field_name_for_child(index) == "parameters":
                    if child.type == "formal_parameters":
                        self.visit(child)
                    continue
                self.visit(child)

    def run(self) -> None:
        for name in ("type", "parameters", "body"):
            child = self.method.child_by_field_name(name)
            if child is not None:
                self.visit(child)
        for child in self.method.children:
            if child.type == "throws":
                self.visit(child)


def analyze_java_source(
    source: str,
    target: str,
    *,
    file_path: str = "<source>.java",
    project_root: Path | None = None,
    classpath: Sequence[Path] = (),
    lineno: int = 0,
) -> Analysis:
    """Analyse the method ``target`` (``method``, ``Class.method``) of one Java file."""
    root = parse_java(source, file_path=file_path)
    package, imports = _read_imports(root)
    types = _types_in(root)
    qualname, method, current = find_method(types, target, file_path=file_path, lineno=lineno)
    resolver = JavaResolver(
        project_root=project_root,
        file_path=file_path,
        package=package,
        imports=imports,
        classpath=classpath,
    )
    collector = _JavaCollector(method=method, current=current, types=types, resolver=resolver)
    collector.run()
    deps = tuple(collector.deps)
    method_name = node_text(method.child_by_field_name("name"))
    chain = collector.class_chain
    all_context = AllContext(
        imports=tuple(imports.written),
        file=tuple(t.qualname for t in types if t.qualname not in chain and "." not in t.qualname),
        class_=tuple(dict.fromkeys(m for m in current.methods if m != method_name)),
        class_level=tuple(dict.fromkeys(current.fields)),
    )
    return Analysis(
        language=Language.JAVA,
        file_path=file_path,
        target=qualname,
        lineno=method.start_point[0] + 1,
        end_lineno=method.end_point[0] + 1,
        dependencies=deps,
        level=level_of(deps),
        oracle_context=oracle_context_of(deps),
        all_context=all_context,
        unresolved=tuple(collector.unresolved),
    )


def analyze_java_file(
    project_root: Path,
    file_path: str,
    target: str,
    *,
    classpath: Sequence[Path] = (),
) -> Analysis:
    path = project_root / file_path
    if not path.is_file():
        raise UserError(f"file not found: {path}", hint="give FILE relative to PROJECT_DIR")
    try:
        source = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path} is not UTF-8 text: {exc.reason}") from exc
    return analyze_java_source(
        source, target, file_path=file_path, project_root=project_root, classpath=classpath
    )


def param_types(params: Node | None) -> tuple[str, ...]:
    if params is None:
        return ()
    types = []
    for child in params.named_children:
        if child.type == "formal_parameter":
            kind = child.child_by_field_name("type")
            dims = child.child_by_field_name("dimensions")
            types.append(_norm(node_text(kind) + node_text(dims)))
        elif child.type == "spread_parameter":
            kind = next((c for c in child.named_children
                         if c.type not in ("modifiers", "variable_declarator")), None)
            types.append(_norm(node_text(kind)) + "...")
    return tuple(types)


def _norm(text: str) -> str:
    text = re.sub(r"@\w+(\.\w+)*(\([^)]*\))?", "", text)
    return re.sub(r"\s+", "", text)


_COMMENTS = ("line_comment", "block_comment")
_LITERALS = frozenset({
    "decimal_integer_literal", "hex_integer_literal", "octal_integer_literal",
    "binary_integer_literal", "decimal_floating_point_literal", "hex_floating_point_literal",
    "true", "false", "null_literal", "character_literal", "string_literal"})


def computes_nothing(code: str, *, name: str) -> bool:
    """Whether the method ``name`` of ``code`` (a method alone, as a sample is, or in its
    class) computes nothing: its body, comments aside, is empty, loops without doing anything,
    or returns one literal."""
    root = java_parser().parse(f"class _Sample {{\n{code}\n}}".encode()).root_node
    for node in walk_nodes(root):
        if node.type != "method_declaration" or \
                node_text(node.child_by_field_name("name")) != name:
            continue
        body = node.child_by_field_name("body")
        if body is None:
            return False
        statements = [c for c in body.named_children if c.type not in _COMMENTS]
        last = statements[-1] if statements else None
        if last is not None and last.type == "return_statement":
            values = [c for c in last.named_children if c.type not in _COMMENTS]
            if values and (len(values) > 1 or values[0].type not in _LITERALS):
                return False
            statements = statements[:-1]
        return all(_idle(statement) for statement in statements)
    return False


# What a loop's header may hold and still do nothing: no call, no object made, no assignment
# (a counter's ++ or -- is fine), so an empty loop over a parameter's length is idle.
_ACTIVE = frozenset({"method_invocation", "object_creation_expression", "assignment_expression",
                     "array_creation_expression", "lambda_expression"})
_LOOPS = frozenset({"for_statement", "enhanced_for_statement", "while_statement",
                    "do_statement"})


def _idle(statement: Node) -> bool:
    if statement.type in _COMMENTS or statement.type == ";":
        return True
    if statement.type == "block":
        return all(_idle(c) for c in statement.named_children)
    if statement.type in _LOOPS:
        body = statement.child_by_field_name("body")
        return body is not None and _idle(body) and not any(
            n.type in _ACTIVE for n in walk_nodes(statement))
    return False
