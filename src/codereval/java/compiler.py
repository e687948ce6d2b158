"""Compile Java sources: in a warm compiler service (``WarmJavac``) or a javac process each time.

Both take the sources as text keyed by the path javac should print (``"pkg/Foo.java"``), write
classes into ``out_dir`` and return javac's own printed diagnostics, so a verdict and its message
do not depend on which compiler ran. Compilation runs outside the sandbox: javac reads the code
but never executes it (annotation processors are off unless asked for).
"""

from __future__ import annotations

import os
import queue
import select
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from codereval.java.artifacts import ECJ, ArtifactUnavailable, ensure_artifact
from codereval.java.build import SERVICE_MAIN, ensure_built
from codereval.java.toolchain import JAVA_LOCALE_FLAGS, find_jdk, tool_env

DEFAULT_OPTIONS: tuple[str, ...] = ("-proc:none", "-g")
# C1 only: an evaluation's compiles mostly run while C2 would still be compiling javac itself.
# HumanEval-X's 164 Java programs through one service cost 4.4 s of CPU this way against 8.9 s
# with C2 (whose compiler threads run beside the compiles); per compile C1 stays cheaper in CPU
# after a thousand compiles too (15 ms against 18), and only a little slower in wall time.
SERVICE_JVM_FLAGS: tuple[str, ...] = ("-Xmx768m", "-XX:+UseSerialGC", "-Xss4m",
                                      "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData")


@dataclass(frozen=True, kw_only=True)
class CompileResult:
    ok: bool
    # Exactly what javac printed ("pkg/Foo.java:3: error: ..." + source line + caret, "1 error").
    diagnostics: str
    wall_time: float = 0.0
    timed_out: bool = False
    # Set when the compiler itself could not run (not the code's fault): an infra_error.
    infra_error: str = ""
    backend: str = ""


class JavaCompiler(Protocol):
    def compile(
        self,
        sources: Mapping[str, str],
        *,
        classpath: Sequence[Path],
        out_dir: Path,
        options: Sequence[str] = DEFAULT_OPTIONS,
        timeout: float = 120.0,
    ) -> CompileResult: ...

    def close(self) -> None: ...


class PlainJavac:
    """One ``javac`` process per compile: the original platform's way, and the fallback."""

    name = "javac"

    def compile(
        self,
        sources: Mapping[str, str],
        *,
        classpath: Sequence[Path],
        out_dir: Path,
        options: Sequence[str] = DEFAULT_OPTIONS,
        timeout: float = 120.0,
    ) -> CompileResult:
        start = time.monotonic()
        try:
            command = self._command()
        except ArtifactUnavailable as exc:
            return CompileResult(ok=False, diagnostics="", infra_error=str(exc),
                                 backend=self.name, wall_time=time.monotonic() - start)
        out_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="javac-src-", dir=out_dir.parent) as tmp:
            src_root = Path(tmp)
            for name, text in sources.items():
                path = src_root / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            argv = [*command, "-encoding", "UTF-8", *options, "-d",
                    str(out_dir.resolve())]
            if classpath:
                argv += ["-cp", os.pathsep.join(str(p) for p in classpath)]
            argv += list(sources)
            try:
                done = subprocess.run(argv, cwd=src_root, capture_output=True, timeout=timeout,
                                      env=tool_env(), check=False)
            except subprocess.TimeoutExpired:
                return CompileResult(ok=False, diagnostics="", timed_out=True, backend=self.name,
                                     wall_time=time.monotonic() - start)
            except OSError as exc:
                return CompileResult(ok=False, diagnostics="", infra_error=f"{self.name}: {exc}",
                                     backend=self.name, wall_time=time.monotonic() - start)
        printed = (done.stdout + done.stderr).decode("utf-8", "replace")
        return CompileResult(ok=done.returncode == 0, diagnostics=printed, backend=self.name,
                             wall_time=time.monotonic() - start)

    def close(self) -> None:
        return None

    def _command(self) -> list[str]:
        return [str(find_jdk().javac), *(f"-J{flag}" for flag in JAVA_LOCALE_FLAGS)]


class PlainEcj(PlainJavac):
    """Eclipse's compiler, one process per compile: for a project whose sources only it can
    compile (older than Java 5, which Java 17's javac no longer accepts), so that a sample
    compiles as its project did."""

    name = "ecj"

    def _command(self) -> list[str]:
        return [str(find_jdk().java), *JAVA_LOCALE_FLAGS, "-jar", str(ensure_artifact(ECJ))]


class ServiceDied(Exception):
    """The compiler service exited or broke the protocol."""


def _frame(key: str, value: str) -> bytes:
    data = value.encode("utf-8")
    return f"{key} {len(data)}\n".encode() + data


class _Service:
    """One compiler JVM, used by one thread at a time (the pool hands it out)."""

    def __init__(self) -> None:
        tools = ensure_built()
        # Kept open for the service's life and closed in stop(): read when the service dies.
        self._stderr: IO[bytes] = tempfile.TemporaryFile(  # noqa: SIM115
            prefix="codereval-javac-service-"
        )
        argv = [str(find_jdk().java), *JAVA_LOCALE_FLAGS, *SERVICE_JVM_FLAGS,
                "-cp", str(tools.service), SERVICE_MAIN]
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self._stderr, env=tool_env())
        self._buffer = b""
        self.compiles = 0

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def stderr_tail(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")[-1500:]

    def request(self, payload: bytes, *, timeout: float) -> tuple[bool, str]:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(payload)
            stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise ServiceDied(f"write failed: {exc}") from None
        deadline = time.monotonic() + timeout
        fields: dict[str, str] = {}
        while "END" not in fields:
            key, value = self._read_field(stdout, deadline)
            fields[key] = value
        self.compiles += 1
        return fields.get("OK") == "1", fields.get("DIAG", "")

    def _read_field(self, stdout: IO[bytes], deadline: float) -> tuple[str, str]:
        while b"\n" not in self._buffer:
            self._fill(stdout, deadline)
        header, _, rest = self._buffer.partition(b"\n")
        key, _, length_text = header.decode("utf-8", "replace").partition(" ")
        try:
            length = int(length_text)
        except ValueError:
            raise ServiceDied(f"bad answer header {header[:80]!r}") from None
        self._buffer = rest
        while len(self._buffer) < length:
            self._fill(stdout, deadline)
        value, self._buffer = self._buffer[:length], self._buffer[length:]
        return key, value.decode("utf-8", "replace")

    def _fill(self, stdout: IO[bytes], deadline: float) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        ready, _, _ = select.select([stdout], [], [], remaining)
        if not ready:
            raise TimeoutError
        chunk = os.read(stdout.fileno(), 1 << 16)
        if not chunk:
            raise ServiceDied("the compiler service exited")
        self._buffer += chunk

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        self._stderr.close()


def _stop_all(services: list[_Service]) -> None:
    for service in services:
        service.stop()


class WarmJavac:
    """Thread-safe client of a small pool of warm compiler JVMs.

    Each call borrows one service; a service that dies or hangs is killed and replaced, and a
    call whose service cannot be (re)started falls back to a ``javac`` process.
    """

    name = "warm"

    def __init__(self, *, pool_size: int = 1) -> None:
        if pool_size < 1:
            raise ValueError("pool_size must be at least 1")
        self.pool_size = pool_size
        self._idle: queue.LifoQueue[_Service | None] = queue.LifoQueue()
        for _ in range(pool_size):
            self._idle.put(None)  # started lazily, on first use
        self._all: list[_Service] = []
        self._lock = threading.Lock()
        self._fallback = PlainJavac()
        self.restarts = 0
        self.fallbacks = 0
        self._finalizer = weakref.finalize(self, _stop_all, self._all)

    def _start(self) -> _Service:
        service = _Service()
        with self._lock:
            self._all.append(service)
        return service

    def _discard(self, service: _Service) -> None:
        service.stop()
        with self._lock:
            if service in self._all:
                self._all.remove(service)
            self.restarts += 1

    def warm_up(self) -> None:
        """Start every service and load its compiler classes now, so no sample pays for it."""
        taken = [self._idle.get() for _ in range(self.pool_size)]
        ready: list[_Service | None] = []
        with tempfile.TemporaryDirectory(prefix="codereval-warm-") as tmp:
            payload = b"".join([
                _frame("OUT", tmp), _frame("CP", ""), _frame("OPT", "-proc:none"),
                _frame("SRC", "Warm.java"), _frame("TXT", "class Warm { int f() { return 1; } }"),
                _frame("END", ""),
            ])
            for service in taken:
                try:
                    if service is None or not service.alive:
                        service = self._start()
                    service.request(payload, timeout=120.0)
                    ready.append(service)
                except (ServiceDied, TimeoutError, OSError):
                    # Not fatal here: the slot starts a fresh service on its first compile.
                    if service is not None:
                        self._discard(service)
                    ready.append(None)
        for slot in ready:
            self._idle.put(slot)

    def compile(
        self,
        sources: Mapping[str, str],
        *,
        classpath: Sequence[Path],
        out_dir: Path,
        options: Sequence[str] = DEFAULT_OPTIONS,
        timeout: float = 120.0,
    ) -> CompileResult:
        start = time.monotonic()
        out_dir.mkdir(parents=True, exist_ok=True)
        payload = b"".join([
            _frame("OUT", str(out_dir.resolve())),
            _frame("CP", os.pathsep.join(str(p) for p in classpath)),
            _frame("OPT", "\n".join(["-encoding", "UTF-8", *options])),
            *(_frame("SRC", name) + _frame("TXT", text) for name, text in sources.items()),
            _frame("END", ""),
        ])
        problem = ""
        for _attempt in range(2):
            service = self._idle.get()
            try:
                if service is None or not service.alive:
                    if service is not None:
                        self._discard(service)
                    service = self._start()
                ok, diagnostics = service.request(payload, timeout=timeout)
            except TimeoutError:
                # A compile that hangs (pathological generics) costs its service: kill, restart.
                if service is not None:
                    self._discard(service)
                self._idle.put(None)
                return CompileResult(ok=False, diagnostics="", timed_out=True, backend=self.name,
                                     wall_time=time.monotonic() - start)
            except (ServiceDied, OSError) as exc:
                problem = f"{exc}: {service.stderr_tail() if service else ''}".strip()
                if service is not None:
                    self._discard(service)
                self._idle.put(None)
                continue
            self._idle.put(service)
            return CompileResult(ok=ok, diagnostics=diagnostics, backend=self.name,
                                 wall_time=time.monotonic() - start)
        with self._lock:
            self.fallbacks += 1
        result = self._fallback.compile(sources, classpath=classpath, out_dir=out_dir,
                                        options=options, timeout=timeout)
        note = f"warm compiler failed twice ({problem[-300:]}); used javac"
        return CompileResult(ok=result.ok, diagnostics=result.diagnostics,
                             timed_out=result.timed_out, infra_error=result.infra_error,
                             backend=f"{self._fallback.name} ({note})",
                             wall_time=time.monotonic() - start)

    def close(self) -> None:
        with self._lock:
            services = list(self._all)
            self._all.clear()
        _stop_all(services)
