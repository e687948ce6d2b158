"""Reading the CoderEval Docker image tarball without Docker: the tests build small image
tarballs (``docker save`` old and OCI layouts, ``docker export``) and check that the subtree of
the image's filesystem comes out as Docker would show it, and that a hostile layer writes
nothing outside the destination."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import sys
import tarfile
from collections.abc import Iterable
from pathlib import Path

import pytest

from codereval.errors import UserError
from codereval.families.codereval.prepare.docker_image import extract_image_tree

REPOS = "home/travis/builds/repos"

# An entry of a layer: ("dir", name), ("file", name, text), ("symlink", name, target),
# ("hardlink", name, target) or ("fifo", name).
Entry = tuple[str, ...]


def _layer(entries: Iterable[Entry]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for kind, name, *rest in entries:
            info = tarfile.TarInfo(name)
            info.mtime = 1_600_000_000
            data = b""
            if kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
            elif kind == "file":
                data = rest[0].encode()
                info.size, info.mode = len(data), int(rest[1], 8) if len(rest) > 1 else 0o644
            elif kind == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, rest[0]
            elif kind == "hardlink":
                info.type, info.linkname = tarfile.LNKTYPE, rest[0]
            elif kind == "fifo":
                info.type = tarfile.FIFOTYPE
            else:
                raise ValueError(kind)
            tar.addfile(info, io.BytesIO(data) if data else None)
    return buffer.getvalue()


def _repos(*entries: Entry) -> list[Entry]:
    """Entries under the image's repos directory, with its parent directories first."""
    parents = [("dir", "/".join(REPOS.split("/")[: depth + 1])) for depth in range(4)]
    return parents + [(kind, f"{REPOS}/{name}", *rest) for kind, name, *rest in entries]


def _write_tar(path: Path, members: dict[str, bytes], *, compress: bool = False) -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(gzip.compress(buffer.getvalue()) if compress else buffer.getvalue())
    return path


def _docker_save(path: Path, images: dict[str, list[bytes]], *, oci: bool = False,
                 gzip_layers: bool = False, compress: bool = False) -> Path:
    """A ``docker save`` tarball: old ``<id>/layer.tar`` form, or Docker 25's OCI layout."""
    members: dict[str, bytes] = {}
    manifest = []
    for tag, layers in images.items():
        paths = []
        for layer in layers:
            blob = gzip.compress(layer) if gzip_layers else layer
            digest = hashlib.sha256(blob).hexdigest()
            paths.append(f"blobs/sha256/{digest}" if oci else f"{digest}/layer.tar")
            members[paths[-1]] = blob
        config = json.dumps({"rootfs": {"type": "layers"}, "tag": tag}).encode()
        config_hex = hashlib.sha256(config).hexdigest()
        config_path = f"blobs/sha256/{config_hex}" if oci else f"{config_hex}.json"
        members[config_path] = config
        manifest.append({"Config": config_path, "RepoTags": [tag], "Layers": paths})
    # As Docker writes it: the layers first, manifest.json near the end.
    members["manifest.json"] = json.dumps(manifest).encode()
    if oci:
        members["index.json"] = json.dumps({"schemaVersion": 2, "manifests": []}).encode()
        members["oci-layout"] = b'{"imageLayoutVersion": "1.0.0"}'
    return _write_tar(path, members, compress=compress)


def _bare_oci(path: Path, *, tag: str, layers: list[bytes]) -> Path:
    """An OCI image layout with no manifest.json (podman, skopeo, buildx): index -> manifest."""
    members: dict[str, bytes] = {}

    def blob(data: bytes, media_type: str) -> dict[str, object]:
        digest = hashlib.sha256(data).hexdigest()
        members[f"blobs/sha256/{digest}"] = data
        return {"mediaType": media_type, "digest": f"sha256:{digest}", "size": len(data)}

    layer_descs = [blob(gzip.compress(layer), "application/vnd.oci.image.layer.v1.tar+gzip")
                   for layer in layers]
    config = blob(b"{}", "application/vnd.oci.image.config.v1+json")
    manifest = blob(json.dumps({"schemaVersion": 2, "config": config,
                                "layers": layer_descs}).encode(),
                    "application/vnd.oci.image.manifest.v1+json")
    manifest["annotations"] = {"org.opencontainers.image.ref.name": tag}
    members["index.json"] = json.dumps({"schemaVersion": 2, "manifests": [manifest]}).encode()
    members["oci-layout"] = b'{"imageLayoutVersion": "1.0.0"}'
    return _write_tar(path, members)


def _files(root: Path) -> dict[str, str]:
    """Every file and symlink under root: its text, or "-> target" for a link."""
    found = {}
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            path = Path(dirpath, name)
            rel = path.relative_to(root).as_posix()
            found[rel] = f"-> {os.readlink(path)}" if path.is_symlink() else path.read_text()
    return found


# Three layers of a small CoderEval-like image.
BASE = _layer([
    ("dir", "etc"), ("file", "etc/passwd", "root:x:0:0\n"),
    *_repos(
        ("dir", "standalone"),
        ("file", "standalone/a-f.py", "v1\n"),
        ("file", "standalone/gone-g.py", "deleted by layer 2\n"),
        ("dir", "owner---repo"),
        ("file", "owner---repo/README", "readme\n"),
        ("dir", "owner---repo/src"),
        ("file", "owner---repo/src/old.py", "hidden by layer 3\n"),
        ("dir", "owner---repo/src/pkg"),
        ("file", "owner---repo/src/pkg/deep.py", "hidden by layer 3\n"),
    ),
])
DELETE = _layer(_repos(
    ("file", "standalone/a-f.py", "v2\n"),
    ("file", "standalone/.wh.gone-g.py", ""),
))
OPAQUE = _layer(_repos(
    ("dir", "owner---repo/src"),
    ("file", "owner---repo/src/.wh..wh..opq", ""),
    ("file", "owner---repo/src/new.py", "added by layer 3\n"),
    ("file", "owner---repo/run.sh", "#!/bin/sh\n", "0755"),
))
EXPECTED = {
    "standalone/a-f.py": "v2\n",
    "owner---repo/README": "readme\n",
    "owner---repo/src/new.py": "added by layer 3\n",
    "owner---repo/run.sh": "#!/bin/sh\n",
}


# --------------------------------------------------------------------------- docker save


def test_save_applies_layers_in_order_honouring_whiteouts_and_opaque_directories(
    tmp_path: Path,
) -> None:
    tarball = _docker_save(tmp_path / "image.tar", {"codereval:latest": [BASE, DELETE, OPAQUE]})

    done = extract_image_tree(tarball, tmp_path / "repos")

    assert _files(tmp_path / "repos") == EXPECTED
    assert (done.form, done.image, done.layers, done.whiteouts) == ("save", "codereval:latest",
                                                                    3, 2)
    assert done.files_written == 5 + 1 + 2  # a file a later layer replaces counts again
    assert done.skipped == ()
    assert os.access(tmp_path / "repos" / "owner---repo" / "run.sh", os.X_OK)


def test_only_the_subtree_reaches_dest(tmp_path: Path) -> None:
    tarball = _docker_save(tmp_path / "image.tar", {"codereval:latest": [BASE]})

    extract_image_tree(tarball, tmp_path / "out")

    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["owner---repo", "standalone"]


def test_a_whiteout_or_opaque_marker_never_hides_files_of_its_own_layer(tmp_path: Path) -> None:
    # The markers come after the new files in tar order; they still only hide lower layers.
    late = _layer(_repos(
        ("file", "owner---repo/src/new.py", "same layer\n"),
        ("file", "owner---repo/src/.wh..wh..opq", ""),
        ("file", "standalone/fresh.py", "same layer\n"),
        ("file", "standalone/.wh.fresh.py", ""),
    ))
    tarball = _docker_save(tmp_path / "image.tar", {"codereval:latest": [BASE, late]})

    extract_image_tree(tarball, tmp_path / "repos")

    files = _files(tmp_path / "repos")
    assert files["owner---repo/src/new.py"] == "same layer\n"
    assert files["standalone/fresh.py"] == "same layer\n"
    assert "owner---repo/src/old.py" not in files
    assert "owner---repo/src/pkg/deep.py" not in files


def test_a_later_layer_replaces_a_directory_by_a_file_and_a_file_by_a_directory(
    tmp_path: Path,
) -> None:
    swap = _layer(_repos(
        ("file", "owner---repo/src", "now a file\n"),
        ("dir", "standalone/a-f.py"),
        ("file", "standalone/a-f.py/inside.txt", "now a directory\n"),
    ))
    tarball = _docker_save(tmp_path / "image.tar", {"codereval:latest": [BASE, swap]})

    extract_image_tree(tarball, tmp_path / "repos")

    files = _files(tmp_path / "repos")
    assert files["owner---repo/src"] == "now a file\n"
    assert files["standalone/a-f.py/inside.txt"] == "now a directory\n"


def test_a_layer_tar_linked_to_an_identical_layer_is_read_through_the_link(
    tmp_path: Path,
) -> None:
    # docker save writes a repeated layer once and links the second <id>/layer.tar to it.
    digest = hashlib.sha256(BASE).hexdigest()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in {f"{digest}/layer.tar": BASE, "cfg.json": b"{}"}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("again/layer.tar")
        link.type, link.linkname = tarfile.SYMTYPE, f"../{digest}/layer.tar"
        tar.addfile(link)
        manifest = json.dumps([{"Config": "cfg.json", "RepoTags": ["c:1"],
                                "Layers": [f"{digest}/layer.tar", "again/layer.tar"]}]).encode()
        info = tarfile.TarInfo("manifest.json")
        info.size = len(manifest)
        tar.addfile(info, io.BytesIO(manifest))
    (tmp_path / "image.tar").write_bytes(buffer.getvalue())

    done = extract_image_tree(tmp_path / "image.tar", tmp_path / "repos")

    assert done.layers == 2
    assert _files(tmp_path / "repos")["standalone/a-f.py"] == "v1\n"


def test_oci_layout_with_gzip_layers_is_read_like_the_old_layout(tmp_path: Path) -> None:
    tarball = _docker_save(tmp_path / "image.tar", {"codereval:latest": [BASE, DELETE, OPAQUE]},
                           oci=True, gzip_layers=True)

    done = extract_image_tree(tarball, tmp_path / "repos")

    assert _files(tmp_path / "repos") == EXPECTED
    assert (done.form, done.image, done.layers, done.whiteouts) == ("oci", "codereval:latest",
                                                                    3, 2)


def test_bare_oci_layout_without_manifest_json_is_read_through_index_json(
    tmp_path: Path,
) -> None:
    tarball = _bare_oci(tmp_path / "image.tar", tag="latest", layers=[BASE, DELETE, OPAQUE])

    done = extract_image_tree(tarball, tmp_path / "repos")

    assert _files(tmp_path / "repos") == EXPECTED
    assert (done.form, done.image, done.layers) == ("oci", "latest", 3)


def test_gzip_compressed_save_tarball_is_read(tmp_path: Path) -> None:
    tarball = _docker_save(tmp_path / "image.tar.gz", {"codereval:latest": [BASE, DELETE, OPAQUE]},
                           compress=True)
    seen: list[tuple[int, int]] = []

    done = extract_image_tree(tarball, tmp_path / "repos",
                              progress=lambda done, total: seen.append((done, total)))

    assert _files(tmp_path / "repos") == EXPECTED
    assert done.form == "save"
    assert seen and all(0 <= done <= total for done, total in seen)
    assert seen[-1][0] == seen[-1][1]
    # No temporary file or staging directory is left beside dest.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["image.tar.gz", "repos"]


def test_zstd_layer_without_the_zstandard_module_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "zstandard", None)  # import zstandard now fails
    zstd_layer = b"\x28\xb5\x2f\xfd" + b"\0" * 64
    tarball = _docker_save(tmp_path / "image.tar", {"c:1": [BASE, zstd_layer]})

    with pytest.raises(UserError, match=r"zstd-compressed.*zstandard"):
        extract_image_tree(tarball, tmp_path / "repos")
    assert not (tmp_path / "repos").exists()


# --------------------------------------------------------------------------- choosing an image


def test_several_images_need_image_to_choose_and_the_error_lists_their_tags(
    tmp_path: Path,
) -> None:
    other = _layer(_repos(("file", "standalone/other.py", "other image\n")))
    tarball = _docker_save(tmp_path / "image.tar",
                           {"codereval:latest": [BASE], "other:2": [other]})

    with pytest.raises(UserError, match=r"2 images: codereval:latest, other:2"):
        extract_image_tree(tarball, tmp_path / "a")
    with pytest.raises(UserError, match=r"no image 'nope'.*codereval:latest, other:2"):
        extract_image_tree(tarball, tmp_path / "a", image="nope")
    assert not (tmp_path / "a").exists()

    done = extract_image_tree(tarball, tmp_path / "b", image="other:2")
    assert _files(tmp_path / "b") == {"standalone/other.py": "other image\n"}
    assert done.image == "other:2"
    # A name without a tag means name:latest, as in docker.
    assert extract_image_tree(tarball, tmp_path / "c", image="codereval").image == \
        "codereval:latest"


# --------------------------------------------------------------------------- docker export


def test_export_is_one_flat_filesystem(tmp_path: Path) -> None:
    flat = _layer([*_repos(("file", "standalone/a-f.py", "flat\n")), ("file", ".dockerenv", "")])
    (tmp_path / "flat.tar").write_bytes(flat)

    done = extract_image_tree(tmp_path / "flat.tar", tmp_path / "repos", image="ignored")

    assert _files(tmp_path / "repos") == {"standalone/a-f.py": "flat\n"}
    assert (done.form, done.image, done.layers, done.files_written) == ("export", "", 1, 1)


def test_gzip_compressed_export_is_read(tmp_path: Path) -> None:
    flat = _layer(_repos(("file", "standalone/a-f.py", "flat\n")))
    (tmp_path / "flat.tar.gz").write_bytes(gzip.compress(flat))

    done = extract_image_tree(tmp_path / "flat.tar.gz", tmp_path / "repos")

    assert _files(tmp_path / "repos") == {"standalone/a-f.py": "flat\n"}
    assert done.form == "export"


def test_another_subtree_can_be_extracted(tmp_path: Path) -> None:
    tarball = _docker_save(tmp_path / "image.tar", {"c:1": [BASE]})

    extract_image_tree(tarball, tmp_path / "etc", subtree="/etc/")

    assert _files(tmp_path / "etc") == {"passwd": "root:x:0:0\n"}


# --------------------------------------------------------------------------- errors


def test_missing_subtree_is_a_user_error_and_leaves_nothing(tmp_path: Path) -> None:
    tarball = _docker_save(tmp_path / "image.tar",
                           {"c:1": [_layer([("file", "etc/passwd", "x\n")])]})

    with pytest.raises(UserError, match=r"no home/travis/builds/repos in the image"):
        extract_image_tree(tarball, tmp_path / "repos")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["image.tar"]


def test_a_whiteout_of_the_subtree_itself_deletes_it(tmp_path: Path) -> None:
    wipe = _layer([("file", "home/travis/builds/.wh.repos", "")])
    tarball = _docker_save(tmp_path / "image.tar", {"c:1": [BASE, wipe]})

    with pytest.raises(UserError, match=r"no home/travis/builds/repos in the image"):
        extract_image_tree(tarball, tmp_path / "repos")


@pytest.mark.parametrize("form", ["save", "save.gz", "export", "export.gz"])
def test_truncated_tarball_is_a_one_line_user_error(tmp_path: Path, form: str) -> None:
    if form.startswith("save"):
        whole = _docker_save(tmp_path / "whole", {"c:1": [BASE, DELETE, OPAQUE]}).read_bytes()
    else:
        whole = _layer(_repos(*[("file", f"standalone/f{i}.py", "x" * 5000) for i in range(20)]))
    if form.endswith(".gz"):
        whole = gzip.compress(whole)
    cut = tmp_path / "cut.tar"
    cut.write_bytes(whole[: len(whole) // 2])

    with pytest.raises(UserError) as raised:
        extract_image_tree(cut, tmp_path / "repos")
    message = str(raised.value)
    assert "\n" not in message
    assert "cannot extract" in message
    assert not (tmp_path / "repos").exists()


def test_a_file_that_is_no_tarball_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "junk.tar").write_bytes(b"this is not a tar file\n" * 100)

    with pytest.raises(UserError, match="cannot extract"):
        extract_image_tree(tmp_path / "junk.tar", tmp_path / "repos")


def test_dest_must_be_new_or_empty(tmp_path: Path) -> None:
    tarball = _docker_save(tmp_path / "image.tar", {"c:1": [BASE]})
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "mine.txt").write_text("keep me\n")
    (tmp_path / "empty").mkdir()

    with pytest.raises(UserError, match="not an empty directory"):
        extract_image_tree(tarball, tmp_path / "full")
    assert (tmp_path / "full" / "mine.txt").read_text() == "keep me\n"

    extract_image_tree(tarball, tmp_path / "empty")
    assert (tmp_path / "empty" / "standalone" / "a-f.py").read_text() == "v1\n"


# --------------------------------------------------------------------------- hostile layers


def test_a_hostile_layer_writes_nothing_outside_dest(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    hostile = _layer([
        ("file", "../evil", "escaped\n"),
        ("file", f"{REPOS}/../../../../../evil2", "escaped\n"),
        ("file", f"/{REPOS}/absolute.py", "absolute name\n"),
        *_repos(
            ("dir", "p"),
            ("file", "p/real.txt", "real\n"),
            # Links out of the tree: skipped, and nothing is written through them.
            ("symlink", "p/to_outside", str(outside)),
            ("file", "p/to_outside/pwned.txt", "escaped\n"),
            ("symlink", "p/up", "../../../../../.."),
            ("file", "p/up/pwned.txt", "escaped\n"),
            ("hardlink", "p/shadow", "etc/passwd"),
            ("hardlink", "p/shadow2", "../../etc/passwd"),
            ("fifo", "p/pipe"),
            # Links that stay inside: kept, as relative links.
            ("symlink", "p/abs_inside", f"/{REPOS}/p/real.txt"),
            ("symlink", "p/rel_inside", "../p/real.txt"),
            ("hardlink", "p/hard_inside", f"{REPOS}/p/real.txt"),
        ),
    ])
    tarball = _docker_save(tmp_path / "image.tar", {"c:1": [BASE, hostile]})

    done = extract_image_tree(tarball, tmp_path / "repos")

    assert list(outside.iterdir()) == []
    assert not (tmp_path / "evil").exists()
    assert not any(p.name.startswith("evil") for p in tmp_path.parent.iterdir())
    repos = tmp_path / "repos"
    for path in repos.rglob("*"):
        assert path.resolve().is_relative_to(repos.resolve()), path
    files = _files(repos / "p")
    assert files["abs_inside"] == "-> real.txt"
    assert files["rel_inside"] == "-> real.txt"
    assert files["hard_inside"] == "real\n"
    assert os.stat(repos / "p" / "hard_inside").st_ino == os.stat(repos / "p" / "real.txt").st_ino
    assert files["up/pwned.txt"] == "escaped\n"  # up is a plain directory here, not a link
    assert not {"to_outside", "shadow", "shadow2", "pipe"} & set(files)
    skipped = "\n".join(done.skipped)
    for name in ["../evil", "evil2", "absolute.py", "p/to_outside:", "p/up:", "p/shadow:",
                 "p/shadow2:", "p/pipe: FIFO"]:
        assert name in skipped, name


def test_nothing_is_written_through_a_symlink_a_lower_layer_left(tmp_path: Path) -> None:
    lower = _layer(_repos(("dir", "p/real"), ("symlink", "p/alias", "real")))
    upper = _layer(_repos(("file", "p/alias/f.txt", "through the link\n")))
    tarball = _docker_save(tmp_path / "image.tar", {"c:1": [lower, upper]})

    done = extract_image_tree(tarball, tmp_path / "repos")

    assert os.readlink(tmp_path / "repos" / "p" / "alias") == "real"
    assert list((tmp_path / "repos" / "p" / "real").iterdir()) == []
    assert done.skipped == ("p/alias/f.txt: a directory above it is a symlink",)
