"""Lining a rebuilt dataset up with a published one: pairs, one-sided tasks, differences."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ujb_rows import apr_row, dd_rows, fcg_row, write_jsonl, write_parquet

from codereval.benchmarks.lineup import LineUp, line_up, natural_key
from codereval.families.coderujb.dataset import load_coderujb


def _tasks(tmp_path: Path, name: str, rows: list[dict[str, Any]]) -> list[Any]:
    return load_coderujb(write_jsonl(tmp_path / f"{name}.jsonl", rows))


def _renamed(row: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**row, **changes}


def test_the_same_rows_pair_by_id_and_agree_on_every_aspect(tmp_path: Path) -> None:
    tasks = _tasks(tmp_path, "apr", [apr_row()]) + _tasks(tmp_path, "dd", dd_rows())
    line = line_up(tasks, list(tasks))
    assert [g.group for g in line.groups] == ["apr", "dd"]
    for group in line.groups:
        assert len(group.pairs) == group.ours == group.theirs
        assert all(p.same_id and not p.differs for p in group.pairs)
        assert not group.only_ours and not group.only_theirs


def test_a_row_with_another_id_pairs_by_bug_file_and_function_and_shows_what_differs(
    tmp_path: Path,
) -> None:
    ours = apr_row()
    # The same bug and method, built another way: another id, a prompt cut short (CoderUJB
    # truncates contexts to 2048 tokens), the method's lines one row lower.
    theirs = _renamed(
        ours,
        task_id="f" * 64,
        prompt_complete=ours["prompt_complete"][-200:],
        start=ours["start"] + 1,
        end=ours["end"] + 1,
    )
    line = line_up(_tasks(tmp_path, "ours", [ours]), _tasks(tmp_path, "theirs", [theirs]))
    (group,) = line.groups
    (pair,) = group.pairs
    assert not pair.same_id and pair.theirs == "f" * 64
    assert pair.differs == ("lines", "prompt")
    assert group.same("function") == 1 and group.same("prompt") == 0
    assert pair.task.startswith("Lang-") and "abbreviate" in pair.task


def test_bugs_only_one_side_holds_are_listed_by_bug_and_function(tmp_path: Path) -> None:
    ours = apr_row()
    theirs = _renamed(ours, task_id="e" * 64, bug_id="99")
    line = line_up(_tasks(tmp_path, "ours", [ours]), _tasks(tmp_path, "theirs", [theirs]))
    (group,) = line.groups
    assert not group.pairs
    assert group.only_ours == (f"Lang-{ours['bug_id']} StringUtils.java abbreviate",)
    assert group.only_theirs == ("Lang-99 StringUtils.java abbreviate",)


def test_fcg_pairs_across_bugs_because_the_latest_bug_may_differ(tmp_path: Path) -> None:
    ours = fcg_row()
    theirs = _renamed(ours, task_id="d" * 64, bug_id="61")
    ours_tasks = _tasks(tmp_path, "ours", [ours])
    theirs_tasks = _tasks(tmp_path, "theirs", [theirs])
    assert natural_key(ours_tasks[0]) == natural_key(theirs_tasks[0])
    (group,) = line_up(ours_tasks, theirs_tasks).groups
    assert len(group.pairs) == 1 and not group.pairs[0].differs


def test_only_shared_kinds_and_projects_are_compared(tmp_path: Path) -> None:
    ours = [apr_row(), fcg_row()]
    theirs = [apr_row(), _renamed(apr_row(), task_id="c" * 64, project="Math", bug_id="5")]
    line = line_up(
        _tasks(tmp_path, "ours", ours[:1]) + _tasks(tmp_path, "f", ours[1:]),
        _tasks(tmp_path, "theirs", theirs),
    )
    assert [g.group for g in line.groups] == ["apr"]
    assert line.not_compared == ("fcg",)
    assert line.projects_left_out == ("Math",)
    assert line.groups[0].only_theirs == ()


def test_a_line_up_round_trips_through_json(tmp_path: Path) -> None:
    rows = [apr_row()]
    line = line_up(_tasks(tmp_path, "a", rows), _tasks(tmp_path, "b", rows))
    assert LineUp.model_validate_json(line.to_json()) == line


def test_tasks_line_up_prints_the_table_and_json(tmp_path: Path, run_cli) -> None:
    ours = write_jsonl(tmp_path / "apr.jsonl", [apr_row()])
    published = write_parquet(
        tmp_path / "code_ujb_repair.parquet", [_renamed(apr_row(), task_id="b" * 64)]
    )
    shown = run_cli("tasks", ours, "--line-up", published)
    assert shown.exit_code == 0, shown
    assert "line-up: ours against theirs" in shown.stdout
    assert "1/1" in shown.stdout and "apr" in shown.stdout
    as_json = run_cli("tasks", ours, "--line-up", published, "--json")
    groups = json.loads(as_json.stdout)["groups"]
    assert groups[0]["pairs"][0]["same_id"] is False and groups[0]["pairs"][0]["differs"] == []


def test_tasks_line_up_bad_input_is_one_line(tmp_path: Path, run_cli) -> None:
    ours = write_jsonl(tmp_path / "apr.jsonl", [apr_row()])
    other = write_jsonl(tmp_path / "fcg.jsonl", [fcg_row()])
    nothing_shared = run_cli("tasks", ours, "--line-up", other)
    assert nothing_shared.exit_code != 0 and nothing_shared.stdout == ""
    assert nothing_shared.stderr.count("\n") == 1
    assert "share no kind of task" in nothing_shared.stderr
    both = run_cli("tasks", ours, "--line-up", ours, "--show", apr_row()["task_id"])
    assert both.exit_code != 0 and both.stdout == ""
    assert "--show and --line-up" in both.stderr
    missing = run_cli("tasks", ours, "--line-up", tmp_path / "nope.parquet")
    assert missing.exit_code != 0 and missing.stdout == "" and missing.stderr.count("\n") == 1
