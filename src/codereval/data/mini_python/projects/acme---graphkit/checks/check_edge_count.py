from graphkit.graph import Graph

g = Graph()
g.add_edge("a", "b")
g.add_edge("b", "c")
g.add_edge("c", "c")
assert g.edge_count() == 3
d = Graph(directed=True)
d.add_edge("a", "b")
d.add_edge("b", "a")
assert d.edge_count() == 2
assert Graph().edge_count() == 0
