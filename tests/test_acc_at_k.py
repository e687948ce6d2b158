"""Acc@k: recall of the reference's context tokens in the samples, unbiased and compat."""

from __future__ import annotations

from math import comb

import pytest

from codereval.model import Language, OracleContext, Sample, Task
from codereval.scoring.acc import AccResult, acc_at_k, tokens_used


def _task(task_id: str, *, language: Language = Language.PYTHON, **tokens: tuple[str, ...]) -> Task:
    return Task(
        task_id=task_id,
        benchmark="t",
        language=language,
        name="f",
        oracle_context=OracleContext(**tokens),
    )


def _samples(task_id: str, codes: list[str | None]) -> list[Sample]:
    return [Sample(task_id=task_id, index=i, code=c) for i, c in enumerate(codes)]


def test_usage_is_an_identifier_in_the_parsed_code_not_a_substring() -> None:
    code = "def f(x):\n    s = 'localize me'\n    return os.path.join(x, sep)\n"
    used = tokens_used(
        code, ["localize", "join", "path", "os", "sep", "jo"], language=Language.PYTHON
    )
    assert used == {"join", "path", "os", "sep"}


def test_code_that_does_not_parse_falls_back_to_whole_words() -> None:
    code = "def f(x:\n    return zone.localize(x)"
    assert tokens_used(code, ["localize", "local"], language=Language.PYTHON) == {"localize"}
    assert tokens_used(None, ["x"], language=Language.PYTHON) == set()


def test_java_array_tokens_need_the_array_type() -> None:
    code = 'class A { String[] f(String s) { return s.trim().split(","); } }'
    used = tokens_used(code, ["String[]", "String", "trim", "isEmpty"], language=Language.JAVA)
    assert used == {"String[]", "String", "trim"}


def test_unbiased_estimator_is_the_hypergeometric_chance_per_token() -> None:
    task = _task("t1", apis=("localize",), classes=("Time",))
    # n = 4 samples; localize used by 1, Time by 3
    codes = ["Time(1)", "Time(2)", "Time(3).localize(x)", "pass"]
    result = acc_at_k([task], _samples("t1", codes), [1, 2], compat=False)
    p_localize_2 = 1 - comb(3, 2) / comb(4, 2)
    p_time_2 = 1 - comb(1, 2) / comb(4, 2)
    assert result.overall[1] == pytest.approx((1 / 4 + 3 / 4) / 2)
    assert result.overall[2] == pytest.approx((p_localize_2 + p_time_2) / 2)
    assert result.by_type["APIInvocation"][2] == pytest.approx(p_localize_2)
    assert result.by_type["TypeReference"][1] == pytest.approx(3 / 4)
    assert result.tasks == {1: 1, 2: 1}


def test_compat_counts_a_token_if_any_of_the_first_k_samples_uses_it() -> None:
    task = _task("t1", apis=("localize",), classes=("Time",))
    codes = ["Time(1)", "pass", "zone.localize(t)"]
    result = acc_at_k([task], _samples("t1", codes), [1, 2, 3], compat=True)
    assert result.overall == {1: 0.5, 2: 0.5, 3: 1.0}
    assert result.by_type["APIInvocation"] == {1: 0.0, 2: 0.0, 3: 1.0}


def test_tasks_average_and_tasks_without_tokens_or_samples_are_counted_apart() -> None:
    full = _task("a", vars=("sep",))
    none = _task("b", vars=("sep",))
    empty = _task("c")
    samples = _samples("a", ["os.sep", "os.sep"]) + _samples("b", ["x", "y"]) + _samples("c", ["z"])
    result = acc_at_k([full, none, empty], samples, [1, 5], compat=False)
    assert result.overall[1] == pytest.approx(0.5)
    assert result.tasks_without_tokens == 1
    assert result.tasks_too_few_samples == {1: 0, 5: 2}
    assert result.tasks[5] == 0
    assert AccResult.from_json(result.to_json()) == result
