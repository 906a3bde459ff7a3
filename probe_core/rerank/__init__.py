"""Reranking through ``services/reranker`` (Qwen3-Reranker / zerank-2), with RRF order as the fallback."""
from __future__ import annotations

from .client import (
    DEFAULT_TIMEOUT_S,
    QUALITY_TOP_N,
    RerankClient,
    RerankHealth,
    RerankUnavailable,
    candidates_to_rerank,
    client_for,
    order_by_scores,
    rerank,
)

__all__ = [
    "DEFAULT_TIMEOUT_S", "QUALITY_TOP_N", "RerankClient", "RerankHealth", "RerankUnavailable",
    "candidates_to_rerank", "client_for", "order_by_scores", "rerank",
]
