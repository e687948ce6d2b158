"""Preparation: turn what a user can obtain (official records, official tests as a test map, a
Docker image tarball or a tree, project sources at pinned commits) into a benchmark directory
that ``codereval evaluate --prepared DIR`` reads. Nothing else in codereval downloads."""
