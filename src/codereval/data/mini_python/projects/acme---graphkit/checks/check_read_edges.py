from graphkit.parse import read_edges

TEXT = """# roads
a b
b c 4   # toll
\n
c d 0.5
"""
assert read_edges(TEXT) == [("a", "b", 1), ("b", "c", 4), ("c", "d", 0.5)]
assert read_edges("") == []
assert read_edges("# nothing\n\n") == []
