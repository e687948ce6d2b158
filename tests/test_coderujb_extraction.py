"""CoderUJB prompts, and what is kept of a model's raw output: the method, the test, the
defect-detection answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from ujb_rows import FUNCTION, fcg_row, rows_of, write_jsonl

from codereval.errors import UserError
from codereval.families.coderujb.dataset import load_coderujb
from codereval.families.coderujb.extraction import parse_dd_answer, split_signature
from codereval.model import Task
from codereval.prompting.extraction import extract
from codereval.prompting.prompts import PromptStyle, PromptVariant, build_prompt


def _task(tmp_path: Path, kind: str, index: int = 0) -> Task:
    return load_coderujb(write_jsonl(tmp_path / f"{kind}.jsonl", rows_of(kind)))[index]


# ------------------------------------------------------------------------------ prompts


def test_completion_prompt_is_the_datasets_text_stripped_and_ends_at_the_signature(
    tmp_path: Path,
) -> None:
    task = _task(tmp_path, "fcg")
    prompt = build_prompt(task)
    assert prompt.text == fcg_row()["prompt_complete"].strip()
    assert prompt.text.endswith("public static String abbreviate(final String str, "
                                "final int maxWidth) {")
    # The completion continues inside the body: the head is the signature it continues.
    assert prompt.head == "    public static String abbreviate(final String str, " \
        "final int maxWidth) {"
    assert prompt.messages() == [{"role": "user", "content": prompt.text}]


def test_chat_prompt_is_sent_after_the_originals_system_message(tmp_path: Path) -> None:
    task = _task(tmp_path, "apr")
    prompt = build_prompt(task, style=PromptStyle.CHAT)
    assert prompt.messages() == [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": task.extra["prompt_chat"].strip()},
    ]
    assert "buggy function named `abbreviate`" in prompt.text


def test_heads_per_kind(tmp_path: Path) -> None:
    assert build_prompt(_task(tmp_path, "ctg")).head == (
        "    @Test\n    public void testAbbreviateNull() {"
    )
    assert build_prompt(_task(tmp_path, "itg")).head == "    public void testAbbreviateNull() {"
    assert build_prompt(_task(tmp_path, "apr")).head == ""
    assert build_prompt(_task(tmp_path, "dd")).head == ""
    assert "// Fixed Function" in build_prompt(_task(tmp_path, "apr")).stop


def test_context_variants_do_not_exist_for_coderujb(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"does not exist for CoderUJB.*--prompt raw"):
        build_prompt(_task(tmp_path, "fcg"), variant=PromptVariant.ORACLE)


# ---------------------------------------------------------------------------- extraction

FCG_COMPLETION = """
        if (str == null) {
            return null; // a '{' in a comment and "}" in a string do not count
        }
        final String marker = "}";
        return str.length() <= maxWidth ? str : str.substring(0, maxWidth - 3) + "...";
    }

    /**
     * Abbreviates in the middle.
     */
    public static String abbreviateMiddle(final String str) {
        return str;
    }
"""


def test_a_completion_becomes_the_signature_and_body_through_its_closing_brace(
    tmp_path: Path,
) -> None:
    task = _task(tmp_path, "fcg")
    found = extract(FCG_COMPLETION, task=task, prompt=build_prompt(task))
    assert found.code is not None
    assert found.code.startswith("    public static String abbreviate(final String str, ")
    assert found.code.rstrip().endswith('+ "...";\n    }')
    assert "abbreviateMiddle" not in found.code
    assert "a '{' in a comment" in found.code


def test_a_completion_cut_off_at_the_token_limit_gives_no_code(tmp_path: Path) -> None:
    task = _task(tmp_path, "fcg")
    found = extract(
        "\n        if (str == null) {\n            return null;",
        task=task,
        prompt=build_prompt(task),
        finish_reason="length",
    )
    assert found.code is None and found.truncated
    unfinished = extract("\n        return str;\n", task=task, prompt=build_prompt(task))
    # Not cut off, just unbalanced: kept for the syntax check to judge, as the original does.
    assert unfinished.code is not None and unfinished.note == "unbalanced braces"


def test_apr_completion_is_the_fixed_function_up_to_the_next_marker(tmp_path: Path) -> None:
    task = _task(tmp_path, "apr")
    raw = "\n" + FUNCTION + "\n\n// Buggy Function\n    public static int other() { return 1; }\n"
    found = extract(raw, task=task, prompt=build_prompt(task))
    assert found.code == FUNCTION.strip("\n") + "\n"


CHAT_ANSWER = """Sure! The method `public static String abbreviate` should return null for null
input. Here is the corrected version:

```java
/**
 * Abbreviates a String using ellipses.
 */
public static String abbreviate(final String str, final int maxWidth) {
    if (str == null || str.length() <= maxWidth) {
        return str;
    }
    return str.substring(0, maxWidth - 3) + "...";
}
```

This checks `str == null` first, so no `{` is dereferenced.
"""


def test_a_chat_answer_gives_the_method_from_its_code_block_not_the_prose(
    tmp_path: Path,
) -> None:
    task = _task(tmp_path, "apr")
    found = extract(CHAT_ANSWER, task=task, prompt=build_prompt(task, style=PromptStyle.CHAT))
    assert found.code == (
        "public static String abbreviate(final String str, final int maxWidth) {\n"
        "    if (str == null || str.length() <= maxWidth) {\n"
        "        return str;\n"
        "    }\n"
        '    return str.substring(0, maxWidth - 3) + "...";\n'
        "}\n"
    )


def test_a_chat_test_keeps_its_annotation_as_the_original_puts_it_back(tmp_path: Path) -> None:
    task = _task(tmp_path, "ctg")
    answer = (
        "Here is the test:\n\n```java\n    @Test\n    public void testAbbreviateNull() {\n"
        "        assertNull(StringUtils.abbreviate(null, 4));\n    }\n```\n"
    )
    found = extract(answer, task=task, prompt=build_prompt(task, style=PromptStyle.CHAT))
    assert found.code == (
        "@Test\npublic void testAbbreviateNull() {\n"
        "        assertNull(StringUtils.abbreviate(null, 4));\n    }\n"
    )


def test_a_chat_answer_that_changed_a_modifier_still_gives_the_method(tmp_path: Path) -> None:
    task = _task(tmp_path, "fcg")
    method = "static String abbreviate(String str, int maxWidth) {\n    return str;\n}\n"
    answer = f"```java\n{method}```"
    found = extract(answer, task=task, prompt=build_prompt(task, style=PromptStyle.CHAT))
    assert found.code == method
    assert "changed the signature" in found.note


def test_a_chat_answer_without_the_method_gives_no_code(tmp_path: Path) -> None:
    task = _task(tmp_path, "fcg")
    found = extract(
        "I cannot help with that without more context.",
        task=task,
        prompt=build_prompt(task, style=PromptStyle.CHAT),
    )
    assert found.code is None and "does not define abbreviate" in found.note


def test_split_signature_sets_annotations_apart() -> None:
    cut = split_signature("@Test(expected = IllegalArgumentException.class)\n"
                          "    public void testX() throws Exception")
    assert cut.annotations == "@Test(expected = IllegalArgumentException.class)\n"
    assert cut.declaration == "public void testX"
    plain = split_signature("public static int f(int a) // the answer\n")
    assert plain == split_signature("public static int f(int a)")
    assert plain.annotations == "" and plain.declaration == "public static int f"


def test_dd_extraction_keeps_the_answer_text(tmp_path: Path) -> None:
    task = _task(tmp_path, "dd")
    prompt = build_prompt(task)
    found = extract(" A. Yes, it has defects\nQuestion: and this one?", task=task, prompt=prompt)
    assert found.code == "A. Yes, it has defects"
    assert extract("   ", task=task, prompt=prompt).code is None


# ------------------------------------------------------------------ defect-detection answers


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (" A. Yes, it has defects", True),
        ("B. No, it doesn't have defects", False),
        ("B. No, there are no defects", False),
        ("**Answer: A**\n\nThe method dereferences `str` before checking it.", True),
        ("Answer: B", False),
        ("Yes. The null check comes too late.", True),
        ("No.\n\nThe method handles every input.", False),
        ("After reviewing the method, there are several issues: the null check is missing.", True),
        ("The function does not have any defects; it handles null and short inputs.", False),
        ("I do not see any defects in this function.", False),
        ("The method has a defect. No other problems were found.", True),
        ("Note: this method is fine and does not have defects.", False),
        ("Note: the loop may overflow.", None),
        ("No. It is correct, although it has checks that has defects elsewhere.", False),
        ("It is hard to say without the callers.", None),
        ("", None),
    ],
)
def test_dd_answers_read_by_the_first_clear_statement(answer: str, expected: bool | None) -> None:
    assert parse_dd_answer(answer) is expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (" A. Yes, it has defects", True),
        ("B. No, there are no defects", False),
        # The original's substring rules: "No" inside "Note" reads as "no defect" ...
        ("Note: the loop may overflow.", False),
        # ... and a defect phrase anywhere wins over an answer that said no first.
        ("No. It is correct, although it has checks that has defects elsewhere.", True),
        ("It is hard to say.", None),
    ],
)
def test_dd_answers_under_compat_follow_the_original_rule(
    answer: str, expected: bool | None
) -> None:
    assert parse_dd_answer(answer, compat=True) is expected
