"""`codereval analyze`: the dependencies, runnable level and context strings of one function."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from codereval.errors import UserError


def _split_target(spec: str) -> tuple[str, str]:
    file_part, sep, function = spec.rpartition("::")
    if not sep or not file_part or not function:
        raise UserError(
            f"expected FILE::FUNCTION, got {spec!r}",
            hint="e.g. pkg/mod.py::func, pkg/mod.py::Class.method or a/B.java::B.method",
        )
    return file_part, function


@click.command(name="analyze")
@click.argument("project_dir", type=click.Path(path_type=Path))
@click.argument("target", metavar="FILE::FUNCTION")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
@click.option(
    "--python",
    "python",
    type=click.Path(path_type=Path),
    help="The project environment's interpreter, to tell its installed libraries apart.",
)
@click.option(
    "--classpath",
    default="",
    help=f"Java: jars and class directories, separated by '{os.pathsep}'.",
)
def analyze(
    project_dir: Path, target: str, as_json: bool, python: Path | None, classpath: str
) -> None:
    """Show what one function depends on, its runnable level and its context strings.

    FILE is relative to PROJECT_DIR; FUNCTION is a name or Class.method. Python files use the
    running interpreter (or --python) to tell the standard library and installed libraries
    apart; Java files use the JDK packages, the project's source tree and --classpath.

    \b
    Examples:
      codereval analyze ~/src/ocfl-py ocfl/dispositor.py::Dispositor.strip_root
      codereval analyze . src/main/java/com/ex/Foo.java::Foo.isBlank --classpath lib/a.jar
      codereval analyze ~/src/proj pkg/mod.py::helper --python ~/src/proj/.venv/bin/python --json
    """
    from codereval.analysis.formats import format_all_context, format_oracle_context
    from codereval.analysis.java import analyze_java_file
    from codereval.analysis.python import analyze_python_file
    from codereval.analysis.stdlib import python_environment

    if not project_dir.is_dir():
        raise UserError(f"project directory not found: {project_dir}")
    file_path, function = _split_target(target)
    if file_path.endswith(".py"):
        environment = python_environment(python) if python is not None else None
        result = analyze_python_file(project_dir, file_path, function, environment=environment)
    elif file_path.endswith(".java"):
        jars = [Path(p) for p in classpath.split(os.pathsep) if p]
        missing = [str(j) for j in jars if not j.exists()]
        if missing:
            raise UserError(f"classpath entry not found: {missing[0]}")
        result = analyze_java_file(project_dir, file_path, function, classpath=jars)
    else:
        raise UserError(f"cannot analyze {file_path}: only .py and .java files are supported")

    oracle = format_oracle_context(result.oracle_context, language=result.language)
    everything = format_all_context(result.all_context, language=result.language)
    if as_json:
        payload = result.model_dump(mode="json", by_alias=True)
        payload["oracle_context_string"] = oracle
        payload["all_context_string"] = everything
        click.echo(json.dumps(payload, indent=2))
        return
    click.echo(f"{result.file_path}::{result.target}  (lines {result.lineno}-{result.end_lineno})")
    rows = [("name", "kind", "classification", "resolved from", "line")]
    rows += [
        (
            d.name + ("" if d.token else " *"),
            d.kind.value,
            d.scope.value,
            d.origin,
            str(d.lineno),
        )
        for d in result.dependencies
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        click.echo(
            "  "
            + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False))
            + "  "
            + row[4]
        )
    if any(not d.token for d in result.dependencies):
        click.echo("  * not a context token (a built-in used as a value)")
    click.echo(f"level: {result.level.value}")
    if result.unresolved:
        click.echo(f"unresolved: {', '.join(result.unresolved)} (the level is a lower bound)")
    click.echo(f"oracle_context: {oracle}")
    click.echo(f"all_context: {everything}")


def register(app: click.Group) -> None:
    """Adds this module's commands to the app."""
    app.add_command(analyze)
