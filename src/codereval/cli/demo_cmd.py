"""`codereval demo` (not yet built)."""

from __future__ import annotations

import click


def register(app: click.Group) -> None:
    """Adds this module's commands to the app."""
