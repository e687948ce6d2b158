from invoicer.money import Money

parts = Money(100, "USD").allocate([1, 1, 1])
assert parts == [Money(34, "USD"), Money(33, "USD"), Money(33, "USD")]
assert Money(5).allocate([3, 7]) == [Money(2), Money(3)]
assert Money(1000).allocate([70, 20, 10]) == [Money(700), Money(200), Money(100)]
assert sum(p.cents for p in Money(997).allocate([2, 3, 5])) == 997
try:
    Money(10).allocate([0, 0])
except ValueError:
    pass
else:
    raise AssertionError("ratios summing to zero must raise ValueError")
