"""`codereval compare`: our verdicts next to an official result file's, disagreements explained.

The runs here are written directly (no execution): what is under test is the pairing, the 2x2
table, the causes and the command's behaviour on bad input. tests/test_faithful_mode.py runs
the real thing end to end on the fixture world.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codereval.families.codereval.agreement import Agreement, compare_paths, load_causes
from codereval.model import Outcome, Provenance, Sample, Verdict
from codereval.storage.store import export_outcomes, write_jsonl_models, write_run_json

TASK = "62ece4982e6aefcf4aabbd5f"
OTHER = "62ece4982e6aefcf4aabbd60"


def _official(path: Path, rows: dict[str, list[tuple[str, bool, int]]]) -> Path:
    """An official Python result file: per task, (code, is_pass, return_code) per sample."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for task_id, samples in rows.items():
        lines.append(json.dumps({
            "_id": task_id, "project": "acme/ledger", "file_path": "ledger/util.py",
            "name": "f", "docstring": "", "level": "self_contained", "code": [],
            "generate_results": [{"generate_code": code, "is_pass": ok, "return_code": rc}
                                 for code, ok, rc in samples],
        }))
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(path: Path, outcomes: dict[tuple[str, int], tuple[str, Verdict, str]]) -> Path:
    """A run directory holding (code, verdict, detail or stderr) per (task, sample index)."""
    path.mkdir(parents=True)
    samples = [Sample(task_id=t, index=i, raw=code, code=code)
               for (t, i), (code, _, _) in outcomes.items()]
    rows = [
        Outcome(task_id=t, sample_index=i, verdict=verdict, detail=text,
                provenance=Provenance(code_hash=Sample(task_id=t, code=code).code_hash()))
        for (t, i), (code, verdict, text) in outcomes.items()
    ]
    write_run_json(path, {"benchmark": "codereval-python"})
    write_jsonl_models(path / "samples.jsonl", samples)
    export_outcomes(path, rows)
    return path


@pytest.fixture
def official(tmp_path: Path) -> Path:
    return _official(tmp_path / "ChatGPT" / "Raw_Input.jsonl_out.jsonl", {
        TASK: [("a", True, 0), ("b", False, 1), ("c", True, 0), ("d", False, 2)],
        OTHER: [("e", True, 0), ("f", True, 0), ("g", False, 1)],
    })


def test_counts_the_two_by_two_table_and_names_each_cause(tmp_path: Path, official: Path) -> None:
    run = _run(tmp_path / "run", {
        (TASK, 0): ("a", Verdict.PASSED, ""),
        (TASK, 1): ("b", Verdict.FAILED, "AssertionError"),
        (TASK, 2): ("c", Verdict.FAILED,
                    "test_f() was called by our harness; the original platform never called it"),
        (TASK, 3): ("d", Verdict.PASSED, ""),
        (OTHER, 0): ("e", Verdict.RUNTIME_ERROR,
                     "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in "
                     "name resolution>"),
        (OTHER, 1): ("f", Verdict.TIMEOUT, "wall time limit reached"),
        (OTHER, 2): ("g", Verdict.FAILED, "AssertionError"),
    })
    result = compare_paths(run, official)
    assert result.label == "ChatGPT"
    assert (result.compared, result.both_pass, result.both_fail) == (7, 1, 2)
    assert (result.official_only, result.ours_only) == (3, 1)
    assert result.agreement == pytest.approx(100 * 3 / 7, abs=0.01)
    by_sample = {(d.task_id, d.sample_index): d.cause for d in result.disagreements}
    assert by_sample == {
        (TASK, 2): "never-called test",
        (TASK, 3): "official run did not start",
        (OTHER, 0): "network-bound test",
        (OTHER, 1): "timeout",
    }
    network = next(d for d in result.disagreements if d.cause == "network-bound test")
    assert "Temporary failure in name resolution" in network.evidence


@pytest.mark.parametrize(("text", "cause"), [
    ("FileNotFoundError: 'data/rate.txt'; the test uses the original machine's /home/travis/... "
     "paths, which only --compat provides", "path-bound test"),
    # Under --compat every traceback names the original's paths: that alone explains nothing.
    ('File "/home/travis/builds/repos/standalone/x.py", line 3\nAssertionError',
     "unexplained (ours)"),
    ("ModuleNotFoundError: No module named 'rdflib'", "missing package"),
    ("ImportError: cannot import name 'Mapping' from 'collections'", "Python version"),
    ("SyntaxError: Missing parentheses in call to 'print'", "Python version"),
    ("OSError: [Errno 30] Read-only file system: 'logs'", "test writes files"),
    ("KeyError: 'TERM'", "host environment"),
    ("AssertionError", "unexplained (ours)"),
])
def test_the_evidence_in_our_outcome_names_the_cause(
    tmp_path: Path, official: Path, text: str, cause: str
) -> None:
    run = _run(tmp_path / "run", {(TASK, 0): ("a", Verdict.RUNTIME_ERROR, text)})
    result = compare_paths(run, official)
    assert [d.cause for d in result.disagreements] == [cause]
    assert result.not_in_run == 6


def test_broken_tasks_are_left_out_and_flaky_ones_explain_their_disagreements(
    tmp_path: Path, official: Path
) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"task_id": TASK, "status": "broken", "detail": "ref fails"})
                    + "\n" + json.dumps({"task_id": OTHER, "status": "flaky", "detail": ""})
                    + "\n")
    run = _run(tmp_path / "run", {
        (TASK, 0): ("a", Verdict.FAILED, ""),
        (OTHER, 2): ("g", Verdict.PASSED, ""),
    })
    result = compare_paths(run, official, gold_path=gold)
    assert (result.excluded, result.excluded_tasks) == (1, [TASK])
    # Counting the broken task's sample, both samples disagree.
    assert result.agreement_with_broken == 0.0
    assert result.compared == 1
    assert [d.cause for d in result.disagreements] == ["flaky task"]


def test_infra_errors_are_not_counted_as_agreement_or_disagreement(
    tmp_path: Path, official: Path
) -> None:
    run = _run(tmp_path / "run", {(TASK, 1): ("b", Verdict.INFRA_ERROR, "sandbox failed")})
    result = compare_paths(run, official)
    assert (result.compared, result.infra_errors, result.disagreements) == (0, 1, [])


def test_a_run_of_other_samples_is_refused(tmp_path: Path, official: Path) -> None:
    run = _run(tmp_path / "run", {(TASK, 0): ("not the official code", Verdict.PASSED, "")})
    with pytest.raises(Exception, match=r"sample 0 of task \w+ is not the one in"):
        compare_paths(run, official)


def test_the_shipped_causes_are_well_formed() -> None:
    causes = load_causes()
    names = [c.name for c in causes]
    assert len(names) == len(set(names))
    assert {"never-called", "path-bound", "network", "missing-package", "python-version",
            "timeout"} <= set(names)
    assert all(c.patterns or c.verdicts for c in causes)


def test_cli_prints_the_table_and_every_disagreement(
    tmp_path: Path, official: Path, run_cli  # type: ignore[no-untyped-def]
) -> None:
    run = _run(tmp_path / "run", {
        (TASK, 0): ("a", Verdict.PASSED, ""),
        (TASK, 2): ("c", Verdict.RUNTIME_ERROR, "ModuleNotFoundError: No module named 'six'"),
    })
    result = run_cli("compare", run, official, "--details")
    assert result.exit_code == 0, result
    assert "Agreement with the official verdicts" in result.stdout
    assert "50.00%" in result.stdout
    assert "missing package" in result.stdout
    assert f"ChatGPT {TASK}#2: ours runtime_error, official pass — missing package" in result.stdout


def test_cli_json_round_trips_and_min_agreement_fails_the_exit_code(
    tmp_path: Path, official: Path, run_cli  # type: ignore[no-untyped-def]
) -> None:
    run = _run(tmp_path / "run", {
        (TASK, 0): ("a", Verdict.PASSED, ""),
        (TASK, 2): ("c", Verdict.FAILED, ""),
    })
    result = run_cli("compare", run, official, "--json", "--min-agreement", "99")
    assert result.exit_code == 1
    [row] = json.loads(result.stdout)
    assert Agreement.model_validate(row).agreement == 50.0
    assert "below --min-agreement ChatGPT 50.00%" in result.stderr


@pytest.mark.parametrize("problem", ["odd", "no-run", "no-official", "not-official", "no-gold"])
def test_bad_input_is_one_line_and_a_non_zero_exit(
    tmp_path: Path, official: Path, run_cli, problem: str  # type: ignore[no-untyped-def]
) -> None:
    run = _run(tmp_path / "run", {(TASK, 0): ("a", Verdict.PASSED, "")})
    samples = tmp_path / "samples.jsonl"
    samples.write_text(json.dumps({"task_id": TASK, "completion": "x"}) + "\n")
    args = {
        "odd": [run],
        "no-run": [tmp_path / "missing", official],
        "no-official": [run, tmp_path / "missing.jsonl"],
        "not-official": [run, samples],
        "no-gold": [run, official, "--gold", tmp_path / "gold.jsonl"],
    }[problem]
    result = run_cli("compare", *args)
    assert result.exit_code != 0
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) <= 2
    assert result.stderr.startswith("error: ")


def test_java_and_python_result_files_are_not_mixed(
    tmp_path: Path, official: Path, shared_data: Path, run_cli  # type: ignore[no-untyped-def]
) -> None:
    run = _run(tmp_path / "run", {(TASK, 0): ("a", Verdict.PASSED, "")})
    java = shared_data / "codereval" / "results" / "java" / "ChatGPT" / "Raw_Input.jsonl_out.jsonl"
    result = run_cli("compare", run, official, run, java)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: give either Java or Python official result files")


def test_recheck_refuses_a_gold_validation_run(tmp_path: Path, official: Path) -> None:
    run = _run(tmp_path / "run", {(TASK, 0): ("a", Verdict.FAILED, "")})
    write_run_json(run, {"benchmark": "codereval-python",
                         "identity": {"mode": "reference x3"}})
    with pytest.raises(Exception, match="is a gold-validation run"):
        compare_paths(run, official, recheck_times=2)
