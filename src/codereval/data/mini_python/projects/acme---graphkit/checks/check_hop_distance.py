from graphkit.algorithms import build, hop_distance

graph = build([("a", "b", 1), ("b", "c", 1), ("c", "d", 1), ("a", "d", 1), ("x", "y", 1)])
assert hop_distance(graph, "a", "c") == 2
assert hop_distance(graph, "a", "d") == 1
assert hop_distance(graph, "b", "b") == 0
assert hop_distance(graph, "a", "x") is None
