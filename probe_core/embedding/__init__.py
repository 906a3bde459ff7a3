"""Dense embedders behind one protocol: in-process ONNX, static (model2vec), TEI over HTTP.

Constructing an embedder is cheap: the ONNX model loads on first use, the static model is a
~50 ms file read, and only ``TeiEmbedder(dimensions=None)`` touches the network. The classes
are imported on first access, so ``import probe_core.embedding`` does not pull in httpx or
onnxruntime for a process that never embeds.
"""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from probe_core.embedding.protocol import Embedder

if TYPE_CHECKING:
    from probe_core.embedding.onnx_minilm import OnnxMiniLMEmbedder
    from probe_core.embedding.static_m2v import StaticEmbedder
    from probe_core.embedding.tei import TeiEmbedder, TeiInfo

_LAZY = {
    "OnnxMiniLMEmbedder": "probe_core.embedding.onnx_minilm",
    "StaticEmbedder": "probe_core.embedding.static_m2v",
    "TeiEmbedder": "probe_core.embedding.tei",
    "TeiInfo": "probe_core.embedding.tei",
}

__all__ = ["Embedder", "OnnxMiniLMEmbedder", "StaticEmbedder", "TeiEmbedder", "TeiInfo"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
