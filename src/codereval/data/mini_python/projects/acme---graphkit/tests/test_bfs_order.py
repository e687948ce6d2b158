import pytest

from graphkit.algorithms import bfs_order, build
from graphkit.graph import NodeMissing


def test_undirected_breadth_first_sorted():
    graph = build([("a", "c", 1), ("a", "b", 1), ("b", "d", 1), ("c", "e", 1), ("x", "y", 1)])
    assert bfs_order(graph, "a") == ["a", "b", "c", "d", "e"]


def test_directed_only_follows_edges():
    graph = build([("a", "b", 1), ("c", "a", 1)], directed=True)
    assert bfs_order(graph, "a") == ["a", "b"]
    assert bfs_order(graph, "c") == ["c", "a", "b"]


def test_unknown_start():
    with pytest.raises(NodeMissing):
        bfs_order(build([("a", "b", 1)]), "zzz")
