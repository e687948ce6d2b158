"""The model backend interface and its registry.

A backend turns prompts into completions; nothing else. Backends are named by
``"module:Class"`` strings and imported only when chosen, so the heavy ones (torch, vLLM) cost
nothing unless used, and a missing one fails with a one-line install hint.
"""

from __future__ import annotations

import importlib
import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field

from codereval.errors import UserError
from codereval.prompting.prompts import Prompt


@dataclass(frozen=True, kw_only=True)
class SamplingOptions:
    """How to sample. Defaults follow the CoderEval paper: n=10, T=0.6, top-p 0.95, 1024 tokens."""

    n: int = 10
    temperature: float = 0.6
    top_p: float = 0.95
    max_new_tokens: int = 1024
    stop: tuple[str, ...] = ()
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.n < 1:
            raise UserError(f"n must be at least 1, got {self.n}")
        if self.temperature < 0:
            raise UserError(f"temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise UserError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.max_new_tokens < 1:
            raise UserError(f"max new tokens must be at least 1, got {self.max_new_tokens}")


@dataclass(frozen=True, kw_only=True)
class BackendConfig:
    """Where the model is and how to talk to it; each backend reads the fields it needs."""

    model: str
    base_url: str = ""
    api_key: str = ""
    # Requests in flight at once (HTTP backends).
    concurrency: int = 4
    timeout: float = 120.0
    max_retries: int = 5
    # Seconds of the first backoff step; doubled per retry, with jitter.
    backoff: float = 1.0
    # Seconds; a longer Retry-After from the server is capped to this.
    max_backoff: float = 60.0
    device: str = ""
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Completion:
    """One sampled output. ``error`` is set when the request for it failed (no text then)."""

    text: str = ""
    finish_reason: str = ""
    error: str = ""

    @property
    def cut_off(self) -> bool:
        """The model stopped because it hit the token limit."""
        return self.finish_reason == "length"


class Backend(ABC):
    """Samples completions for prompts. Chat prompts use ``prompt.messages()``."""

    name: str = ""

    def __init__(self, config: BackendConfig) -> None:
        self.config = config

    @abstractmethod
    def generate(
        self, prompts: Sequence[Prompt], options: SamplingOptions
    ) -> list[list[Completion]]:
        """``options.n`` completions per prompt, in prompt order.

        A request that fails for one prompt yields completions with ``error`` set; a failure
        that would hit every prompt (no server, bad key, unknown model) raises UserError.
        """

    def close(self) -> None:
        """Release clients, processes or GPU memory."""
        return None


BACKENDS: dict[str, str] = {
    "openai": "codereval.generation.openai:OpenAIBackend",
    "hf": "codereval.generation.hf:HFBackend",
    "vllm": "codereval.generation.vllm:VLLMBackend",
}

INSTALL_HINTS: dict[str, str] = {
    "hf": "pip install 'codereval[hf]' (torch + transformers)",
    "vllm": "pip install vllm (needs a GPU)",
}


def backend_class(name: str) -> type[Backend]:
    """The backend class for a registered name or a ``"module:Class"`` string."""
    target = BACKENDS.get(name, name)
    if ":" not in target:
        choices = ", ".join(sorted(BACKENDS))
        raise UserError(
            f"unknown backend {name!r}", hint=f"choose one of: {choices}, or module:Class"
        )
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        hint = INSTALL_HINTS.get(name, f"install the package that provides {module_name}")
        raise UserError(f"backend {name!r} cannot be loaded: {exc}", hint=hint) from None
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Backend)):
        raise UserError(f"backend {target!r}: {class_name} is not a Backend in {module_name}")
    return cls


def get_backend(name: str, config: BackendConfig) -> Backend:
    return backend_class(name)(config)


def env_or(value: str, variable: str) -> str:
    """An explicit option wins; else the environment variable; else empty."""
    return value or os.environ.get(variable, "")
