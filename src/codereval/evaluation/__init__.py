"""Evaluation: running a benchmark's samples and judging the benchmark itself.

``engine`` runs samples through the executors and records every outcome; ``selection`` says
which part of a benchmark a run covers; ``gold`` validates tasks by running their references
(and trivial bodies) through the same engine.
"""
