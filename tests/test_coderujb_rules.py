"""CoderUJB's rules for reading a Java file and choosing APR/DD bugs, as
codereval.families.coderujb.rebuild re-creates them (docs/coderujb.md, "Which tasks, by which
rules"): rows 0-based, whole-line sources, comments nearest first, signatures up to the body,
the file's indent, the abstract class context, and the one-changed-function selection."""

from __future__ import annotations

import pytest

from codereval.families.coderujb.rebuild.javasource import JavaSource, code_context, commented
from codereval.families.coderujb.rebuild.tasks import _probes

SOURCE = """package p;

import java.util.List;
import java.util.Map;

/** The class. */
@Deprecated
public class Box<T> extends Base implements Api {
    private int size = 0;
    static final String NAME = "box";

    public Box() {
    }

    // a line comment
    /**
     * Adds.
     */
    @Override
    public int add(int a,
                   int b) throws Exception {
        Runnable r = new Runnable() {
            public void run() {
            }
        };
        return a + b;
    }

    abstract static class Inner {
        abstract void hook();

        int twice(int x) {
            return 2 * x;
        }
    }

    enum Kind { A, B; int code() { return 1; } }
}
"""


@pytest.fixture(scope="module")
def box() -> JavaSource:
    return JavaSource(SOURCE)


def test_text_is_normalised_without_a_final_newline() -> None:
    assert JavaSource("class A {}\r\n").text == "class A {}"


def test_functions_come_shallower_first_with_0_based_rows_and_whole_lines(
        box: JavaSource) -> None:
    names = [f.name for f in box.functions()]
    assert names[:2] == ["Box", "add"]  # members of the class before nested ones
    add = next(f for f in box.functions() if f.name == "add")
    assert (add.start, add.end) == (18, 26)  # from @Override to the closing brace
    assert add.source.startswith("    @Override\n    public int add(int a,")
    assert add.signature == "@Override\n    public int add(int a,\n                   int b) " \
                            "throws Exception "


def test_the_comment_is_every_comment_right_above_nearest_first(box: JavaSource) -> None:
    add = next(f for f in box.functions() if f.name == "add")
    assert add.comment == "    /**\n     * Adds.\n     */\n    // a line comment"
    ctor = next(f for f in box.functions() if f.name == "Box")
    assert ctor.comment == ""


def test_complete_functions_are_class_and_enum_members_with_a_body(box: JavaSource) -> None:
    complete = {f.name: f.complete for f in box.functions()}
    assert complete["add"] and complete["twice"] and complete["code"]
    assert complete["run"]  # an anonymous class's method counts, as in CoderUJB
    assert not complete["hook"]  # abstract: no body
    add = next(f for f in box.functions() if f.name == "add")
    assert add.nested  # it holds the anonymous class's run()


def test_a_line_belongs_to_the_outermost_function_holding_it(box: JavaSource) -> None:
    inside_run = box.enclosing(24)  # 1-based: `public void run() {`
    assert inside_run is not None and inside_run.name == "add"
    assert box.enclosing(9) is None  # a field


def test_the_abstract_class_context(box: JavaSource) -> None:
    parts = box.class_context()
    assert parts.import_context == "package p;\n\nimport java.util.List;\nimport java.util.Map;\n\n"
    assert parts.class_signature == \
        "@Deprecated\npublic class Box<T> extends Base implements Api "
    assert parts.class_field_context == (
        '    private int size = 0;\n    static final String NAME = "box";')
    signatures = parts.class_function_signature_context.split("\n")
    assert signatures[:2] == ["    public Box();", "    @Override"]
    assert "    abstract void hook();" in signatures  # already ends with ';'
    assert "    int code();" not in signatures  # enum members are not listed
    context = code_context(parts)
    assert context.startswith("package p;") and context.endswith("}")
    assert "public class Box<T> extends Base implements Api  {\n    private int size" in context
    assert commented("a\nb") == "// a\n// b"


def test_the_files_indent_is_its_shortest_line_leading_whitespace(box: JavaSource) -> None:
    assert box.indent() == "    "
    assert JavaSource("class A {\n\tint x;\n}\n").indent() == "    "


def test_every_changed_line_probes_both_versions() -> None:
    buggy = "a\nb\nc\nd\ne"
    fixed = "a\nb\nC\nd\ne\nf"
    # -c: the buggy line 3 and the fixed line facing it; +C likewise; +f: fixed line 6 and
    # the buggy line after the end (6), which lies in no function.
    assert _probes(buggy, fixed) == [(3, "sub"), (3, "add"), (3, "add"), (4, "sub"),
                                     (6, "add"), (6, "sub")]
