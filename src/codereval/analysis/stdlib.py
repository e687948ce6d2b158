"""What the language and its environment provide: built-ins, standard library, installed packages.

Python: the running interpreter's ``sys.stdlib_module_names`` and the installed distributions
(``importlib.metadata.packages_distributions``), or the same facts read from another interpreter
(a project environment's ``--python``). Java: the JDK's package prefixes and the ``java.lang``
types a source file may use without importing them.
"""

from __future__ import annotations

import builtins
import json
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path

from codereval.errors import UserError

_PROBE = """
import importlib.metadata as m, json, sys
names = getattr(sys, "stdlib_module_names", None)
print(json.dumps({
    "stdlib": sorted(names) if names is not None else None,
    "builtins": sorted(dir(__builtins__)) if not isinstance(__builtins__, dict)
        else sorted(__builtins__),
    "dists": {k: sorted(set(v)) for k, v in m.packages_distributions().items()},
    "version": sys.version.split()[0],
}))
"""


@dataclass(frozen=True)
class PythonEnvironment:
    """The modules an interpreter can import without the project."""

    description: str
    stdlib: frozenset[str]
    builtins: frozenset[str]
    # top-level import name -> the distributions that provide it
    distributions: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def is_stdlib(self, module: str) -> bool:
        return module.split(".")[0] in self.stdlib

    def distribution_of(self, module: str) -> tuple[str, ...]:
        return self.distributions.get(module.split(".")[0], ())


@cache
def current_python() -> PythonEnvironment:
    """The environment of the interpreter running codereval."""
    return PythonEnvironment(
        description=f"python {sys.version.split()[0]} ({sys.executable})",
        stdlib=frozenset(sys.stdlib_module_names),
        builtins=frozenset(dir(builtins)),
        distributions={
            k: tuple(sorted(set(v))) for k, v in metadata.packages_distributions().items()
        },
    )


def python_environment(python: Path) -> PythonEnvironment:
    """The environment of another interpreter (a project's venv), asked in a subprocess."""
    if not python.exists():
        raise UserError(
            f"python interpreter not found: {python}", hint="pass --python PATH/bin/python"
        )
    try:
        done = subprocess.run(
            [str(python), "-I", "-c", _PROBE],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except OSError as exc:
        raise UserError(f"cannot run {python}: {exc.strerror}") from exc
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise UserError(f"{python} failed to report its packages: {last}")
    facts = json.loads(done.stdout)
    own = current_python()
    stdlib = frozenset(facts["stdlib"]) if facts["stdlib"] is not None else own.stdlib
    return PythonEnvironment(
        description=f"python {facts['version']} ({python})",
        stdlib=stdlib,
        builtins=frozenset(facts["builtins"]),
        distributions={k: tuple(v) for k, v in facts["dists"].items()},
    )


# ----------------------------------------------------------------------------- Java

# Packages shipped with the JDK (java.se and jdk.* modules). A type from one of them is
# standard library; java.lang types need no import and count as built-ins.
JDK_PACKAGE_PREFIXES: tuple[str, ...] = (
    "java.",
    "javax.",
    "jdk.",
    "sun.",
    "com.sun.",
    "org.w3c.dom",
    "org.xml.sax",
    "org.ietf.jgss",
)


def is_jdk_package(name: str) -> bool:
    return any(name == p.rstrip(".") or name.startswith(p) for p in JDK_PACKAGE_PREFIXES)


# The public top-level types of java.lang (JDK 17), which every Java file sees unimported.
JAVA_LANG_TYPES: frozenset[str] = frozenset(
    [
        "AbstractMethodError",
        "Appendable",
        "ArithmeticException",
        "ArrayIndexOutOfBoundsException",
        "ArrayStoreException",
        "AssertionError",
        "AutoCloseable",
        "Boolean",
        "BootstrapMethodError",
        "Byte",
        "CharSequence",
        "Character",
        "Class",
        "ClassCastException",
        "ClassCircularityError",
        "ClassFormatError",
        "ClassLoader",
        "ClassNotFoundException",
        "ClassValue",
        "CloneNotSupportedException",
        "Cloneable",
        "Comparable",
        "Deprecated",
        "Double",
        "Enum",
        "EnumConstantNotPresentException",
        "Error",
        "Exception",
        "ExceptionInInitializerError",
        "Float",
        "FunctionalInterface",
        "IllegalAccessError",
        "IllegalAccessException",
        "IllegalArgumentException",
        "IllegalCallerException",
        "IllegalMonitorStateException",
        "IllegalStateException",
        "IllegalThreadStateException",
        "IncompatibleClassChangeError",
        "IndexOutOfBoundsException",
        "InheritableThreadLocal",
        "InstantiationError",
        "InstantiationException",
        "Integer",
        "InternalError",
        "InterruptedException",
        "Iterable",
        "LayerInstantiationException",
        "LinkageError",
        "Long",
        "Math",
        "MatchException",
        "Module",
        "ModuleLayer",
        "NegativeArraySizeException",
        "NoClassDefFoundError",
        "NoSuchFieldError",
        "NoSuchFieldException",
        "NoSuchMethodError",
        "NoSuchMethodException",
        "NullPointerException",
        "Number",
        "NumberFormatException",
        "Object",
        "OutOfMemoryError",
        "Override",
        "Package",
        "Process",
        "ProcessBuilder",
        "ProcessHandle",
        "Readable",
        "Record",
        "ReflectiveOperationException",
        "Runnable",
        "Runtime",
        "RuntimeException",
        "RuntimePermission",
        "SafeVarargs",
        "SecurityException",
        "SecurityManager",
        "Short",
        "StackOverflowError",
        "StackTraceElement",
        "StackWalker",
        "StrictMath",
        "String",
        "StringBuffer",
        "StringBuilder",
        "StringIndexOutOfBoundsException",
        "SuppressWarnings",
        "System",
        "Thread",
        "ThreadDeath",
        "ThreadGroup",
        "ThreadLocal",
        "Throwable",
        "TypeNotPresentException",
        "UnknownError",
        "UnsatisfiedLinkError",
        "UnsupportedClassVersionError",
        "UnsupportedOperationException",
        "VerifyError",
        "VirtualMachineError",
        "Void",
    ]
)
