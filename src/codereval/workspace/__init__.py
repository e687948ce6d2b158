"""Workspaces: each sample's private view of a project (``views``) and hard-linked views kept
between samples of one project when provably as good as new (``cache``)."""
