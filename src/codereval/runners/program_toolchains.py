"""Per-language toolchains for HumanEval-X programs: caches built once, commands per sample.

Each toolchain turns a sample's directory (the program's files already written) into sandbox
requests: an optional compile step, then the run. What can be shared is built once into a cache
keyed by the compiler version and flags and reused read-only by every sample:

* C++: a precompiled header of the headers CodeGeeX's harness puts before every program;
* JavaScript: the npm package ``js-md5`` (one task requires it), exposed through NODE_PATH;
* Go: a module cache holding testify (fetched once from the Go module proxy, so later runs are
  offline) and one warm GOCACHE, writable during compilation only; every sample still builds in
  its own directory;
* Rust: the crates every declaration imports (rand, regex, md5; pinned versions from crates.io)
  built once with cargo into rlibs keyed by the rustc version, then each sample is one
  ``rustc`` call linking against them (later runs are offline).

Caches are built outside the sandbox (our own fixed inputs, the only step that uses the
network) into a temporary directory and renamed into place, so concurrent processes are safe.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from abc import ABC, abstractmethod
from dataclasses import replace
from pathlib import Path

from codereval.errors import ToolchainMissing
from codereval.runners.program_source import GO_TEST_FILE, GO_TESTMAIN_FILE
from codereval.sandbox.base import ExecRequest, Limits, Mount

# The headers CodeGeeX's harness prepends to every C++ program, plus those some task
# declarations include (map, list, boost::any, assert), precompiled once.
CPP_HEADERS = (
    "stdlib.h", "algorithm", "math.h", "stdio.h", "vector", "string", "climits", "cstring",
    "iostream", "map", "list", "boost/any.hpp", "assert.h",
)
CPP_FLAGS = ("-std=c++17", "-O0", "-w")
CPP_LIBS = ("-lcrypto",)
JS_MD5 = "js-md5@0.8.3"
TESTIFY = "github.com/stretchr/testify"
TESTIFY_VERSION = "v1.9.0"
# Every HumanEval-X Rust declaration starts with `use rand::Rng; use regex::Regex; use md5;`.
# rand before 0.8: the tests call the two-argument `gen_range(low, high)`.
RUST_CRATES = (("rand", "0.7.3"), ("regex", "1.11.1"), ("md5", "0.7.0"))
RUST_FLAGS = ("--edition", "2021", "--cfg", "test", "-C", "opt-level=0", "-A", "warnings")
# G1 and C1 by measurement (bench/java_jvm_start.py): G1 maps the JDK archive's heap objects.
JAVA_RUN_FLAGS = ("-ea", "-Xmx512m", "-Xss8m", "-XX:+UseG1GC", "-XX:TieredStopAtLevel=1",
                  "-Duser.language=en", "-Duser.country=US")


def _version(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolchainMissing(f"{argv[0]} does not run ({exc})") from None
    return (done.stdout + done.stderr).strip().splitlines()[0] if done.returncode == 0 else ""


def _which(name: str, *, hint: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise ToolchainMissing(f"{name} not found on PATH", hint=hint)
    return os.path.realpath(found)


def _key(*parts: str) -> str:
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _publish(build: Path, final: Path) -> None:
    """Move a finished cache into place; another process may have won the race, which is fine."""
    try:
        build.rename(final)
    except OSError:
        if not final.exists():
            raise
        shutil.rmtree(build, ignore_errors=True)


def base_env(scratch: Path) -> dict[str, str]:
    # Not the scratch directory itself: Go ignores a go.mod that sits in the temp root.
    tmp = scratch / "tmp"
    tmp.mkdir(exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(scratch),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
    }


class Toolchain(ABC):
    """One language. ``ensure`` is called once per process (thread-safe), then the requests."""

    language: str = ""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ready = False
        self._failure: ToolchainMissing | None = None
        self.fingerprint = ""

    def ensure(self, cache_root: Path) -> None:
        """Build or find the caches; a failure is remembered, not retried for every sample."""
        with self._lock:
            if self._failure is not None:
                raise self._failure
            if not self._ready:
                try:
                    self._setup(cache_root)
                except ToolchainMissing as exc:
                    self._failure = exc
                    raise
                self._ready = True

    @abstractmethod
    def _setup(self, cache_root: Path) -> None: ...

    def compile_request(self, workdir: Path, main: str, limits: Limits) -> ExecRequest | None:
        return None

    @abstractmethod
    def run_request(self, workdir: Path, main: str, limits: Limits) -> ExecRequest: ...

    def _request(
        self,
        argv: list[str],
        workdir: Path,
        limits: Limits,
        *,
        env: dict[str, str] | None = None,
        mounts: tuple[Mount, ...] = (),
    ) -> ExecRequest:
        full_env = base_env(workdir)
        full_env.update(env or {})
        return ExecRequest(
            argv=tuple(argv),
            cwd=workdir,
            scratch=workdir,
            env=full_env,
            mounts=mounts,
            limits=limits,
        )


def compile_limits(limits: Limits) -> Limits:
    """Compilers need more room than the programs they build; still bounded."""
    memory = None if limits.memory_mb is None else max(limits.memory_mb, 4096)
    return replace(limits, wall_time=max(limits.wall_time, 60.0), cpu_time=None, memory_mb=memory,
                   processes=None if limits.processes is None else max(limits.processes, 512))


class PythonToolchain(Toolchain):
    language = "python"

    def _setup(self, cache_root: Path) -> None:
        # The base interpreter, not a venv wrapper: programs need only the standard library.
        self.python = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
        self.fingerprint = f"python {sys.version.split()[0]}"

    def run_request(self, workdir: Path, main: str, limits: Limits) -> ExecRequest:
        return self._request([self.python, "-I", "-u", main], workdir, limits)


class CppToolchain(Toolchain):
    language = "cpp"

    def _setup(self, cache_root: Path) -> None:
        self.gxx = _which("g++", hint="apt-get install g++")
        version = _version([self.gxx, "--version"])
        header = "".join(f"#include <{name}>\n" for name in CPP_HEADERS)
        self.cache = cache_root / f"cpp-pch-{_key(version, *CPP_FLAGS, header)}"
        if not (self.cache / "humanevalx.h.gch").is_file():
            self.cache.parent.mkdir(parents=True, exist_ok=True)
            build = Path(tempfile.mkdtemp(prefix="cpp-pch-", dir=self.cache.parent))
            (build / "humanevalx.h").write_text(header, encoding="utf-8")
            done = subprocess.run(
                [self.gxx, *CPP_FLAGS, "-x", "c++-header", "humanevalx.h", "-o",
                 "humanevalx.h.gch"],
                cwd=build, capture_output=True, text=True, timeout=300, check=False,
            )
            if done.returncode != 0:
                shutil.rmtree(build, ignore_errors=True)
                raise ToolchainMissing(
                    f"cannot precompile the C++ header ({done.stderr.strip()[-300:]})",
                    hint="apt-get install libboost-dev libssl-dev (scripts/setup-system.sh)",
                )
            _publish(build, self.cache)
        self.fingerprint = f"{version}; pch {self.cache.name}"

    def compile_request(self, workdir: Path, main: str, limits: Limits) -> ExecRequest:
        argv = [self.gxx, *CPP_FLAGS, "-include", str(self.cache / "humanevalx.h"), main,
                "-o", "program", *CPP_LIBS]
        return self._request(argv, workdir, compile_limits(limits),
                             mounts=(Mount(source=self.cache, target=self.cache),))

    def run_request(self, workdir: Path, main: str, limits: Limits) -> ExecRequest:
        return self._request([str(workdir / "program")], workdir, limits)


class JavaToolchain(Toolchain):
    """Runs in the sandbox; compiled by the team's warm compiler (codereval.java.compiler)."""

    language = "java"

    def _setup(self, cache_root: Path) -> None:
        from codereval.java.toolchain import find_jdk

        jdk = find_jdk()
        self.java = os.path.realpath(jdk.java)
        self.fingerprint = jdk.version

    def run_request(self, workdir: Path, main: str, limits: Limits) -> ExecRequest:
        from codereval.runners.program_source import JAVA_ENTRY_CLASS

        # The JVM reserves address space far beyond what it uses: a heap cap keeps it bounded.
        java_limits = replace(limits, memory_mb=None if limits.memory_mb is None
                              else max(limits.memory_mb, 4096))
        argv = [self.java, *JAVA_RUN_FLAGS, "-cp", str(workdir / "classes"), JAVA_ENTRY_CLASS]
        return self._request(argv, workdir, java_limits)


class JsToolchain(Toolchain):
    language = "js"

    def _setup(self, cache_root: Path) -> None:
        self.node = _which("node", hint="install Node.js (apt-get install nodejs)")
        version = _version([self.node, "--version"])
        self.cache = cache_root / f"js-{_key(JS_MD5)}"
        if not (self.cache / "node_modules" / "js-md5").is_dir():
            npm = _which("npm", hint="install npm (apt-get install npm)")
            self.cache.parent.mkdir(parents=True, exist_ok=True)
            build = Path(tempfile.mkdtemp(prefix="js-", dir=self.cache.parent))
            done = subprocess.run(
                [npm, "install", "--prefix", str(build), "--no-audit", "--no-fund",
                 "--no-save", JS_MD5],
                capture_output=True, text=True, timeout=600, check=False,
            )
            if done.returncode != 0 or not (build / "node_modules" / "js-md5").is_dir():
                shutil.rmtree(build, ignore_errors=True)
                raise ToolchainMissing(
                    f"npm could not install {JS_MD5} ({done.stderr.strip()[-300:]})",
                    hint="check access to the npm registry",
                )
            _publish(build, self.cache)
        self.fingerprint = f"node {version}; {JS_MD5}"

    def run_request(self, workdir: Path, main: str, limits: Limits) -> ExecRequest:
        modules = self.cache / "node_modules"
        return self._request(
            [self.node, main], workdir, limits, env={"NODE_PATH": str(modules)},
            mounts=(Mount(source=modules, target=modules),),
        )


GO_MOD = f"module humanevalx\n\ngo 1.21\n\nrequire {TESTIFY} {TESTIFY_VERSION}\n"
GO_WARM_TEST = (
    'package main\n\nimport (\n    "testing"\n    "github.com/stretchr/testify/assert"\n)\n\n'
    "func TestWarm(t *testing.T) {\n    assert.Equal(t, 1, 1)\n}\n"
)


class GoToolchain(Toolchain):
    language = "go"

    def _setup(self, cache_root: Path) -> None:
        self.go = _which("go", hint="install Go (https://go.dev/doc/install)")
        version = _version([self.go, "version"])
        self.goroot = Path(subprocess.run(
            [self.go, "env", "GOROOT"], capture_output=True, text=True, timeout=60, check=True
        ).stdout.strip())
        self.root = cache_root / f"go-{_key(version, TESTIFY, TESTIFY_VERSION)}"
        self.modcache = self.root / "mod"
        self.gocache = self.root / "build"
        self.template = self.root / "template"
        if not (self.template / "go.sum").is_file():
            self._fetch()
        self.tooldir = Path(subprocess.run(
            [self.go, "env", "GOTOOLDIR"], capture_output=True, text=True, timeout=60, check=True
        ).stdout.strip())
        self.packages = self.root / "packages"
        if not (self.packages / "importcfg").is_file():
            self._export_packages()
        # The direct compile/link path relies on testing.MainStart, which Go does not promise to
        # keep: checked once on a known program, else every sample goes through `go test -c`.
        self.direct = self._direct_works()
        how = "compile+link" if self.direct else "go test -c"
        self.fingerprint = f"{version}; testify {TESTIFY_VERSION}; {how}"

    def _env(self, *, offline: bool) -> dict[str, str]:
        env = {
            "GOMODCACHE": str(self.modcache),
            "GOCACHE": str(self.gocache),
            "GOPATH": str(self.root / "gopath"),
            "GOTOOLCHAIN": "local",
            "GOFLAGS": "-mod=mod -modcacherw" if not offline else "-mod=readonly",
            "CGO_ENABLED": "0",
            "GOTELEMETRY": "off",
        }
        if offline:
            # GOGC=off: the compiler and linker of one small program finish before a collection
            # would pay for itself (measured: ~20% less CPU per sample).
            env |= {"GOPROXY": "off", "GOSUMDB": "off", "GOGC": "off"}
        return env

    def _fetch(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        build = Path(tempfile.mkdtemp(prefix="template-", dir=self.root))
        (build / "go.mod").write_text(GO_MOD, encoding="utf-8")
        (build / "warm_test.go").write_text(GO_WARM_TEST, encoding="utf-8")
        env = base_env(build) | self._env(offline=False)
        for argv in ([self.go, "mod", "tidy"], [self.go, "test", "-count=1", "./..."]):
            done = subprocess.run(argv, cwd=build, env=env, capture_output=True, text=True,
                                  timeout=600, check=False)
            if done.returncode != 0:
                shutil.rmtree(build, ignore_errors=True)
                raise ToolchainMissing(
                    f"cannot prepare Go with testify ({' '.join(argv[1:])}: "
                    f"{(done.stdout + done.stderr).strip()[-300:]})",
                    hint="check access to the Go module proxy",
                )
        (build / "warm_test.go").unlink()
        _publish(build, self.template)

    def _export_packages(self) -> None:
        """Compiled testify and standard packages, copied out of the build cache (which Go may
        trim) with an importcfg naming them: the input of the direct compile and link."""
        from codereval.runners.program_source import GO_STD_PACKAGES

        self.root.mkdir(parents=True, exist_ok=True)
        build = Path(tempfile.mkdtemp(prefix="packages-", dir=self.root))
        for name in ("go.mod", "go.sum"):
            shutil.copyfile(self.template / name, build / name)
        wanted = ["testing", "fmt", "os", f"{TESTIFY}/assert", *GO_STD_PACKAGES.values()]
        imports = "".join(f'    _ "{path}"\n' for path in wanted)
        (build / "deps_test.go").write_text(f"package main\n\nimport (\n{imports})\n")
        done = subprocess.run(
            [self.go, "list", "-export", "-deps", "-test", "-f",
             "{{if .Export}}{{.ImportPath}}={{.Export}}{{end}}", "."],
            cwd=build, env=base_env(build) | self._env(offline=True), capture_output=True,
            text=True, timeout=600, check=False,
        )
        if done.returncode != 0:
            shutil.rmtree(build, ignore_errors=True)
            raise ToolchainMissing(f"cannot list Go packages ({done.stderr.strip()[-300:]})")
        (build / "a").mkdir()
        lines = []
        for index, line in enumerate(done.stdout.splitlines()):
            path, _, export = line.partition("=")
            if not export or path.startswith("humanevalx"):
                continue
            shutil.copyfile(export, build / "a" / f"{index}.a")
            lines.append(f"packagefile {path}={self.packages / 'a' / f'{index}.a'}\n")
        for name in ("go.mod", "go.sum", "deps_test.go", "tmp"):
            target = build / name
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
        (build / "importcfg").write_text("".join(lines), encoding="utf-8")
        _publish(build, self.packages)

    def _direct_script(self, workdir: Path) -> str:
        base = (self.packages / "importcfg").read_text(encoding="utf-8")
        (workdir / "importcfg").write_text(
            f"{base}packagefile humanevalx={workdir / 'pkg.a'}\n", encoding="utf-8")
        tool = self.tooldir
        return (
            "set -e\n"
            f'"{tool}/compile" -p humanevalx -lang=go1.21 -complete -importcfg importcfg '
            f"-pack -o pkg.a {GO_TEST_FILE}\n"
            f'"{tool}/compile" -p main -complete -importcfg importcfg -pack -o main.a '
            f"{GO_TESTMAIN_FILE}\n"
            f'"{tool}/link" -s -w -importcfg importcfg -buildmode=exe -o program.test main.a\n'
        )

    def _direct_works(self) -> bool:
        from codereval.runners.program_source import go_testmain

        with tempfile.TemporaryDirectory(prefix="go-check-", dir=self.root) as tmp:
            work = Path(tmp)
            (work / GO_TEST_FILE).write_text(GO_WARM_TEST, encoding="utf-8")
            (work / GO_TESTMAIN_FILE).parent.mkdir()
            (work / GO_TESTMAIN_FILE).write_text(go_testmain(["TestWarm"], marker="CHECKED"))
            env = base_env(work) | self._env(offline=True) | {"GOROOT": str(self.goroot)}
            try:
                built = subprocess.run(["/bin/sh", "-c", self._direct_script(work)], cwd=work,
                                       env=env, capture_output=True, timeout=120, check=False)
                ran = subprocess.run([str(work / "program.test")], cwd=work, env=env,
                                     capture_output=True, text=True, timeout=60, check=False)
            except (OSError, subprocess.TimeoutExpired):
                return False
            return built.returncode == 0 and ran.returncode == 0 and "CHECKED" in ran.stdout

    def compile_request(self, workdir: Path, main: str, limits: Limits) -> ExecRequest:
        mounts: tuple[Mount, ...] = (
            Mount(source=self.goroot, target=self.goroot),
            Mount(source=self.packages, target=self.packages),
        )
        env = self._env(offline=True) | {"GOROOT": str(self.goroot)}
        if self.direct:
            argv = ["/bin/sh", "-c", self._direct_script(workdir)]
            return self._request(argv, workdir, compile_limits(limits), env=env, mounts=mounts)
        for name in ("go.mod", "go.sum"):
            shutil.copyfile(self.template / name, workdir / name)
        argv = [self.go, "test", "-c", "-vet=off", "-ldflags=-s -w", "-o", "program.test", "."]
        mounts += (
            Mount(source=self.modcache, target=self.modcache),
            # Compiling never runs the sample's code, so the shared build cache may be written.
            Mount(source=self.gocache, target=self.gocache, writable=True),
        )
        return self._request(argv, workdir, compile_limits(limits), env=env, mounts=mounts)

    def run_request(self, workdir: Path, main: str, limits: Limits) -> ExecRequest:
        argv = [str(workdir / "program.test"), "-test.v", "-test.paniconexit0",
                "-test.count=1", f"-test.timeout={int(limits.wall_time) + 5}s"]
        return self._request(argv, workdir, limits)


class RustToolchain(Toolchain):
    language = "rust"

    def _setup(self, cache_root: Path) -> None:
        # Not resolved through symlinks: rustup's proxies choose the tool by their own name.
        rustc = shutil.which("rustc")
        if rustc is None:
            raise ToolchainMissing("rustc not found on PATH", hint="install Rust (https://rustup.rs)")
        # The real compiler, not rustup's proxy: the sandbox gets no rustup state.
        self.sysroot = Path(_version([rustc, "--print", "sysroot"]))
        if not (self.sysroot / "bin" / "rustc").is_file():
            raise ToolchainMissing(f"rustc reports no usable sysroot ({self.sysroot})",
                                   hint="install Rust (https://rustup.rs)")
        self.rustc = str(self.sysroot / "bin" / "rustc")
        version = _version([self.rustc, "--version"])
        pins = [f"{name}={pin}" for name, pin in RUST_CRATES]
        self.cache = cache_root / f"rust-{_key(version, *pins)}"
        if not (self.cache / "externs").is_file():
            self._build(version)
        self.externs = [
            line.strip() for line in
            (self.cache / "externs").read_text(encoding="utf-8").splitlines() if line.strip()
        ]
        self.fingerprint = f"{version}; {', '.join(pins)}"

    def _build(self, version: str) -> None:
        cargo = shutil.which("cargo")
        if cargo is None:
            raise ToolchainMissing("cargo not found on PATH", hint="install Rust (https://rustup.rs)")
        self.cache.parent.mkdir(parents=True, exist_ok=True)
        build = Path(tempfile.mkdtemp(prefix="rust-", dir=self.cache.parent))
        deps = "".join(f'{name} = "={pin}"\n' for name, pin in RUST_CRATES)
        (build / "Cargo.toml").write_text(
            '[package]\nname = "codereval-humanevalx-deps"\nversion = "0.0.0"\n'
            f'edition = "2021"\n\n[lib]\npath = "lib.rs"\n\n[dependencies]\n{deps}',
            encoding="utf-8")
        (build / "lib.rs").write_text("", encoding="utf-8")
        env = dict(os.environ, CARGO_TARGET_DIR=str(build / "target"),
                   RUSTC=self.rustc, CARGO_TERM_COLOR="never")
        done = subprocess.run(
            [cargo, "build", "--release", "--message-format=json"], cwd=build, env=env,
            capture_output=True, text=True, timeout=900, check=False)
        wanted = {name for name, _ in RUST_CRATES}
        found: dict[str, Path] = {}
        for line in done.stdout.splitlines():
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if (message.get("reason") == "compiler-artifact"
                    and message["target"]["name"] in wanted):
                rlibs = [Path(f) for f in message["filenames"] if f.endswith(".rlib")]
                if rlibs:
                    found[message["target"]["name"]] = rlibs[0]
        if done.returncode != 0 or set(found) != wanted:
            shutil.rmtree(build, ignore_errors=True)
            raise ToolchainMissing(
                f"cargo could not build {', '.join(sorted(wanted))} for {version} "
                f"({done.stderr.strip()[-300:]})",
                hint="check access to crates.io",
            )
        # Only the rlibs are kept: the extern crates and the dependencies they were built with.
        shutil.copytree(build / "target" / "release" / "deps", build / "deps",
                        ignore=lambda _dir, names: [n for n in names if not n.endswith(".rlib")])
        shutil.rmtree(build / "target")
        (build / "externs").write_text(
            "".join(f"{name}={self.cache / 'deps' / found[name].name}\n" for name in sorted(found)),
            encoding="utf-8")
        _publish(build, self.cache)

    def compile_request(self, workdir: Path, main: str, limits: Limits) -> ExecRequest:
        argv = [self.rustc, *RUST_FLAGS]
        for extern in self.externs:
            argv += ["--extern", extern]
        argv += ["-L", f"dependency={self.cache / 'deps'}", main, "-o", "program"]
        mounts = (Mount(source=self.sysroot, target=self.sysroot),
                  Mount(source=self.cache, target=self.cache))
        return self._request(argv, workdir, compile_limits(limits), mounts=mounts)

    def run_request(self, workdir: Path, main: str, limits: Limits) -> ExecRequest:
        return self._request([str(workdir / "program")], workdir, limits,
                             env={"RUST_BACKTRACE": "0"})


TOOLCHAINS: dict[str, type[Toolchain]] = {
    "python": PythonToolchain,
    "cpp": CppToolchain,
    "java": JavaToolchain,
    "js": JsToolchain,
    "go": GoToolchain,
    "rust": RustToolchain,
}

__all__ = ["TOOLCHAINS", "Toolchain", "compile_limits"]
