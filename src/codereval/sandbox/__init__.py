"""Sandboxes: how untrusted code is isolated. Backends are imported only when chosen."""

from __future__ import annotations

import importlib

from codereval.errors import UserError
from codereval.sandbox.base import ExecRequest, ExecResult, Limits, Mount, Sandbox

# name -> "module:Class". "auto" picks the strongest that works on this machine.
SANDBOXES: dict[str, str] = {
    "bwrap": "codereval.sandbox.bwrap:BwrapSandbox",
    "rlimit": "codereval.sandbox.rlimit:RlimitSandbox",
    "none": "codereval.sandbox.none:NoSandbox",
}
AUTO_ORDER = ("bwrap", "rlimit")


def sandbox_class(name: str) -> type[Sandbox]:
    try:
        target = SANDBOXES[name]
    except KeyError:
        raise UserError(
            f"unknown sandbox {name!r}", hint=f"choose one of: auto, {', '.join(SANDBOXES)}"
        ) from None
    module_name, _, class_name = target.partition(":")
    cls: object = getattr(importlib.import_module(module_name), class_name)
    if not (isinstance(cls, type) and issubclass(cls, Sandbox)):
        raise TypeError(f"{target} is not a Sandbox")
    return cls


def get_sandbox(name: str = "auto") -> Sandbox:
    """The named backend, or with "auto" the strongest available one."""
    if name == "auto":
        for candidate in AUTO_ORDER:
            cls = sandbox_class(candidate)
            if cls.unavailable_reason() is None:
                return cls()
        raise UserError("no sandbox backend works on this machine", hint="install bubblewrap")
    cls = sandbox_class(name)
    reason = cls.unavailable_reason()
    if reason is not None:
        raise UserError(f"sandbox {name!r} is not available: {reason}")
    return cls()


__all__ = [
    "SANDBOXES",
    "ExecRequest",
    "ExecResult",
    "Limits",
    "Mount",
    "Sandbox",
    "get_sandbox",
    "sandbox_class",
]
