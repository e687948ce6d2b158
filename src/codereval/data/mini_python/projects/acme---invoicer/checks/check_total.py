import datetime

from invoicer import Invoice, Money

invoice = Invoice("INV-1", datetime.date(2024, 1, 10))
invoice.add("consulting", Money(10000), "standard")
invoice.add("books", Money(999), "reduced")
invoice.add("stamps", Money(100), "exempt")
assert invoice.total() == Money(10000 + 2000 + 999 + 50 + 100)
assert Invoice("INV-2", datetime.date(2024, 1, 1), currency="USD").total() == Money(0, "USD")
