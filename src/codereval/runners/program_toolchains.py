"""Per-language toolchains for HumanEval-X programs: caches built once, commands per sample.

Each toolchain turns a sample's directory (the program's files already written) into sandbox
requests: an optional compile step, then the run. What can be shared is built once into a cache
keyed by the compiler version and flags, sealed (codereval.runners.toolchain_cache: rebuilt when
damaged) and mounted read-only for every sample; nothing a sample writes outlives its directory:

* C++: a precompiled header of the headers CodeGeeX's harness puts before every program, and mold
  as the linker where it is installed (falling back to the plain header and GNU ld);
* JavaScript: the npm package ``js-md5`` (one task requires it), exposed through NODE_PATH;
* Go: a module cache holding testify (fetched once from the Go module proxy, so later runs are
  offline), and the standard and testify packages compiled once without DWARF with an importcfg
  naming them: each sample is compiled and linked against them with ``go tool compile/link``
  (falling back to ``go test -c`` with a build cache of the sample's own);
* Rust: the crates every declaration imports (rand, regex, md5; pinned versions from crates.io)
  built once with cargo into rlibs keyed by the rustc version, then each sample is one
  ``rustc`` call linking against them and against the toolchain's shared std (later runs are
  offline).

Caches are built outside the sandbox (our own fixed inputs, the only step that uses the
network) into a temporary directory and renamed into place, so concurrent processes are safe.
Where a faster path is not usable here, the slower one gives the same program: the speed-ups
never change a verdict (tests/test_humanevalx_native.py compares them sample by sample).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from abc import ABC, abstractmethod
from dataclasses import replace
from importlib import resources
from pathlib import Path

from codereval.errors import ToolchainMissing
from codereval.runners import toolchain_cache
from codereval.runners.program_source import (
    CPP_PROLOGUE,
    GO_PROLOGUE_FILE,
    GO_PROLOGUE_PACKAGE,
    GO_STD_PACKAGES,
    GO_TEST_FILE,
    GO_TESTMAIN_DEPS_FILE,
    GO_TESTMAIN_DEPS_VAR,
    GO_TESTMAIN_FILE,
    NATIVE_HOOK_CHECK,
    prologue_source,
)
from codereval.sandbox.base import ExecRequest, Limits, Mount

# The headers CodeGeeX's harness prepends to every C++ program, plus those some task
# declarations include (map, list, boost::any, assert), precompiled once.
CPP_HEADERS = (
    "stdlib.h", "algorithm", "math.h", "stdio.h", "vector", "string", "climits", "cstring",
    "iostream", "map", "list", "boost/any.hpp", "assert.h",
)
# -O0 as CodeGeeX (which gives no -O): optimisation changes what undefined behaviour does.
CPP_FLAGS = ("-std=c++17", "-O0", "-w")
CPP_LIBS = ("-lcrypto",)
CPP_HEADER = "humanevalx.h"
CPP_FAST_LINKER = ("-fuse-ld=mold",)
CPP_PROBE = "int main() { std::vector<std::string> v{\"a\"}; return v.size() != 1; }\n"
CPP_LINK_PROBE = (
    "#include <openssl/md5.h>\n#include <cstdio>\nint main() {\n"
    "    unsigned char out[MD5_DIGEST_LENGTH];\n"
    "    MD5(reinterpret_cast<const unsigned char*>(\"a\"), 1, out);\n"
    "    std::printf(\"%02x\\n\", out[0]);\n    return out[0] != 0x0c;\n}\n"
)
JS_MD5 = "js-md5@0.8.3"
TESTIFY = "github.com/stretchr/testify"
TESTIFY_VERSION = "v1.9.0"
# Every HumanEval-X Rust declaration starts with `use rand::Rng; use regex::Regex; use md5;`.
# rand before 0.8: the tests call the two-argument `gen_range(low, high)`.
RUST_CRATES = (("rand", "0.7.3"), ("regex", "1.11.1"), ("md5", "0.7.0"))
RUST_FLAGS = ("--edition", "2021", "--cfg", "test", "-C", "opt-level=0", "-A", "warnings")
RUST_PROBE = (
    "use rand::Rng;\nuse regex::Regex;\n\nfn main() {\n"
    '    let word = Regex::new("^a+$").unwrap().is_match("aa");\n'
    '    let hash = format!("{:x}", md5::compute(b"a"));\n'
    "    let roll = rand::thread_rng().gen_range(0, 10);\n"
    '    if !word || hash != "0cc175b9c0f1b6a831c399e269772661" || roll >= 10 {\n'
    "        std::process::exit(1);\n    }\n}\n"
)
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
    """g++ as CodeGeeX calls it (-O0), with the helper headers precompiled once and mold as the
    linker where it is installed. Both are only faster: a broken header cache is rebuilt, an
    unusable one or a missing mold falls back to the plain header and the default linker."""

    language = "cpp"

    def __init__(self, *, precompiled: bool = True, fast_linker: bool = True) -> None:
        # Both True but for the benchmark's "before" columns and the fallback tests.
        super().__init__()
        self.precompiled = precompiled
        self.fast_linker = fast_linker

    def _setup(self, cache_root: Path) -> None:
        self.gxx = _which("g++", hint="apt-get install g++")
        version = _version([self.gxx, "--version"])
        header = "".join(f"#include <{name}>\n" for name in CPP_HEADERS)
        key = _key(toolchain_cache.LAYOUT, version, *CPP_FLAGS, header)
        self.cache = cache_root / f"cpp-pch-{key}"
        self.linker = self._linker(cache_root) if self.fast_linker else ()
        if not self.precompiled:
            how = "no pch"
        elif self._pch_usable():
            how = "pch"
        else:
            toolchain_cache.set_aside(self.cache)
            how = "pch" if self._build_pch(header) and self._pch_usable() else "no pch"
        if how == "no pch":
            # The same header as text: the same program, compiled more slowly.
            self.cache = cache_root / f"cpp-header-{key}"
            if not (self.cache / CPP_HEADER).is_file():
                self.cache.parent.mkdir(parents=True, exist_ok=True)
                build = Path(tempfile.mkdtemp(prefix="cpp-header-", dir=self.cache.parent))
                (build / CPP_HEADER).write_text(header, encoding="utf-8")
                _publish(build, self.cache)
        self.prologue = self._prologue(cache_root, version)
        linker = "mold" if self.linker else "default linker"
        self.fingerprint = f"{version}; {how} {self.cache.name}; {linker}"

    def _prologue(self, cache_root: Path, version: str) -> Path:
        """Our prologue (program_source.CPP_PROLOGUE: takes the marker, holds main), compiled
        once; linked before each program."""
        source = prologue_source(CPP_PROLOGUE)
        cache = cache_root / f"cpp-prologue-{_key(toolchain_cache.LAYOUT, version, source)}"
        if not toolchain_cache.intact(cache):
            toolchain_cache.set_aside(cache)
            cache.parent.mkdir(parents=True, exist_ok=True)
            build = Path(tempfile.mkdtemp(prefix="cpp-prologue-", dir=cache.parent))
            (build / CPP_PROLOGUE).write_text(source, encoding="utf-8")
            done = subprocess.run(
                [self.gxx, "-std=c++17", "-O2", "-w", "-c", CPP_PROLOGUE, "-o", "prologue.o"],
                cwd=build, capture_output=True, text=True, timeout=300, check=False)
            (build / CPP_PROLOGUE).unlink()
            if done.returncode != 0:
                shutil.rmtree(build, ignore_errors=True)
                raise ToolchainMissing(
                    f"cannot compile codereval's C++ prologue ({done.stderr.strip()[-300:]})")
            toolchain_cache.seal(build)
            _publish(build, cache)
        return cache / "prologue.o"

    def _build_pch(self, header: str) -> bool:
        self.cache.parent.mkdir(parents=True, exist_ok=True)
        build = Path(tempfile.mkdtemp(prefix="cpp-pch-", dir=self.cache.parent))
        (build / CPP_HEADER).write_text(header, encoding="utf-8")
        done = subprocess.run(
            [self.gxx, *CPP_FLAGS, "-x", "c++-header", CPP_HEADER, "-o", f"{CPP_HEADER}.gch"],
            cwd=build, capture_output=True, text=True, timeout=300, check=False,
        )
        if done.returncode != 0:
            shutil.rmtree(build, ignore_errors=True)
            raise ToolchainMissing(
                f"cannot compile the C++ helper headers ({done.stderr.strip()[-300:]})",
                hint="apt-get install libboost-dev libssl-dev (scripts/setup-system.sh)",
            )
        toolchain_cache.seal(build)
        _publish(build, self.cache)
        return True

    def _pch_usable(self) -> bool:
        """Sealed, and g++ takes it: -Winvalid-pch as an error catches a header g++ would skip
        (another compiler build), which would only be slow, and the seal a damaged one, which
        would break every sample."""
        if not toolchain_cache.intact(self.cache):
            return False
        with tempfile.TemporaryDirectory(prefix="cpp-check-") as tmp:
            (Path(tmp) / "check.cpp").write_text(CPP_PROBE, encoding="utf-8")
            done = subprocess.run(
                [self.gxx, *CPP_FLAGS, "-Winvalid-pch", "-Werror=invalid-pch", "-include",
                 str(self.cache / CPP_HEADER), "-fsyntax-only", "check.cpp"],
                cwd=tmp, capture_output=True, timeout=300, check=False)
        return done.returncode == 0

    def _linker(self, cache_root: Path) -> tuple[str, ...]:
        """mold links a HumanEval-X program in about a third of GNU ld's time
        (bench/humanevalx_breakdown.py); used only when it links and runs a program that uses
        libcrypto here."""
        if shutil.which("mold") is None:
            return ()
        cache_root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="cpp-mold-", dir=cache_root) as tmp:
            (Path(tmp) / "check.cpp").write_text(CPP_LINK_PROBE, encoding="utf-8")
            try:
                built = subprocess.run(
                    [self.gxx, *CPP_FLAGS, *CPP_FAST_LINKER, "check.cpp", "-o", "check",
                     *CPP_LIBS], cwd=tmp, capture_output=True, timeout=300, check=False)
                ran = subprocess.run([str(Path(tmp) / "check")], capture_output=True,
                                     timeout=60, check=False)
            except (OSError, subprocess.TimeoutExpired):
                return ()
        return CPP_FAST_LINKER if built.returncode == 0 and ran.returncode == 0 else ()

    def build_argv(self, main: str) -> list[str]:
        """The compile and link of ``main`` into ``program``, our prologue first: its main calls
        the test's, and its start-up hook is the only one (checked after, NATIVE_HOOK_CHECK)."""
        return [self.gxx, *CPP_FLAGS, "-include", str(self.cache / CPP_HEADER),
                str(self.prologue), main, "-o", "program", *self.linker, *CPP_LIBS]

    def compile_request(self, workdir: Path, main: str, limits: Limits) -> ExecRequest:
        argv = ["/bin/sh", "-c", f"{shlex.join(self.build_argv(main))} && {NATIVE_HOOK_CHECK}"]
        return self._request(argv, workdir, compile_limits(limits), mounts=(
            Mount(source=self.cache, target=self.cache),
            Mount(source=self.prologue.parent, target=self.prologue.parent)))

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


# Without DWARF the packages every sample links are a quarter smaller, and the linker, which
# drops debug information anyway (-s -w), reads them in two thirds of the time.
GO_PACKAGE_FLAGS = ("-gcflags=all=-dwarf=false",)
# Takes testify's HTTP assertions out of a copy of its assert package (GoToolchain._lean_setup).
GO_LEAN_TOOL = "go/lean_testify.go"
# What the HTTP assertions are called (assert.HTTPSuccess, a.HTTPBodyContainsf, ...): a program
# that names none of them cannot call them.
_GO_MENTIONS_HTTP = re.compile(r"HTTP")
GO_MOD = f"module humanevalx\n\ngo 1.21\n\nrequire {TESTIFY} {TESTIFY_VERSION}\n"
GO_WARM_TEST = (
    'package main\n\nimport (\n    "testing"\n    "github.com/stretchr/testify/assert"\n)\n\n'
    "func TestWarm(t *testing.T) {\n    assert.Equal(t, 1, 1)\n}\n"
)


# What `go test` hands testing.MainStart: testdeps brings fuzzing (internal/fuzz, with go/parser
# and the FIPS crypto stack), CPU profiles (runtime/pprof, compress/gzip) and test logs into
# every test binary.
GO_STANDARD_DEPS = (
    'package main\n\nimport "testing/internal/testdeps"\n\n'
    f"var {GO_TESTMAIN_DEPS_VAR} = testdeps.TestDeps{{}}\n"
)
# The same interface without them, for a binary that is run with -test.v, -test.paniconexit0,
# -test.count and -test.timeout only (run_request): a sixth less for the linker to read. The
# interface is testing's own and unexported, so it can change with Go: GoToolchain checks that
# this compiles and runs once, and uses GO_STANDARD_DEPS where it does not.
GO_MINIMAL_DEPS = f"""package main

import (
    "errors"
    "internal/testlog"
    "io"
    "reflect"
    "regexp"
    "time"
)

type codereval_corpus = struct {{
    Parent     string
    Path       string
    Data       []byte
    Values     []any
    Generation int
    IsSeed     bool
}}

var codereval_unsupported = errors.New("not supported by codereval's test binaries")

type codereval_deps struct{{}}

func (codereval_deps) ImportPath() string {{ return "" }}
func (codereval_deps) ModulePath() string {{ return "" }}
func (codereval_deps) MatchString(pat, str string) (bool, error) {{
    return regexp.MatchString(pat, str)
}}
func (codereval_deps) SetPanicOnExit0(v bool) {{ testlog.SetPanicOnExit0(v) }}
func (codereval_deps) StartCPUProfile(io.Writer) error {{ return codereval_unsupported }}
func (codereval_deps) StopCPUProfile() {{}}
func (codereval_deps) StartTestLog(io.Writer) {{}}
func (codereval_deps) StopTestLog() error {{ return nil }}
func (codereval_deps) WriteProfileTo(string, io.Writer, int) error {{
    return codereval_unsupported
}}
func (codereval_deps) CoordinateFuzzing(time.Duration, int64, time.Duration, int64, int,
    []codereval_corpus, []reflect.Type, string, string) error {{
    return codereval_unsupported
}}
func (codereval_deps) RunFuzzWorker(func(codereval_corpus) error) error {{
    return codereval_unsupported
}}
func (codereval_deps) ReadCorpus(string, []reflect.Type) ([]codereval_corpus, error) {{
    return nil, nil
}}
func (codereval_deps) CheckCorpus([]any, []reflect.Type) error {{ return nil }}
func (codereval_deps) ResetCoverage() {{}}
func (codereval_deps) SnapshotCoverage() {{}}
func (codereval_deps) InitRuntimeCoverage() (string, func(string, string) (string, error),
    func() float64) {{
    return "", nil, nil
}}

var {GO_TESTMAIN_DEPS_VAR} = codereval_deps{{}}
"""


class GoToolchain(Toolchain):
    language = "go"

    def __init__(self, *, lean_packages: bool = True, direct: bool = True,
                 lean_testify: bool = True, minimal_deps: bool = True) -> None:
        # All True but for the benchmark's "before" columns and the fallback tests.
        super().__init__()
        self.package_flags = GO_PACKAGE_FLAGS if lean_packages else ()
        self.try_direct = direct
        self.try_lean_testify = lean_testify
        self.try_minimal_deps = minimal_deps
        self.deps = GO_STANDARD_DEPS

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
        # The prologue package is among the packages: a change to it is a new set.
        self.prologue_key = _key(prologue_source("codereval_prologue.go"))
        self.packages = self.root / (f"packages-{_key(toolchain_cache.LAYOUT, *self.package_flags)}"
                                     f"-{self.prologue_key}")
        if not toolchain_cache.intact(self.packages):
            toolchain_cache.set_aside(self.packages)
            self._export_packages(self.packages, lean_testify=False)
        self.importcfg = self._importcfg(self.packages)
        self.lean_packages: Path | None = None
        self.lean_importcfg = ""
        if self.try_direct and self.try_lean_testify:
            self._lean_setup()
        # The direct compile/link path relies on testing.MainStart, which Go does not promise to
        # keep: checked once on a known program, else every sample goes through `go test -c`.
        self.direct = False
        if self.try_direct:
            choices = [GO_MINIMAL_DEPS] if self.try_minimal_deps else []
            for deps in [*choices, GO_STANDARD_DEPS]:
                self.deps = deps
                if self._direct_works(self.importcfg):
                    self.direct = True
                    break
        if self.direct and self.lean_packages is not None and not self._direct_works(
                self.lean_importcfg):
            self.lean_packages, self.lean_importcfg = None, ""
        if not self.direct:
            self.seed = self._seed_build_cache()
        how = "compile+link" if self.direct else "go test -c"
        packages = "packages without dwarf" if self.package_flags else "packages with dwarf"
        lean = "; testify without http" if self.direct and self.lean_packages else ""
        if self.direct and self.deps == GO_MINIMAL_DEPS:
            lean += "; minimal test deps"
        self.fingerprint = f"{version}; testify {TESTIFY_VERSION}; {how}; {packages}{lean}"

    @staticmethod
    def _importcfg(packages: Path) -> str:
        return "".join(
            f"{line.partition('=')[0]}={packages / line.partition('=')[2]}\n"
            for line in (packages / "importcfg").read_text(encoding="utf-8").splitlines()
            if line.strip())

    def _lean_setup(self) -> None:
        """Packages whose testify has no HTTP assertions (go/lean_testify.go), so net/http and
        the ~80 packages under it are not in every link: the linker reads 129 packages instead
        of 212, about 40% less of its CPU time. Only a program that mentions ``HTTP`` could
        call what is missing; it is linked against the full packages. Where the lean packages
        cannot be built, every program uses the full ones."""
        tool = resources.files("codereval.runners").joinpath(GO_LEAN_TOOL).read_bytes()
        lean = self.root / (f"packages-lean-{_key(toolchain_cache.LAYOUT, *self.package_flags)}"
                            f"-{hashlib.sha256(tool).hexdigest()[:12]}-{self.prologue_key}")
        if not toolchain_cache.intact(lean):
            toolchain_cache.set_aside(lean)
            try:
                self._export_packages(lean, lean_testify=True)
            except ToolchainMissing:
                return
        self.lean_packages = lean
        self.lean_importcfg = self._importcfg(lean)

    def packages_for(self, source: str) -> tuple[Path, str]:
        """The package directory and importcfg to compile and link ``source`` against."""
        if self.lean_packages is not None and not _GO_MENTIONS_HTTP.search(source):
            return self.lean_packages, self.lean_importcfg
        return self.packages, self.importcfg

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

    def _export_packages(self, target: Path, *, lean_testify: bool) -> None:
        """Compiled testify and standard packages, copied out of the build cache (which Go may
        trim) with an importcfg naming them: the input of the direct compile and link."""
        self.root.mkdir(parents=True, exist_ok=True)
        build = Path(tempfile.mkdtemp(prefix="packages-", dir=self.root))
        self._write_deps_package(build)
        env = base_env(build) | self._env(offline=True)
        if lean_testify:
            env |= self._lean_testify_module(build, env)
        done = subprocess.run(
            [self.go, "list", "-export", "-deps", "-test", *self.package_flags, "-f",
             "{{if .Export}}{{.ImportPath}}={{.Export}}{{end}}", "."],
            cwd=build, env=env, capture_output=True, text=True, timeout=600, check=False,
        )
        if done.returncode != 0:
            shutil.rmtree(build, ignore_errors=True)
            raise ToolchainMissing(f"cannot list Go packages ({done.stderr.strip()[-300:]})")
        (build / "a").mkdir()
        lines = []
        for index, line in enumerate(done.stdout.splitlines()):
            path, _, export = line.partition("=")
            if not export or (path.startswith("humanevalx") and path != GO_PROLOGUE_PACKAGE):
                continue
            shutil.copyfile(export, build / "a" / f"{index}.a")
            # Relative to the cache, so a sealed cache can be moved or copied (tests do).
            lines.append(f"packagefile {path}=a/{index}.a\n")
        for name in ("go.mod", "go.sum", "deps_test.go", "tmp", "testify",
                     GO_PROLOGUE_FILE.partition("/")[0]):
            leftover = build / name
            if leftover.is_dir():
                shutil.rmtree(leftover)
            elif leftover.exists():
                leftover.unlink()
        (build / "importcfg").write_text("".join(lines), encoding="utf-8")
        toolchain_cache.seal(build)
        _publish(build, target)

    def _lean_testify_module(self, build: Path, env: dict[str, str]) -> dict[str, str]:
        """A copy of the testify module beside the deps package, with the HTTP assertions taken
        out of assert by go/lean_testify.go, and go.mod pointing at it. Returns what the
        ``go list`` that compiles it needs (the module cache as an offline proxy: the copy's
        go.mod brings module requirements the template's go.sum does not list)."""
        upstream = self.modcache / f"{TESTIFY}@{TESTIFY_VERSION}"
        shutil.copytree(upstream, build / "testify")
        for path in (build / "testify").rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        tool = build / "tmp" / "lean_testify.go"
        tool.write_bytes(resources.files("codereval.runners").joinpath(GO_LEAN_TOOL).read_bytes())
        # Outside the module (its own directory, no go.mod): the tool needs only the standard
        # library; it gets a build cache of its own, thrown away with the build directory.
        done = subprocess.run(
            [self.go, "run", tool.name, str(build / "testify" / "assert")], cwd=tool.parent,
            env=env | {"GOCACHE": str(build / "tmp" / "gocache"), "GOFLAGS": ""},
            capture_output=True, text=True, timeout=600, check=False)
        if done.returncode != 0:
            shutil.rmtree(build, ignore_errors=True)
            raise ToolchainMissing(f"cannot take the HTTP assertions out of testify "
                                   f"({(done.stdout + done.stderr).strip()[-300:]})")
        with (build / "go.mod").open("a", encoding="utf-8") as handle:
            handle.write(f"\nreplace {TESTIFY} => ./testify\n")
        return {"GOFLAGS": "-mod=mod", "GOPROXY": f"file://{self.modcache}/cache/download"}

    def _write_deps_package(self, directory: Path) -> None:
        """A package importing everything a HumanEval-X Go program may: building it compiles
        the standard and testify packages a sample can need."""
        for name in ("go.mod", "go.sum"):
            shutil.copyfile(self.template / name, directory / name)
        wanted = ["testing", "fmt", "os", f"{TESTIFY}/assert", *GO_STD_PACKAGES.values(),
                  GO_PROLOGUE_PACKAGE]
        imports = "".join(f'    _ "{path}"\n' for path in wanted)
        prologue = directory / GO_PROLOGUE_FILE
        prologue.parent.mkdir(parents=True, exist_ok=True)
        prologue.write_text(prologue_source("codereval_prologue.go"), encoding="utf-8")
        (directory / "deps_test.go").write_text(f"package main\n\nimport (\n{imports})\n")

    def _seed_build_cache(self) -> Path:
        """For the ``go test -c`` fallback: a build cache warm with every package a sample may
        import, sealed. Go writes to its build cache while reading it, so each sample gets a copy
        of its own (about 100 MB, copied in a fraction of a second, instead of the minutes a
        cold cache takes)."""
        seed = self.root / f"gocache-{_key(toolchain_cache.LAYOUT)}-{self.prologue_key}"
        if toolchain_cache.intact(seed):
            return seed
        toolchain_cache.set_aside(seed)
        build = Path(tempfile.mkdtemp(prefix="gocache-", dir=self.root))
        work = build / "work"
        work.mkdir()
        self._write_deps_package(work)
        env = base_env(work) | self._env(offline=True) | {"GOCACHE": str(build / "cache")}
        done = subprocess.run(
            [self.go, "test", "-c", "-vet=off", "-ldflags=-s -w", "-o", "deps.test", "."],
            cwd=work, env=env, capture_output=True, text=True, timeout=1800, check=False)
        shutil.rmtree(work, ignore_errors=True)
        if done.returncode != 0:
            shutil.rmtree(build, ignore_errors=True)
            raise ToolchainMissing(f"cannot warm a Go build cache ({done.stderr.strip()[-300:]})")
        toolchain_cache.seal(build)
        _publish(build, seed)
        return seed

    def _direct_script(self, workdir: Path, importcfg: str) -> str:
        (workdir / "importcfg").write_text(
            f"{importcfg}packagefile humanevalx={workdir / 'pkg.a'}\n", encoding="utf-8")
        deps = workdir / GO_TESTMAIN_DEPS_FILE
        deps.parent.mkdir(parents=True, exist_ok=True)
        deps.write_text(self.deps, encoding="utf-8")
        tool = self.tooldir
        return (
            "set -e\n"
            f'"{tool}/compile" -p humanevalx -lang=go1.21 -complete -dwarf=false '
            f"-importcfg importcfg -pack -o pkg.a {GO_TEST_FILE}\n"
            f'"{tool}/compile" -p main -complete -dwarf=false -importcfg importcfg -pack -o main.a '
            f"{GO_TESTMAIN_FILE} {GO_TESTMAIN_DEPS_FILE}\n"
            f'"{tool}/link" -s -w -importcfg importcfg -buildmode=exe -o program.test main.a\n'
        )

    def _direct_works(self, importcfg: str) -> bool:
        from codereval.runners.program_source import go_testmain

        with tempfile.TemporaryDirectory(prefix="go-check-", dir=self.root) as tmp:
            work = Path(tmp)
            (work / GO_TEST_FILE).write_text(GO_WARM_TEST, encoding="utf-8")
            (work / GO_TESTMAIN_FILE).parent.mkdir()
            (work / GO_TESTMAIN_FILE).write_text(go_testmain(["TestWarm"]))
            env = base_env(work) | self._env(offline=True) | {"GOROOT": str(self.goroot)}
            try:
                script = self._direct_script(work, importcfg)
                built = subprocess.run(["/bin/sh", "-c", script], cwd=work,
                                       env=env, capture_output=True, timeout=120, check=False)
                ran = subprocess.run([str(work / "program.test")], cwd=work, env=env,
                                     input="CHECKED\n", capture_output=True, text=True,
                                     timeout=60, check=False)
            except (OSError, subprocess.TimeoutExpired):
                return False
            return built.returncode == 0 and ran.returncode == 0 and "CHECKED" in ran.stdout

    def compile_request(self, workdir: Path, main: str, limits: Limits) -> ExecRequest:
        env = self._env(offline=True) | {"GOROOT": str(self.goroot)}
        if self.direct:
            source = (workdir / main).read_text(encoding="utf-8", errors="replace")
            packages, importcfg = self.packages_for(source)
            argv = ["/bin/sh", "-c", self._direct_script(workdir, importcfg)]
            return self._request(argv, workdir, compile_limits(limits), env=env, mounts=(
                Mount(source=self.goroot, target=self.goroot),
                Mount(source=packages, target=packages)))
        mounts: tuple[Mount, ...] = (
            Mount(source=self.goroot, target=self.goroot),
            Mount(source=self.packages, target=self.packages),
        )
        for name in ("go.mod", "go.sum"):
            shutil.copyfile(self.template / name, workdir / name)
        argv = [self.go, "test", "-c", "-vet=off", "-ldflags=-s -w", "-o", "program.test", "."]
        mounts += (Mount(source=self.modcache, target=self.modcache),)
        # Go writes its build cache as it reads it, so no sample may share one: each gets a
        # private copy of the sealed warm cache (only when the direct path failed its check).
        private = workdir / "tmp" / "gocache"
        shutil.copytree(self.seed / "cache", private)
        env["GOCACHE"] = str(private)
        return self._request(argv, workdir, compile_limits(limits), env=env, mounts=mounts)

    def run_request(self, workdir: Path, main: str, limits: Limits) -> ExecRequest:
        argv = [str(workdir / "program.test"), "-test.v", "-test.paniconexit0",
                "-test.count=1", f"-test.timeout={int(limits.wall_time) + 5}s"]
        return self._request(argv, workdir, limits)


class RustToolchain(Toolchain):
    language = "rust"

    def __init__(self, *, dynamic_std: bool = True) -> None:
        # True but for the benchmark's "before" columns and the fallback tests.
        super().__init__()
        self.dynamic_std = dynamic_std

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
        self.cache = cache_root / f"rust-{_key(toolchain_cache.LAYOUT, version, *pins)}"
        if not toolchain_cache.intact(self.cache):
            toolchain_cache.set_aside(self.cache)
            self._build(version)
        self.externs = [
            f"{line.partition('=')[0]}={self.cache / line.partition('=')[2].strip()}"
            for line in (self.cache / "externs").read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
        self.libdir = Path(_version([self.rustc, "--print", "target-libdir"]))
        self.link = self._dynamic_std(cache_root) if self.dynamic_std else ()
        how = "std dynamic" if self.link else "std static"
        self.fingerprint = f"{version}; {', '.join(pins)}; {how}"

    def _argv(self, main: str, link: tuple[str, ...]) -> list[str]:
        argv = [self.rustc, *RUST_FLAGS, *link]
        for extern in self.externs:
            argv += ["--extern", extern]
        return [*argv, "-L", f"dependency={self.cache / 'deps'}", main, "-o", "program"]

    def _dynamic_std(self, cache_root: Path) -> tuple[str, ...]:
        """Linking std as a shared library (rustc -C prefer-dynamic) halves the link, the larger
        part of a sample's compile; the program finds it by rpath in the toolchain's own lib
        directory, mounted read-only when it runs. Used when a program using the three crates
        builds and runs that way here."""
        link = ("-C", "prefer-dynamic", "-C", f"link-arg=-Wl,-rpath,{self.libdir}")
        if not self.libdir.is_dir():
            return ()
        cache_root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="rust-check-", dir=cache_root) as tmp:
            (Path(tmp) / "main.rs").write_text(RUST_PROBE, encoding="utf-8")
            try:
                built = subprocess.run(self._argv("main.rs", link), cwd=tmp,
                                       capture_output=True, timeout=300, check=False)
                ran = subprocess.run([str(Path(tmp) / "program")], capture_output=True,
                                     timeout=60, check=False, env=base_env(Path(tmp)))
            except (OSError, subprocess.TimeoutExpired):
                return ()
        return link if built.returncode == 0 and ran.returncode == 0 else ()

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
            # Relative to the cache, so a sealed cache can be moved or copied (tests do).
            "".join(f"{name}=deps/{found[name].name}\n" for name in sorted(found)),
            encoding="utf-8")
        toolchain_cache.seal(build)
        _publish(build, self.cache)

    def compile_request(self, workdir: Path, main: str, limits: Limits) -> ExecRequest:
        mounts = (Mount(source=self.sysroot, target=self.sysroot),
                  Mount(source=self.cache, target=self.cache))
        build = shlex.join(self._argv(main, self.link))
        argv = ["/bin/sh", "-c", f"{build} && {NATIVE_HOOK_CHECK}"]
        return self._request(argv, workdir, compile_limits(limits), mounts=mounts)

    def run_request(self, workdir: Path, main: str, limits: Limits) -> ExecRequest:
        mounts = (Mount(source=self.libdir, target=self.libdir),) if self.link else ()
        return self._request([str(workdir / "program")], workdir, limits,
                             env={"RUST_BACKTRACE": "0"}, mounts=mounts)


TOOLCHAINS: dict[str, type[Toolchain]] = {
    "python": PythonToolchain,
    "cpp": CppToolchain,
    "java": JavaToolchain,
    "js": JsToolchain,
    "go": GoToolchain,
    "rust": RustToolchain,
}

__all__ = ["TOOLCHAINS", "Toolchain", "compile_limits"]
