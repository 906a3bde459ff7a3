"""Pooling and normalisation shared by the in-process embedders.

Both follow sentence-transformers: the mean of the token vectors that the attention mask
keeps, then an L2 normalisation with the same epsilons (``clamp(min=1e-9)`` on the token
count, ``F.normalize(eps=1e-12)``), so vectors match the reference implementation.
"""
from __future__ import annotations

import numpy as np


def masked_mean(token_vectors: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean over axis 1 of ``(batch, seq, dim)`` vectors, counting only positions where mask is 1."""
    weights = mask.astype(np.float32)[:, :, None]
    summed = (token_vectors * weights).sum(axis=1)
    counts = np.clip(weights.sum(axis=1), 1e-9, None)
    return summed / counts


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (an all-zero row stays zero) as contiguous float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return np.ascontiguousarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)
