"""pass@k_π with a budget spread across languages (CodeGeeX eq. 7), and the strategies."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from codereval.errors import UserError
from codereval.model import Language, Outcome, Task, Verdict
from codereval.scoring.allocation import (
    allocate,
    counts_from_outcomes,
    parse_weights,
    pass_at_k_pi,
)
from codereval.scoring.metrics import pass_at_k

# Two problems; n = 4 samples per language.
COUNTS = {
    "0": {"python": (4, 1), "cpp": (4, 0), "go": (4, 4)},
    "1": {"python": (4, 2), "cpp": (4, 3), "go": (4, 0)},
}


def test_single_language_allocation_is_plain_pass_at_k() -> None:
    value = pass_at_k_pi(COUNTS, {"python": 3})
    assert value == pytest.approx((pass_at_k(4, 1, 3) + pass_at_k(4, 2, 3)) / 2)


def test_mixed_allocation_multiplies_the_miss_probabilities() -> None:
    value = pass_at_k_pi(COUNTS, {"python": 1, "cpp": 2})
    miss0 = (math.comb(3, 1) / math.comb(4, 1)) * (math.comb(4, 2) / math.comb(4, 2))
    miss1 = (math.comb(2, 1) / math.comb(4, 1)) * (math.comb(1, 2) / math.comb(4, 2))
    assert value == pytest.approx(((1 - miss0) + (1 - miss1)) / 2)
    # Spreading the budget across complementary languages beats either alone here.
    assert pass_at_k_pi(COUNTS, {"cpp": 1, "go": 1}) == pytest.approx((1.0 + 0.75) / 2)
    assert pass_at_k_pi(COUNTS, {"go": 2}) == 0.5
    assert pass_at_k_pi(COUNTS, {"cpp": 2}) == pytest.approx((0 + 1.0) / 2)


def test_best_single_puts_the_whole_budget_on_the_best_language() -> None:
    pi = allocate("best", k=2, counts=COUNTS, languages=["python", "cpp", "go"])
    assert sum(pi.values()) == 2
    assert sorted(v for v in pi.values() if v) == [2]
    best_value = pass_at_k_pi(COUNTS, pi)
    assert best_value == max(pass_at_k_pi(COUNTS, {lang: 2}) for lang in ("python", "cpp", "go"))


def test_uniform_splits_evenly_and_gives_leftovers_to_the_strongest() -> None:
    assert allocate("uniform", k=3, counts=COUNTS, languages=["python", "cpp", "go"]) == {
        "python": 1, "cpp": 1, "go": 1}
    pi = allocate("uniform", k=4, counts=COUNTS, languages=["python", "cpp", "go"])
    assert sum(pi.values()) == 4 and sorted(pi.values()) == [1, 1, 2]
    # python, cpp and go all have pass@1 = 3/8 or more; the tie goes to the first ranked.
    assert max(pi, key=lambda lang: pi[lang]) in ("python", "cpp", "go")


def test_weighted_follows_the_weights_and_sums_to_k() -> None:
    pi = allocate("weighted", k=4, counts=COUNTS, languages=["python", "cpp", "go"],
                  weights={"python": 3, "cpp": 1})
    assert pi == {"python": 3, "cpp": 1, "go": 0}


def test_bad_strategy_weights_and_budgets_are_user_errors() -> None:
    langs = ["python", "cpp"]
    with pytest.raises(UserError, match=r"unknown allocation strategy 'greedy'.*best, uniform"):
        allocate("greedy", k=2, counts=COUNTS, languages=langs)
    with pytest.raises(UserError, match="needs weights"):
        allocate("weighted", k=2, counts=COUNTS, languages=langs)
    with pytest.raises(UserError, match="not in the run: rust"):
        allocate("weighted", k=2, counts=COUNTS, languages=langs, weights={"rust": 1})
    with pytest.raises(UserError, match="needs at least 5, have 4"):
        pass_at_k_pi(COUNTS, {"python": 5})
    with pytest.raises(UserError, match="bad weight 'cpp'"):
        parse_weights("python=1,cpp")
    assert parse_weights("python=2, cpp=0.5") == {"python": 2.0, "cpp": 0.5}


def _task(task_id: str, language: str) -> Task:
    return Task(task_id=task_id, benchmark=f"humanevalx-{language}", language=Language(language),
                name="f")


def test_counts_come_from_outcomes_matched_by_problem_number() -> None:
    tasks = [_task("Python/7", "python"), _task("CPP/7", "cpp")]
    outcomes = [
        Outcome(task_id="Python/7", sample_index=0, verdict=Verdict.PASSED),
        Outcome(task_id="Python/7", sample_index=1, verdict=Verdict.FAILED),
        Outcome(task_id="CPP/7", sample_index=0, verdict=Verdict.INFRA_ERROR),
        Outcome(task_id="CPP/7", sample_index=1, verdict=Verdict.TIMEOUT),
    ]
    assert counts_from_outcomes(tasks, outcomes) == {"7": {"python": (2, 1), "cpp": (1, 0)}}


def _write_run(root: Path, language: str, prefix: str, passes: list[int]) -> Path:
    run = root / language
    run.mkdir()
    tasks = [_task(f"{prefix}/{i}", language) for i in range(len(passes))]
    (run / "tasks.jsonl").write_text("".join(t.to_json() + "\n" for t in tasks))
    lines = []
    for i, passed in enumerate(passes):
        for index in range(2):
            verdict = Verdict.PASSED if index < passed else Verdict.FAILED
            lines.append(Outcome(task_id=f"{prefix}/{i}", sample_index=index,
                                 verdict=verdict).to_json() + "\n")
    (run / "outcomes.jsonl").write_text("".join(lines))
    return run


def test_allocate_command_prints_each_strategy(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from codereval.cli.allocate_cmd import allocate_command

    py = _write_run(tmp_path, "python", "Python", [2, 0])
    cpp = _write_run(tmp_path, "cpp", "CPP", [0, 1])
    result = CliRunner().invoke(allocate_command, [str(py), str(cpp), "--k", "2",
                                                   "--weights", "python=1,cpp=1"])
    assert result.exit_code == 0, result.output
    assert "best      pass@2_pi =  50.00%" in result.output
    # Problem 0 is solved by python's samples; problem 1 by one of cpp's two.
    assert "uniform   pass@2_pi =  75.00%   (python=1, cpp=1)" in result.output
    assert "weighted  pass@2_pi =  75.00%" in result.output
    missing = CliRunner().invoke(allocate_command, [str(tmp_path)])
    assert missing.exit_code != 0
    assert "tasks.jsonl not found" in str(missing.exception)
