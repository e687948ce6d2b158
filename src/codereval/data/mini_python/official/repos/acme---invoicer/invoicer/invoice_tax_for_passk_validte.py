"""Invoices: lines of money, tax by category, and payment terms."""
import attr

from invoicer.dates import add_months, next_business_day
from invoicer.money import Money

TAX_RATES = {"standard": 20, "reduced": 5, "exempt": 0}


def _round_half_up(numerator, denominator):
    return (2 * numerator + denominator) // (2 * denominator)


def tax_for(category, cents):
    """Tax in cents on `cents` for a tax category, rounded half up; unknown
    categories raise KeyError."""
    rate = TAX_RATES[category]
    return _round_half_up(cents * rate, 100)


@attr.s(frozen=True)
class Line:
    description = attr.ib()
    amount = attr.ib()
    category = attr.ib(default="standard")


@attr.s
class Invoice:
    number = attr.ib()
    issued = attr.ib()
    currency = attr.ib(default="EUR")
    terms_months = attr.ib(default=1)
    lines = attr.ib(factory=list)

    def add(self, description, amount, category="standard"):
        self.lines.append(Line(description, amount, category))
        return self

    def total(self):
        """The amount due as Money: every line plus its tax (tax per line, see tax_for)."""
        due = Money(0, self.currency)
        for line in self.lines:
            due = due + line.amount + Money(tax_for(line.category, line.amount.cents), self.currency)
        return due

    def due_date(self):
        """Payment is due terms_months after the issue date, moved to the next
        business day when that falls on a weekend."""
        return next_business_day(add_months(self.issued, self.terms_months))


if __name__ == "__main__":
    isT = True
    isT = tax_for('standard', 1000) == 200 and tax_for('reduced', 999) == 50
    isT = isT and tax_for('exempt', 12345) == 0 and tax_for('reduced', 10) == 1
    isT = isT and tax_for('standard', 3) == 1
    try:
        tax_for('luxury', 100)
        isT = False
    except KeyError:
        pass
    if not isT:
        raise Exception("Result not True!!!")
