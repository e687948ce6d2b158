"""CoderEval's context strings, written the way the official records write them.

Python (from the released records)::

    oracle_context  { "apis" : "['localize', 'map']", "classes" : "['Time']", "vars" : "[]" }
    all_context     { "import" : "time datetime pytz ", "file" : "", "class" : "" }

Lists are Python literals inside a JSON string; all_context's import field is names each
followed by one space, its file and class fields entries each followed by `` ; `` (an entry such
as ``slugify(text, separator)`` holds spaces); empty strings when there are none.

Java: the official records write list items unquoted (``"[isEmpty, trim]"``); our writer does
the same, and all_context carries a fourth field, ``class_level``, after ``class``::

    oracle_context  { "apis" : "[isEmpty, trim]", "classes" : "[String]", "vars" : "[]" }
    all_context     { "import" : "java.util.List ", "file" : "Helper ; ",
                      "class" : "size() ; isEmpty() ; ", "class_level" : "items ; count ; " }

Java ``class`` lists the current class's other methods, ``class_level`` its fields.
"""

from __future__ import annotations

import json

from codereval.model import AllContext, Language, OracleContext


def _python_list(items: tuple[str, ...]) -> str:
    return "[" + ", ".join(repr(item) for item in items) + "]"


def _java_list(items: tuple[str, ...]) -> str:
    return "[" + ", ".join(items) + "]"


def _words(items: tuple[str, ...]) -> str:
    return "".join(f"{item} " for item in items)


def _entries(items: tuple[str, ...]) -> str:
    return "".join(f"{item} ; " for item in items)


def _pairs(pairs: list[tuple[str, str]]) -> str:
    # json.dumps escapes quotes and backslashes the way a JSON reader expects.
    return "{ " + ", ".join(f"{json.dumps(k)} : {json.dumps(v)}" for k, v in pairs) + " }"


def format_oracle_context(context: OracleContext, *, language: Language) -> str:
    """The ``oracle_context`` string of a record."""
    write = _java_list if language is Language.JAVA else _python_list
    return _pairs(
        [
            ("apis", write(context.apis)),
            ("classes", write(context.classes)),
            ("vars", write(context.vars)),
        ]
    )


def format_all_context(context: AllContext, *, language: Language) -> str:
    """The ``all_context`` string of a record."""
    pairs = [
        ("import", _words(context.imports)),
        ("file", _entries(context.file)),
        ("class", _entries(context.class_)),
    ]
    if language is Language.JAVA:
        pairs.append(("class_level", _entries(context.class_level)))
    return _pairs(pairs)
