"""HumanEval-X (CodeGeeX, KDD 2023): 164 problems in six languages, generation and translation."""

from __future__ import annotations

import re
from pathlib import Path

from codereval.benchmarks.family import Family
from codereval.model import Task

LANGUAGES = ("python", "cpp", "java", "js", "go", "rust")


class HumanEvalXFamily(Family):
    name = "humanevalx"
    names_help = (
        "humanevalx-<lang>, humanevalx-<source>-to-<target> (lang: " + ", ".join(LANGUAGES) + ")"
    )

    def load(
        self, name: str, *, data_dir: Path | None, tasks_path: Path | None
    ) -> list[Task] | None:
        from codereval.families.humanevalx.dataset import (
            load_humanevalx,
            load_humanevalx_translation,
        )

        translation = re.fullmatch(r"humanevalx-([a-z]+)-to-([a-z]+)", name)
        if translation:
            source, target = translation.groups()
            return load_humanevalx_translation(source, target, data_dir=data_dir)
        generation = re.fullmatch(r"humanevalx-([a-z]+)", name)
        if generation:
            return load_humanevalx(generation.group(1), data_dir=data_dir)
        return None


FAMILY = HumanEvalXFamily()
