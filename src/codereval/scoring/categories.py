"""CodeGeeX's result categories (KDD 2023, Figure 7), per language.

Five categories — passing, wrong answer, runtime error, syntax/semantic error, unfinished
generation — plus timeout, which CodeGeeX folded into the others and we keep apart. Infra errors
are ours, not the model's: they are counted separately and left out of the percentages.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from enum import StrEnum

from codereval.model import Outcome, Sample, Task, Verdict


class Category(StrEnum):
    PASSING = "passing"
    WRONG_ANSWER = "wrong_answer"
    RUNTIME_ERROR = "runtime_error"
    SYNTAX_SEMANTIC_ERROR = "syntax_semantic_error"
    UNFINISHED = "unfinished_generation"
    TIMEOUT = "timeout"
    NOT_JUDGED = "infra_error"


JUDGED: tuple[Category, ...] = tuple(c for c in Category if c is not Category.NOT_JUDGED)

_BY_VERDICT = {
    Verdict.PASSED: Category.PASSING,
    Verdict.FAILED: Category.WRONG_ANSWER,
    Verdict.RUNTIME_ERROR: Category.RUNTIME_ERROR,
    Verdict.MEMORY_EXCEEDED: Category.RUNTIME_ERROR,
    Verdict.COMPILE_ERROR: Category.SYNTAX_SEMANTIC_ERROR,
    Verdict.SYNTAX_ERROR: Category.SYNTAX_SEMANTIC_ERROR,
    Verdict.NO_CODE: Category.UNFINISHED,
    Verdict.TIMEOUT: Category.TIMEOUT,
    Verdict.INFRA_ERROR: Category.NOT_JUDGED,
}


def category(outcome: Outcome, *, truncated: bool = False) -> Category:
    """The category of one outcome. A cut-off generation that did not pass is unfinished."""
    found = _BY_VERDICT[outcome.verdict]
    if truncated and found not in (Category.PASSING, Category.NOT_JUDGED):
        return Category.UNFINISHED
    return found


def distribution(
    outcomes: Iterable[Outcome],
    *,
    tasks: Iterable[Task],
    samples: Iterable[Sample] = (),
) -> dict[str, Counter[Category]]:
    """Counts of each category per language (the language of the outcome's task)."""
    language = {t.task_id: t.language.value for t in tasks}
    truncated = {(s.task_id, s.index) for s in samples if s.truncated}
    counts: dict[str, Counter[Category]] = {}
    for outcome in outcomes:
        lang = language.get(outcome.task_id, "unknown")
        cut = (outcome.task_id, outcome.sample_index) in truncated
        counts.setdefault(lang, Counter())[category(outcome, truncated=cut)] += 1
    return counts


def percentages(counts: Mapping[Category, int]) -> dict[Category, float]:
    """Share of each judged category in percent (infra errors left out of the total)."""
    total = sum(counts.get(c, 0) for c in JUDGED)
    return {c: (100.0 * counts.get(c, 0) / total if total else 0.0) for c in JUDGED}


def format_distribution(counts_by_language: Mapping[str, Mapping[Category, int]]) -> str:
    """A plain-text table: one row per language, one column per category, in percent."""
    headers = ["language", *(c.value for c in JUDGED), "judged", "infra_error"]
    rows = []
    for lang in sorted(counts_by_language):
        counts = counts_by_language[lang]
        shares = percentages(counts)
        judged = sum(counts.get(c, 0) for c in JUDGED)
        rows.append([lang, *(f"{shares[c]:.1f}" for c in JUDGED), str(judged),
                     str(counts.get(Category.NOT_JUDGED, 0))])
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


__all__ = ["JUDGED", "Category", "category", "distribution", "format_distribution", "percentages"]
