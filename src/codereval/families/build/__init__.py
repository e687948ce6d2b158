"""Build: CoderEval-style benchmarks from any Python repository, tested with calls recorded
from the project's own test suite (`codereval build python`).

What it writes is a prepared benchmark directory in CoderEval's layout and record format, read
back by `evaluate --prepared` like any other; its tasks run on the generic Python project
runner (a script test replaying the recorded calls), so the family brings only its command.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from codereval.benchmarks.family import Family

if TYPE_CHECKING:
    import click


class BuildFamily(Family):
    name = "build"

    def commands(self) -> Sequence[click.Command]:
        from codereval.families.build.build_cmd import build_command

        return (build_command,)


FAMILY = BuildFamily()
