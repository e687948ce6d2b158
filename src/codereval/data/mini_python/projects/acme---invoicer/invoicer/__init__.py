"""invoicer: small invoices with money, tax and due dates."""

from invoicer.invoice import Invoice, Line
from invoicer.money import Money

__all__ = ["Invoice", "Line", "Money"]
