"""Pass@k and its breakdowns, under two named conventions.

*default*: n is the number of samples evaluated for each task (infra errors are not the model's
and are left out, and counted); the average is over the tasks in the run; tasks with fewer
samples than k are left out of pass@k and listed.

*compat*: what the CoderEval paper computed: n is fixed (10), the sum over tasks is divided by
the benchmark's size (230) — so a missing sample or task counts as a failure.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

from pydantic import BaseModel, ConfigDict

from codereval.model import LEVELS, Outcome, Task, Verdict

# The size of each benchmark the paper divided by, for the compat convention.
BENCHMARK_SIZES = {"codereval-python": 230, "codereval-java": 230}
DEFAULT_KS = (1, 5, 10)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimator of pass@k (Chen et al. 2021): 1 - C(n-c, k) / C(n, k).

    Computed as a running product to stay exact in floating point for large n.
    """
    if n < 0 or c < 0 or k < 1 or c > n:
        raise ValueError(f"pass_at_k needs 0 <= c <= n and k >= 1 (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


def pass_at_k_exact(n: int, c: int, k: int) -> Fraction:
    """The same estimator as an exact fraction, so sums over tasks round like the paper's."""
    if n - c < k:
        return Fraction(1)
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def percent(value: Fraction) -> float:
    """A fraction as a percentage rounded half up to two places (as published tables are)."""
    scaled = Decimal(value.numerator * 100) / Decimal(value.denominator)
    return float(scaled.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


class Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class GroupScore(Model):
    """Pass@k over one group of tasks (all, a level, a project)."""

    name: str
    tasks: int
    # k -> pass@k in percent; None when no task in the group has k samples.
    pass_at: dict[int, float | None]
    # Divided by this many tasks (compat: the benchmark's size for the whole benchmark).
    denominator: int
    # k -> (low, high) percentile bootstrap interval over tasks, when asked for.
    ci: dict[int, tuple[float, float]] | None = None


class Scoreboard(Model):
    label: str
    convention: str
    convention_note: str
    ks: tuple[int, ...]
    overall: GroupScore
    levels: list[GroupScore]
    standalone: GroupScore | None
    non_standalone: GroupScore | None
    projects: list[GroupScore]
    verdicts: dict[str, int]
    samples_per_task: dict[int, int]
    # Tasks with fewer evaluated samples than the most common count: id -> samples.
    short_tasks: dict[str, int]
    infra_errors: int
    excluded_tasks: list[str] = []
    notes: list[str] = []


def _counts(outcomes: Iterable[Outcome], *, compat: bool) -> dict[str, tuple[int, int]]:
    """task_id -> (samples counted, samples passed)."""
    n: Counter[str] = Counter()
    c: Counter[str] = Counter()
    for outcome in outcomes:
        if outcome.verdict is Verdict.INFRA_ERROR and not compat:
            continue
        n[outcome.task_id] += 1
        if outcome.passed:
            c[outcome.task_id] += 1
    return {task_id: (n[task_id], c[task_id]) for task_id in n}


def _group(
    name: str,
    task_ids: Sequence[str],
    counts: dict[str, tuple[int, int]],
    ks: Sequence[int],
    *,
    compat_n: int | None,
    denominator: int | None,
    bootstrap: int = 0,
) -> GroupScore:
    values: dict[int, float | None] = {}
    intervals: dict[int, tuple[float, float]] = {}
    for k in ks:
        total = Fraction(0)
        per_task: list[float] = []
        for task_id in task_ids:
            n, c = counts.get(task_id, (0, 0))
            if compat_n is not None:
                # The paper's convention: n is fixed whatever was really evaluated.
                n_used = max(compat_n, n)
                if k > n_used:
                    continue
                value = pass_at_k_exact(n_used, c, k)
            elif n >= k:
                value = pass_at_k_exact(n, c, k)
            else:
                continue
            total += value
            per_task.append(float(value))
        eligible = len(per_task)
        divisor = denominator if denominator is not None else eligible
        values[k] = None if divisor == 0 or eligible == 0 else percent(total / divisor)
        if bootstrap and eligible and divisor:
            # Tasks the denominator counts but that have no value (compat: missing) are zeros.
            padded = per_task + [0.0] * max(0, divisor - eligible)
            intervals[k] = bootstrap_interval(padded, resamples=bootstrap)
    return GroupScore(
        name=name,
        tasks=len(task_ids),
        pass_at=values,
        denominator=denominator if denominator is not None else len(task_ids),
        ci=intervals or None,
    )


def bootstrap_interval(
    values: Sequence[float], *, resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval (in percent) of the mean of per-task values.

    Tasks are resampled with replacement; the seed is fixed so the same inputs give the same
    interval (promise 6).
    """
    rng = random.Random(seed)
    size = len(values)
    means = sorted(
        math.fsum(values[rng.randrange(size)] for _ in range(size)) / size
        for _ in range(resamples)
    )
    tail = (1.0 - confidence) / 2.0
    low = means[int(tail * (resamples - 1))]
    high = means[math.ceil((1.0 - tail) * (resamples - 1))]
    return (round(100.0 * low, 2), round(100.0 * high, 2))


def score(
    tasks: Sequence[Task],
    outcomes: Sequence[Outcome],
    *,
    ks: Sequence[int] = DEFAULT_KS,
    compat: bool = False,
    compat_n: int = 10,
    benchmark_size: int | None = None,
    label: str = "",
    exclude: Iterable[str] = (),
    bootstrap: int = 0,
) -> Scoreboard:
    """Score outcomes of ``tasks`` under the chosen convention.

    A task whose samples compiled and found no test to run (CoderEval-Java without a recorded
    test) has no pass rate: it is left out, in both conventions, and a note says how many."""
    from codereval.model import compiled_untested

    untested = {o.task_id for o in outcomes if compiled_untested(o)}
    excluded = sorted((set(exclude) | untested) & {t.task_id for t in tasks})
    kept = [t for t in tasks if t.task_id not in set(excluded)]
    kept_ids = {t.task_id for t in kept}
    outcomes = [o for o in outcomes if o.task_id in kept_ids]
    counts = _counts(outcomes, compat=compat)
    notes: list[str] = []
    if untested:
        notes.append(f"{len(untested & {t.task_id for t in tasks})} task(s) without a test left "
                     "out (their samples compiled and had nothing to run)")

    if compat:
        size = benchmark_size
        if size is None:
            benchmarks = {t.benchmark for t in kept}
            known = [BENCHMARK_SIZES[b] for b in benchmarks if b in BENCHMARK_SIZES]
            size = known[0] if len(known) == 1 and len(benchmarks) == 1 else len(kept)
        size -= len(excluded)
        convention = "compat"
        note = (
            f"compat: n fixed at {compat_n}, sums divided by the benchmark size ({size} tasks)"
            " and per level by the tasks at that level, as the CoderEval paper computed"
        )
        overall_denominator: int | None = size
        fixed_n: int | None = compat_n
    else:
        convention = "default"
        note = (
            "default: n = samples evaluated per task (infra errors excluded), averaged over "
            "the tasks in the run that have at least k samples"
        )
        overall_denominator = None
        fixed_n = None

    run_ids = [t.task_id for t in kept if compat or t.task_id in counts]
    missing = [t.task_id for t in kept if t.task_id not in counts]
    if missing:
        notes.append(f"{len(missing)} task(s) have no evaluated samples")

    def group(name: str, ids: Sequence[str], denominator: int | None) -> GroupScore:
        return _group(
            name, ids, counts, ks, compat_n=fixed_n, denominator=denominator, bootstrap=bootstrap
        )

    overall = group("all", run_ids, overall_denominator)
    by_level: dict[str, list[str]] = defaultdict(list)
    by_project: dict[str, list[str]] = defaultdict(list)
    standalone: list[str] = []
    non_standalone: list[str] = []
    level_of = {t.task_id: t.level for t in kept}
    project_of = {t.task_id: t.project for t in kept}
    for task_id in run_ids:
        level = level_of.get(task_id)
        if level is not None:
            by_level[level.value].append(task_id)
            (standalone if level.standalone else non_standalone).append(task_id)
        by_project[project_of.get(task_id) or "(none)"].append(task_id)

    def sub(name: str, ids: list[str]) -> GroupScore:
        return group(name, ids, len(ids) if compat else None)

    levels = [sub(level.value, by_level[level.value]) for level in LEVELS if by_level[level.value]]
    verdicts = Counter(o.verdict.value for o in outcomes)
    per_task = Counter(n for n, _ in counts.values())
    typical = max(per_task, default=0)
    short = {tid: counts[tid][0] for tid in sorted(counts) if counts[tid][0] < typical}
    infra = verdicts.get(Verdict.INFRA_ERROR.value, 0)
    if infra and not compat:
        notes.append(f"{infra} infra_error outcome(s) not counted as the model's (our fault)")
    if infra and compat:
        notes.append(f"{infra} infra_error outcome(s) counted as failures (compat)")
    for k in ks:
        if not compat and any(n < k for n, _ in counts.values()):
            below = sum(1 for n, _ in counts.values() if n < k)
            notes.append(f"pass@{k}: {below} task(s) with fewer than {k} samples left out")
    if excluded:
        notes.append(f"{len(excluded)} flagged task(s) excluded: {', '.join(excluded[:5])}")
    return Scoreboard(
        label=label,
        convention=convention,
        convention_note=note,
        ks=tuple(ks),
        overall=overall,
        levels=levels,
        standalone=sub("standalone", standalone) if standalone else None,
        non_standalone=sub("non_standalone", non_standalone) if non_standalone else None,
        projects=[sub(name, ids) for name, ids in sorted(by_project.items())],
        verdicts={v.value: verdicts.get(v.value, 0) for v in Verdict},
        samples_per_task=dict(sorted(per_task.items())),
        short_tasks=short,
        infra_errors=infra,
        excluded_tasks=excluded,
        notes=notes,
    )


def parse_ks(text: str) -> tuple[int, ...]:
    """"1,5,10" -> (1, 5, 10); raises ValueError with a readable message."""
    try:
        ks = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise ValueError(f"--k takes whole numbers separated by commas, got {text!r}") from None
    if not ks or ks[0] < 1:
        raise ValueError(f"--k values must be at least 1, got {text!r}")
    return ks


def mean(values: Iterable[float]) -> float:
    items = list(values)
    return math.fsum(items) / len(items) if items else 0.0



def score_groups(
    tasks: Sequence[Task],
    outcomes: Sequence[Outcome],
    *,
    key: Callable[[Task], str],
    ks: Sequence[int] = DEFAULT_KS,
    compat: bool = False,
    compat_n: int = 10,
    exclude: Iterable[str] = (),
    bootstrap: int = 0,
) -> list[GroupScore]:
    """Pass@k of the tasks grouped by ``key`` (e.g. their language), as ``score`` scores a
    level: under compat each group is divided by its own number of tasks."""
    excluded = set(exclude)
    counts = _counts((o for o in outcomes if o.task_id not in excluded), compat=compat)
    groups: dict[str, list[str]] = defaultdict(list)
    for task in tasks:
        if task.task_id not in excluded and (compat or task.task_id in counts):
            groups[key(task)].append(task.task_id)
    return [
        _group(
            name,
            ids,
            counts,
            ks,
            compat_n=compat_n if compat else None,
            denominator=len(ids) if compat else None,
            bootstrap=bootstrap,
        )
        for name, ids in sorted(groups.items())
    ]


def task_pass_at(
    task_ids: Sequence[str],
    outcomes: Iterable[Outcome],
    k: int,
    *,
    compat: bool = False,
    compat_n: int = 10,
) -> dict[str, float]:
    """pass@k of each task that has a value under the convention (a fraction in [0, 1]).

    default: tasks with fewer than k evaluated samples have no value. compat: n is fixed, so a
    task without samples is a zero, as in the paper's sums.
    """
    counts = _counts(outcomes, compat=compat)
    values: dict[str, float] = {}
    for task_id in task_ids:
        n, c = counts.get(task_id, (0, 0))
        if compat:
            n = max(compat_n, n)
        if n >= k:
            values[task_id] = float(pass_at_k_exact(n, c, k))
    return values
