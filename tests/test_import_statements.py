"""A file's import statements are read once per text, and kept between runs by their digest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codereval.runners import import_statements
from codereval.runners.import_statements import FORMAT, ImportStatements
from codereval.runners.python_imports import ImportClosure

CORE = "import json\nfrom app import helpers\nfrom .models import Thing\n"
HELPERS = "import email.mime.text\ndef later():\n    import sqlite3\n"


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    for rel, text in {"app/__init__.py": "", "app/core.py": CORE, "app/helpers.py": HELPERS,
                      "app/models.py": "import xml.etree.ElementTree\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _closure(project: Path, statements: ImportStatements) -> list[str]:
    closure = ImportClosure(project, statements=statements)
    closure.add_file(project / "app" / "core.py")
    return closure.modules()


def test_a_second_run_reads_the_same_closure_without_parsing_a_file(tmp_path: Path) -> None:
    project, kept = _project(tmp_path), tmp_path / "home" / "import-statements"
    first = ImportStatements(kept)
    modules = _closure(project, first)
    assert set(modules) == {"json", "email.mime.text", "xml.etree.ElementTree"}
    assert first.parsed == 4  # core, app/__init__, helpers, models
    first.save()
    again = ImportStatements(kept)
    assert _closure(project, again) == modules
    assert again.parsed == 0


def test_a_file_that_changes_is_parsed_again(tmp_path: Path) -> None:
    project, kept = _project(tmp_path), tmp_path / "kept"
    first = ImportStatements(kept)
    _closure(project, first)
    first.save()
    (project / "app" / "helpers.py").write_text("import csv\n", encoding="utf-8")
    again = ImportStatements(kept)
    assert set(_closure(project, again)) == {"json", "csv", "xml.etree.ElementTree"}
    assert again.parsed == 1


def test_a_text_that_does_not_parse_is_remembered_as_such(tmp_path: Path) -> None:
    first = ImportStatements(tmp_path)
    assert first.of("def (:\n") is None
    first.save()
    again = ImportStatements(tmp_path)
    assert again.of("def (:\n") is None and again.parsed == 0


@pytest.mark.parametrize("content", ["{not json", json.dumps({"format": "other", "files": {}}),
                                     json.dumps({"format": FORMAT, "files": {"x": [[1]]}})])
def test_an_unreadable_or_foreign_file_is_ignored(tmp_path: Path, content: str) -> None:
    (tmp_path / f"{FORMAT}.json").write_text(content, encoding="utf-8")
    statements = ImportStatements(tmp_path)
    assert statements.of(CORE) == [("json", 0, []), ("app", 0, ["helpers"]),
                                   ("models", 1, ["Thing"])]
    assert statements.parsed == 1
    statements.save()
    assert ImportStatements(tmp_path).of(CORE) is not None


def test_nothing_is_written_when_nothing_new_was_read(tmp_path: Path) -> None:
    ImportStatements(tmp_path).save()
    assert not (tmp_path / f"{FORMAT}.json").exists()
    unwritable = tmp_path / "file"
    unwritable.write_text("")
    statements = ImportStatements(unwritable / "below")  # a folder that cannot be made
    statements.of(CORE)
    statements.save()  # says so in the log, and the run goes on


def test_the_oldest_are_let_go_past_the_limit(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(import_statements, "MAX_FILES", 2)
    statements = ImportStatements(tmp_path)
    for n in range(3):
        statements.of(f"import m{n}\n")
    statements.save()
    kept = json.loads((tmp_path / f"{FORMAT}.json").read_text(encoding="utf-8"))["files"]
    assert sorted(m[0][0] for m in kept.values()) == ["m1", "m2"]
