"""Injection: the official last-def rule and our span rule, with honest re-indentation."""

from __future__ import annotations

import ast

import pytest

from codereval.source.inject import (
    InjectionError,
    inject_at,
    inject_last_def,
    last_def_text,
    syntax_problem,
)

MODULE = '''import os


def helper():
    return 1


class Box:
    @staticmethod
    def size(x):
        return 0

    def name(self):
        """old"""
        return "old"


def name(x):
    return "first"


def _name(x):
    return "last"


if __name__ == "__main__":
    assert name(1) == "new"
'''

SAMPLE = 'def name(x):\n    return "new"\n'


def test_official_rule_replaces_the_last_def_name_or__name() -> None:
    result = inject_last_def(MODULE, SAMPLE, "name")
    assert '    return "last"' not in result.text
    assert 'return "first"' in result.text  # the earlier def is left alone
    assert result.text.splitlines()[result.start - 1] == "def name(x):"
    ast.parse(result.text)


def test_method_takes_the_indentation_of_the_original_def() -> None:
    source = "class Box:\n    def name(self):\n        return 1\n\n\nx = Box().name()\n"
    result = inject_last_def(source, "def name(self):\n    return 2\n", "name")
    assert "    def name(self):\n        return 2\n" in result.text
    namespace: dict[str, object] = {}
    exec(compile(result.text, "m", "exec"), namespace)
    assert namespace["x"] == 2


def test_tabs_in_the_file_and_in_the_sample() -> None:
    source = "class Box:\n\tdef name(self):\n\t\treturn 1\n\nx = Box().name()\n"
    result = inject_last_def(source, "def name(self):\n\treturn 3\n", "name")
    assert "\tdef name(self):\n\t\treturn 3\n" in result.text
    namespace: dict[str, object] = {}
    exec(compile(result.text, "m", "exec"), namespace)
    assert namespace["x"] == 3
    # spaces in the sample inside a tab-indented class are still one consistent block
    mixed = inject_last_def(source, "def name(self):\n    return 4\n", "name")
    exec(compile(mixed.text, "m", "exec"), namespace)
    assert namespace["x"] == 4


def test_original_decorators_are_kept_unless_the_sample_brings_its_own() -> None:
    source = "class Box:\n    @staticmethod\n    def size(x):\n        return 0\n"
    kept = inject_last_def(source, "def size(x):\n    return x * 2\n", "size")
    assert kept.text.count("@staticmethod") == 1
    assert "    @staticmethod\n    def size(x):\n        return x * 2" in kept.text
    own = inject_last_def(source, "@staticmethod\ndef size(x):\n    return 5\n", "size")
    assert own.text.count("@staticmethod") == 1


def test_indented_sample_is_shifted_and_multiline_strings_are_untouched() -> None:
    sample = '    def name(x):\n        text = """a\nb"""\n        return text\n'
    source = "class Box:\n    def name(x):\n        return 1\n"
    result = inject_last_def(source, sample, "name")
    assert '        text = """a\nb"""' in result.text
    namespace: dict[str, object] = {}
    exec(compile(result.text + "y = Box.name(0)\n", "m", "exec"), namespace)
    assert namespace["y"] == "a\nb"


def test_span_rule_replaces_the_recorded_lines() -> None:
    source = (
        "import re\n\n\nclass Box:\n    def name(self):\n        return 1\n\n"
        "    def other(self):\n        return 2\n"
    )
    result = inject_at(source, "def name(self):\n    return 9\n", "name", lineno=5, end_lineno=6)
    assert "        return 9" in result.text and "        return 2" in result.text
    assert (result.start, result.end) == (5, 6)


def test_a_sample_that_does_not_parse_is_a_syntax_error() -> None:
    assert syntax_problem("def f(:\n    pass\n") is not None
    assert syntax_problem(SAMPLE) is None
    with pytest.raises(InjectionError) as info:
        inject_last_def(MODULE, "def name(x)\n    return 1\n", "name")
    assert info.value.syntax


def test_a_sample_that_breaks_its_surroundings_is_a_syntax_error() -> None:
    # Parses alone, but a bare `return` after dedent lands outside the function.
    with pytest.raises(InjectionError) as info:
        inject_at("def f():\n    return 1\n", "def f():\n    pass\nreturn 2\n", "f",
                  lineno=1, end_lineno=2)
    assert info.value.syntax


def test_missing_target_is_not_the_samples_fault() -> None:
    with pytest.raises(InjectionError) as info:
        inject_last_def("x = 1\n", SAMPLE, "name")
    assert not info.value.syntax


def test_a_name_mangled_method_is_the_one_a_record_names_with_one_underscore() -> None:
    # python-sql-parameters' records say `_create_in_regex` of a class whose method is
    # `__create_in_regex` (name-mangled): that method is the one replaced.
    source = ("class Params:\n    def __create_in_regex(self):\n        return 1\n\n"
              "    def other(self):\n        return self.__create_in_regex()\n")
    result = inject_last_def(source, "def _create_in_regex(self):\n    return 2\n",
                             "_create_in_regex")
    assert "def __create_in_regex" not in result.text
    assert "    def _create_in_regex(self):\n        return 2\n" in result.text
    assert last_def_text(source, "_create_in_regex") == (
        "def __create_in_regex(self):\n    return 1\n")
