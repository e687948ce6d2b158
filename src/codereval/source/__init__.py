"""Source code as text: Python's syntax tree helpers (``pyast``), file skeletons for prompts
(``skeleton``) and putting a generated function into a file (``inject``)."""
