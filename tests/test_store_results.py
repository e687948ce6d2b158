"""The results store and its exports: idempotent writes, current outcomes, official format."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from codereval.errors import UserError
from codereval.families.codereval.official import load_official_results
from codereval.model import (
    Language,
    Level,
    Location,
    Outcome,
    Provenance,
    Sample,
    Task,
    Verdict,
)
from codereval.storage.store import (
    ResultStore,
    current_outcomes,
    export_official,
    load_run,
    official_rows,
)


def outcome_for(sample: Sample, verdict: Verdict, **fields: object) -> Outcome:
    return Outcome(
        task_id=sample.task_id,
        sample_index=sample.index,
        verdict=verdict,
        provenance=Provenance(code_hash=sample.code_hash()),
        **fields,  # type: ignore[arg-type]
    )


def task(task_id: str, language: Language, level: Level) -> Task:
    return Task(
        task_id=task_id,
        benchmark=f"codereval-{language.value}",
        language=language,
        name=f"fn_{task_id}",
        docstring="Does things.",
        reference="def f():\n    pass\n",
        level=level,
        location=Location(project="owner/repo", file_path="pkg/mod.py", class_name="C"),
    )


def test_recording_the_same_sample_twice_keeps_one_row(tmp_path: Path) -> None:
    sample = Sample(task_id="t", index=0, code="x = 1")
    with ResultStore.open(tmp_path) as store:
        store.record([outcome_for(sample, Verdict.FAILED)])
        store.record([outcome_for(sample, Verdict.FAILED)])
        assert store.count() == 1
        assert store.finished_keys() == {("t", 0, sample.code_hash())}
    # Reopened: the row survived the connection.
    with ResultStore.open(tmp_path) as store:
        assert [o.verdict for o in store.outcomes()] == [Verdict.FAILED]


def test_an_infra_error_is_not_finished_and_is_replaced_when_retried(tmp_path: Path) -> None:
    sample = Sample(task_id="t", index=0, code="x = 1")
    with ResultStore.open(tmp_path) as store:
        store.record([outcome_for(sample, Verdict.INFRA_ERROR)])
        # Our failure, not the model's: a resumed run tries the sample again.
        assert store.finished_keys() == set()
        store.record([outcome_for(sample, Verdict.PASSED)])
        assert store.finished_keys() == {("t", 0, sample.code_hash())}
        assert [o.verdict for o in store.outcomes()] == [Verdict.PASSED]


def test_reading_the_store_back_parses_only_what_this_store_did_not_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine exports the whole store every few seconds: the outcomes it wrote are not
    validated again, but the store stays the record: a row another process wrote, or one
    replaced since, is read as it now is."""
    first, second = (Sample(task_id="t", index=i, code="x = 1") for i in range(2))
    parsed: list[str] = []
    from_json = Outcome.from_json

    def counted(text: str) -> Outcome:
        parsed.append(text)
        return from_json(text)

    monkeypatch.setattr(Outcome, "from_json", staticmethod(counted))
    with ResultStore.open(tmp_path) as store, ResultStore.open(tmp_path) as other:
        mine = outcome_for(first, Verdict.FAILED)
        store.record([mine])
        assert store.outcomes() == [mine] and parsed == []
        other.record([outcome_for(second, Verdict.PASSED)])
        assert [o.verdict for o in store.outcomes()] == [Verdict.FAILED, Verdict.PASSED]
        assert len(parsed) == 1
        # The other process's outcome is parsed once, then remembered like ours.
        store.outcomes()
        assert len(parsed) == 1
        other.record([outcome_for(first, Verdict.TIMEOUT)])
        assert [o.verdict for o in store.outcomes()] == [Verdict.TIMEOUT, Verdict.PASSED]


def test_an_outcome_without_code_hash_cannot_be_stored(tmp_path: Path) -> None:
    with ResultStore.open(tmp_path) as store, pytest.raises(ValueError, match="code hash"):
        store.record([Outcome(task_id="t", verdict=Verdict.PASSED)])


def test_outcomes_of_changed_samples_are_not_current() -> None:
    old = Sample(task_id="t", index=0, code="x = 1")
    new = Sample(task_id="t", index=0, code="x = 2")
    other = Sample(task_id="t", index=1, code="x = 3")
    stored = [outcome_for(old, Verdict.PASSED), outcome_for(other, Verdict.FAILED)]
    assert current_outcomes([new, other], stored) == [stored[1]]


def test_a_corrupt_store_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "results.sqlite").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(UserError, match="not a usable results store"):
        ResultStore.open(tmp_path)


def _results(language: Language) -> tuple[list[Task], list[Sample], list[Outcome]]:
    levels = [Level.SELF_CONTAINED, Level.CLASS_RUNNABLE, Level.PROJECT_RUNNABLE]
    tasks = [task(f"{language.value}{i}", language, level) for i, level in enumerate(levels)]
    pattern = [
        Verdict.PASSED, Verdict.FAILED, Verdict.RUNTIME_ERROR, Verdict.COMPILE_ERROR,
        Verdict.TIMEOUT, Verdict.PASSED, Verdict.PASSED, Verdict.NO_CODE,
    ]  # fmt: skip
    samples, outcomes = [], []
    for t_index, t in enumerate(tasks):
        for i in range(4):
            code = None if i == 3 and t_index == 1 else f"def fn():\n    return {i}\n"
            sample = Sample(task_id=t.task_id, index=i, raw=code or "raw text", code=code)
            verdict = pattern[(t_index * 4 + i) % len(pattern)]
            codes = {Verdict.PASSED: 0, Verdict.FAILED: 1, Verdict.RUNTIME_ERROR: 1}
            exit_code = codes.get(verdict)
            samples.append(sample)
            outcomes.append(outcome_for(sample, verdict, exit_code=exit_code, detail="why"))
    return tasks, samples, outcomes


@pytest.mark.parametrize("language", [Language.PYTHON, Language.JAVA])
def test_official_export_round_trips_through_the_official_loader(
    tmp_path: Path, language: Language
) -> None:
    tasks, samples, outcomes = _results(language)
    path = export_official(tmp_path / "Raw_Input.jsonl_out.jsonl", tasks, samples, outcomes)
    assert path is not None
    loaded = load_official_results(path)
    assert loaded.language is language
    passes = Counter(o.task_id for o in outcomes if o.passed)
    assert Counter(o.task_id for o in loaded.outcomes if o.passed) == passes
    assert [t.task_id for t in loaded.tasks] == [t.task_id for t in tasks]
    assert [t.level for t in loaded.tasks] == [t.level for t in tasks]
    assert len(loaded.outcomes) == len(outcomes)


def test_official_rows_have_the_published_keys_and_types() -> None:
    tasks, samples, outcomes = _results(Language.PYTHON)
    row = official_rows(tasks, samples, outcomes)[0]
    assert list(row) == [
        "file_path", "project", "name", "docstring", "_id", "code", "level", "generate_results",
    ]  # fmt: skip
    assert row["code"] == [g["generate_code"] for g in row["generate_results"]]
    first = row["generate_results"][0]
    code = "def fn():\n    return 0\n"
    assert first == {"generate_code": code, "is_pass": True, "return_code": 0}

    tasks, samples, outcomes = _results(Language.JAVA)
    rows = official_rows(tasks, samples, outcomes)
    assert list(rows[0]) == [
        "generate_results", "docstring", "method_name", "codes", "code_level", "_id",
        "project_name",
    ]  # fmt: skip
    messages = [g["errormessage"] for r in rows for g in r["generate_results"]]
    # passed, failed(exit 1), runtime, compile, timeout, passed, passed, no_code ...
    assert messages[:8] == [
        "", "exec error!", "exec error!", "compile error", "exec error!", "", "", "compile error",
    ]  # fmt: skip
    # A sample with no extracted code is exported with its raw text, as the original kept it.
    assert rows[1]["codes"][3] == "raw text"


def test_load_run_reads_a_run_back_and_refuses_other_directories(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a run directory"):
        load_run(tmp_path)
    (tmp_path / "run.json").write_text(json.dumps({"status": "finished"}))
    tasks, samples, outcomes = _results(Language.PYTHON)
    (tmp_path / "tasks.jsonl").write_text("".join(t.to_json() + "\n" for t in tasks))
    (tmp_path / "samples.jsonl").write_text("".join(s.to_json() + "\n" for s in samples))
    with ResultStore.open(tmp_path) as store:
        store.record(outcomes)
    run = load_run(tmp_path)
    assert run.tasks == tasks and run.samples == samples
    assert sorted(run.outcomes, key=lambda o: (o.task_id, o.sample_index)) == sorted(
        outcomes, key=lambda o: (o.task_id, o.sample_index)
    )
    assert run.meta == {"status": "finished"}
