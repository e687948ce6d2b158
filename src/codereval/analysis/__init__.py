"""Static analysis: the context tokens a function uses, its runnable level, and Acc@k."""

from __future__ import annotations

from codereval.analysis.acc import AccResult, acc_at_k, tokens_used
from codereval.analysis.deps import Analysis, Dependency, RefKind, Scope
from codereval.analysis.formats import format_all_context, format_oracle_context
from codereval.analysis.java import analyze_java_file, analyze_java_source
from codereval.analysis.levels import level_of, oracle_context_of
from codereval.analysis.python import analyze_python_file, analyze_python_source
from codereval.analysis.tasks import analyze_task

__all__ = [
    "AccResult",
    "Analysis",
    "Dependency",
    "RefKind",
    "Scope",
    "acc_at_k",
    "analyze_java_file",
    "analyze_java_source",
    "analyze_python_file",
    "analyze_python_source",
    "analyze_task",
    "format_all_context",
    "format_oracle_context",
    "level_of",
    "oracle_context_of",
    "tokens_used",
]
