"""Rows in the published CoderUJB format, one per kind, written for the tests.

They follow the columns of the artifact's extract_task_*.py outputs and the shape of its
prompts (context as ``//`` comments, the instruction, the Javadoc, the signature through its
brace), on a small Commons-Lang-like class. Line numbers count from 0, as the published rows do.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

SOURCE = """package org.apache.commons.lang3;

public class StringUtils {

    /**
     * Checks if a CharSequence is empty ("") or null.
     */
    public static boolean isEmpty(final CharSequence cs) {
        return cs == null || cs.length() == 0;
    }

    /**
     * Abbreviates a String using ellipses.
     */
    public static String abbreviate(final String str, final int maxWidth) {
        if (str == null || str.length() <= maxWidth) {
            return str;
        }
        return str.substring(0, maxWidth - 3) + "...";
    }
}
"""

FUNCTION = """    public static String abbreviate(final String str, final int maxWidth) {
        if (str == null || str.length() <= maxWidth) {
            return str;
        }
        return str.substring(0, maxWidth - 3) + "...";
    }"""

BUGGY = """    public static String abbreviate(final String str, final int maxWidth) {
        if (str.length() <= maxWidth) {
            return str;
        }
        return str.substring(0, maxWidth - 3) + "...";
    }"""

COMMENT = """    /**
     * Abbreviates a String using ellipses.
     */"""

CONTEXT = (
    "package org.apache.commons.lang3;\n\npublic class StringUtils {\n"
    "    public static boolean isEmpty(final CharSequence cs);\n}"
)


def _commented(text: str) -> str:
    return "// " + "\n// ".join(text.split("\n"))


def _prompts(instruction: str, nl_context: str) -> tuple[str, str]:
    complete = f"{_commented(CONTEXT)}\n\n// {instruction}\n\n{nl_context}"
    chat = f"```java\n{CONTEXT}\n```\n\n{instruction}\n\n```java\n{nl_context}\n```\n"
    return complete, chat


def _with_comment(prompt: str) -> str:
    lines = prompt.splitlines()
    for index in range(len(lines) - 1, 0, -1):
        if "*/" in lines[index]:
            return "\n".join(lines[: index + 1]) + "\n"
    return prompt


def fcg_row() -> dict[str, Any]:
    signature = "public static String abbreviate(final String str, final int maxWidth) "
    instruction = (
        "You are a professional Java programmer, please create a function named `abbreviate` "
        "based on the provided abstract Java class context information and the following "
        "natural language annotations."
    )
    complete, chat = _prompts(instruction, f"{COMMENT}\n    {signature}{{\n")
    return {
        "task_id": "5a1f" + "0" * 60,
        "project": "Lang",
        "bug_id": 12,
        "testmethods": [
            "org.apache.commons.lang3.StringUtilsTest::testAbbreviate",
            "org.apache.commons.lang3.StringUtilsTest::testAbbreviateNull",
        ],
        "source_dir": "src/main/java",
        "location": "src/main/java/org/apache/commons/lang3/StringUtils.java",
        "start": 14,
        "end": 19,
        "function": FUNCTION,
        "comment": COMMENT,
        "function_name": "abbreviate",
        "prompt_chat": chat,
        "prompt_chat_with_comment": _with_comment(chat),
        "prompt_complete": complete,
        "prompt_complete_with_comment": _with_comment(complete),
        "function_signature": signature,
        "import_context": "",
        "class_signature": "public class StringUtils",
        "class_field_context": "",
        "class_function_signature_context": "",
        "code_context": _commented(CONTEXT),
        "source": SOURCE,
        "indent": "    ",
        "function_tested_rate": 0.93,
    }


TEST_SOURCE = """package org.apache.commons.lang3;

import org.junit.Test;
import static org.junit.Assert.*;

public class StringUtilsTest {

    /**
     * Abbreviating null gives null.
     */
    @Test
    public void testAbbreviateNull() {
        assertNull(StringUtils.abbreviate(null, 4));
    }
}
"""

TEST_FUNCTION = """    @Test
    public void testAbbreviateNull() {
        assertNull(StringUtils.abbreviate(null, 4));
    }"""


def ctg_row() -> dict[str, Any]:
    signature = "@Test\n    public void testAbbreviateNull()"
    instruction = (
        "You are a professional Java test case writer, please create a test case named "
        "`testAbbreviateNull` for the `StringUtils` class, utilizing the provided abstract Java "
        "class context information and the following natural language annotations."
    )
    nl = "    /**\n     * Abbreviating null gives null.\n     */\n    " + signature + " {\n"
    complete, chat = _prompts(instruction, nl)
    return {
        "task_id": "7c2e" + "1" * 60,
        "project": "Lang",
        "bug_id": "12",
        "testmethods": ["org.apache.commons.lang3.StringUtilsTest::testAbbreviateNull"],
        "source_dir": "src/test/java",
        "location": "src/test/java/org/apache/commons/lang3/StringUtilsTest.java",
        "start": 10,
        "end": 13,
        "function": TEST_FUNCTION,
        "comment": "    /**\n     * Abbreviating null gives null.\n     */",
        "function_name": "testAbbreviateNull",
        "prompt_chat": chat,
        "prompt_chat_with_comment": _with_comment(chat),
        "prompt_complete": complete,
        "prompt_complete_with_comment": _with_comment(complete),
        "be_test_import_context": "",
        "be_test_class_signature": "public class StringUtils",
        "be_test_class_field_context": "",
        "be_test_class_function_signature_context": "",
        "test_import_context": "import org.junit.Test;",
        "test_class_signature": "public class StringUtilsTest",
        "test_class_field_context": "",
        "test_class_function_signature_context": "",
        "function_signature": signature,
        "source": TEST_SOURCE,
        "classmethods": [
            {
                "be_test_class_file": "org/apache/commons/lang3/StringUtils.java",
                "be_test_class_name": "org.apache.commons.lang3.StringUtils",
                "be_test_function_name": "abbreviate",
                "be_test_function_signature": "abbreviate(Ljava/lang/String;I)Ljava/lang/String;",
                "line_numbers": ["16", "17"],
                "method_line_rate": "1.0",
            }
        ],
        "be_test_class_long_name": "org.apache.commons.lang3.StringUtils",
        "indent": "    ",
    }


ISSUE = (
    "## Issue-ID: Lang-571\n\n## Issue-Title: \n"
    "StringUtils.abbreviate throws NullPointerException for null input\n\n"
    "## Issue-Description: \nCalling abbreviate(null, 4) throws an NPE instead of "
    "returning null.\n\n"
)


def itg_row() -> dict[str, Any]:
    signature = "public void testAbbreviateNull()"
    instruction_id = "`Lang-571`"
    instruction = (
        "You are a professional Java test case writer, please create a test case named "
        f"`testAbbreviateNull` for the issue {instruction_id}, utilizing the provided issue "
        "report information and the following function signature."
    )
    nl = f"    {signature} {{\n"
    chat = f"```markdown\n{ISSUE}\n```\n\n{instruction}\n\n```java\n{nl}\n```\n"
    issue_commented = _commented(ISSUE)
    without = f"// {instruction}\n\n{issue_commented}\n\n"
    return {
        "task_id": "9d3f" + "2" * 60,
        "project": "Lang",
        "bug_id": 12,
        "testmethod": "org.apache.commons.lang3.StringUtilsTest::testAbbreviateNull",
        "source_dir": "src/test/java",
        "classes_modified": ["org.apache.commons.lang3.StringUtils"],
        "location": "src/test/java/org/apache/commons/lang3/StringUtilsTest.java",
        "location_fixed": "src/test/java/org/apache/commons/lang3/StringUtilsTest.java",
        "location_buggy": "src/test/java/org/apache/commons/lang3/StringUtilsTest.java",
        "start_buggy": 10,
        "end_buggy": 13,
        "start_fixed": 10,
        "end_fixed": 13,
        "function": TEST_FUNCTION,
        "comment": "",
        "function_name": "testAbbreviateNull",
        "prompt_chat": chat,
        "prompt_complete": without + nl,
        "prompt_complete_without_signature": without,
        "function_signature": signature,
        "source_buggy": TEST_SOURCE,
        "source_fixed": TEST_SOURCE,
        "indent": "    ",
    }


def apr_row() -> dict[str, Any]:
    instruction_complete = (
        "You are a professional Java programmer, please fix the bug in the function named "
        "abbreviate based on the provided abstract Java class context information and the "
        "following buggy function."
    )
    complete = (
        f"{_commented(CONTEXT)}\n\n// {instruction_complete}\n// Buggy Function\n{BUGGY}\n\n"
        "// Fixed Function\n"
    )
    chat = (
        f"```java\n{CONTEXT}\n```\n\nYou are a professional Java programmer, and I will provide "
        "you with a buggy function named `abbreviate`, without specifying the location of the "
        "bug. Your task is to identify and fix any issues within the given function based on "
        "the provided abstract Java class context information along with the following buggy "
        f"function.\n\n```java\n{BUGGY}\n```\n"
    )
    return {
        "task_id": "b41c" + "3" * 60,
        "project": "Lang",
        "bug_id": 12,
        "testmethods": ["org.apache.commons.lang3.StringUtilsTest::testAbbreviateNull"],
        "source_dir": "src/main/java",
        "location": "src/main/java/org/apache/commons/lang3/StringUtils.java",
        "start": 14,
        "end": 19,
        "buggy": BUGGY,
        "fix": FUNCTION,
        "function_signature": (
            "public static String abbreviate(final String str, final int maxWidth)"
        ),
        "prompt_complete": complete,
        "prompt_chat": chat,
        "import_context": "",
        "class_signature": "public class StringUtils",
        "class_field_context": "",
        "class_function_signature_context": "",
        "code_context": _commented(CONTEXT),
        "test_sources": [TEST_SOURCE],
        "source": SOURCE.replace(FUNCTION, BUGGY),
        "indent": "    ",
    }


def dd_rows() -> list[dict[str, Any]]:
    rows = []
    for code, defective, task_id in ((BUGGY, True, "c0de" + "4" * 60),
                                      (FUNCTION, False, "c0de" + "5" * 60)):
        complete = (
            f"{_commented(CONTEXT)}\n\n You are a professional Java programmer, please identify "
            "any defects in the function named `abbreviate` based on the provided abstract Java "
            f"class context information and the following function code.\n{COMMENT}\n{code}\n"
            "Question: Please determine whether the above-mentioned Java function has any "
            "defects?\nA. Yes, it has defects\nB. No, it doesn't have defects\nAnswer:"
        )
        chat = (
            f"```java\n{CONTEXT}\n```\n\nI want you to act as a code defect detector ...\n\n"
            f"```java\n{COMMENT}\n{code}\n```\nPlease respond with either \"A. Yes, there are "
            "defects\" or \"B. No, there are no defects\" based on your assessment."
        )
        rows.append({
            "task_id": task_id,
            "project": "Lang",
            "bug_id": 12,
            "code": code,
            "function_signature": "public static String abbreviate(final String str, "
            "final int maxWidth)",
            "prompt_complete": complete,
            "prompt_chat": chat,
            "defective": defective,
        })
    return rows


def rows_of(kind: str) -> list[dict[str, Any]]:
    builders = {"fcg": fcg_row, "ctg": ctg_row, "itg": itg_row, "apr": apr_row}
    if kind == "dd":
        return dd_rows()
    return [builders[kind]()]


ARTIFACT_KEYS = {
    "fcg": "code_ujb_complete",
    "ctg": "code_ujb_testgen",
    "itg": "code_ujb_testgenissue",
    "apr": "code_ujb_repair",
    "dd": "code_ujb_defectdetection",
}


def write_artifact_json(path: Path, kind: str, rows: list[dict[str, Any]] | None = None) -> Path:
    """The artifact's task_<kind>_bench_<suffix>.json shape."""
    body = {ARTIFACT_KEYS[kind]: rows if rows is not None else rows_of(kind)}
    path.write_text(json.dumps(body, indent=4, ensure_ascii=False), encoding="utf-8")
    return path


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_parquet(path: Path, rows: list[dict[str, Any]]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(copy.deepcopy(rows)), path)
    return path
