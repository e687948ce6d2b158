"""From a model's raw CoderUJB output to the method (or test method) to splice, and the
answer of a defect-detection question.

What the original harness does (code_ujb/tasks/code_ujb_*.py), and what we do:

- Completion style: it echoes the prompt, cuts it after the last Javadoc, and keeps the text
  up to the brace that closes the first one opened. We join the prompt's signature (the
  ``head``) with the completion and keep the same span.
- Chat style: it finds the first occurrence of the signature up to its parenthesis (leading
  annotations set apart) anywhere in the answer and keeps what follows up to the closing brace,
  put back behind the signature; when the signature is missing it keeps a marker text that
  fails the syntax check. We look in the answer's fenced code blocks first (prose often quotes
  the signature before the code), then in the whole text, then for a declaration of the method
  by name (a model that changed a modifier); nothing found gives no code (``no_code``).
- Braces are counted outside comments, strings and character literals: the original counted
  ``'{'`` and a brace in a comment, which cut methods short.
- Defect detection: the original tries a list of phrases in a fixed order, case-sensitive and as
  substrings, so an answer holding "No" anywhere (also "Note", "None") reads as "no defect"
  unless a "defect" phrase occurs anywhere else first in the list. ``parse_dd_answer(...,
  compat=True)`` reproduces that rule exactly; the default reads the answer's *first* clear
  statement: the option letter or yes/no it starts a line with, or the earliest phrase.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from codereval.model import Task, UjbKind
from codereval.prompting.extraction import Extraction, fenced_blocks, java_method_span
from codereval.prompting.prompts import Prompt, PromptStyle
from codereval.source.skeleton import mask_java, matching_brace

_ANNOTATION = re.compile(r"\s*@[\w.]+(?:\s*\((?:[^()]|\([^()]*\))*\))?")


@dataclass(frozen=True)
class Signature:
    """A method signature cut as the original harness cuts it: the annotations before it, and
    the declaration up to (not including) its parameter list."""

    annotations: str
    declaration: str


def split_signature(signature: str) -> Signature:
    text = re.sub(r"//[^\n]*", "", signature).strip()
    annotations: list[str] = []
    while True:
        match = _ANNOTATION.match(text)
        if match is None or not match.group(0).strip():
            break
        annotations.append(match.group(0).strip())
        text = text[match.end() :].lstrip()
    declaration = text.split("(", 1)[0].strip()
    return Signature("\n".join(annotations) + ("\n" if annotations else ""), declaration)


def method_end(code: str) -> int | None:
    """Index of the brace closing the first brace opened in ``code`` (outside comments and
    literals); -1 when it never closes; None when no brace opens."""
    mask = mask_java(code)
    opening = mask.find("{")
    if opening < 0:
        return None
    return matching_brace(mask, opening)


def _through_method(code: str, *, truncated: bool, what: str) -> Extraction:
    end = method_end(code)
    if end is None:
        return Extraction(None, truncated, f"no {what} body in the output")
    if end < 0:
        if truncated:
            return Extraction(None, True, f"cut off at the token limit: the {what} is incomplete")
        # Kept, as the original does: the syntax check judges it.
        return Extraction(code.rstrip() + "\n", False, "unbalanced braces")
    return Extraction(code[: end + 1].strip("\n") + "\n", truncated)


def _what(task: Task) -> str:
    assert task.ujb is not None
    return "test method" if task.ujb.kind in (UjbKind.CTG, UjbKind.ITG) else "method"


def ujb_code(text: str, *, task: Task, prompt: Prompt, truncated: bool) -> Extraction:
    """The code to splice for a CoderUJB task (FCG, CTG, ITG, APR), or the answer text (DD)."""
    assert task.ujb is not None
    if task.ujb.kind is UjbKind.DD:
        answer = text.strip()
        return Extraction(answer or None, truncated, "" if answer else "empty answer")
    what = _what(task)
    if prompt.style is PromptStyle.COMPLETION:
        return _through_method(prompt.head + text, truncated=truncated, what=what)
    return chat_method(text, task=task, truncated=truncated)


def chat_method(text: str, *, task: Task, truncated: bool) -> Extraction:
    """The target method from a chat answer (see the module's notes)."""
    assert task.ujb is not None
    what = _what(task)
    signature = split_signature(task.ujb.function_signature or task.signature)
    candidates = [block.code for block in fenced_blocks(text)] + [text]
    if signature.declaration:
        for candidate in candidates:
            found = candidate.find(signature.declaration)
            if found < 0:
                continue
            rest = candidate[found + len(signature.declaration) :]
            picked = _through_method(
                signature.annotations + signature.declaration + rest,
                truncated=truncated,
                what=what,
            )
            if picked.code is not None or picked.truncated:
                return picked
    for candidate in candidates:
        span = java_method_span(candidate, task.name) if task.name else None
        if span is None:
            continue
        start, end = span
        if end < 0:
            return _through_method(candidate[start:], truncated=truncated, what=what)
        return Extraction(
            candidate[start : end + 1] + "\n",
            truncated,
            f"the answer changed the signature; took its {task.name}",
        )
    return Extraction(None, truncated, f"the answer does not define {task.name or 'the method'}")


# ------------------------------------------------------------------------ defect detection

# The original's phrases, in the order it tries them (code_ujb_defectdetection.py).
_COMPAT_DEFECT = (
    "Yes, it has defect", "Yes", "has defect", "there are potential defects",
    "is potentially flawed", "There are defects", "There are several issue",
    "there is a potential defect",
)
_COMPAT_DEFECT_RE = (
    r"here.*?potential issue", r"here.*?potential defect", r"There.*?a few issue",
    r"there.*?a few issue",
)
_COMPAT_CLEAN = (
    "no defects", "No, it doesn't have defects", "No", "doesn't have defect",
    "do not have defect", "do not has defect", "this function is not flawed",
)
_COMPAT_CLEAN_RE = (
    "doesn't has defect", r"here are no.*?defect", r"do not see.*?defect",
    r"don't see.*?defect",
)


def _compat_answer(text: str) -> bool | None:
    for phrase in _COMPAT_DEFECT:
        if phrase in text:
            return True
    for pattern in _COMPAT_DEFECT_RE:
        if re.search(pattern, text):
            return True
    for phrase in _COMPAT_CLEAN:
        if phrase in text:
            return False
    for pattern in _COMPAT_CLEAN_RE:
        if re.search(pattern, text):
            return False
    return None


# The answer's own opening: the option letter the prompt offers (A = defective, B = not) or a
# bare yes/no, at the start of a line, after "Answer:" or markdown emphasis.
_OPENING = re.compile(
    r"^[\s>*_#]*(?:answer\s*[:：]\s*)?[*_]*(?:(?P<letter>(?-i:[AB]))\b[*_]*"
    r"(?:\s*[.):,—–-]|\s*$|\s+(?=yes|no))|(?P<word>yes|no)\b)",
    re.I | re.M,
)
_DEFECT_PHRASES = (
    r"\b(?:it|this (?:function|method|code)|the (?:function|method|code)) (?:has|contains) "
    r"(?:a |an |some |several |potential |possible )*(?:defects?|bugs?|flaws?)",
    r"\bthere (?:is|are) (?:a |an |some |several |a few |potential |possible )+"
    r"(?:defects?|bugs?|issues?|flaws?)",
    r"\b(?:is|seems|appears) (?:potentially |likely )?(?:flawed|buggy|defective)\b",
    r"\byes, (?:it|there)",
)
_CLEAN_PHRASES = (
    r"\b(?:does ?n[o']t|do not|does not) (?:have|has|contain) (?:any )?(?:defects?|bugs?)",
    r"\bthere (?:is|are) no (?:obvious |apparent |visible )?(?:defects?|bugs?|issues?)",
    r"\bno (?:obvious |apparent |visible )?(?:defects?|bugs?) (?:found|detected|present)",
    r"\b(?:is not|isn't|not) (?:flawed|buggy|defective)\b",
    r"\b(?:do not|don't) see (?:any )?(?:defects?|bugs?|issues?)",
    r"\bno, (?:it|there)",
)


def parse_dd_answer(text: str, *, compat: bool = False) -> bool | None:
    """True when the answer says the method is defective, False when it says it is not, None
    when it says neither clearly. ``compat``: the original harness's rule, quirks and all."""
    if compat:
        return _compat_answer(text)
    found: list[tuple[int, bool]] = []
    opening = _OPENING.search(text)
    if opening is not None:
        token = (opening.group("letter") or opening.group("word") or "").lower()
        found.append((opening.start(), token in ("a", "yes")))
    for verdict, patterns in ((True, _DEFECT_PHRASES), (False, _CLEAN_PHRASES)):
        for pattern in patterns:
            match = re.search(pattern, text, re.I)
            if match is not None:
                found.append((match.start(), verdict))
    # The first clear statement wins: later text is the model's reasoning about it.
    return min(found, key=lambda item: item[0])[1] if found else None


__all__ = [
    "Signature",
    "chat_method",
    "method_end",
    "parse_dd_answer",
    "split_signature",
    "ujb_code",
]
