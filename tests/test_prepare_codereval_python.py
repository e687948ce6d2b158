"""`codereval prepare codereval-python`: a benchmark directory from records, tests and projects."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from codereval_world import (
    ADD_CENTS,
    ADD_CENTS_REF,
    DOUBLE,
    DOUBLE_REF,
    IS_STRING,
    MONEY_PINNED,
    NO_TEST,
    READ_RATE,
    SLUG,
    TEST_MAP,
    make_world,
)

from codereval.environments.base import load_manifest
from codereval.families.codereval.records import load_records
from codereval.model import TestKind


def _prepare(run_cli, world, out: Path, *extra: str):  # type: ignore[no-untyped-def]
    return run_cli("prepare", "codereval-python", "--records", world.records,
                   "--manifest", world.manifest, "--out", out, *extra)


def test_a_test_map_and_local_checkouts_make_a_ready_benchmark(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    world = make_world(tmp_path)
    out = tmp_path / "bench"
    result = _prepare(run_cli, world, out, "--test-map", world.test_map,
                      "--checkouts", world.checkouts)
    assert result.exit_code == 0, result
    assert f"prepared 5 tasks in {out}: 4 ready, 1 with problems" in result.stdout
    assert "no official test" in result.stdout and NO_TEST in result.stdout

    # The project is the pinned commit, not the newest, and carries no .git; the checkout
    # was at the newest, and the output says which commit was taken instead.
    newest = subprocess.run(["git", "rev-parse", "HEAD"], cwd=world.checkouts / SLUG,
                            capture_output=True, text=True, check=True).stdout.strip()
    assert (f"note: acme/ledger: the checkout is at {newest[:12]}; prepared at the manifest's "
            f"pinned commit {world.pinned[:12]}") in result.stdout
    project = out / "repos" / SLUG
    assert (project / "ledger" / "money.py").read_text() == MONEY_PINNED
    assert not (project / ".git").exists()
    # Module tests sit beside the module, standalone ones under repos/standalone.
    module_test = project / "ledger" / "money_add_cents_passk_validte.py"
    assert module_test.read_text() == TEST_MAP[ADD_CENTS]
    assert (out / "repos" / "standalone" / "ledger-util-double.py").read_text() == TEST_MAP[DOUBLE]

    tasks = {t.task_id: t for t in load_records(out / "records.json")}
    assert tasks[ADD_CENTS].test is not None
    assert tasks[ADD_CENTS].test.kind is TestKind.CODEREVAL_MODULE
    assert tasks[ADD_CENTS].test.path == f"repos/{SLUG}/ledger/money_add_cents_passk_validte.py"
    assert tasks[IS_STRING].test is not None
    assert tasks[IS_STRING].test.kind is TestKind.CODEREVAL_STANDALONE
    assert tasks[NO_TEST].test is None

    checks = {row["task_id"]: row for row in map(json.loads,
                                                   (out / "checks.jsonl").read_text().splitlines())}
    assert checks[ADD_CENTS]["project_state"] == "checkout"
    assert checks[ADD_CENTS]["file"] == checks[ADD_CENTS]["function"] == "ok"
    assert checks[ADD_CENTS]["content"] == "identical"
    assert checks[NO_TEST]["problems"] == ["no official test"]
    assert checks[DOUBLE]["project_state"] == "n/a"

    specs = {s.name: s for s in load_manifest(out / "projects.toml")}
    assert Path(specs["acme/ledger"].resolved_source()) == project.resolve()
    assert specs["standalone"].requirements == ("six==1.16.0",)
    # What the environment needs comes along from the manifest.
    assert specs["acme/ledger"].exclude_newer == "2022-08-01T00:00:00Z"
    assert specs["acme/ledger"].install_env == (("LEDGER_BUILD", "1"),)
    meta = json.loads((out / "benchmark.json").read_text())
    assert meta["family"] == "codereval-python" and meta["ready_tasks"] == 4
    assert meta["projects"]["acme/ledger"]["commit"] == world.pinned
    assert meta["projects"]["acme/ledger"]["checkout_head"] == newest


def test_a_checkout_already_at_the_pinned_commit_gets_no_note(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    world = make_world(tmp_path)
    subprocess.run(["git", "checkout", "-q", world.pinned], cwd=world.checkouts / SLUG,
                   check=True)
    out = tmp_path / "bench"
    result = _prepare(run_cli, world, out, "--test-map", world.test_map,
                      "--checkouts", world.checkouts)
    assert result.exit_code == 0, result
    assert "the checkout is at" not in result.stdout
    assert (out / "repos" / SLUG / "ledger" / "money.py").read_text() == MONEY_PINNED


def test_files_a_damaged_checkout_cannot_produce_are_named(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    world = make_world(tmp_path)
    repo = world.checkouts / SLUG
    blob = subprocess.run(["git", "rev-parse", f"{world.pinned}:data/rate.txt"], cwd=repo,
                          capture_output=True, text=True, check=True).stdout.strip()
    # A partial mirror: the commit and its tree are there, one file's content is not.
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    out = tmp_path / "bench"
    result = _prepare(run_cli, world, out, "--test-map", world.test_map,
                      "--checkouts", world.checkouts)
    assert result.exit_code == 0, result
    assert (f"note: acme/ledger: 1 file(s) of {world.pinned[:12]} are missing, their objects "
            "absent from the checkout's repository: data/rate.txt") in " ".join(
                result.stdout.split())
    meta = json.loads((out / "benchmark.json").read_text())
    assert meta["projects"]["acme/ledger"]["missing_files"] == ["data/rate.txt"]
    assert (out / "repos" / SLUG / "ledger" / "money.py").read_text() == MONEY_PINNED


def test_relative_paths_work_from_any_directory(
    tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch  # type: ignore[no-untyped-def]
) -> None:
    world = make_world(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = _prepare(run_cli, world, Path("bench"), "--test-map", world.test_map.name,
                      "--checkouts", "checkouts")
    assert result.exit_code == 0, result
    project = tmp_path / "bench" / "repos" / SLUG
    assert (project / "ledger" / "money.py").read_text() == MONEY_PINNED
    assert not list(tmp_path.glob("checkouts/*.clone"))
    # What it was made from is named so that it can be found from anywhere.
    meta = json.loads((tmp_path / "bench" / "benchmark.json").read_text())
    assert meta["tests"]["path"] == str(world.test_map.resolve())
    assert Path(meta["records"]["path"]).is_absolute()
    assert Path(meta["records"]["path"]).is_file()


def test_a_project_that_cannot_be_had_offline_is_reported_not_fetched(
    tmp_path: Path, run_cli  # type: ignore[no-untyped-def]
) -> None:
    world = make_world(tmp_path)
    out = tmp_path / "bench"
    result = _prepare(run_cli, world, out, "--test-map", world.test_map)
    assert result.exit_code == 0, result
    assert "project missing" in result.stdout
    assert "pass --fetch to clone" in (out / "benchmark.json").read_text()
    # The tests are still placed; the standalone ones are ready without any project.
    assert "2 ready" in result.stdout


def test_a_content_drift_between_checkout_and_record_is_measured(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    world = make_world(tmp_path)
    records = json.loads(world.records.read_text())
    records["RECORDS"][0]["file_content"] = MONEY_PINNED.replace("a + b", "b + a") + "# x\n"
    world.records.write_text(json.dumps(records))
    out = tmp_path / "bench"
    assert _prepare(run_cli, world, out, "--test-map", world.test_map,
                    "--checkouts", world.checkouts).exit_code == 0
    row = json.loads((out / "checks.jsonl").read_text().splitlines()[0])
    assert row["content"].startswith("2 lines differ (similarity")


def test_an_extracted_repos_tree_is_taken_as_the_platform_had_it(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    world = make_world(tmp_path)
    first = tmp_path / "first"
    _prepare(run_cli, world, first, "--test-map", world.test_map, "--checkouts", world.checkouts)
    out = tmp_path / "bench"
    result = _prepare(run_cli, world, out, "--repos-tree", first / "repos")
    assert result.exit_code == 0, result
    checks = [json.loads(line) for line in (out / "checks.jsonl").read_text().splitlines()]
    assert {c["task_id"]: c["test"] for c in checks}[READ_RATE] == "tree"
    assert {c["task_id"]: c["project_state"] for c in checks}[READ_RATE] == "tree"
    assert (out / "repos" / SLUG / "data" / "rate.txt").read_text() == "1.5\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--test-map", "MAP", "--repos-tree", "TREE"), "give exactly one source of official"),
        ((), "give exactly one source of official tests"),
        (("--test-map", "nowhere.json"), "tests source not found: nowhere.json"),
        (("--test-map", "BAD"), "not a JSON test map"),
        (("--test-map", "LIST"), "a test map is one JSON object"),
        (("--test-map", "MAP", "--checkouts", "nowhere"), "--checkouts folder not found"),
        (("--test-map", "MAP", "--image-tag", "x"), "--image-tag goes with --image"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(
    tmp_path: Path, run_cli, args: tuple[str, ...], message: str  # type: ignore[no-untyped-def]
) -> None:
    world = make_world(tmp_path, standalone_requirements=())
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "list.json").write_text("[1, 2]")
    swap = {"MAP": str(world.test_map), "TREE": str(tmp_path), "BAD": str(tmp_path / "bad.json"),
            "LIST": str(tmp_path / "list.json")}
    out = tmp_path / "bench"
    result = _prepare(run_cli, world, out, *(swap.get(a, a) for a in args))
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".bench.")]


def test_an_existing_output_is_kept_unless_forced(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    world = make_world(tmp_path)
    out = tmp_path / "bench"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    result = _prepare(run_cli, world, out, "--test-map", world.test_map)
    assert result.exit_code == 2 and "exists" in result.stderr
    assert (out / "mine.txt").read_text() == "keep"
    assert _prepare(run_cli, world, out, "--test-map", world.test_map, "--force").exit_code == 0
    assert not (out / "mine.txt").exists()


def test_records_missing_a_required_key_are_refused(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    world = make_world(tmp_path)
    records = json.loads(world.records.read_text())
    del records["RECORDS"][1]["file_path"]
    world.records.write_text(json.dumps(records))
    result = _prepare(run_cli, world, tmp_path / "bench", "--test-map", world.test_map)
    assert result.exit_code == 2 and "missing required key 'file_path'" in result.stderr


def _layer(files: dict[str, bytes]) -> bytes:
    import io
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _image(path: Path, layers: list[bytes]) -> Path:
    """A `docker save` tarball (old form): <id>/layer.tar per layer and manifest.json."""
    import hashlib
    import io
    import tarfile

    names = [f"{hashlib.sha256(layer).hexdigest()}/layer.tar" for layer in layers]
    manifest = json.dumps([{"Config": "c.json", "RepoTags": ["codereval:latest"],
                            "Layers": names}]).encode()
    with tarfile.open(path, "w") as tar:
        for name, data in [*zip(names, layers, strict=True), ("c.json", b"{}"),
                           ("manifest.json", manifest)]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_the_official_image_gives_tests_and_projects_without_docker(
    tmp_path: Path, run_cli  # type: ignore[no-untyped-def]
) -> None:
    world = make_world(tmp_path)
    first = tmp_path / "first"
    _prepare(run_cli, world, first, "--test-map", world.test_map, "--checkouts", world.checkouts)
    root = "home/travis/builds/repos/"
    base = {root + str(p.relative_to(first / "repos")): p.read_bytes()
            for p in (first / "repos").rglob("*") if p.is_file()}
    stale = root + "standalone/ledger-util-double.py"
    # The upper layer deletes the double() test: the image no longer has it.
    upper = {root + "standalone/.wh.ledger-util-double.py": b"",
             root + "README.md": b"the platform's own notes\n"}
    image = _image(tmp_path / "codereval.tar", [_layer(base), _layer(upper)])
    out = tmp_path / "bench"
    result = _prepare(run_cli, world, out, "--image", image)
    assert result.exit_code == 0, result
    assert stale.rsplit("/", 1)[1] not in {p.name for p in (out / "repos" / "standalone").iterdir()}
    checks = {c["task_id"]: c for c in map(json.loads,
                                             (out / "checks.jsonl").read_text().splitlines())}
    assert checks[ADD_CENTS]["test"] == "tree" and checks[ADD_CENTS]["project_state"] == "tree"
    # Without its standalone file, double() falls back to the module rule and has no test.
    assert checks[DOUBLE]["problems"] == ["no official test", "file missing"]
    assert (out / "repos" / "README.md").is_file()


@pytest.mark.parametrize(("level", "text", "standalone"), [
    # The standalone collection's shape, whatever the level.
    ("plib_runnable", "import numpy\ndef f(x):\n    return x\ndef test_f():\n    assert f(1)\n",
     True),
    ("self_contained", "def f(x):\n    return x\ndef test_f():\n    assert f(1)\n", True),
    # A copy of the module ending in a check block is a project test, whatever the level.
    ("self_contained", "from pkg import g\ndef f(x):\n    return x\n"
     'if __name__ == "__main__":\n    isT = f(1) == 1\n', False),
    ("file_runnable", "import sys\nsys.path.append('/home/travis/builds/repos/acme---ledger')\n"
     "def f(x):\n    return x\ndef test_f():\n    assert f(1)\n", False),
])
def test_the_test_text_decides_standalone_or_project(level: str, text: str, standalone: bool) \
        -> None:
    from codereval.families.codereval.prepare.layout import is_standalone_test
    from codereval.model import Language, Location, Task

    task = Task.model_validate({
        "task_id": "6400000000000000000000ff", "benchmark": "codereval-python",
        "language": Language.PYTHON, "name": "f", "level": level,
        "location": Location(project="acme/ledger", file_path="ledger/util.py"),
    })
    assert is_standalone_test(task, text) is standalone


def test_an_official_result_file_as_records_takes_each_reference_from_its_official_test(
    tmp_path: Path, run_cli  # type: ignore[no-untyped-def]
) -> None:
    # A result file (Raw_Input.jsonl_out.jsonl) has the records' keys but its `code` is the
    # model's samples, a list: the reference is the function the official test holds.
    world = make_world(tmp_path)
    results = tmp_path / "Raw_Input.jsonl_out.jsonl"
    rows = [{"_id": r["_id"], "name": r["name"], "project": r["project"],
             "file_path": r["file_path"], "docstring": r["docstring"], "level": r["level"],
             "code": ["def wrong():\n    pass\n"] * 2,
             "generate_results": [{"generate_code": "def wrong():\n    pass\n",
                                   "is_pass": False}] * 2}
            for r in json.loads(world.records.read_text())["RECORDS"]]
    results.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "bench"
    result = run_cli("prepare", "codereval-python", "--records", results, "--manifest",
                     world.manifest, "--test-map", world.test_map, "--checkouts",
                     world.checkouts, "--out", out)
    assert result.exit_code == 0, result
    assert "4 ready, 1 with problems" in result.stdout
    tasks = {t.task_id: t for t in load_records(out / "records.json")}
    assert tasks[ADD_CENTS].reference == ADD_CENTS_REF
    assert tasks[DOUBLE].reference == DOUBLE_REF
    assert tasks[ADD_CENTS].signature == "def add_cents(a, b):"
    assert tasks[NO_TEST].reference == ""
    checks = {row["task_id"]: row for row in map(json.loads,
                                                   (out / "checks.jsonl").read_text().splitlines())}
    assert checks[ADD_CENTS]["reference"] == checks[DOUBLE]["reference"] == "official test"
    assert checks[NO_TEST]["problems"] == ["no official test", "no reference"]
    # From the official records, the record's own reference stays.
    plain = tmp_path / "plain"
    assert _prepare(run_cli, world, plain, "--test-map", world.test_map,
                    "--checkouts", world.checkouts).exit_code == 0
    checks = [json.loads(line) for line in (plain / "checks.jsonl").read_text().splitlines()]
    assert {row["reference"] for row in checks} == {"record"}
