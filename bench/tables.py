"""Plain-text tables for the bench scripts (run as `python bench/<script>.py`, so this module
is importable beside them)."""

from __future__ import annotations


def table(headers: list[str], rows: list[list[str]]) -> str:
    """Columns right-aligned to their widest cell, two spaces apart."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)
