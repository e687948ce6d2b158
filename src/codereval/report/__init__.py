"""Reports: terminal tables (``table``) and the self-contained HTML report (``html``: summary
tables, matplotlib plots as inline SVG, paired comparison, a page per task)."""

from codereval.report.table import render_scoreboards, render_tasks

__all__ = ["render_scoreboards", "render_tasks"]
