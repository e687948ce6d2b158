"""CoderUJB's metrics, as the paper reports them, from Tasks and Outcomes (their ``ujb``).

- FCG and APR: pass@k and count@n at three levels: the sample parses (syntax), compiles, and
  passes (the outcome's verdict: the named tests and then the whole suite).
- CTG and ITG: the same at syntax and compile, then the task's success, the *trigger*: CTG's
  test compiles and passes on the fixed version; ITG's fails on the buggy version and passes on
  the fixed one. Coverage of the classes under test: the paper's mean (each sample's coverage,
  0 when it did not succeed, averaged per task, then over tasks) and the mean of the succeeding
  tests only (per task, then over the tasks that have one).
- DD: accuracy, precision, recall and F1 over samples (defective is the positive class), with
  unanswered samples left out of accuracy as the original does (and counted wrong in a second
  accuracy).

count@n is the number of tasks with at least one of their n samples at the level. Samples our
infrastructure failed (``infra_error``) are not the model's and are left out, as for pass@k;
tasks with fewer than k samples have no pass@k. Intervals are the percentile bootstrap over
tasks of codereval.scoring.metrics (95%, fixed seed), recomputing each metric on every resample.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from fractions import Fraction

from codereval.model import Outcome, Task, UjbKind, Verdict
from codereval.scoring.metrics import Model, bootstrap_interval, pass_at_k_exact, percent

# The levels each kind is scored at, lowest first.
LEVELS: dict[UjbKind, tuple[str, ...]] = {
    UjbKind.FCG: ("syntax", "compile", "pass"),
    UjbKind.APR: ("syntax", "compile", "pass"),
    UjbKind.CTG: ("syntax", "compile", "trigger"),
    UjbKind.ITG: ("syntax", "compile", "trigger"),
}
KIND_TITLES: dict[UjbKind, str] = {
    UjbKind.FCG: "FCG — functional code generation",
    UjbKind.CTG: "CTG — code-based test generation",
    UjbKind.ITG: "ITG — issue-based test generation",
    UjbKind.APR: "APR — automated program repair",
    UjbKind.DD: "DD — defect detection",
}
_NOT_PARSED = {Verdict.NO_CODE, Verdict.SYNTAX_ERROR}
_NOT_COMPILED = _NOT_PARSED | {Verdict.COMPILE_ERROR}


class UjbLevel(Model):
    """pass@k (percent) of one level, its intervals, and count@n."""

    name: str
    pass_at: dict[int, float | None]
    ci: dict[int, tuple[float, float]] | None = None
    # Tasks with at least one sample at this level, of ``tasks``.
    count: int
    tasks: int


class UjbRate(Model):
    """One rate in percent (coverage, accuracy, ...); None when nothing could be measured."""

    name: str
    value: float | None
    ci: tuple[float, float] | None = None
    # What the rate is over: "12 tasks", "240 samples".
    support: str = ""


class UjbKindScore(Model):
    kind: UjbKind
    tasks: int
    samples: int
    # n (samples per task) -> how many tasks have it.
    samples_per_task: dict[int, int]
    levels: list[UjbLevel]
    rates: list[UjbRate]
    # DD: tp, tn, fp, fn, unanswered (samples).
    confusion: dict[str, int] | None = None
    infra_errors: int = 0
    notes: tuple[str, ...] = ()


class UjbScores(Model):
    kinds: list[UjbKindScore]


def reached(outcome: Outcome, kind: UjbKind) -> dict[str, bool]:
    """The levels one sample reached. Measures the runner recorded win; where it recorded none
    the verdict says (a sample that compiled also parsed, one that passed also compiled)."""
    measures = outcome.ujb
    verdict = outcome.verdict
    passed = verdict is Verdict.PASSED
    if kind in (UjbKind.CTG, UjbKind.ITG):
        trigger: bool | None = None
        if measures is not None:
            trigger = measures.triggers if kind is UjbKind.ITG else measures.passed_fixed
        top = passed if trigger is None else trigger
    else:
        top = passed
    compiled = measures.compiled if measures is not None else None
    if compiled is None:
        compiled = verdict not in _NOT_COMPILED
    syntax = measures.syntax_ok if measures is not None else None
    if syntax is None:
        syntax = verdict not in _NOT_PARSED
    compiled = compiled or top
    syntax = syntax or compiled
    names = LEVELS[kind]
    return {names[0]: syntax, names[1]: compiled, names[2]: top}


def _judged(outcomes: Sequence[Outcome]) -> list[Outcome]:
    return [o for o in outcomes if o.verdict is not Verdict.INFRA_ERROR]


def _by_task(tasks: Sequence[Task], outcomes: Sequence[Outcome]) -> dict[str, list[Outcome]]:
    ids = {t.task_id for t in tasks}
    grouped: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        if outcome.task_id in ids:
            grouped.setdefault(outcome.task_id, []).append(outcome)
    return grouped


def _level(
    name: str,
    counts: Sequence[tuple[int, int]],
    ks: Sequence[int],
    *,
    bootstrap: int,
) -> UjbLevel:
    values: dict[int, float | None] = {}
    intervals: dict[int, tuple[float, float]] = {}
    for k in ks:
        per_task = [pass_at_k_exact(n, c, k) for n, c in counts if n >= k]
        values[k] = percent(sum(per_task, Fraction(0)) / len(per_task)) if per_task else None
        if bootstrap and per_task:
            intervals[k] = bootstrap_interval([float(v) for v in per_task], resamples=bootstrap)
    return UjbLevel(
        name=name,
        pass_at=values,
        ci=intervals or None,
        count=sum(1 for _, c in counts if c > 0),
        tasks=len(counts),
    )


def _mean_rate(name: str, values: Sequence[float], *, bootstrap: int) -> UjbRate:
    unit = "task(s)"
    if not values:
        return UjbRate(name=name, value=None, support=f"0 {unit}")
    value = round(100.0 * math.fsum(values) / len(values), 2)
    interval = bootstrap_interval(values, resamples=bootstrap) if bootstrap else None
    return UjbRate(name=name, value=value, ci=interval, support=f"{len(values)} {unit}")


def _coverage(
    per_task: Sequence[list[Outcome]], kind: UjbKind, *, bootstrap: int
) -> list[UjbRate]:
    rates: list[UjbRate] = []
    for label, attribute in (("line", "line_coverage"), ("branch", "branch_coverage")):
        paper: list[float] = []
        passing: list[float] = []
        measured = False
        for outcomes in per_task:
            samples: list[float] = []
            good: list[float] = []
            for outcome in outcomes:
                success = reached(outcome, kind)["trigger"]
                value = getattr(outcome.ujb, attribute) if outcome.ujb is not None else None
                measured = measured or value is not None
                if success and value is not None:
                    good.append(value)
                samples.append(value if success and value is not None else 0.0)
            paper.append(math.fsum(samples) / len(samples))
            if good:
                passing.append(math.fsum(good) / len(good))
        names = (f"{label} coverage (paper: failures count 0)",
                 f"{label} coverage of succeeding tests")
        if not measured:
            # No runner recorded this counter: say so rather than print a 0.
            rates += [UjbRate(name=name, value=None, support="not measured") for name in names]
            continue
        rates.append(_mean_rate(names[0], paper, bootstrap=bootstrap))
        rates.append(_mean_rate(names[1], passing, bootstrap=bootstrap))
    return rates


# (tp, tn, fp, fn, unanswered) of one task's samples.
Confusion = tuple[int, int, int, int, int]


def _confusion(task: Task, outcomes: Sequence[Outcome]) -> Confusion:
    assert task.ujb is not None
    truth = task.ujb.defective
    tp = tn = fp = fn = unanswered = 0
    for outcome in outcomes:
        prediction = outcome.ujb.prediction if outcome.ujb is not None else None
        if prediction is None or truth is None:
            unanswered += 1
        elif prediction and truth:
            tp += 1
        elif not prediction and not truth:
            tn += 1
        elif prediction:
            fp += 1
        else:
            fn += 1
    return tp, tn, fp, fn, unanswered


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def dd_rates(confusion: Confusion) -> dict[str, float | None]:
    """Accuracy (answered samples), accuracy counting unanswered as wrong, precision, recall,
    F1 (fractions; None where the denominator is empty), as code_ujb_defectdetection.py."""
    tp, tn, fp, fn, unanswered = confusion
    answered = tp + tn + fp + fn
    precision = _ratio(tp, tp + fp)
    recall = _ratio(tp, tp + fn)
    f1: float | None = None
    if precision is not None and recall is not None:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "accuracy": _ratio(tp + tn, answered),
        "accuracy (unanswered wrong)": _ratio(tp + tn, answered + unanswered),
        "precision": precision,
        "recall": recall,
        "F1": f1,
        "answered": _ratio(answered, answered + unanswered),
    }


def _bootstrap_statistic(
    items: Sequence[Confusion],
    statistic: Callable[[Confusion], float | None],
    *,
    resamples: int,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile bootstrap over tasks of a statistic of pooled counts (the resampling of
    codereval.scoring.metrics.bootstrap_interval, for metrics that are not means of per-task
    values)."""
    rng = random.Random(seed)
    size = len(items)
    values: list[float] = []
    for _ in range(resamples):
        pooled = [0, 0, 0, 0, 0]
        for _ in range(size):
            for index, count in enumerate(items[rng.randrange(size)]):
                pooled[index] += count
        value = statistic((pooled[0], pooled[1], pooled[2], pooled[3], pooled[4]))
        if value is not None:
            values.append(value)
    if not values:
        return None
    values.sort()
    tail = (1.0 - confidence) / 2.0
    low = values[int(tail * (len(values) - 1))]
    high = values[math.ceil((1.0 - tail) * (len(values) - 1))]
    return (round(100.0 * low, 2), round(100.0 * high, 2))


def _rate_of(name: str) -> Callable[[Confusion], float | None]:
    return lambda confusion: dd_rates(confusion)[name]


def _dd(
    tasks: Sequence[Task], grouped: dict[str, list[Outcome]], *, bootstrap: int
) -> tuple[list[UjbRate], dict[str, int]]:
    per_task = [_confusion(t, grouped[t.task_id]) for t in tasks if t.task_id in grouped]
    total = tuple(sum(c[i] for c in per_task) for i in range(5))
    pooled: Confusion = (total[0], total[1], total[2], total[3], total[4])
    rates = []
    samples = sum(pooled)
    for name, value in dd_rates(pooled).items():
        interval = None
        if bootstrap and value is not None:
            interval = _bootstrap_statistic(per_task, _rate_of(name), resamples=bootstrap)
        rates.append(
            UjbRate(
                name=name,
                value=None if value is None else round(100.0 * value, 2),
                ci=interval,
                support=f"{samples} samples",
            )
        )
    names = ("tp", "tn", "fp", "fn", "unanswered")
    return rates, dict(zip(names, pooled, strict=True))


def score_kind(
    kind: UjbKind,
    tasks: Sequence[Task],
    outcomes: Sequence[Outcome],
    *,
    ks: Sequence[int],
    bootstrap: int = 0,
) -> UjbKindScore:
    """The metrics of one kind's tasks."""
    infra = sum(1 for o in outcomes if o.verdict is Verdict.INFRA_ERROR)
    grouped = _by_task(tasks, _judged(outcomes))
    scored = [t for t in tasks if t.task_id in grouped]
    notes: list[str] = []
    if len(scored) < len(tasks):
        notes.append(f"{len(tasks) - len(scored)} task(s) have no evaluated samples")
    if infra:
        notes.append(f"{infra} infra_error sample(s) not counted as the model's (our fault)")
    per_task = Counter(len(grouped[t.task_id]) for t in scored)
    levels: list[UjbLevel] = []
    rates: list[UjbRate] = []
    confusion = None
    if kind is UjbKind.DD:
        rates, confusion = _dd(scored, grouped, bootstrap=bootstrap)
    else:
        names = LEVELS[kind]
        for name in names:
            counts = [
                (len(grouped[t.task_id]),
                 sum(1 for o in grouped[t.task_id] if reached(o, kind)[name]))
                for t in scored
            ]
            levels.append(_level(name, counts, ks, bootstrap=bootstrap))
        if kind in (UjbKind.CTG, UjbKind.ITG):
            rates = _coverage([grouped[t.task_id] for t in scored], kind, bootstrap=bootstrap)
    for k in ks:
        short = sum(1 for t in scored if len(grouped[t.task_id]) < k)
        if short and kind is not UjbKind.DD:
            notes.append(f"pass@{k}: {short} task(s) with fewer than {k} samples left out")
    return UjbKindScore(
        kind=kind,
        tasks=len(scored),
        samples=sum(len(grouped[t.task_id]) for t in scored),
        samples_per_task=dict(sorted(per_task.items())),
        levels=levels,
        rates=rates,
        confusion=confusion,
        infra_errors=infra,
        notes=tuple(notes),
    )


def score_ujb(
    tasks: Sequence[Task],
    outcomes: Sequence[Outcome],
    *,
    ks: Sequence[int],
    bootstrap: int = 0,
    exclude: Sequence[str] = (),
) -> UjbScores | None:
    """The CoderUJB metrics of every kind present, or None when no task is a CoderUJB one."""
    excluded = set(exclude)
    kinds: list[UjbKindScore] = []
    for kind in UjbKind:
        group = [
            t for t in tasks
            if t.ujb is not None and t.ujb.kind is kind and t.task_id not in excluded
        ]
        if group:
            ids = {t.task_id for t in group}
            mine = [o for o in outcomes if o.task_id in ids]
            kinds.append(score_kind(kind, group, mine, ks=ks, bootstrap=bootstrap))
    return UjbScores(kinds=kinds) if kinds else None


__all__ = [
    "KIND_TITLES",
    "LEVELS",
    "UjbKindScore",
    "UjbLevel",
    "UjbRate",
    "UjbScores",
    "dd_rates",
    "reached",
    "score_kind",
    "score_ujb",
]
