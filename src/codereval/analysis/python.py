"""Dependency analysis of one Python function with the standard ``ast`` module.

Which names become which tokens mirrors the released CoderEval records (docs/analysis.md):
a called name is an API (``map``, ``divmod``) unless it names a class (a class the project
defines, or a CapWords name such as ``Exception`` or ``FixedOffset``), which is a type; an
attribute is an API when called (``zone.localize(t)`` gives ``localize``) and a variable
otherwise (``os.sep`` gives ``sep``); a name bound to an imported module is a type (``os``);
a built-in passed as a value (``int`` in ``map(int, xs)``) is no token at all.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from codereval.analysis.deps import Analysis, Dependency, RefKind, Scope
from codereval.analysis.levels import level_of, oracle_context_of
from codereval.analysis.stdlib import PythonEnvironment, current_python
from codereval.errors import UserError
from codereval.model import AllContext, Language
from codereval.source import pyast

Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Binding:
    """A name bound by an import statement."""

    module: str  # the module as written, dots included (".time", "os.path")
    attr: str | None  # the imported name of ``from m import attr``; None for ``import m``
    scope: Scope
    origin: str
    # ``from pkg import helpers`` where helpers is a module of the project
    submodule: bool = False

    @property
    def is_module(self) -> bool:
        return self.attr is None or self.submodule


@dataclass
class _FileFacts:
    imports: dict[str, Binding] = field(default_factory=dict)
    functions: dict[str, int] = field(default_factory=dict)
    classes: dict[str, int] = field(default_factory=dict)
    variables: dict[str, int] = field(default_factory=dict)
    import_modules: list[str] = field(default_factory=list)


def source_roots(project_root: Path, file_path: str) -> list[Path]:
    """Where ``import x`` finds the project's modules for a file at ``file_path``: the file's
    folder (scripts import their siblings), the folder above its package, the project, and
    its ``src``."""
    directory = (project_root / file_path).parent
    top = directory
    while (top / "__init__.py").exists() and top != project_root:
        top = top.parent
    unique: list[Path] = []
    for root in (directory, top, project_root, project_root / "src"):
        if root.is_dir() and root not in unique:
            unique.append(root)
    return unique


class ImportResolver:
    """Decides whether a module is the project's, the standard library's or a library's."""

    def __init__(
        self,
        *,
        file_path: str,
        project_root: Path | None,
        environment: PythonEnvironment,
    ) -> None:
        self.file_path = file_path
        self.project_root = project_root
        self.env = environment
        self.roots = [] if project_root is None else source_roots(project_root, file_path)

    def _in_project(self, module: str) -> Path | None:
        parts = module.split(".")
        for root in self.roots:
            base = root.joinpath(*parts)
            for candidate in (base.with_suffix(".py"), base / "__init__.py", base):
                if candidate.exists():
                    assert self.project_root is not None
                    return candidate.relative_to(self.project_root)
        return None

    def submodule(self, module: str, name: str, *, level: int) -> Path | None:
        """The project file of ``from module import name`` when ``name`` is itself a module."""
        if self.project_root is None:
            return None
        if level == 0:
            return self._in_project(f"{module}.{name}" if module else name)
        base = (self.project_root / self.file_path).parent
        for _ in range(level - 1):
            base = base.parent
        target = base.joinpath(*[p for p in module.split(".") if p], name)
        for candidate in (target.with_suffix(".py"), target / "__init__.py"):
            if candidate.is_file():
                return candidate.relative_to(self.project_root)
        return None

    def resolve(self, module: str, *, level: int) -> tuple[Scope, str]:
        if level > 0:
            return Scope.PROJECT, f"relative import {'.' * level}{module}"
        found = self._in_project(module)
        if found is not None:
            return Scope.PROJECT, f"{module} ({found})"
        if self.env.is_stdlib(module):
            return Scope.STDLIB, f"{module} (standard library)"
        dists = self.env.distribution_of(module)
        if dists:
            return Scope.THIRD_PARTY, f"{module} (distribution {', '.join(dists)})"
        # Not the project's and not the standard library: a library this environment lacks.
        return Scope.THIRD_PARTY, f"{module} (not installed here)"


def _bind_imports(
    node: ast.Import | ast.ImportFrom, resolver: ImportResolver
) -> dict[str, Binding]:
    bound: dict[str, Binding] = {}
    if isinstance(node, ast.Import):
        for alias in node.names:
            # ``import os.path`` binds ``os``; ``import a.b as c`` binds ``c`` to ``a.b``.
            name = alias.asname or alias.name.split(".")[0]
            module = alias.name if alias.asname else alias.name.split(".")[0]
            scope, origin = resolver.resolve(module, level=0)
            bound[name] = Binding(module=module, attr=None, scope=scope, origin=origin)
        return bound
    module = node.module or ""
    scope, origin = resolver.resolve(module, level=node.level)
    written = "." * node.level + module
    for alias in node.names:
        if alias.name == "*":
            continue
        found = resolver.submodule(module, alias.name, level=node.level)
        bound[alias.asname or alias.name] = Binding(
            module=written,
            attr=alias.name,
            scope=scope,
            origin=f"{origin}: {found}" if found else origin,
            submodule=found is not None,
        )
    return bound


def _import_module_name(node: ast.Import | ast.ImportFrom) -> list[str]:
    """all_context's import entries: one per module an import statement names, dots dropped."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.module:
        return [node.module]
    return [alias.name for alias in node.names]


def _file_facts(tree: ast.Module, resolver: ImportResolver) -> _FileFacts:
    facts = _FileFacts()
    for node in tree.body:
        for sub in ast.walk(node) if isinstance(node, ast.If | ast.Try) else [node]:
            # Imports guarded by ``if``/``try`` at module level still bind module names.
            if isinstance(sub, ast.Import | ast.ImportFrom):
                facts.imports.update(_bind_imports(sub, resolver))
                facts.import_modules += _import_module_name(sub)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            facts.functions[node.name] = node.lineno
        elif isinstance(node, ast.ClassDef):
            facts.classes[node.name] = node.lineno
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        facts.variables.setdefault(name.id, node.lineno)
    return facts


# ----------------------------------------------------------------------------- finding the target


def _functions_in(body: list[ast.stmt], prefix: str = "") -> list[tuple[str, Function, list[str]]]:
    """(qualified name, node, enclosing classes) of every function and method, classes nested."""
    found: list[tuple[str, Function, list[str]]] = []
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append(
                (prefix + node.name, node, prefix.rstrip(".").split(".") if prefix else [])
            )
        elif isinstance(node, ast.ClassDef):
            found += _functions_in(node.body, f"{prefix}{node.name}.")
    return found


def find_function(
    tree: ast.Module, target: str, *, file_path: str
) -> tuple[str, Function, list[str]]:
    """The function named ``name`` or ``Class.method``; a bare name may also match one method."""
    functions = _functions_in(tree.body)
    exact = [f for f in functions if f[0] == target]
    if exact:
        return exact[0]
    by_name = [f for f in functions if f[0].rsplit(".", 1)[-1] == target]
    if len(by_name) == 1:
        return by_name[0]
    names = ", ".join(f[0] for f in functions) or "none"
    if len(by_name) > 1:
        raise UserError(
            f"{target} is ambiguous in {file_path}: {', '.join(f[0] for f in by_name)}",
            hint="write it as Class.method",
        )
    raise UserError(f"function {target} not found in {file_path}; functions there: {names}")


def function_at_line(tree: ast.Module, lineno: int) -> str | None:
    """The qualified name of the function defined at ``lineno`` (a record's ``lineno``)."""
    for qualname, node, _ in _functions_in(tree.body):
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        if first <= lineno <= node.lineno:
            return qualname
    return None


# ----------------------------------------------------------------------------- the function body


def _local_names(func: Function) -> tuple[set[str], dict[str, ast.Import | ast.ImportFrom]]:
    """Names the function binds itself, and its own import statements by bound name."""
    local: set[str] = set()
    imports: dict[str, ast.Import | ast.ImportFrom] = {}
    declared_global: set[str] = set()
    for node in ast.walk(func):
        if isinstance(node, ast.arg):
            local.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            local.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node is not func:
                local.add(node.name)
        elif (isinstance(node, ast.ExceptHandler) and node.name) or (
            isinstance(node, ast.MatchAs | ast.MatchStar) and node.name
        ):
            local.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            local.add(node.rest)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            declared_global.update(node.names)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.name != "*":
                    bound = alias.asname or alias.name.split(".")[0]
                    imports[bound] = node
    return local - declared_global - set(imports), imports


def _is_classlike(name: str) -> bool:
    return name[:1].isupper()


class _Collector:
    def __init__(
        self,
        *,
        func: Function,
        classes: list[str],
        facts: _FileFacts,
        resolver: ImportResolver,
        file_path: str,
    ) -> None:
        self.func = func
        self.classes = classes
        self.facts = facts
        self.resolver = resolver
        self.file_path = file_path
        self.env = resolver.env
        self.local, local_imports = _local_names(func)
        self.local_bindings: dict[str, Binding] = {}
        for name, node in local_imports.items():
            bound = _bind_imports(node, resolver)
            if name in bound:
                self.local_bindings[name] = bound[name]
        self.receivers: set[str] = set()
        args = func.args.posonlyargs + func.args.args
        static = any(
            isinstance(d, ast.Name) and d.id == "staticmethod" for d in func.decorator_list
        )
        if classes and args and not static:
            self.receivers.add(args[0].arg)  # self / cls
        self.deps: list[Dependency] = []
        self.seen: set[tuple[str, RefKind, Scope, str]] = set()
        self.unresolved: list[str] = []

    def add(
        self,
        name: str,
        kind: RefKind,
        scope: Scope,
        origin: str,
        node: ast.AST,
        *,
        token: bool = True,
    ) -> None:
        lineno = getattr(node, "lineno", 0)
        key = (name, kind, scope, origin)
        if key in self.seen:
            return  # one row per distinct reference; the first line it appears on
        self.seen.add(key)
        self.deps.append(
            Dependency(name=name, kind=kind, scope=scope, origin=origin, lineno=lineno, token=token)
        )
        if scope is Scope.UNRESOLVED and name not in self.unresolved:
            self.unresolved.append(name)

    # -- names

    def _binding(self, name: str) -> Binding | None:
        return self.local_bindings.get(name) or self.facts.imports.get(name)

    def name(self, node: ast.Name, *, called: bool) -> None:
        name = node.id
        if name in self.local or name in self.receivers:
            return
        binding = self._binding(name)
        if binding is not None:
            if binding.is_module or _is_classlike(name) or _is_classlike(binding.attr or ""):
                kind = RefKind.TYPE
            else:
                kind = RefKind.API if called else RefKind.VAR
            self.add(name, kind, binding.scope, binding.origin, node)
            return
        where = f"{self.file_path}:"
        if self.classes and name == self.classes[-1]:
            self.add(name, RefKind.TYPE, Scope.CLASS, f"current class {name}", node)
        elif name in self.facts.classes:
            self.add(name, RefKind.TYPE, Scope.FILE, where + str(self.facts.classes[name]), node)
        elif name in self.facts.functions:
            if name == self.func.name and not self.classes:
                # A recursive call needs nothing beyond the function itself.
                self.add(name, RefKind.API, Scope.VALUE, "recursive call", node)
            else:
                kind = RefKind.API if called else RefKind.VAR
                self.add(name, kind, Scope.FILE, where + str(self.facts.functions[name]), node)
        elif name in self.facts.variables:
            kind = RefKind.TYPE if _is_classlike(name) and called else RefKind.VAR
            if called and not _is_classlike(name):
                kind = RefKind.API
            self.add(name, kind, Scope.FILE, where + str(self.facts.variables[name]), node)
        elif name in self.env.builtins:
            if _is_classlike(name):
                self.add(name, RefKind.TYPE, Scope.BUILTIN, "builtins", node)
            elif called:
                self.add(name, RefKind.API, Scope.BUILTIN, "builtins", node)
            else:
                # CoderEval leaves built-ins used as values (``int`` in ``map(int, x)``) out.
                self.add(name, RefKind.VAR, Scope.BUILTIN, "builtins", node, token=False)
        elif self.env.is_stdlib(name) or self.env.distribution_of(name):
            # A reference with its import cut away (standalone references use ``os``).
            scope, origin = self.resolver.resolve(name, level=0)
            self.add(name, RefKind.TYPE, scope, origin + ", import not shown", node)
        else:
            kind = RefKind.TYPE if _is_classlike(name) else RefKind.API if called else RefKind.VAR
            self.add(name, kind, Scope.UNRESOLVED, "not defined in the function or its file", node)

    # -- attributes

    def _root_scope(self, node: ast.expr) -> tuple[Scope, str]:
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return Scope.VALUE, "member of a computed value"
        name = root.id
        if name in self.receivers:
            return Scope.CLASS, f"member of {self.classes[-1]}"
        if name in self.local:
            return Scope.VALUE, f"member of local {name}"
        binding = self._binding(name)
        if binding is not None:
            return binding.scope, binding.origin
        if self.classes and name == self.classes[-1]:
            return Scope.CLASS, f"member of {name}"
        for table in (self.facts.classes, self.facts.functions, self.facts.variables):
            if name in table:
                return Scope.FILE, f"member of {name} ({self.file_path}:{table[name]})"
        if name in self.env.builtins:
            return Scope.BUILTIN, f"member of builtin {name}"
        if self.env.is_stdlib(name) or self.env.distribution_of(name):
            return self.resolver.resolve(name, level=0)
        return Scope.UNRESOLVED, f"member of unresolved {name}"

    def attribute(self, node: ast.Attribute, *, called: bool) -> None:
        scope, origin = self._root_scope(node.value)
        kind = RefKind.API if called else RefKind.VAR
        if scope is Scope.UNRESOLVED:
            # The unresolved root is reported once, through its own name.
            scope, origin = Scope.VALUE, origin
        self.add(node.attr, kind, scope, origin, node)
        self.visit(node.value)

    # -- traversal

    def visit(self, node: ast.AST, *, called: bool = False) -> None:
        if isinstance(node, ast.Call):
            self.visit(node.func, called=True)
            for arg in node.args:
                self.visit(arg)
            for keyword in node.keywords:
                self.visit(keyword.value)
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                self.name(node, called=called)
        elif isinstance(node, ast.Attribute):
            self.attribute(node, called=called)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            return  # bindings were read up front; the statement itself is no reference
        else:
            for child in ast.iter_child_nodes(node):
                self.visit(child)

    def run(self) -> None:
        func = self.func
        for decorator in func.decorator_list:
            self.visit(decorator)
        self.visit(func.args)
        if func.returns is not None:
            self.visit(func.returns)
        for statement in func.body:
            self.visit(statement)


def _class_members(tree: ast.Module, classes: list[str], target: str) -> list[str]:
    body: list[ast.stmt] = tree.body
    node: ast.ClassDef | None = None
    for name in classes:
        node = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == name), None)
        if node is None:
            return []
        body = node.body
    if node is None:
        return []
    members: list[str] = []
    for item in node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            members.append(item.name)
        elif isinstance(item, ast.Assign | ast.AnnAssign):
            targets = item.targets if isinstance(item, ast.Assign) else [item.target]
            members += [t.id for t in targets if isinstance(t, ast.Name)]
    for sub in ast.walk(node):
        if (
            isinstance(sub, ast.Attribute)
            and isinstance(sub.ctx, ast.Store)
            and isinstance(sub.value, ast.Name)
            and sub.value.id == "self"
        ):
            members.append(sub.attr)
    unique: list[str] = []
    for member in members:
        if member != target and member not in unique:
            unique.append(member)
    return unique


def parse_python(source: str, *, file_path: str) -> ast.Module:
    try:
        return pyast.parse(source, filename=file_path)
    except SyntaxError as exc:
        raise UserError(f"cannot parse {file_path}: {exc.msg} at line {exc.lineno}") from exc


def analyze_python_source(
    source: str,
    target: str,
    *,
    file_path: str = "<source>",
    project_root: Path | None = None,
    environment: PythonEnvironment | None = None,
) -> Analysis:
    """Analyse the function ``target`` (``name`` or ``Class.method``) of one Python file.

    ``file_path`` is relative to ``project_root``; without a project root only relative imports
    are known to be the project's.
    """
    tree = parse_python(source, file_path=file_path)
    resolver = ImportResolver(
        file_path=file_path, project_root=project_root, environment=environment or current_python()
    )
    facts = _file_facts(tree, resolver)
    qualname, func, classes = find_function(tree, target, file_path=file_path)
    collector = _Collector(
        func=func, classes=classes, facts=facts, resolver=resolver, file_path=file_path
    )
    collector.run()
    deps = tuple(collector.deps)

    own_imports: list[str] = []
    for node in ast.walk(func):
        if isinstance(node, ast.Import | ast.ImportFrom):
            own_imports += _import_module_name(node)
    file_names = [
        n
        for n in [*facts.functions, *facts.classes, *facts.variables]
        if n != func.name and n not in facts.imports
    ]
    all_context = AllContext(
        imports=tuple(facts.import_modules + own_imports),
        file=tuple(dict.fromkeys(file_names)),
        class_=tuple(_class_members(tree, classes, func.name)) if classes else (),
    )
    return Analysis(
        language=Language.PYTHON,
        file_path=file_path,
        target=qualname,
        lineno=func.lineno,
        end_lineno=func.end_lineno or func.lineno,
        dependencies=deps,
        level=level_of(deps),
        oracle_context=oracle_context_of(deps),
        all_context=all_context,
        unresolved=tuple(collector.unresolved),
    )


def analyze_python_file(
    project_root: Path,
    file_path: str,
    target: str,
    *,
    environment: PythonEnvironment | None = None,
) -> Analysis:
    """Analyse ``target`` in ``project_root/file_path``."""
    path = project_root / file_path
    if not path.is_file():
        raise UserError(f"file not found: {path}", hint="give FILE relative to PROJECT_DIR")
    try:
        source = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path} is not UTF-8 text: {exc.reason}") from exc
    return analyze_python_source(
        source,
        target,
        file_path=file_path,
        project_root=project_root,
        environment=environment,
    )
