"""The owner's warm-up hands freed heap back twice (``OwnerEngine._warm_up``, ``malloc_arenas.py``):
what the lexical phase freed before the model loads, and what loading the model freed after it
(ONNX Runtime's graph passes leave ~58 MB free in glibc's heap)."""
from __future__ import annotations

from types import SimpleNamespace

from probe_core.embedding import OnnxMiniLMEmbedder
from probe_core.engine import malloc_arenas
from probe_core.engine.service import OwnerEngine


def test_the_warm_up_releases_memory_before_and_after_the_model_loads(monkeypatch):
    embedder = OnnxMiniLMEmbedder(intra_op_threads=1)
    loaded_at_release: list[bool] = []
    monkeypatch.setattr(malloc_arenas, "release_free_memory",
                        lambda: loaded_at_release.append(embedder._session is not None) or True)
    owner = SimpleNamespace(_warmed=False)
    OwnerEngine._warm_up(owner, SimpleNamespace(embedder=embedder))
    assert loaded_at_release == [False, True]
    OwnerEngine._warm_up(owner, SimpleNamespace(embedder=embedder))  # once per owner
    assert loaded_at_release == [False, True]
