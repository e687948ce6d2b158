"""What projects of Defects4J's era need from the Java engine (found on commons-lang, Lang-1):
sources in the pom's own encoding, a JUnit the launcher accepts, and one's own bugs as tasks."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from codereval.benchmarks import builtin_dir
from codereval.environments.java import (
    BuildFailed,
    JavaEnvInfo,
    pom_source_encoding,
    python_codec,
)
from codereval.java.artifacts import needs_newer_junit

POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <properties>
    <project.build.sourceEncoding>{value}</project.build.sourceEncoding>
  </properties>
</project>
"""


@pytest.mark.parametrize(
    ("value", "expected"),
    [("ISO-8859-1", "ISO-8859-1"), ("UTF-8", "UTF-8"), ("${encoding}", "UTF-8")],
)
def test_the_source_encoding_is_the_poms(tmp_path: Path, value: str, expected: str) -> None:
    (tmp_path / "pom.xml").write_text(POM.format(value=value), encoding="utf-8")
    assert pom_source_encoding(tmp_path) == expected


def test_without_a_pom_or_the_property_sources_are_utf8(tmp_path: Path) -> None:
    assert pom_source_encoding(tmp_path) == "UTF-8"
    (tmp_path / "pom.xml").write_text("<project><modelVersion>4.0.0</modelVersion></project>")
    assert pom_source_encoding(tmp_path) == "UTF-8"


def test_java_charset_names_map_to_python_codecs_and_unknown_ones_fail_the_build() -> None:
    assert python_codec("ISO-8859-1") == "iso8859-1"
    assert python_codec("Cp1252") == "cp1252"
    with pytest.raises(BuildFailed, match="not one Python knows"):
        python_codec("X-NO-SUCH")


def test_a_latin1_source_is_read_in_its_own_encoding(tmp_path: Path) -> None:
    source = tmp_path / "EntityArrays.java"
    source.write_bytes('class E { String u = "\\u00FC"; } // \xfc - umlaut\n'.encode("latin-1"))
    info = JavaEnvInfo(root=tmp_path, project_root=tmp_path, main_roots=(), test_roots=(),
                       classes=tmp_path, test_classes=tmp_path, dependencies=(),
                       processors=False, encoding="ISO-8859-1")
    assert "ü - umlaut" in info.read_source(source)
    with pytest.raises(UnicodeDecodeError):
        source.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("jar", "older"),
    [("junit-4.11.jar", True), ("junit-3.8.2.jar", True), ("junit-4.8.1.jar", True),
     ("junit-4.12.jar", False), ("junit-4.13.2.jar", False), ("junit-jupiter-5.9.0.jar", False),
     ("hamcrest-core-1.3.jar", False)],
)
def test_a_junit_older_than_412_is_recognised(jar: str, older: bool) -> None:
    assert needs_newer_junit([Path("/m2/junit") / jar]) is older


def test_evaluate_takes_task_json_lines(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    mini = builtin_dir("mini_coderujb")
    # Defect-detection tasks run nothing: the path from --tasks to outcomes, quickly.
    tasks = [line for line in (mini / "tasks.jsonl").read_text().splitlines()
             if json.loads(line)["ujb"]["kind"] == "dd"]
    ids = {json.loads(line)["task_id"] for line in tasks}
    samples = [line for line in (mini / "samples.jsonl").read_text().splitlines()
               if json.loads(line)["task_id"] in ids]
    (tmp_path / "tasks.jsonl").write_text("\n".join(tasks) + "\n")
    (tmp_path / "samples.jsonl").write_text("\n".join(samples) + "\n")
    result = run_cli("evaluate", "--tasks", tmp_path / "tasks.jsonl", "--samples",
                     tmp_path / "samples.jsonl", "--out", tmp_path / "run")
    assert result.exit_code == 0, result.output
    outcomes = (tmp_path / "run" / "outcomes.jsonl").read_text().splitlines()
    assert len(outcomes) == len(samples)
    assert {json.loads(o)["task_id"] for o in outcomes} == ids


# --- what Defects4J's projects at their bugs' revisions need (prepare defects4j) -------------


def test_undeclared_sources_that_are_not_all_utf8_are_latin1(tmp_path: Path) -> None:
    from codereval.environments.java import source_encoding

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "A.java").write_bytes("class A {} // é".encode())
    assert source_encoding(tmp_path, [tmp_path / "src"]) == "UTF-8"
    (tmp_path / "src" / "B.java").write_bytes("class B {} // ç".encode("latin-1"))
    assert source_encoding(tmp_path, [tmp_path / "src"]) == "ISO-8859-1"
    # What the pom declares wins, whatever the files hold.
    (tmp_path / "pom.xml").write_text(POM.format(value="UTF-8"), encoding="utf-8")
    assert source_encoding(tmp_path, [tmp_path / "src"]) == "UTF-8"


def test_a_compiler_plugins_encoding_counts_when_the_property_is_absent(tmp_path: Path) -> None:
    (tmp_path / "pom.xml").write_text(
        "<project><build><plugins><plugin><artifactId>maven-compiler-plugin</artifactId>"
        "<configuration><encoding>ISO-8859-1</encoding></configuration></plugin></plugins>"
        "</build></project>", encoding="utf-8")
    assert pom_source_encoding(tmp_path) == "ISO-8859-1"


def test_profiles_that_add_dependencies_are_found(tmp_path: Path) -> None:
    from codereval.environments.java import dependency_profiles

    (tmp_path / "pom.xml").write_text(
        "<project><profiles>"
        "<profile><id>benchmark</id><dependencies><dependency/></dependencies></profile>"
        "<profile><id>release</id><build/></profile>"
        "</profiles></project>", encoding="utf-8")
    assert dependency_profiles(tmp_path / "pom.xml") == ["benchmark"]


def test_a_tree_with_source_templates_runs_generate_sources(tmp_path: Path) -> None:
    from codereval.environments.java import _has_source_templates

    assert not _has_source_templates(tmp_path)
    package = tmp_path / "src" / "main" / "java" / "com" / "example" / "json"
    package.mkdir(parents=True)
    (package / "Parser.java").write_text("package com.example.json;\n", encoding="utf-8")
    assert not _has_source_templates(tmp_path)
    # Jackson's version class, which a plugin bound in its parent pom fills in.
    (package / "PackageVersion.java.in").write_text("package @package@;\n", encoding="utf-8")
    assert _has_source_templates(tmp_path)


PARENT_POM = """<?xml version="1.0" encoding="ISO-8859-1"?>
<project>
  <parent>
    <groupId>org.apache.commons</groupId>
    <artifactId>commons-parent</artifactId>
    <version>{version}</version>{relative}
  </parent>
  <artifactId>commons-lang3</artifactId>
  <version>3.2-SNAPSHOT</version>
  <name>Lang \xe9</name>
</project>
"""


def _pom(folder: Path, version: str, relative: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    pom = folder / "pom.xml"
    text = PARENT_POM.format(version=version, relative=relative)
    pom.write_bytes(text.encode("latin-1"))
    return pom


def test_a_snapshot_parent_no_registry_serves_is_built_against_its_release(
    tmp_path: Path,
) -> None:
    from codereval.environments.java import release_snapshot_parent

    log = tmp_path / "build.log"
    pom = _pom(tmp_path / "repo", "28-SNAPSHOT")
    release_snapshot_parent(pom.parent, log=log)
    data = pom.read_bytes()
    # Only the parent's version changes; the project's own snapshot version and the bytes
    # of a pom in another encoding stay as they were.
    assert b"<version>28</version>" in data and b"<version>3.2-SNAPSHOT</version>" in data
    assert b"Lang \xe9" in data
    assert "28-SNAPSHOT is a snapshot no registry serves" in log.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("version", "relative", "parent_in_tree"),
    [
        ("28", "", False),  # a release: nothing to do
        ("5-SNAPSHOT", "", True),  # the parent is ../pom.xml, built from the checkout
        ("5-SNAPSHOT", "\n    <relativePath>../base</relativePath>", True),
    ],
)
def test_a_released_parent_or_one_in_the_tree_is_left_alone(
    tmp_path: Path, version: str, relative: str, parent_in_tree: bool
) -> None:
    from codereval.environments.java import release_snapshot_parent

    if parent_in_tree:
        _pom(tmp_path / "base" if "base" in relative else tmp_path, "1")
    pom = _pom(tmp_path / "module", version, relative)
    before = pom.read_bytes()
    release_snapshot_parent(pom.parent, log=tmp_path / "build.log")
    assert pom.read_bytes() == before


@pytest.mark.slow
def test_a_test_file_javac_rejects_is_left_out_and_listed(tmp_path: Path) -> None:
    from codereval.environments.base import ProjectSpec
    from codereval.environments.java import JavaEnvironmentBuilder, load_env_info
    from codereval.model import Language

    project = tmp_path / "p"
    (project / "src" / "java" / "a").mkdir(parents=True)
    (project / "src" / "test" / "a").mkdir(parents=True)
    (project / "src" / "java" / "a" / "A.java").write_text(
        "package a; public class A { public int one() { return 1; } }", encoding="utf-8")
    (project / "src" / "test" / "a" / "ATest.java").write_text(
        "package a; public class ATest { int x = new A().one(); }", encoding="utf-8")
    (project / "src" / "test" / "a" / "Bench.java").write_text(
        "package a; public class Bench { gone.Library l; }", encoding="utf-8")
    # Latin-1 bytes in a file of a project compiled as UTF-8: U+FFFD, as Java 8's javac read it.
    (project / "src" / "test" / "a" / "Text.java").write_bytes(
        'package a; class Text { String s = "ç"; }'.encode("latin-1"))
    (project / "pom.xml").write_text(
        "<project><modelVersion>4.0.0</modelVersion><groupId>t</groupId><artifactId>p"
        "</artifactId><version>1</version><properties><project.build.sourceEncoding>UTF-8"
        "</project.build.sourceEncoding></properties></project>", encoding="utf-8")
    spec = ProjectSpec(name="old/layout", language=Language.JAVA, source=str(project),
                       source_roots=("src/java",), test_roots=("src/test",))
    env = JavaEnvironmentBuilder().build(spec, root=tmp_path / "cache")
    assert env.ready, env.error
    info = load_env_info(env.path)
    assert (info.test_classes / "a" / "ATest.class").is_file()
    assert (info.test_classes / "a" / "Text.class").is_file()
    assert not (info.test_classes / "a" / "Bench.class").exists()
    data = json.loads((env.path / "env.json").read_text(encoding="utf-8"))
    assert data["tests_left_out"] == ["src/src/test/a/Bench.java"]
    # With Maven's own layout (no test_roots given), a test that does not compile still fails
    # the build: nothing is left out silently there.
    maven = tmp_path / "m"
    (maven / "src" / "main" / "java").mkdir(parents=True)
    (maven / "src" / "test" / "java").mkdir(parents=True)
    (maven / "src" / "main" / "java" / "A.java").write_text("class A {}", encoding="utf-8")
    (maven / "src" / "test" / "java" / "Bench.java").write_text(
        "class Bench { gone.Library l; }", encoding="utf-8")
    plain = ProjectSpec(name="plain/layout", language=Language.JAVA, source=str(maven))
    failed = JavaEnvironmentBuilder().build(plain, root=tmp_path / "cache")
    assert not failed.ready and "compiling the project's tests failed" in (failed.error or "")


@pytest.mark.slow
def test_sources_older_than_java5_build_and_compile_samples_with_eclipses_compiler(
    tmp_path: Path,
) -> None:
    """Commons Lang 2's `package org.apache.commons.lang.enum`: Java 17's javac refuses it at
    any release it has; Eclipse's compiler at 1.4 compliance builds it, and a sample that
    uses the package compiles with it too."""
    from codereval.environments.base import ProjectSpec
    from codereval.environments.java import JavaEnvironmentBuilder, load_env_info
    from codereval.model import Language
    from codereval.runners.java import JavaProjectRunner

    project = tmp_path / "lang2"
    enum_dir = project / "src" / "java" / "old" / "enum"
    enum_dir.mkdir(parents=True)
    (project / "src" / "test" / "old").mkdir(parents=True)
    (enum_dir / "Enum.java").write_text(
        "package old.enum;\n"
        "public abstract class Enum implements java.io.Serializable {\n"
        "    private final String name;\n"
        "    protected Enum(String name) { this.name = name; }\n"
        "    public String getName() { return name; }\n"
        "}\n", encoding="utf-8")
    # Java 17's Random implements RandomGenerator, whose nextLong(long) this static method
    # may not hide: it compiles against Java 8's API only, as javac's --release 8 does.
    (project / "src" / "java" / "old" / "JVMRandom.java").write_text(
        "package old;\npublic final class JVMRandom extends java.util.Random {\n"
        "    public static long nextLong(long n) { return n; }\n}\n", encoding="utf-8")
    (project / "src" / "test" / "old" / "EnumTest.java").write_text(
        "package old;\nimport old.enum.Enum;\n"
        "public class EnumTest { Enum e; java.util.List l = new java.util.ArrayList(); }\n",
        encoding="utf-8")
    # Defects4J's fix to the test order: JUnit 4.11's annotation on a JUnit 3 test, which
    # needs Java 5 and a JUnit newer than the project's 3.8.1 (the one its suite runs with).
    (project / "src" / "test" / "old" / "OrderedTest.java").write_text(
        "package old;\nimport org.junit.FixMethodOrder;\nimport org.junit.runners.MethodSorters;\n"
        "@FixMethodOrder(MethodSorters.NAME_ASCENDING)\n"
        "public class OrderedTest { java.util.List<String> names; }\n", encoding="utf-8")
    (project / "src" / "test" / "old" / "Gone.java").write_text(
        "package old; class Gone { gone.Library library; }", encoding="utf-8")
    (project / "lib").mkdir()
    with zipfile.ZipFile(project / "lib" / "junit-3.8.1.jar", "w") as jar:
        jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    spec = ProjectSpec(name="old/lang2", language=Language.JAVA, source=str(project),
                       source_roots=("src/java",), test_roots=("src/test",), java_release="8",
                       jars=("lib/*.jar",))
    env = JavaEnvironmentBuilder().build(spec, root=tmp_path / "cache")
    assert env.ready, env.error
    info = load_env_info(env.path)
    assert (info.compiler, info.java_source) == ("ecj", "1.4")
    assert (info.classes / "old" / "enum" / "Enum.class").is_file()
    assert (info.classes / "old" / "JVMRandom.class").is_file()
    assert (info.test_classes / "old" / "EnumTest.class").is_file()
    # 1.4 rejects it; 1.5 with the newer JUnit compiles it. What 1.5 rejects too stays out.
    assert (info.test_classes / "old" / "OrderedTest.class").is_file()
    data = json.loads((env.path / "env.json").read_text(encoding="utf-8"))
    assert data["tests_left_out"] == ["src/src/test/old/Gone.java"]
    assert "Eclipse's compiler at 1.4" in (env.path / "build.log").read_text(encoding="utf-8")

    tools = JavaProjectRunner()
    try:
        compiler = tools.compiler_for(info)
        sample = {"old/Color.java": "package old;\nimport old.enum.Enum;\n"
                                    "public class Color extends Enum {\n"
                                    "    Color() { super(\"red\"); }\n}\n"}
        done = compiler.compile(sample, classpath=info.compile_classpath(),
                                out_dir=tmp_path / "out", options=info.compile_options())
        assert done.ok and done.backend == "ecj", done.diagnostics
        broken = compiler.compile({"old/Bad.java": "package old; class Bad { int x = ; }"},
                                  classpath=info.compile_classpath(), out_dir=tmp_path / "bad",
                                  options=info.compile_options())
        assert not broken.ok and "ERROR in" in broken.diagnostics
        # A generated test (CoderUJB's CTG and ITG) compiles as the project's tests: at 1.5,
        # against the newer JUnit, as Defects4J compiles them; at the sources' 1.4 it could not.
        junit4 = {"old/GeneratedTest.java": "package old;\nimport org.junit.Test;\n"
                                            "public class GeneratedTest {\n"
                                            "    @Test public void names() {\n"
                                            "        java.util.List<String> l = null;\n"
                                            "    }\n}\n"}
        as_test = compiler.compile(junit4, classpath=info.test_compile_classpath(),
                                   out_dir=tmp_path / "test", options=info.test_compile_options())
        assert as_test.ok, as_test.diagnostics
        as_source = compiler.compile(junit4, classpath=info.compile_classpath(),
                                     out_dir=tmp_path / "source", options=info.compile_options())
        assert not as_source.ok
    finally:
        tools.close()


@pytest.mark.slow
def test_sources_java8_inference_rejects_build_at_release_7_and_so_do_samples(
    tmp_path: Path,
) -> None:
    """Commons Collections 4.0's `cond ? RAW_COMPARATOR : comparator`, assigned to a
    Comparator<E>: Java 5-7 accepted it, Java 8's inference does not. Asked for --release 8,
    the build retries at 7, records it, and samples compile at 7 too; a project that fails at 7
    as well reports the first failure."""
    from codereval.environments.base import ProjectSpec
    from codereval.environments.java import JavaEnvironmentBuilder, load_env_info
    from codereval.model import Language
    from codereval.runners.java import JavaProjectRunner

    project = tmp_path / "collections4"
    (project / "src" / "java" / "c").mkdir(parents=True)
    (project / "src" / "test" / "c").mkdir(parents=True)
    (project / "src" / "java" / "c" / "Utils.java").write_text(
        "package c;\npublic class Utils {\n"
        "    @SuppressWarnings(\"rawtypes\")\n"
        "    public static final java.util.Comparator NATURAL = null;\n}\n", encoding="utf-8")
    reverse = ("package c;\nimport java.util.Comparator;\n"
               "public class Reverse<E> {\n    private final Comparator<E> comparator;\n"
               "    @SuppressWarnings(\"unchecked\")\n"
               "    public Reverse(Comparator<? super E> comparator) {\n"
               "        this.comparator = comparator == null ? Utils.NATURAL : comparator;\n"
               "    }\n}\n")
    (project / "src" / "java" / "c" / "Reverse.java").write_text(reverse, encoding="utf-8")
    (project / "src" / "test" / "c" / "ReverseTest.java").write_text(
        "package c;\npublic class ReverseTest { Reverse<String> r = new Reverse<>(null); }\n",
        encoding="utf-8")
    spec = ProjectSpec(name="old/collections4", language=Language.JAVA, source=str(project),
                       source_roots=("src/java",), test_roots=("src/test",), java_release="8")
    env = JavaEnvironmentBuilder().build(spec, root=tmp_path / "cache")
    assert env.ready, env.error
    info = load_env_info(env.path)
    assert (info.compiler, info.java_release) == ("javac", "7")
    assert (info.classes / "c" / "Reverse.class").is_file()
    assert (info.test_classes / "c" / "ReverseTest.class").is_file()
    assert "compiling at --release 7" in (env.path / "build.log").read_text(encoding="utf-8")
    assert info.compile_options()[-3:] == ["--release", "7", "-Xlint:-options"]

    tools = JavaProjectRunner()
    try:
        compiler = tools.compiler_for(info)
        # A sample written as the project's own code compiles; Java 8's lambdas do not, as
        # at the project's level.
        same = compiler.compile({"c/Reverse.java": reverse}, classpath=info.compile_classpath(),
                                out_dir=tmp_path / "out", options=info.compile_options())
        assert same.ok, same.diagnostics
        assert "obsolete" not in same.diagnostics
        lambda_ = compiler.compile(
            {"c/L.java": "package c; class L { Runnable r = () -> {}; }"},
            classpath=info.compile_classpath(), out_dir=tmp_path / "lambda",
            options=info.compile_options())
        assert not lambda_.ok
    finally:
        tools.close()

    # Sources that fail at 7 too: the build fails with --release 8's own error.
    (project / "src" / "java" / "c" / "Broken.java").write_text(
        "package c; class Broken { int x = missing(); }", encoding="utf-8")
    broken = JavaEnvironmentBuilder().build(
        ProjectSpec(name="old/broken", language=Language.JAVA, source=str(project),
                    source_roots=("src/java",), test_roots=("src/test",), java_release="8"),
        root=tmp_path / "cache")
    assert not broken.ready
    assert "compiling the project failed" in (broken.error or "")
    assert "(--release 7)" not in (broken.error or "")


def test_an_older_releases_api_is_written_from_the_jdks_own_signatures(tmp_path: Path,
                                                                       monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import zipfile

    from codereval.java.platform_api import release_api

    monkeypatch.setenv("CODEREVAL_HOME", str(tmp_path))
    api = release_api("8")
    assert api.parent == tmp_path / "java-tools"
    names = set(zipfile.ZipFile(api).namelist())
    assert "java/util/Random.class" in names and "java/lang/String.class" in names
    # Added after Java 8: not in its API.
    assert "java/util/random/RandomGenerator.class" not in names
    assert "java/lang/Record.class" not in names
    assert release_api("8") == api  # made once


EXEC_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0"><build><plugins>
  <plugin><artifactId>maven-compiler-plugin</artifactId></plugin>
  <plugin>
    <groupId>org.codehaus.mojo</groupId><artifactId>exec-maven-plugin</artifactId>
    <executions>
      <execution><id>compile-tzdb</id><phase>compile</phase><goals><goal>java</goal></goals>
      </execution>
      <execution><id>site-only</id><phase>site</phase><goals><goal>java</goal></goals>
      </execution>
      <execution><id>a-shell</id><phase>process-classes</phase><goals><goal>exec</goal></goals>
      </execution>
    </executions>
  </plugin>
  <plugin>
    <artifactId>maven-antrun-plugin</artifactId>
    <executions>
      <execution><phase>compile</phase><goals><goal>run</goal></goals></execution>
      <execution><id>docs</id><phase>package</phase><goals><goal>run</goal></goals></execution>
    </executions>
  </plugin>
</plugins></build></project>
"""


def test_the_poms_exec_java_steps_up_to_the_classes_are_found(tmp_path: Path) -> None:
    """Joda-Time compiles its time-zone database into its classes with exec:java at compile
    time (its older revisions with an Ant task, antrun:run); without it every zone but UTC is
    missing and most of its tests fail."""
    from codereval.environments.java import _exec_steps, _steps_key

    (tmp_path / "pom.xml").write_text(EXEC_POM, encoding="utf-8")
    assert _exec_steps(tmp_path) == ["exec:java@compile-tzdb", "antrun:run@default"]
    # Environments keyed before antrun's steps ran keep their keys.
    assert _steps_key(["exec:java@compile-tzdb"]) == "compile-tzdb"
    (tmp_path / "pom.xml").write_text("<project><build/></project>", encoding="utf-8")
    assert _exec_steps(tmp_path) == []


ANTRUN_POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion><groupId>t</groupId><artifactId>zones</artifactId>
  <version>1</version>
  <properties><project.build.sourceEncoding>UTF-8</project.build.sourceEncoding></properties>
  <build><plugins><plugin>
    <artifactId>maven-antrun-plugin</artifactId><version>1.7</version>
    <executions><execution><id>compile-zones</id><phase>compile</phase>
      <configuration><target>
        <java classname="zones.Compiler" fork="true" failonerror="true">
          <classpath refid="maven.compile.classpath"/>
          <arg value="${project.build.outputDirectory}/zones/data"/>
        </java>
      </target></configuration>
      <goals><goal>run</goal></goals>
    </execution></executions>
  </plugin></plugins></build>
</project>
"""


@pytest.mark.slow
def test_a_program_the_pom_runs_with_ant_at_compile_time_writes_into_the_classes(
    tmp_path: Path,
) -> None:
    """Joda-Time before 2.2 compiles its time-zone database with an Ant `<java>` task of
    maven-antrun-plugin bound to compile: the environment's classes carry what it wrote."""
    from codereval.environments.base import ProjectSpec
    from codereval.environments.java import JavaEnvironmentBuilder, load_env_info
    from codereval.model import Language

    project = tmp_path / "zones"
    (project / "src" / "main" / "java" / "zones").mkdir(parents=True)
    (project / "src" / "main" / "java" / "zones" / "Compiler.java").write_text(
        "package zones;\n"
        "public class Compiler {\n"
        "    public static void main(String[] args) throws Exception {\n"
        "        java.io.File dir = new java.io.File(args[0]);\n"
        "        dir.mkdirs();\n"
        "        java.nio.file.Files.write(new java.io.File(dir, \"Europe.London\").toPath(),\n"
        "            \"GMT/BST\".getBytes(\"UTF-8\"));\n"
        "    }\n"
        "}\n", encoding="utf-8")
    (project / "pom.xml").write_text(ANTRUN_POM, encoding="utf-8")
    spec = ProjectSpec(name="t/zones", language=Language.JAVA, source=str(project))
    env = JavaEnvironmentBuilder().build(spec, root=tmp_path / "cache")
    assert env.ready, env.error
    info = load_env_info(env.path)
    assert (info.classes / "zones" / "data" / "Europe.London").read_text() == "GMT/BST"
    assert (info.classes / "zones" / "Compiler.class").is_file()
    assert not (project / "target").exists()  # built in the environment, not the source
