"""Paired comparison of two runs on the same tasks: the difference in pass@k, a paired
bootstrap interval and a sign-flip permutation p-value.

Both runs' per-task pass@k values (``metrics.task_pass_at``) are compared task by task, so the
uncertainty is that of the difference, not of either score alone: a task both models find easy
or hard moves both numbers together and adds nothing to the spread.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from codereval.scoring.metrics import Model, mean


class PairedComparison(Model):
    """pass@k of run A minus run B over the tasks both have a value for, with its uncertainty."""

    a: str
    b: str
    k: int
    # Tasks compared, tasks left out because one run has fewer than k samples there, and tasks
    # only one of the two runs has (never compared).
    tasks: int
    left_out: int
    unmatched: int = 0
    # Means over the compared tasks, in percent; difference = a_score - b_score (points).
    a_score: float
    b_score: float
    difference: float
    # Percentile paired-bootstrap interval of the difference (tasks resampled, seeded).
    ci: tuple[float, float]
    confidence: float
    # Two-sided p-value of "no difference": paired sign-flip permutation test over tasks
    # (exact when at most PAIRED_EXACT_TASKS tasks differ, else seeded Monte Carlo).
    p_value: float
    # Tasks where A's pass@k is higher, lower (the rest are ties).
    a_better: int
    b_better: int
    resamples: int
    seed: int


PAIRED_RESAMPLES = 10_000
PAIRED_EXACT_TASKS = 16


@functools.lru_cache(maxsize=4)
def _resampled_tasks(size: int, resamples: int, seed: int) -> npt.NDArray[np.int32]:
    """The bootstrap's task indices (resamples x size), the same for every pair and k."""
    return np.random.default_rng(seed).integers(0, size, size=(resamples, size), dtype=np.int32)


@functools.lru_cache(maxsize=4)
def _random_signs(size: int, resamples: int, seed: int) -> npt.NDArray[np.int8]:
    """Random +1/-1 patterns (resamples x size) for the sign-flip test."""
    rng = np.random.default_rng(seed + 1)
    return (rng.integers(0, 2, size=(resamples, size), dtype=np.int8) * 2 - 1).astype(np.int8)


def paired_bootstrap_interval(
    differences: Sequence[float],
    *,
    resamples: int = PAIRED_RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval (percentage points) of the mean of paired differences.

    Whole tasks are resampled with replacement, so both runs' values for a task move together.
    """
    values = np.asarray(differences, dtype=float)
    if values.size == 0:
        raise ValueError("a paired interval needs at least one task")
    picks = _resampled_tasks(values.size, resamples, seed)
    means = values[picks].mean(axis=1)
    tail = 100.0 * (1.0 - confidence) / 2.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return (round(100.0 * float(low), 2), round(100.0 * float(high), 2))


def sign_flip_p_value(
    differences: Sequence[float], *, resamples: int = PAIRED_RESAMPLES, seed: int = 0
) -> float:
    """Two-sided p-value that paired differences are centred on zero (sign-flip test).

    Under "no difference" each task's difference is as likely to have either sign. Exact over
    all 2^m sign patterns when m <= PAIRED_EXACT_TASKS tasks differ; otherwise ``resamples``
    seeded random patterns, with the usual +1 so a p-value is never zero.
    """
    values = np.asarray(differences, dtype=float)
    nonzero = values[values != 0.0]
    if nonzero.size == 0:
        return 1.0
    # A hair of tolerance so patterns equal to the observed sum count despite rounding.
    observed = abs(float(nonzero.sum())) - 1e-9
    m = int(nonzero.size)
    if m <= PAIRED_EXACT_TASKS:
        patterns = (np.arange(1 << m)[:, None] >> np.arange(m)[None, :]) & 1
        signs = 1.0 - 2.0 * patterns
        hits = int(np.count_nonzero(np.abs(signs @ nonzero) >= observed))
        return hits / (1 << m)
    # Zeros add nothing to a flipped sum, so one pattern matrix serves every pair.
    flipped = _random_signs(values.size, resamples, seed) @ values
    hits = int(np.count_nonzero(np.abs(flipped) >= observed))
    return (hits + 1) / (resamples + 1)


def compare_paired(
    a: Mapping[str, float],
    b: Mapping[str, float],
    *,
    k: int,
    a_label: str,
    b_label: str,
    task_ids: Sequence[str],
    resamples: int = PAIRED_RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedComparison:
    """Compare per-task pass@k values of two runs over the same ``task_ids``.

    Raises ValueError when no task has a value in both runs.
    """
    shared = [t for t in task_ids if t in a and t in b]
    if not shared:
        raise ValueError(f"no task has pass@{k} in both {a_label} and {b_label}")
    differences = [a[t] - b[t] for t in shared]
    a_mean, b_mean = mean(a[t] for t in shared), mean(b[t] for t in shared)
    return PairedComparison(
        a=a_label,
        b=b_label,
        k=k,
        tasks=len(shared),
        left_out=len(task_ids) - len(shared),
        a_score=round(100.0 * a_mean, 2),
        b_score=round(100.0 * b_mean, 2),
        difference=round(100.0 * mean(differences), 2),
        ci=paired_bootstrap_interval(
            differences, resamples=resamples, confidence=confidence, seed=seed
        ),
        confidence=confidence,
        p_value=sign_flip_p_value(differences, resamples=resamples, seed=seed),
        a_better=sum(1 for d in differences if d > 0),
        b_better=sum(1 for d in differences if d < 0),
        resamples=resamples,
        seed=seed,
    )


def format_p(value: float) -> str:
    """A p-value for a table: three decimals, or '< 0.001'."""
    return "< 0.001" if value < 0.001 else f"{value:.3f}"
