"""Project environments, built once and cached by content."""

from codereval.environments.base import (
    Environment,
    EnvironmentBuilder,
    ProjectSpec,
    load_manifest,
)

__all__ = ["Environment", "EnvironmentBuilder", "ProjectSpec", "load_manifest"]
