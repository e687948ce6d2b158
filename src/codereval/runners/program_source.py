"""The program each HumanEval / HumanEval-X sample is judged by, one language at a time.

A program is ``prefix + code + test`` (the prefix is the prompt for generation, the target
declaration for translation), plus what makes the verdict honest:

* a completion marker printed only after the test returned (promise 3), so ``exit(0)`` in the
  generated code never passes;
* JavaScript's ``console.assert`` made to throw (in Node it only prints);
* Rust tests (``#[cfg(test)] mod tests { #[test] fn ... }``) called from our own ``main``;
* Go imports computed from what the code uses, not from a fixed list of names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from codereval.model import Task

# Where C++ tests' main() goes, so that our own main can print the marker after it returns.
CPP_TEST_MAIN = "codereval_test_main"
JAVA_ENTRY_CLASS = "CoderevalEntry"
GO_TEST_FILE = "main_test.go"
GO_MARKER_FILE = "codereval_marker_test.go"
# The test binary's main for the direct compile and link (a subdirectory: `go test .` skips it).
GO_TESTMAIN_FILE = "codereval_testmain/main.go"
# What the main hands testing.MainStart, declared by the toolchain in a file of its own beside
# the main (GoToolchain: the smallest implementation this Go accepts).
GO_TESTMAIN_DEPS_VAR = "codereval_test_deps"
GO_TESTMAIN_DEPS_FILE = "codereval_testmain/deps.go"
# Rust: the test module goes in its own file, so a panic located there is a failed assertion.
RUST_MAIN_FILE = "main.rs"
RUST_TEST_FILE = "codereval_tests.rs"
_RUST_TEST_FUNC = re.compile(r"#\[test\]\s*fn\s+(\w+)")
_RUST_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_RUST_TEST_MOD = re.compile(r"^\s*mod\s+(\w+)\s*\{", re.M)
_GO_TEST_FUNC = re.compile(r"^func\s+(Test\w+)\s*\(\s*\w+\s+\*testing\.T\s*\)", re.M)

# Standard-library packages a Go generation may use without importing them itself: the prompt
# gives one import block, which the model cannot extend from inside a function body.
GO_STD_PACKAGES = {
    "bytes": "bytes",
    "errors": "errors",
    "fmt": "fmt",
    "math": "math",
    "bits": "math/bits",
    "big": "math/big",
    "rand": "math/rand",
    "md5": "crypto/md5",
    "os": "os",
    "hex": "encoding/hex",
    "reflect": "reflect",
    "regexp": "regexp",
    "sort": "sort",
    "strconv": "strconv",
    "strings": "strings",
    "time": "time",
    "unicode": "unicode",
    "utf8": "unicode/utf8",
    "slices": "slices",
    "heap": "container/heap",
}

_GO_COMMENT_OR_STRING = re.compile(r"//[^\n]*|/\*.*?\*/|`[^`]*`|\"(?:\\.|[^\"\\\n])*\"", re.S)
_GO_IMPORT_LINE = re.compile(r"\"([\w./-]+)\"")


@dataclass(frozen=True, kw_only=True)
class Program:
    """Source files (name -> text) and the one the toolchain starts from."""

    files: dict[str, str]
    main: str


def _code(code: str) -> str:
    return code if code.endswith("\n") else code + "\n"


# CodeGeeX's harness puts these before every HumanEval-X Python program (numpy left out: it is
# not part of the standard library, and a program here runs on the bare interpreter).
PYTHON_HELPERS = (
    "import math\nimport re\nimport sys\nimport copy\nimport datetime\nimport itertools\n"
    "import collections\nimport heapq\nimport statistics\nimport functools\nimport hashlib\n"
    "import string\nfrom typing import *\nfrom collections import *\n"
)


# The standard-library modules those helpers import: a warm worker has them loaded already.
PYTHON_HELPER_MODULES = (
    "math", "re", "copy", "datetime", "itertools", "collections", "heapq", "statistics",
    "functools", "hashlib", "string", "typing",
)


def _prefix_and_test(task: Task) -> tuple[str, str]:
    """What comes before the generated code (the declaration, or the prompt) and the test."""
    return task.extra.get("prefix", task.prompt), task.test.code if task.test else ""


def python_program(task: Task, code: str, *, marker: str) -> Program:
    prefix, test = _prefix_and_test(task)
    # OpenAI's HumanEval runs prompt + completion + check with nothing added.
    helpers = PYTHON_HELPERS if task.benchmark.startswith("humanevalx") else ""
    text = f"{helpers}{prefix}{_code(code)}\n{test}\n\nprint({marker!r}, flush=True)\n"
    return Program(files={"program.py": text}, main="program.py")


def cpp_program(task: Task, code: str, *, marker: str) -> Program:
    prefix, test = _prefix_and_test(task)
    # Rename only the test's main: a main in the generated code still clashes with ours, as it
    # clashes with the test's in the original harness.
    test = re.sub(r"\bint\s+main\s*\(", f"int {CPP_TEST_MAIN}(", test, count=1)
    tail = (
        f"\nint main() {{\n    {CPP_TEST_MAIN}();\n"
        f'    fflush(NULL);\n    printf("\\n%s\\n", "{marker}");\n    fflush(stdout);\n'
        "    return 0;\n}\n"
    )
    text = f"{prefix}{_code(code)}\n{test}\n#include <stdio.h>\n{tail}"
    return Program(files={"program.cpp": text}, main="program.cpp")


def java_program(task: Task, code: str, *, marker: str) -> Program:
    prefix, test = _prefix_and_test(task)
    entry = (
        f"\nclass {JAVA_ENTRY_CLASS} {{\n"
        "    public static void main(String[] args) throws Throwable {\n"
        "        Main.main(args);\n"
        f'        System.out.println("\\n{marker}");\n'
        "        System.out.flush();\n"
        "    }\n}\n"
    )
    text = f"{prefix}{_code(code)}\n{test}\n{entry}"
    return Program(files={"Main.java": text}, main="Main.java")


# Node's console.assert only prints "Assertion failed"; the tests rely on it throwing.
JS_PROLOGUE = (
    "{ const codereval_ok = require('node:assert').ok;\n"
    "  console.assert = (value, ...message) =>\n"
    "    codereval_ok(value, message.length ? message.join(' ') : 'console.assert failed'); }\n"
)


def js_program(task: Task, code: str, *, marker: str) -> Program:
    prefix, test = _prefix_and_test(task)
    text = f"{JS_PROLOGUE}{prefix}{_code(code)}\n{test}\n\nconsole.log({marker!r});\n"
    return Program(files={"program.js": text}, main="program.js")


def _go_strip(source: str) -> str:
    return _GO_COMMENT_OR_STRING.sub(" ", source)


def go_imports(source: str, *, already: set[str]) -> list[str]:
    """Standard packages ``source`` refers to as ``pkg.Name`` and does not shadow locally."""
    body = _go_strip(source)
    found = []
    for name, path in GO_STD_PACKAGES.items():
        if path in already:
            continue
        if not re.search(rf"(?<![\w.]){name}\.[A-Z]", body):
            continue
        if re.search(rf"(?<![\w.]){name}\s*(?:,[\w\s,]*)?:=|\bvar\s+{name}\b", body):
            continue
        found.append(path)
    return found


def go_program(task: Task, code: str, *, marker: str) -> Program:
    prefix, test = _prefix_and_test(task)
    setup = task.extra.get("go_test_setup", "")
    body = f"{prefix}{_code(code)}"
    # Some test setups import what only the reference uses (Go/162 imports crypto/md5): an
    # import nobody uses is a compile error, so standard packages are kept only when used.
    table = set(GO_STD_PACKAGES.values())
    given = _GO_IMPORT_LINE.findall(setup) or ["testing"]
    kept = [path for path in given if path not in table]
    # Imports are per file: the test's own uses count too (several tests call math.Abs).
    used = go_imports(f"{body}\n{test}", already=set(kept))
    block = "".join(f'    "{path}"\n' for path in [*kept, *used])
    text = f"package main\n\nimport (\n{block})\n\n{body}\n{test}\n"
    marker_file = (
        "package main\n\nimport (\n    \"fmt\"\n    \"os\"\n    \"testing\"\n)\n\n"
        "func TestMain(m *testing.M) {\n    code := m.Run()\n"
        f'    if code == 0 {{\n        fmt.Println("\\n{marker}")\n    }}\n'
        "    os.Exit(code)\n}\n"
    )
    testmain = go_testmain(_GO_TEST_FUNC.findall(test), marker=marker)
    return Program(files={GO_TEST_FILE: text, GO_MARKER_FILE: marker_file,
                          GO_TESTMAIN_FILE: testmain}, main=GO_TEST_FILE)


def go_testmain(tests: list[str], *, marker: str) -> str:
    """What `go test` would generate to run these tests, plus the marker after they pass; its
    testing dependencies come from ``GO_TESTMAIN_DEPS_FILE``."""
    entries = "".join(f'    {{"{name}", sample.{name}}},\n' for name in tests)
    # No test found means nothing was checked: that is never a pass.
    guard = "" if tests else '    fmt.Println("no test functions found")\n    os.Exit(1)\n'
    return (
        "package main\n\nimport (\n    \"fmt\"\n    \"os\"\n    \"testing\"\n\n"
        "    sample \"humanevalx\"\n)\n\n"
        f"var tests = []testing.InternalTest{{\n{entries}}}\n\n"
        f"func main() {{\n{guard}"
        f"    m := testing.MainStart({GO_TESTMAIN_DEPS_VAR}, tests, nil, nil, nil)\n"
        "    code := m.Run()\n"
        f'    if code == 0 {{\n        fmt.Println("\\n{marker}")\n    }}\n'
        "    os.Exit(code)\n}\n"
    )


def rust_program(task: Task, code: str, *, marker: str) -> Program:
    """``prefix + code`` then the test module and a ``main`` that calls each ``#[test]`` fn.

    Built as a plain binary with ``--cfg test`` rather than by libtest, whose runner prints no
    marker of ours: a test that returns has passed, a failed assertion panics (exit 101).
    """
    prefix, test = _prefix_and_test(task)
    # Found outside comments (Rust/50 comments between `#[test]` and `fn`; Rust/32's whole
    # test module is commented out, so it has none).
    bare = _RUST_COMMENT.sub(" ", test)
    names = _RUST_TEST_FUNC.findall(bare)
    module = _RUST_TEST_MOD.search(bare)
    # The tests become plain functions the crate root may call.
    test = test.replace("#[test]", "")
    for name in names:
        test = re.sub(rf"\bfn\s+{name}\s*\(", f"pub(crate) fn {name}(", test, count=1)
    if names and module:
        calls = "".join(f"    {module.group(1)}::{name}();\n" for name in names)
    else:
        # No test found means nothing was checked: that is never a pass.
        calls = '    eprintln!("error: no test functions found");\n    std::process::exit(1);\n'
    text = (
        f'{prefix}{_code(code)}\ninclude!("{RUST_TEST_FILE}");\n\n'
        f'fn main() {{\n{calls}    println!("\\n{marker}");\n}}\n'
    )
    return Program(files={RUST_MAIN_FILE: text, RUST_TEST_FILE: test}, main=RUST_MAIN_FILE)


BUILDERS = {
    "python": python_program,
    "cpp": cpp_program,
    "java": java_program,
    "js": js_program,
    "go": go_program,
    "rust": rust_program,
}


def build_program(task: Task, code: str, *, marker: str) -> Program:
    """The complete program for one sample of ``task``."""
    builder = BUILDERS.get(task.language.value)
    if builder is None:
        raise ValueError(
            f"no program builder for {task.language.value}; known: {', '.join(BUILDERS)}"
        )
    return builder(task, code, marker=marker)


__all__ = ["BUILDERS", "Program", "build_program", "go_imports"]
