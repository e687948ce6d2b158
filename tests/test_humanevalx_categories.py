"""CodeGeeX's result categories (Figure 7): one per outcome, a distribution per language."""

from __future__ import annotations

import pytest

from codereval.model import Language, Outcome, Sample, Task, Verdict
from codereval.scoring.categories import Category, category, distribution, format_distribution


@pytest.mark.parametrize(
    ("verdict", "expected"),
    [
        (Verdict.PASSED, Category.PASSING),
        (Verdict.FAILED, Category.WRONG_ANSWER),
        (Verdict.RUNTIME_ERROR, Category.RUNTIME_ERROR),
        (Verdict.MEMORY_EXCEEDED, Category.RUNTIME_ERROR),
        (Verdict.COMPILE_ERROR, Category.SYNTAX_SEMANTIC_ERROR),
        (Verdict.SYNTAX_ERROR, Category.SYNTAX_SEMANTIC_ERROR),
        (Verdict.NO_CODE, Category.UNFINISHED),
        (Verdict.TIMEOUT, Category.TIMEOUT),
        (Verdict.INFRA_ERROR, Category.NOT_JUDGED),
    ],
)
def test_every_verdict_has_a_category(verdict: Verdict, expected: Category) -> None:
    assert category(Outcome(task_id="t", verdict=verdict)) is expected


def test_a_cut_off_generation_that_failed_is_unfinished_but_a_pass_stays_a_pass() -> None:
    failed = Outcome(task_id="t", verdict=Verdict.COMPILE_ERROR)
    passed = Outcome(task_id="t", verdict=Verdict.PASSED)
    assert category(failed, truncated=True) is Category.UNFINISHED
    assert category(passed, truncated=True) is Category.PASSING


def test_distribution_is_per_language_and_leaves_infra_errors_out_of_the_shares() -> None:
    tasks = [
        Task(task_id="CPP/0", benchmark="humanevalx-cpp", language=Language.CPP, name="f"),
        Task(task_id="Go/0", benchmark="humanevalx-go", language=Language.GO, name="F"),
    ]
    outcomes = [
        Outcome(task_id="CPP/0", sample_index=0, verdict=Verdict.PASSED),
        Outcome(task_id="CPP/0", sample_index=1, verdict=Verdict.COMPILE_ERROR),
        Outcome(task_id="CPP/0", sample_index=2, verdict=Verdict.INFRA_ERROR),
        Outcome(task_id="Go/0", sample_index=0, verdict=Verdict.FAILED),
        Outcome(task_id="Go/0", sample_index=1, verdict=Verdict.FAILED),
    ]
    samples = [Sample(task_id="Go/0", index=1, truncated=True)]
    counts = distribution(outcomes, tasks=tasks, samples=samples)
    assert counts["cpp"] == {Category.PASSING: 1, Category.SYNTAX_SEMANTIC_ERROR: 1,
                             Category.NOT_JUDGED: 1}
    assert counts["go"] == {Category.WRONG_ANSWER: 1, Category.UNFINISHED: 1}
    table = format_distribution(counts).splitlines()
    assert table[0].split()[:3] == ["language", "passing", "wrong_answer"]
    cpp = table[1].split()
    assert cpp[0] == "cpp" and cpp[1] == "50.0" and cpp[-2:] == ["2", "1"]
