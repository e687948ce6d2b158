"""Prompting: what a model is asked (``prompts``) and the code taken from what it answers
(``extraction``). A family may bring its own of either through its ``Family`` hooks."""
