"""The `codereval` command."""
