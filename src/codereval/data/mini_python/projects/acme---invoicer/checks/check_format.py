from invoicer.money import Money

assert Money(1205).format() == "EUR 12.05"
assert Money(-50, "USD").format() == "USD -0.50"
assert Money(7).format() == "EUR 0.07"
assert Money(123456, "GBP").format() == "GBP 1234.56"
