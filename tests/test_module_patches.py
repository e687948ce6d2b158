"""Classes a classpath jar adds to one of the JDK's packages load as they did on Java 8.

Xerces 2.4 (Defects4J's JxPath) ships DOM Level 3 drafts in ``org.w3c.dom.ls``, a package of
the ``java.xml`` module since Java 9, whose classpath copies the JVM never sees: they are
patched into their module, and only those the JDK lacks.
"""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

from codereval.environments.java import JavaEnvInfo
from codereval.java.module_patches import module_patches, patch_flags

DRAFT = "package org.w3c.dom.ls;\npublic interface DocumentLS { int DRAFT = 3; }\n"
# A class of that package the JDK has: Java 8 loaded the JDK's, so must we.
SHADOW = "package org.w3c.dom.ls;\npublic interface LSInput { int SHADOWED = 1; }\n"
OWN = "package org.example;\npublic class Parser { }\n"
MAIN = """public class Main {
    public static void main(String[] args) throws Exception {
        Class<?> draft = Class.forName("org.w3c.dom.ls.DocumentLS");
        System.out.println(draft.getField("DRAFT").get(null));
        boolean shadowed = true;
        try {
            Class.forName("org.w3c.dom.ls.LSInput").getField("SHADOWED");
        } catch (NoSuchFieldException e) {
            shadowed = false;
        }
        System.out.println(shadowed ? "the jar's LSInput" : "the JDK's LSInput");
    }
}
"""


@pytest.fixture(scope="module")
def parser_jar(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A jar like Xerces 2.4's: its own classes, a draft the JDK lacks, one it has."""
    root = tmp_path_factory.mktemp("xerces")
    sources = []
    for name, text in (("DocumentLS", DRAFT), ("LSInput", SHADOW), ("Parser", OWN),
                       ("Main", MAIN)):
        path = root / "src" / f"{name}.java"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        sources.append(str(path))
    classes = root / "classes"
    # --release 8: no modules, as the jar's own build had it.
    subprocess.run(["javac", "--release", "8", "-d", str(classes), *sources], check=True,
                   capture_output=True)
    jar = root / "xerces-like.jar"
    with zipfile.ZipFile(jar, "w") as out:
        for path in sorted(classes.rglob("*.class")):
            out.write(path, path.relative_to(classes).as_posix())
    return jar


def test_only_the_classes_the_jdk_lacks_in_its_own_packages_are_patched(
        parser_jar: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEREVAL_HOME", str(tmp_path / "home"))
    patches = module_patches([parser_jar, tmp_path / "absent.jar"])
    assert set(patches) == {"java.xml"}
    with zipfile.ZipFile(patches["java.xml"]) as jar:
        assert jar.namelist() == ["org/w3c/dom/ls/DocumentLS.class"]
    # Made once per set of jars, then read from the cache.
    assert module_patches([parser_jar]) == patches


def test_a_project_without_such_classes_gets_no_patch(
        parser_jar: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEREVAL_HOME", str(tmp_path / "home"))
    plain = tmp_path / "plain.jar"
    with zipfile.ZipFile(parser_jar) as source, zipfile.ZipFile(plain, "w") as out:
        out.writestr("org/example/Parser.class", source.read("org/example/Parser.class"))
    assert module_patches([plain]) == {}
    assert patch_flags({}) == ()


def test_the_jvm_sees_the_patched_draft_and_still_the_jdks_own_class(
        parser_jar: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEREVAL_HOME", str(tmp_path / "home"))
    run = ["java", "-cp", str(parser_jar), "Main"]
    hidden = subprocess.run(run, capture_output=True, text=True, check=False)
    assert hidden.returncode != 0 and "ClassNotFoundException" in hidden.stderr
    patched = subprocess.run([run[0], *patch_flags(module_patches([parser_jar])), *run[1:]],
                             capture_output=True, text=True, check=False)
    assert patched.returncode == 0, patched.stderr
    assert patched.stdout.split("\n")[:2] == ["3", "the JDK's LSInput"]


def test_an_environment_offers_the_patches_of_its_dependencies(
        parser_jar: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEREVAL_HOME", str(tmp_path / "home"))
    info = JavaEnvInfo(root=tmp_path, project_root=tmp_path, main_roots=(), test_roots=(),
                       classes=tmp_path / "classes", test_classes=tmp_path / "test-classes",
                       dependencies=(parser_jar, tmp_path / "resources"), processors=False)
    assert set(info.module_patches()) == {"java.xml"}
