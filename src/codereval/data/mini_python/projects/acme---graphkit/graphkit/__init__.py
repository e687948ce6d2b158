"""graphkit: small graphs, edge-list files and traversals."""

from graphkit.graph import Graph

__all__ = ["Graph"]
