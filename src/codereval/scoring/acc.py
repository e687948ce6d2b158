"""Acc@k: how many of the reference's context tokens the generated code uses.

For each task, the tokens are its ``oracle_context`` (apis = APIInvocation, classes =
TypeReference, vars = VarReference). A sample *uses* a token when the token occurs as an
identifier in the parsed sample: for Python any ``Name``, attribute name or imported name; for
Java any identifier or type identifier (array tokens such as ``String[]`` need that array type).
A sample that does not parse falls back to a whole-word match on its text, and a sample with
no code uses nothing.

Default (unbiased, like pass@k): with n samples of which m use a token, the chance that at
least one of k samples drawn without replacement uses it, 1 - C(n-m, k) / C(n, k). Compat (the
paper): the first k samples, a token counts if any of them uses it. A task's recall is the mean
over its tokens; the result is the mean over tasks (tasks without tokens, or, in the default
mode, with fewer than k samples, are left out and counted).
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Sequence
from math import comb

from pydantic import Field

from codereval.analysis.deps import RefKind
from codereval.model import Frozen, Language, Sample, Task
from codereval.source import pyast

TOKEN_TYPES: tuple[str, ...] = tuple(kind.value for kind in RefKind)


class AccResult(Frozen):
    """Acc@k overall and per token type, each a fraction in [0, 1] keyed by k."""

    compat: bool
    ks: tuple[int, ...]
    overall: dict[int, float]
    by_type: dict[str, dict[int, float]]
    # How many tasks each figure averages over (by k), and why others were left out.
    tasks: dict[int, int]
    tasks_without_tokens: int = 0
    tasks_too_few_samples: dict[int, int] = Field(default_factory=dict)


def _python_identifiers(code: str) -> set[str] | None:
    try:
        tree = pyast.parse(code)
    except (SyntaxError, ValueError):
        return None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.update(node.name.split("."))
            if node.asname:
                names.add(node.asname)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.update(node.module.split("."))
    return names


def _java_identifiers(code: str) -> set[str] | None:
    from codereval.analysis.java import java_parser, node_text, walk_nodes

    root = java_parser().parse(code.encode("utf-8")).root_node
    if root.has_error:
        return None
    names: set[str] = set()
    for node in walk_nodes(root):
        if node.type in ("identifier", "type_identifier"):
            names.add(node_text(node))
        elif node.type == "array_type":
            names.add("".join(node_text(node).split()))
    return names


def _word_used(token: str, code: str) -> bool:
    base = re.escape(token.replace("[]", "")) + r"(?:\s*\[\s*\])" * token.count("[]")
    return re.search(r"(?<![\w$])" + base + r"(?![\w$])", code) is not None


def tokens_used(code: str | None, tokens: Sequence[str], *, language: Language) -> set[str]:
    """The tokens one sample uses (see the module docstring)."""
    if not code:
        return set()
    if language is Language.PYTHON:
        names = _python_identifiers(code)
    elif language is Language.JAVA:
        names = _java_identifiers(code)
    else:
        names = None
    if names is None:
        return {t for t in tokens if _word_used(t, code)}
    return {t for t in tokens if t in names}


def _chance(n: int, m: int, k: int) -> float:
    """P(at least one of k of n samples, drawn without replacement, is among the m)."""
    if n - m < k:
        return 1.0
    return 1.0 - comb(n - m, k) / comb(n, k)


def _task_values(
    tasks: Sequence[Task], samples: Sequence[Sample], ks: tuple[int, ...], *, compat: bool
) -> tuple[dict[str, dict[int, list[float]]], int, dict[int, int]]:
    """Each task's recall by k, overall ("all") and per token type; and the tasks left out
    (without tokens; with fewer than k samples)."""
    by_task: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        by_task[sample.task_id].append(sample)
    values: dict[str, dict[int, list[float]]] = {
        t: {k: [] for k in ks} for t in ("all", *TOKEN_TYPES)
    }
    without_tokens = 0
    too_few: dict[int, int] = {k: 0 for k in ks}
    for task in tasks:
        context = task.oracle_context
        typed = {t: tuple(dict.fromkeys(v)) for t, v in context.tokens().items()} if context else {}
        all_tokens = tuple(dict.fromkeys(tok for group in typed.values() for tok in group))
        if not all_tokens:
            without_tokens += 1
            continue
        group = sorted(by_task.get(task.task_id, []), key=lambda s: s.index)
        used = [tokens_used(s.code, all_tokens, language=task.language) for s in group]
        n = len(group)
        for k in ks:
            if compat:
                first = used[:k]
                score = {tok: float(any(tok in u for u in first)) for tok in all_tokens}
            else:
                if n < k:
                    too_few[k] += 1
                    continue
                score = {tok: _chance(n, sum(tok in u for u in used), k) for tok in all_tokens}
            values["all"][k].append(sum(score.values()) / len(score))
            for token_type, tokens in typed.items():
                if tokens:
                    values[token_type][k].append(sum(score[t] for t in tokens) / len(tokens))
    return values, without_tokens, too_few


def acc_at_k(
    tasks: Sequence[Task],
    samples: Sequence[Sample],
    ks: Sequence[int],
    *,
    compat: bool,
) -> AccResult:
    """Acc@k of ``samples`` against the oracle context of ``tasks`` (see the module docstring)."""
    ks = tuple(sorted(set(ks)))
    values, without_tokens, too_few = _task_values(tasks, samples, ks, compat=compat)

    def mean(items: list[float]) -> float:
        return sum(items) / len(items) if items else 0.0

    return AccResult(
        compat=compat,
        ks=ks,
        overall={k: mean(v) for k, v in values["all"].items()},
        by_type={t: {k: mean(v) for k, v in values[t].items()} for t in TOKEN_TYPES},
        tasks={k: len(v) for k, v in values["all"].items()},
        tasks_without_tokens=without_tokens,
        tasks_too_few_samples=too_few,
    )


def acc_intervals(
    tasks: Sequence[Task],
    samples: Sequence[Sample],
    ks: Sequence[int],
    *,
    compat: bool,
    resamples: int = 1000,
) -> dict[str, dict[int, tuple[float, float]]]:
    """95% percentile bootstrap intervals over tasks (in percent, seeded) of Acc@k, overall
    ("all") and per token type; a figure no task has a value for gets no interval."""
    from codereval.scoring.metrics import bootstrap_interval

    values, _, _ = _task_values(tasks, samples, tuple(sorted(set(ks))), compat=compat)
    return {
        name: {
            k: bootstrap_interval(items, resamples=resamples) for k, items in by_k.items() if items
        }
        for name, by_k in values.items()
    }
