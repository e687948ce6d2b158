"""Python dependency analysis: what each reference is, where it resolves, and the level."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from codereval.analysis import Scope, analyze_python_file, analyze_python_source
from codereval.analysis.deps import RefKind
from codereval.analysis.stdlib import current_python, python_environment
from codereval.errors import UserError
from codereval.model import Level

CORE = """
import os
import json
import pydantic
from .helpers import helper
from pkg import helpers as hmod

LIMIT = 10


def pure(xs):
    return len(xs) + sum(map(abs, xs))


def uses_stdlib(p):
    return os.path.join(p, json.dumps({}))


def uses_lib():
    return pydantic.BaseModel


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def local_import():
    from pkg.helpers import helper as h
    return h(1)


class Box:
    def __init__(self):
        self.items = []

    def size(self):
        return len(self.items)

    def limited(self):
        return self.size() > LIMIT

    def helped(self):
        return helper(self.items) + hmod.other()

    def bad(self):
        return mystery(self.items)
"""


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text("def helper(x):\n    return x\n\ndef other():\n    return 1\n")
    (pkg / "core.py").write_text(CORE)
    return tmp_path


@pytest.mark.parametrize(
    ("target", "level"),
    [
        ("pure", Level.SELF_CONTAINED),
        ("fib", Level.SELF_CONTAINED),
        ("uses_stdlib", Level.SLIB_RUNNABLE),
        ("uses_lib", Level.PLIB_RUNNABLE),
        ("Box.size", Level.CLASS_RUNNABLE),
        ("Box.limited", Level.FILE_RUNNABLE),
        ("Box.helped", Level.PROJECT_RUNNABLE),
        ("local_import", Level.PROJECT_RUNNABLE),
    ],
)
def test_each_level_is_the_widest_scope_the_function_needs(
    project: Path, target: str, level: Level
) -> None:
    assert analyze_python_file(project, "pkg/core.py", target).level is level


def test_references_are_classified_and_say_where_they_resolve(project: Path) -> None:
    result = analyze_python_file(project, "pkg/core.py", "Box.helped")
    rows = {(d.name, d.kind, d.scope) for d in result.dependencies}
    assert ("helper", RefKind.API, Scope.PROJECT) in rows
    assert ("hmod", RefKind.TYPE, Scope.PROJECT) in rows  # a module name is a type, like `os`
    assert ("other", RefKind.API, Scope.PROJECT) in rows
    assert ("items", RefKind.VAR, Scope.CLASS) in rows
    helper = next(d for d in result.dependencies if d.name == "helper")
    assert "relative import .helpers" in helper.origin
    hmod = next(d for d in result.dependencies if d.name == "hmod")
    assert "pkg/helpers.py" in hmod.origin


def test_third_party_is_recognised_from_the_installed_distributions(project: Path) -> None:
    result = analyze_python_file(project, "pkg/core.py", "uses_lib")
    dep = next(d for d in result.dependencies if d.name == "pydantic")
    assert dep.scope is Scope.THIRD_PARTY
    assert "distribution pydantic" in dep.origin


def test_another_interpreter_reports_its_own_packages() -> None:
    env = python_environment(Path(sys.executable))
    assert env.is_stdlib("json") and not env.is_stdlib("pydantic")
    assert "pydantic" in env.distribution_of("pydantic")
    assert "len" in env.builtins


def test_builtins_used_as_values_are_no_tokens_but_calls_are(project: Path) -> None:
    result = analyze_python_file(project, "pkg/core.py", "pure")
    assert result.oracle_context.apis == ("len", "sum", "map")
    assert result.oracle_context.vars == ()  # abs is passed, not called
    assert any(d.name == "abs" and not d.token for d in result.dependencies)


def test_unresolved_names_are_reported_and_leave_the_level_a_lower_bound(project: Path) -> None:
    result = analyze_python_file(project, "pkg/core.py", "Box.bad")
    assert result.unresolved == ("mystery",)
    assert result.level is Level.CLASS_RUNNABLE


def test_all_context_lists_imports_file_names_and_class_members(project: Path) -> None:
    ctx = analyze_python_file(project, "pkg/core.py", "Box.size").all_context
    assert ctx.imports == ("os", "json", "pydantic", "helpers", "pkg")
    assert "LIMIT" in ctx.file and "Box" in ctx.file and "pure" in ctx.file
    assert ctx.class_ == ("__init__", "limited", "helped", "bad", "items")


def test_attribute_calls_on_locals_are_apis_that_do_not_widen_the_level() -> None:
    source = "def f(zone, t):\n    return zone.localize(t).tzinfo\n"
    result = analyze_python_source(source, "f")
    assert result.oracle_context.apis == ("localize",)
    assert result.oracle_context.vars == ("tzinfo",)
    assert result.level is Level.SELF_CONTAINED


def test_a_bare_method_name_matches_when_unique(project: Path) -> None:
    assert analyze_python_file(project, "pkg/core.py", "limited").target == "Box.limited"


def test_missing_function_lists_the_functions_there(project: Path) -> None:
    with pytest.raises(UserError) as info:
        analyze_python_file(project, "pkg/core.py", "nope")
    assert "nope not found" in info.value.one_line()
    assert "Box.size" in info.value.one_line()


def test_missing_file_and_parse_errors_are_one_line_user_errors(project: Path) -> None:
    with pytest.raises(UserError, match="file not found"):
        analyze_python_file(project, "pkg/absent.py", "f")
    (project / "pkg" / "broken.py").write_text("def f(:\n")
    with pytest.raises(UserError, match=r"cannot parse pkg/broken\.py"):
        analyze_python_file(project, "pkg/broken.py", "f")
    with pytest.raises(UserError, match="interpreter not found"):
        python_environment(project / "no-python")


def test_source_layouts_under_src_resolve_absolute_project_imports(tmp_path: Path) -> None:
    (tmp_path / "src" / "lib").mkdir(parents=True)
    (tmp_path / "src" / "lib" / "__init__.py").write_text("")
    (tmp_path / "src" / "lib" / "util.py").write_text("def u():\n    return 1\n")
    (tmp_path / "src" / "lib" / "main.py").write_text(
        textwrap.dedent(
            """
            from lib.util import u

            def go():
                return u()
            """
        )
    )
    result = analyze_python_file(tmp_path, "src/lib/main.py", "go")
    assert result.level is Level.PROJECT_RUNNABLE
    assert current_python().is_stdlib("os")
