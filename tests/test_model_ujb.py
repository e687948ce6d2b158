"""The CoderUJB slots of Task and Outcome: typed, round-tripping, invisible when unset."""

from __future__ import annotations

import json

from codereval.model import (
    IssueReport,
    Language,
    Outcome,
    Task,
    UjbKind,
    UjbMeasures,
    UjbSpec,
    Verdict,
)


def test_a_task_without_a_coderujb_spec_serialises_exactly_as_before_the_slot_existed() -> None:
    task = Task(task_id="t", benchmark="b", language=Language.PYTHON, name="f")
    data = json.loads(task.to_json())
    assert "ujb" not in data
    # Task fingerprints and run identities hash this text: it must not move.
    assert list(data) == [
        "task_id", "benchmark", "language", "name", "signature", "docstring", "human_label",
        "reference", "level", "oracle_context", "all_context", "location", "file_content",
        "test", "prompt", "extra",
    ]
    assert Task.from_json(task.to_json()) == task


def test_a_coderujb_task_round_trips_with_its_spec() -> None:
    spec = UjbSpec(
        kind=UjbKind.ITG, project="Lang", bug_id="1", test_methods=("a.BTest::t",),
        classes_under_test=("a.B",), issue=IssueReport(title="NPE", body="stack"),
    )
    task = Task(task_id="t", benchmark="coderujb", language=Language.JAVA, name="t", ujb=spec)
    again = Task.from_json(task.to_json())
    assert again == task
    assert again.ujb is not None and again.ujb.issue == IssueReport(title="NPE", body="stack")


def test_measures_derive_coverage_and_the_itg_trigger() -> None:
    measures = UjbMeasures(
        lines_covered=3, lines_total=4, branches_covered=0, branches_total=0,
        passed_fixed=True, failed_buggy=False,
    )
    outcome = Outcome(task_id="t", verdict=Verdict.PASSED, ujb=measures)
    assert Outcome.from_json(outcome.to_json()) == outcome
    assert measures.line_coverage == 0.75
    assert measures.branch_coverage is None  # no branches: undefined, not 0 %
    assert measures.triggers is False
    assert UjbMeasures(passed_fixed=True).triggers is None
    assert "ujb" not in json.loads(Outcome(task_id="t", verdict=Verdict.FAILED).to_json())


def test_late_fields_stay_out_of_the_json_at_any_depth_while_unset() -> None:
    # Provenance.jvm in an Outcome, UjbSpec.start_buggy in a Task: written before those
    # fields existed, their JSON (and every hash of it) must not change.
    outcome = json.loads(Outcome(task_id="t", verdict=Verdict.FAILED).to_json())
    assert "jvm" not in outcome["provenance"]
    spec = UjbSpec(kind=UjbKind.ITG, project="Lang", bug_id="1")
    task = json.loads(
        Task(task_id="t", benchmark="coderujb", language=Language.JAVA, name="t",
             ujb=spec).to_json()
    )
    assert "start_buggy" not in task["ujb"] and "end_buggy" not in task["ujb"]
