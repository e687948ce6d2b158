"""Analysis of a benchmark task: its function in its file, or its reference alone."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from codereval.analysis.deps import Analysis
from codereval.analysis.java import analyze_java_source
from codereval.analysis.python import analyze_python_source, function_at_line, parse_python
from codereval.analysis.stdlib import PythonEnvironment
from codereval.errors import UserError
from codereval.model import Language, Task

# A Java reference is a bare method; it is analysed inside a class of this name.
REFERENCE_CLASS = "CoderEvalReference"


def analyze_task(
    task: Task,
    *,
    project_root: Path | None = None,
    environment: PythonEnvironment | None = None,
    classpath: Sequence[Path] = (),
) -> Analysis:
    """Analyse a task's target in its ``file_content`` (the record's line span picks it), or,
    when the record has no file content, its reference code alone (imports it does not show are
    then unknown, and the level is a lower bound)."""
    location = task.location
    file_path = location.file_path if location and location.file_path else f"{task.name}"
    lineno = location.lineno if location else 0
    if task.language is Language.PYTHON:
        why = "no file content"
        if task.file_content:
            try:
                tree = parse_python(task.file_content, file_path=file_path)
                target = (function_at_line(tree, lineno) if lineno else None) or task.name
                return analyze_python_source(
                    task.file_content,
                    target,
                    file_path=file_path,
                    project_root=project_root,
                    environment=environment,
                )
            except UserError as exc:
                # An elided or truncated file content: the reference is all there is to read.
                why = exc.one_line()
        result = analyze_python_source(
            task.reference, task.name, file_path=file_path, environment=environment
        )
        return result.model_copy(update={"basis": f"reference: {why}"})
    if task.language is Language.JAVA:
        if task.file_content:
            target = (
                f"{location.class_name}.{task.name}"
                if location and location.class_name
                else task.name
            )
            return analyze_java_source(
                task.file_content,
                target,
                file_path=file_path,
                project_root=project_root,
                classpath=classpath,
                lineno=lineno,
            )
        source = f"class {REFERENCE_CLASS} {{\n{task.reference}\n}}\n"
        return analyze_java_source(source, task.name, file_path=file_path, classpath=classpath)
    raise UserError(
        f"context analysis supports python and java, not {task.language.value} ({task.task_id})"
    )
