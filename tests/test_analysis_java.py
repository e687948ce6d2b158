"""Java dependency analysis with tree-sitter: classification, levels, classpath, errors."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from codereval.analysis import Scope, analyze_java_file, analyze_java_source
from codereval.analysis.deps import RefKind
from codereval.errors import UserError
from codereval.model import Level

FOO = """package com.ex;

import java.util.List;
import java.util.ArrayList;
import com.ex.util.Strings;
import org.lib.Text;
import static java.util.Objects.requireNonNull;

public class Foo {
    private final List<String> items = new ArrayList<>();
    private int count;
    static final String SEP = ",";

    public boolean isBlank(String s) {
        return s == null || s.trim().isEmpty();
    }

    public String[] split(String s) {
        return s.split(SEP);
    }

    public List<String> copy(String[] xs) {
        List<String> out = new ArrayList<>();
        for (String x : xs) { out.add(requireNonNull(x)); }
        return out;
    }

    public boolean viaLib(String s) {
        return Text.blank(s);
    }

    public boolean viaHelper() {
        return Helper.ok();
    }

    public String join() {
        return Strings.join(items, SEP);
    }
}

class Helper { static boolean ok() { return true; } }
"""


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    src = tmp_path / "src" / "main" / "java" / "com" / "ex"
    (src / "util").mkdir(parents=True)
    (src / "Foo.java").write_text(FOO)
    (src / "util" / "Strings.java").write_text(
        "package com.ex.util;\npublic class Strings {\n"
        "  public static String join(java.util.List<String> xs, String sep) { return sep; }\n}\n"
    )
    return tmp_path


FILE = "src/main/java/com/ex/Foo.java"


@pytest.mark.parametrize(
    ("method", "level"),
    [
        ("Foo.isBlank", Level.SELF_CONTAINED),
        ("Foo.copy", Level.SLIB_RUNNABLE),
        ("Foo.viaLib", Level.PLIB_RUNNABLE),
        ("Foo.split", Level.CLASS_RUNNABLE),
        ("Foo.viaHelper", Level.FILE_RUNNABLE),
        ("Foo.join", Level.PROJECT_RUNNABLE),
    ],
)
def test_each_level_is_the_widest_scope_the_method_needs(
    project: Path, method: str, level: Level
) -> None:
    assert analyze_java_file(project, FILE, method).level is level


def test_tokens_mirror_the_official_java_records(project: Path) -> None:
    blank = analyze_java_file(project, FILE, "Foo.isBlank").oracle_context
    assert set(blank.apis) == {"isEmpty", "trim"} and blank.classes == ("String",)
    split = analyze_java_file(project, FILE, "Foo.split").oracle_context
    assert set(split.classes) == {"String[]", "String"}
    assert split.apis == ("split",) and split.vars == ("SEP",)


def test_references_say_where_they_resolve(project: Path) -> None:
    rows = {
        (d.name, d.kind, d.scope): d.origin
        for d in analyze_java_file(project, FILE, "Foo.copy").dependencies
    }
    assert "java.util.List (JDK)" in rows[("List", RefKind.TYPE, Scope.STDLIB)]
    assert "static import" in rows[("requireNonNull", RefKind.API, Scope.STDLIB)]
    assert ("add", RefKind.API, Scope.VALUE) in rows
    join = {
        (d.name, d.scope): d.origin
        for d in analyze_java_file(project, FILE, "Foo.join").dependencies
    }
    assert "src/main/java/com/ex/util/Strings.java" in join[("Strings", Scope.PROJECT)]


def test_classpath_jars_name_the_library(project: Path, tmp_path: Path) -> None:
    jar = tmp_path / "text-1.0.jar"
    with zipfile.ZipFile(jar, "w") as archive:
        archive.writestr("org/lib/Text.class", b"\xca\xfe\xba\xbe")
    result = analyze_java_file(project, FILE, "Foo.viaLib", classpath=[jar])
    text = next(d for d in result.dependencies if d.name == "Text")
    assert text.scope is Scope.THIRD_PARTY and "text-1.0.jar" in text.origin
    bare = analyze_java_file(project, FILE, "Foo.viaLib")
    assert "not on the classpath" in next(d for d in bare.dependencies if d.name == "Text").origin


def test_all_context_has_imports_file_types_methods_and_fields(project: Path) -> None:
    ctx = analyze_java_file(project, FILE, "Foo.isBlank").all_context
    assert ctx.imports[0] == "java.util.List" and "java.util.Objects.requireNonNull" in ctx.imports
    assert ctx.file == ("Helper",)
    assert "isBlank" not in ctx.class_ and "join" in ctx.class_
    assert ctx.class_level == ("items", "count", "SEP")


def test_lambda_parameters_and_locals_are_not_dependencies() -> None:
    source = (
        "class A { long f(java.util.List<String> xs) "
        "{ return xs.stream().map(x -> x.length()).count(); } }"
    )
    result = analyze_java_source(source, "f")
    names = {d.name for d in result.dependencies}
    assert "x" not in names and "xs" not in names
    assert {"stream", "map", "length", "count"} <= names


def test_bad_input_is_one_line(project: Path) -> None:
    with pytest.raises(UserError, match=r"method Foo.nope not found .*Foo.isBlank"):
        analyze_java_file(project, FILE, "Foo.nope")
    with pytest.raises(UserError, match="file not found"):
        analyze_java_file(project, "src/Nope.java", "A.f")
    with pytest.raises(UserError, match="syntax error at line 1"):
        analyze_java_source("class A { void f( { }", "f")
