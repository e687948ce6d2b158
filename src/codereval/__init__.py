"""codereval: evaluate code models inside real projects, sandboxed and reproducibly."""

from codereval.model import (
    Language,
    Level,
    Outcome,
    Sample,
    Stage,
    Task,
    Verdict,
)

__version__ = "0.1.0"
# Bumped whenever a change to the harness could change a verdict; recorded with every outcome.
HARNESS_VERSION = "codereval-harness/2"

__all__ = [
    "HARNESS_VERSION",
    "Language",
    "Level",
    "Outcome",
    "Sample",
    "Stage",
    "Task",
    "Verdict",
    "__version__",
]
