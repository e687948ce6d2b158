"""Gold validation: broken, flaky and weak tasks are found; trivial bodies keep their signature."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from test_engine_support import ADD, SnippetRunner, make_task, write_records, write_samples

from codereval import model
from codereval.cli.app import main
from codereval.errors import UserError
from codereval.evaluation.engine import Benchmark, EvalOptions, evaluate
from codereval.evaluation.gold import (
    GoldStatus,
    classify,
    gold_samples,
    java_trivial_body,
    trivial_body,
)
from codereval.model import Language
from codereval.runners import RUNNERS
from codereval.sandbox import get_sandbox

BROKEN = make_task("broken", reference="def f():\n    return 2\n", check="assert f() == 1")
WEAK = make_task("weak", reference="def f(x):\n    return x * 2\n", check="f(3)")


def test_trivial_body_keeps_decorators_signature_and_surroundings() -> None:
    code = (
        "import functools\n"
        "@functools.lru_cache(maxsize=None)\n"
        "def fib(n: int,\n"
        "        memo=None) -> int:  # a comment\n"
        '    """Docstring."""\n'
        "    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
    )
    probe = trivial_body(code, "return None", name="fib")
    assert probe == (
        "import functools\n"
        "@functools.lru_cache(maxsize=None)\n"
        "def fib(n: int,\n"
        "        memo=None) -> int:  # a comment\n"
        "    return None\n"
    )


def test_trivial_body_of_an_indented_method_stays_indented_and_parses() -> None:
    method = "    @property\n    async def size(self):\n\tif self.x:\n\t\treturn 1\n\treturn 0\n"
    probe = trivial_body(method.replace("\t", "        "), "pass", name="size")
    assert probe == "    @property\n    async def size(self):\n        pass\n"
    one_line = trivial_body("def f(x): return x", "pass")
    assert one_line == "def f(x):\n    pass\n"
    ast.parse(one_line)


def test_trivial_body_of_a_method_whose_docstring_has_a_line_at_column_0() -> None:
    method = (
        '    def size(self):\n        """How big.\n.\n        """\n        return len(self.x)\n'
    )
    assert trivial_body(method, "pass", name="size") == "    def size(self):\n        pass\n"


def test_trivial_body_gives_none_for_code_without_a_function() -> None:
    assert trivial_body("x = (", "pass") is None
    assert trivial_body("x = 1\n", "pass") is None


def test_java_trivial_body_returns_the_default_of_the_return_type() -> None:
    method = (
        "    /** Counts. */\n"
        "    @Override\n"
        "    public static Map<String, Integer> count(String text) {\n"
        "        return compute(text); // }\n"
        "    }\n"
    )
    assert java_trivial_body(method, name="count") == (
        "    /** Counts. */\n"
        "    @Override\n"
        "    public static Map<String, Integer> count(String text) {\n"
        "        return null;\n"
        "    }\n"
    )
    assert java_trivial_body("public int size() {\n  return n;\n}", name="size") == (
        "public int size() {\n    return 0;\n}\n"
    )
    void = java_trivial_body("void run(int[] a) throws IOException { go(a); }", name="run")
    assert void == "void run(int[] a) throws IOException {\n}\n"
    assert java_trivial_body("int g() { return 1; }", name="missing") is None


def test_gold_samples_repeat_the_reference_and_add_trivial_probes() -> None:
    java = make_task("j", reference="int f() { return 1; }", check="", language=Language.JAVA)
    samples = gold_samples([ADD, java], repeat=3)
    add = [s for s in samples if s.task_id == "add"]
    assert [s.code for s in add[:3]] == [ADD.reference] * 3
    assert [s.prompt_variant for s in add[3:]] == ["gold:probe:pass", "gold:probe:return-none"]
    assert [s.index for s in add] == [0, 1, 2, 3, 4]
    java_samples = [s for s in samples if s.task_id == "j"]
    assert [s.index for s in java_samples] == [0, 1, 2, 3]
    assert java_samples[3].code == "int f() {\n    return 0;\n}\n"
    with pytest.raises(UserError, match="--repeat"):
        gold_samples([ADD], repeat=0)


def test_humaneval_probes_are_bodies_because_the_prompt_holds_the_signature() -> None:
    task = make_task("he", reference="    return sorted(xs)\n", check="")
    program = model.TestSpec(kind=model.TestKind.PROGRAM, code="check()")
    task = task.model_copy(update={"test": program})
    probes = [s.code for s in gold_samples([task], repeat=1)[1:]]
    assert probes == ["    pass\n", "    return None\n"]


def test_gold_run_flags_broken_flaky_and_weak_tasks(tmp_path: Path) -> None:
    flaky = make_task(
        "flaky",
        reference="def f():\n    return 1\n",
        check="import os\nassert int(os.environ['RUN_COUNT']) % 2 == 0\nassert f() == 1",
        extra={"counter": str(tmp_path / "counter")},
    )
    tasks = [ADD, BROKEN, flaky, WEAK]
    samples = gold_samples(tasks, repeat=2)
    report = evaluate(
        benchmark=Benchmark(name="unit", tasks=tasks),
        samples=samples,
        run_dir=tmp_path / "gold",
        # No sample here needs the limit; a short one made a loaded CI machine's slow start
        # of the reference look like a flaky task.
        options=EvalOptions(jobs=1, timeout=60, sandbox="none", mode="reference x2",
                            progress=False),
        runners={"python-project": SnippetRunner()},
        sandbox=get_sandbox("none"),
    )
    rows = {row.task_id: row for row in classify(tasks, samples, report.outcomes)}
    details = {k: r.detail for k, r in rows.items()}
    assert {k: r.status for k, r in rows.items()} == {
        "add": GoldStatus.OK,
        "broken": GoldStatus.BROKEN,
        "flaky": GoldStatus.FLAKY,
        "weak": GoldStatus.WEAK,
    }, details
    assert "failed" in rows["broken"].detail
    assert "passed x1" in rows["flaky"].detail and "failed x1" in rows["flaky"].detail
    assert "`pass`" in rows["weak"].detail and "`return None`" in rows["weak"].detail


def test_evaluate_reference_writes_gold_jsonl_and_score_excludes_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(RUNNERS, "python-project", "test_engine_support:SnippetRunner")
    records = write_records(tmp_path / "records.json", [ADD, BROKEN, WEAK])
    gold_dir = tmp_path / "gold"
    base = ["evaluate", "--tasks", str(records), "--sandbox", "none", "--jobs", "2"]
    main([*base, "--reference", "--repeat", "2", "--out", str(gold_dir)])
    out, _ = capsys.readouterr()
    rows = [json.loads(line) for line in (gold_dir / "gold.jsonl").read_text().splitlines()]
    assert {r["task_id"]: r["status"] for r in rows} == {
        "add": "ok", "broken": "broken", "weak": "weak",
    }  # fmt: skip
    assert set(rows[0]) == {"task_id", "status", "detail"}
    assert "gold validation: 1 ok, 1 broken, 0 flaky, 1 weak" in out
    assert "flagged tasks" in out

    # A model run scored with the flagged tasks left out counts only the good task.
    samples = write_samples(
        tmp_path / "samples.jsonl",
        [s for s in gold_samples([ADD, BROKEN, WEAK], repeat=1) if s.index == 0],
    )
    model_dir = tmp_path / "model"
    main([*base, "--samples", str(samples), "--out", str(model_dir)])
    out, _ = capsys.readouterr()
    assert "pass@1: 66.67%" in out  # add and weak pass, broken fails
    main(["score", str(model_dir), "--exclude-flagged", str(gold_dir / "gold.jsonl"), "--json"])
    board = json.loads(capsys.readouterr().out)[0]
    assert board["overall"]["tasks"] == 1
    assert board["overall"]["pass_at"]["1"] == 100.0
