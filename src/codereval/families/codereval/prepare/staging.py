"""Where `prepare` writes: the output is built beside OUT and renamed at the end, so an error
or an interrupt leaves no half-made benchmark directory."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from codereval.errors import UserError
from codereval.workspace.views import remove_tree

T = TypeVar("T")


def check_destination(out: Path, *, force: bool, checkouts: Path | None) -> Path:
    """``out`` made absolute (git runs elsewhere), after the checks every family shares."""
    out = out.absolute()
    if out.exists() and not force:
        raise UserError(f"{out} exists", hint="choose a new --out, or --force to replace it")
    if checkouts is not None and not checkouts.is_dir():
        raise UserError(f"--checkouts folder not found: {checkouts}")
    return out


def build_in_staging(out: Path, build: Callable[[Path], T]) -> T:
    """Run ``build`` on a fresh folder beside ``out``, then put that folder at ``out``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        result = build(staging)
        if out.exists():
            remove_tree(out)
        staging.rename(out)
    except BaseException:
        remove_tree(staging)
        raise
    return result
