"""From raw model output to the code to inject."""

from __future__ import annotations

import ast

from codereval.model import Language, Task
from codereval.prompting.extraction import extract, fenced_blocks
from codereval.prompting.prompts import PromptStyle, build_prompt

PY = Task(
    task_id="p", benchmark="codereval-python", language=Language.PYTHON, name="strip_root",
    signature="def strip_root(path, root):", docstring="Remove root from path.",
)
JAVA = Task(
    task_id="j", benchmark="codereval-java", language=Language.JAVA, name="trim",
    docstring="/** \n * Trim.\n */\n",
    reference="public static String[] trim(String[] array){\n  return array;\n}",
)


def _extract(task: Task, raw: str, *, chat: bool = False, finish: str = "stop") -> tuple:
    style = PromptStyle.CHAT if chat else PromptStyle.COMPLETION
    result = extract(raw, task=task, prompt=build_prompt(task, style=style), finish_reason=finish)
    return result.code, result.truncated


def test_completion_is_joined_with_the_official_prompt() -> None:
    code, truncated = _extract(PY, "return path[len(root):]\n")
    assert code == (
        'def strip_root(path, root):\n\t"""\n\tRemove root from path.\n\t"""\n'
        "\treturn path[len(root):]\n"
    )
    assert not truncated


def test_completion_stops_at_new_top_level_code() -> None:
    code, _ = _extract(PY, "return root\n\ndef other():\n    pass\nprint(1)\n")
    assert code is not None and "other" not in code and code.endswith("\treturn root\n")


def test_space_indented_continuation_of_a_tab_prompt_still_parses() -> None:
    code, _ = _extract(PY, "if root:\n        return path\n    return root\n")
    assert code is not None
    ast.parse(code)
    assert "\t" not in code


def test_chat_answer_picks_the_fenced_block_defining_the_target() -> None:
    raw = (
        "Sure! First a helper:\n```python\ndef unrelated():\n    pass\n```\n"
        "And the function:\n```python\nimport os\nimport sys\n\n@cache\n"
        "def strip_root(path, root):\n    \"\"\"Doc.\"\"\"\n"
        "    return os.path.relpath(path, root)\n\n"
        "def extra():\n    return 1\n```\nHope this helps."
    )
    code, _ = _extract(PY, raw, chat=True)
    assert code == (
        "@cache\ndef strip_root(path, root):\n    \"\"\"Doc.\"\"\"\n    import os\n"
        "    return os.path.relpath(path, root)\n"
    )


def test_chat_answer_without_fences_drops_the_preamble_and_trailing_prose() -> None:
    raw = "Here it is:\n\ndef strip_root(path, root):\n    return path\n\nThis strips the root."
    code, _ = _extract(PY, raw, chat=True)
    assert code == "def strip_root(path, root):\n    return path\n"


def test_method_written_inside_a_class_is_taken_out_and_dedented() -> None:
    raw = "```python\nclass A:\n    def strip_root(self, path, root):\n        return path\n```"
    code, _ = _extract(PY, raw, chat=True)
    assert code == "def strip_root(self, path, root):\n    return path\n"


def test_cut_off_output_gives_no_code_and_is_marked_truncated() -> None:
    code, truncated = _extract(PY, "if path.startswith(root):\n\t\treturn (", finish="length")
    assert code is None and truncated
    code, truncated = _extract(
        PY, "```python\ndef strip_root(path, root):\n    return [", chat=True, finish="length"
    )
    assert code is None and truncated


def test_empty_output_gives_no_code() -> None:
    assert _extract(PY, "   \n")[0] is None


def test_a_model_syntax_error_is_kept_for_the_runner() -> None:
    code, truncated = _extract(PY, "return path +\n")
    assert code is not None and code.endswith("return path +\n") and not truncated


def test_java_completion_is_cut_at_the_methods_closing_brace() -> None:
    code, _ = _extract(JAVA, "\n  return array;\n}\n\npublic void other(){}\n}")
    assert code == "public static String[] trim(String[] array){\n  return array;\n}\n"


def test_java_chat_keeps_annotations_and_skips_calls_and_strings() -> None:
    raw = (
        "```java\nimport java.util.*;\npublic class X {\n    /** doc */\n    @Override\n"
        "    public static String[] trim(String[] array) {\n        String s = \"}\";\n"
        "        return trim(array, s);\n    }\n}\n```"
    )
    code, _ = _extract(JAVA, raw, chat=True)
    assert code == (
        "@Override\npublic static String[] trim(String[] array) {\n"
        "    String s = \"}\";\n    return trim(array, s);\n}\n"
    )


def test_java_cut_off_method_gives_no_code() -> None:
    code, truncated = _extract(JAVA, "\n  for (String a : array) {\n", finish="length")
    assert code is None and truncated


def test_unclosed_last_fence_runs_to_the_end() -> None:
    blocks = fenced_blocks("text\n```python\nx = 1\n")
    assert len(blocks) == 1 and not blocks[0].closed and blocks[0].code == "x = 1\n"


HX_JAVA = Task(
    task_id="Java/0", benchmark="humanevalx-java", language=Language.JAVA, name="add",
    prompt="class Solution {\n    public int add(int a, int b) {\n",
    extra={"prefix": "class Solution {\n    public int add(int a, int b) {\n"},
)
HX_PY = Task(
    task_id="Python/0", benchmark="humanevalx-python", language=Language.PYTHON, name="add",
    prompt='def add(a, b):\n    """Add."""\n',
)


def test_humaneval_completions_stay_bodies_and_close_open_braces() -> None:
    assert _extract(HX_PY, "    return a + b\n\ndef other():\n")[0] == "    return a + b\n"
    assert _extract(HX_JAVA, "        return a + b;\n    }\n}\nclass X {}")[0] == (
        "        return a + b;\n    }\n}\n"
    )
    # Stopped right after the method: the class brace the prompt opened is closed for it.
    assert _extract(HX_JAVA, "        return a + b;\n    }")[0] == (
        "        return a + b;\n    }\n}\n"
    )


def test_humaneval_chat_answers_are_cut_back_to_the_body() -> None:
    raw = '```python\ndef add(a, b):\n    """Add."""\n    return a + b\n```'
    assert _extract(HX_PY, raw, chat=True)[0] == "    return a + b\n"
