"""HumanEval-X (CodeGeeX, KDD 2023): 164 problems in Python, C++, Java, JavaScript, Go and Rust.

Files are ``humaneval_<lang>.jsonl`` or ``.jsonl.gz`` with the keys task_id, prompt, declaration,
canonical_solution, test and example_test (Python and Java add ``text``; Go adds ``import``,
``docstring`` and ``test_setup``). Generation tasks evaluate ``prompt + completion + test``;
translation tasks evaluate ``target declaration + generation + target test``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codereval.errors import UserError
from codereval.model import Language, Task, TestKind, TestSpec
from codereval.storage.jsonl import iter_jsonl

LANGUAGES: tuple[str, ...] = ("python", "cpp", "java", "js", "go", "rust")
# The task_id prefix each file uses ("CPP/0", "JavaScript/12", ...).
ID_PREFIX = {
    "python": "Python",
    "cpp": "CPP",
    "java": "Java",
    "js": "JavaScript",
    "go": "Go",
    "rust": "Rust",
}
# How the paper names each language in the translation header.
DISPLAY_NAME = {
    "python": "Python",
    "cpp": "C++",
    "java": "Java",
    "js": "JavaScript",
    "go": "Go",
    "rust": "Rust",
}
OFFICIAL_URL = (
    "https://github.com/THUDM/CodeGeeX/raw/main/codegeex/benchmark/humaneval-x/"
    "{lang}/data/humaneval_{lang}.jsonl.gz"
)
REQUIRED_KEYS = ("task_id", "prompt", "declaration", "canonical_solution", "test")
EXTRA_KEYS = {"go": ("import", "docstring", "test_setup")}

# The last function declared in a declaration is the task's entry point.
_ENTRY_PATTERNS = {
    "python": re.compile(r"^def\s+(\w+)\s*\(", re.M),
    "cpp": re.compile(r"(\w+)\s*\([^()]*\)\s*\{?\s*$", re.M),
    "java": re.compile(r"(\w+)\s*\([^()]*\)\s*(?:throws[^{]*)?\{?\s*$", re.M),
    "js": re.compile(r"(?:const|let|var|function)\s+(\w+)", re.M),
    "go": re.compile(r"^func\s+(\w+)\s*\(", re.M),
    "rust": re.compile(r"^\s*(?:pub\s+)?fn\s+(\w+)", re.M),
}


@dataclass(frozen=True, kw_only=True)
class Problem:
    """One line of a HumanEval-X file, with the language it belongs to."""

    language: str
    task_id: str
    prompt: str
    declaration: str
    canonical_solution: str
    test: str
    example_test: str
    docstring: str
    go_import: str
    go_test_setup: str
    entry_point: str

    @property
    def number(self) -> str:
        return self.task_id.rpartition("/")[2]


def check_language(language: str) -> str:
    if language not in LANGUAGES:
        raise UserError(
            f"unknown HumanEval-X language {language!r}",
            hint=f"choose one of: {', '.join(LANGUAGES)}",
        )
    return language


def data_file(language: str, *, data_dir: Path | None) -> Path:
    """The local file for a language: humaneval_<lang>.jsonl.gz or .jsonl in data_dir."""
    check_language(language)
    url = OFFICIAL_URL.format(lang=language)
    if data_dir is None:
        raise UserError(
            f"HumanEval-X {language} needs its data file; pass --data-dir DIR holding "
            f"humaneval_{language}.jsonl.gz",
            hint=f"download it from {url}",
        )
    for name in (f"humaneval_{language}.jsonl.gz", f"humaneval_{language}.jsonl"):
        path = data_dir / name
        if path.is_file():
            return path
    raise UserError(
        f"HumanEval-X data file not found: {data_dir / f'humaneval_{language}.jsonl.gz'}",
        hint=f"download it from {url} into {data_dir}",
    )


def entry_point(language: str, declaration: str) -> str:
    names = _ENTRY_PATTERNS[language].findall(declaration)
    return str(names[-1]) if names else ""


def _text(record: dict[str, Any], key: str, *, where: str) -> str:
    value = record.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise UserError(f"{where}: key {key!r} must be a string, got {type(value).__name__}")
    return value


def load_problems(language: str, *, data_dir: Path | None) -> list[Problem]:
    """Every problem of one language's file, in file order."""
    path = data_file(language, data_dir=data_dir)
    problems: list[Problem] = []
    for lineno, record in iter_jsonl(path):
        where = f"{path}:{lineno}"
        wanted = (*REQUIRED_KEYS, *EXTRA_KEYS.get(language, ()))
        missing = [key for key in wanted if key not in record]
        if missing:
            raise UserError(
                f"{where}: not a HumanEval-X record (missing {', '.join(missing)})",
                hint=f"expected the keys {', '.join(REQUIRED_KEYS)}",
            )
        declaration = _text(record, "declaration", where=where)
        name = entry_point(language, declaration)
        if not name:
            raise UserError(f"{where}: no function declared in 'declaration'")
        problems.append(
            Problem(
                language=language,
                task_id=_text(record, "task_id", where=where),
                prompt=_text(record, "prompt", where=where),
                declaration=declaration,
                canonical_solution=_text(record, "canonical_solution", where=where),
                test=_text(record, "test", where=where),
                example_test=_text(record, "example_test", where=where),
                docstring=_text(record, "text", where=where)
                or _text(record, "docstring", where=where),
                go_import=_text(record, "import", where=where),
                go_test_setup=_text(record, "test_setup", where=where),
                entry_point=name,
            )
        )
    if not problems:
        raise UserError(f"{path}: no problems in the file", hint="is it a HumanEval-X file?")
    return problems


def _task(problem: Problem, *, benchmark: str, prompt: str, prefix: str, mode: str) -> Task:
    extra = {
        "mode": mode,
        # The text the program puts before the generated code (see runners/program_source.py).
        "prefix": prefix,
        "declaration": problem.declaration,
        "example_test": problem.example_test,
    }
    if problem.language == "go":
        extra["go_import"] = problem.go_import
        extra["go_test_setup"] = problem.go_test_setup
    return Task(
        task_id=problem.task_id,
        benchmark=benchmark,
        language=Language(problem.language),
        name=problem.entry_point,
        signature=problem.declaration.strip().splitlines()[-1].strip(),
        docstring=problem.docstring,
        reference=problem.canonical_solution,
        prompt=prompt,
        test=TestSpec(kind=TestKind.PROGRAM, code=problem.test, entry_point=problem.entry_point),
        extra=extra,
    )


def generation_task(problem: Problem) -> Task:
    prefix = problem.prompt
    if problem.language == "go" and problem.go_import:
        # The runner writes one import block of its own (see program_source.go_imports).
        prefix = prefix.replace(problem.go_import, "", 1)
    prompt = problem.prompt
    if problem.language == "rust":
        # Rust's `prompt` is only the doc comment: the model is shown it followed by the
        # declaration it continues, and the program is declaration + generation + test.
        prompt, prefix = problem.prompt + problem.declaration, problem.declaration
    return _task(
        problem,
        benchmark=f"humanevalx-{problem.language}",
        prompt=prompt,
        prefix=prefix,
        mode="generation",
    )


def load_humanevalx(language: str, *, data_dir: Path | None) -> list[Task]:
    """Generation tasks of one language."""
    return [generation_task(problem) for problem in load_problems(language, data_dir=data_dir)]


def translation_prompt(source: Problem, target: Problem) -> str:
    """CodeGeeX's translation prompt: a header, the source solution, the target declaration.

    No docstring on either side, as in the paper: the model sees only code. The layout follows
    CodeGeeX's ``read_translation_dataset`` (solution right-stripped, one newline around it).
    """
    src, tgt = DISPLAY_NAME[source.language], DISPLAY_NAME[target.language]
    return (
        f"code translation\n{src}:\n"
        f"{source.declaration}\n{source.canonical_solution.rstrip()}\n"
        f"{tgt}:\n{target.declaration}"
    )


def translation_task(source: Problem, target: Problem) -> Task:
    task = _task(
        target,
        benchmark=f"humanevalx-{source.language}-to-{target.language}",
        prompt=translation_prompt(source, target),
        prefix=target.declaration,
        mode="translation",
    )
    extra = dict(task.extra, source_language=source.language, source_task_id=source.task_id)
    return task.model_copy(update={"extra": extra})


def load_humanevalx_translation(source: str, target: str, *, data_dir: Path | None) -> list[Task]:
    """Translation tasks source -> target, paired by problem number."""
    check_language(source)
    check_language(target)
    if source == target:
        raise UserError(
            f"translation needs two different languages, got {source} -> {target}",
            hint=f"use humanevalx-{source} for generation",
        )
    sources = {p.number: p for p in load_problems(source, data_dir=data_dir)}
    tasks = []
    for problem in load_problems(target, data_dir=data_dir):
        partner = sources.get(problem.number)
        if partner is not None:
            tasks.append(translation_task(partner, problem))
    return tasks


__all__ = [
    "LANGUAGES",
    "Problem",
    "check_language",
    "data_file",
    "generation_task",
    "load_humanevalx",
    "load_humanevalx_translation",
    "load_problems",
    "translation_prompt",
    "translation_task",
]
