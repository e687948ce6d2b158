"""Money as integer cents with a currency, so sums never drift."""
from decimal import ROUND_HALF_UP, Decimal

import attr


class CurrencyMismatch(ValueError):
    """Two amounts in different currencies were combined."""


@attr.s(frozen=True, slots=True)
class Money:
    cents = attr.ib(converter=int)
    currency = attr.ib(default="EUR")

    @classmethod
    def parse(cls, text, currency="EUR"):
        """Parse '12.345' into Money(1235, currency), rounding half up."""
        value = Decimal(text).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        return cls(int(value * 100), currency)

    def _check(self, other):
        if other.currency != self.currency:
            raise CurrencyMismatch(f"{self.currency} != {other.currency}")

    def __add__(self, other):
        self._check(other)
        return Money(self.cents + other.cents, self.currency)

    def scaled(self, factor):
        return Money(int(Decimal(self.cents) * Decimal(str(factor))), self.currency)

    def allocate(self, ratios):
        """Split this amount by the given ratios. The parts are Money in the same
        currency, they sum exactly to this amount, and leftover cents go one by one
        to the first parts."""
        total = sum(ratios)
        if total <= 0:
            raise ValueError("ratios must sum to a positive number")
        shares = [self.cents * ratio // total for ratio in ratios]
        remainder = self.cents - sum(shares)
        for index in range(remainder):
            shares[index] += 1
        return [Money(share, self.currency) for share in shares]

    def format(self):
        """Render as '<currency> <units>.<cents>', e.g. 'EUR 12.05'; negative amounts
        get a leading minus sign before the digits: 'EUR -0.50'."""
        sign = "-" if self.cents < 0 else ""
        units, cents = divmod(abs(self.cents), 100)
        return f"{self.currency} {sign}{units}.{cents:02d}"
