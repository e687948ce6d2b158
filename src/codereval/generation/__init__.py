"""Model backends behind one interface, found by name; heavy ones are imported only when chosen."""

from codereval.generation.base import (
    BACKENDS,
    Backend,
    BackendConfig,
    Completion,
    SamplingOptions,
    backend_class,
    get_backend,
)

__all__ = [
    "BACKENDS",
    "Backend",
    "BackendConfig",
    "Completion",
    "SamplingOptions",
    "backend_class",
    "get_backend",
]
