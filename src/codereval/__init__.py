"""codereval: evaluate code models inside real projects, sandboxed and reproducibly.

The Python API (see docs/api.md)::

    import codereval

    bench = codereval.load_benchmark("mini-python")
    run = codereval.evaluate(bench, samples, run_dir="runs/mini")
    codereval.score(run).to_dataframe()

``load_benchmark``, ``generate``, ``evaluate``, ``score`` and ``compare`` (and the types they
return) are imported on first use, so ``import codereval`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from codereval.model import (
    HARNESS_VERSION,
    Language,
    Level,
    Outcome,
    Sample,
    Stage,
    Task,
    Verdict,
    __version__,
)

if TYPE_CHECKING:
    from codereval.api import (
        Benchmark,
        Run,
        Scores,
        compare,
        evaluate,
        generate,
        load_benchmark,
        score,
    )
    from codereval.errors import UserError
    from codereval.families.codereval.agreement import Agreement

# Public name -> the module that defines it.
_LAZY = {
    "Agreement": "codereval.families.codereval.agreement",
    "Benchmark": "codereval.api",
    "Run": "codereval.api",
    "Scores": "codereval.api",
    "UserError": "codereval.errors",
    "compare": "codereval.api",
    "evaluate": "codereval.api",
    "generate": "codereval.api",
    "load_benchmark": "codereval.api",
    "score": "codereval.api",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'codereval' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "HARNESS_VERSION",
    "Agreement",
    "Benchmark",
    "Language",
    "Level",
    "Outcome",
    "Run",
    "Sample",
    "Scores",
    "Stage",
    "Task",
    "UserError",
    "Verdict",
    "__version__",
    "compare",
    "evaluate",
    "generate",
    "load_benchmark",
    "score",
]
