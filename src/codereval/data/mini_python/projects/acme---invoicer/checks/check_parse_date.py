import datetime

from invoicer.dates import parse_date

D = datetime.date
assert parse_date("3 March 2024") == D(2024, 3, 3)
assert parse_date("2024-03-24") == D(2024, 3, 24)
assert parse_date("05/06/2024") == D(2024, 6, 5)
assert type(parse_date("1 Jan 2020")) is datetime.date
