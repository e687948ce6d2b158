"""Write the mini CoderUJB benchmark's tasks.jsonl and samples.jsonl from its project and bugs.

The line spans of every task are found in the project's files (so editing a Java file and
re-running this keeps the tasks right); the samples are written out below, one kind per line.
Run from the repository root:  python scripts/build_mini_coderujb.py
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from codereval.model import IssueReport, Language, Location, Task, UjbKind, UjbSpec

ROOT = Path(__file__).resolve().parents[1] / "src" / "codereval" / "data" / "mini_coderujb"
PROJECT = "mini-ujb/langlite"
TREE = ROOT / "projects" / "langlite"
MAIN = "src/main/java"
TEST = "src/test/java"
STRING_UTILS = f"{MAIN}/org/langlite/StringUtils.java"
INT_RANGE = f"{MAIN}/org/langlite/IntRange.java"
NUMBER_UTILS = f"{MAIN}/org/langlite/math/NumberUtils.java"
STRING_TEST = f"{TEST}/org/langlite/StringUtilsTest.java"
RANGE_TEST = f"{TEST}/org/langlite/IntRangeTest.java"
NUMBER_TEST = f"{TEST}/org/langlite/math/NumberUtilsTest.java"
BUGGY = {"1": ROOT / "bugs/1/buggy", "2": ROOT / "bugs/2/buggy", "3": ROOT / "bugs/3/buggy"}


def span(text: str, name: str) -> tuple[int, int, str, str]:
    """(start, end, code, leading comment) of method ``name``: from its annotations (or
    signature) to its closing brace, 1-based inclusive; the Javadoc above it is returned apart."""
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines)
                if re.search(rf"\s{re.escape(name)}\(", line) and "{" in line
                and not line.strip().startswith(("*", "//", "return")))
    start = head
    while start > 0 and lines[start - 1].strip().startswith("@"):
        start -= 1
    depth, end = 0, head
    for end in range(head, len(lines)):
        depth += lines[end].count("{") - lines[end].count("}")
        if depth == 0:
            break
    doc_end = start
    doc_start = doc_end
    if doc_end > 0 and lines[doc_end - 1].strip() == "*/":
        doc_start = next(i for i in range(doc_end - 1, -1, -1) if lines[i].strip() == "/**")
    return (start + 1, end + 1, "\n".join(lines[start:end + 1]) + "\n",
            "\n".join(lines[doc_start:doc_end]))


def read(relative: str, bug: str = "") -> str:
    base = BUGGY[bug] if bug else TREE
    path = base / relative
    return path.read_text(encoding="utf-8")


def task(task_id: str, *, kind: UjbKind, bug: str, name: str, file: str, method: str,
         version_bug: str = "", reference: str = "", **ujb: object) -> Task:
    text = read(file, version_bug)
    start, end, code, doc = span(text, method)
    signature = code.splitlines()[0].strip().rstrip("{").strip()
    package = ".".join(Path(file).parent.relative_to(MAIN if file.startswith(MAIN) else TEST)
                       .parts)
    spec = UjbSpec(kind=kind, project=PROJECT, bug_id=bug, source_dir=MAIN, test_dir=TEST,
                   location=str(ujb.pop("location", file)), start=int(ujb.pop("start", start)),
                   end=int(ujb.pop("end", end)), function_name=method,
                   function_signature=signature, indent="    ", **ujb)  # type: ignore[arg-type]
    return Task(task_id=task_id, benchmark="mini-coderujb", language=Language.JAVA, name=name,
                signature=signature, docstring=doc, reference=reference or code,
                location=Location(project=PROJECT, file_path=file, lineno=start,
                                  end_lineno=end, class_name=Path(file).stem, package=package),
                file_content=text, ujb=spec)


def test_span(file: str, method: str) -> dict[str, object]:
    start, end, code, _ = span(read(file), method)
    return {"location": file, "start": start, "end": end, "reference": code}


def build_tasks() -> list[Task]:
    tasks = [
        task("fcg-langlite-1-abbreviate", kind=UjbKind.FCG, bug="1", name="abbreviate",
             file=STRING_UTILS, method="abbreviate",
             test_methods=("org.langlite.StringUtilsTest::testAbbreviate",
                           "org.langlite.StringUtilsTest::testAbbreviateTooNarrow",
                           "org.langlite.StringUtilsTest::testAbbreviateExactWidth")),
        task("fcg-langlite-3-overlaps", kind=UjbKind.FCG, bug="3", name="overlaps",
             file=INT_RANGE, method="overlaps",
             test_methods=("org.langlite.IntRangeTest::testOverlaps",)),
        task("fcg-langlite-2-max", kind=UjbKind.FCG, bug="2", name="max",
             file=NUMBER_UTILS, method="max",
             test_methods=("org.langlite.math.NumberUtilsTest::testMax",
                           "org.langlite.math.NumberUtilsTest::testMaxEmpty")),
    ]
    # CTG: a test for the focal method joins the test class (appended to it).
    tasks += [
        task("ctg-langlite-2-toInt", kind=UjbKind.CTG, bug="2", name="toInt", file=NUMBER_UTILS,
             method="toInt", test_class="org.langlite.math.NumberUtilsTest",
             test_file=NUMBER_TEST, classes_under_test=("org.langlite.math.NumberUtils",),
             reference=CTG_TO_INT_FULL),
        task("ctg-langlite-3-fit", kind=UjbKind.CTG, bug="3", name="fit", file=INT_RANGE,
             method="fit", test_class="org.langlite.IntRangeTest", test_file=RANGE_TEST,
             classes_under_test=("org.langlite.IntRange",), reference=CTG_FIT_FULL),
    ]
    # ITG: the developer's test for the issue is taken out of the test file (its lines are
    # what the generated test replaces); the focal method is the one the fix changed.
    for bug, method, file, test_file, test_class, test_method, issue in ITG_BUGS:
        where = test_span(test_file, test_method)
        reference = str(where.pop("reference"))
        tasks.append(task(
            f"itg-langlite-{bug}-{method}", kind=UjbKind.ITG, bug=bug, name=method, file=file,
            method=method, test_class=test_class, test_file=test_file,
            classes_under_test=(f"{test_class.removesuffix('Test')}",),
            test_methods=(f"{test_class}::{test_method}",), issue=issue, reference=reference,
            **where))
    for bug, method, file, tests in APR_BUGS:
        fixed = span(read(file), method)[2]
        buggy = span(read(file, bug), method)[2]
        tasks.append(task(f"apr-langlite-{bug}-{method}", kind=UjbKind.APR, bug=bug,
                          name=method, file=file, method=method, version_bug=bug,
                          test_methods=tests, buggy_function=buggy, fixed_function=fixed,
                          reference=fixed))
    tasks += [
        task("dd-langlite-1-abbreviate", kind=UjbKind.DD, bug="1", name="abbreviate",
             file=STRING_UTILS, method="abbreviate", version_bug="1", defective=True,
             buggy_function=span(read(STRING_UTILS, "1"), "abbreviate")[2]),
        task("dd-langlite-2-toInt", kind=UjbKind.DD, bug="2", name="toInt", file=NUMBER_UTILS,
             method="toInt", version_bug="2", defective=False),
    ]
    return tasks


CTG_TO_INT_FULL = """    @Test
    public void testToInt() {
        assertEquals(7, NumberUtils.toInt(null, 7));
        assertEquals(12, NumberUtils.toInt(" 12 ", 0));
        assertEquals(-1, NumberUtils.toInt("twelve", -1));
    }
"""
CTG_FIT_FULL = """    @Test
    public void testFitClamps() {
        IntRange range = new IntRange(2, 4);
        assertEquals(2, range.fit(1));
        assertEquals(4, range.fit(9));
        assertEquals(3, range.fit(3));
    }
"""

ITG_BUGS = [
    ("1", "abbreviate", STRING_UTILS, STRING_TEST, "org.langlite.StringUtilsTest",
     "testAbbreviateExactWidth",
     IssueReport(title="abbreviate shortens a String that already fits",
                 body="StringUtils.abbreviate(\"abcdef\", 6) returns \"abc...\" although the "
                      "String is exactly 6 characters long and fits; it should come back "
                      "unchanged. Strings shorter than maxWidth are fine.",
                 url="https://example.invalid/langlite/issues/1")),
    ("2", "isDigits", NUMBER_UTILS, NUMBER_TEST, "org.langlite.math.NumberUtilsTest",
     "testIsDigitsEmpty",
     IssueReport(title="NumberUtils.isDigits(\"\") returns true",
                 body="The Javadoc says null and the empty String return false, but "
                      "isDigits(\"\") answers true, so callers accept an empty field as a "
                      "number and then fail in Integer.parseInt.",
                 url="https://example.invalid/langlite/issues/2")),
    ("3", "overlaps", INT_RANGE, RANGE_TEST, "org.langlite.IntRangeTest",
     "testOverlapsTouching",
     IssueReport(title="IntRange.overlaps is false for ranges that share an end",
                 body="new IntRange(1, 5).overlaps(new IntRange(5, 8)) returns false, though "
                      "both ranges contain 5 (ends are inclusive). intersectionWith then "
                      "refuses [1..5] and [5..9].",
                 url="https://example.invalid/langlite/issues/3")),
]

APR_BUGS = [
    ("1", "abbreviate", STRING_UTILS, ("org.langlite.StringUtilsTest::testAbbreviateExactWidth",)),
    ("2", "isDigits", NUMBER_UTILS, ("org.langlite.math.NumberUtilsTest::testIsDigitsEmpty",)),
    ("3", "overlaps", INT_RANGE, ("org.langlite.IntRangeTest::testIntersectionWith",
                                  "org.langlite.IntRangeTest::testOverlapsTouching")),
]

# --- samples ----------------------------------------------------------------------------

EXIT = "        System.exit(0);\n"
LOOP = "        while (true) {\n            Thread.onSpinWait();\n        }\n"
# /var/tmp is writable on the host and read-only in the sandbox: a write that got out would
# leave this file behind (the tests look for it).
ESCAPED = "/var/tmp/codereval-ujb-escaped"
WRITE_OUTSIDE = ("        try {\n"
                 "            java.nio.file.Files.writeString(\n"
                 f"                java.nio.file.Paths.get(\"{ESCAPED}\"), \"x\");\n"
                 "        } catch (java.io.IOException e) {\n"
                 "            throw new java.io.UncheckedIOException(e);\n        }\n")
FORK_BOMB = ("        java.util.List<Process> kids = new java.util.ArrayList<>();\n"
             "        while (true) {\n            try {\n"
             "                kids.add(new ProcessBuilder(\"sleep\", \"6071\").start());\n"
             "            } catch (java.io.IOException e) {\n"
             "                Thread.onSpinWait();\n            }\n        }\n")


def line(statement: str) -> str:
    """One line of a method body."""
    return f"        {statement}\n"


def method(signature: str, body: str) -> str:
    return f"    {signature} {{\n{body}    }}\n"


def test_method(name: str, body: str) -> str:
    return f"    @Test\n    public void {name}() {{\n{body}    }}\n"


SAMPLES: dict[str, list[tuple[str, str]]] = {
    "fcg-langlite-1-abbreviate": [
        ("reference", ""),
        ("wrong-boundary", method("public static String abbreviate(String str, int maxWidth)", (
            "        if (maxWidth < 4) {\n"
            "            throw new IllegalArgumentException(\"Minimum abbreviation width is 4\");\n"
            "        }\n        if (str == null || str.length() < maxWidth) {\n"
            "            return str;\n        }\n"
            "        return str.substring(0, maxWidth - 3) + \"...\";\n"))),
        ("syntax-error", "    public static String abbreviate(String str, int maxWidth) {\n"
                         "        return str.substring(0, maxWidth - 3) + \"...\"\n    }\n"),
        ("compile-error", method("public static String abbreviate(String str, int maxWidth)",
                                 "        return shorten(str, maxWidth);\n")),
        ("hostile-exit", method("public static String abbreviate(String str, int maxWidth)",
                                EXIT + "        return str;\n")),
        ("hostile-loop", method("public static String abbreviate(String str, int maxWidth)",
                                LOOP)),
    ],
    "fcg-langlite-3-overlaps": [
        ("reference", ""),
        ("breaks-other-tests", method("public boolean overlaps(IntRange other)", (
            "        return other != null && other.min < max && min < other.max;\n"))),
        ("hostile-write-outside", method("public boolean overlaps(IntRange other)",
                                         WRITE_OUTSIDE + "        return other != null && "
                                         "other.min <= max && min <= other.max;\n")),
    ],
    "fcg-langlite-2-max": [
        ("reference", ""),
        ("wrong-first-element", method("public static int max(int... array)", (
            "        if (array == null || array.length == 0) {\n"
            "            throw new IllegalArgumentException(\"Array cannot be null or empty.\");\n"
            "        }\n        return array[0];\n"))),
        ("hostile-fork-bomb", method("public static int max(int... array)", FORK_BOMB)),
        # A signature changed (as Lang-29's fix does): the tests and Stats, compiled against
        # the int version, are compiled again, and pass; renamed, they no longer compile.
        ("changes-return-type", method("public static long max(int... array)", (
            "        if (array == null || array.length == 0) {\n"
            "            throw new IllegalArgumentException(\"Array cannot be null or empty.\");\n"
            "        }\n        long max = array[0];\n"
            "        for (int i = 1; i < array.length; i++) {\n"
            "            if (array[i] > max) {\n                max = array[i];\n            }\n"
            "        }\n        return max;\n"))),
        ("breaks-callers", method("public static int largest(int... array)", (
            "        if (array == null || array.length == 0) {\n"
            "            throw new IllegalArgumentException(\"Array cannot be null or empty.\");\n"
            "        }\n        int max = array[0];\n"
            "        for (int i = 1; i < array.length; i++) {\n"
            "            if (array[i] > max) {\n                max = array[i];\n            }\n"
            "        }\n        return max;\n"))),
    ],
    "ctg-langlite-2-toInt": [
        ("reference", ""),
        ("partial-null-only", test_method(
            "testToIntNull",
            line("assertEquals(3, NumberUtils.toInt(null, 3));"))),
        ("wrong-assertion", test_method(
            "testToIntWrong",
            line("assertEquals(12, NumberUtils.toInt(\"12\", 0) + 1);"))),
        ("covers-nothing", test_method("testNothing", "        assertEquals(2, 1 + 1);\n")),
        ("no-test-annotation",
         "    public void helperOnly() {\n        NumberUtils.toInt(\"1\", 0);\n    }\n"),
        ("compile-error", test_method(
            "testToIntTypo",
            line("assertEquals(1, NumberUtils.toInteger(\"1\", 0));"))),
        ("hostile-exit", test_method("testExit", EXIT)),
        ("hostile-loop", test_method("testLoop", LOOP)),
    ],
    "ctg-langlite-3-fit": [
        ("reference", ""),
        ("partial-inside", test_method("testFitInside",
                                       "        assertEquals(3, new IntRange(2, 4).fit(3));\n")),
        ("hostile-write-outside", test_method("testWriteOutside", WRITE_OUTSIDE)),
    ],
    "itg-langlite-1-abbreviate": [
        ("reference", ""),
        ("passes-on-both", test_method(
            "testAbbreviateShort",
            line("assertEquals(\"abc\", StringUtils.abbreviate(\"abc\", 6));"))),
        ("fails-on-both", test_method(
            "testAbbreviateWrong",
            line("assertEquals(\"abcdef...\", StringUtils.abbreviate(\"abcdef\", 6));"))),
        ("hostile-exit", test_method("testExit", EXIT)),
    ],
    "itg-langlite-2-isDigits": [
        ("reference", ""),
        ("generated-trigger", test_method(
            "testEmptyIsNotDigits",
            line("org.junit.Assert.assertFalse(NumberUtils.isDigits(\"\"));"))),
        ("passes-on-both", test_method(
            "testDigits",
            line("org.junit.Assert.assertTrue(NumberUtils.isDigits(\"42\"));"))),
        ("hostile-loop", test_method("testLoop", LOOP)),
    ],
    "itg-langlite-3-overlaps": [
        ("reference", ""),
        ("passes-on-both", test_method(
            "testOverlapsInside",
            line("assertTrue(new IntRange(1, 5).overlaps(new IntRange(2, 3)));"))),
        ("hostile-fork-bomb", test_method("testForkBomb", FORK_BOMB)),
    ],
    "apr-langlite-1-abbreviate": [
        ("reference", ""),
        ("unchanged-buggy", "buggy"),
        ("overfitting", method("public static String abbreviate(String str, int maxWidth)",
                               "        return str;\n")),
    ],
    "apr-langlite-2-isDigits": [
        ("reference", ""),
        ("unchanged-buggy", "buggy"),
        ("hostile-exit", method("public static boolean isDigits(String str)",
                                EXIT + "        return false;\n")),
    ],
    "apr-langlite-3-overlaps": [
        ("reference", ""),
        ("half-fix", method("public boolean overlaps(IntRange other)",
                            line("return other != null && other.min <= max && min < other.max;"))),
        ("unchanged-buggy", "buggy"),
    ],
    "dd-langlite-1-abbreviate": [
        ("right-answer", "Yes. The function is buggy: a String exactly maxWidth long is "
                         "abbreviated although it fits."),
        ("wrong-answer", "No, the function is correct."),
    ],
    "dd-langlite-2-toInt": [
        ("right-answer", "No. The method is not defective."),
        ("wrong-answer", "Yes, it is defective: it trims the input."),
    ],
}


def main() -> None:
    tasks = build_tasks()
    by_id = {t.task_id: t for t in tasks}
    assert set(SAMPLES) == set(by_id), set(SAMPLES) ^ set(by_id)
    with (ROOT / "tasks.jsonl").open("w", encoding="utf-8") as out:
        for t in tasks:
            out.write(t.to_json() + "\n")
    with (ROOT / "samples.jsonl").open("w", encoding="utf-8") as out:
        for task_id, rows in SAMPLES.items():
            t = by_id[task_id]
            for index, (label, code) in enumerate(rows):
                if label == "reference":
                    code = t.reference
                elif code == "buggy":
                    assert t.ujb is not None
                    code = t.ujb.buggy_function
                out.write(json.dumps({"task_id": task_id, "index": index, "model": "mini-fixture",
                                      "label": label, "code": code}) + "\n")
    print(f"{len(tasks)} tasks, {sum(len(r) for r in SAMPLES.values())} samples in {ROOT}")


if __name__ == "__main__":
    main()
