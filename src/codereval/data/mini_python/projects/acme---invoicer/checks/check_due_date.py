import datetime

from invoicer import Invoice

D = datetime.date
assert Invoice("A", D(2024, 1, 31)).due_date() == D(2024, 2, 29)
# 2024-03-16 is a Saturday: moved to Monday the 18th.
assert Invoice("B", D(2024, 2, 16)).due_date() == D(2024, 3, 18)
assert Invoice("C", D(2024, 1, 10), terms_months=2).due_date() == D(2024, 3, 11)
