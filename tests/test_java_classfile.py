"""Reading compiled classes: what others link to (API), what each uses, and who uses a class.

The sources are compiled here by the JDK's javac, so the bytes are a real compiler's.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from codereval.java.classfile import (
    ClassFileError,
    UsageIndex,
    api_change,
    read_class,
    read_class_file,
)
from codereval.java.toolchain import find_jdk, missing_toolchain

pytestmark = pytest.mark.skipif(missing_toolchain() is not None, reason="no JDK")

VERSIONS = '''package org.x;

public class Versions {
    public static final String NAME = "v";
    private int hidden;
    public static float toInt(String text) { return text == null ? 0 : helper(text); }
    private static int helper(String text) { return text.length(); }
    public static class Parsed { public int major; }
    public java.util.List<Parsed> all() { return null; }
}
'''

USER_BY_CALL = '''package org.x.use;

public class ByCall {
    public float go() { return org.x.Versions.toInt("1"); }
}
'''

USER_BY_GENERIC = '''package org.x.use;

import java.util.List;

public class ByGeneric {
    private List<org.x.Versions.Parsed> kept;
    Runnable later = new Runnable() { public void run() { System.out.println(kept); } };
}
'''

BYSTANDER = '''package org.x.use;

public class Bystander {
    public String name() { return "Versions"; }
}
'''


def compile_sources(root: Path, sources: dict[str, str], classpath: Path | None = None) -> Path:
    src, out = root / "src", root / "classes"
    paths = []
    for relative, text in sources.items():
        path = src / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    out.mkdir(parents=True, exist_ok=True)
    extra = ["-cp", str(classpath)] if classpath is not None else []
    subprocess.run([str(find_jdk().javac), "-g", "-d", str(out), *extra, *paths],
                   check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_sources(tmp_path_factory.mktemp("project"), {
        "org/x/Versions.java": VERSIONS, "org/x/use/ByCall.java": USER_BY_CALL,
        "org/x/use/ByGeneric.java": USER_BY_GENERIC, "org/x/use/Bystander.java": BYSTANDER})


def recompiled(tmp_path: Path, project: Path, text: str) -> Path:
    """Versions.java alone compiled again from ``text`` (as a sample's file is)."""
    return compile_sources(tmp_path, {"org/x/Versions.java": text}, classpath=project)


def test_a_class_reads_as_its_name_source_and_non_private_members(project: Path) -> None:
    summary = read_class_file(project / "org/x/Versions.class")
    assert (summary.name, summary.source_file) == ("org/x/Versions", "Versions.java")
    assert summary.source_path == "org/x/Versions.java"
    assert "method toInt (Ljava/lang/String;)F 0x9" in summary.api
    assert "field NAME Ljava/lang/String; 0x19" in summary.api
    assert "method all ()Ljava/util/List; 0x1" in summary.api
    assert not any(" helper " in m or " hidden " in m for m in summary.api)


def test_a_nested_class_comes_from_its_outer_file(project: Path) -> None:
    nested = read_class_file(project / "org/x/Versions$Parsed.class")
    assert nested.name == "org/x/Versions$Parsed"
    assert nested.source_path == "org/x/Versions.java"


def test_what_a_class_uses_includes_its_calls_and_its_generic_types(project: Path) -> None:
    assert "org/x/Versions" in read_class_file(project / "org/x/use/ByCall.class").uses
    generic = read_class_file(project / "org/x/use/ByGeneric.class").uses
    assert "org/x/Versions$Parsed" in generic  # only in the field's generic signature
    assert "org/x/Versions" not in read_class_file(project / "org/x/use/Bystander.class").uses


def test_only_the_users_of_a_class_are_found_by_their_source_files(project: Path) -> None:
    users = UsageIndex.of(project)
    # ByGeneric names Versions too: as the outer class of the Parsed it uses.
    assert users.sources_using(["org/x/Versions"]) == {
        "org/x/Versions.java", "org/x/use/ByCall.java", "org/x/use/ByGeneric.java"}
    # ByGeneric$1 (its anonymous Runnable) reads the field too: still ByGeneric.java.
    assert users.sources_using(["org/x/Versions$Parsed"]) == {
        "org/x/Versions.java", "org/x/use/ByGeneric.java"}
    assert users.sources_using(["org/x/Nothing"]) == set()


@pytest.mark.parametrize(("label", "old", "new", "changed"), [
    ("a body changed", "? 0 : helper(text)", "? 1 : helper(text)", set()),
    ("a private member changed", "private static int helper(String text)",
     "private static long helper(String text)", set()),
    ("a return type changed (Lang-29)", "public static float toInt", "public static int toInt",
     {"org/x/Versions"}),
    ("a method turned non-static", "public static float toInt(String text) { return text == "
     "null ? 0 : helper(text); }", "public float toInt(String text) { return 0; }",
     {"org/x/Versions"}),
    ("a method added", "    private int hidden;",
     "    private int hidden;\n    public void extra() {}", {"org/x/Versions"}),
    ("a nested class removed", "    public static class Parsed { public int major; }\n", "",
     {"org/x/Versions$Parsed"}),
])
def test_a_recompiled_class_changes_its_api_only_when_others_link_differently(
    tmp_path: Path, project: Path, label: str, old: str, new: str, changed: set[str],
) -> None:
    assert old in VERSIONS, label
    text = VERSIONS.replace(old, new)
    if "class Parsed" not in text:
        text = text.replace("java.util.List<Parsed>", "java.util.List<String>")
    change = api_change(recompiled(tmp_path, project, text), project)
    assert set(change.changed) >= changed, label
    if not changed:
        assert change.changed == frozenset(), label
    assert change.sources == {"org/x/Versions.java"}


def test_bytes_that_are_not_a_class_file_are_refused(tmp_path: Path, project: Path) -> None:
    with pytest.raises(ClassFileError, match="magic"):
        read_class(b"PK\x03\x04" + b"\0" * 20)
    data = (project / "org/x/Versions.class").read_bytes()
    with pytest.raises(ClassFileError, match="truncated"):
        read_class(data[:200])
    broken = tmp_path / "Broken.class"
    broken.write_bytes(data[:40])
    with pytest.raises(ClassFileError, match=r"Broken\.class"):
        read_class_file(broken)
