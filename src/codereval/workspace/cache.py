"""Hard-linked workspaces kept between samples of one project, when provably as good as new.

Making a ``hardlink`` workspace costs a link per file and removing it an unlink per file:
openstack/cinder's 3,364 files take 85 ms to link and 54 ms to remove, on average 21 ms of a
real CoderEval sample's ~80. The cache keeps a workspace after its sample and hands it to the
next sample of the same project, with only the files the samples change swapped.

Why that is the same as a new workspace: apart from the files a sample changes (written by us,
restored before reuse), every file is a hard link to the sealed base, which a sandboxed sample
can neither write nor chmod (``workspace.seal``), and a symbolic link, which cannot be changed
in place. So all a sample can alter is the directories: what they hold (a file added, removed,
renamed or replaced by another inode) or their own metadata (mode, owner, extended attributes).
Before a workspace is handed out its directories are listed (name and inode of every entry)
and stat'ed (inode, mode, owner, ctime); when the sample has ended — every process of it killed
— they are checked again (``verify``): a directory whose recorded ctime lies well before the
lease began is only stat'ed (any change during the lease would have moved its ctime past that
moment), the others are listed again. Any difference and the workspace is removed, never
reused. Kernels from 6.13 give every change after a stat a ctime of its own (multigrain
timestamps); on older ones a metadata-only change in the same clock tick as the listing could
go unseen in a directory listed again, its entries never.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from codereval.workspace.views import (
    SKIP_DIRS,
    empty_folder,
    make_workspace,
    place,
    remove_tree,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DirState:
    """What a sample could change about one directory of a workspace."""

    ino: int
    mode: int
    uid: int
    gid: int
    ctime_ns: int
    # (name, inode) of every entry, sorted.
    entries: tuple[tuple[str, int], ...]


# Relative directory ("" for the root) -> its state.
Listing = dict[str, DirState]
# A base as it is now: path (and its bytecode's), device, inode, ctime (a base rebuilt at the
# same path differs).
BaseKey = tuple[str, int, int, int]


def _dir_path(root: Path, rel: str) -> str:
    return os.path.join(root, rel) if rel else str(root)


def _dir_state(path: str) -> tuple[DirState, list[str]]:
    """The directory's state and the names of its subdirectories (not links to them)."""
    entries: list[tuple[str, int]] = []
    subdirs: list[str] = []
    with os.scandir(path) as scan:
        for entry in scan:
            entries.append((entry.name, entry.inode()))
            if entry.is_dir(follow_symlinks=False):
                subdirs.append(entry.name)
    # Stat after listing: a change made while we listed moves the ctime past what we record.
    st = os.lstat(path)
    entries.sort()
    return DirState(st.st_ino, st.st_mode, st.st_uid, st.st_gid, st.st_ctime_ns,
                    tuple(entries)), subdirs


def scan(root: Path) -> Listing:
    """Every directory of the tree at ``root``, listed and stat'ed."""
    listing: Listing = {}
    stack = [""]
    while stack:
        rel = stack.pop()
        state, subdirs = _dir_state(_dir_path(root, rel))
        listing[rel] = state
        stack.extend(os.path.join(rel, name) if rel else name for name in subdirs)
    return listing


# A directory whose ctime lies this far before a lease began is *settled*: had the sample
# changed it (an entry added, removed, renamed or replaced; its mode, owner or attributes), its
# ctime would now read a time after the lease began (the file clock may lag the one we read by
# a tick, ~1-10 ms, never 100), and no unprivileged process can set a ctime. So a settled
# directory whose stat is unchanged has the entries it had, and checking it is one lstat
# instead of a listing: 12% of the driver's CPU on CoderEval's real projects went to listings.
_SETTLED_NS = 100_000_000


def verify(root: Path, listing: Listing, *, since_ns: int) -> str:
    """'' when every directory of ``listing`` is as it was when a lease began at ``since_ns``
    (``time.time_ns()``), else why not. Only the unsettled ones (just made, or holding a
    file we wrote for the sample) are listed again; as ``scan(root) == listing``, cheaper."""
    for rel, before in listing.items():
        path = _dir_path(root, rel)
        try:
            if before.ctime_ns < since_ns - _SETTLED_NS:
                st = os.lstat(path)
                if (st.st_ino, st.st_mode, st.st_uid, st.st_gid, st.st_ctime_ns) != (
                        before.ino, before.mode, before.uid, before.gid, before.ctime_ns):
                    return f"changed: {rel or '.'} (its entries or metadata)"
                continue
            now, _ = _dir_state(path)
        except OSError as exc:
            return f"unreadable after the sample: {exc}"
        if now != before:
            return _difference({rel: before}, {rel: now})
    return ""


def _rescan(root: Path, listing: Listing, rels: Iterable[str]) -> Listing:
    """``listing`` with the given directories (whose subdirectories did not change) re-read."""
    updated = dict(listing)
    for rel in rels:
        updated[rel], _ = _dir_state(_dir_path(root, rel))
    return updated


def _parents(changed: Iterable[str]) -> set[str]:
    return {"", *(os.path.dirname(rel) for rel in changed)}


@dataclass(kw_only=True)
class Lease:
    """A workspace handed to one sample."""

    path: Path
    base: Path
    key: BaseKey
    changed: tuple[str, ...]
    # Its directories as the sample received them; None: not eligible for reuse.
    listing: Listing | None
    # When it was handed out (time.time_ns(), after its listing): see verify.
    since_ns: int = field(default_factory=time.time_ns)


@dataclass(kw_only=True)
class _Kept:
    path: Path
    listing: Listing


@dataclass
class CacheStats:
    made: int = 0
    reused: int = 0
    kept: int = 0
    discarded: int = 0
    discard_reasons: dict[str, int] = field(default_factory=dict)


class WorkspaceCache:
    """Hard-linked workspaces, kept per base below ``root`` (which no sandbox may mount) and
    handed out one sample at a time. Thread-safe."""

    def __init__(self, root: Path, *, capacity: int = 8) -> None:
        self.root = root
        self.capacity = max(0, capacity)
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, tuple[BaseKey, _Kept]] = OrderedDict()
        # Folders that stay where they are (see checkout_in_place) -> the base's workspace
        # they hold as new, and its listing.
        self._placed: dict[Path, tuple[BaseKey, Listing]] = {}
        self.stats = CacheStats()

    def checkout(self, base: Path, dest: Path, changed: Mapping[str, str], *,
                 bytecode: Path | None = None) -> Lease:
        """A workspace of ``base`` (with ``bytecode``, see make_workspace) at ``dest`` (which
        must not exist) with ``changed`` written: a kept one when there is one for this base,
        else a new one."""
        rels = tuple(sorted({os.path.normpath(rel) for rel in changed}))
        key = _base_key(base, bytecode)
        eligible = self.capacity > 0 and _reusable(base, rels)
        kept = self._take(key) if eligible else None
        if kept is not None:
            try:
                os.rename(kept.path, dest)
                self._write(dest, changed)
                listing = _rescan(dest, kept.listing, _parents(rels))
            except OSError as exc:
                log.info("a kept workspace of %s could not be reused: %s", base, exc)
                remove_tree(dest if dest.exists() else kept.path)
            else:
                with self._lock:
                    self.stats.reused += 1
                return Lease(path=dest, base=base, key=key, changed=rels, listing=listing)
        with self._lock:
            self.stats.made += 1
        if eligible:
            try:
                make_workspace(base, dest, changed=changed, strategy="hardlink", strict=True,
                               bytecode=bytecode)
                return Lease(path=dest, base=base, key=key, changed=rels, listing=scan(dest))
            except OSError:
                # A file that cannot be linked (another filesystem): made as always, not kept.
                remove_tree(dest)
        make_workspace(base, dest, changed=changed, strategy="hardlink", bytecode=bytecode)
        return Lease(path=dest, base=base, key=key, changed=rels, listing=None)

    def checkin(self, lease: Lease) -> bool:
        """Called when the sample has ended and every process of it is gone. Keeps the
        workspace for the next sample if nothing but its changed files can differ from what
        the sample received; otherwise leaves it to be removed with the sample's scratch."""
        if lease.listing is None:
            return False
        changed = verify(lease.path, lease.listing, since_ns=lease.since_ns)
        if changed:
            return self._discard(changed)
        now = lease.listing
        home = self.root / f"w-{secrets.token_hex(8)}"
        try:
            self._restore(lease)
            self.root.mkdir(parents=True, exist_ok=True)
            os.rename(lease.path, home)
            listing = _rescan(home, now, _parents(lease.changed))
        except OSError as exc:
            if home.exists():
                remove_tree(home)
            return self._discard(f"could not be restored: {exc}")
        evicted = self._put(lease.key, _Kept(path=home, listing=listing))
        for path in evicted:
            remove_tree(path)
        return True

    def checkout_in_place(self, base: Path, folder: Path, changed: Mapping[str, str], *,
                          bytecode: Path | None = None) -> Lease:
        """A workspace of ``base`` in ``folder``, which must stay where it is (a warm worker
        keeps it mounted): the workspace the folder already holds when the last lease left it
        as new (see checkin_in_place), with only ``changed`` swapped; else the folder emptied
        and linked anew."""
        rels = tuple(sorted({os.path.normpath(rel) for rel in changed}))
        key = _base_key(base, bytecode)
        eligible = self.capacity > 0 and _reusable(base, rels)
        with self._lock:
            placed = self._placed.pop(folder, None)
        if placed is not None and eligible and placed[0] == key:
            try:
                self._write(folder, changed)
                listing = _rescan(folder, placed[1], _parents(rels))
            except OSError as exc:
                log.info("the workspace in %s could not be reused: %s", folder, exc)
            else:
                with self._lock:
                    self.stats.reused += 1
                return Lease(path=folder, base=base, key=key, changed=rels, listing=listing)
        empty_folder(folder)
        with self._lock:
            self.stats.made += 1
        if eligible:
            try:
                make_workspace(base, folder, changed=changed, strategy="hardlink", strict=True,
                               into_empty=True, bytecode=bytecode)
                return Lease(path=folder, base=base, key=key, changed=rels, listing=scan(folder))
            except OSError:
                empty_folder(folder)
        make_workspace(base, folder, changed=changed, strategy="hardlink", into_empty=True,
                       bytecode=bytecode)
        return Lease(path=folder, base=base, key=key, changed=rels, listing=None)

    def checkin_in_place(self, lease: Lease) -> bool:
        """Called when the sample of a checkout_in_place has ended and every process of it is
        gone: the folder keeps the workspace, its changed files restored, for the next lease of
        the same base if nothing else can differ from what the sample received (as checkin
        decides); otherwise it is emptied."""
        reason = "not eligible"
        if lease.listing is not None:
            reason = verify(lease.path, lease.listing, since_ns=lease.since_ns)
            if not reason:
                try:
                    self._restore(lease)
                    listing = _rescan(lease.path, lease.listing, _parents(lease.changed))
                except OSError as exc:
                    reason = f"could not be restored: {exc}"
                else:
                    with self._lock:
                        self._placed[lease.path] = (lease.key, listing)
                        self.stats.kept += 1
                    return True
            self._discard(reason)
        empty_folder(lease.path)
        return False

    def close(self) -> None:
        with self._lock:
            kept = [entry.path for _key, entry in self._kept.values()]
            self._kept.clear()
        for path in kept:
            remove_tree(path)
        remove_tree(self.root)

    # -- internals ---------------------------------------------------------------------------

    def _take(self, key: BaseKey) -> _Kept | None:
        with self._lock:
            for name, (kept_key, entry) in reversed(self._kept.items()):
                if kept_key == key:
                    del self._kept[name]
                    return entry
        return None

    def _put(self, key: BaseKey, entry: _Kept) -> list[Path]:
        with self._lock:
            self._kept[entry.path.name] = (key, entry)
            self.stats.kept += 1
            evicted: list[Path] = []
            while len(self._kept) > self.capacity:
                _name, (_key, old) = self._kept.popitem(last=False)
                evicted.append(old.path)
        return evicted

    def _discard(self, reason: str) -> bool:
        log.debug("workspace not kept: %s", reason)
        kind = reason.split(":", 1)[0]
        with self._lock:
            self.stats.discarded += 1
            self.stats.discard_reasons[kind] = self.stats.discard_reasons.get(kind, 0) + 1
        return False

    @staticmethod
    def _write(dest: Path, changed: Mapping[str, str]) -> None:
        for rel, text in changed.items():
            target = dest / os.path.normpath(rel)
            # Never write through a link: it is the base's file.
            if os.path.lexists(target):
                os.unlink(target)
            target.write_text(text, encoding="utf-8")

    @staticmethod
    def _restore(lease: Lease) -> None:
        """The changed files back as the base has them (or gone, where it has none)."""
        for rel in lease.changed:
            target = lease.path / rel
            if os.path.lexists(target):
                os.unlink(target)
            source = lease.base / rel
            if os.path.lexists(source) and not os.path.isdir(source):
                place(str(source), str(target), strategy="hardlink", strict=True)


def _base_key(base: Path, bytecode: Path | None) -> BaseKey:
    # A base rebuilt at the same path is a new directory: its kept workspaces link old files.
    st = os.stat(base)
    name = str(base) if bytecode is None else f"{base}\0{bytecode}"
    return (name, st.st_dev, st.st_ino, st.st_ctime_ns)


def _reusable(base: Path, rels: Iterable[str]) -> bool:
    """Changed files a restored workspace holds exactly as a new one would: in folders of the
    base (``make_workspace`` creates missing ones, which restoring would leave behind), none
    of them a link or a folder workspaces leave out."""
    for rel in rels:
        if rel.startswith("..") or os.path.isabs(rel) or rel.endswith(".pyc"):
            return False
        parts = rel.split(os.sep)
        if any(part in SKIP_DIRS for part in parts):
            return False
        folder = base
        for part in parts[:-1]:
            folder = folder / part
            if folder.is_symlink() or not folder.is_dir():
                return False
    return True


def _difference(before: Listing, after: Listing) -> str:
    """One line naming the first thing a sample changed (for the debug log)."""
    for rel in sorted(set(before) | set(after)):
        if rel not in after:
            return f"changed: folder {rel or '.'} removed"
        if rel not in before:
            return f"changed: folder {rel} added"
        if before[rel] != after[rel]:
            old, new = before[rel], after[rel]
            if old.entries != new.entries:
                names = {n for n, _ in old.entries} ^ {n for n, _ in new.entries}
                return f"changed: entries of {rel or '.'} ({', '.join(sorted(names)) or 'inode'})"
            return f"changed: metadata of {rel or '.'}"
    return "changed"
