"""Read a Docker image tarball without a Docker engine: copy one subtree of the image's filesystem.

The original CoderEval platform shipped as an image whose filesystem holds the projects and their
official tests under ``/home/travis/builds/repos``. :func:`extract_image_tree` reads either form:

- ``docker save``: ``manifest.json`` lists each image's layers, as ``<id>/layer.tar`` (form
  ``"save"``) or, in the OCI layout Docker 25 writes (``oci-layout``, ``index.json``),
  ``blobs/sha256/<digest>`` (form ``"oci"``; a bare OCI layout without ``manifest.json`` is read
  through ``index.json``). Layers are plain tar, gzip or zstd (zstd needs ``zstandard``), applied
  in order: ``.wh.<name>`` deletes ``<name>`` from lower layers, ``.wh..wh..opq`` hides all that
  lower layers put in its directory, and neither touches its own layer (the OCI rule);
- ``docker export``: one flattened filesystem tar.

A layer is read once, entry by entry, into a staging directory beside ``dest`` that becomes
``dest`` when everything is applied. A compressed outer tarball (``.tar.gz``) is first
decompressed to a file in that staging area: layers are read in the manifest's order, not the
tar's, and a gzip stream cannot seek.

Nothing is written outside ``dest``. Absolute names, names with ``..``, symlinks leaving the
subtree, hard links to files outside it, device files and FIFOs are skipped and listed in
:attr:`ImageExtract.skipped`; a symlink that stays inside is kept, rewritten as a relative link
(``/home/travis/builds/repos/p/a`` becomes ``a``). Nothing is ever written through a symlink.
File modes follow tarfile's ``"data"`` filter (owner read/write, no setuid or group/other write);
directories keep the default mode; owners are not kept.
"""

from __future__ import annotations

import contextlib
import gzip
import importlib
import json
import os
import posixpath
import shutil
import stat
import tarfile
import tempfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import IO, Any, Literal

from codereval.errors import UserError, name_some
from codereval.workspace.views import remove_tree

Form = Literal["save", "export", "oci"]
Progress = Callable[[int, int], None]

DEFAULT_SUBTREE = "home/travis/builds/repos"

_WHITEOUT = ".wh."
_OPAQUE = ".wh..wh..opq"
_WHITEOUT_META = ".wh..wh."  # aufs bookkeeping (.wh..wh.plnk, ...), not a deletion
_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_CHUNK = 1 << 20
_PROGRESS_STEP = 8 << 20
_OPEN_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True, kw_only=True)
class ImageExtract:
    """What :func:`extract_image_tree` did."""

    form: Form
    image: str  # the chosen image's tag, or short id when untagged ("" for an export)
    layers: int  # layers applied (1 for an export)
    files_written: int  # files and links written; one a later layer replaces counts again
    whiteouts: int  # whiteouts and opaque markers that reached the subtree
    skipped: tuple[str, ...] = ()  # "path: why" for each entry not written


@dataclass(frozen=True)
class _Image:
    tags: tuple[str, ...]
    layers: tuple[str, ...]
    ident: str  # the config digest's hex, "" when unknown

    @property
    def label(self) -> str:
        return self.tags[0] if self.tags else f"sha256:{self.ident[:12]}" if self.ident else ""


def extract_image_tree(
    tarball: Path,
    dest: Path,
    *,
    subtree: str = DEFAULT_SUBTREE,
    image: str | None = None,
    progress: Progress | None = None,
) -> ImageExtract:
    """Write the contents of the image's ``subtree`` into ``dest`` (new or empty).

    ``image`` picks one of several images by tag (``name`` means ``name:latest``) or by 12 or
    more hex digits of its id; an export has one filesystem and ignores it.
    ``progress(done, total)`` gets bytes read every few MiB and at the end: first of the
    compressed tarball while it is decompressed, then of the layers (or the export) while they
    are applied.
    """
    sub = _parts(subtree.strip("/"))
    if sub is None:
        raise UserError(f"subtree {subtree!r} must be a path inside the image (no '..')")
    if not tarball.is_file():
        raise UserError(f"image tarball not found: {tarball}")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UserError(f"{dest} exists and is not an empty directory", hint="choose a new one")
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        tree = _Tree(work / "tree", sub)
        try:
            plain = _decompressed(tarball, work, progress)
            form, label, layers = _apply(plain, tree, tarball=tarball, image=image,
                                         progress=progress)
        except _read_errors() as exc:
            hint = "" if _is_local_os_error(exc) else "the tarball looks truncated or corrupt"
            raise UserError(f"{tarball}: cannot extract ({str(exc) or type(exc).__name__})",
                            hint=hint) from None
        if not tree.present:
            raise UserError(f"{tarball}: there is no {'/'.join(sub)} in the image",
                            hint="is this the CoderEval image?")
        if dest.exists():
            dest.rmdir()
        os.replace(tree.root, dest)
    finally:
        remove_tree(work)
    return ImageExtract(form=form, image=label, layers=layers, files_written=tree.files,
                        whiteouts=tree.whiteouts, skipped=tuple(tree.skipped))


# --------------------------------------------------------------------------- the tarball


def _apply(plain: Path, tree: _Tree, *, tarball: Path, image: str | None,
           progress: Progress | None) -> tuple[Form, str, int]:
    """Apply the chosen image's layers (or the export) to ``tree``: form, image label, layers."""
    with tarfile.open(plain, "r:") as outer:
        index = _scan(outer, plain)
        found = _images(outer, index)
        if found is None:
            with plain.open("rb") as raw:
                meter = _Meter(progress, total=os.fstat(raw.fileno()).st_size)
                _apply_layer(tree, raw, what=str(tarball), at=meter.at)
            meter.end()
            return "export", "", 1
        form, images = found
        chosen = _select(images, image=image, tarball=tarball)
        members = [_layer_member(index, name, tarball=tarball) for name in chosen.layers]
        meter = _Meter(progress, total=sum(member.size for member in members))
        for name, member in zip(chosen.layers, members, strict=True):
            with _open_member(outer, member) as raw:
                _apply_layer(tree, raw, what=f"layer {name}", at=meter.at)
            meter.base += member.size
        meter.end()
        return form, chosen.label, len(members)


def _scan(outer: tarfile.TarFile, path: Path) -> dict[str, tarfile.TarInfo]:
    """The members that can be a manifest, an index or a layer, by normalized name.

    Reads every header (seeking over the data) and fails on a truncated tarball: tarfile itself
    stops quietly at a cut header.
    """
    index: dict[str, tarfile.TarInfo] = {}
    for member in _headers(outer):
        parts = _parts(member.name)
        if parts and (len(parts) == 1 or parts[-1] == "layer.tar" or parts[0] == "blobs"):
            index["/".join(parts)] = member
    with path.open("rb") as raw:
        raw.seek(outer.offset)
        if raw.read(tarfile.BLOCKSIZE).strip(b"\0"):
            raise tarfile.ReadError(f"truncated or corrupt header at byte {outer.offset}")
    return index


def _images(outer: tarfile.TarFile,
            index: dict[str, tarfile.TarInfo]) -> tuple[Form, list[_Image]] | None:
    """The images a ``docker save`` or OCI tarball holds; None for an export."""
    form: Form = "oci" if "oci-layout" in index else "save"
    if "manifest.json" in index:
        entries = _read_json(outer, index, "manifest.json")
        if isinstance(entries, list) and entries and all(
            isinstance(entry, dict) and isinstance(entry.get("Layers"), list) for entry in entries
        ):
            return form, [
                _Image(tags=tuple(str(tag) for tag in entry.get("RepoTags") or ()),
                       layers=tuple(str(layer) for layer in entry["Layers"]),
                       ident=_hex(str(entry.get("Config", "")).removesuffix(".json")))
                for entry in entries
            ]
    if form == "oci" and "index.json" in index:
        return form, _oci_images(outer, index)
    return None


def _oci_images(outer: tarfile.TarFile, index: dict[str, tarfile.TarInfo]) -> list[_Image]:
    """Images of a bare OCI layout: ``index.json`` -> (nested indexes ->) image manifests."""
    images: list[_Image] = []

    def walk(descriptors: Any, tag: str) -> None:
        for desc in descriptors if isinstance(descriptors, list) else ():
            notes = desc.get("annotations") or {}
            name = (notes.get("io.containerd.image.name")
                    or notes.get("org.opencontainers.image.ref.name") or tag)
            if (desc.get("platform") or {}).get("os") == "unknown":
                continue  # buildx attestations, not a filesystem
            doc = _read_json(outer, index, _blob(desc))
            if "manifests" in doc:
                walk(doc["manifests"], name)
            else:
                images.append(_Image(tags=(name,) if name else (),
                                     layers=tuple(_blob(layer) for layer in doc["layers"]),
                                     ident=_hex(str(doc.get("config", {}).get("digest", "")))))

    try:
        walk(_read_json(outer, index, "index.json").get("manifests"), "")
    except (AttributeError, KeyError, TypeError) as exc:
        raise tarfile.ReadError(f"malformed OCI index or manifest ({exc!r})") from None
    return images


def _select(images: list[_Image], *, image: str | None, tarball: Path) -> _Image:
    labels = [found.label or "(untagged)" for found in images]
    if image is None:
        if len(images) == 1:
            return images[0]
        raise UserError(f"{tarball} holds {len(images)} images: {name_some(labels, limit=10)}",
                        hint="choose one with --image")
    wanted = {image, f"{image}:latest"}
    ident = image.removeprefix("sha256:")
    matches = [found for found in images if wanted & set(found.tags) or (
        len(ident) >= 12 and found.ident.startswith(ident))]
    if len(matches) != 1:
        how = "no" if not matches else "more than one"
        raise UserError(f"{tarball} holds {how} image {image!r}; "
                        f"it holds {name_some(labels, limit=10)}")
    return matches[0]


def _layer_member(index: dict[str, tarfile.TarInfo], name: str,
                  *, tarball: Path) -> tarfile.TarInfo:
    """The layer's member; ``docker save`` links a repeated layer to its first copy."""
    member = index.get(_key(name))
    for _hop in range(8):
        if member is None or not (member.issym() or member.islnk()):
            break
        target = member.linkname if member.islnk() else posixpath.join(
            posixpath.dirname(member.name), member.linkname)
        member = index.get(_key(target))
    if member is None or not member.isreg():
        raise UserError(f"{tarball}: layer {name} of the manifest is not in the tarball",
                        hint="the tarball looks truncated or corrupt")
    return member


def _read_json(outer: tarfile.TarFile, index: dict[str, tarfile.TarInfo], name: str) -> Any:
    member = index.get(name)
    if member is None or not member.isreg():
        raise tarfile.ReadError(f"{name} is missing")
    with _open_member(outer, member) as raw:
        try:
            return json.load(raw)
        except ValueError:
            raise tarfile.ReadError(f"{name} is not valid JSON") from None


def _open_member(outer: tarfile.TarFile, member: tarfile.TarInfo) -> IO[bytes]:
    raw = outer.extractfile(member)
    if raw is None:
        raise tarfile.ReadError(f"{member.name} is not a file")
    return raw


def _key(name: str) -> str:
    """A member name as :func:`_scan` indexes it (``./a/../b/`` -> ``b``)."""
    return "/".join(_parts(posixpath.normpath(name)) or ())


def _blob(descriptor: Any) -> str:
    algorithm, _, digest = str(descriptor["digest"]).partition(":")
    return f"blobs/{algorithm}/{digest}"


def _hex(name: str) -> str:
    """The hex digest at the end of ``blobs/sha256/<hex>``, ``<hex>.json`` or ``sha256:<hex>``."""
    tail = name.rpartition("/")[2].rpartition(":")[2]
    return tail if tail and all(c in "0123456789abcdef" for c in tail) else ""


# --------------------------------------------------------------------------- streams


def _decompressed(tarball: Path, work: Path, progress: Progress | None) -> Path:
    """``tarball`` itself when plain, else a decompressed copy in ``work``."""
    with tarball.open("rb") as raw:
        stream = _decompressing(raw, what=str(tarball))
        if stream is raw:
            return tarball
        meter = _Meter(progress, total=os.fstat(raw.fileno()).st_size)
        plain = work / "image.tar"
        with stream, plain.open("wb") as out:
            while chunk := stream.read(_CHUNK):
                out.write(chunk)
                meter.at(raw.tell())
        meter.end()
        return plain


def _headers(archive: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    """The members in order. Unlike iterating the TarFile, keeps no list of every header (an
    image's filesystem has millions); a member's data is read before the next is asked for."""
    while (member := archive.next()) is not None:
        yield member
        archive.members.clear()  # type: ignore[attr-defined]  # where tarfile keeps them


def _apply_layer(tree: _Tree, raw: IO[bytes], *, what: str, at: Callable[[int], None]) -> None:
    stream = _decompressing(raw, what=what)
    with tarfile.open(fileobj=stream, mode="r|") as layer:
        tree.apply(layer, tick=lambda: at(raw.tell()))


def _decompressing(raw: IO[bytes], *, what: str) -> IO[bytes]:
    """``raw`` itself, or a reader decompressing it (gzip; zstd when zstandard is installed)."""
    magic = raw.read(len(_ZSTD_MAGIC))
    raw.seek(0)
    if magic.startswith(_GZIP_MAGIC):
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    if magic == _ZSTD_MAGIC:
        zstd = _zstandard()
        if zstd is None:
            raise UserError(f"{what} is zstd-compressed and the zstandard module is missing",
                            hint="pip install zstandard")
        reader: IO[bytes] = zstd.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        return reader
    return raw


def _zstandard() -> ModuleType | None:
    try:
        return importlib.import_module("zstandard")
    except ImportError:
        return None


def _read_errors() -> tuple[type[BaseException], ...]:
    """What a truncated or corrupt tarball (or a full disk) raises while we read it."""
    zstd = _zstandard()
    extra = (zstd.ZstdError,) if zstd is not None else ()
    return (tarfile.TarError, EOFError, zlib.error, OSError, *extra)


def _is_local_os_error(exc: BaseException) -> bool:
    """An error of our disk (full, read-only), not of the tarball's bytes."""
    return isinstance(exc, OSError) and not isinstance(exc, gzip.BadGzipFile)


class _Meter:
    """Reports bytes done to ``progress`` every few MiB and once at the end."""

    def __init__(self, progress: Progress | None, *, total: int) -> None:
        self._progress = progress
        self.total = total
        self.base = 0  # bytes of the parts (layers) already done
        self._shown = -_PROGRESS_STEP

    def at(self, position: int) -> None:
        done = min(self.base + position, self.total)
        if self._progress is not None and done - self._shown >= _PROGRESS_STEP:
            self._shown = done
            self._progress(done, self.total)

    def end(self) -> None:
        if self._progress is not None:
            self._progress(self.total, self.total)


# --------------------------------------------------------------------------- the tree


def _parts(name: str) -> tuple[str, ...] | None:
    """A member name's components; None when it is absolute or has ``..``."""
    if name.startswith("/"):
        return None
    parts = tuple(part for part in name.split("/") if part and part != ".")
    return None if ".." in parts else parts


def _file_mode(mode: int) -> int:
    """tarfile's "data" filter: no setuid or group/other write; owner reads and writes."""
    mode &= 0o755
    if not mode & 0o100:
        mode &= ~0o111
    return mode | 0o600


class _Tree:
    """The subtree as the layers applied so far leave it, on disk under ``root``.

    Paths are tuples of components relative to the subtree; keys join them with ``/``.
    """

    def __init__(self, root: Path, subtree: tuple[str, ...]) -> None:
        root.mkdir()
        self.root = root
        self.sub = subtree
        self.present = not subtree  # the image's root always exists
        self.files = 0
        self.whiteouts = 0
        self.skipped: list[str] = []
        self._layer: set[str] = set()  # keys the current layer put in place (and their parents)
        self._dirs: set[str] = set()  # keys known to be real directories, reached without links

    def apply(self, layer: tarfile.TarFile, *, tick: Callable[[], None]) -> None:
        self._layer = set()
        for member in _headers(layer):
            self._entry(layer, member)
            tick()
        self._layer = set()

    def _entry(self, layer: tarfile.TarFile, member: tarfile.TarInfo) -> None:
        parts = _parts(member.name)
        if parts is None:
            self.skipped.append(f"{member.name}: unsafe path")
            return
        base = parts[-1] if parts else ""
        if base == _OPAQUE:
            self._hide(parts[:-1], opaque=True)
            return
        if base.startswith(_WHITEOUT):
            name = base.removeprefix(_WHITEOUT)
            if not base.startswith(_WHITEOUT_META) and name not in ("", ".", ".."):
                self._hide((*parts[:-1], name), opaque=False)
            return
        n = len(self.sub)
        if parts[:n] != self.sub:
            if self.sub[: len(parts)] == parts and not member.isdir():
                self._drop_all()  # a file or link replaces a directory above the subtree
            return
        rel = parts[n:]
        if not rel:
            if member.isdir():
                self.present = True
            else:
                self._drop_all()
            return
        self.present = True
        self._put(layer, member, rel)

    # whiteouts

    def _hide(self, target: tuple[str, ...], *, opaque: bool) -> None:
        """A whiteout of ``target`` (or an opaque marker in directory ``target``)."""
        n = len(self.sub)
        if target[:n] == self.sub:
            rel: tuple[str, ...] | None = target[n:]
        elif self.sub[: len(target)] == target:
            rel = None  # above the subtree: hides all of it
        else:
            return
        self.whiteouts += 1
        if rel is None or (not rel and not opaque):
            self._clear((), keep=self._layer)
            self.present = bool(self._layer)
        elif opaque:
            if rel and self._put_dir(rel) is None:
                return
            self.present = True
            self._clear(rel, keep=self._layer)
        elif "/".join(rel) not in self._layer:
            self._remove(rel)

    def _drop_all(self) -> None:
        self._clear((), keep=set())
        self.present = False

    def _clear(self, rel: tuple[str, ...], *, keep: set[str]) -> None:
        """Remove what is in directory ``rel`` except the keys in ``keep``."""
        path = str(self.root)
        if rel:
            parent = self._parent(rel, create=False)
            path = os.path.join(parent, rel[-1]) if parent is not None else ""
            if not path or not stat.S_ISDIR(_lstat_mode(path)):
                return
        with os.scandir(path) as entries:
            children = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]
        for name, is_dir in children:
            child = (*rel, name)
            if "/".join(child) not in keep:
                self._remove(child)
            elif is_dir:
                self._clear(child, keep=keep)

    def _remove(self, rel: tuple[str, ...]) -> None:
        parent = self._parent(rel, create=False)
        if parent is not None:
            self._replace(os.path.join(parent, rel[-1]), keep_dir=False)

    # entries

    def _put(self, layer: tarfile.TarFile, member: tarfile.TarInfo,
             rel: tuple[str, ...]) -> None:
        key = "/".join(rel)
        if member.isdir():
            self._put_dir(rel)
            return
        parent = self._parent(rel, create=True)
        if parent is None:
            self.skipped.append(f"{key}: a directory above it is a symlink")
            return
        path = os.path.join(parent, rel[-1])
        self._replace(path, keep_dir=False)  # what lower layers had here is gone either way
        self._mark(rel)
        if member.isreg():
            self._write_file(layer, member, path)
        elif member.issym():
            link = self._relative_link(rel, member.linkname)
            if link is None:
                self.skipped.append(f"{key}: symlink to {member.linkname} leaves the subtree")
                return
            os.symlink(link, path)
        elif member.islnk():
            target = self._link_target(rel, member.linkname)
            if target is None:
                self.skipped.append(f"{key}: hard link to {member.linkname} outside the subtree")
                return
            try:
                os.link(target, path, follow_symlinks=False)
            except OSError:
                shutil.copyfile(target, path, follow_symlinks=False)
                shutil.copymode(target, path, follow_symlinks=False)
        else:
            kind = ("FIFO" if member.isfifo() else "device file" if member.isdev()
                    else f"entry of tar type {member.type!r}")
            self.skipped.append(f"{key}: {kind}")
            return
        self.files += 1

    def _put_dir(self, rel: tuple[str, ...]) -> str | None:
        parent = self._parent(rel, create=True)
        if parent is None:
            self.skipped.append(f"{'/'.join(rel)}: a directory above it is a symlink")
            return None
        path = os.path.join(parent, rel[-1])
        self._replace(path, keep_dir=True)
        if not os.path.isdir(path):
            os.mkdir(path)
        self._dirs.add("/".join(rel))
        self._mark(rel)
        return path

    def _write_file(self, layer: tarfile.TarFile, member: tarfile.TarInfo, path: str) -> None:
        source = layer.extractfile(member)
        if source is None:
            raise tarfile.ReadError(f"{member.name} has no data")
        with os.fdopen(os.open(path, _OPEN_NEW, 0o600), "wb") as out:
            shutil.copyfileobj(source, out, _CHUNK)
            os.fchmod(out.fileno(), _file_mode(member.mode))
        with contextlib.suppress(OverflowError, ValueError):  # a nonsense time: leave it
            os.utime(path, (member.mtime, member.mtime))

    def _relative_link(self, rel: tuple[str, ...], linkname: str) -> str | None:
        """The link rewritten relative to its directory, or None when it leaves the subtree.

        Resolved in the image as the kernel would inside the container (``..`` stops at
        ``/``). The result has ``..`` only at its start, so following it never goes through
        another link before it is back inside.
        """
        start = () if linkname.startswith("/") else (*self.sub, *rel[:-1])
        resolved: list[str] = list(start)
        for part in linkname.split("/"):
            if part == "..":
                if resolved:
                    resolved.pop()
            elif part and part != ".":
                resolved.append(part)
        n = len(self.sub)
        if tuple(resolved[:n]) != self.sub:
            return None
        target, here = resolved[n:], rel[:-1]
        common = 0
        while common < min(len(target), len(here)) and target[common] == here[common]:
            common += 1
        return "/".join([".."] * (len(here) - common) + target[common:]) or "."

    def _link_target(self, rel: tuple[str, ...], linkname: str) -> str | None:
        """The path of a hard link's target: a regular file this tree holds, or None."""
        parts = _parts(linkname)
        n = len(self.sub)
        if parts is None or parts[:n] != self.sub or len(parts) == n or parts[n:] == rel:
            return None
        parent = self._parent(parts[n:], create=False)
        if parent is None:
            return None
        path = os.path.join(parent, parts[-1])
        return path if stat.S_ISREG(_lstat_mode(path)) else None

    # the directories above an entry

    def _parent(self, rel: tuple[str, ...], *, create: bool) -> str | None:
        """The directory holding ``rel``, reached without following a link; None otherwise.

        With ``create``, missing directories are made and a file in the way is replaced.
        """
        key = "/".join(rel[:-1])
        if not key or key in self._dirs:
            return os.path.join(self.root, key)
        path = str(self.root)
        for depth, name in enumerate(rel[:-1], start=1):
            path = os.path.join(path, name)
            key = "/".join(rel[:depth])
            if key in self._dirs:
                continue
            mode = _lstat_mode(path)
            if stat.S_ISLNK(mode) or (not create and not stat.S_ISDIR(mode)):
                return None
            if not stat.S_ISDIR(mode):
                if mode:
                    os.unlink(path)
                os.mkdir(path)
            self._dirs.add(key)
        return path

    def _replace(self, path: str, *, keep_dir: bool) -> None:
        """Remove what is at ``path``, unless it is a directory and ``keep_dir``."""
        mode = _lstat_mode(path)
        if stat.S_ISDIR(mode):
            if not keep_dir:
                shutil.rmtree(path)
                self._dirs.clear()  # cheap to rebuild, and no stale entry can survive
        elif mode:
            os.unlink(path)

    def _mark(self, rel: tuple[str, ...]) -> None:
        """Record that the current layer has ``rel`` (and so its parents)."""
        for depth in range(len(rel), 0, -1):
            key = "/".join(rel[:depth])
            if key in self._layer:
                return
            self._layer.add(key)


def _lstat_mode(path: str) -> int:
    """The ``st_mode`` of ``path`` itself (not what a link points to); 0 when it is absent."""
    try:
        return os.lstat(path).st_mode
    except FileNotFoundError:
        return 0
