"""What a compiled class offers other classes and what it uses of them, read from its bytes.

A sample that changes a method's signature (Lang-29's fix turns ``float toJavaVersionInt`` into
``int``) leaves the project's classes compiled against the old one: they stop with
``NoSuchMethodError`` where Defects4J, which compiles the project again, runs them. This module
tells which classes changed what others can link to, and which classes use them, so those
alone are compiled again (JVMS chapter 4, the class file format).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

MAGIC = 0xCAFEBABE
ACC_PRIVATE = 0x0002
# What another class's compiled code depends on in a member's flags: who may see it, whether it
# is static, final (an override) or abstract. Synthetic and bridge bits follow from the rest.
LINKED_FLAGS = 0x0001 | 0x0004 | 0x0008 | 0x0010 | 0x0400
# A class's flags that decide how others link to it (public, final, interface, abstract, enum,
# annotation, record-less): a class turned into an interface breaks its callers' invocations.
CLASS_FLAGS = 0x0001 | 0x0010 | 0x0200 | 0x0400 | 0x2000 | 0x4000
# Class names inside descriptors and signatures: "Lorg/x/Y;" (and arrays of them).
_DESCRIPTOR_CLASS = re.compile(r"L([^;<>]+)[;<]")

# Constant pool tags and the size of what follows them, for those read over.
_FIXED = {3: 4, 4: 4, 5: 8, 6: 8, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4,
          18: 4, 19: 2, 20: 2}
_UTF8, _CLASS, _LONG, _DOUBLE = 1, 7, 5, 6


class ClassFileError(ValueError):
    """The bytes are not a class file this reader understands."""


@dataclass(frozen=True)
class ClassSummary:
    """A class as other classes link to it, and the classes it names."""

    # Internal name ("org/apache/commons/lang3/SystemUtils", "a/B$Inner").
    name: str
    # The source file's name as javac recorded it ("SystemUtils.java"), "" when stripped.
    source_file: str
    # Its flags, superclass, interfaces and every member but private ones, with descriptors:
    # another class compiled against it links to exactly these.
    api: frozenset[str]
    # Every class it names: its constant pool's classes and the classes in its descriptors.
    uses: frozenset[str]

    @property
    def package(self) -> str:
        return self.name.rpartition("/")[0]

    @property
    def source_path(self) -> str:
        """Its source below a source root ("org/x/Y.java"): the recorded file in its package,
        or its outermost class's name when javac recorded none."""
        file = self.source_file or f"{self.name.rpartition('/')[2].split('$')[0]}.java"
        return f"{self.package}/{file}" if self.package else file


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, fmt: str) -> tuple[int, ...]:
        size = struct.calcsize(fmt)
        if self.at + size > len(self.data):
            raise ClassFileError("truncated class file")
        values = struct.unpack_from(fmt, self.data, self.at)
        self.at += size
        return values

    def u2(self) -> int:
        return self.take(">H")[0]

    def skip(self, size: int) -> None:
        if self.at + size > len(self.data):
            raise ClassFileError("truncated class file")
        self.at += size


def read_class(data: bytes) -> ClassSummary:
    """The summary of one class file's bytes."""
    reader = _Reader(data)
    magic, _minor, _major, count = reader.take(">IHHH")
    if magic != MAGIC:
        raise ClassFileError("not a class file (bad magic number)")
    utf8: dict[int, str] = {}
    # CONSTANT_Class index -> the index of its name.
    pool_class: dict[int, int] = {}
    index = 1
    while index < count:
        tag = reader.take(">B")[0]
        if tag == _UTF8:
            length = reader.u2()
            start = reader.at
            reader.skip(length)
            # Modified UTF-8: only NUL and supplementary characters differ, never in a name.
            utf8[index] = data[start:start + length].decode("utf-8", errors="replace")
        elif tag == _CLASS:
            pool_class[index] = reader.u2()
        elif tag in _FIXED:
            reader.skip(_FIXED[tag])
        else:
            raise ClassFileError(f"unknown constant pool tag {tag}")
        index += 2 if tag in (_LONG, _DOUBLE) else 1

    def text(i: int) -> str:
        try:
            return utf8[i]
        except KeyError:
            raise ClassFileError(f"constant {i} is not a UTF-8 string") from None

    def class_name(i: int) -> str:
        if i not in pool_class:
            raise ClassFileError(f"constant {i} is not a class")
        return text(pool_class[i])

    access, this_index, super_index = reader.take(">HHH")
    name = class_name(this_index)
    api = {f"class {access & CLASS_FLAGS:#x}",
           f"extends {class_name(super_index) if super_index else ''}"}
    for _ in range(reader.u2()):
        api.add(f"implements {class_name(reader.u2())}")
    for kind in ("field", "method"):
        for _ in range(reader.u2()):
            flags, name_index, descriptor_index = reader.take(">HHH")
            if not flags & ACC_PRIVATE:
                api.add(f"{kind} {text(name_index)} {text(descriptor_index)} "
                        f"{flags & LINKED_FLAGS:#x}")
            _skip_attributes(reader)
    source_file = ""
    for _ in range(reader.u2()):
        attribute, length = reader.take(">HI")
        if utf8.get(attribute) == "SourceFile" and length == 2:
            source_file = text(reader.u2())
        else:
            reader.skip(length)
    uses = {_element_class(text(i)) for i in pool_class.values()}
    # Descriptors and generic signatures name classes too (a field of type Y, a List<Y>). A
    # string constant that looks like one only costs a needless compile.
    for value in utf8.values():
        uses.update(_DESCRIPTOR_CLASS.findall(value))
    uses.discard("")
    uses.discard(name)
    return ClassSummary(name=name, source_file=source_file, api=frozenset(api),
                        uses=frozenset(uses))


def _skip_attributes(reader: _Reader) -> None:
    for _ in range(reader.u2()):
        _name, length = reader.take(">HI")
        reader.skip(length)


def _element_class(name: str) -> str:
    """An array class's element class ("[Lorg/x/Y;" -> "org/x/Y"; "[I" -> "")."""
    if not name.startswith("["):
        return name
    found = _DESCRIPTOR_CLASS.search(name)
    return found.group(1) if found else ""


def read_class_file(path: Path) -> ClassSummary:
    try:
        return read_class(path.read_bytes())
    except ClassFileError as exc:
        raise ClassFileError(f"{path}: {exc}") from None


def class_files(folder: Path) -> Iterator[Path]:
    """The class files below ``folder`` (none when it does not exist)."""
    if folder.is_dir():
        yield from sorted(folder.rglob("*.class"))


@dataclass(frozen=True)
class ApiChange:
    """How a folder of freshly compiled classes differs from the project's."""

    # The classes others link to differently: API changed, added, or gone from their file.
    changed: frozenset[str]
    # The source files the fresh classes came from ("org/x/Y.java").
    sources: frozenset[str]


def api_change(new_root: Path, old_root: Path) -> ApiChange:
    """Compare the classes below ``new_root`` with the same names below ``old_root``; a class
    of the same source file that ``new_root`` lacks (a nested class removed) counts too."""
    changed: set[str] = set()
    sources: set[str] = set()
    seen: set[str] = set()
    for path in class_files(new_root):
        summary = read_class_file(path)
        seen.add(summary.name)
        sources.add(summary.source_path)
        old = old_root / path.relative_to(new_root)
        if not old.is_file() or read_class_file(old).api != summary.api:
            changed.add(summary.name)
    for source in sources:
        outer = Path(source).stem
        for old in (old_root / source).parent.glob(f"{outer}*.class"):
            if old.stem != outer and not old.stem.startswith(f"{outer}$"):
                continue
            summary = read_class_file(old)
            if summary.source_path == source and summary.name not in seen:
                changed.add(summary.name)
    return ApiChange(changed=frozenset(changed), sources=frozenset(sources))


@dataclass(frozen=True)
class UsageIndex:
    """Which source files' classes, in one compiled folder, use each class."""

    users: dict[str, frozenset[str]]

    @classmethod
    def of(cls, folder: Path) -> UsageIndex:
        users: dict[str, set[str]] = {}
        for path in class_files(folder):
            summary = read_class_file(path)
            for used in summary.uses:
                users.setdefault(used, set()).add(summary.source_path)
        return cls(users={k: frozenset(v) for k, v in users.items()})

    def sources_using(self, names: Iterable[str]) -> set[str]:
        """The source files (below their root) whose classes name any of ``names``."""
        found: set[str] = set()
        for name in names:
            found |= self.users.get(name, frozenset())
        return found
