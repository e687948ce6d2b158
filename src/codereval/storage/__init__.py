"""Storage: JSON Lines reading and writing (``jsonl``) and a run directory's results store
(``store``: results.sqlite, the exported outcomes, the official-format file)."""
