"""Paired comparison of two runs: per-task pass@k, paired bootstrap interval, sign-flip p-value,
and `codereval score A B --paired` in the terminal and as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codereval.model import Language, Level, Location, Outcome, Task, Verdict
from codereval.scoring.metrics import score_groups, task_pass_at
from codereval.scoring.paired import compare_paired, paired_bootstrap_interval, sign_flip_p_value

RESULTS = Path("codereval") / "results" / "python"


def _official(shared_data: Path, model: str) -> Path:
    return shared_data / RESULTS / model / "Raw_Input.jsonl_out.jsonl"


def test_sign_flip_p_value_is_exact_for_few_tasks() -> None:
    # Three tasks all favour A by the same amount: 2 of the 8 sign patterns are as extreme.
    assert sign_flip_p_value([0.5, 0.5, 0.5]) == pytest.approx(2 / 8)
    # Ties carry no information; no difference at all is p = 1.
    assert sign_flip_p_value([0.5, 0.0, 0.5, 0.5, 0.0]) == pytest.approx(2 / 8)
    assert sign_flip_p_value([0.0, 0.0]) == 1.0
    # Opposite differences cancel: every pattern is at least as extreme as a zero sum.
    assert sign_flip_p_value([0.3, -0.3]) == 1.0


def test_sign_flip_p_value_monte_carlo_is_seeded_and_small_for_a_clear_difference() -> None:
    differences = [0.1] * 30 + [0.0] * 10
    p = sign_flip_p_value(differences, resamples=2000)
    assert p == sign_flip_p_value(differences, resamples=2000)
    assert p == pytest.approx(1 / 2001)  # no random pattern reaches +3.0; never zero


def test_paired_interval_of_a_constant_difference_is_that_difference() -> None:
    assert paired_bootstrap_interval([0.2] * 12) == (20.0, 20.0)
    low, high = paired_bootstrap_interval([0.0, 1.0] * 20)
    assert low < 50.0 < high


def test_compare_paired_on_the_common_tasks() -> None:
    a = {"t1": 1.0, "t2": 0.5, "t3": 0.0}
    b = {"t1": 0.0, "t2": 0.5}
    result = compare_paired(a, b, k=1, a_label="A", b_label="B", task_ids=["t1", "t2", "t3"])
    assert (result.tasks, result.left_out) == (2, 1)
    assert (result.a_score, result.b_score, result.difference) == (75.0, 25.0, 50.0)
    assert (result.a_better, result.b_better) == (1, 0)
    assert result.ci[0] <= result.difference <= result.ci[1]
    same = compare_paired(a, a, k=1, a_label="A", b_label="A", task_ids=["t1", "t2", "t3"])
    assert same.difference == 0.0 and same.p_value == 1.0 and same.ci == (0.0, 0.0)
    with pytest.raises(ValueError, match="no task has pass@1"):
        compare_paired(a, {}, k=1, a_label="A", b_label="B", task_ids=["t1"])


def _outcomes(task_id: str, verdicts: list[Verdict]) -> list[Outcome]:
    return [Outcome(task_id=task_id, sample_index=i, verdict=v) for i, v in enumerate(verdicts)]


def test_task_pass_at_follows_the_convention() -> None:
    outcomes = _outcomes("a", [Verdict.PASSED, Verdict.FAILED, Verdict.INFRA_ERROR])
    # default: infra errors are not the model's, b has no samples and no value.
    assert task_pass_at(["a", "b"], outcomes, 1) == {"a": 0.5}
    assert task_pass_at(["a", "b"], outcomes, 3) == {}
    # compat: n fixed at 10, missing samples fail, b is a zero.
    assert task_pass_at(["a", "b"], outcomes, 1, compat=True) == {"a": 0.1, "b": 0.0}


def test_score_groups_by_language() -> None:
    tasks = [
        Task(task_id=f"{lang}{i}", benchmark="x", language=lang, name="f",
             level=Level.SELF_CONTAINED, location=Location(project="o/p"))
        for lang in (Language.PYTHON, Language.JAVA) for i in range(2)
    ]
    outcomes = [
        *_outcomes("python0", [Verdict.PASSED]), *_outcomes("python1", [Verdict.FAILED]),
        *_outcomes("java0", [Verdict.PASSED]), *_outcomes("java1", [Verdict.PASSED]),
    ]
    groups = score_groups(tasks, outcomes, key=lambda t: t.language.value, ks=(1,))
    assert {g.name: g.pass_at[1] for g in groups} == {"java": 100.0, "python": 50.0}


def test_score_paired_in_the_terminal_and_as_json(shared_data: Path, run_cli) -> None:
    chatgpt, codegen = _official(shared_data, "ChatGPT"), _official(shared_data, "CodeGen")
    result = run_cli("score", chatgpt, codegen, "--compat", "--paired", "--json")
    assert result.exit_code == 0, result
    document = json.loads(result.stdout)
    assert [s["label"] for s in document["scores"]] == ["ChatGPT", "CodeGen"]
    by_k = {c["k"]: c for c in document["paired"]}
    assert set(by_k) == {1, 5, 10}
    first = by_k[1]
    assert (first["a"], first["b"], first["tasks"]) == ("ChatGPT", "CodeGen", 230)
    # The paper's Table 3: ChatGPT 21.04 and CodeGen 9.48 pass@1 on the same 230 tasks.
    assert (first["a_score"], first["b_score"]) == pytest.approx((21.04, 9.48), abs=0.01)
    assert first["difference"] == pytest.approx(21.04 - 9.48, abs=0.02)
    low, high = first["ci"]
    assert 0 < low < first["difference"] < high
    assert first["p_value"] < 0.001
    table = run_cli("score", chatgpt, codegen, "--compat", "--paired")
    assert table.exit_code == 0, table
    assert "paired comparison" in table.stdout and "ChatGPT − CodeGen" in table.stdout
    assert f"{first['difference']:+.2f} [{low:+.2f}, {high:+.2f}]" in table.stdout
    assert "< 0.001" in table.stdout


def test_score_without_paired_keeps_its_output(shared_data: Path, run_cli) -> None:
    chatgpt, codegen = _official(shared_data, "ChatGPT"), _official(shared_data, "CodeGen")
    result = run_cli("score", chatgpt, codegen, "--compat", "--json")
    assert result.exit_code == 0, result
    documents = json.loads(result.stdout)
    assert isinstance(documents, list)
    assert set(documents[0]) == {
        "label", "convention", "convention_note", "ks", "overall", "levels", "standalone",
        "non_standalone", "projects", "verdicts", "samples_per_task", "short_tasks",
        "infra_errors", "excluded_tasks", "notes", "acc_at_k", "categories",
    }
    assert "paired" not in run_cli("score", chatgpt, codegen, "--compat").stdout


def test_paired_needs_two_inputs_on_common_tasks(shared_data: Path, run_cli) -> None:
    result = run_cli("score", _official(shared_data, "ChatGPT"), "--paired")
    assert result.exit_code != 0 and result.stdout == ""
    assert result.stderr.startswith("error: --paired needs two or more inputs")
    java = shared_data / "codereval" / "results" / "java" / "ChatGPT" / "Raw_Input.jsonl_out.jsonl"
    result = run_cli("score", _official(shared_data, "ChatGPT"), java, "--paired")
    assert result.exit_code != 0
    assert "have no task in common" in result.stderr and "Traceback" not in result.stderr
