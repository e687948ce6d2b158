import pytest

from graphkit.parse import parse_edge_line


def test_two_fields_default_weight():
    assert parse_edge_line("a b") == ("a", "b", 1)


def test_weights_keep_their_type():
    assert parse_edge_line("a b 3") == ("a", "b", 3)
    assert isinstance(parse_edge_line("a b 3")[2], int)
    assert parse_edge_line("x y 2.5  # heavy") == ("x", "y", 2.5)


def test_blank_and_comment_lines():
    assert parse_edge_line("   ") is None
    assert parse_edge_line("# only a comment") is None


def test_bad_lines_raise():
    with pytest.raises(ValueError):
        parse_edge_line("a b c d")
