"""Scoring: from outcomes to numbers. ``scores`` reads runs and result files into ``Scores``;
``metrics`` holds pass@k, count@n and bootstrap intervals; ``paired`` compares two runs;
``allocation`` spreads a budget over languages; ``categories`` counts CodeGeeX's result kinds."""
