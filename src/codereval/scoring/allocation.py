"""pass@k_π: a budget of k samples spread across languages (CodeGeeX, KDD 2023, eq. 7).

For an allocation π = (k_1, ..., k_m) with Σ k_i = k, a problem is solved when any of the k_i
samples drawn in any language i passes:

    pass@k_π = E_problems [ 1 − Π_i C(n_i − c_i, k_i) / C(n_i, k_i) ]

where language i has n_i samples of which c_i pass (the paper uses one n for all languages).
Strategies: Best Single (all k to the language with the best pass@k), Uniform (k split evenly),
Weighted (k split in proportion to weights the user gives).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from codereval.errors import UserError
from codereval.model import Outcome, Task, Verdict
from codereval.scoring.metrics import pass_at_k

STRATEGIES = ("best", "uniform", "weighted")
# problem -> language -> (n samples, c passing)
Counts = Mapping[str, Mapping[str, tuple[int, int]]]


def problem_key(task: Task) -> str:
    """HumanEval-X ids share a number across languages ("CPP/3", "Python/3")."""
    return task.task_id.rpartition("/")[2]


def counts_from_outcomes(tasks: Iterable[Task], outcomes: Iterable[Outcome]) -> dict[
    str, dict[str, tuple[int, int]]
]:
    """Per problem and language: samples judged and samples passed (infra errors left out)."""
    by_id = {t.task_id: t for t in tasks}
    counts: dict[str, dict[str, tuple[int, int]]] = {}
    for outcome in outcomes:
        task = by_id.get(outcome.task_id)
        if task is None or outcome.verdict is Verdict.INFRA_ERROR:
            continue
        row = counts.setdefault(problem_key(task), {})
        n, c = row.get(task.language.value, (0, 0))
        row[task.language.value] = (n + 1, c + int(outcome.passed))
    return counts


def _miss_probability(n: int, c: int, k: int) -> float:
    """C(n − c, k) / C(n, k): the chance that k samples drawn from n all fail."""
    if k == 0:
        return 1.0
    if k > n:
        raise UserError(f"an allocation of {k} samples needs at least {k}, have {n}",
                        hint="give that language a smaller share or generate more samples")
    return math.comb(n - c, k) / math.comb(n, k)


def pass_at_k_pi(counts: Counts, allocation: Mapping[str, int]) -> float:
    """Eq. 7 averaged over the problems every allocated language has samples for."""
    used = [lang for lang, k in allocation.items() if k > 0]
    if not used:
        raise UserError("the allocation gives no samples to any language")
    problems = [p for p, row in counts.items() if all(lang in row for lang in used)]
    if not problems:
        raise UserError(f"no problem has samples in all of: {', '.join(used)}")
    total = 0.0
    for problem in problems:
        miss = 1.0
        for lang in used:
            n, c = counts[problem][lang]
            miss *= _miss_probability(n, c, allocation[lang])
        total += 1.0 - miss
    return total / len(problems)


def language_pass_at_k(counts: Counts, language: str, k: int) -> float:
    rows = [row[language] for row in counts.values() if language in row]
    usable = [(n, c) for n, c in rows if n >= k]
    if not usable:
        return 0.0
    return sum(pass_at_k(n, c, k) for n, c in usable) / len(usable)


def _largest_remainder(k: int, shares: Mapping[str, float], order: Sequence[str]) -> dict[str, int]:
    """Integers summing to k, proportional to shares; ties go to languages earlier in order."""
    total = sum(shares.values())
    exact = {lang: k * shares[lang] / total for lang in order}
    counts = {lang: math.floor(exact[lang]) for lang in order}
    left = k - sum(counts.values())
    by_remainder = sorted(
        order, key=lambda lang: (-(exact[lang] - counts[lang]), order.index(lang))
    )
    for lang in by_remainder[:left]:
        counts[lang] += 1
    return counts


def allocate(
    strategy: str,
    *,
    k: int,
    counts: Counts,
    languages: Sequence[str],
    weights: Mapping[str, float] | None = None,
) -> dict[str, int]:
    """The allocation π a strategy gives for budget k over these languages."""
    if k < 1:
        raise UserError(f"k must be at least 1, got {k}")
    if not languages:
        raise UserError("no languages to allocate samples to")
    # Languages ranked by their own pass@1, so leftovers and ties go to the stronger ones.
    ranked = sorted(languages, key=lambda lang: -language_pass_at_k(counts, lang, 1))
    if strategy == "best":
        best = max(ranked, key=lambda lang: language_pass_at_k(counts, lang, k))
        return {lang: (k if lang == best else 0) for lang in languages}
    if strategy == "uniform":
        return _largest_remainder(k, dict.fromkeys(ranked, 1.0), ranked)
    if strategy == "weighted":
        if not weights:
            raise UserError("the weighted strategy needs weights",
                            hint="e.g. --weights python=2,cpp=1,java=1")
        unknown = sorted(set(weights) - set(languages))
        if unknown:
            raise UserError(f"weights name languages not in the run: {', '.join(unknown)}",
                            hint=f"languages: {', '.join(languages)}")
        if any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
            raise UserError("weights must be non-negative and not all zero")
        shares = {lang: float(weights.get(lang, 0.0)) for lang in ranked}
        return _largest_remainder(k, shares, ranked)
    raise UserError(f"unknown allocation strategy {strategy!r}",
                    hint=f"choose one of: {', '.join(STRATEGIES)}")


def parse_weights(text: str) -> dict[str, float]:
    """"python=2,cpp=1" -> {"python": 2.0, "cpp": 1.0}."""
    weights: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        lang, sep, value = part.partition("=")
        try:
            if not sep:
                raise ValueError
            weights[lang.strip()] = float(value)
        except ValueError:
            raise UserError(
                f"bad weight {part!r}", hint="write LANG=NUMBER, e.g. cpp=1.5"
            ) from None
    return weights


__all__ = [
    "STRATEGIES",
    "allocate",
    "counts_from_outcomes",
    "language_pass_at_k",
    "parse_weights",
    "pass_at_k_pi",
    "problem_key",
]
