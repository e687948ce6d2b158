"""ProgramRunner semantics in every language, in the real sandbox.

A failing assertion fails and a passing one passes whatever the program prints; exit(0) before
the test ends never passes (promise 3); compile, syntax and runtime errors and timeouts are told
apart for CodeGeeX's categories.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from codereval.evaluation.engine import default_env_root
from codereval.families.humaneval.dataset import load_humaneval
from codereval.families.humanevalx.dataset import load_humanevalx, load_humanevalx_translation
from codereval.model import Outcome, Sample, Task, Verdict
from codereval.runners.base import RunContext
from codereval.runners.program import ProgramRunner
from codereval.runners.program_source import build_program, go_imports
from codereval.sandbox import Limits, get_sandbox

P, F, R = Verdict.PASSED, Verdict.FAILED, Verdict.RUNTIME_ERROR
FAKE_MARKER = "CODEREVAL-DONE-" + "0" * 32

# task 0 (has_close_elements) continued from its prompt: (label, code, expected verdict)
CASES: dict[str, list[tuple[str, str, Verdict]]] = {
    "python": [
        ("noisy pass", "    import sys\n    print('noise'); print('noise', file=sys.stderr)\n"
         "    return any(abs(a - b) < threshold for i, a in enumerate(numbers)\n"
         "               for j, b in enumerate(numbers) if i != j)\n", P),
        ("wrong answer", "    print('all good')\n    return False\n", F),
        ("os._exit(0)", "    import os\n    os._exit(0)\n", R),
        ("sys.exit(0)", "    import sys\n    sys.exit(0)\n", R),
        ("forged marker", f"    import os\n    print({FAKE_MARKER!r}, flush=True)\n"
         "    os._exit(0)\n", R),
        ("syntax error", "    return (\n", Verdict.SYNTAX_ERROR),
        ("runtime error", "    return 1 // 0\n", R),
    ],
    "cpp": [
        ("noisy pass", '    printf("noise\\n"); fprintf(stderr, "noise\\n");\n'
         "    for (int i = 0; i < numbers.size(); i++)\n"
         "        for (int j = i + 1; j < numbers.size(); j++)\n"
         "            if (fabs(numbers[i] - numbers[j]) < threshold) return true;\n"
         "    return false;\n}\n", P),
        ("wrong answer", "    return false;\n}\n", F),
        ("exit(0)", "    exit(0);\n}\n", R),
        ("compile error", "    return undefined_name;\n}\n", Verdict.COMPILE_ERROR),
        ("runtime error", '    throw std::runtime_error("boom");\n}\n', R),
    ],
    "java": [
        ("noisy pass", '        System.out.println("noise"); System.err.println("noise");\n'
         "        for (int i = 0; i < numbers.size(); i++)\n"
         "            for (int j = i + 1; j < numbers.size(); j++)\n"
         "                if (Math.abs(numbers.get(i) - numbers.get(j)) < threshold) return true;\n"
         "        return false;\n    }\n}\n", P),
        ("wrong answer", "        return false;\n    }\n}\n", F),
        ("System.exit(0)", "        System.exit(0);\n        return false;\n    }\n}\n", R),
        ("compile error", "        return undefinedName;\n    }\n}\n", Verdict.COMPILE_ERROR),
        ("runtime error", '        throw new IllegalStateException("boom");\n    }\n}\n', R),
    ],
    "js": [
        ("noisy pass", "  console.log('noise'); console.error('noise')\n"
         "  return numbers.some((a, i) => numbers.some((b, j) => i != j && "
         "Math.abs(a - b) < threshold))\n}\n", P),
        # Node's own console.assert only prints; this fails because we made it throw.
        ("wrong answer", "  return false\n}\n", F),
        ("process.exit(0)", "  process.exit(0)\n}\n", R),
        ("syntax error", "  return (\n}\n", Verdict.SYNTAX_ERROR),
        ("runtime error", "  return null.x\n}\n", R),
    ],
    "go": [
        # Uses fmt and math without importing them: the runner adds the imports.
        ("noisy pass", '    fmt.Println("noise")\n'
         "    for i := range numbers {\n        for j := i + 1; j < len(numbers); j++ {\n"
         "            if math.Abs(numbers[i]-numbers[j]) < threshold {\n"
         "                return true\n            }\n        }\n    }\n    return false\n}\n",
         P),
        ("wrong answer", "    return false\n}\n", F),
        ("os.Exit(0)", "    os.Exit(0)\n    return false\n}\n", R),
        ("compile error", "    return undefinedName\n}\n", Verdict.COMPILE_ERROR),
        ("runtime error", "    var m map[string]int\n    m[\"a\"] = 1\n    return false\n}\n", R),
    ],
}


def make_ctx(work_root: Path, *, wall_time: float = 20.0) -> RunContext:
    return RunContext(sandbox=get_sandbox("auto"), limits=Limits(wall_time=wall_time),
                      work_root=work_root, env_root=default_env_root())


def run_all(runner: ProgramRunner, ctx: RunContext, pairs: list[tuple[Task, str]]) -> list[Outcome]:
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(
            lambda pair: runner.run(pair[0], Sample(task_id=pair[0].task_id, code=pair[1]), ctx),
            pairs))


@pytest.mark.slow
@pytest.mark.parametrize("language", list(CASES))
def test_verdicts_follow_the_test_not_the_output(
    language: str, hx: Path, runner: ProgramRunner, tmp_path: Path
) -> None:
    task = load_humanevalx(language, data_dir=hx)[0]
    cases = CASES[language]
    outcomes = run_all(runner, make_ctx(tmp_path), [(task, code) for _, code, _ in cases])
    got = {label: (o.verdict, o.detail[:300]) for (label, _, _), o in zip(cases, outcomes,
                                                                           strict=True)}
    for label, _, expected in cases:
        assert got[label][0] is expected, f"{language} {label}: {got[label]}"
    passed = outcomes[0]
    assert passed.stage.value == "done" and "noise" in passed.stdout_tail
    assert passed.isolation


def test_exit_zero_is_reported_as_an_unfinished_test(
    hx: Path, runner: ProgramRunner, tmp_path: Path
) -> None:
    # Ending the program early is abnormal termination in every language and runner: the test
    # never got to judge the answer.
    task = load_humanevalx("python", data_dir=hx)[0]
    [outcome] = run_all(runner, make_ctx(tmp_path), [(task, "    raise SystemExit(0)\n")])
    assert outcome.verdict is Verdict.RUNTIME_ERROR
    assert "no completion marker" in outcome.detail


def test_an_endless_loop_times_out(hx: Path, runner: ProgramRunner, tmp_path: Path) -> None:
    task = load_humanevalx("js", data_dir=hx)[0]
    [outcome] = run_all(runner, make_ctx(tmp_path, wall_time=1.5),
                        [(task, "  while (true) {}\n}\n")])
    assert outcome.verdict is Verdict.TIMEOUT


def test_no_code_is_unfinished(hx: Path, runner: ProgramRunner, tmp_path: Path) -> None:
    task = load_humanevalx("python", data_dir=hx)[0]
    outcome = runner.run(task, Sample(task_id=task.task_id, code=None), make_ctx(tmp_path))
    assert outcome.verdict is Verdict.NO_CODE


def test_translation_program_is_target_declaration_plus_generation_plus_test(
    hx: Path, runner: ProgramRunner, tmp_path: Path
) -> None:
    task = load_humanevalx_translation("python", "cpp", data_dir=hx)[2]
    program = build_program(task, "    return number - int(number);\n}\n")
    text = program.files[program.main]
    assert text.startswith(task.extra["declaration"] + "    return number - int(number);")
    assert "int codereval_test_main(" in text
    outcomes = run_all(runner, make_ctx(tmp_path), [(task, task.reference),
                                                    (task, "    return 0.5;\n}\n")])
    assert [o.verdict for o in outcomes] == [P, F]


def test_humaneval_runs_prompt_completion_and_check(runner: ProgramRunner, tmp_path: Path) -> None:
    task = load_humaneval(path=None)[2]
    outcomes = run_all(runner, make_ctx(tmp_path), [(task, task.reference),
                                                    (task, "    return 0.5\n")])
    assert [o.verdict for o in outcomes] == [P, F]


def test_go_imports_follow_use_not_a_name_list() -> None:
    code = (
        "// math.Abs in a comment does not count\n"
        'func F(s string) int {\n    x := "strconv.Itoa"\n    sort := 3\n'
        "    _ = sort.Foo\n    return len(strings.Fields(s)) + utf8.RuneLen('a') + len(x)\n}\n"
    )
    assert go_imports(code, already={"testing"}) == ["strings", "unicode/utf8"]
    assert go_imports("fmt.Println(1)", already={"fmt"}) == []
