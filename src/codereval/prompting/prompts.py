"""Prompts for a task: CoderEval's official raw and human-label prompts, context variants, chat.

The official CoderEval prompts are reproduced byte for byte (``python_prompt``,
``java_raw_prompt``, ``java_human_prompt``); the context variants put the context *before* the
official prompt, so the text the model continues is unchanged. HumanEval(-X) tasks use the
prompts their benchmark module builds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from codereval.benchmarks import family_of
from codereval.errors import UserError
from codereval.model import Language, Task
from codereval.source.skeleton import java_skeleton, python_skeleton


class PromptVariant(StrEnum):
    RAW = "raw"  # the original docstring
    HUMAN = "human"  # the human-written description
    ORACLE = "oracle"  # raw + the context tokens the reference uses
    ALL = "all"  # raw + everything the file makes available
    SKELETON = "skeleton"  # raw + the file's skeleton: imports, fields, signatures


class PromptStyle(StrEnum):
    COMPLETION = "completion"  # the model continues the text
    CHAT = "chat"  # system + user messages; the model answers with a fenced function


LANGUAGE_NAMES: dict[Language, str] = {
    Language.PYTHON: "Python",
    Language.JAVA: "Java",
    Language.CPP: "C++",
    Language.JS: "JavaScript",
    Language.GO: "Go",
    Language.RUST: "Rust",
}

FENCE_TAGS: dict[Language, str] = {
    Language.PYTHON: "python",
    Language.JAVA: "java",
    Language.CPP: "cpp",
    Language.JS: "javascript",
    Language.GO: "go",
    Language.RUST: "rust",
}

# A completion of a CoderEval Python prompt continues an indented body: anything that starts
# again at column 0 is past the function.
PYTHON_STOPS: tuple[str, ...] = ("\ndef ", "\nclass ", "\nif __name__", "\n@", "\nprint(", "\n#")

SYSTEM_PROMPT = (
    "You are an expert {language} programmer. You write one function that fits into an "
    "existing project."
)

CHAT_INSTRUCTION = (
    "Complete the following {language} function `{name}`. Reply with the whole function "
    "(signature and body) in a single ```{tag} fenced code block and nothing else."
)


@dataclass(frozen=True, kw_only=True)
class Prompt:
    """What a backend sends for one task.

    ``text`` is the text to continue (completion style) or the user message (chat style).
    ``head`` is the code a completion continues: extraction joins it with completion-style
    output to get a whole function.
    """

    task_id: str
    variant: PromptVariant
    style: PromptStyle
    text: str
    head: str = ""
    system: str = ""
    stop: tuple[str, ...] = ()

    def messages(self) -> list[dict[str, str]]:
        if self.style is PromptStyle.COMPLETION:
            return [{"role": "user", "content": self.text}]
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.text},
        ]

    @property
    def label(self) -> str:
        """Stored with each sample: which prompt produced it."""
        return f"{self.variant}/{self.style}"

    def render(self) -> str:
        """Human-readable form for --dry-run."""
        if self.style is PromptStyle.COMPLETION:
            return self.text
        return f"[system]\n{self.system}\n[user]\n{self.text}"


# ----------------------------------------------------------------------- official templates


def python_prompt(signature: str, docstring: str) -> str:
    """CoderEval's Python prompt (raw and human label alike): ends inside the body."""
    return signature + '\n\t"""\n\t' + docstring + '\n\t"""\n\t'


def java_raw_prompt(signature: str, docstring: str) -> str:
    """CoderEval's Java raw prompt; ``docstring`` is the raw Javadoc (it ends with a newline)."""
    return docstring + "\n" + signature


def java_human_prompt(signature: str, human_label: str) -> str:
    return "/**" + human_label + "**/\n" + signature


def java_prompt_signature(task: Task) -> str:
    """The declaration as the official Java prompts show it: through the body's opening brace.

    Taken from the reference when there is one (the official signatures keep the reference's
    own spacing, e.g. ``...(int a,int b){`` but ``... throws IOException {``).
    """
    code = task.reference
    if not code.strip():
        return task.signature + "{" if task.signature else ""
    depth = 0
    index = 0
    while index < len(code):
        char = code[index]
        if code.startswith("/*", index):
            end = code.find("*/", index + 2)
            index = len(code) if end < 0 else end + 2
            continue
        if code.startswith("//", index):
            end = code.find("\n", index)
            index = len(code) if end < 0 else end
            continue
        if char in "\"'":
            index = _skip_quoted(code, index)
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "{" and depth == 0:
            head = _strip_java_comments(code[: index + 1])
            return " ".join(head.split())
        index += 1
    return task.signature + "{"


def _skip_quoted(code: str, start: int) -> int:
    quote = code[start]
    index = start + 1
    while index < len(code) and code[index] != quote:
        index += 2 if code[index] == "\\" else 1
    return index + 1


def _strip_java_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def base_prompt(task: Task, *, human: bool) -> str:
    """The official CoderEval prompt for a task, from its signature and docstring/label."""
    description = task.human_label if human else task.docstring
    if task.language is Language.PYTHON:
        if not task.signature:
            raise UserError(f"task {task.task_id}: no signature to build a prompt from")
        return python_prompt(task.signature, description)
    if task.language is Language.JAVA:
        signature = java_prompt_signature(task)
        if not signature:
            raise UserError(f"task {task.task_id}: no signature to build a prompt from")
        if human:
            return java_human_prompt(signature, description)
        return java_raw_prompt(signature, description)
    raise UserError(
        f"task {task.task_id}: CoderEval prompts exist for Python and Java, not {task.language}"
    )


# ----------------------------------------------------------------------------- context


def _comment(language: Language) -> str:
    return "#" if language is Language.PYTHON else "//"


def oracle_context_text(task: Task) -> str:
    oracle = task.oracle_context
    if oracle is None or oracle.empty:
        return ""
    mark = _comment(task.language)
    lines = [f"{mark} Names from the project this function may use:"]
    for title, names in (
        ("functions and methods", oracle.apis),
        ("classes", oracle.classes),
        ("variables and fields", oracle.vars),
    ):
        if names:
            lines.append(f"{mark}   {title}: {', '.join(names)}")
    return "\n".join(lines) + "\n"


def all_context_text(task: Task) -> str:
    context = task.all_context
    if context is None:
        return ""
    mark = _comment(task.language)
    lines = [f"{mark} What the file makes available:"]
    for title, names in (
        ("imports", context.imports),
        ("file", context.file),
        ("class", context.class_),
        ("class members", context.class_level),
    ):
        if names:
            lines.append(f"{mark}   {title}: {' '.join(names)}")
    return "\n".join(lines) + "\n" if len(lines) > 1 else ""


def skeleton_text(task: Task) -> str:
    if not task.file_content.strip():
        return ""
    lineno = task.location.lineno if task.location else 0
    if task.language is Language.PYTHON:
        return python_skeleton(task.file_content, exclude=task.name, exclude_lineno=lineno)
    if task.language is Language.JAVA:
        return java_skeleton(task.file_content, exclude=task.name, exclude_lineno=lineno)
    return ""


def context_text(task: Task, variant: PromptVariant) -> str:
    if variant is PromptVariant.ORACLE:
        return oracle_context_text(task)
    if variant is PromptVariant.ALL:
        return all_context_text(task)
    if variant is PromptVariant.SKELETON:
        return skeleton_text(task)
    return ""


# ------------------------------------------------------------------------------ builders


def is_program_task(task: Task) -> bool:
    """HumanEval-family tasks: a ready prompt, tested as a whole program."""
    return task.benchmark.startswith("humaneval")


def build_prompt(
    task: Task,
    *,
    variant: PromptVariant = PromptVariant.RAW,
    style: PromptStyle = PromptStyle.COMPLETION,
) -> Prompt:
    """The prompt for one task in the chosen variant and style."""
    family = family_of(task)
    own = family.build_prompt(task, variant=variant, style=style) if family else None
    if own is not None:
        return own
    if is_program_task(task):
        return _program_prompt(task, variant=variant, style=style)
    head = base_prompt(task, human=variant is PromptVariant.HUMAN)
    context = context_text(task, variant)
    language = LANGUAGE_NAMES[task.language]
    tag = FENCE_TAGS[task.language]
    if style is PromptStyle.COMPLETION:
        separator = "\n" if context and not context.endswith("\n\n") else ""
        stop = PYTHON_STOPS if task.language is Language.PYTHON else ()
        return Prompt(
            task_id=task.task_id,
            variant=variant,
            style=style,
            text=context + separator + head,
            head=head,
            stop=stop,
        )
    parts = [CHAT_INSTRUCTION.format(language=language, name=task.name, tag=tag)]
    if context:
        parts.append(f"Context from the same file:\n```{tag}\n{context.rstrip()}\n```")
    parts.append(f"```{tag}\n{head.rstrip()}\n```")
    return Prompt(
        task_id=task.task_id,
        variant=variant,
        style=style,
        text="\n\n".join(parts),
        head=head,
        system=SYSTEM_PROMPT.format(language=language),
    )


def _program_prompt(task: Task, *, variant: PromptVariant, style: PromptStyle) -> Prompt:
    if variant not in (PromptVariant.RAW, PromptVariant.HUMAN):
        raise UserError(
            f"prompt variant {variant!s} needs project context; {task.benchmark} tasks have none",
            hint="use --prompt raw",
        )
    # The HumanEval-X module builds generation and translation prompts at load time.
    text = task.prompt
    if not text:
        raise UserError(f"task {task.task_id}: the benchmark gave no prompt")
    language = LANGUAGE_NAMES[task.language]
    tag = FENCE_TAGS[task.language]
    if style is PromptStyle.COMPLETION:
        stop = PYTHON_STOPS if task.language is Language.PYTHON else ()
        return Prompt(
            task_id=task.task_id, variant=variant, style=style, text=text, head=text, stop=stop
        )
    user = (
        CHAT_INSTRUCTION.format(language=language, name=task.name, tag=tag)
        + f"\n\n```{tag}\n{text.rstrip()}\n```"
    )
    return Prompt(
        task_id=task.task_id,
        variant=variant,
        style=style,
        text=user,
        head=text,
        system=SYSTEM_PROMPT.format(language=language),
    )


def build_prompts(
    tasks: list[Task],
    *,
    variant: PromptVariant = PromptVariant.RAW,
    style: PromptStyle = PromptStyle.COMPLETION,
) -> list[Prompt]:
    return [build_prompt(task, variant=variant, style=style) for task in tasks]
