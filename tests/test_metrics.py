"""pass@k: the unbiased estimator and the two scoring conventions."""

from __future__ import annotations

import math

import pytest

from codereval.model import Level, Location, Outcome, Task, Verdict
from codereval.scoring.metrics import parse_ks, pass_at_k, pass_at_k_exact, score


def brute_force(n: int, c: int, k: int) -> float:
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


@pytest.mark.parametrize(("n", "c", "k"), [(10, 0, 1), (10, 3, 1), (10, 3, 5), (20, 7, 10)])
def test_pass_at_k_matches_the_combinatorial_definition(n: int, c: int, k: int) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(brute_force(n, c, k), abs=1e-12)
    assert float(pass_at_k_exact(n, c, k)) == pytest.approx(brute_force(n, c, k), abs=1e-12)


def test_pass_at_k_is_one_when_every_draw_of_k_contains_a_pass() -> None:
    assert pass_at_k(10, 8, 5) == 1.0
    assert pass_at_k(5, 1, 5) == 1.0


def test_pass_at_1_is_the_pass_rate() -> None:
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)


def test_pass_at_k_stays_stable_for_large_n() -> None:
    value = pass_at_k(2000, 1, 100)
    assert value == pytest.approx(100 / 2000, rel=1e-9)


def test_pass_at_k_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError):
        pass_at_k(5, 6, 1)
    with pytest.raises(ValueError):
        pass_at_k(5, 1, 0)


def _task(task_id: str, level: Level, project: str = "o/p") -> Task:
    return Task(
        task_id=task_id,
        benchmark="codereval-python",
        language="python",
        name=task_id,
        level=level,
        location=Location(project=project),
    )


def _outcomes(task_id: str, verdicts: list[Verdict]) -> list[Outcome]:
    return [Outcome(task_id=task_id, sample_index=i, verdict=v) for i, v in enumerate(verdicts)]


def test_default_convention_leaves_infra_errors_out_and_says_so() -> None:
    tasks = [_task("a", Level.SELF_CONTAINED), _task("b", Level.CLASS_RUNNABLE)]
    outcomes = _outcomes("a", [Verdict.PASSED, Verdict.INFRA_ERROR]) + _outcomes(
        "b", [Verdict.FAILED, Verdict.FAILED]
    )
    board = score(tasks, outcomes, ks=(1,))
    # a: 1 of 1 counted sample passed; b: 0 of 2.
    assert board.overall.pass_at[1] == 50.0
    assert board.infra_errors == 1
    assert any("infra_error" in note for note in board.notes)
    assert board.short_tasks == {"a": 1}


def test_compat_convention_fixes_n_and_divides_by_the_benchmark_size() -> None:
    tasks = [_task("a", Level.SELF_CONTAINED)]
    outcomes = _outcomes("a", [Verdict.PASSED] * 5)
    board = score(tasks, outcomes, ks=(1,), compat=True, compat_n=10, benchmark_size=4)
    # 5 passes out of a fixed n of 10 gives 0.5; one task over a benchmark of four.
    assert board.overall.pass_at[1] == 12.5
    assert board.convention == "compat"


def test_default_convention_leaves_out_tasks_with_fewer_than_k_samples() -> None:
    tasks = [_task("a", Level.SELF_CONTAINED), _task("b", Level.SELF_CONTAINED)]
    outcomes = _outcomes("a", [Verdict.PASSED] * 10) + _outcomes("b", [Verdict.FAILED] * 3)
    board = score(tasks, outcomes, ks=(1, 5))
    assert board.overall.pass_at[1] == 50.0
    assert board.overall.pass_at[5] == 100.0
    assert any("pass@5: 1 task" in note for note in board.notes)


def test_breakdowns_by_level_standalone_and_project() -> None:
    tasks = [
        _task("a", Level.SELF_CONTAINED, "x/one"),
        _task("b", Level.SLIB_RUNNABLE, "x/one"),
        _task("c", Level.PROJECT_RUNNABLE, "x/two"),
    ]
    outcomes = (
        _outcomes("a", [Verdict.PASSED])
        + _outcomes("b", [Verdict.FAILED])
        + _outcomes("c", [Verdict.PASSED])
    )
    board = score(tasks, outcomes, ks=(1,))
    assert [g.name for g in board.levels] == ["self_contained", "slib_runnable", "project_runnable"]
    assert board.standalone is not None and board.standalone.pass_at[1] == 50.0
    assert board.non_standalone is not None and board.non_standalone.pass_at[1] == 100.0
    assert {g.name: g.pass_at[1] for g in board.projects} == {"x/one": 50.0, "x/two": 100.0}
    assert board.verdicts["passed"] == 2 and board.verdicts["failed"] == 1


def test_excluded_tasks_are_left_out_and_named() -> None:
    tasks = [_task("a", Level.SELF_CONTAINED), _task("b", Level.SELF_CONTAINED)]
    outcomes = _outcomes("a", [Verdict.PASSED]) + _outcomes("b", [Verdict.FAILED])
    board = score(tasks, outcomes, ks=(1,), exclude=["b"])
    assert board.overall.pass_at[1] == 100.0
    assert board.excluded_tasks == ["b"]


def test_parse_ks() -> None:
    assert parse_ks("10,1,5") == (1, 5, 10)
    with pytest.raises(ValueError):
        parse_ks("1,x")
    with pytest.raises(ValueError):
        parse_ks("0")


def test_bootstrap_interval_is_reproducible_and_brackets_the_mean() -> None:
    from codereval.scoring.metrics import bootstrap_interval

    values = [1.0] * 30 + [0.0] * 70
    first = bootstrap_interval(values, resamples=500)
    assert first == bootstrap_interval(values, resamples=500)  # fixed seed
    low, high = first
    assert low < 30.0 < high
    assert low > 20.0 and high < 40.0
    assert bootstrap_interval([0.5] * 10, resamples=100) == (50.0, 50.0)


def test_score_adds_intervals_only_when_asked() -> None:
    tasks = [_task(f"t{i}", Level.SELF_CONTAINED) for i in range(20)]
    outcomes = [
        o
        for i in range(20)
        for o in _outcomes(f"t{i}", [Verdict.PASSED if i % 4 == 0 else Verdict.FAILED] * 2)
    ]
    assert score(tasks, outcomes, ks=(1,)).overall.ci is None
    board = score(tasks, outcomes, ks=(1,), bootstrap=300)
    assert board.overall.ci is not None
    low, high = board.overall.ci[1]
    assert low <= board.overall.pass_at[1] == 25.0 <= high
