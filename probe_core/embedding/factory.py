"""Choose the embedder a workspace's preset and settings call for."""
from __future__ import annotations

import os

from ..config import WorkspaceConfig
from ..errors import ConfigError
from .protocol import Embedder


def make_embedder(config: WorkspaceConfig) -> Embedder:
    """TEI when ``tei_url`` is set (the stack presets), else the in-process default.

    ``PROBE_EMBEDDER`` overrides the in-process model: ``minilm`` (default) or ``static:DIR``
    for a model2vec-format static model directory.
    """
    spec = config.preset_spec
    if config.tei_url:
        from .tei import TeiEmbedder

        return TeiEmbedder(config.tei_url, model_id=spec.embedding_model, dimensions=spec.dimensions,
                           api_key=config.tei_api_key)
    if spec.name != "embedded":
        raise ConfigError(
            f"preset {spec.name!r} needs a TEI endpoint: set TEI_EMBED_URL or run `probe up --profile {spec.name}`")
    choice = os.environ.get("PROBE_EMBEDDER", "minilm")
    if choice == "minilm":
        from .onnx_minilm import OnnxMiniLMEmbedder

        return OnnxMiniLMEmbedder()
    if choice.startswith("static:"):
        from .static_m2v import StaticEmbedder

        return StaticEmbedder(choice[len("static:"):])
    raise ConfigError(f"PROBE_EMBEDDER={choice!r} is not one of: minilm, static:DIR")
