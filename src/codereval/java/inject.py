"""Putting a generated Java method into its file: lines ``lineno..end_lineno`` are replaced.

Everything outside the span is kept byte for byte. The original CoderEval platform also
rewrote every ``private `` in the file to ``public ``; ``compat=True`` reproduces that (and
says how many it rewrote), the default leaves the file's access modifiers alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


class JavaInjectionError(Exception):
    """The target span does not fit the file (a broken task, not the sample's fault)."""


@dataclass(frozen=True, kw_only=True)
class InjectedJava:
    text: str
    privates_rewritten: int = 0


def inject_method(
    source: str, code: str, *, lineno: int, end_lineno: int, compat: bool = False
) -> InjectedJava:
    lines = source.splitlines(keepends=True)
    if not (1 <= lineno <= end_lineno <= len(lines)):
        raise JavaInjectionError(
            f"target span {lineno}..{end_lineno} is outside the file ({len(lines)} lines)"
        )
    body = code if code.endswith("\n") else code + "\n"
    text = "".join([*lines[: lineno - 1], body, *lines[end_lineno:]])
    rewritten = 0
    if compat:
        text, rewritten = re.subn(r"private ", "public ", text)
    return InjectedJava(text=text, privates_rewritten=rewritten)


_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.M)
_CLASS = re.compile(
    r"^\s*(?:(?:public|final|abstract|static|strictfp)\s+)*(?:class|interface|enum|record)\s+"
    r"(\w+)",
    re.M,
)


def package_of(source: str) -> str:
    match = _PACKAGE.search(_strip_comments(source))
    return match.group(1) if match else ""


def first_class_name(source: str) -> str:
    """The public top-level type's name (else the first one declared), "" when none."""
    text = _strip_comments(source)
    for match in _CLASS.finditer(text):
        if "public" in match.group(0).split():
            return match.group(1)
    first = _CLASS.search(text)
    return first.group(1) if first else ""


def _strip_comments(source: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", source, flags=re.S)
