"""`codereval env build|list|check`: project environments, built once and cached by content."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from codereval.environments import get_builder, load_manifest
from codereval.environments.base import Environment, ProjectSpec
from codereval.errors import UserError


def _root(value: Path | None) -> Path:
    from codereval.environments.python import default_root

    return value if value is not None else default_root()


def _select(manifest: Path, names: tuple[str, ...]) -> list[ProjectSpec]:
    specs = load_manifest(manifest)
    if not names:
        return specs
    known = {spec.name: spec for spec in specs}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise UserError(
            f"project {unknown[0]!r} is not in {manifest}",
            hint=f"projects there: {', '.join(sorted(known))}",
        )
    return [known[name] for name in names]


_ROOT_OPTION = click.option(
    "--root", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Cache root (default: $CODEREVAL_HOME or ~/.cache/codereval).",
)


@click.group(name="env")
def env_group() -> None:
    """Build, list and check project environments (source tree + dependencies).

    \b
    Examples:
      codereval env build --projects projects.toml
      codereval env list
      codereval env check
    """


@env_group.command(name="build")
@click.option("--projects", "manifest", required=True,
              type=click.Path(dir_okay=False, path_type=Path),
              help="Projects manifest (TOML or JSON) naming each project's source and needs.")
@click.option("--project", "--only", "names", multiple=True,
              help="Build only this project (repeatable).")
@click.option("--force", is_flag=True, help="Rebuild even when an up-to-date build exists.")
@_ROOT_OPTION
def build_cmd(manifest: Path, names: tuple[str, ...], force: bool, root: Path | None) -> None:
    """Prepare each project once: fetch its source, install its dependencies.

    An unchanged project (same source, recipe and harness version) is not rebuilt. A project
    whose dependencies fail to install is recorded as failed; its tasks become infra_error.
    A project's exclude_newer resolves its requirements as they were on that date; env.json
    records it with every installed distribution.

    \b
    Examples:
      codereval env build --projects projects.toml
      codereval env build --projects projects.toml --only acme/invoicer --force
    """
    cache = _root(root)
    failed = 0
    for spec in _select(manifest, names):
        builder = get_builder(spec.language)
        started = time.monotonic()
        env = builder.build(spec, root=cache, force=force)
        seconds = time.monotonic() - started
        report = getattr(builder, "last_report", None)
        action = getattr(report, "action", "built" if env.ready else "failed")
        warning = getattr(report, "warning", "")
        if action == "cached":
            click.echo(f"{spec.name}: up to date, nothing to do ({env.key}, {env.path})")
        elif env.ready:
            click.echo(f"{spec.name}: built in {seconds:.1f}s ({env.key}, {env.path})")
        else:
            failed += 1
            click.echo(f"{spec.name}: FAILED ({env.key}, {env.path})")
            for line in env.error.splitlines():
                click.echo(f"    {line}")
        if warning:
            click.echo(f"{spec.name}: warning: {warning}", err=True)
    if failed:
        click.echo(f"{failed} project(s) failed to build; their tasks will be infra_error",
                   err=True)
        sys.exit(1)


def _all_environments(cache: Path) -> list[tuple[Environment, dict[str, object]]]:
    from codereval.environments.python import list_environments

    return list_environments(cache)


@env_group.command(name="list")
@_ROOT_OPTION
def list_cmd(root: Path | None) -> None:
    """Show every built environment: name, key, status, path.

    \b
    Example:
      codereval env list
    """
    cache = _root(root)
    found = _all_environments(cache)
    if not found:
        click.echo(f"no environments under {cache} (run `codereval env build --projects ...`)")
        return
    width = max(len(env.spec.name) for env, _ in found)
    for env, meta in found:
        status = "ready" if env.ready else "failed"
        extra = f"  python {meta.get('python_version')}" if meta.get("python_version") else ""
        provenance = meta.get("provenance")
        if isinstance(provenance, dict) and provenance.get("exclude_newer"):
            extra += f"  resolved before {provenance['exclude_newer']}"
        click.echo(f"{env.spec.name:<{width}}  {env.key}  {status:<6}  {env.path}{extra}")


@env_group.command(name="check")
@click.option("--project", "names", multiple=True, help="Check only this project (repeatable).")
@_ROOT_OPTION
def check_cmd(names: tuple[str, ...], root: Path | None) -> None:
    """Verify built environments: source tree unchanged, requirements import.

    \b
    Example:
      codereval env check --project acme/invoicer
    """
    cache = _root(root)
    found = _all_environments(cache)
    if names:
        known = {env.spec.name for env, _ in found}
        missing = [name for name in names if name not in known]
        if missing:
            raise UserError(f"no environment built for {missing[0]!r} under {cache}",
                            hint="run `codereval env build --projects MANIFEST`")
        found = [(env, meta) for env, meta in found if env.spec.name in names]
    if not found:
        raise UserError(f"no environments under {cache}",
                        hint="run `codereval env build --projects MANIFEST`")
    bad = 0
    for env, _meta in found:
        problem = get_builder(env.spec.language).check(env)
        if problem is None:
            click.echo(f"{env.spec.name}: ok ({env.key})")
        else:
            bad += 1
            click.echo(f"{env.spec.name}: BROKEN ({env.key}): {problem}")
    if bad:
        sys.exit(1)


def register(app: click.Group) -> None:
    """Adds this module's commands to the app."""
    app.add_command(env_group)
