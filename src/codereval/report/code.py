"""Code in the report: highlighted with pygments, and diffed against the task's reference."""

from __future__ import annotations

import difflib
import functools
import html

from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.token import STANDARD_TYPES, Operator, Punctuation, Text, _TokenType

from codereval.model import Language

# Our language names -> pygments lexer names.
_LEXERS = {
    Language.PYTHON: "python",
    Language.JAVA: "java",
    Language.CPP: "cpp",
    Language.JS: "javascript",
    Language.GO: "go",
    Language.RUST: "rust",
}
# Long samples are cut for the page (the full text is in the run's samples.jsonl).
MAX_CODE_CHARS = 20_000
# A diff is shown when the sample keeps at least this share of the reference's lines; below it
# the diff would only repeat both listings.
MIN_DIFF_SIMILARITY = 0.2
STYLE = "default"


def highlight_css() -> str:
    """The colours of highlighted code, scoped to ``.hl``."""
    formatter: HtmlFormatter[str] = HtmlFormatter(style=STYLE)
    return str(formatter.get_style_defs(".hl"))  # type: ignore[no-untyped-call]


@functools.cache
def _lexer(language: Language) -> Lexer:
    return get_lexer_by_name(_LEXERS[language], stripnl=False, ensurenl=False)


@functools.cache
def _css_class(token: _TokenType) -> str:
    """The short class pygments gives ``token`` when its style colours it, else ""."""
    ancestors = token.split()  # Token, ..., token
    if any(t in (Text, Punctuation, Operator) for t in ancestors):
        return ""
    known = next((t for t in reversed(ancestors) if t in STANDARD_TYPES), None)
    if known is None:
        return ""
    shown = get_style_by_name(STYLE).style_for_token(known)
    if not (shown["color"] or shown["bold"] or shown["italic"]):
        return ""
    return STANDARD_TYPES[known]


def _cut(code: str) -> str:
    if len(code) <= MAX_CODE_CHARS:
        return code
    return code[:MAX_CODE_CHARS] + f"\n… ({len(code) - MAX_CODE_CHARS} more characters)"


def highlight(code: str, language: Language) -> str:
    """``code`` as HTML for a ``<pre class="hl">``, every character escaped (safe to inline).

    Only tokens the style colours get a span (keywords, strings, comments, numbers, names of
    definitions), with pygments' short classes: a tenth of pygments' own HTML for the same view.
    """
    out: list[str] = []
    current = ""
    run: list[str] = []
    for token, value in _lexer(language).get_tokens(_cut(code)):
        css = _css_class(token)
        if css != current and run:
            text = html.escape("".join(run), quote=False)
            out.append(f'<span class="{current}">{text}</span>' if current else text)
            run = []
        current = css
        run.append(value)
    if run:
        text = html.escape("".join(run), quote=False)
        out.append(f'<span class="{current}">{text}</span>' if current else text)
    return "".join(out)


def diff(reference: str, code: str, *, label: str) -> str | None:
    """A unified diff from the reference to ``code`` as HTML lines, each escaped (safe to
    inline); None when the two are the same or share too little for a diff to say more than
    the two listings do."""
    old, new = _cut(reference).splitlines(), _cut(code).splitlines()
    if difflib.SequenceMatcher(None, old, new, autojunk=False).ratio() < MIN_DIFF_SIMILARITY:
        return None
    lines = list(
        difflib.unified_diff(
            old,
            new,
            fromfile="reference",
            tofile=label,
            lineterm="",
        )
    )
    if not lines:
        return None
    out = []
    for line in lines[2:]:  # the ---/+++ header names nothing the page does not
        text = html.escape(line, quote=False)
        if line.startswith("@@"):
            out.append(f'<span class="dr">{text}</span>\n')
        elif line.startswith("+"):
            out.append(f"<ins>{text}\n</ins>")
        elif line.startswith("-"):
            out.append(f"<del>{text}\n</del>")
        else:
            out.append(text + "\n")
    return "".join(out)
