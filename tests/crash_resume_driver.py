"""An evaluation of mixed languages that tests/test_crash_resume.py kills and resumes.

    python tests/crash_resume_driver.py HUMANEVALX_DIR RUN_DIR [--timeout S]

HumanEval's Python programs and HumanEval-X's JavaScript ones, each task with its reference
and with a body that fails (it exits 3 before the test runs), and a few C++ references: the
same samples every call, so a call on the same RUN_DIR resumes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from codereval.api import evaluate, load_benchmark
from codereval.families.humaneval.dataset import load_humaneval
from codereval.families.humanevalx.dataset import load_humanevalx
from codereval.model import Task

PYTHON, JS, CPP = 90, 40, 6
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
    return tasks, rows


def main() -> None:
    hx, run_dir = Path(sys.argv[1]), Path(sys.argv[2])
    tasks, rows = mixed(hx)
    evaluate(load_benchmark(tasks), rows, run_dir=run_dir, jobs=2, timeout=30)


if __name__ == "__main__":
    main()
