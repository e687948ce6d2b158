"""Errors a user can fix. The CLI prints their message as one line and exits non-zero."""

from __future__ import annotations


class UserError(Exception):
    """Bad input: a malformed file, an unknown id, a missing toolchain.

    The message says what is wrong and how to fix it, in one line.
    """

    exit_code = 2

    def __init__(self, message: str, *, hint: str = "") -> None:
        self.message = message
        self.hint = hint
        super().__init__(self.one_line())

    def one_line(self) -> str:
        text = self.message if not self.hint else f"{self.message} ({self.hint})"
        return " ".join(text.split())


def name_some(items: list[str], *, limit: int = 5) -> str:
    """The first few of a list for a one-line message: "a, b, c and 7 more"."""
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


class ToolchainMissing(UserError):
    """A compiler, runtime or system tool we need is not installed."""


class RunDirUnwritable(UserError):
    """The run directory cannot be written (a full disk, a read-only file system): what was
    committed before is intact, and the same command resumes once it can be written."""

    exit_code = 3


class Interrupted(UserError):
    """Ctrl-C: what was finished is kept; the same command resumes."""

    exit_code = 130
