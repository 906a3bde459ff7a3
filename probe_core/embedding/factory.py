"""Choose the embedder a workspace's preset and settings call for."""
from __future__ import annotations

import threading

from .. import environment
from ..config import WorkspaceConfig
from ..errors import ConfigError
from .protocol import Embedder


_shared: dict[tuple, Embedder] = {}
_shared_lock = threading.Lock()


def make_embedder(config: WorkspaceConfig) -> Embedder:
    """The embedder for these settings. An in-process model is loaded once per process and shared by
    every workspace that asks for it (a project and its reference libraries hold one MiniLM, not one
    each); a TEI client is cheap and made per workspace."""
    if config.tei_url:
        return _new_embedder(config)
    key = (config.preset, environment.get("PROBE_EMBEDDER", "minilm"))
    with _shared_lock:
        if key not in _shared:
            _shared[key] = _new_embedder(config)
        return _shared[key]


def _new_embedder(config: WorkspaceConfig) -> Embedder:
    """TEI when ``tei_url`` is set (the stack presets), else the in-process default.

    ``PROBE_EMBEDDER`` overrides the in-process model: ``minilm`` (default), ``onnx:DIR`` for a
    sentence-transformers ONNX export (``onnx_user.py``) or ``static:DIR`` for a model2vec-format
    static model directory.
    """
    spec = config.preset_spec
    if config.tei_url:
        from .tei import TeiEmbedder

        return TeiEmbedder(config.tei_url, model_id=spec.embedding_model, dimensions=spec.dimensions,
                           api_key=config.tei_api_key)
    if spec.name != "embedded":
        raise ConfigError(
            f"preset {spec.name!r} needs a TEI endpoint: set TEI_EMBED_URL or run `probe up --profile {spec.name}`")
    choice = environment.get("PROBE_EMBEDDER", "minilm")
    if choice == "minilm":
        from .onnx_minilm import OnnxMiniLMEmbedder

        return OnnxMiniLMEmbedder()
    if choice.startswith("static:"):
        from .static_m2v import StaticEmbedder

        return StaticEmbedder(choice[len("static:"):])
    if choice.startswith("onnx:"):
        from .onnx_user import user_onnx_embedder

        return user_onnx_embedder(choice[len("onnx:"):])
    raise ConfigError(f"PROBE_EMBEDDER={choice!r} is not one of: minilm, onnx:DIR, static:DIR")
