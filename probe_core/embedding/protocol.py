"""The seam every dense embedder implements (in-process ONNX, static, TEI over HTTP)."""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns text into L2-normalised dense vectors.

    ``model_id`` and ``dimensions`` are the index identity recorded in the manifest: a
    search with an embedder whose identity differs from the index's is refused.
    """

    model_id: str
    dimensions: int

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """Embed chunks for indexing; returns float32 array (len(texts), dimensions)."""
        ...

    def embed_query(self, text: str, instruction: str | None = None) -> np.ndarray:
        """Embed one search query (instruction-templated for models that want it); shape (dimensions,)."""
        ...
