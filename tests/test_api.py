"""The Python API: docs/api.md's example as written, and each function's behaviour and errors."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType

import pytest
from conftest import REPO
from test_engine_support import ADD, LOG_ENV, NEG, SnippetRunner, read_log, write_records

import codereval
from codereval import api
from codereval.errors import UserError
from codereval.generation.base import Backend, BackendConfig, Completion, SamplingOptions
from codereval.model import Outcome, Sample, Task
from codereval.prompting.prompts import Prompt
from codereval.runners import RUNNERS
from codereval.runners.base import RunContext

DOC = REPO / "docs" / "api.md"


def _doc_blocks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("doc_blocks", REPO / "scripts" / "doc_blocks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def snippets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python tasks go to the test suite's SnippetRunner (a fresh interpreter per sample)."""
    monkeypatch.setitem(RUNNERS, "python-project", "test_engine_support:SnippetRunner")


@pytest.fixture
def unit() -> api.Benchmark:
    return codereval.load_benchmark([ADD, NEG])


def _ok(task: Task) -> dict[str, str]:
    return {"task_id": task.task_id, "completion": task.reference}


# --- the documented example ----------------------------------------------------------------


@pytest.mark.slow
def test_the_documented_example_runs_as_written(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "humanevalx").symlink_to(shared_data / "humanevalx")
    blocks = _doc_blocks().python_blocks(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 5
    namespace: dict[str, object] = {"__name__": "__main__"}
    has_pandas = importlib.util.find_spec("pandas") is not None
    for number, code in enumerate(blocks, start=1):
        if "import pandas" in code and not has_pandas:
            continue  # the one step that needs pandas, when it is not installed
        exec(compile(code, f"{DOC}[python block {number}]", "exec"), namespace)
    mini_run = namespace["mini_run"]
    assert isinstance(mini_run, api.Run) and mini_run.counts["passed"] == 17
    if has_pandas:
        table = namespace["table"]
        assert list(table.columns[:4]) == ["label", "kind", "group", "tasks"]  # type: ignore[attr-defined]


# --- load_benchmark ------------------------------------------------------------------------


def test_load_benchmark_by_name_brings_the_builtin_parts() -> None:
    mini = codereval.load_benchmark("mini-python")
    assert mini.name == "mini-python" and len(mini) == 17
    assert mini.projects is not None and mini.projects.name == "projects.toml"
    assert mini.tests_dir is not None and mini.tests_dir.name == "official"
    assert mini.default_samples is not None and mini.default_samples.is_file()
    assert repr(mini) == f"Benchmark(name='mini-python', tasks=17, version='{mini.version}')"


def test_load_benchmark_from_records_by_str_or_path(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = shared_data / "codereval" / "records_python_sample.json"
    by_str = codereval.load_benchmark(str(records))
    by_path = codereval.load_benchmark(records)
    assert by_str.name == by_path.name == "codereval" and len(by_str) == 2
    assert by_str.version == by_path.version and by_str.source_sha256
    # A records file named like nothing else still counts as a file when it exists.
    plain = tmp_path / "records"
    plain.write_bytes(records.read_bytes())
    monkeypatch.chdir(tmp_path)
    assert len(codereval.load_benchmark("records")) == 2


def test_load_benchmark_from_task_objects(tmp_path: Path) -> None:
    bench = codereval.load_benchmark([ADD, NEG], tests_dir=tmp_path)
    assert bench.name == "unit" and [t.task_id for t in bench.tasks] == ["add", "neg"]
    assert bench.tests_dir == tmp_path and bench.default_samples is None


def test_load_benchmark_humanevalx_with_its_data(shared_data: Path) -> None:
    hx = codereval.load_benchmark("humanevalx-python", data_dir=shared_data / "humanevalx")
    assert len(hx) == 164 and hx.tasks[0].task_id == "Python/0"


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("mini-pyton",), {}, "unknown benchmark 'mini-pyton' (choose one of: codereval"),
        (("humanevalx-python",), {}, "needs its data file; pass --data-dir"),
        (("codereval",), {}, "benchmark 'codereval' needs the records file"),
        (("missing/records.json",), {}, "not found: missing/records.json"),
        ((), {}, "nothing to evaluate"),
        (("mini-python",), {"prepared": "somewhere"}, "--prepared names the tasks"),
        (("mini-python",), {"tests_dir": "no/such/dir"}, "tests directory not found: no/such"),
        (("mini-python",), {"projects": "no/projects.toml"}, "projects manifest not found"),
        (([],), {}, "no tasks given"),
        (([{"_id": "x"}],), {}, "got a list holding dict"),
    ],
)
def test_load_benchmark_errors_are_the_clis(
    args: tuple[object, ...], kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(UserError) as raised:
        codereval.load_benchmark(*args, **kwargs)  # type: ignore[arg-type]
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


# --- evaluate ------------------------------------------------------------------------------


@pytest.mark.usefixtures("snippets")
def test_evaluate_takes_samples_in_every_form(
    unit: api.Benchmark, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    wrong = "def neg(x):\n    return x\n"
    forms: dict[str, api.SamplesArg] = {
        "dicts": [_ok(ADD), _ok(ADD), {"task_id": "neg", "completion": wrong}],
        "official": [
            {"_id": "add", "generate_results": [ADD.reference, ADD.reference]},
            {"_id": "neg", "generate_results": [wrong]},
        ],
        "objects": [
            Sample(task_id="add", index=0, code=ADD.reference),
            Sample(task_id="add", index=1, code=ADD.reference),
            Sample(task_id="neg", index=0, code=wrong),
        ],
    }
    file = tmp_path / "samples.jsonl"
    file.write_text("".join(json.dumps(row) + "\n" for row in forms["dicts"]))  # type: ignore[union-attr]
    forms["file"] = str(file)
    for name, samples in forms.items():
        run = codereval.evaluate(unit, samples, run_dir=tmp_path / name, sandbox="rlimit")
        assert [(s.task_id, s.index) for s in run.samples] == [("add", 0), ("add", 1), ("neg", 0)]
        assert run.counts == {"passed": 2, "failed": 1}, name
        assert run.pass_at_1() == 0.5 and run.ran == 3 and run.skipped == 0
        assert run.isolation.startswith("rlimit") and run.meta["status"] == "finished"
        assert (tmp_path / name / "outcomes.jsonl").is_file()
        expected = "samples.jsonl_out.jsonl"
        assert run.official == tmp_path / name / expected
    # Quiet by default: nothing on stdout or stderr, not even the isolation note.
    out, err = capfd.readouterr()
    assert out == "" and err == ""


@pytest.mark.usefixtures("snippets")
def test_evaluate_resumes_and_reads_back(unit: api.Benchmark, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    first = codereval.evaluate(unit, [_ok(ADD)], run_dir=run_dir, sandbox="rlimit")
    again = codereval.evaluate(unit, [_ok(ADD), _ok(NEG)], run_dir=run_dir, sandbox="rlimit")
    assert first.ran == 1 and (again.ran, again.skipped) == (1, 1)
    loaded = codereval.Run.load(run_dir)
    assert loaded.outcomes == again.outcomes and loaded.isolation == again.isolation
    assert loaded.official == again.official
    assert "outcomes=2 (passed=2)" in repr(loaded)
    with pytest.raises(UserError, match="holds a run with different timeout"):
        codereval.evaluate(unit, [_ok(ADD)], run_dir=run_dir, sandbox="rlimit", timeout=3)
    redone = codereval.evaluate(unit, [_ok(ADD)], run_dir=run_dir, sandbox="rlimit", rerun=True,
                                timeout=3)
    assert redone.ran == 1 and len(redone.outcomes) == 1


@pytest.mark.usefixtures("snippets")
def test_progress_true_shows_a_bar_on_stderr(
    unit: api.Benchmark, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    codereval.evaluate(unit, [_ok(ADD)], run_dir=tmp_path / "run", sandbox="rlimit",
                       progress=True)
    out, err = capfd.readouterr()
    assert out == "" and "evaluating" in err


@pytest.mark.usefixtures("snippets")
def test_sandbox_none_warns_when_quiet(unit: api.Benchmark, tmp_path: Path) -> None:
    with pytest.warns(RuntimeWarning, match="runs unconfined"):
        run = codereval.evaluate(unit, [_ok(ADD)], run_dir=tmp_path / "run", sandbox="none")
    assert run.isolation == "none"


def test_evaluate_the_samples_a_builtin_benchmark_ships(tmp_path: Path) -> None:
    mini = codereval.load_benchmark("mini-python")
    items, official = api.resolve_samples(None, benchmark=mini)
    assert len(items) > 50 and official == "samples.jsonl_out.jsonl"


@pytest.mark.parametrize(
    ("samples", "kwargs", "message"),
    [
        ([{"task_id": "deadbeef", "completion": "x"}], {}, "not in the tasks: deadbeef"),
        ([_ok(ADD), {"task_id": "add", "index": 0, "completion": "y"}], {},
         "samples[1]: sample 0 of task add appears twice"),
        ([{"completion": "x"}], {}, "samples[0]: sample without 'task_id'"),
        (["def add(a, b): ..."], {}, "samples[0]: expected a dict or a Sample, got str"),
        ({"task_id": "add", "completion": "x"}, {}, "expected a list of samples"),
        ([], {}, "no samples given"),
        (None, {}, "no samples to evaluate: unit ships none"),
        ("no/such/samples.jsonl", {}, "samples file not found"),
        ([_ok(ADD)], {"jobs": 0}, "jobs must be at least 1"),
        ([_ok(ADD)], {"timeout": 0}, "timeout must be more than 0"),
        ([_ok(ADD)], {"memory_mb": 8}, "memory_mb must be at least 16"),
        ([_ok(ADD)], {"sandbox": "docker"}, "unknown sandbox 'docker'"),
    ],
)
@pytest.mark.usefixtures("snippets")
def test_evaluate_errors_write_nothing(
    unit: api.Benchmark,
    tmp_path: Path,
    samples: api.SamplesArg | None,
    kwargs: dict[str, object],
    message: str,
) -> None:
    run_dir = tmp_path / "run"
    with pytest.raises(UserError) as raised:
        options: dict[str, object] = {"sandbox": "rlimit", **kwargs}
        codereval.evaluate(unit, samples, run_dir=run_dir, **options)  # type: ignore[arg-type]
    assert message in str(raised.value)
    assert not run_dir.exists()


class InterruptingRunner(SnippetRunner):
    """Delivers SIGINT to this process (Ctrl-C) while running the third sample of a run."""

    armed = True

    def run(self, task: Task, sample: Sample, ctx: RunContext) -> Outcome:
        if InterruptingRunner.armed and sample.index == 2:
            InterruptingRunner.armed = False
            os.kill(os.getpid(), signal.SIGINT)
        return super().run(task, sample, ctx)


@pytest.fixture
def ctrl_c(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(RUNNERS, "python-project", "test_api:InterruptingRunner")
    InterruptingRunner.armed = True
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("ctrl_c")
def test_keyboard_interrupt_keeps_finished_outcomes_and_a_new_call_resumes(
    unit: api.Benchmark, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "runs.log"
    monkeypatch.setenv(LOG_ENV, str(log))
    code = "import time\ntime.sleep(0.2)\ndef add(a, b):\n    return a + b\n"
    samples = [Sample(task_id="add", index=i, code=code) for i in range(8)]
    run_dir = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt) as raised:
        codereval.evaluate(unit, samples, run_dir=run_dir, sandbox="rlimit", jobs=1)
    assert any("evaluate again with the same arguments to resume" in note
               for note in getattr(raised.value, "__notes__", []))
    kept = codereval.Run.load(run_dir)
    assert kept.meta["status"] == "interrupted"
    finished = {f"add#{o.sample_index}" for o in kept.outcomes}
    assert 1 <= len(finished) < 8
    before = len(read_log(log))

    resumed = codereval.evaluate(unit, samples, run_dir=run_dir, sandbox="rlimit", jobs=1)
    assert resumed.skipped == len(finished) and resumed.ran == 8 - len(finished)
    assert resumed.counts == {"passed": 8} and resumed.meta["status"] == "finished"
    rerun = set(read_log(log)[before:])
    assert not rerun & finished and rerun | finished == {f"add#{i}" for i in range(8)}


# --- score ---------------------------------------------------------------------------------


@pytest.fixture
def unit_run(unit: api.Benchmark, tmp_path: Path, snippets: None) -> api.Run:
    wrong = {"task_id": "neg", "completion": "def neg(x):\n    return x\n"}
    return codereval.evaluate(
        unit, [_ok(ADD), _ok(ADD), _ok(NEG), wrong], run_dir=tmp_path / "unit", sandbox="rlimit"
    )


def test_score_a_run_a_directory_and_the_cli_agree(unit_run: api.Run, run_cli) -> None:  # type: ignore[no-untyped-def]
    scores = codereval.score(unit_run, k=(1, 2))
    assert scores.pass_at == {1: 75.0, 2: 100.0}
    assert scores.label == "unit" and scores.ks == (1, 2)
    assert repr(scores) == "Scores(label='unit', tasks=2, pass@1=75.00, pass@2=100.00)"
    from_dir = codereval.score(str(unit_run.path), k=[2, 1])
    assert from_dir.to_dict() == scores.to_dict()
    result = run_cli("score", unit_run.path, "--k", "1,2", "--json")
    assert result.exit_code == 0, result
    assert json.loads(result.stdout) == [scores.to_dict()]
    assert json.loads(scores.to_json()) == scores.to_dict()


def test_score_rows_and_dataframe(unit_run: api.Run) -> None:
    scores = codereval.score(unit_run, k=1, ci=200)
    rows = scores.rows()
    assert rows[0]["kind"] == "all" and rows[0]["pass@1"] == 75.0
    assert {"pass@1 low", "pass@1 high"} <= set(rows[0])
    assert [r["group"] for r in rows if r["kind"] == "project"] == ["unit/demo"]
    pandas = pytest.importorskip("pandas")
    frame = scores.to_dataframe()
    assert isinstance(frame, pandas.DataFrame) and len(frame) == len(rows)
    assert frame.loc[0, "pass@1"] == 75.0


def test_to_dataframe_without_pandas_says_how_to_install_it(
    unit_run: api.Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"pip install 'codereval\[pandas\]'"):
        codereval.score(unit_run).to_dataframe()


def test_score_an_official_result_file_in_compat_mode(shared_data: Path) -> None:
    official = shared_data / "codereval/results/python/ChatGPT/Raw_Input.jsonl_out.jsonl"
    scores = codereval.score(official, compat=True)
    assert scores.board.convention == "compat"
    assert scores.pass_at == {1: 21.04, 5: 27.31, 10: 30.0}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, "k values must be at least 1"),
        ({"k": ["1"]}, "k takes whole numbers"),
        ({"k": ()}, "k values must be at least 1"),
        ({"ci": -1}, "ci is a number of bootstrap resamples"),
        ({"n": 0}, "n must be at least 1"),
        ({"exclude_flagged": "no/gold.jsonl"}, "not found: no/gold.jsonl"),
    ],
)
def test_score_errors(unit_run: api.Run, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UserError, match=message):
        codereval.score(unit_run, **kwargs)  # type: ignore[arg-type]


def test_score_input_errors(tmp_path: Path, shared_data: Path, unit_run: api.Run) -> None:
    with pytest.raises(UserError, match="not found"):
        codereval.score(tmp_path / "nothing")
    with pytest.raises(UserError, match="is not a run directory"):
        codereval.score(tmp_path)
    with pytest.raises(UserError, match="expected a Run"):
        codereval.score(42)  # type: ignore[arg-type]
    records = shared_data / "codereval" / "records_python_sample.json"
    with pytest.raises(UserError, match="results for 2 task"):
        codereval.score(unit_run, tasks=records)


def test_score_leaves_out_flagged_tasks(unit_run: api.Run) -> None:
    scores = codereval.score(unit_run, k=1, exclude_flagged=["neg"])
    assert scores.pass_at == {1: 100.0} and scores.board.excluded_tasks == ["neg"]


# --- compare -------------------------------------------------------------------------------


def test_compare_a_run_with_an_official_file(unit_run: api.Run, tmp_path: Path) -> None:
    assert unit_run.official is not None
    agreement = codereval.compare(unit_run, unit_run.official)
    assert isinstance(agreement, codereval.Agreement)
    assert (agreement.compared, agreement.agreement) == (4, 100.0)
    by_path = codereval.compare(str(unit_run.path), str(unit_run.official), label="mine")
    assert by_path.label == "mine" and by_path.both_pass == 3 and by_path.both_fail == 1
    with pytest.raises(UserError, match="gold file not found"):
        codereval.compare(unit_run, unit_run.official, gold=tmp_path / "gold.jsonl")
    with pytest.raises(UserError, match="official result file not found"):
        codereval.compare(unit_run, tmp_path / "missing_out.jsonl")
    with pytest.raises(UserError, match="run directory not found"):
        codereval.compare(tmp_path / "no-run", unit_run.official)


# --- generate ------------------------------------------------------------------------------


class Canned(Backend):
    """Answers every prompt with the task's reference; counts what it was asked for."""

    def __init__(self, answers: dict[str, str], *, fail: Sequence[str] = ()) -> None:
        super().__init__(BackendConfig(model="canned"))
        self.answers = answers
        self.fail = set(fail)
        self.asked: list[tuple[str, int]] = []
        self.closed = False

    def generate(
        self, prompts: Sequence[Prompt], options: SamplingOptions
    ) -> list[list[Completion]]:
        self.asked += [(p.task_id, options.n) for p in prompts]
        return [
            [Completion(error="HTTP 500")] * options.n
            if p.task_id in self.fail
            else [Completion(text=self.answers[p.task_id], finish_reason="stop")] * options.n
            for p in prompts
        ]

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def hx(shared_data: Path) -> api.Benchmark:
    return codereval.load_benchmark("humanevalx-python", data_dir=shared_data / "humanevalx")


def test_generate_with_a_backend_object_in_memory(hx: api.Benchmark) -> None:
    backend = Canned({t.task_id: t.reference for t in hx.tasks})
    samples = codereval.generate(hx, model="canned", backend=backend, n=2, limit=3)
    assert [(s.task_id, s.index) for s in samples] == [
        (f"Python/{t}", i) for t in range(3) for i in range(2)
    ]
    assert samples[0].code == hx.tasks[0].reference and samples[0].model == "canned"
    assert samples[0].prompt_variant == "raw/completion"
    assert not backend.closed  # the caller's backend stays open


def test_generate_into_a_file_resumes(hx: api.Benchmark, tmp_path: Path) -> None:
    answers = {t.task_id: t.reference for t in hx.tasks}
    out = tmp_path / "samples.jsonl"
    flaky = Canned(answers, fail=["Python/1"])
    with pytest.warns(RuntimeWarning, match="2 sample request"):
        first = codereval.generate(hx, model="canned", backend=flaky, n=2, limit=2, out=out)
    assert {s.task_id for s in first} == {"Python/0"}
    again = Canned(answers)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        second = codereval.generate(hx, model="canned", backend=again, n=2, limit=2, out=out)
    assert again.asked == [("Python/1", 2)]
    assert len(second) == 4


def test_generate_from_an_openai_compatible_server(hx: api.Benchmark) -> None:
    from test_generation_server import fake_openai

    with fake_openai(lambda payload: "    return 1\n") as server:
        samples = codereval.generate(hx, model="fake", base_url=server.base_url, n=1,
                                     task_ids=["Python/3"], max_retries=0)
    assert [(s.task_id, s.code) for s in samples] == [("Python/3", "    return 1\n")]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"model": ""}, "model is required"),
        ({"prompt": "fancy"}, "unknown prompt 'fancy' (choose one of: raw"),
        ({"style": "poem"}, "unknown style 'poem'"),
        ({"backend": "nope"}, "unknown backend 'nope'"),
        ({"task_ids": ["Python/999"]}, "unknown task id 'Python/999'"),
        ({"n": 0}, "n must be at least 1"),
        ({"limit": 0}, "limit must be at least 1"),
    ],
)
def test_generate_errors(hx: api.Benchmark, kwargs: dict[str, object], message: str) -> None:
    options: dict[str, object] = {"model": "m", **kwargs}
    with pytest.raises(UserError) as raised:
        codereval.generate(hx, **options)  # type: ignore[arg-type]
    assert message in str(raised.value)


# --- the package ---------------------------------------------------------------------------


def test_import_codereval_stays_light_and_exports_the_api() -> None:
    code = (
        "import sys, codereval\n"
        "assert 'codereval.evaluation.engine' not in sys.modules\n"
        "assert 'codereval.api' not in sys.modules\n"
        "from codereval import api\n"
        "assert codereval.evaluate is api.evaluate and codereval.Run is api.Run\n"
        "assert set(api.__all__) <= set(codereval.__all__) <= set(dir(codereval))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        codereval.nothing  # type: ignore[attr-defined] # noqa: B018


def test_the_api_records_options_like_the_cli(
    unit: api.Benchmark, tmp_path: Path, snippets: None, run_cli  # type: ignore[no-untyped-def]
) -> None:
    """The same inputs through the API and the CLI give the same run identity and verdicts."""
    records = write_records(tmp_path / "records.json", [ADD, NEG])
    samples = tmp_path / "samples.jsonl"
    samples.write_text(json.dumps(_ok(ADD)) + "\n" + json.dumps(_ok(NEG)) + "\n")
    by_cli = tmp_path / "cli"
    result = run_cli("evaluate", "--tasks", records, "--samples", samples, "--sandbox", "rlimit",
                     "--out", by_cli)
    assert result.exit_code == 0, result
    by_api = codereval.evaluate(codereval.load_benchmark(records), samples,
                                run_dir=tmp_path / "api", sandbox="rlimit")
    cli_meta = json.loads((by_cli / "run.json").read_text())
    assert by_api.meta["identity"] == cli_meta["identity"]
    assert by_api.meta["options"]["official_name"] == "samples.jsonl_out.jsonl"
    assert [o.verdict for o in codereval.Run.load(by_cli).outcomes] == [
        o.verdict for o in by_api.outcomes
    ]
