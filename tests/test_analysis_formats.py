"""The context strings we write read back the same and look like the official records."""

from __future__ import annotations

import json
from pathlib import Path

from codereval.analysis import format_all_context, format_oracle_context
from codereval.families.codereval.records import parse_all_context, parse_oracle_context
from codereval.model import AllContext, Language, OracleContext


def test_python_strings_are_written_exactly_like_the_released_records(shared_data: Path) -> None:
    records = json.loads((shared_data / "codereval" / "records_python_sample.json").read_text())
    for record in records["RECORDS"]:
        oracle = parse_oracle_context(record["oracle_context"])
        everything = parse_all_context(record["all_context"])
        assert oracle is not None and everything is not None
        assert format_oracle_context(oracle, language=Language.PYTHON) == record["oracle_context"]
        assert format_all_context(everything, language=Language.PYTHON) == record["all_context"]


def test_java_strings_use_unquoted_items_and_add_class_level() -> None:
    oracle = OracleContext(apis=("isEmpty", "trim"), classes=("String[]", "String"))
    text = format_oracle_context(oracle, language=Language.JAVA)
    assert text == '{ "apis" : "[isEmpty, trim]", "classes" : "[String[], String]", "vars" : "[]" }'
    everything = AllContext(
        imports=("java.util.List",), class_=("size()", "get(int i)"), class_level=("items",)
    )
    written = format_all_context(everything, language=Language.JAVA)
    assert written == (
        '{ "import" : "java.util.List ", "file" : "", "class" : "size() ; get(int i) ; ", '
        '"class_level" : "items ; " }'
    )
    assert parse_oracle_context(text) == oracle
    assert parse_all_context(written) == everything


def test_quotes_in_names_stay_readable() -> None:
    oracle = OracleContext(apis=("it's",))
    text = format_oracle_context(oracle, language=Language.PYTHON)
    assert json.loads(text)["apis"] == '["it\'s"]'
    assert parse_oracle_context(text) == oracle
