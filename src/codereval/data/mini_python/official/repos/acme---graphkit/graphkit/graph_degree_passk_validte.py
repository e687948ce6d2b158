"""An adjacency-map graph, directed or not, with weighted edges."""


class NodeMissing(KeyError):
    """A node that is not in the graph was asked for."""


class CycleError(ValueError):
    """The graph has a cycle, so it has no topological order."""


class Graph:
    def __init__(self, directed=False):
        self.directed = directed
        self._adjacency = {}

    def add_node(self, node):
        self._adjacency.setdefault(node, {})

    def add_edge(self, source, target, weight=1):
        self.add_node(source)
        self.add_node(target)
        self._adjacency[source][target] = weight
        if not self.directed:
            self._adjacency[target][source] = weight

    def nodes(self):
        return sorted(self._adjacency)

    def neighbors(self, node):
        if node not in self._adjacency:
            raise NodeMissing(node)
        return sorted(self._adjacency[node])

    def degree(self, node):
        """The number of edges touching node; in a directed graph, in-edges plus
        out-edges. A self-loop counts twice. Unknown nodes raise NodeMissing."""
        out_edges = len(self.neighbors(node))
        if not self.directed:
            return out_edges + (1 if node in self._adjacency[node] else 0)
        in_edges = sum(1 for targets in self._adjacency.values() if node in targets)
        return out_edges + in_edges

    def edge_count(self):
        """How many edges the graph has (an undirected edge counts once)."""
        total = sum(len(targets) for targets in self._adjacency.values())
        if self.directed:
            return total
        loops = sum(1 for node, targets in self._adjacency.items() if node in targets)
        return (total + loops) // 2


if __name__ == "__main__":
    isT = True
    g = Graph()
    g.add_edge('a', 'b')
    g.add_edge('a', 'c')
    g.add_edge('c', 'c')
    d = Graph(directed=True)
    d.add_edge('a', 'b')
    d.add_edge('c', 'a')
    isT = g.degree('a') == 2 and g.degree('c') == 3 and g.degree('b') == 1
    isT = isT and d.degree('a') == 2 and d.degree('b') == 1
    try:
        g.degree('zzz')
        isT = False
    except NodeMissing:
        pass
    if not isT:
        raise Exception("Result not True!!!")
