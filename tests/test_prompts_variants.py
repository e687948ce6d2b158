"""Context variants, chat style and skeletons put context before the unchanged official prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from codereval.errors import UserError
from codereval.families.codereval.records import load_records
from codereval.model import AllContext, Language, Location, OracleContext, Task
from codereval.prompting.prompts import PromptStyle, PromptVariant, base_prompt, build_prompt
from codereval.source.skeleton import java_skeleton, python_skeleton

FILE = '''import os
from typing import List

LIMIT = 10


class Store(Base):
    """A store."""

    name = "store"

    @property
    def size(self) -> int:
        return len(self.items)

    def keys(self):
        """Return the keys."""
        return list(self.items)


def helper(a,
           b):
    return a + b
'''


def _task(**changes: object) -> Task:
    base = Task(
        task_id="t1",
        benchmark="codereval-python",
        language=Language.PYTHON,
        name="keys",
        signature="def keys(self):",
        docstring="Return the keys.",
        human_label="List the keys of the store.",
        oracle_context=OracleContext(apis=("list",), classes=("Store",), vars=("items",)),
        all_context=AllContext(imports=("os", "typing"), file=("LIMIT", "helper")),
        location=Location(project="o/r", file_path="s.py", lineno=16, end_lineno=18),
        file_content=FILE,
    )
    return base.model_copy(update=changes)


@pytest.mark.parametrize("variant", ["oracle", "all", "skeleton"])
def test_context_variants_end_with_the_official_prompt(variant: str) -> None:
    task = _task()
    prompt = build_prompt(task, variant=PromptVariant(variant))
    official = base_prompt(task, human=False)
    assert prompt.text.endswith(official)
    assert prompt.head == official
    assert len(prompt.text) > len(official)


def test_oracle_context_lists_the_tokens() -> None:
    text = build_prompt(_task(), variant=PromptVariant.ORACLE).text
    assert "# Names from the project this function may use:" in text
    assert "classes: Store" in text and "variables and fields: items" in text


def test_python_skeleton_keeps_imports_fields_and_signatures_but_not_the_target() -> None:
    skeleton = python_skeleton(FILE, exclude="keys", exclude_lineno=16)
    assert skeleton.splitlines()[:3] == ["import os", "from typing import List", "LIMIT = 10"]
    assert "class Store(Base):" in skeleton
    assert '    name = "store"' in skeleton
    assert "    @property\n    def size(self) -> int:\n        ..." in skeleton
    assert "def helper(a,\n           b):\n    ..." in skeleton
    assert "keys" not in skeleton
    assert "return" not in skeleton


def test_java_skeleton_masks_comments_and_strings() -> None:
    source = (
        "package a.b;\nimport java.util.List;\n/** {not a brace} */\npublic class Foo {\n"
        '  private String url = "http://x{";\n  public int size() { return n; } // }\n'
        "  static int trim(String[] a){\n    return 0;\n  }\n}\n"
    )
    skeleton = java_skeleton(source, exclude="trim")
    assert skeleton == (
        "package a.b;\nimport java.util.List;\npublic class Foo {\n"
        '    private String url = "http://x{";\n    public int size();\n}\n'
    )


def test_chat_style_has_system_and_user_messages_with_the_prompt_fenced() -> None:
    prompt = build_prompt(_task(), variant=PromptVariant.HUMAN, style=PromptStyle.CHAT)
    messages = prompt.messages()
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    assert "```python" in user and "only" not in messages[0]["content"]
    assert "List the keys of the store." in user
    assert "single ```python fenced code block" in user


def test_humaneval_tasks_use_their_prompt_and_refuse_context_variants() -> None:
    task = Task(task_id="Python/0", benchmark="humanevalx-python", language=Language.PYTHON,
                name="f", prompt="def f(x):\n    \"\"\"Doc.\"\"\"\n")
    assert build_prompt(task).text == task.prompt
    with pytest.raises(UserError, match="needs project context"):
        build_prompt(task, variant=PromptVariant.ORACLE)


def test_skeleton_of_a_real_record(shared_data: Path) -> None:
    tasks = load_records(shared_data / "codereval" / "records_python_sample.json")
    task = next(t for t in tasks if t.name == "strip_root")
    prompt = build_prompt(task, variant=PromptVariant.SKELETON)
    skeleton = prompt.text[: -len(prompt.head)]
    assert "import os.path\n" in skeleton
    assert "class Dispositor:\n" in skeleton
    assert "def strip_root(" not in skeleton
