"""Injecting a generated Java method: the span is replaced, the rest of the file is untouched."""

from __future__ import annotations

import pytest

from codereval.java.inject import (
    JavaInjectionError,
    first_class_name,
    inject_method,
    package_of,
)

FILE = """package a.b;

public class Box {
    private int size;

    public int size() {
        return size;
    }

    private void grow() {
        size++;
    }
}
"""


def test_the_span_is_replaced_and_every_other_line_kept() -> None:
    code = "    public int size() {\n        return size * 2;\n    }"
    out = inject_method(FILE, code, lineno=6, end_lineno=8)
    lines = out.text.splitlines()
    assert lines[5:8] == code.splitlines()
    assert lines[:5] == FILE.splitlines()[:5]
    assert lines[8:] == FILE.splitlines()[8:]
    assert out.privates_rewritten == 0
    assert "private int size;" in out.text


def test_a_longer_or_shorter_method_shifts_the_rest_unchanged() -> None:
    out = inject_method(FILE, "public int size() { return 1; }\n", lineno=6, end_lineno=8)
    assert out.text.endswith(FILE.split("    }\n", 1)[1])
    assert out.text.count("\n") == FILE.count("\n") - 2


def test_compat_rewrites_private_to_public_in_the_whole_file_and_counts() -> None:
    out = inject_method(FILE, "    public int size() { return size; }", lineno=6, end_lineno=8,
                        compat=True)
    assert "private " not in out.text
    assert out.privates_rewritten == 2
    assert "public void grow()" in out.text


def test_a_span_outside_the_file_is_an_error() -> None:
    with pytest.raises(JavaInjectionError, match="outside the file"):
        inject_method(FILE, "x", lineno=10, end_lineno=99)
    with pytest.raises(JavaInjectionError):
        inject_method(FILE, "x", lineno=0, end_lineno=1)


def test_package_and_public_class_are_read_past_comments() -> None:
    text = (
        "/* package x.y; */\n// class Nope\npackage p.q;\n"
        "class Helper {}\npublic final class Main_t {}\n"
    )
    assert package_of(text) == "p.q"
    assert first_class_name(text) == "Main_t"
    assert first_class_name("class Only {}") == "Only"
    assert package_of("class Only {}") == ""
