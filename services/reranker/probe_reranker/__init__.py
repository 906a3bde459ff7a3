"""Probe's reranker service: Qwen3-Reranker and zerank-2 behind one instruction-aware HTTP API."""
from __future__ import annotations

__version__ = "0.1.0"
