"""CoderUJB's program repair (APR), defect detection (DD) and issue-based test generation (ITG)
rows, made from a rebuilt bug as CoderUJB's ``datasets/extract_task_*.py`` make them.

The rows have the published datasets' columns (0-based rows, prompts as CoderUJB writes them),
so ``load_coderujb`` reads them like the Hub's files. docs/coderujb.md ("Tasks from rebuilt
bugs") lists the rules followed and where they are written down.

- **APR**: bugs whose fix modifies one class, and in it exactly one function that is the same
  function on both sides (every changed line, and the line facing it in the other version,
  inside it; no nested functions). Lines are the fixed function's, in the fixed file.
- **DD**: the same bugs, two rows each: the buggy function (defective) and the fixed one.
- **ITG**: the APR bugs with an issue report (``--issues``: CoderUJB's ``bug_report.json``):
  the first trigger test, rewritten from the issue and its signature.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codereval.families.coderujb.rebuild.javasource import (
    ContextError,
    Function,
    JavaSource,
    code_context,
    commented,
)
from codereval.families.coderujb.rebuild.versions import BugVersions

APR_COMPLETE = (
    "{code_context}\n\n// You are a professional Java programmer, please fix the bug in the "
    "function named {function_name} based on the provided abstract Java class context "
    "information and the following buggy function.\n// Buggy Function\n{bug}\n\n"
    "// Fixed Function\n")
APR_CHAT = (
    "```java\n{code_context}\n```\n\nYou are a professional Java programmer, and I will provide "
    "you with a buggy function named `{function_name}`, without specifying the location of the "
    "bug. Your task is to identify and fix any issues within the given function based on the "
    "provided abstract Java class context information along with the following buggy "
    "function.\n\n```java\n{bug}\n```\n")
_QUESTION = ("Question: Please determine whether the above-mentioned Java function has any "
             "defects?\nA. Yes, it has defects\nB. No, it doesn't have defects\nAnswer:")
DD_COMPLETE = (
    "/**\n* Counts the number of set bits in the binary representation of a given integer.\n*/\n"
    "public static int bitcount(int n) {{\n    int count = 0;\n    while (n != 0) {{\n"
    "        n = (n ^ (n - 1));\n        count++;\n    }}\n    return count;\n}}\n"
    + _QUESTION + " A. Yes, it has defects\n\n"
    "/**\n * Reverses the order of a singly linked list.\n */\n"
    "public static Node reverse_linked_list(Node node) {{\n    Node prevnode = null;\n"
    "    Node nextnode;\n    while (node != null) {{\n        nextnode = node.getSuccessor();\n"
    "        node.setSuccessor(prevnode);\n        prevnode = node;\n        node = nextnode;\n"
    "    }}\n    return prevnode;\n}}\n"
    + _QUESTION + " B. No, it doesn't have defects\n\n"
    "{code_context}\n\nYou are a professional Java programmer, please identify any defects in "
    "the function named `{function_name}` based on the provided abstract Java class context "
    "information and the following function code.\n{comment}\n{code}\n" + _QUESTION)
DD_CHAT = (
    "```java\n{code_context}\n```\n\nI want you to act as a code defect detector, where I'll "
    "provide you with a Java function and it will be your responsibility to analyze it for "
    "potential issues based on the provided abstract Java class context information and the "
    "following function code. Let's get started with our first potentially flawed Java "
    "function:\n\n```java\n{comment}\n{code}\n```\nPlease respond with either \"A. Yes, there "
    "are defects\" or \"B. No, there are no defects\" based on your assessment.")
ITG_INSTRUCTION = (
    "You are a professional Java test case writer, please create a test case named "
    "`{function_name}` for the issue `{issue_id}`, utilizing the provided issue report "
    "information and the following function signature.")
ITG_COMPLETE = "// " + ITG_INSTRUCTION + "\n\n{issue_report}\n\n{nl_context}"
ITG_CHAT = ("```markdown\n{issue_report}\n```\n\n" + ITG_INSTRUCTION
            + "\n\n```java\n{nl_context}\n```\n")

# Cuts a text to its last (code context) or first (issue report) N tokens of GPT-2's
# tokenizer, as CoderUJB does; without one, texts are kept whole (and the rows say so).
Truncate = Callable[[str, int, bool], str]
CONTEXT_TOKENS = 2048
ISSUE_TOKENS = 1024


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, kw_only=True)
class SingleFunction:
    """The one function a bug's fix changes, on both sides."""

    location: str  # repository path of the modified class's file, below the build root
    buggy_file: JavaSource
    fixed_file: JavaSource
    buggy: Function
    fixed: Function


class NoTask(Exception):
    """The bug gives no task of this kind; the message says why."""


def single_function(plan: BugVersions, repository: Path) -> SingleFunction:
    """APR's selection: one modified class, one changed function with the same name on both
    sides, every changed line inside it."""
    bug = plan.bug
    if len(bug.modified_classes) != 1:
        raise NoTask(f"the fix modifies {len(bug.modified_classes)} classes, not one")
    relative = bug.modified_classes[0].replace(".", "/") + ".java"
    location = f"{plan.source_root}/{relative}"
    fixed_text = plan.fixed_text(repository, location)
    buggy_bytes = plan.buggy_files.get(location)
    if fixed_text is None or buggy_bytes is None:
        raise NoTask(f"{location} is not the file the source patch changes")
    try:
        buggy_text = buggy_bytes.decode("utf-8")
    except UnicodeDecodeError:
        buggy_text = buggy_bytes.decode("latin-1")
    buggy_file, fixed_file = JavaSource(buggy_text), JavaSource(fixed_text)
    try:
        buggy_file.class_context()
    except ContextError as exc:
        raise NoTask(f"{location}: {exc}") from None
    sides: dict[str, dict[str, Function | None]] = {"sub": {}, "add": {}}
    for line, side in _probes(buggy_file.text, fixed_file.text):
        source = buggy_file if side == "sub" else fixed_file
        found = source.enclosing(line)
        key = f"{found.name}|{found.start}|{found.end}" if found else "not-function"
        sides[side].setdefault(key, found)
    buggy, fixed = list(sides["sub"].values()), list(sides["add"].values())
    if any(f is None for f in (*buggy, *fixed)):
        raise NoTask("a changed line lies outside every function")
    if any(f is not None and f.nested for f in (*buggy, *fixed)):
        raise NoTask("the changed function holds another function")
    if [f.name for f in buggy if f] != [f.name for f in fixed if f]:
        raise NoTask("the changed functions differ between the versions")
    if len(buggy) != 1 or len(fixed) != 1 or buggy[0] is None or fixed[0] is None:
        raise NoTask(f"the fix changes {max(len(buggy), len(fixed))} functions, not one")
    return SingleFunction(location=location, buggy_file=buggy_file, fixed_file=fixed_file,
                          buggy=buggy[0], fixed=fixed[0])


_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)")


def _probes(buggy: str, fixed: str) -> list[tuple[int, str]]:
    """(1-based line, side) for every changed line and the line facing it on the other side;
    "sub" lines are the buggy file's, "add" lines the fixed file's."""
    diff = "".join(line + "\n" for line in difflib.unified_diff(
        buggy.split("\n"), fixed.split("\n"), lineterm=""))
    probes: list[tuple[int, str]] = []
    sub = add = 0
    for line in diff.strip().split("\n"):
        if line.startswith(("+++", "---")):
            continue
        hunk = _HUNK.match(line)
        if hunk:
            sub, add = int(hunk.group(1)), int(hunk.group(2))
        elif line.startswith("-"):
            probes += [(sub, "sub"), (add, "add")]
            sub += 1
        elif line.startswith("+"):
            probes += [(add, "add"), (sub, "sub")]
            add += 1
        else:
            sub += 1
            add += 1
    return probes


def _context(source: JavaSource, truncate: Truncate | None) -> tuple[str, dict[str, str]]:
    parts = source.class_context()
    text = code_context(parts)
    if truncate is not None:
        cut = truncate(text, CONTEXT_TOKENS, False)
        text = "\n".join(cut.split("\n")[1:]) if cut != text else text
    return text, dict(parts.__dict__)


def apr_row(plan: BugVersions, single: SingleFunction, *,
            truncate: Truncate | None) -> dict[str, Any]:
    bug = plan.bug
    context, parts = _context(single.buggy_file, truncate)
    name = single.buggy.name
    bug_text = f"{single.buggy.comment}\n{single.buggy.source}"
    fix = single.fixed.source
    return {
        "task_id": sha256(bug.project + bug.bug_id + single.buggy.source),
        "project": bug.project, "bug_id": bug.bug_id,
        "testmethods": list(bug.trigger_tests),
        "source_dir": plan.source_root, "location": single.location,
        "start": single.fixed.start, "end": single.fixed.end,
        "buggy": single.buggy.source, "fix": fix, "function_name": name,
        "function_signature": single.fixed.signature,
        "prompt_complete": APR_COMPLETE.format(code_context=commented(context),
                                               function_name=name, bug=bug_text),
        "prompt_chat": APR_CHAT.format(code_context=context, function_name=name, bug=bug_text),
        **parts, "code_context": commented(context),
        "source": single.fixed_file.text, "indent": fix[:len(fix) - len(fix.strip())],
    }


def dd_rows(plan: BugVersions, single: SingleFunction, *,
            truncate: Truncate | None) -> list[dict[str, Any]]:
    bug = plan.bug
    rows = []
    for function, source, defective in ((single.buggy, single.buggy_file, True),
                                        (single.fixed, single.fixed_file, False)):
        context, _ = _context(source, truncate)
        values = {"code_context": context, "function_name": function.name,
                  "comment": function.comment, "code": function.source}
        rows.append({
            "task_id": sha256(function.source), "project": bug.project, "bug_id": bug.bug_id,
            "code": function.source, "function_signature": function.signature,
            "prompt_complete": DD_COMPLETE.format(**values),
            "prompt_chat": DD_CHAT.format(**values), "defective": defective,
        })
    return rows


@dataclass(frozen=True, kw_only=True)
class IssueReport:
    issue_id: str
    title: str
    description: str


def load_issue_reports(path: Path) -> dict[str, IssueReport]:
    """CoderUJB's ``bug_report.json``: a list of {issue_id, title, description, project,
    bug_id}, keyed ``Project-id``."""
    import json

    from codereval.errors import UserError

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: unreadable issue reports ({exc})") from None
    if not isinstance(data, list) or not all(
            isinstance(e, dict) and {"issue_id", "title", "description", "project", "bug_id"}
            <= set(e) for e in data):
        raise UserError(f"{path}: not CoderUJB's bug_report.json (a list of issue_id, title, "
                        "description, project, bug_id)")
    return {f"{e['project']}-{e['bug_id']}": IssueReport(
        issue_id=str(e["issue_id"]), title=str(e["title"]), description=str(e["description"]))
        for e in data}


def _plain(markup: str) -> str:
    from bs4 import BeautifulSoup

    return BeautifulSoup(markup, "html.parser").get_text()


def _markdown(markup: str) -> str:
    from markdownify import markdownify

    return str(markdownify(markup))


def itg_row(plan: BugVersions, repository: Path, report: IssueReport, *,
            truncate: Truncate | None) -> dict[str, Any]:
    bug = plan.bug
    test = bug.trigger_tests[0]
    test_class, _, method = test.partition("::")
    if not method:
        raise NoTask(f"the first trigger test {test} names no method")
    location = f"{plan.test_root}/{test_class.replace('.', '/')}.java"
    text = plan.fixed_text(repository, location)
    if text is None:
        raise NoTask(f"{location} is not in the fixed revision")
    source = JavaSource(text)
    named = [f for f in source.functions() if f.name == method]
    if len(named) != 1:
        raise NoTask(f"{location} has {len(named)} functions named {method}, not one")
    function = named[0]
    issue_id = f"{bug.project}-{report.issue_id}"
    issue = (f"## Issue-ID: {issue_id}\n\n## Issue-Title: \n{_plain(report.title.strip())}\n\n"
             f"## Issue-Description: \n{_markdown(report.description.strip())}\n\n")
    if truncate is not None:
        issue = truncate(issue, ISSUE_TOKENS, True)
    nl_context = f"{source.indent()}{function.signature.strip()} {{\n"
    values = {"function_name": method, "issue_id": issue_id}
    return {
        "task_id": sha256(f"testgenissue|{bug.project}|{bug.bug_id}|{location}|{method}|"
                          f"{function.start}|{function.end}"),
        "project": bug.project, "bug_id": bug.bug_id, "testmethod": test,
        "source_dir": plan.test_root, "classes_modified": list(bug.modified_classes),
        "location": location, "location_fixed": location, "location_buggy": location,
        # Defects4J's buggy version keeps the fixed version's tests: the same lines in both.
        "start_fixed": function.start, "end_fixed": function.end,
        "start_buggy": function.start, "end_buggy": function.end,
        "function": function.source, "comment": function.comment, "function_name": method,
        "function_signature": function.signature, "issue_id": issue_id,
        "prompt_complete": ITG_COMPLETE.format(issue_report=commented(issue),
                                               nl_context=nl_context, **values),
        "prompt_complete_without_signature": ITG_COMPLETE.format(
            issue_report=commented(issue), nl_context="", **values),
        "prompt_chat": ITG_CHAT.format(issue_report=issue, nl_context=nl_context, **values),
        "source_fixed": source.text, "source_buggy": source.text, "indent": source.indent(),
    }


KINDS = ("apr", "dd", "itg")


def bug_rows(plan: BugVersions, repository: Path, *, issues: Mapping[str, IssueReport] | None,
             truncate: Truncate | None = None) -> tuple[dict[str, list[dict[str, Any]]],
                                                        dict[str, str]]:
    """The rows of every kind this bug gives, and why it gives none of a kind."""
    rows: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KINDS}
    skipped: dict[str, str] = {}
    try:
        single = single_function(plan, repository)
    except NoTask as exc:
        return rows, {kind: str(exc) for kind in KINDS}
    rows["apr"].append(apr_row(plan, single, truncate=truncate))
    rows["dd"] += dd_rows(plan, single, truncate=truncate)
    report = (issues or {}).get(plan.bug.name)
    if report is None:
        skipped["itg"] = ("no issue report given for it (--issues)" if issues is None
                          else "no issue report for it in --issues")
    else:
        try:
            rows["itg"].append(itg_row(plan, repository, report, truncate=truncate))
        except NoTask as exc:
            skipped["itg"] = str(exc)
    return rows, skipped
