"""The official CoderEval release's other files: prompt files and result files.

Result files come in two variants:

- Python: per task ``_id, project, file_path, name, docstring, level, code``, and per sample
  ``generate_results[*] = {generate_code, is_pass, return_code}``.
- Java: per task ``_id, project_name, method_name, docstring, code_level, codes``, and per sample
  ``{generate_code, errormessage, error_detail_message, is_pass}`` with ``errormessage`` one of
  ``""``, ``"compile error"``, ``"exec error!"``.

Each sample becomes an Outcome with the most precise verdict the file allows (isolation
``"imported"``, stage ``unknown``), so imported and our own results are scored the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codereval.errors import UserError
from codereval.families.codereval.records import parse_level
from codereval.model import Language, Location, Outcome, Sample, Stage, Task, Verdict
from codereval.storage.jsonl import iter_jsonl, require_file


@dataclass(frozen=True, kw_only=True)
class PromptEntry:
    question_id: str
    input: str
    signature: str
    docstring: str


def load_prompt_file(path: Path) -> list[PromptEntry]:
    """An official prompt file: ``{question_id, input, signature, docstring}`` per line."""
    entries = []
    for lineno, row in iter_jsonl(require_file(path, what="prompt file")):
        missing = [k for k in ("question_id", "input", "signature", "docstring") if k not in row]
        if missing:
            raise UserError(f"{path}:{lineno}: prompt entry without {', '.join(missing)}")
        entries.append(
            PromptEntry(
                question_id=str(row["question_id"]),
                input=str(row["input"]),
                signature=str(row["signature"]),
                docstring=str(row["docstring"]),
            )
        )
    if not entries:
        raise UserError(f"{path}: the file is empty", hint="expected one prompt entry per line")
    return entries


@dataclass(frozen=True, kw_only=True)
class OfficialResults:
    """An official result file read into our vocabulary."""

    path: Path
    language: Language
    tasks: list[Task]
    samples: list[Sample]
    outcomes: list[Outcome]


def is_official_results(row: dict[str, Any]) -> bool:
    results = row.get("generate_results")
    return (
        isinstance(results, list)
        and bool(results)
        and isinstance(results[0], dict)
        and "is_pass" in results[0]
    )


def load_official_results(path: Path) -> OfficialResults:
    require_file(path, what="results file")
    tasks: list[Task] = []
    samples: list[Sample] = []
    outcomes: list[Outcome] = []
    language: Language | None = None
    seen: set[str] = set()
    for lineno, row in iter_jsonl(path):
        where = f"{path}:{lineno}"
        task_id = str(row.get("_id", "")).strip()
        if not task_id:
            raise UserError(f"{where}: result line without '_id'")
        if task_id in seen:
            raise UserError(f"{where}: task {task_id} appears twice")
        seen.add(task_id)
        results = row.get("generate_results")
        if not isinstance(results, list):
            raise UserError(f"{where} ({task_id}): missing 'generate_results' list")
        row_language = Language.JAVA if "code_level" in row else Language.PYTHON
        if language is None:
            language = row_language
        elif language is not row_language:
            raise UserError(f"{where}: mixes Python and Java result lines")
        tasks.append(_task(row, task_id=task_id, language=row_language, where=where))
        for index, item in enumerate(results):
            if not isinstance(item, dict) or "is_pass" not in item:
                raise UserError(f"{where} ({task_id}): generate_results[{index}] has no 'is_pass'")
            code = str(item.get("generate_code", ""))
            samples.append(Sample(task_id=task_id, index=index, raw=code, code=code or None))
            outcomes.append(_outcome(item, task_id=task_id, index=index, language=row_language))
    if language is None:
        raise UserError(f"{path}: the file is empty", hint="expected one result line per task")
    return OfficialResults(
        path=path, language=language, tasks=tasks, samples=samples, outcomes=outcomes
    )


def _truthy(value: Any) -> bool:
    return value is True or str(value).strip().lower() == "true"


def _task(row: dict[str, Any], *, task_id: str, language: Language, where: str) -> Task:
    level_key = "code_level" if language is Language.JAVA else "level"
    level = parse_level(str(row.get(level_key, "")), label=f"{where} ({task_id})")
    name = str(row.get("method_name", row.get("name", "")))
    project = str(row.get("project_name", row.get("project", "")))
    return Task(
        task_id=task_id,
        benchmark="codereval-java" if language is Language.JAVA else "codereval-python",
        language=language,
        name=name,
        docstring=str(row.get("docstring", "")),
        level=level,
        location=Location(project=project, file_path=str(row.get("file_path", ""))),
    )


def _outcome(item: dict[str, Any], *, task_id: str, index: int, language: Language) -> Outcome:
    passed = _truthy(item.get("is_pass"))
    exit_code: int | None = None
    detail = ""
    if language is Language.PYTHON:
        raw_code = item.get("return_code")
        try:
            exit_code = int(raw_code) if raw_code is not None and str(raw_code) != "" else None
        except ValueError:
            exit_code = None
        if passed:
            verdict = Verdict.PASSED
        elif exit_code == 1:
            # The original harness only kept the exit code: an uncaught exception, whether an
            # assertion in the check or an error in the code.
            verdict = Verdict.FAILED
            detail = "exit code 1: the test raised (assertion or error; the file does not say)"
        else:
            verdict = Verdict.RUNTIME_ERROR
            detail = f"the program exited with status {exit_code}"
    else:
        message = str(item.get("errormessage", "")).strip()
        extra = str(item.get("error_detail_message", "")).strip()
        if passed:
            verdict = Verdict.PASSED
        elif message == "compile error":
            verdict = Verdict.COMPILE_ERROR
        elif message.startswith("exec error"):
            verdict = Verdict.RUNTIME_ERROR
        else:
            # Ran to the end but printed "false" (or no "true"): a wrong result.
            verdict = Verdict.FAILED
        detail = "; ".join(part for part in (message, extra) if part and part != "null")
    return Outcome(
        task_id=task_id,
        sample_index=index,
        verdict=verdict,
        stage=Stage.UNKNOWN,
        exit_code=exit_code,
        detail=detail,
        isolation="imported",
    )
