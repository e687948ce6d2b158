"""CoderUJB prompts: the datasets ship them ready, for base models and for chat models.

``prompt_complete`` is the text a base model continues (context as ``//`` comments, the
instruction, the Javadoc and the signature through its opening brace); ``prompt_chat`` is the
user message for a chat model (context and target in fenced blocks). The original harness
strips both and sends chat prompts after the system message "You are a helpful assistant.";
we do the same, so a model sees byte for byte what it saw in the paper.

A completion continues the prompt, so the code to splice starts inside it: the signature the
prompt ends with (FCG, CTG, ITG) is the ``head`` extraction joins with the completion. The
original harness gets the same text by cutting the echoed prompt after its last Javadoc
(``prompt_complete_with_comment``) or before the signature
(``prompt_complete_without_signature``).
"""

from __future__ import annotations

import re

from codereval.errors import UserError
from codereval.model import Task, UjbKind
from codereval.prompting.prompts import Prompt, PromptStyle, PromptVariant

# The original harness's system message for chat models (code_ujb/generate_api.py).
SYSTEM = "You are a helpful assistant."

# Where a completion has gone past the answer. Only markers that cannot sit inside a Java
# method: the original's base-model stop words also held "public" and "private", which cut
# bodies holding anonymous classes; the method's closing brace ends the code anyway.
_NEXT_TASK = "\n// You are a professional Java"
STOPS: dict[UjbKind, tuple[str, ...]] = {
    UjbKind.FCG: (_NEXT_TASK,),
    UjbKind.CTG: (_NEXT_TASK,),
    UjbKind.ITG: (_NEXT_TASK,),
    UjbKind.APR: (
        "// Provide a fix for the buggy function",
        "// Buggy Function",
        "// Fixed Function",
        "/* Buggy Function */",
        "/* Fixed Function */",
    ),
    # A defect-detection answer ends with the next question the model makes up.
    UjbKind.DD: ("\nQuestion:",),
}

# The dataset column whose text the echoed completion prompt is cut after.
_CUT_AFTER = {
    UjbKind.FCG: "prompt_complete_with_comment",
    UjbKind.CTG: "prompt_complete_with_comment",
    UjbKind.ITG: "prompt_complete_without_signature",
}


def completion_head(task: Task) -> str:
    """The code a completion continues: the signature the prompt ends with, through ``{``.

    Empty for APR and DD, whose prompts end before the answer starts.
    """
    assert task.ujb is not None
    column = _CUT_AFTER.get(task.ujb.kind)
    if column is None:
        return ""
    prompt = task.prompt.strip()
    cut = task.extra.get(column, "")
    if cut.strip() and prompt.startswith(cut):
        # The dataset's own cut point, as the original harness uses it.
        return prompt[len(cut) :]
    if cut.strip() and prompt.startswith(cut.rstrip()):
        # A cut text that ends in blank lines the stripped prompt lost.
        return re.sub(r"^[ \t]*\n", "", prompt[len(cut.rstrip()) :], flags=re.M, count=1)
    # Rows exported without the cut column: the prompt's last line holds the signature.
    return prompt.rsplit("\n", 1)[-1]


def build_ujb_prompt(
    task: Task,
    *,
    variant: PromptVariant = PromptVariant.RAW,
    style: PromptStyle = PromptStyle.COMPLETION,
) -> Prompt:
    """The dataset's prompt for a CoderUJB task, in completion or chat style."""
    if task.ujb is None:
        raise ValueError(f"task {task.task_id} is not a CoderUJB task")
    if variant is not PromptVariant.RAW:
        raise UserError(
            f"prompt variant {variant!s} does not exist for CoderUJB: its datasets ship "
            "one prompt per task (in completion and chat style)",
            hint="use --prompt raw, with --style completion or chat",
        )
    kind = task.ujb.kind
    if style is PromptStyle.COMPLETION:
        text = task.prompt.strip()
        if not text:
            raise UserError(f"task {task.task_id}: the dataset row has no prompt_complete")
        return Prompt(
            task_id=task.task_id,
            variant=variant,
            style=style,
            text=text,
            head=completion_head(task),
            stop=STOPS[kind],
        )
    text = task.extra.get("prompt_chat", "").strip()
    if not text:
        raise UserError(f"task {task.task_id}: the dataset row has no prompt_chat")
    return Prompt(
        task_id=task.task_id,
        variant=variant,
        style=style,
        text=text,
        system=SYSTEM,
        # Chat answers run on past the method in prose; extraction finds the method.
        stop=(),
    )


__all__ = ["STOPS", "SYSTEM", "build_ujb_prompt", "completion_head"]
