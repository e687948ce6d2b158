"""Mutants of a reference Java method: one site of its body changed, the rest left as written."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from codereval.analysis.java import java_parser
from codereval.families.build.java_mutate import java_mutants, java_mutants_by_kind


def _changes(method: str, limit: int = 100) -> list[tuple[str, str]]:
    """(removed, added) per mutant: the whole words between what it shares with ``method``."""

    def word(char: str) -> bool:
        return char.isalnum() or char in '_"'

    found = []
    for mutant in java_mutants(method, limit):
        shortest = min(len(method), len(mutant))
        start = 0
        while start < shortest and method[start] == mutant[start]:
            start += 1
        end = 0
        while end < shortest - start and method[-1 - end] == mutant[-1 - end]:
            end += 1
        while start > 0 and word(method[start - 1]):
            start -= 1
        while end > 0 and word(method[-end]):
            end -= 1
        found.append((method[start : len(method) - end], mutant[start : len(mutant) - end]))
    return found


def _lines_changed(method: str, mutant: str) -> list[tuple[str, str]]:
    before, after = method.splitlines(), mutant.splitlines()
    assert len(before) == len(after)
    return [(old, new) for old, new in zip(before, after, strict=True) if old != new]


def _parses(method: str) -> bool:
    tree = java_parser().parse(("class __M__ {\n" + method + "\n}\n").encode())
    return not tree.root_node.has_error


SCALE = """\
int scale(int x, int factor) {
    if (x > factor) {
        return x * factor;
    }
    return x;
}
"""


def test_an_if_condition_is_negated() -> None:
    mutants = java_mutants(SCALE, 20)
    assert SCALE.replace("if (x > factor)", "if (!(x > factor))") in mutants


def test_a_while_condition_is_negated_but_not_a_constant_one() -> None:
    method = (
        "void f(int n) {\n"
        "    while (n > 0) { n--; }\n"
        "    while (true) { if (n == 3) break; }\n"
        "    do { n++; } while (false);\n"
        "}\n"
    )
    texts = java_mutants(method, 100)
    assert method.replace("while (n > 0)", "while (!(n > 0))") in texts
    # Negated or flipped, a loop's constant condition leaves code javac calls unreachable.
    assert not any("while (!(true))" in text or "while (false) {" in text for text in texts)
    assert not any("while (true);" in text for text in texts)


@pytest.mark.parametrize(
    ("expression", "mutated"),
    [
        ("a + b", "a - b"),
        ("a - b", "a + b"),
        ("a * b", "a / b"),
        ("a / b", "a * b"),
        ("a % b", "a * b"),
        ("a < b", "a <= b"),
        ("a <= b", "a < b"),
        ("a > b", "a >= b"),
        ("a >= b", "a > b"),
        ("a == b", "a != b"),
        ("a != b", "a == b"),
        ("a < b && c", "a < b || c"),
        ("a < b || c", "a < b && c"),
    ],
)
def test_each_operator_is_swapped_for_its_counterpart(expression: str, mutated: str) -> None:
    method = f"Object f(int a, int b, boolean c) {{\n    Object r = {expression};\n}}\n"
    assert method.replace(expression, mutated) in java_mutants(method, 100)


def test_a_not_is_dropped() -> None:
    method = "boolean f(boolean a) {\n    boolean b = !a;\n    return b;\n}\n"
    assert method.replace("!a", "a") in java_mutants(method, 100)


def test_constants_change_integers_booleans_and_strings() -> None:
    method = (
        "void f() {\n"
        "    long big = 1_000L;\n"
        "    int small = 41;\n"
        "    boolean on = true;\n"
        '    String word = "word";\n'
        '    String none = "";\n'
        "    int hex = 0x1F;\n"
        "}\n"
    )
    # An empty string stays empty, and only decimal integers are incremented (not 0x1F).
    assert _changes(method) == [
        ("1_000L", "1001L"),
        ("41", "42"),
        ("true", "false"),
        ('"word"', '""'),
    ]


def test_an_integer_at_the_edge_of_its_type_is_not_incremented() -> None:
    method = "long f() {\n    int a = 2147483647;\n    return 9223372036854775807L;\n}\n"
    assert [kind for kind, _ in java_mutants_by_kind(method, 100)] == ["return"]


def test_increments_and_decrements_swap() -> None:
    method = "void f(int i, int j) {\n    i++;\n    --j;\n    i--;\n    ++j;\n}\n"
    assert {("i++", "i--"), ("--j", "++j"), ("i--", "i++"), ("++j", "--j")} <= {
        (line_old.strip(" ;"), line_new.strip(" ;"))
        for text in java_mutants(method, 100)
        for line_old, line_new in _lines_changed(method, text)
    }


def test_javadoc_and_string_concatenation_are_left_alone() -> None:
    method = (
        "/**\n"
        ' * Greets: "Hello, " + name; if (a < b) return 1 + 2;\n'
        " */\n"
        "String greet(String name, int times) {\n"
        '    // a comment: "x" + 1 < 2\n'
        '    String s = "Hello, " + name + "!";\n'
        '    String t = name + ("" + times);\n'
        "    return s + t;\n"
        "}\n"
    )
    header = method[: method.index("{\n    //") + 1]
    made = java_mutants_by_kind(method, 100)
    assert made
    assert all(text.startswith(header) for _, text in made)
    assert all('    // a comment: "x" + 1 < 2\n' in text for _, text in made)
    # `s + t` is concatenation too, but nothing in the syntax says so: it alone is mutated.
    operators = [text for kind, text in made if kind == "operator"]
    assert operators == [method.replace("s + t", "s - t")]
    assert ('"Hello, "', '""') in _changes(method)


def test_a_reference_return_becomes_null() -> None:
    method = 'String f(String s) {\n    if (s == null) return null;\n    return s.trim();\n}\n'
    changes = _changes(method)
    assert ("s.trim()", "null") in changes
    assert ("null;\n    return s.trim()", "null;\n    return null") not in changes
    # `return null;` itself has nothing to become.
    assert sum(1 for _, added in changes if added == "null") == 1


@pytest.mark.parametrize(
    ("declared", "value", "mutated"),
    [
        ("int", "x + 1", "0"),
        ("long", "x", "0"),
        ("char", "c", "0"),
        ("double", "x * 2.5", "0.0"),
        ("float", "x / 2f", "0.0f"),
        ("boolean", "x > 1", "!(x > 1)"),
        ("int[]", "new int[] {x}", "null"),
        ("Integer", "x", "null"),
    ],
)
def test_a_returned_value_is_replaced_by_one_of_its_type(
    declared: str, value: str, mutated: str
) -> None:
    method = f"{declared} f(int x, char c) {{\n    return {value};\n}}\n"
    expected = f"{declared} f(int x, char c) {{\n    return {mutated};\n}}\n"
    assert expected in java_mutants(method, 100)


def test_a_void_method_gets_no_return_null() -> None:
    method = "void f(int x) {\n    if (x > 0) {\n        return;\n    }\n    use(x);\n}\n"
    made = java_mutants_by_kind(method, 100)
    assert made
    assert all(kind != "return" for kind, _ in made)
    assert all("null" not in text for _, text in made)


def test_a_constructor_gets_no_return_mutant() -> None:
    method = "Box(int x) {\n    this.x = x + 1;\n    return;\n}\n"
    assert [kind for kind, _ in java_mutants_by_kind(method, 100)] == ["operator", "constant"]


def test_a_return_inside_a_lambda_or_anonymous_class_is_not_the_methods() -> None:
    method = (
        "String f(List<String> xs) {\n"
        "    xs.sort((a, b) -> { return a.length() - b.length(); });\n"
        "    Runnable r = new Runnable() { public void run() { return; } };\n"
        "    Comparator<String> c = new Comparator<String>() {\n"
        "        public int compare(String a, String b) { return 0; }\n"
        "    };\n"
        "    return xs.get(0);\n"
        "}\n"
    )
    returns = [text for kind, text in java_mutants_by_kind(method, 100) if kind == "return"]
    assert returns == [method.replace("return xs.get(0);", "return null;")]
    # The lambda's subtraction is still a site.
    assert method.replace("a.length() - b", "a.length() + b") in java_mutants(method, 100)


def test_a_generic_method() -> None:
    method = (
        "public static <T extends Comparable<T>> List<T> firstN(List<T> items, int n) {\n"
        "    List<T> out = new ArrayList<>();\n"
        "    for (int i = 0; i < n && i < items.size(); i++) {\n"
        "        out.add(items.get(i));\n"
        "    }\n"
        "    return out;\n"
        "}\n"
    )
    made = java_mutants_by_kind(method, 100)
    signature = method.splitlines()[0]
    assert all(text.splitlines()[0] == signature for _, text in made)
    assert ("return", method.replace("return out;", "return null;")) in made
    assert "List<T> out = new ArrayList<>();" in made[0][1]
    kinds = {kind for kind, _ in made}
    assert kinds == {"constant", "comparison", "boolean", "increment", "return"}


def test_an_indented_method_with_annotations_and_javadoc() -> None:
    method = textwrap.indent(
        "/**\n"
        " * Whether {@code value} lies in [low, high]; 1 + 1 == 2 and !true.\n"
        " */\n"
        "@Override\n"
        '@SuppressWarnings(value = "unchecked", count = 3)\n'
        "public boolean within(final int value, int low, int high) {\n"
        "    return !(value < low) && value <= high;\n"
        "}",
        "    ",
    )
    made = java_mutants_by_kind(method, 100)
    body = "        return !(value < low) && value <= high;"
    assert len(made) == 5
    for _, text in made:
        [(old, new)] = _lines_changed(method, text)
        assert old == body
        assert new.startswith("        return ")
    assert {kind for kind, _ in made} == {"return", "boolean", "not", "comparison"}
    negated = method.replace(body, "        return !(!(value < low) && value <= high);")
    assert ("return", negated) in made


def test_a_dropped_token_does_not_fuse_its_neighbours() -> None:
    method = "boolean f(boolean x, int y) {\n    if (y>-1) return!x;\n    return(x);\n}\n"
    texts = java_mutants(method, 100)
    assert method.replace("return!x", "return x") in texts
    assert method.replace("y>-1", "y>= -1") in texts
    assert method.replace("return(x)", "return!((x))") in texts


def test_at_most_limit_mutants_spread_over_kinds() -> None:
    method = (
        "int f(int[] xs, boolean strict) {\n"
        "    int total = 0;\n"
        "    int count = 10;\n"
        "    for (int i = 0; i < xs.length; i++) {\n"
        "        if (xs[i] > 2 && !strict) {\n"
        "            total = total + xs[i] * 3;\n"
        "        }\n"
        "    }\n"
        "    return total - count;\n"
        "}\n"
    )
    everything = java_mutants_by_kind(method, 1000)
    kinds = {kind for kind, _ in everything}
    assert kinds == {
        "constant", "comparison", "increment", "condition", "boolean", "not", "operator", "return"
    }
    assert len(everything) > len(kinds)
    first = java_mutants_by_kind(method, len(kinds))
    assert {kind for kind, _ in first} == kinds
    assert java_mutants_by_kind(method, 3) == first[:3]
    assert java_mutants(method, 0) == []
    assert java_mutants(method, 5) == [text for _, text in first[:5]]


def test_every_mutant_differs_in_one_place_and_parses() -> None:
    method = (
        "    /** Counts \"words\". */\n"
        "    @Deprecated\n"
        "    static int words(String text, boolean strict) {\n"
        "        int n = 0; // how many\n"
        "        boolean inWord = false;\n"
        "        for (int i = 0; i < text.length(); i++) {\n"
        "            char c = text.charAt(i);\n"
        "            if (c == ' ' || (strict && !Character.isLetter(c))) {\n"
        "                inWord = false;\n"
        "            } else if (!inWord) {\n"
        "                inWord = true;\n"
        "                n = n + 1;\n"
        "            }\n"
        "        }\n"
        "        return n % 1000;\n"
        "    }\n"
    )
    texts = java_mutants(method, 1000)
    assert len(texts) > 15
    assert len(set(texts)) == len(texts)
    assert method not in texts
    for text in texts:
        assert _parses(text)
        assert len(_lines_changed(method, text)) == 1
        assert text.splitlines()[:3] == method.splitlines()[:3]
    assert texts == java_mutants(method, 1000)


def test_nothing_to_mutate_or_nothing_that_parses() -> None:
    assert java_mutants("void f() {\n    System.out.println();\n}\n", 10) == []
    assert java_mutants("abstract int f(int x);\n", 10) == []
    assert java_mutants("int f( {\n    return 1 + 2;\n}\n", 10) == []
    assert java_mutants("", 10) == []


def test_case_labels_keep_their_constants() -> None:
    method = (
        "int f(int x) {\n"
        "    switch (x) {\n"
        "        case 1: return 2;\n"
        "        default: return 3;\n"
        "    }\n"
        "}\n"
    )
    changes = _changes(method)
    assert ("2", "3") in changes
    assert ("1", "2") not in changes


def test_a_long_concatenation_does_not_exhaust_recursion() -> None:
    terms = " + ".join(f'"s{i}"' for i in range(3000))
    method = f"String f() {{\n    return {terms};\n}}\n"
    made = java_mutants_by_kind(method, 3)
    assert [kind for kind, _ in made] == ["return", "constant", "constant"]


COMPILED = """\
    /** Scores {@code values}: "odd" ones count, 1 + 1. */
    static int score(int[] values, int limit, boolean strict) {
        int total = 0;
        String label = "score";
        for (int i = 0; i < values.length; i++) {
            int v = values[i];
            if (v % 2 != 0 && !(strict && v >= limit)) {
                total = total + v * 3 - v / 2;
            } else if (v <= 0 || v == limit) {
                --total;
            }
        }
        while (total > 100 && !label.isEmpty()) {
            total--;
        }
        boolean negative = false;
        return negative ? -total : total;
    }
"""


def test_every_mutant_of_a_small_class_compiles(tmp_path: Path) -> None:
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("javac is not installed")
    made = java_mutants_by_kind(COMPILED, 1000)
    assert {kind for kind, _ in made} == {
        "constant", "comparison", "increment", "condition", "boolean", "not", "operator", "return"
    }
    sources = []
    for index, (_, text) in enumerate([("reference", COMPILED), *made]):
        source = tmp_path / f"Sample{index}.java"
        source.write_text(f"class Sample{index} {{\n{text}}}\n", encoding="utf-8")
        sources.append(str(source))
    result = subprocess.run(
        [javac, "-d", str(tmp_path / "classes"), *sources],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert len(list((tmp_path / "classes").glob("Sample*.class"))) == len(made) + 1
