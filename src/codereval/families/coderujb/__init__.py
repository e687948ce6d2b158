"""CoderUJB (ISSTA 2024): Java tasks of five kinds on Defects4J's projects, buggy and fixed.

Generation (FCG), test generation (CTG, ITG), repair (APR) and defect detection (DD): the
dataset loader, the prompts and extraction of each kind, the runners on bug versions (and on
Defects4J itself), the verdict rules, and CoderUJB's own metrics and report sections.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from codereval.benchmarks.family import Family, HtmlSection, ScoreSection
from codereval.errors import UserError
from codereval.model import Outcome, Task, UjbKind

if TYPE_CHECKING:
    import click
    from rich.table import Table

    from codereval.prompting.extraction import Extraction
    from codereval.prompting.prompts import Prompt, PromptStyle, PromptVariant


# Defect detection: the answers the dataset's prompt offers, by truth.
DD_ANSWERS = {True: "A. Yes, it has defects", False: "B. No, it doesn't have defects"}


@dataclass(frozen=True)
class _Section:
    anchor: str
    toc: str
    title: str
    html: str


class CoderUjbFamily(Family):
    name = "coderujb"
    names_help = (
        "coderujb or coderujb-<kind> (with --tasks DATASET; kind: fcg, ctg, itg, apr, dd), "
        "mini-coderujb"
    )
    runners: ClassVar[Mapping[str, str]] = {
        "coderujb": "codereval.families.coderujb.runner:CoderUjbRunner",
        "coderujb-dd": "codereval.families.coderujb.runner_dd:CoderUjbDefectRunner",
    }

    def load(
        self, name: str, *, data_dir: Path | None, tasks_path: Path | None
    ) -> list[Task] | None:
        if name == "mini-coderujb":
            from codereval.benchmarks import builtin_dir
            from codereval.benchmarks.tasks_jsonl import load_tasks_jsonl

            return load_tasks_jsonl(builtin_dir("mini_coderujb") / "tasks.jsonl")
        ujb = re.fullmatch(r"coderujb(?:-([a-z]+))?", name)
        if ujb is None:
            return None
        if tasks_path is None:
            raise UserError(
                f"benchmark {name!r} needs a CoderUJB dataset file",
                hint="pass --tasks code_ujb_complete.parquet (or a task_*_bench_*.json, .jsonl)",
            )
        from codereval.families.coderujb.dataset import load_coderujb

        return load_coderujb(tasks_path, kind=ujb.group(1))

    def recognises(self, path: Path, *, kind: str | None = None) -> bool:
        from codereval.families.coderujb.dataset import is_coderujb_file

        return kind is not None or is_coderujb_file(path)

    def read_tasks(self, path: Path, *, kind: str | None = None) -> tuple[str, list[Task]]:
        from codereval.families.coderujb.dataset import load_coderujb

        return "coderujb", load_coderujb(path, kind=kind)

    def owns(self, task: Task) -> bool:
        return task.ujb is not None

    def gold_reference(self, task: Task) -> str | None:
        if task.ujb is not None and task.ujb.kind is UjbKind.DD and task.ujb.defective is not None:
            return DD_ANSWERS[task.ujb.defective]
        return None

    def gold_probes(self, task: Task) -> dict[str, str | None] | None:
        if task.ujb is None:
            return None
        if task.ujb.kind is UjbKind.DD and task.ujb.defective is not None:
            return {"opposite-answer": DD_ANSWERS[not task.ujb.defective]}
        if task.ujb.kind in (UjbKind.CTG, UjbKind.ITG):
            from codereval.evaluation.gold import java_trivial_body
            from codereval.java.splice import declared_tests

            # The reference is a test method: the probe is that test with nothing in it (a
            # reference without @Test is a JUnit 3 class's test* method).
            names = declared_tests(task.reference, junit3=True)
            return {
                "default-return": java_trivial_body(task.reference, name=names[0])
                if names
                else None
            }
        return None

    def runner_for(self, task: Task) -> str | None:
        if task.ujb is None:
            return None
        # Defect detection reads an answer; the other kinds run on bug versions.
        return "coderujb-dd" if task.ujb.kind is UjbKind.DD else "coderujb"

    def build_prompt(
        self, task: Task, *, variant: PromptVariant, style: PromptStyle
    ) -> Prompt | None:
        from codereval.families.coderujb.prompts import build_ujb_prompt

        return build_ujb_prompt(task, variant=variant, style=style)

    def extract(
        self, text: str, *, task: Task, prompt: Prompt, truncated: bool
    ) -> Extraction | None:
        from codereval.families.coderujb.extraction import ujb_code

        return ujb_code(text, task=task, prompt=prompt, truncated=truncated)

    def score(
        self,
        tasks: Sequence[Task],
        outcomes: Sequence[Outcome],
        *,
        ks: tuple[int, ...],
        bootstrap: int,
        exclude: frozenset[str],
    ) -> ScoreSection | None:
        if not any(t.ujb is not None for t in tasks):
            return None
        from codereval.families.coderujb.metrics import score_ujb

        return score_ujb(tasks, outcomes, ks=ks, bootstrap=bootstrap, exclude=sorted(exclude))

    def score_tables(
        self, labels: Sequence[str], sections: Sequence[Any], ks: Sequence[int]
    ) -> list[Table]:
        from codereval.families.coderujb.report import render_ujb

        return render_ujb(labels, sections, ks) if any(s is not None for s in sections) else []

    def score_notes(self, labels: Sequence[str], sections: Sequence[Any]) -> list[str]:
        from codereval.families.coderujb.report import ujb_notes

        return ujb_notes(labels, sections)

    def prepare_commands(self) -> Sequence[click.Command]:
        from codereval.families.coderujb.prepare_cmd import defects4j_command

        return (defects4j_command,)

    def html_sections(
        self, labels: Sequence[str], sections: Sequence[Any], ks: Sequence[int]
    ) -> list[HtmlSection]:
        from jinja2 import Environment, PackageLoader, select_autoescape

        from codereval.families.coderujb.report import level_rows, rate_rows

        levels, rates = level_rows(sections, ks), rate_rows(sections)
        if not (levels or rates):
            return []
        env = Environment(
            loader=PackageLoader("codereval.families.coderujb", "templates"),
            autoescape=select_autoescape(["html", "j2"]),
            trim_blocks=True,
            lstrip_blocks=True,
        )
        html = env.get_template("section.html.j2").render(
            models=[{"label": label} for label in labels], ks=ks, levels=levels, rates=rates
        )
        title = "CoderUJB metrics with 95% bootstrap intervals"
        return [_Section(anchor="coderujb", toc="CoderUJB", title=title, html=html)]


FAMILY = CoderUjbFamily()
