"""The original machine a benchmark's official tests were written on, as ``--compat`` rebuilds it.

The facts live in a data file a benchmark family ships (CoderEval's is
``data/codereval_python/platform.toml``): where the machine held the test tree and which
environment variables its shell gave a test. The runner mounts the prepared tree there and runs
the test from its project's folder; the family says which machine a task's tests expect.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from codereval.errors import UserError

STANDARD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass(frozen=True, kw_only=True)
class Machine:
    root: Path
    variables: tuple[tuple[str, str], ...]
    hostname: str | None = None
    # /etc/hosts lines: address, then its names.
    hosts: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def hosts_file(self) -> str | None:
        """The text of the machine's /etc/hosts, or None when the data file gives none."""
        if not self.hosts:
            return None
        return "".join(f"{address}\t{' '.join(names)}\n" for address, names in self.hosts)

    @property
    def home(self) -> Path | None:
        """The shell's home directory: writable on the original machine (tools cache there)."""
        value = dict(self.variables).get("HOME")
        return Path(value) if value else None

    def environment(self, *, python: Path, scratch: Path, cwd: Path) -> dict[str, str]:
        """What the test's process sees: the shell's variables, the venv's bin first on PATH."""
        env = dict(self.variables)
        env.update(
            PATH=f"{python.parent}:{STANDARD_PATH}",
            PWD=str(cwd),
            VIRTUAL_ENV=str(python.parent.parent),
            TMPDIR=str(scratch / "tmp"),
            PYTHONDONTWRITEBYTECODE="1",
            PYTHONHASHSEED="0",
        )
        return env


@functools.cache
def load_machine(package: str, resource: str) -> Machine:
    """A machine described by a TOML file shipped in ``package`` (a family's data)."""
    text = resources.files(package).joinpath(resource).read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # a broken installation, not the user's input
        raise UserError(f"{resource} in the installed package is malformed: {exc}") from None
    variables = data.get("environment", {})
    hosts = data.get("hosts", {})
    return Machine(
        root=Path(str(data["root"])),
        variables=tuple((str(k), str(v)) for k, v in variables.items()),
        hostname=str(data["hostname"]) if data.get("hostname") else None,
        hosts=tuple(
            (str(address), tuple(str(n) for n in names)) for address, names in hosts.items()
        ),
    )
