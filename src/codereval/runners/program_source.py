"""The program each HumanEval / HumanEval-X sample is judged by, one language at a time.

A program is ``prefix + code + test`` (the prefix is the prompt for generation, the target
declaration for translation), plus what makes the verdict honest:

* a completion marker printed only after the test returned (promise 3), so ``exit(0)`` in the
  generated code never passes. The marker is never in the program: it arrives on stdin, which a
  prologue of ours reads before any code of the sample runs and then replaces by /dev/null, and
  which no name in the sample reaches (Python and JavaScript: a launcher that runs the program;
  Java: the entry class's locals; C++: a translation unit of its own, linked first; Go: a package
  the sample's package imports; Rust: a private module whose announcement checks its call site).
  The native prologues read through raw system calls from the executable's first start-up hook,
  and the build refuses a binary with another hook that could run before it
  (``NATIVE_HOOK_CHECK``). What stays possible is reading the process's own memory (or, in
  Python, its objects through introspection): anything in the same process can;
* JavaScript's ``console.assert`` made to throw (in Node it only prints);
* Rust tests (``#[cfg(test)] mod tests { #[test] fn ... }``) called from our own ``main``;
* Go imports computed from what the code uses, not from a fixed list of names.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources

from codereval.model import Task

# Where C++ tests' main() goes: our own main (CPP_PROLOGUE) calls it, then prints the marker.
CPP_TEST_MAIN = "codereval_test_main"
JAVA_ENTRY_CLASS = "CoderevalEntry"
# The launchers run these; the program is the file beside them.
PYTHON_LAUNCHER = "codereval_main.py"
JS_LAUNCHER = "codereval_main.js"
CPP_PROLOGUE = "codereval_prologue.cpp"
# The Go package that takes the marker (module humanevalx, as go.mod names it).
GO_PROLOGUE_PACKAGE = "humanevalx/codereval_prologue"
GO_PROLOGUE_FILE = "codereval_prologue/prologue.go"
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
    """Source files (name -> text) and the one the toolchain starts from. The run's completion
    marker goes to the program on stdin (one line); the program prints it, on a line of its
    own, only when its test ran to its end."""

    files: dict[str, str]
    main: str


@functools.cache
def prologue_source(name: str) -> str:
    """One of our prologues (runners/prologue/): the same text for every sample, no secret."""
    return resources.files("codereval.runners").joinpath("prologue", name).read_text("utf-8")


# A start-up hook of a native binary other than our prologue's could run before it and take the
# marker from stdin: a GNU indirect function's resolver (an IRELATIVE relocation, resolved while
# the dynamic loader relocates, before any hook) or a second .preinit_array entry (the
# program's own could come first). Run on the built binary; exit 1 with a message otherwise.
NATIVE_HOOK_CHECK = r"""readelf -SrW program | awk '
/ \.preinit_array / { for (i = 1; i <= NF; i++) if ($i == "PREINIT_ARRAY") size = $(i + 3) }
/IRELATIV/ { ifunc = 1 }
END {
    if (ifunc || size + 0 != 8) {
        print "codereval: refused: the program has start-up code that runs before the harness" \
            " (a GNU indirect function or a .preinit_array entry of its own), which could forge" \
            " the completion marker" > "/dev/stderr"
        exit 1
    }
}'"""


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


def python_program(task: Task, code: str) -> Program:
    prefix, test = _prefix_and_test(task)
    # OpenAI's HumanEval runs prompt + completion + check with nothing added.
    helpers = PYTHON_HELPERS if task.benchmark.startswith("humanevalx") else ""
    text = f"{helpers}{prefix}{_code(code)}\n{test}\n"
    return Program(files={"program.py": text, PYTHON_LAUNCHER: prologue_source(PYTHON_LAUNCHER)},
                   main=PYTHON_LAUNCHER)


def cpp_program(task: Task, code: str) -> Program:
    """The test's main becomes ``codereval_test_main``, which the main of our prologue (compiled
    once by the toolchain, linked first) calls before it prints the marker."""
    prefix, test = _prefix_and_test(task)
    # Rename only the test's main: a main in the generated code still clashes with ours, as it
    # clashes with the test's in the original harness.
    test = re.sub(r"\bint\s+main\s*\(", f"int {CPP_TEST_MAIN}(", test, count=1)
    text = f"{prefix}{_code(code)}\n{test}\n"
    return Program(files={"program.cpp": text}, main="program.cpp")


# The JVM starts here: the marker is read before any class of the sample is initialised, and
# kept masked in this method's locals, which reflection does not reach.
JAVA_ENTRY = f"""
class {JAVA_ENTRY_CLASS} {{
    public static void main(String[] args) throws Throwable {{
        java.io.FileInputStream in = new java.io.FileInputStream(java.io.FileDescriptor.in);
        byte[] held = new byte[128];
        int got = 0;
        for (int n; got < held.length && (n = in.read(held, got, held.length - got)) > 0; ) {{
            got += n;
        }}
        byte[] rest = new byte[256];
        while (in.read(rest) > 0) {{
        }}
        int size = 0;
        while (size < got && held[size] != '\\n') {{
            size++;
        }}
        byte[] pad = new byte[size];
        new java.util.SplittableRandom().nextBytes(pad);
        byte[] masked = new byte[size];
        for (int i = 0; i < size; i++) {{
            masked[i] = (byte) (held[i] ^ pad[i]);
        }}
        java.util.Arrays.fill(held, (byte) 0);
        System.setIn(new java.io.ByteArrayInputStream(new byte[0]));
        Main.main(args);
        System.out.flush();
        System.err.flush();
        byte[] line = new byte[size + 2];
        line[0] = line[size + 1] = (byte) '\\n';
        for (int i = 0; i < size; i++) {{
            line[i + 1] = (byte) (masked[i] ^ pad[i]);
        }}
        java.io.FileOutputStream out = new java.io.FileOutputStream(java.io.FileDescriptor.out);
        out.write(line);
        out.flush();
        java.util.Arrays.fill(line, (byte) 0);
    }}
}}
"""


def java_program(task: Task, code: str) -> Program:
    prefix, test = _prefix_and_test(task)
    text = f"{_java_pinned(test)}{prefix}{_code(code)}\n{test}\n{JAVA_ENTRY}"
    return Program(files={"Main.java": text}, main="Main.java")


# The JDK types tests name through `import java.util.*` and java.lang. A class of the sample's
# with one of these names would shadow them (a package's own classes win over on-demand
# imports): an `Arrays` whose asList returns an empty list makes the test check nothing.
# Imported by name, they win instead, and such a class no longer compiles.
_JAVA_LANG = (
    "AssertionError", "Boolean", "Byte", "Character", "CharSequence", "Class", "Comparable",
    "Double", "Enum", "Error", "Exception", "Float", "IllegalArgumentException",
    "IllegalStateException", "IndexOutOfBoundsException", "Integer", "Iterable", "Long", "Math",
    "NullPointerException", "Number", "NumberFormatException", "Object", "Runnable",
    "RuntimeException", "Short", "StrictMath", "String", "StringBuffer", "StringBuilder", "System",
    "Thread", "Throwable", "UnsupportedOperationException", "Void",
)
_JAVA_UTIL = (
    "AbstractMap", "ArrayDeque", "ArrayList", "Arrays", "BitSet", "Collection", "Collections",
    "Comparator", "Deque", "HashMap", "HashSet", "Iterator", "LinkedHashMap", "LinkedHashSet",
    "LinkedList", "List", "ListIterator", "Map", "NavigableMap", "NavigableSet", "Objects",
    "Optional", "OptionalDouble", "OptionalInt", "PriorityQueue", "Queue", "Random", "Scanner",
    "Set", "SortedMap", "SortedSet", "Stack", "StringJoiner", "TreeMap", "TreeSet", "Vector",
)
_JAVA_NAME = re.compile(r"\b[A-Z]\w*\b")


def _java_pinned(test: str) -> str:
    used = set(_JAVA_NAME.findall(test))
    names = [f"java.lang.{n}" for n in _JAVA_LANG if n in used]
    names += [f"java.util.{n}" for n in _JAVA_UTIL if n in used]
    return "".join(f"import {name};\n" for name in names)


# Node's console.assert only prints "Assertion failed"; the tests rely on it throwing. The
# throwing one is ours, so the sample must not be able to take it back: it is fixed on the
# console object, the console fixed on the global object, and the test is given that console
# as a parameter, which a `const console` or `var console` of the sample's cannot shadow (and a
# second `codereval_console` is a SyntaxError).
JS_PROLOGUE = (
    "const codereval_console = (() => {\n"
    "  const ok = require('node:assert').ok;\n"
    "  const check = (value, ...message) =>\n"
    "    ok(value, message.length ? message.join(' ') : 'console.assert failed');\n"
    "  const fixed = { writable: false, configurable: false };\n"
    "  Object.defineProperty(console, 'assert', { value: check, ...fixed });\n"
    "  Object.defineProperty(globalThis, 'console', { value: console, ...fixed });\n"
    "  return console;\n"
    "})();\n"
)


def js_program(task: Task, code: str) -> Program:
    prefix, test = _prefix_and_test(task)
    test = f";((console) => {{\n{test}\n}})(codereval_console);"
    text = f"{JS_PROLOGUE}{prefix}{_code(code)}\n{test}\n"
    return Program(files={"program.js": text, JS_LAUNCHER: prologue_source(JS_LAUNCHER)},
                   main=JS_LAUNCHER)


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


def go_program(task: Task, code: str) -> Program:
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
    # Blank: initialised before the sample's package, and no name of it in the sample's file.
    block += f'    _ "{GO_PROLOGUE_PACKAGE}"\n'
    text = f"package main\n\nimport (\n{block})\n\n{body}\n{test}\n"
    # For `go test -c` (where the direct build is not available): the sample's package, but a
    # file of its own, so the prologue's name is not in scope of the sample's code.
    marker_file = (
        "package main\n\nimport (\n    \"os\"\n    \"testing\"\n\n"
        f'    prologue "{GO_PROLOGUE_PACKAGE}"\n)\n\n'
        "func TestMain(m *testing.M) {\n    code := m.Run()\n"
        "    prologue.Done(code)\n    os.Exit(code)\n}\n"
    )
    testmain = go_testmain(_GO_TEST_FUNC.findall(test))
    return Program(files={GO_TEST_FILE: text, GO_MARKER_FILE: marker_file,
                          GO_TESTMAIN_FILE: testmain,
                          GO_PROLOGUE_FILE: prologue_source("codereval_prologue.go")},
                   main=GO_TEST_FILE)


def go_testmain(tests: list[str]) -> str:
    """What `go test` would generate to run these tests, then the prologue's announcement of the
    marker (when they passed); its testing dependencies come from ``GO_TESTMAIN_DEPS_FILE``."""
    entries = "".join(f'    {{"{name}", sample.{name}}},\n' for name in tests)
    # No test found means nothing was checked: that is never a pass.
    guard = ("" if tests
             else '    os.Stdout.WriteString("no test functions found\\n")\n    os.Exit(1)\n')
    return (
        "package main\n\nimport (\n    \"os\"\n    \"testing\"\n\n"
        f'    prologue "{GO_PROLOGUE_PACKAGE}"\n'
        "    sample \"humanevalx\"\n)\n\n"
        f"var tests = []testing.InternalTest{{\n{entries}}}\n\n"
        f"func main() {{\n{guard}"
        f"    m := testing.MainStart({GO_TESTMAIN_DEPS_VAR}, tests, nil, nil, nil)\n"
        "    code := m.Run()\n"
        "    prologue.Done(code)\n"
        "    os.Exit(code)\n}\n"
    )


# The standard macros tests call by their bare names (in a comment or a string the name is
# qualified too, which changes text nothing runs).
_RUST_STD_MACRO = re.compile(r"(?<![\w:])(assert_eq|assert_ne|assert|debug_assert_eq|"
                             r"debug_assert_ne|debug_assert|vec|panic|format)!")


def rust_program(task: Task, code: str) -> Program:
    """``prefix + code`` then the test module and a ``main`` that calls each ``#[test]`` fn.

    Built as a plain binary with ``--cfg test`` rather than by libtest, whose runner prints no
    marker of ours: a test that returns has passed, a failed assertion panics (exit 101). Our
    prologue module (``prologue/codereval_prologue.rs``) comes first; main ends with its
    ``done()``, which announces only when called from that very place.
    """
    prefix, test = _prefix_and_test(task)
    # Found outside comments (Rust/50 comments between `#[test]` and `fn`; Rust/32's whole
    # test module is commented out, so it has none).
    bare = _RUST_COMMENT.sub(" ", test)
    names = _RUST_TEST_FUNC.findall(bare)
    module = _RUST_TEST_MOD.search(bare)
    # The tests become plain functions the crate root may call.
    test = test.replace("#[test]", "")
    # The test's macros are the standard ones whatever the sample defines: a `macro_rules!
    # assert_eq` (or vec!, or include!) of its own would otherwise shadow them here.
    test = _RUST_STD_MACRO.sub(lambda m: f"::std::{m.group(1)}!", test)
    for name in names:
        test = re.sub(rf"\bfn\s+{name}\s*\(", f"pub(crate) fn {name}(", test, count=1)
    if names and module:
        calls = "".join(f"    {module.group(1)}::{name}();\n" for name in names)
    else:
        # No test found means nothing was checked: that is never a pass.
        calls = '    eprintln!("error: no test functions found");\n    std::process::exit(1);\n'
    head = f'{prefix}{_code(code)}\n::std::include!("{RUST_TEST_FILE}");\n\nfn main() {{\n{calls}'
    call = "    codereval_prologue::done();"
    prologue = prologue_source("codereval_prologue.rs")
    # Where the call stands (1-based line and column): the only place done() announces from.
    line = prologue.count("\n") + head.count("\n") + 1
    prologue = prologue.replace("@LINE@", str(line)).replace("@COLUMN@", "5")
    text = f"{prologue}{head}{call}\n}}\n"
    return Program(files={RUST_MAIN_FILE: text, RUST_TEST_FILE: test}, main=RUST_MAIN_FILE)


BUILDERS = {
    "python": python_program,
    "cpp": cpp_program,
    "java": java_program,
    "js": js_program,
    "go": go_program,
    "rust": rust_program,
}


def build_program(task: Task, code: str) -> Program:
    """The complete program for one sample of ``task`` (it takes its marker on stdin)."""
    builder = BUILDERS.get(task.language.value)
    if builder is None:
        raise ValueError(
            f"no program builder for {task.language.value}; known: {', '.join(BUILDERS)}"
        )
    return builder(task, code)


__all__ = ["BUILDERS", "NATIVE_HOOK_CHECK", "Program", "build_program", "go_imports",
           "prologue_source"]
