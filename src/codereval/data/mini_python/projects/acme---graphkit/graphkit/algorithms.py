"""Traversals over graphkit graphs."""
from collections import deque

from graphkit.graph import CycleError, Graph, NodeMissing


def bfs_order(graph, start):
    """Nodes reachable from start in breadth-first order, visiting neighbours in
    sorted order; start comes first. Unknown start raises NodeMissing."""
    if start not in graph.nodes():
        raise NodeMissing(start)
    seen = {start}
    order = []
    queue = deque([start])
    while queue:
        node = queue.popleft()
        order.append(node)
        for nxt in graph.neighbors(node):
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return order


def topological_sort(graph):
    """A topological order of a directed graph (Kahn's algorithm, smallest ready
    node first, so the answer is unique); raises CycleError on a cycle."""
    indegree = {node: 0 for node in graph.nodes()}
    for node in graph.nodes():
        for nxt in graph.neighbors(node):
            indegree[nxt] += 1
    ready = sorted(node for node, count in indegree.items() if count == 0)
    order = []
    while ready:
        node = ready.pop(0)
        order.append(node)
        for nxt in graph.neighbors(node):
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                ready.append(nxt)
                ready.sort()
    if len(order) != len(indegree):
        raise CycleError("graph has a cycle")
    return order


def hop_distance(graph, start, goal):
    """Fewest edges on a path from start to goal, or None when goal is unreachable."""
    if start == goal:
        return 0
    if goal not in bfs_order(graph, start):
        return None
    frontier, hops, seen = [start], 0, {start}
    while frontier:
        hops += 1
        nxt_frontier = []
        for node in frontier:
            for nxt in graph.neighbors(node):
                if nxt == goal:
                    return hops
                if nxt not in seen:
                    seen.add(nxt)
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
    return None


def build(edges, directed=False):
    graph = Graph(directed=directed)
    for source, target, weight in edges:
        graph.add_edge(source, target, weight)
    return graph


__all__ = ["CycleError", "NodeMissing", "bfs_order", "build", "hop_distance", "topological_sort"]
