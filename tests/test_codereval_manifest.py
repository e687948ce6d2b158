"""The projects manifest that ships with codereval: the 43 CoderEval Python projects."""

from __future__ import annotations

import json
from pathlib import Path


def test_the_shipped_manifest_names_every_benchmark_project(shared_data: Path) -> None:
    from codereval.families.codereval.prepare.projects import load_project_specs

    public = json.loads((shared_data / "codereval" / "projects_public.json").read_text())
    wanted = {p["project"] for p in public if p["language"] == "python" and p["task_ids"] != [[]]}
    specs = load_project_specs(None)
    assert wanted <= set(specs)
    for name in wanted:
        assert specs[name].commit and specs[name].python, name


def test_the_shipped_manifest_has_the_standalone_environment() -> None:
    from codereval.families.codereval.prepare.projects import load_project_specs

    standalone = load_project_specs(None)["standalone"]
    # The official standalone tests import these third-party packages.
    assert {"numpy", "rdflib", "pyyaml", "ansible-core", "borgmatic"} <= set(
        standalone.requirements)
    assert standalone.python and standalone.exclude_newer
