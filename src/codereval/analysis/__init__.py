"""Static analysis: the context a function uses and its runnable level (Acc@k, which scores
generated code by the context tokens it uses, is in ``codereval.scoring.acc``)."""

from __future__ import annotations

from codereval.analysis.deps import Analysis, Dependency, RefKind, Scope
from codereval.analysis.formats import format_all_context, format_oracle_context
from codereval.analysis.java import analyze_java_file, analyze_java_source
from codereval.analysis.levels import level_of, oracle_context_of
from codereval.analysis.python import analyze_python_file, analyze_python_source
from codereval.analysis.tasks import analyze_task

__all__ = [
    "Analysis",
    "Dependency",
    "RefKind",
    "Scope",
    "analyze_java_file",
    "analyze_java_source",
    "analyze_python_file",
    "analyze_python_source",
    "analyze_task",
    "format_all_context",
    "format_oracle_context",
    "level_of",
    "oracle_context_of",
]
