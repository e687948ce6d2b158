"""Gold validation: do a benchmark's tests accept its own reference, every time, and only it?

``codereval evaluate --reference --repeat R`` runs each task's reference R times and trivial
bodies: for Python ``pass`` and ``return None`` (signature and decorators kept), for Java a return
of the type's default value (CoderUJB: for a generated test, an empty test method). A task is
``broken`` when its reference does not pass, ``flaky`` when the verdict changes between repeats,
``weak`` when a trivial body passes (CoderEval issue #12), else ``ok``. A task without a test
(CoderEval-Java: the official tests were never published) is ``untested`` when its reference
compiles in place every time, and ``broken`` when it does not.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from rich.table import Table

from codereval.benchmarks import family_of
from codereval.errors import UserError
from codereval.model import Language, Outcome, Sample, Task, TestKind, Verdict, compiled_untested
from codereval.source import pyast
from codereval.source.inject import strip_first_indent
from codereval.storage.jsonl import atomic_write_jsonl

REFERENCE_VARIANT = "gold:reference"
# Probe name -> the statement that replaces the body (Python); Java gets "default-return".
PROBES: dict[str, str] = {"pass": "pass", "return-none": "return None"}
PROBE_BODIES = {**PROBES, "default-return": "return <default value>;"}
PROBE_PREFIX = "gold:probe:"


class GoldStatus(StrEnum):
    OK = "ok"
    BROKEN = "broken"
    FLAKY = "flaky"
    WEAK = "weak"
    # The reference compiles in place; there is no test to run it against.
    UNTESTED = "untested"


@dataclass(frozen=True, kw_only=True)
class GoldRow:
    task_id: str
    status: GoldStatus
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"task_id": self.task_id, "status": self.status.value, "detail": self.detail}


def trivial_body(code: str, statement: str, *, name: str = "") -> str | None:
    """``code`` with the body of function ``name`` (else the first function) replaced.

    Decorators, signature, and whatever surrounds the function are kept as written; the
    docstring goes with the body. None when the code does not parse or holds no function.
    """
    # Not textwrap.dedent: a method's docstring may have lines at column 0, which stop it.
    dedented, indent = strip_first_indent(code)
    try:
        tree = pyast.parse(dedented)
    except SyntaxError:
        return None
    functions = [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    if not functions:
        return None
    named = [f for f in functions if f.name == name]
    func = named[-1] if named else functions[0]
    lines = dedented.splitlines(keepends=True)
    first = func.body[0]
    start = min([d.lineno for d in func.decorator_list] + [func.lineno])
    body_line = lines[first.lineno - 1]
    # col_offset counts UTF-8 bytes.
    before_body = body_line.encode("utf-8")[: first.col_offset].decode("utf-8")
    head = "".join(lines[start - 1 : first.lineno - 1]) + before_body
    # A one-line def (`def f(x): return x`) has no body indentation to reuse.
    body_indent = " " * (func.col_offset + 4) if before_body.strip() else before_body
    end = func.end_lineno or first.lineno
    new_function = head.rstrip() + "\n" + body_indent + statement + "\n"
    result = "".join(lines[: start - 1]) + new_function + "".join(lines[end:])
    return textwrap.indent(result, indent) if indent else result


_JAVA_DEFAULTS = {
    "void": "",
    "boolean": "return false;",
    "char": "return '\\0';",
    "byte": "return 0;",
    "short": "return 0;",
    "int": "return 0;",
    "long": "return 0L;",
    "float": "return 0f;",
    "double": "return 0d;",
}


def java_trivial_body(code: str, *, name: str) -> str | None:
    """A Java method with its body replaced by the default value of its return type.

    Annotations, Javadoc and the signature are kept as written. None when the method header
    cannot be found.
    """
    match = re.search(rf"\b{re.escape(name)}\s*\(", code)
    if match is None:
        return None
    depth, close = 0, -1
    for index in range(match.end() - 1, len(code)):
        if code[index] == "(":
            depth += 1
        elif code[index] == ")":
            depth -= 1
            if depth == 0:
                close = index
                break
    open_brace = code.find("{", close) if close >= 0 else -1
    end_brace = code.rfind("}")
    if open_brace < 0 or end_brace <= open_brace:
        return None
    before_name = code[: match.start()].rstrip()
    return_type = "Object" if before_name.endswith(">") else (before_name.split() or [""])[-1]
    statement = _JAVA_DEFAULTS.get(return_type, "return null;")
    line_start = code.rfind("\n", 0, match.start()) + 1
    line = code[line_start:]
    indent = line[: len(line) - len(line.lstrip())]
    body = f"\n{indent}    {statement}\n" if statement else "\n"
    return code[: open_brace + 1] + body + indent + "}\n"


def _reference(task: Task) -> str:
    """What a right sample is: the reference code, or what the task's family says (CoderUJB's
    defect detection: the right answer)."""
    family = family_of(task)
    own = family.gold_reference(task) if family is not None else None
    return own if own is not None else task.reference


def _probes(task: Task) -> dict[str, str | None]:
    """Probe name -> trivial code for this task (None when it cannot be made)."""
    family = family_of(task)
    own = family.gold_probes(task) if family is not None else None
    if own is not None:
        return own
    if task.language is Language.JAVA:
        return {"default-return": java_trivial_body(task.reference, name=task.name)}
    if task.language is not Language.PYTHON:
        return {}
    if task.test is not None and task.test.kind is TestKind.PROGRAM:
        # HumanEval: the prompt holds the signature; the reference is the body alone.
        return {probe: f"    {statement}\n" for probe, statement in PROBES.items()}
    return {
        probe: trivial_body(task.reference, statement, name=task.name)
        for probe, statement in PROBES.items()
    }


def gold_samples(tasks: Sequence[Task], *, repeat: int) -> list[Sample]:
    """Samples for gold validation: the reference ``repeat`` times, then the trivial probes."""
    if repeat < 1:
        raise UserError(f"--repeat must be at least 1, got {repeat}")
    samples: list[Sample] = []
    for task in tasks:
        reference = _reference(task)
        if not reference.strip():
            continue
        for index in range(repeat):
            samples.append(
                Sample(
                    task_id=task.task_id,
                    index=index,
                    raw=reference,
                    code=reference,
                    model="reference",
                    prompt_variant=REFERENCE_VARIANT,
                )
            )
        index = repeat
        for probe, code in _probes(task).items():
            if code is None:
                continue
            samples.append(
                Sample(
                    task_id=task.task_id,
                    index=index,
                    raw=code,
                    code=code,
                    model="reference",
                    prompt_variant=PROBE_PREFIX + probe,
                )
            )
            index += 1
    return samples


def classify(
    tasks: Sequence[Task], samples: Sequence[Sample], outcomes: Sequence[Outcome]
) -> list[GoldRow]:
    """One row per task from the outcomes of a gold run."""
    variant = {(s.task_id, s.index): s.prompt_variant for s in samples}
    references: dict[str, list[Outcome]] = {}
    probes: dict[str, list[tuple[str, Outcome]]] = {}
    for outcome in sorted(outcomes, key=lambda o: o.sample_index):
        kind = variant.get((outcome.task_id, outcome.sample_index), "")
        if kind == REFERENCE_VARIANT:
            references.setdefault(outcome.task_id, []).append(outcome)
        elif kind.startswith(PROBE_PREFIX):
            probes.setdefault(outcome.task_id, []).append((kind[len(PROBE_PREFIX) :], outcome))
    rows = []
    for task in tasks:
        runs = references.get(task.task_id, [])
        rows.append(_classify_task(task, runs, probes.get(task.task_id, [])))
    return rows


def _classify_task(
    task: Task, runs: Sequence[Outcome], probes: Sequence[tuple[str, Outcome]]
) -> GoldRow:
    if not task.reference.strip():
        return GoldRow(task_id=task.task_id, status=GoldStatus.BROKEN, detail="no reference code")
    if not runs:
        return GoldRow(
            task_id=task.task_id, status=GoldStatus.BROKEN, detail="the reference did not run"
        )
    verdicts = Counter(o.verdict.value for o in runs)
    if len(verdicts) > 1:
        seen = ", ".join(f"{v} x{n}" for v, n in sorted(verdicts.items()))
        return GoldRow(
            task_id=task.task_id,
            status=GoldStatus.FLAKY,
            detail=f"reference verdicts over {len(runs)} runs: {seen}",
        )
    first = runs[0]
    if all(compiled_untested(o) for o in runs):
        return GoldRow(task_id=task.task_id, status=GoldStatus.UNTESTED,
                       detail=f"the reference compiles in place ({len(runs)}/{len(runs)}); "
                              "no test to run")
    if first.verdict is not Verdict.PASSED:
        last_err = first.stderr_tail.strip().splitlines()[-1:]
        reason = first.detail or (last_err[0] if last_err else "")
        return GoldRow(
            task_id=task.task_id,
            status=GoldStatus.BROKEN,
            detail=f"reference: {first.verdict.value}" + (f" ({reason[:200]})" if reason else ""),
        )
    passing = [name for name, o in probes if o.verdict is Verdict.PASSED]
    if passing:
        bodies = " and ".join(f"`{PROBE_BODIES.get(name, name)}`" for name in passing)
        return GoldRow(
            task_id=task.task_id,
            status=GoldStatus.WEAK,
            detail=f"the test accepts a body of {bodies}",
        )
    detail = f"reference passed {len(runs)}/{len(runs)}"
    if probes:
        detail += f"; trivial bodies rejected ({len(probes)})"
    return GoldRow(task_id=task.task_id, status=GoldStatus.OK, detail=detail)


def write_gold(path: Path, rows: Sequence[GoldRow]) -> Path:
    atomic_write_jsonl(path, (row.to_dict() for row in rows))
    return path


def gold_summary(rows: Sequence[GoldRow]) -> str:
    counts = Counter(row.status.value for row in rows)
    parts = [f"{counts.get(s.value, 0)} {s.value}" for s in GoldStatus
             if s is not GoldStatus.UNTESTED or counts.get(s.value)]
    return "gold validation: " + ", ".join(parts)


def gold_table(rows: Sequence[GoldRow]) -> Table | None:
    """The flagged tasks, one per row; None when nothing is flagged.

    Untested tasks are counted in the summary, not listed: on CoderEval-Java they are nearly all.
    """
    if all(row.status in (GoldStatus.OK, GoldStatus.UNTESTED) for row in rows):
        return None
    table = Table(title="flagged tasks")
    table.add_column("task")
    table.add_column("status")
    table.add_column("detail", overflow="fold")
    style = {GoldStatus.BROKEN: "red", GoldStatus.FLAKY: "yellow", GoldStatus.WEAK: "magenta"}
    for row in rows:
        if row.status in (GoldStatus.OK, GoldStatus.UNTESTED):
            continue
        table.add_row(row.task_id, f"[{style[row.status]}]{row.status.value}[/]", row.detail)
    return table


__all__ = [
    "PROBES",
    "GoldRow",
    "GoldStatus",
    "classify",
    "gold_samples",
    "gold_summary",
    "gold_table",
    "java_trivial_body",
    "trivial_body",
    "write_gold",
]
