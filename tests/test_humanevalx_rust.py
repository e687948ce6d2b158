"""HumanEval-X Rust: the program runner's verdicts, and every task's reference and broken variant.

Each sample is one rustc call (rand, regex and md5 built once with cargo) into a plain binary
whose main calls the test functions and then prints the marker; a panic in the test file is a
failed check, any other panic a runtime error.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from codereval.evaluation.engine import default_env_root
from codereval.families.humanevalx.dataset import load_humanevalx
from codereval.model import Outcome, Sample, Task, Verdict
from codereval.runners.base import RunContext
from codereval.runners.program import ProgramRunner
from codereval.runners.program_source import RUST_TEST_FILE, build_program, prologue_source

P, F, R = Verdict.PASSED, Verdict.FAILED, Verdict.RUNTIME_ERROR
FAKE_MARKER = "CODEREVAL-DONE-" + "0" * 32

# Task 0 (has_close_elements) continued from its declaration: (label, code, expected verdict).
CASES: list[tuple[str, str, Verdict]] = [
    ("noisy pass", '    println!("noise"); eprintln!("noise");\n'
     "    for i in 0..numbers.len() {\n        for j in i + 1..numbers.len() {\n"
     "            if (numbers[i] - numbers[j]).abs() < threshold { return true; }\n"
     "        }\n    }\n    false\n}\n", P),
    ("wrong answer", '    println!("all good");\n    false\n}\n', F),
    ("exit(0)", "    std::process::exit(0);\n}\n", R),
    ("forged marker", f'    println!("{FAKE_MARKER}");\n    std::process::exit(0);\n}}\n', R),
    ("panic in the code", '    panic!("assertion failed: fake");\n}\n', R),
    ("index out of bounds", "    numbers[99] > threshold\n}\n", R),
    ("compile error", "    undefined_name\n}\n", Verdict.COMPILE_ERROR),
    ("own main clashes", "    false\n}\nfn main() {}\n", Verdict.COMPILE_ERROR),
    # The crates every declaration imports are there.
    ("uses regex and md5", '    let _ = regex::Regex::new("a+").unwrap();\n'
     '    let _ = format!("{:x}", md5::compute(b"x"));\n    false\n}\n', F),
]

# Published tests that cannot be judged or check too little (docs/humanevalx.md).
# Rust/32's whole test module is commented out: no test runs, so nothing may pass there.
UNTESTED = {"Rust/32"}
# Rust/4 checks `f(x) - expected < 1e-6` without abs(): any small answer passes.
WEAK_TESTS = {"Rust/4"}
# A broken body returns Default::default(), except where the return type has no Default.
BROKEN_RETURN = {"Rust/137": "RtnType::Empty()"}


@pytest.fixture(scope="module")
def tasks(shared_data: Path) -> list[Task]:
    return load_humanevalx("rust", data_dir=shared_data / "humanevalx")


def make_ctx(work_root: Path, *, wall_time: float = 30.0) -> RunContext:
    from codereval.sandbox import Limits, get_sandbox

    return RunContext(sandbox=get_sandbox("auto"), limits=Limits(wall_time=wall_time),
                      work_root=work_root, env_root=default_env_root())


def run_all(runner: ProgramRunner, ctx: RunContext, pairs: list[tuple[Task, str]]) -> list[Outcome]:
    blocked = runner.prepare([task for task, _ in pairs], ctx)
    assert not blocked, next(iter(blocked.values()))
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(
            lambda pair: runner.run(pair[0], Sample(task_id=pair[0].task_id, code=pair[1]), ctx),
            pairs))


def after_entry_function(reference: str) -> str:
    """What the reference defines after the function it completes (helpers the tests call)."""
    depth = 1
    for index, char in enumerate(reference):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 0:
            return reference[index + 1:]
    return ""


def broken_body(task: Task) -> str:
    value = BROKEN_RETURN.get(task.task_id, "Default::default()")
    return f"    return {value};\n}}\n{after_entry_function(task.reference)}"


def prologue_head() -> str:
    return prologue_source("codereval_prologue.rs").partition("@LINE@")[0]


def test_program_is_declaration_code_then_the_tests_called_from_main(tasks: list[Task]) -> None:
    task = tasks[0]
    # The file's prompt is only the doc comment: the model also sees the declaration it continues.
    assert task.prompt.endswith(task.extra["declaration"]) and task.prompt.startswith("\n/*")
    program = build_program(task, "    false\n}\n")
    main = program.files[program.main]
    # Our prologue module first, then the declaration and the code; no marker anywhere.
    assert main.startswith(prologue_head())
    assert task.extra["declaration"] + "    false\n}\n" in main
    assert f'include!("{RUST_TEST_FILE}");' in main
    assert "tests::test_has_close_elements();" in main
    assert main.index("tests::test_has_close_elements();") < main.index(
        "    codereval_prologue::done();\n}\n")
    assert "CODEREVAL-DONE" not in main
    test = program.files[RUST_TEST_FILE]
    assert "#[test]" not in test and "pub(crate) fn test_has_close_elements(" in test


def test_tests_behind_comments_are_found_and_commented_out_ones_are_not(
    tasks: list[Task],
) -> None:
    by_id = {t.task_id: t for t in tasks}
    # Rust/50 has a comment between `#[test]` and `fn`.
    main = build_program(by_id["Rust/50"], "x").files["main.rs"]
    assert "tests::test_decode_encode();" in main
    main = build_program(by_id["Rust/32"], "x").files["main.rs"]
    assert "no test functions found" in main and "test_poly" not in main


@pytest.mark.slow
def test_verdicts_follow_the_tests_not_the_output(
    tasks: list[Task], runner: ProgramRunner, tmp_path: Path
) -> None:
    outcomes = run_all(runner, make_ctx(tmp_path), [(tasks[0], code) for _, code, _ in CASES])
    got = {label: (o.verdict, o.detail[:300]) for (label, _, _), o in zip(CASES, outcomes,
                                                                           strict=True)}
    for label, _, expected in CASES:
        assert got[label][0] is expected, f"{label}: {got[label]}"
    passed = outcomes[0]
    assert passed.stage.value == "done" and "noise" in passed.stdout_tail
    assert "no completion marker" in got["exit(0)"][1]
    assert "assertion `left == right` failed" in outcomes[1].stderr_tail


def test_an_endless_loop_times_out(tasks: list[Task], runner: ProgramRunner,
                                   tmp_path: Path) -> None:
    [outcome] = run_all(runner, make_ctx(tmp_path, wall_time=2.0),
                        [(tasks[0], "    loop {}\n}\n")])
    assert outcome.verdict is Verdict.TIMEOUT


@pytest.mark.slow
def test_every_canonical_solution_passes(
    tasks: list[Task], runner: ProgramRunner, tmp_path: Path
) -> None:
    outcomes = run_all(runner, make_ctx(tmp_path), [(t, t.reference) for t in tasks])
    failing = {t.task_id: o.detail[:200] for t, o in zip(tasks, outcomes, strict=True)
               if o.verdict is not Verdict.PASSED}
    assert set(failing) == UNTESTED, failing
    assert "no test functions found" in failing["Rust/32"]
    assert len(tasks) == 164


@pytest.mark.slow
def test_every_broken_variant_fails(
    tasks: list[Task], runner: ProgramRunner, tmp_path: Path
) -> None:
    outcomes = run_all(runner, make_ctx(tmp_path), [(t, broken_body(t)) for t in tasks])
    verdicts = {t.task_id: o for t, o in zip(tasks, outcomes, strict=True)}
    assert {tid for tid, o in verdicts.items() if o.verdict is Verdict.PASSED} == WEAK_TESTS
    # A constant return must compile and be caught by an assertion in the test file.
    not_failed = {tid: (o.verdict, o.detail[:200]) for tid, o in verdicts.items()
                  if o.verdict is not Verdict.FAILED and tid not in WEAK_TESTS | UNTESTED}
    assert not_failed == {}
