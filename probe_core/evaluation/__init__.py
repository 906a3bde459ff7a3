"""Retrieval evaluation on a repository's own git history (``probe eval``).

Each usable commit is one query (its cleaned message) with one gold answer (the definitions it
changed, located in today's tree); Probe and a plain BM25 baseline answer every query in the
same run. Modules: ``commits`` (git history, message cleaning), ``gold`` (changed lines →
today's definitions), ``metrics`` (the dev set's R@n / MRR@10), ``bm25_baseline``, ``runner``
(the run and its report).
"""
from __future__ import annotations

from .errors import EvaluationError, GitError
from .runner import BASELINE, EvalCase, EvalProgress, EvalReport, evaluate_history

__all__ = ["BASELINE", "EvalCase", "EvalProgress", "EvalReport", "EvaluationError", "GitError", "evaluate_history"]
