"""The `codereval` command: one click group, each command registered from its own module."""

from __future__ import annotations

import sys

import click

from codereval.errors import UserError


@click.group(
    name="codereval",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(package_name="codereval")
def app() -> None:
    """Evaluate code models inside real projects: CoderEval, HumanEval-X, HumanEval.

    \b
    Examples:
      codereval score results/ChatGPT_out.jsonl --compat
      codereval tasks CoderEval4Python.json --level class_runnable
      codereval demo
    """


def _register() -> None:
    # Explicit, in one place: a command exists because it is listed here, not because some
    # module happened to be imported.
    from codereval.cli import (
        allocate_cmd,
        analyze_cmd,
        demo_cmd,
        env_cmd,
        evaluate_cmd,
        generate_cmd,
        report_cmd,
        score_cmd,
        tasks_cmd,
    )

    for module in (
        score_cmd,
        report_cmd,
        tasks_cmd,
        evaluate_cmd,
        env_cmd,
        generate_cmd,
        analyze_cmd,
        allocate_cmd,
        demo_cmd,
    ):
        module.register(app)
    # Commands a benchmark family brings (CoderEval's compare; each family's `prepare X`), from
    # the registry.
    from codereval.benchmarks import families

    for family in families():
        for command in family.commands():
            app.add_command(command)
        for command in family.prepare_commands():
            prepare.add_command(command)
    if prepare.commands:
        app.add_command(prepare)


@click.group("prepare")
def prepare() -> None:
    """Turn public material (official records and tests, Defects4J's metadata, the projects'
    git histories) into a benchmark directory that `codereval evaluate` runs.

    \b
    Examples:
      codereval prepare codereval-python --records CoderEval4Python.json \\
          --test-map record_testcases_map_python.json --fetch --out bench/codereval-python
      codereval prepare defects4j --defects4j defects4j --checkouts repos --bugs Lang-1 \\
          --out bench/d4j
    """


_register()


def main(argv: list[str] | None = None) -> None:
    """Entry point: user errors become one line on stderr and a non-zero exit, never a trace."""
    try:
        app.main(args=argv, prog_name="codereval", standalone_mode=False)
    except UserError as exc:
        click.echo(f"error: {exc.one_line()}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("error: aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        click.echo(f"error: {exc.format_message()}", err=True)
        if isinstance(exc, click.UsageError) and exc.ctx is not None:
            click.echo(f"try: {exc.ctx.command_path} --help", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("error: interrupted; re-run the same command to resume", err=True)
        sys.exit(130)
