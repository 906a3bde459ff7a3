"""PROBE_EMBEDDER=onnx:DIR: a user's sentence-transformers ONNX export, tried with the shipped
MiniLM files copied into a folder as if a user had exported them."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from probe_core import Workspace, index_workspace, search
from probe_core.embedding import OnnxMiniLMEmbedder
from probe_core.embedding.factory import make_embedder
from probe_core.embedding.onnx_minilm import TOKENIZER_PATH, _packaged_model_path
from probe_core.embedding.onnx_user import user_onnx_embedder
from probe_core.errors import ConfigError

TEXTS = ["def hash_password(pw, salt):\n    return sha256(salt + pw)", "class Router: pass", "x"]


def _export(folder: Path, *, pooling: str = "pooling_mode_mean_tokens", prompts: dict | None = None,
            onnx_subdir: bool = False) -> Path:
    """The folder sentence-transformers' ONNX export writes, made from the shipped MiniLM."""
    model_dir = folder / "onnx" if onnx_subdir else folder
    model_dir.mkdir(parents=True, exist_ok=True)
    shutil.copy(_packaged_model_path(), model_dir / "model.onnx")
    shutil.copy(TOKENIZER_PATH, folder / "tokenizer.json")
    (folder / "config.json").write_text(json.dumps({"hidden_size": 384, "max_position_embeddings": 512}))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 256}))
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": 384, pooling: True}))
    if prompts is not None:
        (folder / "config_sentence_transformers.json").write_text(json.dumps({"prompts": prompts}))
    return folder


@pytest.fixture(scope="module")
def shipped() -> OnnxMiniLMEmbedder:
    return OnnxMiniLMEmbedder(intra_op_threads=1)


def test_user_export_gives_the_shipped_vectors_under_its_own_identity(tmp_path, shipped):
    user = user_onnx_embedder(_export(tmp_path / "my-minilm", onnx_subdir=True), intra_op_threads=1)
    assert user.dimensions == 384 and user.max_tokens == 256
    assert user.model_id.startswith("onnx:my-minilm@") and user.model_id != shipped.model_id
    np.testing.assert_allclose(user.embed_documents(TEXTS), shipped.embed_documents(TEXTS), atol=1e-6)
    np.testing.assert_allclose(user.embed_query("hash a password"), shipped.embed_query("hash a password"),
                               atol=1e-6)


def test_cls_pooling_and_prompts_are_read_from_the_folder(tmp_path, shipped):
    cls = user_onnx_embedder(_export(tmp_path / "cls", pooling="pooling_mode_cls_token"), intra_op_threads=1)
    assert cls.pooling == "cls"
    assert float(cls.embed_documents(TEXTS[:1])[0] @ shipped.embed_documents(TEXTS[:1])[0]) < 0.99
    prompted = user_onnx_embedder(_export(tmp_path / "e5", prompts={"query": "query: ", "document": "passage: "}),
                                  intra_op_threads=1)
    np.testing.assert_allclose(prompted.embed_query("retry loop"), shipped.embed_query("query: retry loop"), atol=1e-6)
    np.testing.assert_allclose(prompted.embed_documents(["retry loop"])[0],
                               shipped.embed_documents(["passage: retry loop"])[0], atol=1e-6)


def test_identity_follows_the_model(tmp_path):
    a = user_onnx_embedder(_export(tmp_path / "m"))
    assert user_onnx_embedder(tmp_path / "m").model_id == a.model_id  # stable across starts
    (tmp_path / "m" / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    assert user_onnx_embedder(tmp_path / "m").model_id != a.model_id


def test_bad_folders_give_one_line_errors(tmp_path):
    with pytest.raises(ConfigError, match="no such folder"):
        user_onnx_embedder(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no model.onnx"):
        user_onnx_embedder(tmp_path / "empty")
    folder = _export(tmp_path / "m")
    (folder / "tokenizer.json").unlink()
    with pytest.raises(ConfigError, match="no tokenizer.json"):
        user_onnx_embedder(folder)
    folder = _export(tmp_path / "w", pooling="pooling_mode_weightedmean_tokens")
    with pytest.raises(ConfigError, match="unsupported pooling"):
        user_onnx_embedder(folder)
    folder = _export(tmp_path / "h")
    (folder / "config.json").write_text("{}")
    with pytest.raises(ConfigError, match="hidden_size"):
        user_onnx_embedder(folder)


def test_env_variable_indexes_and_searches_with_the_user_model(tmp_path, repo, monkeypatch):
    folder = _export(tmp_path / "user-model")
    monkeypatch.setenv("PROBE_EMBEDDER", f"onnx:{folder}")
    ws = Workspace.open(repo)
    config = ws.config
    try:
        assert ws.embedder.model_id.startswith("onnx:user-model@")
        index_workspace(ws)
        assert ws.manifest.get_meta("embedding_model_id") == ws.embedder.model_id
        resp = search(ws, "hash a password with a random salt", top_k=3)
        assert resp.status == "healthy" and resp.results[0].path == "src/auth/passwords.py"
    finally:
        ws.close()
    monkeypatch.setenv("PROBE_EMBEDDER", "onnx:/nonexistent/model-folder")
    with pytest.raises(ConfigError, match="no such folder"):
        make_embedder(config)
