"""An evaluation of mixed languages that tests/test_crash_resume.py kills and resumes.

    python tests/crash_resume_driver.py HUMANEVALX_DIR RUN_DIR [--timeout S]

HumanEval's Python programs and HumanEval-X's JavaScript ones, each task with its reference
and with a body that fails (it exits 3 before the test runs), a few C++ references, and the Java
project of mini-java (its shipped samples: references, wrong answers, build errors, hostile
ones, compiled and run in the project): the same samples every call, so a call on the same
RUN_DIR resumes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from codereval.api import evaluate, load_benchmark
from codereval.benchmarks import builtin_dir
from codereval.benchmarks.samples import load_samples
from codereval.families.humaneval.dataset import load_humaneval
from codereval.families.humanevalx.dataset import load_humanevalx
from codereval.model import Task

PYTHON, JS, CPP = 90, 40, 6
MINI_JAVA = builtin_dir("mini_java")
FAILS = {"python": "\nimport sys\nsys.exit(3)\n", "js": "\nprocess.exit(3);\n"}


def deterministic(task: Task) -> bool:
    """A test that draws unseeded random inputs (JavaScript/32's Math.random polynomials) may
    fail its own reference now and then: no run could be compared with another on it."""
    return "Math.random" not in (task.test.code if task.test else "")


def mixed(hx: Path) -> tuple[list[Task], list[dict[str, object]]]:
    chosen = {
        "python": load_humaneval(path=None)[:PYTHON],
        "js": [t for t in load_humanevalx("js", data_dir=hx) if deterministic(t)][:JS],
        "cpp": load_humanevalx("cpp", data_dir=hx)[:CPP],
    }
    tasks: list[Task] = []
    rows: list[dict[str, object]] = []
    for language, group in chosen.items():
        for task in group:
            tasks.append(task)
            rows.append({"task_id": task.task_id, "index": 0, "code": task.reference})
            if language in FAILS:
                rows.append({"task_id": task.task_id, "index": 1,
                             "code": task.reference + FAILS[language]})
    tasks += load_benchmark("mini-java").tasks
    # Not the one that loops until the limit: each resume would wait for it again.
    rows += [{"task_id": s.task_id, "index": s.index, "code": s.code}
             for s in load_samples(MINI_JAVA / "samples.jsonl") if s.model != "slow-loop"]
    return tasks, rows


def main() -> None:
    hx, run_dir = Path(sys.argv[1]), Path(sys.argv[2])
    tasks, rows = mixed(hx)
    benchmark = load_benchmark(tasks, projects=MINI_JAVA / "projects.toml")
    evaluate(benchmark, rows, run_dir=run_dir, jobs=2, timeout=30)


if __name__ == "__main__":
    main()
