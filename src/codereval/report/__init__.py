"""Reports: terminal tables (and, later, HTML)."""

from codereval.report.table import render_scoreboards, render_tasks

__all__ = ["render_scoreboards", "render_tasks"]
