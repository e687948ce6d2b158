"""CoderUJB's functional code generation (FCG) and code-based test generation (CTG) rows, made
from one bug's fixed version and its function-test map, by the rules of CoderUJB's
``extract_task_complete.py`` and ``extract_task_testgen.py`` (docs/coderujb.md).

- **FCG**: a source method run by at least two tests, at least 256 characters long, with a
  comment of at least 128 characters holding ``/* */``, tested by tests named ``*test*`` whose
  class is the method's class's test class, with a tested rate (its executable lines over its
  rows) of at least 0.6; the tests with the lowest line rate first, at most three.
- **CTG**: a test method at least 256 characters long with such a comment, whose covered
  methods (outside constructors) belong to exactly one class, the one its class tests.
- Each name is taken once over all projects (the first candidate in CoderUJB's seeded order
  wins, whether it passes the later checks or not).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codereval.families.coderujb.rebuild.coverage_map import Mapping
from codereval.families.coderujb.rebuild.javasource import (
    ContextError,
    Function,
    JavaSource,
    code_context,
    commented,
)
from codereval.families.coderujb.rebuild.tasks import CONTEXT_TOKENS, Truncate, sha256

FCG_INSTRUCTION = (
    "You are a professional Java programmer, please create a function named `{function_name}` "
    "based on the provided abstract Java class context information and the following natural "
    "language annotations.")
FCG_COMPLETE = "{code_context}\n\n// " + FCG_INSTRUCTION + "\n\n{nl_context}"
FCG_CHAT = ("```java\n{code_context}\n```\n\n" + FCG_INSTRUCTION
            + "\n\n```java\n{nl_context}\n```\n")
CTG_INSTRUCTION = (
    "You are a professional Java test case writer, please create a test case named "
    "`{function_name}` for the `{be_test_class_name}` class, utilizing the provided abstract "
    "Java class context information and the following natural language annotations.")
CTG_COMPLETE = "{code_context}\n\n// " + CTG_INSTRUCTION + "\n\n{nl_context}"
CTG_CHAT = ("```java\n{code_context}\n```\n\n" + CTG_INSTRUCTION
            + "\n\n```java\n{nl_context}\n```\n")
CTG_CONTEXT = (
    "// Abstract Java Tested Class\n{be_test_import_context}\n\n{be_test_class_signature} {{\n"
    "{be_test_class_field_context}\n\n{be_test_class_function_signature_context}\n}}\n\n"
    "// Abstract Java Test Class\n{test_import_context}\n\n{test_class_signature} {{\n"
    "{test_class_field_context}\n\n{test_class_function_signature_context}\n}}")
SEED = 42
MIN_SOURCE = 256
MIN_COMMENT = 128
MIN_TESTED_RATE = 0.6
MAX_TESTS = 3

# A file's text at the bug's fixed revision, by its path below the build root (None: absent).
ReadFile = Callable[[str], str | None]


@dataclass
class SeenNames:
    """Function names already taken, over every project (CoderUJB deduplicates globally)."""

    fcg: set[str] = field(default_factory=set)
    ctg: set[str] = field(default_factory=set)


def strip_test(name: str) -> str:
    """CoderUJB's class-name normalisation: every Tests/Test/tests/test removed."""
    return name.replace("Tests", "").replace("Test", "").replace("tests", "").replace("test", "")


def _simple(qualified: str) -> str:
    return qualified.rsplit(".", 1)[-1]


def _documented(function: Function) -> bool:
    return (len(function.code) >= MIN_SOURCE and len(function.comment) >= MIN_COMMENT
            and "/*" in function.comment and "*/" in function.comment)


def _indent(function: Function) -> str:
    first = function.source.split("\n", 1)[0]
    return first[:len(first) - len(first.lstrip())]


def _truncated(text: str, truncate: Truncate | None) -> str:
    if truncate is None:
        return text
    cut = truncate(text, CONTEXT_TOKENS, False)
    return "\n".join(cut.split("\n")[1:]) if cut != text else text


class _Files:
    def __init__(self, read: ReadFile) -> None:
        self.read = read
        self.parsed: dict[str, JavaSource | None] = {}

    def get(self, path: str) -> JavaSource | None:
        if path not in self.parsed:
            text = self.read(path)
            self.parsed[path] = JavaSource(text) if text is not None else None
        return self.parsed[path]


def _groups(mappings: Sequence[Mapping], key: Callable[[Mapping], str]) -> list[list[Mapping]]:
    grouped: dict[str, list[Mapping]] = {}
    for mapping in mappings:
        if "<" not in mapping.be_test_function_name:
            grouped.setdefault(key(mapping), []).append(mapping)
    candidates = list(grouped.values())
    random.Random(SEED).shuffle(candidates)
    return candidates


def fcg_rows(*, project: str, bug_id: str, src_dir: str, mappings: Sequence[Mapping],
             read: ReadFile, seen: SeenNames, truncate: Truncate | None = None,
             ) -> list[dict[str, Any]]:
    files = _Files(read)
    rows = []
    for group in _groups(mappings, lambda m: f"{m.be_test_class_name}::"
                         f"{m.be_test_function_name}::{m.be_test_function_signature}"):
        first = group[0]
        if len(group) < 2:
            continue
        location = f"{src_dir}/{first.be_test_class_file}"
        source = files.get(location)
        if source is None:
            continue
        try:
            parts = source.class_context()
        except ContextError:
            continue
        last = int(first.line_numbers[-1]) if first.line_numbers else -1
        # CoderUJB compares Cobertura's 1-based line with the parser's 0-based rows.
        chosen: Function | None = None
        for function in source.functions():
            if function.name == first.be_test_function_name and \
                    function.start <= last <= function.end and \
                    (chosen is None or chosen.code in function.code):
                chosen = function
        if chosen is None or not chosen.complete or not _documented(chosen):
            continue
        tested = [m for m in group if "test" in m.test_function.lower()]
        if len(tested) < 2 or chosen.end == chosen.start:
            continue
        lines = {n for m in tested for n in m.line_numbers}
        rate = len(lines) / (chosen.end - chosen.start)
        name = chosen.name
        if name in seen.fcg:
            continue
        seen.fcg.add(name)
        file_class = Path(location).stem
        if not any(strip_test(_simple(m.test_file)) == file_class for m in tested):
            continue
        if rate < MIN_TESTED_RATE:
            continue
        methods = sorted((m for m in tested if file_class in _simple(m.test_file)
                          and strip_test(_simple(m.test_file)) == file_class),
                         key=lambda m: m.method_line_rate)
        testmethods = list(dict.fromkeys(f"{m.test_file}::{m.test_function}"
                                         for m in methods))[:MAX_TESTS]
        if not testmethods:
            continue
        context = _truncated(code_context(parts), truncate)
        nl_context = f"{chosen.comment}\n{_indent(chosen)}{chosen.signature}" + "{\n"
        complete = FCG_COMPLETE.format(code_context=commented(context), function_name=name,
                                       nl_context=nl_context)
        chat = FCG_CHAT.format(code_context=context, function_name=name, nl_context=nl_context)
        rows.append({
            **_function_columns("complete", project=project, bug_id=bug_id, source_dir=src_dir,
                                location=location, function=chosen, complete=complete,
                                chat=chat),
            "testmethods": testmethods, **parts.__dict__, "code_context": commented(context),
            "source": source.text, "function_tested_rate": rate,
        })
    return rows


def _function_columns(tag: str, *, project: str, bug_id: str, source_dir: str, location: str,
                      function: Function, complete: str, chat: str) -> dict[str, Any]:
    """The columns FCG and CTG rows share: the id (CoderUJB's, from the kind's tag), where the
    method is, its text and the prompts with and without its signature."""
    return {
        "task_id": sha256(f"{tag}|{project}|{bug_id}|{location}|{function.name}|"
                          f"{function.start}|{function.end}"),
        "project": project, "bug_id": bug_id, "source_dir": source_dir, "location": location,
        "start": function.start, "end": function.end, "function": function.source,
        "comment": function.comment, "function_name": function.name,
        "function_signature": function.signature, "prompt_complete": complete,
        "prompt_chat": chat, "prompt_complete_with_comment": with_comment(complete),
        "prompt_chat_with_comment": with_comment(chat), "indent": _indent(function),
    }


def with_comment(prompt: str) -> str:
    """The prompt up to the last line closing a comment (never its first line), then a
    newline: the prompt without the function's signature."""
    lines = prompt.splitlines()
    for index in range(len(lines) - 1, 0, -1):
        if "*/" in lines[index]:
            lines = lines[:index + 1]
            break
    return "\n".join(lines) + "\n"


def ctg_rows(*, project: str, bug_id: str, src_dir: str, test_dir: str,
             mappings: Sequence[Mapping], read: ReadFile, seen: SeenNames,
             truncate: Truncate | None = None) -> list[dict[str, Any]]:
    files = _Files(read)
    rows = []
    for group in _groups(mappings, lambda m: f"{m.test_file}::{m.test_function}"):
        first = group[0]
        location = f"{test_dir}/{first.test_file.replace('.', '/')}.java"
        source = files.get(location)
        if source is None:
            continue
        function = next((f for f in source.functions() if f.name == first.test_function), None)
        if function is None or not function.complete or not _documented(function):
            continue
        if "test" not in function.name.lower():
            continue
        tested_class = strip_test(_simple(first.test_file))
        methods = [m for m in group if _simple(m.be_test_class_name) == tested_class]
        classes = list(dict.fromkeys(m.be_test_class_name for m in methods))
        if len(classes) != 1:
            continue
        under = files.get(f"{src_dir}/{methods[0].be_test_class_file}")
        if under is None:
            continue
        try:
            be_test, test = under.class_context(), source.class_context()
        except ContextError:
            continue
        name = function.name
        if name in seen.ctg:
            continue
        seen.ctg.add(name)
        context = _truncated(CTG_CONTEXT.format(
            **{f"be_test_{k}": v for k, v in be_test.__dict__.items()},
            **{f"test_{k}": v for k, v in test.__dict__.items()}).strip(), truncate)
        nl_context = f"{function.comment}\n{_indent(function)}{function.signature.strip()}" \
                     + " {\n"
        values = {"function_name": name, "be_test_class_name": _simple(classes[0]),
                  "nl_context": nl_context}
        complete = CTG_COMPLETE.format(code_context=commented(context), **values)
        chat = CTG_CHAT.format(code_context=context, **values)
        rows.append({
            **_function_columns("testgen", project=project, bug_id=bug_id, source_dir=test_dir,
                                location=location, function=function, complete=complete,
                                chat=chat),
            "testmethods": [f"{first.test_file}::{first.test_function}"],
            **{f"be_test_{k}": v for k, v in be_test.__dict__.items()},
            **{f"test_{k}": v for k, v in test.__dict__.items()},
            "source": source.text, "be_test_class_long_name": classes[0],
            "classmethods": [{"be_test_class_file": m.be_test_class_file,
                              "be_test_class_name": m.be_test_class_name,
                              "be_test_function_name": m.be_test_function_name,
                              "be_test_function_signature": m.be_test_function_signature,
                              "line_numbers": list(m.line_numbers),
                              "method_line_rate": m.method_line_rate} for m in methods],
        })
    return rows
