"""Calendar arithmetic for payment terms."""
import datetime

from dateutil import parser
from dateutil.relativedelta import relativedelta


def add_months(day, months):
    """The date `months` calendar months after `day`, clamped to the end of shorter
    months (Jan 31 + 1 month is Feb 28 or 29)."""
    return day + relativedelta(months=months)


def parse_date(text):
    """Parse a human-written date such as '3 March 2024' or '2024-03-03' into a
    datetime.date (day first when ambiguous)."""
    return parser.parse(text, dayfirst=True).date()


def is_weekend(day):
    return day.weekday() >= 5


def next_business_day(day):
    while is_weekend(day):
        day = day + datetime.timedelta(days=1)
    return day
