"""The C++, Go and Rust toolchains' caches and fast paths, in the real sandbox.

Each speed-up (a precompiled header, mold, Go packages compiled once without DWARF and linked
against a testify without HTTP assertions, Rust's std linked dynamically) is built once per
toolchain, reused, rebuilt when damaged, and keyed by the compiler's version; where it is
unusable the plain path runs, and both give the same verdict for every sample. No sample can
write to a cache another sample reads.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from test_humanevalx_acceptance import broken_body

from codereval.evaluation.engine import default_env_root
from codereval.families.humanevalx.dataset import load_humanevalx
from codereval.model import Outcome, Sample, Task, Verdict
from codereval.runners import program_toolchains, toolchain_cache
from codereval.runners.base import RunContext
from codereval.runners.program import CACHE_DIR, ProgramRunner
from codereval.runners.program_source import build_program
from codereval.runners.program_toolchains import (
    CPP_HEADER,
    CppToolchain,
    GoToolchain,
    RustToolchain,
    Toolchain,
)
from codereval.sandbox import Limits, Sandbox, get_sandbox
from codereval.sandbox.bwrap import BwrapSandbox

pytestmark = pytest.mark.slow

P, F = Verdict.PASSED, Verdict.FAILED
HOME_CACHES = default_env_root() / CACHE_DIR


@pytest.fixture(scope="module", autouse=True)
def _home_caches_ready() -> Iterator[None]:
    # Built once before the tests copy them (the first build fetches from the registries).
    for toolchain in (CppToolchain(), GoToolchain(),
                      GoToolchain(lean_packages=False, lean_testify=False),
                      RustToolchain(), RustToolchain(dynamic_std=False)):
        toolchain.ensure(HOME_CACHES)
    yield


def tasks_of(hx: Path, language: str) -> list[Task]:
    return load_humanevalx(language, data_dir=hx)


def run_samples(toolchain: Toolchain, env_root: Path, pairs: list[tuple[Task, str]],
                work_root: Path, *, sandbox: Sandbox | None = None,
                limits: Limits | None = None) -> list[Outcome]:
    runner = ProgramRunner(toolchains={toolchain.language: toolchain})
    ctx = RunContext(sandbox=sandbox or get_sandbox("auto"),
                     limits=limits or Limits(wall_time=30.0),
                     work_root=work_root, env_root=env_root)
    try:
        with ThreadPoolExecutor(2) as pool:
            return list(pool.map(
                lambda pair: runner.run(pair[0], Sample(task_id=pair[0].task_id, code=pair[1]),
                                        ctx), pairs))
    finally:
        runner.close()


def rust_broken(task: Task) -> str:
    # A body that compiles for any return type and panics outside the tests: a runtime error.
    return '    unimplemented!("broken")\n}\n'


def slice_of(hx: Path, language: str) -> list[tuple[Task, str]]:
    """Every 16th task, each with its reference and a broken body; plus a compile error.
    Rust/32's tests are all commented out (docs/humanevalx.md): nothing there can pass."""
    tasks = [t for t in tasks_of(hx, language)[::16] if t.task_id != "Rust/32"]
    broken = rust_broken if language == "rust" else broken_body
    pairs = [(t, t.reference) for t in tasks] + [(t, broken(t)) for t in tasks]
    return [*pairs, (tasks[0], "this is not code {\n")]


def home_copy(language: str, toolchain: Toolchain, root: Path) -> Path:
    """The home caches of ``language`` copied under ``root`` (sealed caches are relocatable), so
    a test may damage them; what a copy cannot hold (Go's module cache) is linked read-only use."""
    toolchain.ensure(HOME_CACHES)
    caches = root / CACHE_DIR
    caches.mkdir(parents=True)
    if isinstance(toolchain, GoToolchain):
        copy = caches / toolchain.root.name
        copy.mkdir()
        for name in ("mod", "template", "build", "gopath"):
            (copy / name).symlink_to(toolchain.root / name)
        for packages in (toolchain.packages, toolchain.lean_packages):
            if packages is not None:
                shutil.copytree(packages, copy / packages.name)
    elif isinstance(toolchain, RustToolchain):
        shutil.copytree(toolchain.cache, caches / toolchain.cache.name)
    else:
        raise AssertionError(language)
    return root


# -- built once, reused, keyed by the compiler --------------------------------------------------


def test_the_precompiled_header_is_built_once_and_reused(tmp_path: Path) -> None:
    first = CppToolchain()
    first.ensure(tmp_path)
    gch = first.cache / f"{CPP_HEADER}.gch"
    before = gch.stat()
    second = CppToolchain()
    second.ensure(tmp_path)
    assert second.cache == first.cache and "pch" in second.fingerprint.split("; ")[1]
    assert (gch.stat().st_ino, gch.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert len(list(tmp_path.glob("cpp-pch-*"))) == 1


def test_a_new_compiler_gets_its_own_precompiled_header(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    real = CppToolchain()
    real.ensure(tmp_path)
    # The same g++ reporting another version, as after an upgrade.
    fake = tmp_path / "bin" / "g++"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\nif [ "$1" = --version ]; then echo "g++ (Upgraded) 99.1"; '
                    f'exit 0; fi\nexec {real.gxx} "$@"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    upgraded = CppToolchain()
    upgraded.ensure(tmp_path)
    assert upgraded.cache != real.cache
    assert toolchain_cache.intact(upgraded.cache) and toolchain_cache.intact(real.cache)
    assert "(Upgraded) 99.1" in upgraded.fingerprint and upgraded.fingerprint != real.fingerprint


@pytest.mark.parametrize("language", ["go", "rust"])
def test_go_packages_and_rust_crates_are_reused_as_sealed(language: str, tmp_path: Path) -> None:
    toolchain: Toolchain = GoToolchain() if language == "go" else RustToolchain()
    root = home_copy(language, toolchain, tmp_path)
    again: Toolchain = GoToolchain() if language == "go" else RustToolchain()
    pattern = "go-*/packages-*/" if language == "go" else "rust-*/"
    sealed = list((root / CACHE_DIR).glob(pattern + toolchain_cache.SEAL))
    stamps = [p.stat().st_mtime_ns for p in sealed]
    again.ensure(root / CACHE_DIR)
    # Go: the full packages and the lean ones (testify without HTTP assertions).
    assert len(sealed) == (2 if language == "go" else 1)
    assert [p.stat().st_mtime_ns for p in sealed] == stamps
    assert again.fingerprint == toolchain.fingerprint


# -- damaged caches are rebuilt; unusable fast paths fall back with the same verdicts -----------


def test_a_damaged_precompiled_header_is_rebuilt(hx: Path, tmp_path: Path) -> None:
    caches = tmp_path / CACHE_DIR
    CppToolchain().ensure(caches)
    gch = next(caches.glob(f"cpp-pch-*/{CPP_HEADER}.gch"))
    # Bytes flipped inside: g++ would take it and fail (an internal compiler error, seen).
    with gch.open("r+b") as handle:
        handle.seek(2_000_000)
        handle.write(os.urandom(4096))
    toolchain = CppToolchain()
    toolchain.ensure(caches)
    assert toolchain_cache.intact(toolchain.cache) and "; pch " in toolchain.fingerprint
    pairs = slice_of(hx, "cpp")[:4]
    verdicts = [o.verdict for o in run_samples(toolchain, tmp_path, pairs, tmp_path / "work")]
    assert verdicts == [P, P, P, P]


def test_a_header_that_cannot_be_precompiled_falls_back_to_text(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(CppToolchain, "_pch_usable", lambda self: False)
    toolchain = CppToolchain()
    toolchain.ensure(tmp_path)
    assert "no pch" in toolchain.fingerprint
    assert (toolchain.cache / CPP_HEADER).is_file()
    assert not (toolchain.cache / f"{CPP_HEADER}.gch").exists()


def test_without_mold_the_default_linker_is_used(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    which = shutil.which
    monkeypatch.setattr(program_toolchains.shutil, "which",
                        lambda name, *a, **k: None if name == "mold" else which(name, *a, **k))
    toolchain = CppToolchain()
    toolchain.ensure(tmp_path)
    assert toolchain.linker == () and toolchain.fingerprint.endswith("default linker")
    request = toolchain.compile_request(tmp_path, "program.cpp", Limits())
    assert "-fuse-ld=mold" not in request.argv


@pytest.mark.skipif(shutil.which("mold") is None, reason="mold is not installed")
def test_mold_is_used_where_installed(tmp_path: Path) -> None:
    toolchain = CppToolchain()
    toolchain.ensure(tmp_path)
    assert "-fuse-ld=mold" in toolchain.build_argv("p.cpp")
    assert shlex.join(toolchain.build_argv("p.cpp")) in " ".join(
        toolchain.compile_request(tmp_path, "p.cpp", Limits()).argv)


def test_damaged_go_packages_are_rebuilt(hx: Path, tmp_path: Path) -> None:
    root = home_copy("go", GoToolchain(), tmp_path)
    for packages in sorted((root / CACHE_DIR).glob("go-*/packages-*/")):
        archive = sorted(packages.glob("a/*.a"))[-1]
        archive.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    toolchain = GoToolchain()
    toolchain.ensure(root / CACHE_DIR)
    assert toolchain.direct and toolchain_cache.intact(toolchain.packages)
    assert toolchain.lean_packages is not None and toolchain_cache.intact(toolchain.lean_packages)
    pairs = slice_of(hx, "go")[:3]
    assert [o.verdict for o in run_samples(toolchain, root, pairs, tmp_path / "w")] == [P] * 3


def test_damaged_rust_crates_are_set_aside_and_built_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pristine = RustToolchain()
    root = home_copy("rust", pristine, tmp_path)
    rlib = next((root / CACHE_DIR).glob("rust-*/deps/librand-*.rlib"))
    rlib.write_bytes(b"not an rlib")
    rebuilt: list[Path] = []

    def build(self: RustToolchain, version: str) -> None:
        # Stands for cargo (minutes): what it would produce is the pristine cache.
        rebuilt.append(self.cache)
        assert not self.cache.exists(), "the damaged cache must be out of the way"
        shutil.copytree(pristine.cache, self.cache)

    monkeypatch.setattr(RustToolchain, "_build", build)
    toolchain = RustToolchain()
    toolchain.ensure(root / CACHE_DIR)
    assert rebuilt == [toolchain.cache] and toolchain_cache.intact(toolchain.cache)


@pytest.mark.parametrize(("language", "fast", "plain"), [
    ("cpp", CppToolchain, lambda: CppToolchain(precompiled=False, fast_linker=False)),
    ("go", GoToolchain, lambda: GoToolchain(lean_packages=False, lean_testify=False)),
    ("rust", RustToolchain, lambda: RustToolchain(dynamic_std=False)),
], ids=["cpp", "go", "rust"])
def test_fast_and_plain_paths_give_the_same_verdicts(
        language: str, fast: Callable[[], Toolchain], plain: Callable[[], Toolchain], hx: Path,
        tmp_path: Path) -> None:
    pairs = slice_of(hx, language)
    env_root = default_env_root()
    got_fast = run_samples(fast(), env_root, pairs, tmp_path / "fast")
    got_plain = run_samples(plain(), env_root, pairs, tmp_path / "plain")
    assert [o.verdict for o in got_fast] == [o.verdict for o in got_plain]
    # The slice is not trivially uniform: references pass, broken bodies do not, nor the junk.
    n = len(pairs) // 2
    assert [o.verdict for o in got_fast[:n]] == [P] * n
    assert all(o.verdict is not P for o in got_fast[n:])
    assert got_fast[-1].verdict is Verdict.COMPILE_ERROR


def test_go_test_c_fallback_gives_the_same_verdicts_with_a_private_cache(
        hx: Path, tmp_path: Path) -> None:
    fallback = GoToolchain(direct=False)
    fallback.ensure(HOME_CACHES)
    assert "go test -c" in fallback.fingerprint
    task = tasks_of(hx, "go")[0]
    workdir = tmp_path / "sample"
    workdir.mkdir()
    request = fallback.compile_request(workdir, "main_test.go", Limits())
    assert request.env["GOCACHE"].startswith(str(workdir))
    assert all(not mount.writable for mount in request.mounts)
    pairs = [(task, task.reference), (task, broken_body(task))]
    got = run_samples(fallback, default_env_root(), pairs, tmp_path / "work")
    assert [o.verdict for o in got] == [P, F]


# -- nothing a sample writes reaches the next -------------------------------------------------


VARIANTS: dict[str, Callable[[], Toolchain]] = {
    "cpp": CppToolchain, "cpp-plain": lambda: CppToolchain(precompiled=False, fast_linker=False),
    "go": GoToolchain, "go-dwarf": lambda: GoToolchain(lean_packages=False, lean_testify=False),
    "rust": RustToolchain, "rust-static": lambda: RustToolchain(dynamic_std=False),
}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_no_request_mounts_anything_writable(variant: str, hx: Path, tmp_path: Path) -> None:
    toolchain = VARIANTS[variant]()
    toolchain.ensure(HOME_CACHES)
    task = tasks_of(hx, toolchain.language)[0]
    program = build_program(task, task.reference)
    # As the runner does: the program's files are written before the requests are made.
    for name, text in program.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    requests = [toolchain.compile_request(tmp_path, program.main, Limits()),
                toolchain.run_request(tmp_path, program.main, Limits())]
    assert all(not m.writable for r in requests if r is not None for m in r.mounts)
    assert all(r.scratch == tmp_path for r in requests if r is not None)


POISON = {
    # Each tries to overwrite every cache file it is given, then answers correctly; it prints
    # WROTE for a write that succeeded and REFUSED for one that did not.
    "cpp": ('    for (const char* path : {{{paths}}}) {{\n'
            '        FILE* f = fopen(path, "r+b");\n'
            '        bool wrote = f && fputs("poison", f) >= 0 && fflush(f) == 0;\n'
            '        printf(wrote ? "WROTE\\n" : "REFUSED\\n");\n'
            '        if (f) fclose(f);\n    }}\n'),
    "go": ('    for _, path := range []string{{{paths}}} {{\n'
           '        f, err := os.OpenFile(path, os.O_WRONLY, 0)\n'
           '        if err == nil {{\n'
           '            _, err = f.WriteString("poison")\n            f.Close()\n        }}\n'
           '        if err == nil {{\n            fmt.Println("WROTE")\n        }} else {{\n'
           '            fmt.Println("REFUSED")\n        }}\n    }}\n'),
    "rust": ('    for path in [{paths}] {{\n'
             '        use std::io::Write;\n'
             '        let wrote = std::fs::OpenOptions::new().write(true).open(path)\n'
             '            .and_then(|mut f| f.write_all(b"poison")).is_ok();\n'
             '        println!("{{}}", if wrote {{ "WROTE" }} else {{ "REFUSED" }});\n'
             '    }}\n'),
}


def poisoned(task: Task, paths: list[Path]) -> str:
    """The reference (which starts inside the function's body) preceded by an attempt to
    overwrite ``paths``."""
    quoted = ", ".join(f'"{p}"' for p in paths)
    return POISON[task.language.value].format(paths=quoted) + task.reference


@pytest.mark.parametrize("language", ["cpp", "go", "rust"])
def test_a_sample_cannot_poison_what_the_next_sample_compiles_with(
        language: str, hx: Path, tmp_path: Path) -> None:
    sandbox = get_sandbox("auto")
    if not sandbox.isolation.startswith("bwrap"):
        pytest.skip("only bubblewrap makes the host read-only for samples")
    if language == "cpp":
        toolchain: Toolchain = CppToolchain()
        toolchain.ensure(tmp_path / CACHE_DIR)
        root = tmp_path
        caches = [toolchain.cache]
    else:
        toolchain = GoToolchain() if language == "go" else RustToolchain()
        root = home_copy(language, toolchain, tmp_path)
        toolchain = GoToolchain() if language == "go" else RustToolchain()
        toolchain.ensure(root / CACHE_DIR)
        caches = ([p for p in (toolchain.packages, toolchain.lean_packages) if p is not None]
                  if isinstance(toolchain, GoToolchain) else [toolchain.cache])
    targets = [p for c in caches for p in sorted(f for f in c.rglob("*") if f.is_file())[:6]]
    task = tasks_of(hx, language)[1]
    attack = poisoned(task, targets)
    got = run_samples(toolchain, root, [(task, attack)], tmp_path / "work")[0]
    assert got.verdict is P, got.detail
    # Once per call of the function by the test, for every target.
    refused = got.stdout_tail.split().count("REFUSED")
    assert refused and refused % len(targets) == 0, got.stdout_tail
    assert "WROTE" not in got.stdout_tail
    assert all(toolchain_cache.intact(c) for c in caches)
    after = run_samples(toolchain, root, [(t, t.reference) for t in tasks_of(hx, language)[:4]],
                        tmp_path / "after")
    assert [o.verdict for o in after] == [P] * 4




# -- Go: testify without its HTTP assertions ----------------------------------------------------


def _http_assert(task: Task) -> str:
    """The reference, then a helper that calls one of testify's HTTP assertions (never run; an
    untyped nil needs no net/http import): it compiles only against the full testify."""
    return (task.reference + "\n\nfunc codereval_uses_http(t *testing.T) bool {\n"
            '    return assert.HTTPSuccess(t, nil, "GET", "/", nil)\n}\n')


def test_go_links_against_a_testify_without_http_unless_the_program_mentions_it(
        hx: Path, tmp_path: Path) -> None:
    toolchain = GoToolchain()
    toolchain.ensure(HOME_CACHES)
    assert toolchain.lean_packages is not None
    assert "testify without http" in toolchain.fingerprint
    lean = toolchain.lean_importcfg
    assert "packagefile github.com/stretchr/testify/assert=" in lean
    assert "packagefile net/http=" not in lean and "packagefile net/http=" in toolchain.importcfg
    assert lean.count("\n") < toolchain.importcfg.count("\n") * 0.7
    task = tasks_of(hx, "go")[2]
    mounted = {}
    for name, code in {"plain": task.reference, "http": _http_assert(task)}.items():
        workdir = tmp_path / name
        workdir.mkdir()
        program = build_program(task, code)
        (workdir / program.main).write_text(program.files[program.main])
        request = toolchain.compile_request(workdir, program.main, Limits())
        mounted[name] = {m.source for m in request.mounts}
        assert all(not m.writable for m in request.mounts)
    assert toolchain.lean_packages in mounted["plain"]
    assert toolchain.packages not in mounted["plain"]
    assert toolchain.packages in mounted["http"]


def test_a_go_sample_calling_an_http_assertion_gets_the_verdict_of_the_full_testify(
        hx: Path, tmp_path: Path) -> None:
    task = tasks_of(hx, "go")[2]
    pairs = [(task, _http_assert(task)), (task, task.reference)]
    fast = run_samples(GoToolchain(), default_env_root(), pairs, tmp_path / "lean")
    full = run_samples(GoToolchain(lean_testify=False), default_env_root(), pairs,
                       tmp_path / "full")
    assert [o.verdict for o in fast] == [o.verdict for o in full] == [P, P], fast[0].detail


def test_without_a_lean_testify_every_go_program_uses_the_full_packages(
        hx: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = home_copy("go", GoToolchain(), tmp_path)
    lean = next((root / CACHE_DIR).glob("go-*/packages-lean-*"))
    shutil.rmtree(lean)
    # The tool that takes the HTTP assertions out fails (as when upstream renames them).
    monkeypatch.setattr(program_toolchains, "GO_LEAN_TOOL", "go/missing.go")
    # (Our prologues are read through the same call: they stay where they are.)
    shutil.copytree(Path(program_toolchains.__file__).parent / "prologue", tmp_path / "prologue")
    monkeypatch.setattr(program_toolchains.resources, "files", lambda _package: tmp_path)
    (tmp_path / "go").mkdir()
    (tmp_path / "go" / "missing.go").write_text(
        'package main\n\nimport "os"\n\nfunc main() { os.Exit(1) }\n')
    toolchain = GoToolchain()
    toolchain.ensure(root / CACHE_DIR)
    assert toolchain.direct and toolchain.lean_packages is None
    assert "testify without http" not in toolchain.fingerprint
    assert not list((root / CACHE_DIR).glob("go-*/packages-lean-*"))
    pairs = slice_of(hx, "go")[:2]
    assert [o.verdict for o in run_samples(toolchain, root, pairs, tmp_path / "w")] == [P, P]


def test_go_test_binaries_leave_out_fuzzing_and_profiling_but_judge_as_go_test_does(
        hx: Path, tmp_path: Path) -> None:
    toolchain = GoToolchain()
    toolchain.ensure(HOME_CACHES)
    assert "minimal test deps" in toolchain.fingerprint
    task = tasks_of(hx, "go")[3]
    # A pass, a failed assertion, a panic, os.Exit(0) before the tests end (-test.paniconexit0
    # makes it a failure, through the deps' SetPanicOnExit0), t.Fatal.
    bodies = [task.reference, broken_body(task), "    panic(\"boom\")\n}\n",
              "    os.Exit(0)\n    for {\n    }\n}\n"]
    pairs = [(task, body) for body in bodies] + slice_of(hx, "go")
    minimal = run_samples(toolchain, default_env_root(), pairs, tmp_path / "minimal")
    standard = run_samples(GoToolchain(minimal_deps=False), default_env_root(), pairs,
                           tmp_path / "standard")
    assert ([(o.verdict, o.stage, o.exit_code) for o in minimal]
            == [(o.verdict, o.stage, o.exit_code) for o in standard])
    # os.Exit(0) panicked (status 2) rather than ending quietly: the flag reached package os.
    assert minimal[3].exit_code == 2
    assert [o.verdict for o in minimal[:4]] == [P, F, Verdict.RUNTIME_ERROR, Verdict.RUNTIME_ERROR]
    # What the standard deps bring is not in the binary.
    workdir = tmp_path / "binary"
    workdir.mkdir()
    program = build_program(task, task.reference)
    for name, text in program.files.items():
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        (workdir / name).write_text(text)
    importcfg = toolchain.packages_for(program.files[program.main])[1]
    for deps, expected in ((program_toolchains.GO_MINIMAL_DEPS, False),
                           (program_toolchains.GO_STANDARD_DEPS, True)):
        toolchain.deps = deps
        script = toolchain._direct_script(workdir, importcfg)
        env = {**os.environ, **toolchain._env(offline=True), "GOROOT": str(toolchain.goroot)}
        subprocess.run(["/bin/sh", "-c", script], cwd=workdir, env=env, check=True)
        assert (b"internal/fuzz." in (workdir / "program.test").read_bytes()) is expected


def test_a_go_that_refuses_the_minimal_deps_gets_the_standard_ones(
        hx: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # As when testing's unexported interface changes in a new Go.
    monkeypatch.setattr(program_toolchains, "GO_MINIMAL_DEPS",
                        program_toolchains.GO_MINIMAL_DEPS.replace("ModulePath", "Gone"))
    toolchain = GoToolchain()
    toolchain.ensure(HOME_CACHES)
    assert toolchain.direct and toolchain.deps == program_toolchains.GO_STANDARD_DEPS
    assert "minimal test deps" not in toolchain.fingerprint
    pairs = slice_of(hx, "go")[:2]
    assert [o.verdict for o in run_samples(toolchain, default_env_root(), pairs,
                                           tmp_path / "w")] == [P, P]


# -- one sandbox launch per compiled sample -----------------------------------------------------


# Bodies that loop forever, hold 2 GB, and end the program early with status 0.
HOSTILE = {
    "cpp": ["    while (true) {}\n}\n",
            "    std::vector<long> hog(1L << 28, 1);\n    return {};\n}\n",
            "    exit(0);\n}\n"],
    "go": ["    for {\n    }\n}\n",
           # Read afterwards: stores nobody reads may be compiled away.
           "    hog := make([]int64, 1<<28)\n    for i := range hog {\n        hog[i] = int64(i)\n"
           "    }\n    return []string{fmt.Sprint(hog[len(hog)-1])}\n}\n",
           "    os.Exit(0)\n    for {\n    }\n}\n"],
    "rust": ["    loop {}\n}\n",
             "    let hog = vec![1u8; 1 << 31];\n"
             "    println!(\"{}\", hog.len());\n    loop {}\n}\n",
             "    std::process::exit(0);\n}\n"],
}


@pytest.mark.parametrize("language", ["cpp", "go", "rust"])
def test_one_launch_gives_the_verdicts_of_two(language: str, hx: Path, tmp_path: Path) -> None:
    staged = get_sandbox("auto")
    if "cgroup(memory,pids,cpuacct" not in staged.isolation:
        pytest.skip("one launch needs bubblewrap with memory, pids and cpuacct cgroups")
    task = tasks_of(hx, language)[1]
    hostile = [(task, body) for body in HOSTILE[language]]
    toolchain = {"cpp": CppToolchain, "go": GoToolchain, "rust": RustToolchain}[language]
    pairs = slice_of(hx, language) + hostile
    # The endless loop with a short wall time; every other sample with room to spare on a
    # loaded machine, so that neither a pass nor the memory hog's kill (it must fill 512 MB
    # first) turns into a timeout by chance.
    roomy, short = Limits(wall_time=30.0, memory_mb=512), Limits(wall_time=3.0, memory_mb=512)
    got = {name: run_samples(toolchain(), default_env_root(), pairs[:-3], tmp_path / name,
                             sandbox=sandbox, limits=roomy)
           + run_samples(toolchain(), default_env_root(), hostile[:1], tmp_path / f"{name}-h",
                         sandbox=sandbox, limits=short)
           + run_samples(toolchain(), default_env_root(), hostile[1:], tmp_path / f"{name}-m",
                         sandbox=sandbox, limits=roomy)
           for name, sandbox in (("one", staged), ("two", BwrapSandbox(one_launch=False)))}
    assert [o.verdict for o in got["one"]] == [o.verdict for o in got["two"]]
    assert [o.stage for o in got["one"]] == [o.stage for o in got["two"]]
    n = (len(pairs) - len(hostile) - 1) // 2
    assert [o.verdict for o in got["one"][:n]] == [P] * n
    assert [o.verdict for o in got["one"][-4:]] == [
        Verdict.COMPILE_ERROR, Verdict.TIMEOUT, Verdict.MEMORY_EXCEEDED, Verdict.RUNTIME_ERROR]
    # The compile error is reported from the build, with the compiler's words.
    assert got["one"][-4].stage.value == "compile" and got["one"][-4].detail.startswith("compile:")
