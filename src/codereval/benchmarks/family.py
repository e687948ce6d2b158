"""What a benchmark family plugs into the generic layers, and nothing more.

A family (CoderEval, CoderUJB, HumanEval, HumanEval-X, the next one) is one package under
``codereval/families/`` holding a ``FAMILY`` object of a subclass of :class:`Family`, and one
line in ``codereval.benchmarks.FAMILIES``. The generic layers never import a family: they ask
the registry, by name or by task, and call these hooks. Every hook has a default that claims
nothing, so a family implements only what it has (HumanEval: a loader and nothing else).

The hooks' argument and result types belong to the layers that call them (prompting, scoring,
report, runners); they are named here for the type checker only, so this module stays at the
bottom of the house with the shared vocabulary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from codereval.model import Outcome, Sample, Task

if TYPE_CHECKING:
    import click
    from rich.table import Table

    from codereval.prompting.extraction import Extraction
    from codereval.prompting.prompts import Prompt, PromptStyle, PromptVariant
    from codereval.runners.machine import Machine


class ScoreSection(Protocol):
    """A family's own metrics for one run (CoderUJB: pass@k by level, trigger and coverage
    rates); kept in ``Scores.sections`` under the family's name."""

    def model_dump(self, *, mode: str = ...) -> dict[str, Any]: ...


class HtmlSection(Protocol):
    """A family's section of the HTML report: its anchor, its name in the table of contents,
    its heading and its body (markup, escaped by the family's own template)."""

    @property
    def anchor(self) -> str: ...
    @property
    def toc(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def html(self) -> str: ...


class Family:
    name: ClassVar[str] = ""
    # The benchmark names this family loads, for --help and error messages.
    names_help: ClassVar[str] = ""
    # Runners this family brings: name -> "module:Class", imported only when chosen.
    runners: ClassVar[Mapping[str, str]] = {}

    def load(
        self, name: str, *, data_dir: Path | None, tasks_path: Path | None
    ) -> list[Task] | None:
        """The tasks of benchmark ``name``, or None when the name is not this family's."""
        return None

    def recognises(self, path: Path, *, kind: str | None = None) -> bool:
        """Whether ``path`` looks like a tasks file of this family's format (a cheap look at
        its head). ``kind`` narrows a file holding several kinds of task (CoderUJB's
        ``--kind``): only a family with kinds recognises a file when it is given."""
        return False

    def reads_last_resort(self) -> bool:
        """Whether a tasks file no family recognises is handed to this one, whose loader then
        says what is wrong with it. Exactly one family does."""
        return False

    def read_tasks(self, path: Path, *, kind: str | None = None) -> tuple[str, list[Task]]:
        """(benchmark name, tasks) of a file this family recognises (or is last resort for)."""
        raise NotImplementedError(f"family {self.name!r} reads no tasks files")

    def read_results(
        self, path: Path, first: dict[str, Any]
    ) -> tuple[list[Task], list[Outcome], list[Sample]] | None:
        """(tasks, outcomes, samples) of a result file in this family's own format (CoderEval's
        official ``_out.jsonl``), judged by its first row, or None when it is not one."""
        return None

    def owns(self, task: Task) -> bool:
        """Whether a task is this family's, for the hooks below that are asked per task."""
        return False

    def gold_reference(self, task: Task) -> str | None:
        """What a right sample of a task this family owns is, for gold validation, when it is
        not the task's reference code (CoderUJB's defect detection: the right answer)."""
        return None

    def gold_probes(self, task: Task) -> dict[str, str | None] | None:
        """Gold validation's wrong samples (probe name -> code; None: cannot be made) for a task
        this family owns, when the generic trivial bodies do not fit it."""
        return None

    def runner_for(self, task: Task) -> str | None:
        """The runner (a key of ``runners``) for a task this family owns, or None for the
        generic choice (program tests, project tests by language)."""
        return None

    def build_prompt(
        self, task: Task, *, variant: PromptVariant, style: PromptStyle
    ) -> Prompt | None:
        """This family's own prompt for a task it owns, or None for the generic prompt."""
        return None

    def extract(
        self, text: str, *, task: Task, prompt: Prompt, truncated: bool
    ) -> Extraction | None:
        """The code in a model's output for a task this family owns, or None for the generic
        extraction."""
        return None

    def score(
        self,
        tasks: Sequence[Task],
        outcomes: Sequence[Outcome],
        *,
        ks: tuple[int, ...],
        bootstrap: int,
        exclude: frozenset[str],
    ) -> ScoreSection | None:
        """This family's own metrics over a run, or None when the run holds none of its tasks."""
        return None

    def score_tables(
        self, labels: Sequence[str], sections: Sequence[Any], ks: Sequence[int]
    ) -> list[Table]:
        """Terminal tables of this family's metrics, one column per run (None: that run had
        none of its tasks)."""
        return []

    def score_notes(self, labels: Sequence[str], sections: Sequence[Any]) -> list[str]:
        """Notes a reader needs beside those tables."""
        return []

    def html_sections(
        self, labels: Sequence[str], sections: Sequence[Any], ks: Sequence[int]
    ) -> list[HtmlSection]:
        """This family's sections of the HTML report."""
        return []

    def compat_machine(self, task: Task) -> Machine | None:
        """The original machine a task's official tests were written on, which ``--compat``
        reproduces (paths, shell environment, host name), or None."""
        return None

    def commands(self) -> Sequence[click.Command]:
        """Commands this family adds to the ``codereval`` command line."""
        return ()

    def prepare_commands(self) -> Sequence[click.Command]:
        """Subcommands of ``codereval prepare`` this family brings (``prepare defects4j``):
        public material turned into a benchmark directory."""
        return ()


__all__ = ["Family", "HtmlSection", "ScoreSection"]
