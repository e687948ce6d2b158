"""Where a generated test goes in a bug version's test file (CTG, ITG), for every runner of
CoderUJB's test-generation kinds (ours on bug versions and Defects4J's own)."""

from __future__ import annotations

from codereval.java.splice import add_to_class, replace_lines
from codereval.model import UjbSpec

# A generated test the runner cannot name: nothing annotated @Test and, in a JUnit 3 class,
# no public void test*() method either.
NO_TEST_METHOD = "the sample declares no test method (@Test, or test*() in a JUnit 3 class)"


def spliced_test(spec: UjbSpec, code: str, original: str, *, version: str) -> str:
    """The test file with the generated test in it: over the lines of the developer's test when
    the task names them (ITG; the buggy version's own lines when given), else added at the end
    of the test class (CTG)."""
    if spec.location == spec.test_file and spec.start > 0:
        start, end = spec.start, spec.end
        if version == "b" and spec.start_buggy is not None and spec.end_buggy is not None:
            start, end = spec.start_buggy, spec.end_buggy
        return replace_lines(original, code, start=start, end=end,
                             where=f"{spec.test_file} ({version})")
    return add_to_class(original, code, class_name=spec.test_class.rsplit(".", 1)[-1],
                        where=spec.test_file)


__all__ = ["NO_TEST_METHOD", "spliced_test"]
