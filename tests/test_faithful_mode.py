"""Official tests run as the original platform ran them with --compat, and stricter without.

The world (tests/codereval_world.py) has the shapes the real CoderEval tests have: a module test
reading a file through /home/travis/builds/repos, a standalone test that never calls its test
function, a standalone test importing a third-party package (six, from the standalone
environment).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from codereval_world import (
    ADD_CENTS,
    ADD_CENTS_REF,
    DOUBLE,
    IS_STRING,
    IS_STRING_REF,
    READ_RATE,
    READ_RATE_REF,
    make_world,
    official_samples,
)

from codereval.environments.python import default_root
from codereval.sandbox import get_sandbox

pytestmark = pytest.mark.slow

WRONG_DOUBLE = "def double(x):\n    return x + 1\n"
WRONG_ADD_CENTS = "def add_cents(a, b):\n    return a - b\n"


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from codereval.cli.app import main

    root = tmp_path_factory.mktemp("world")
    world = make_world(root)
    out = root / "bench"
    try:
        main(["prepare", "codereval-python", "--records", str(world.records), "--test-map",
              str(world.test_map), "--checkouts", str(world.checkouts), "--manifest",
              str(world.manifest), "--out", str(out)])
    except SystemExit as exc:
        assert exc.code in (0, None)
    return out


@pytest.fixture(autouse=True)
def _isolated_cache(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory)\
        -> None:
    monkeypatch.setenv("CODEREVAL_UV_CACHE", str(default_root() / "uv-cache"))
    monkeypatch.setenv("CODEREVAL_HOME", str(tmp_path_factory.getbasetemp() / "cache"))


def _evaluate(run_cli, prepared: Path, tmp_path: Path, *extra: str) -> dict:  # type: ignore[no-untyped-def, type-arg]
    samples = official_samples(tmp_path / "Raw_Input.jsonl", {
        ADD_CENTS: [ADD_CENTS_REF, WRONG_ADD_CENTS],
        READ_RATE: [READ_RATE_REF],
        DOUBLE: [WRONG_DOUBLE],
        IS_STRING: [IS_STRING_REF],
    })
    run = tmp_path / "run"
    result = run_cli("evaluate", "--prepared", prepared, "--samples", samples, "--jobs", "2",
                     "--timeout", "30", "--out", run, *extra)
    assert result.exit_code == 0, result
    rows = [json.loads(line) for line in (run / "outcomes.jsonl").read_text().splitlines()]
    return {(r["task_id"], r["sample_index"]): r for r in rows}


def _bwrap_or_skip() -> None:
    if not get_sandbox("auto").isolation.startswith("bwrap"):
        pytest.skip("the original machine's layout needs the bwrap sandbox")


def test_compat_runs_each_test_as_the_original_platform_did(
    prepared: Path, tmp_path: Path, run_cli  # type: ignore[no-untyped-def]
) -> None:
    _bwrap_or_skip()
    got = _evaluate(run_cli, prepared, tmp_path, "--compat")
    verdicts = {key: row["verdict"] for key, row in got.items()}
    assert verdicts[(ADD_CENTS, 0)] == "passed"
    assert verdicts[(ADD_CENTS, 1)] == "failed"
    # The test reads /home/travis/builds/repos/acme---ledger/data/rate.txt: there it is.
    assert verdicts[(READ_RATE, 0)] == "passed", got[(READ_RATE, 0)]
    # Never called on the platform, so even a wrong sample passed there.
    assert verdicts[(DOUBLE, 0)] == "passed"
    # six comes from the standalone environment.
    assert verdicts[(IS_STRING, 0)] == "passed", got[(IS_STRING, 0)]


def test_default_mode_is_stricter_and_says_where_it_differs(
    prepared: Path, tmp_path: Path, run_cli  # type: ignore[no-untyped-def]
) -> None:
    got = _evaluate(run_cli, prepared, tmp_path)
    assert got[(ADD_CENTS, 0)]["verdict"] == "passed"
    assert got[(IS_STRING, 0)]["verdict"] == "passed", got[(IS_STRING, 0)]
    # We call the test function the file forgot to call: the wrong sample fails, and says why.
    assert got[(DOUBLE, 0)]["verdict"] == "failed"
    assert "never called" in got[(DOUBLE, 0)]["detail"]
    assert "--compat" in got[(DOUBLE, 0)]["detail"]
    # No /home/travis outside compat: the test cannot find its file, and the detail says so.
    assert got[(READ_RATE, 0)]["verdict"] != "passed"
    assert "only --compat provides" in got[(READ_RATE, 0)]["detail"]


def test_gold_validation_flags_the_path_bound_task_only_in_default_mode(
    prepared: Path, tmp_path: Path, run_cli  # type: ignore[no-untyped-def]
) -> None:
    _bwrap_or_skip()
    for mode, extra in (("default", ()), ("compat", ("--compat",))):
        run = tmp_path / mode
        result = run_cli("evaluate", "--prepared", prepared, "--reference", "--repeat", "1",
                         "--jobs", "2", "--timeout", "30", "--out", run, *extra)
        assert result.exit_code == 0, result
        gold = {row["task_id"]: row["status"]
                for row in map(json.loads, (run / "gold.jsonl").read_text().splitlines())}
        assert gold[ADD_CENTS] == "ok"
        assert gold[READ_RATE] == ("broken" if mode == "default" else "ok")
        # A test that is never called passes every trivial body: weak, in compat.
        assert gold[DOUBLE] == ("ok" if mode == "default" else "weak")


def test_the_sample_cannot_write_the_shared_tree_in_compat(
    prepared: Path, tmp_path: Path, run_cli  # type: ignore[no-untyped-def]
) -> None:
    _bwrap_or_skip()
    hostile = (
        "def add_cents(a, b):\n"
        "    import os\n"
        "    for p in ('/home/travis/builds/repos/standalone/x.py',\n"
        "              '/home/travis/builds/repos/acme---ledger/ledger/money.py'):\n"
        "        try:\n"
        "            open(p, 'w').write('owned')\n"
        "        except OSError:\n"
        "            pass\n"
        "    return a + b\n"
    )
    samples = official_samples(tmp_path / "s.jsonl", {ADD_CENTS: [hostile]})
    before = (prepared / "repos" / "acme---ledger" / "ledger" / "money.py").read_text()
    result = run_cli("evaluate", "--prepared", prepared, "--samples", samples, "--compat",
                     "--out", tmp_path / "run")
    assert result.exit_code == 0, result
    assert not (prepared / "repos" / "standalone" / "x.py").exists()
    assert (prepared / "repos" / "acme---ledger" / "ledger" / "money.py").read_text() == before


def _official_out(tmp_path: Path) -> Path:
    """What the original platform recorded for _evaluate's samples (its verdicts, its codes)."""
    rows = {
        ADD_CENTS: [(ADD_CENTS_REF, True, 0), (WRONG_ADD_CENTS, False, 1)],
        READ_RATE: [(READ_RATE_REF, True, 0)],
        DOUBLE: [(WRONG_DOUBLE, True, 0)],
        IS_STRING: [(IS_STRING_REF, True, 0)],
    }
    path = tmp_path / "official" / "ChatGPT" / "Raw_Input.jsonl_out.jsonl"
    path.parent.mkdir(parents=True)
    lines = [
        json.dumps({
            "_id": task_id, "project": "acme/ledger", "file_path": "ledger/money.py",
            "name": "f", "docstring": "", "level": "file_runnable", "code": [],
            "generate_results": [{"generate_code": c, "is_pass": ok, "return_code": rc}
                                 for c, ok, rc in samples],
        })
        for task_id, samples in rows.items()
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_compare_agrees_fully_in_compat_and_explains_the_default_modes_differences(
    prepared: Path, tmp_path: Path, run_cli  # type: ignore[no-untyped-def]
) -> None:
    _bwrap_or_skip()
    official = _official_out(tmp_path)
    for mode in ("compat", "default"):
        (tmp_path / mode).mkdir()
    _evaluate(run_cli, prepared, tmp_path / "compat", "--compat")
    _evaluate(run_cli, prepared, tmp_path / "default")
    result = run_cli("compare", tmp_path / "compat" / "run", official,
                     tmp_path / "default" / "run", official, "--json")
    assert result.exit_code == 0, result
    compat, default = json.loads(result.stdout)
    assert (compat["compared"], compat["agreement"], compat["disagreements"]) == (5, 100.0, [])
    causes = {d["task_id"]: d["cause"] for d in default["disagreements"]}
    assert causes == {DOUBLE: "never-called test", READ_RATE: "path-bound test"}


def test_recheck_finds_a_sample_whose_verdict_is_a_coin_toss(
    prepared: Path, tmp_path: Path, run_cli  # type: ignore[no-untyped-def]
) -> None:
    coin = ("def add_cents(a, b):\n    import random\n"
            "    return a + b if random.random() < 0.5 else 0\n")
    samples = official_samples(tmp_path / "Raw_Input.jsonl", {ADD_CENTS: [coin, WRONG_ADD_CENTS]})
    run = tmp_path / "run"
    assert run_cli("evaluate", "--prepared", prepared, "--samples", samples, "--out", run,
                   "--timeout", "30").exit_code == 0
    got = json.loads((run / "outcomes.jsonl").read_text().splitlines()[0])["verdict"]
    # The official file says the opposite of what we got for the coin, and agrees on the other.
    official = tmp_path / "official.jsonl"
    official.write_text(json.dumps({
        "_id": ADD_CENTS, "project": "acme/ledger", "file_path": "ledger/money.py",
        "name": "add_cents", "docstring": "", "level": "file_runnable", "code": [],
        "generate_results": [
            {"generate_code": coin, "is_pass": got != "passed", "return_code": 0},
            {"generate_code": WRONG_ADD_CENTS, "is_pass": False, "return_code": 1},
        ]}) + "\n")
    plain = json.loads(run_cli("compare", run, official, "--json").stdout)[0]
    assert [d["cause"] for d in plain["disagreements"]] == ["unexplained (ours)"]
    # Twenty re-runs of a fair coin all landing on one side: one chance in a million.
    result = run_cli("compare", run, official, "--json", "--recheck", "20", "--jobs", "2")
    assert result.exit_code == 0, result
    [row] = json.loads(result.stdout)
    [disagreement] = row["disagreements"]
    assert disagreement["cause"] == "nondeterministic sample"
    assert "re-runs got the official verdict" in disagreement["evidence"]
    # The run itself is untouched by the re-runs.
    assert len((run / "outcomes.jsonl").read_text().splitlines()) == 2


def test_compat_gives_the_test_a_private_writable_home(
    prepared: Path, tmp_path: Path, run_cli  # type: ignore[no-untyped-def]
) -> None:
    _bwrap_or_skip()
    # Tools such as ansible create ~/.ansible/tmp on import: the original's /root was writable.
    writes_home = (
        "def add_cents(a, b):\n"
        "    import os\n"
        "    home = os.environ['HOME']\n"
        "    os.makedirs(os.path.join(home, '.tool', 'tmp'), exist_ok=True)\n"
        "    assert os.listdir(home) == ['.tool'], os.listdir(home)\n"
        "    return a + b\n"
    )
    samples = official_samples(tmp_path / "s.jsonl", {ADD_CENTS: [writes_home, writes_home]})
    result = run_cli("evaluate", "--prepared", prepared, "--samples", samples, "--compat",
                     "--out", tmp_path / "run")
    assert result.exit_code == 0, result
    rows = [json.loads(line) for line in (tmp_path / "run" / "outcomes.jsonl").read_text()
            .splitlines()]
    # Both pass: each sample's home starts empty, whatever the other wrote.
    assert [r["verdict"] for r in rows] == ["passed", "passed"], rows


def test_compat_gives_the_original_containers_host_name_and_hosts_file(
    prepared: Path, tmp_path: Path, run_cli  # type: ignore[no-untyped-def]
) -> None:
    _bwrap_or_skip()
    # The original ran in a Docker container: its name resolved to the bridge address, not
    # to a loopback one, so `gethostbyname(gethostname()) == "127.0.0.1"` was False there.
    probe = (
        "def add_cents(a, b):\n"
        "    import platform, socket\n"
        "    name = socket.gethostname()\n"
        "    assert name == platform.node() == 'codereval', name\n"
        "    assert socket.gethostbyname(name) == '172.17.0.2', socket.gethostbyname(name)\n"
        "    assert socket.gethostbyaddr(name)[0] == 'codereval'\n"
        "    return a + b\n"
    )
    samples = official_samples(tmp_path / "s.jsonl", {ADD_CENTS: [probe]})
    hosts_before = Path("/etc/hosts").read_text()
    for mode, extra in (("compat", ("--compat",)), ("default", ())):
        result = run_cli("evaluate", "--prepared", prepared, "--samples", samples,
                         "--out", tmp_path / mode, *extra)
        assert result.exit_code == 0, result
    verdicts = {mode: json.loads((tmp_path / mode / "outcomes.jsonl").read_text())["verdict"]
                for mode in ("compat", "default")}
    assert verdicts["compat"] == "passed", (tmp_path / "compat" / "outcomes.jsonl").read_text()
    # Without --compat the sample sees this machine's own name, whatever it resolves to.
    assert verdicts["default"] != "passed"
    assert Path("/etc/hosts").read_text() == hosts_before


def test_compat_runs_warm_with_the_fresh_paths_verdicts(
    prepared: Path, tmp_path: Path, run_cli  # type: ignore[no-untyped-def]
) -> None:
    """The official tree is mounted per project from a warm worker: the same verdicts as a
    fresh sandbox per sample, and each outcome says which executor ran it."""
    _bwrap_or_skip()
    runs = {}
    for executor in ("fresh", "warm"):
        (tmp_path / executor).mkdir()
        runs[executor] = _evaluate(run_cli, prepared, tmp_path / executor, "--compat",
                                   "--executor", executor)
    assert {k: r["verdict"] for k, r in runs["warm"].items()} == \
        {k: r["verdict"] for k, r in runs["fresh"].items()}
    for executor, rows in runs.items():
        assert {r["provenance"]["executor"] for r in rows.values()} == {executor}


def test_what_a_compat_sample_leaves_is_gone_for_the_next_on_the_same_worker(
    prepared: Path, tmp_path: Path, run_cli  # type: ignore[no-untyped-def]
) -> None:
    _bwrap_or_skip()
    # One job: every sample goes through the same warm worker, its tree mounted at the same
    # place. Each checks that nothing of the one before is there, then leaves its own marks:
    # in the project, in its home, beside the tree (a tmpfs on the host-less /home), in /tmp.
    marks = ("/home/travis/builds/repos/acme---ledger/left.txt",
             "/home/travis/builds/repos/acme---ledger/ledger/left.txt",
             "/root/left.txt", "/home/travis/left.txt", "/tmp/left.txt")
    leaves = (
        "def add_cents(a, b):\n"
        "    import os\n"
        f"    marks = {marks!r}\n"
        "    assert not [m for m in marks if os.path.exists(m)], marks\n"
        # Its files are links to the sealed base: replaced, not written through.
        "    money = '/home/travis/builds/repos/acme---ledger/ledger/money.py'\n"
        "    text = open(money).read()\n"
        "    os.unlink(money)\n"
        "    open(money, 'w').write(text + '\\nLEFT = 1\\n')\n"
        "    for m in marks:\n"
        "        open(m, 'w').write('x')\n"
        "    return a + b\n"
    )
    checks = (
        "def add_cents(a, b):\n"
        "    import os\n"
        f"    marks = {marks!r}\n"
        "    assert not [m for m in marks if os.path.exists(m)], marks\n"
        "    text = open('/home/travis/builds/repos/acme---ledger/ledger/money.py').read()\n"
        "    assert 'LEFT = 1' not in text\n"
        "    return a + b\n"
    )
    # Run with the test module, before the test imports ledger.rates: was it preloaded? (The
    # test changes its state and fails when a sample before it did.)
    seen = "import sys\nprint('preloaded:', 'ledger.rates' in sys.modules)\n"
    samples = official_samples(tmp_path / "s.jsonl", {ADD_CENTS: [
        leaves + seen, checks + seen, leaves + seen]})
    result = run_cli("evaluate", "--prepared", prepared, "--samples", samples, "--compat",
                     "--executor", "warm", "--jobs", "1", "--timeout", "30",
                     "--out", tmp_path / "run")
    assert result.exit_code == 0, result
    rows = [json.loads(line) for line in (tmp_path / "run" / "outcomes.jsonl").read_text()
            .splitlines()]
    assert [(r["verdict"], r["provenance"]["executor"]) for r in rows] == \
        [("passed", "warm")] * 3, rows
    # The project's own module, which no sample changes, came with the worker.
    assert all("preloaded: True" in r["stdout_tail"] for r in rows), rows
