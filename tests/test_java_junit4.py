"""JUnit 3/4 test classes run on JUnit 4's own runner, everything else on the JUnit Platform.

The harness (RunTest junit) skips the Platform for a class that is plainly JUnit 3/4 with
nothing of JUnit 5 in it: the vintage engine would only wrap the same runner. Each JUnit 4
class below must report exactly what the Platform reports for it (the Platform path is still
there under -Dcodereval.junit4.direct=false), and the JUnit 5, mixed and meta-annotated
classes must still go to the Platform.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from codereval.java.artifacts import HAMCREST_CORE, JUNIT4, JUNIT_CONSOLE, ensure_artifact
from codereval.java.build import HARNESS_MAIN, ensure_built
from codereval.java.toolchain import find_jdk, missing_toolchain

pytestmark = pytest.mark.skipif(missing_toolchain() is not None, reason="no JDK here")

JUNIT4_CLASSES = {
    "t/Passing.java": """
        package t;
        import static org.junit.Assert.*;
        import org.junit.*;
        public class Passing {
            @Test public void one() { assertEquals(2, 1 + 1); }
            @Test public void two() { assertTrue(true); }
        }""",
    "t/Mixed.java": """
        package t;
        import static org.junit.Assert.*;
        import org.junit.*;
        public class Mixed {
            @Test public void passes() {}
            @Test public void failsAnAssertion() { assertEquals(1, 2); }
            @Test public void throwsSomethingElse() { throw new IllegalStateException("boom"); }
            @Ignore @Test public void ignored() { fail(); }
            @Test public void assumptionFails() { Assume.assumeTrue(false); }
            @Test(expected = ArithmeticException.class) public void expects() { int z = 1 / 0; }
            @Test(timeout = 5000) public void inTime() {}
        }""",
    "t/BeforeFails.java": """
        package t;
        import org.junit.*;
        public class BeforeFails {
            @Before public void setUp() { throw new RuntimeException("setup"); }
            @Test public void a() {}
            @Test public void b() {}
        }""",
    "t/BeforeClassFails.java": """
        package t;
        import org.junit.*;
        public class BeforeClassFails {
            @BeforeClass public static void once() { throw new RuntimeException("once"); }
            @Test public void a() {}
        }""",
    "t/Inherits.java": """
        package t;
        public class Inherits extends Passing {}""",
    "t/Old.java": """
        package t;
        public class Old extends junit.framework.TestCase {
            public void testGood() { assertEquals(1, 1); }
            public void testBad() { assertEquals(1, 2); }
        }""",
    "t/Params.java": """
        package t;
        import static org.junit.Assert.*;
        import java.util.*;
        import org.junit.*;
        import org.junit.runner.RunWith;
        import org.junit.runners.Parameterized;
        @RunWith(Parameterized.class)
        public class Params {
            @Parameterized.Parameters public static Collection<Object[]> data() {
                return Arrays.asList(new Object[][] {{1, true}, {2, false}, {3, true}});
            }
            private final int n; private final boolean odd;
            public Params(int n, boolean odd) { this.n = n; this.odd = odd; }
            @Test public void parity() { assertEquals(odd, n % 2 == 1); }
        }""",
    "t/ExitsEarly.java": """
        package t;
        import org.junit.*;
        public class ExitsEarly {
            @Test public void exits() { System.exit(0); }
        }""",
}

PLATFORM_CLASSES = {
    "t/Jupiter.java": """
        package t;
        import static org.junit.jupiter.api.Assertions.*;
        import org.junit.jupiter.api.Test;
        public class Jupiter {
            @Test void passes() { assertEquals(2, 1 + 1); }
            @Test void fails() { assertEquals(1, 2); }
        }""",
    "t/MyTest.java": """
        package t;
        import java.lang.annotation.*;
        @Retention(RetentionPolicy.RUNTIME) @Target(ElementType.METHOD)
        @org.junit.jupiter.api.Test
        public @interface MyTest {}""",
    "t/MetaAnnotated.java": """
        package t;
        public class MetaAnnotated {
            @org.junit.Test public void four() {}
            @MyTest void five() {}
        }""",
    "t/NestedJupiter.java": """
        package t;
        public class NestedJupiter {
            @org.junit.Test public void four() {}
            @org.junit.jupiter.api.Nested class Inner {
                @org.junit.jupiter.api.Test void five() {}
            }
        }""",
    "t/Plain.java": """
        package t;
        public class Plain { public void notATest() {} }""",
}


@pytest.fixture(scope="module")
def classpath(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    jars = [ensure_artifact(JUNIT4), ensure_artifact(HAMCREST_CORE), ensure_artifact(JUNIT_CONSOLE)]
    root = tmp_path_factory.mktemp("junit4")
    sources = root / "src"
    for name, text in {**JUNIT4_CLASSES, **PLATFORM_CLASSES}.items():
        (sources / name).parent.mkdir(parents=True, exist_ok=True)
        (sources / name).write_text(text, encoding="utf-8")
    classes = root / "classes"
    done = subprocess.run(
        [str(find_jdk().javac), "-nowarn", "-cp", os.pathsep.join(map(str, jars)), "-d",
         str(classes), *map(str, sorted(sources.rglob("*.java")))],
        capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return [ensure_built().harness_jar, *jars, classes]


def _run(classpath: list[Path], test_class: str, *flags: str) -> tuple[str, bool]:
    """(the marker line's status, whether the JUnit Platform's launcher was loaded)."""
    done = subprocess.run(
        [str(find_jdk().java), *flags, "-Xlog:class+load=info:stderr", "-cp",
         os.pathsep.join(map(str, classpath)), HARNESS_MAIN, "junit", test_class],
        input="MARK\n", capture_output=True, text=True, timeout=120, check=False)
    status = next((line[5:] for line in done.stdout.splitlines() if line.startswith("MARK ")),
                  f"no marker (exit {done.returncode})")
    return status, "org.junit.platform.launcher.core.LauncherFactory " in done.stderr


@pytest.mark.parametrize("name", sorted(JUNIT4_CLASSES))
def test_a_junit4_class_reports_what_the_platform_reports_without_the_platform(
    classpath: list[Path], name: str
) -> None:
    test_class = name.removesuffix(".java").replace("/", ".")
    direct, launched = _run(classpath, test_class)
    platform, platform_launched = _run(classpath, test_class, "-Dcodereval.junit4.direct=false")
    assert platform_launched
    assert not launched
    assert direct == platform


def test_the_counts_of_a_mixed_junit4_class(classpath: list[Path]) -> None:
    # passes, expects, inTime and assumptionFails count as run; ignored does not.
    assert _run(classpath, "t.Mixed")[0] == "junit tests=6 failures=1 errors=1"


@pytest.mark.parametrize("test_class", ["t.Jupiter", "t.MetaAnnotated", "t.NestedJupiter",
                                        "t.Plain"])
def test_anything_of_junit5_or_no_junit4_test_goes_to_the_platform(
    classpath: list[Path], test_class: str
) -> None:
    assert _run(classpath, test_class)[1]
