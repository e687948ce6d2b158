from graphkit.algorithms import CycleError, build, topological_sort

graph = build([("shirt", "tie", 1), ("tie", "jacket", 1), ("pants", "shoes", 1),
               ("pants", "belt", 1), ("belt", "jacket", 1), ("shirt", "belt", 1)], directed=True)
assert topological_sort(graph) == ["pants", "shirt", "belt", "shoes", "tie", "jacket"]
assert topological_sort(build([], directed=True)) == []
try:
    topological_sort(build([("a", "b", 1), ("b", "a", 1)], directed=True))
except CycleError:
    pass
else:
    raise AssertionError("a cycle must raise CycleError")
