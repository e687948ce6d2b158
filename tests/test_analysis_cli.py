"""`codereval analyze`: the table, the level, the context strings, and one-line errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from codereval.cli.app import app, main

SOURCE = """import os


class Dispositor:
    def strip_root(self, path, root):
        root = root.rstrip(os.sep)
        if os.path.commonprefix((path, root)) == root:
            return os.path.relpath(path, start=root)
        raise Exception("Path %s is not in root %s" % (path, root))
"""


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "ocfl").mkdir()
    (tmp_path / "ocfl" / "dispositor.py").write_text(SOURCE)
    (tmp_path / "Bad.java").write_text("class Bad { void f( }")
    return tmp_path


def test_prints_the_table_level_and_context_strings(project: Path) -> None:
    result = CliRunner().invoke(
        app, ["analyze", str(project), "ocfl/dispositor.py::Dispositor.strip_root"]
    )
    assert result.exit_code == 0, result.output
    assert "commonprefix  APIInvocation  stdlib" in result.output
    assert "level: slib_runnable" in result.output
    assert "oracle_context: { \"apis\" : \"['rstrip', 'commonprefix', 'relpath']\"" in result.output
    assert 'all_context: { "import" : "os ", "file" : "Dispositor ; "' in result.output


def test_json_output_with_another_interpreter(project: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "analyze",
            str(project),
            "ocfl/dispositor.py::strip_root",
            "--json",
            "--python",
            sys.executable,
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["level"] == "slib_runnable"
    assert payload["oracle_context"]["vars"] == ["sep", "path"]
    assert payload["all_context_string"].startswith('{ "import" : "os "')


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("ocfl/missing.py::f", "error: file not found"),
        ("ocfl/dispositor.py::nope", "functions there: Dispositor.strip_root"),
        ("Bad.java::Bad.f", "error: cannot parse Bad.java: syntax error at line 1"),
        ("ocfl/dispositor.py", "error: expected FILE::FUNCTION"),
        ("notes.txt::f", "only .py and .java"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    project: Path, target: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["analyze", str(project), target])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_help_has_an_example() -> None:
    result = CliRunner().invoke(app, ["analyze", "--help"])
    assert "codereval analyze" in result.output and "Examples" in result.output
