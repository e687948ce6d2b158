"""Evaluating part of a benchmark: --only-task / --only-level / --only-project and select()."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_engine_support import ADD, NEG, make_task, passing_samples, write_records, write_samples

import codereval
from codereval.cli.app import main
from codereval.errors import UserError
from codereval.evaluation.engine import Benchmark
from codereval.evaluation.selection import TaskFilter, read_task_ids, samples_of
from codereval.model import Level, Location, Task
from codereval.runners import RUNNERS

# Four tasks over two levels and two projects.
DOUBLE = make_task("double", name="double", reference="def double(x):\n    return 2 * x\n",
                   check="assert double(3) == 6", level=Level.CLASS_RUNNABLE)
HALF = make_task("half", name="half", reference="def half(x):\n    return x / 2\n",
                 check="assert half(3) == 1.5", level=Level.CLASS_RUNNABLE).model_copy(
    update={"location": Location(project="other/lib", file_path="lib/m.py", lineno=1,
                                 end_lineno=2)})
TASKS: list[Task] = [ADD, NEG, DOUBLE, HALF]


def _ids(tasks: list[Task]) -> list[str]:
    return [t.task_id for t in tasks]


def test_values_of_one_kind_are_alternatives_and_kinds_narrow_each_other() -> None:
    def pick(**kinds: tuple[str, ...]) -> list[str]:
        levels = tuple(Level(v) for v in kinds.pop("levels", ()))
        return _ids(TaskFilter(levels=levels, **kinds).apply(TASKS, benchmark="unit"))

    assert pick(task_ids=("neg", "add")) == ["add", "neg"]  # the benchmark's order
    assert pick(levels=("class_runnable",)) == ["double", "half"]
    assert pick(levels=("class_runnable", "self_contained")) == ["add", "neg", "double", "half"]
    assert pick(projects=("other/lib",)) == ["half"]
    assert pick(levels=("class_runnable",), projects=("unit/demo",)) == ["double"]
    assert pick(task_ids=("add", "double"), levels=("class_runnable",)) == ["double"]
    assert not TaskFilter()


@pytest.mark.parametrize(
    ("chosen", "message"),
    [
        (TaskFilter(task_ids=("add", "nope")), "--only-task: 1 task id(s) not in unit: nope"),
        (TaskFilter(levels=(Level.FILE_RUNNABLE,)),
         "--only-level file_runnable: no task of unit is at this level"),
        (TaskFilter(projects=("acme/x",)), "--only-project acme/x: no task of unit is in this"),
        (TaskFilter(task_ids=("add",), projects=("other/lib",)),
         "--only-task add --only-project other/lib select no task of unit together"),
    ],
)
def test_a_value_that_selects_nothing_is_an_error_naming_it(chosen: TaskFilter,
                                                             message: str) -> None:
    with pytest.raises(UserError) as caught:
        chosen.apply(TASKS, benchmark="unit")
    assert message in caught.value.one_line()


def test_the_hint_lists_what_the_benchmark_has() -> None:
    with pytest.raises(UserError) as caught:
        TaskFilter(levels=(Level.FILE_RUNNABLE,)).apply(TASKS, benchmark="unit")
    assert "class_runnable 2, self_contained 2" in caught.value.one_line()
    with pytest.raises(UserError) as caught:
        TaskFilter(projects=("acme/x",)).apply(TASKS, benchmark="unit")
    assert "other/lib, unit/demo" in caught.value.one_line()


def test_task_ids_come_as_given_comma_separated_or_from_a_file(tmp_path: Path) -> None:
    listed = tmp_path / "ids.txt"
    listed.write_text("# chosen by hand\nneg\n\nhalf  # the other project\nadd\n")
    assert read_task_ids(["add, double", f"@{listed}"]) == ("add", "double", "neg", "half")
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n\n")
    with pytest.raises(UserError, match="lists no task id"):
        read_task_ids([f"@{empty}"])
    with pytest.raises(UserError, match="cannot read"):
        read_task_ids([f"@{tmp_path / 'missing.txt'}"])


def test_select_keeps_the_name_records_the_filter_and_changes_the_version() -> None:
    whole = Benchmark(name="unit", tasks=TASKS)
    part = whole.select(levels=["class_runnable"])
    assert part.name == "unit" and _ids(part.tasks) == ["double", "half"]
    assert part.selection == ("--only-level class_runnable",)
    assert part.version != whole.version
    assert whole.select() is whole
    assert _ids(part.select(projects=["other/lib"]).tasks) == ["half"]
    with pytest.raises(UserError, match=r"unknown runnable level.*someday"):
        whole.select(levels=["someday"])


def test_samples_of_the_tasks_left_out_are_dropped_and_none_left_is_an_error() -> None:
    samples = [*passing_samples(ADD, 2), *passing_samples(HALF, 1)]
    assert [s.task_id for s in samples_of(samples, [HALF])] == ["half"]
    with pytest.raises(UserError, match="none of the 1 selected task"):
        samples_of(passing_samples(ADD, 2), [HALF])


# -- from the command line ------------------------------------------------------------------


@pytest.fixture
def snippet_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(RUNNERS, "python-project", "test_engine_support:SnippetRunner")


def _cli(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    try:
        main([str(a) for a in argv])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _inputs(tmp_path: Path) -> list[str]:
    records = write_records(tmp_path / "records.json", TASKS)
    samples = [s for t in TASKS for s in passing_samples(t, 2)]
    return ["evaluate", "--tasks", str(records),
            "--samples", str(write_samples(tmp_path / "samples.jsonl", samples)),
            "--sandbox", "none"]


@pytest.mark.usefixtures("snippet_registry")
def test_evaluate_runs_only_the_selected_tasks_and_the_run_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    code, out, err = _cli(capsys, *_inputs(tmp_path), "--only-level", "class_runnable",
                          "--only-task", "add,double,half", "--out", run)
    assert code == 0, err
    assert ("4 outcomes for 4 samples of 2 tasks (of 4 tasks, 8 samples: --only-task add "
            "--only-task double --only-task half --only-level class_runnable)") in out
    outcomes = [json.loads(line) for line in (run / "outcomes.jsonl").read_text().splitlines()]
    assert sorted({o["task_id"] for o in outcomes}) == ["double", "half"]
    tasks = [json.loads(line) for line in (run / "tasks.jsonl").read_text().splitlines()]
    assert [t["task_id"] for t in tasks] == ["double", "half"]
    meta = json.loads((run / "run.json").read_text())
    assert meta["benchmark"]["tasks"] == 2
    assert meta["benchmark"]["selection"][-1] == "--only-level class_runnable"
    official = [json.loads(line)
                for line in (run / "samples.jsonl_out.jsonl").read_text().splitlines()]
    assert sorted(row["_id"] for row in official) == ["double", "half"]

    code, out, _ = _cli(capsys, "score", run)
    assert code == 0
    assert "evaluated 2 task(s) of" in out and "its scores are over those tasks only" in out

    # The same command resumes; another selection is another run.
    code, out, err = _cli(capsys, *_inputs(tmp_path), "--only-level", "class_runnable",
                          "--only-task", "add,double,half", "--out", run)
    assert code == 0 and "0 run now, 4 already done" in out
    code, _, err = _cli(capsys, *_inputs(tmp_path), "--only-project", "other/lib",
                        "--out", run)
    assert code == 2 and err.strip().startswith("error:")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.usefixtures("snippet_registry")
@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--only-task", "add,nope"], "--only-task: 1 task id(s) not in"),
        (["--only-level", "file_runnable"], "--only-level file_runnable: no task of"),
        (["--only-project", "acme/x"], "--only-project acme/x: no task of"),
        (["--only-task", "add", "--only-level", "class_runnable"], "select no task of"),
        (["--only-level", "someday"], "Invalid value for '--only-level'"),
    ],
)
def test_a_selection_that_cannot_be_made_fails_in_one_line_before_writing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str],
        message: str) -> None:
    run = tmp_path / "run"
    code, _, err = _cli(capsys, *_inputs(tmp_path), *options, "--out", run)
    assert code == 2 and message in err
    assert len([line for line in err.strip().splitlines() if line.strip()]) <= 3
    assert not run.exists()


@pytest.mark.usefixtures("snippet_registry")
def test_samples_for_none_of_the_selected_tasks_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = write_records(tmp_path / "records.json", TASKS)
    samples = write_samples(tmp_path / "samples.jsonl", passing_samples(ADD, 2))
    run = tmp_path / "run"
    code, _, err = _cli(capsys, "evaluate", "--tasks", records, "--samples", samples,
                        "--sandbox", "none", "--only-task", "half", "--out", run)
    assert code == 2 and "the samples have none of the 1 selected task(s)" in err
    assert not run.exists()


@pytest.mark.usefixtures("snippet_registry")
@pytest.mark.filterwarnings("ignore:sandbox='none'")
def test_the_python_api_evaluates_a_selected_benchmark_with_all_the_samples(
        tmp_path: Path) -> None:
    bench = codereval.load_benchmark(write_records(tmp_path / "records.json", TASKS))
    samples = [s for t in TASKS for s in passing_samples(t, 1)]
    run = codereval.evaluate(bench.select(projects=["other/lib"]), samples,
                             run_dir=tmp_path / "run", sandbox="none")
    assert [o.task_id for o in run.outcomes] == ["half"]
    assert run.outcomes[0].verdict.value == "passed"
