import datetime

from invoicer.dates import add_months

D = datetime.date
assert add_months(D(2024, 1, 31), 1) == D(2024, 2, 29)
assert add_months(D(2023, 1, 31), 1) == D(2023, 2, 28)
assert add_months(D(2024, 11, 15), 3) == D(2025, 2, 15)
assert add_months(D(2024, 3, 31), -1) == D(2024, 2, 29)
assert add_months(D(2024, 5, 5), 0) == D(2024, 5, 5)
