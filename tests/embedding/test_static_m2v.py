"""StaticEmbedder on small model2vec-format directories written here (and a real one if present)."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer

from probe_core.embedding import Embedder, StaticEmbedder
from probe_core.embedding.onnx_minilm import TOKENIZER_PATH
from probe_core.embedding.static_m2v import read_safetensors
from probe_core.errors import BackendUnavailable

DIMS = 8
_DTYPE_TAGS = {np.dtype(np.float16): "F16", np.dtype(np.float32): "F32", np.dtype(np.int64): "I64"}


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """The safetensors layout: u64 header size, JSON header, then the raw tensors."""
    header, blobs, offset = {"__metadata__": {"format": "np"}}, [], 0
    for name, array in tensors.items():
        data = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": _DTYPE_TAGS[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    path.write_bytes(len(head).to_bytes(8, "little") + head + b"".join(blobs))


def make_model(root: Path, *, weights: bool = False, mapping: bool = False) -> dict[str, np.ndarray]:
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(TOKENIZER_PATH, root / "tokenizer.json")  # BERT WordPiece, 30,522 tokens
    vocab = 30522
    rng = np.random.default_rng(7)
    tensors: dict[str, np.ndarray] = {}
    if mapping:  # vocabulary quantisation: many tokens share one of a few rows
        tensors["embeddings"] = rng.standard_normal((64, DIMS)).astype(np.float16)
        tensors["mapping"] = rng.integers(0, 64, vocab).astype(np.int64)
    else:
        tensors["embeddings"] = rng.standard_normal((vocab, DIMS)).astype(np.float16)
    if weights:
        tensors["weights"] = rng.uniform(0.1, 2.0, vocab).astype(np.float32)
    write_safetensors(root / "model.safetensors", tensors)
    config = {"model_type": "model2vec", "normalize": True, "max_length": 512}
    (root / "config.json").write_text(json.dumps(config))
    return tensors


def reference(root: Path, tensors: dict[str, np.ndarray], text: str) -> np.ndarray:
    """model2vec's arithmetic, written out plainly: no special tokens, no [UNK], mean, normalise."""
    tok = Tokenizer.from_file(str(root / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()  # the MiniLM file pads to 128 by default
    ids = [i for i in tok.encode(text, add_special_tokens=False).ids if i != tok.token_to_id("[UNK]")]
    if not ids:
        return np.zeros(DIMS, dtype=np.float32)
    rows = tensors["mapping"][ids] if "mapping" in tensors else ids
    vecs = tensors["embeddings"][rows].astype(np.float32)
    if "weights" in tensors:
        vecs = vecs * tensors["weights"][ids][:, None]
    mean = vecs.mean(axis=0)
    return mean / np.linalg.norm(mean)


TEXTS = ["def hash_password(pw, salt):", "", "x", "class LRUCache: ...  # evicts old entries",
         "日本語 🚀 \ufffd", "\U0001f600\U0001f600", "word " * 2000]


@pytest.mark.parametrize("variant", [{}, {"weights": True}, {"mapping": True, "weights": True}])
def test_matches_model2vec_arithmetic(tmp_path, variant):
    tensors = make_model(tmp_path / "m", **variant)
    emb = StaticEmbedder(tmp_path / "m", max_tokens=100_000)
    out = emb.embed_documents(TEXTS)
    assert out.shape == (len(TEXTS), DIMS) and out.dtype == np.float32
    expected = np.stack([reference(tmp_path / "m", tensors, t) for t in TEXTS])
    np.testing.assert_allclose(out, expected, atol=1e-4)  # float32 sums over 2,000 tokens


def test_identity_norms_and_empty(tmp_path):
    make_model(tmp_path / "tiny-m2v")
    emb = StaticEmbedder(tmp_path / "tiny-m2v")
    assert isinstance(emb, Embedder)
    assert (emb.model_id, emb.dimensions, emb.max_tokens) == ("model2vec/tiny-m2v", DIMS, 512)
    named = StaticEmbedder(tmp_path / "tiny-m2v", model_id="probe/m2v-minilm-256")
    assert named.model_id == "probe/m2v-minilm-256"
    assert emb.embed_documents([]).shape == (0, DIMS)
    out = emb.embed_documents(["some code", "", "\U0001f600"])  # the emoji is [UNK] only
    np.testing.assert_allclose(np.linalg.norm(out[0]), 1.0, atol=1e-6)
    np.testing.assert_array_equal(out[1:], 0.0)  # nothing to average: a zero vector


def test_query_and_truncation(tmp_path):
    make_model(tmp_path / "m")
    emb = StaticEmbedder(tmp_path / "m", max_tokens=4)
    np.testing.assert_allclose(emb.embed_query("a b c d"), emb.embed_documents(["a b c d"])[0])
    a, b = emb.embed_documents(["a b c d e f", "a b c d x y"])
    np.testing.assert_allclose(a, b)  # only the first 4 tokens count
    assert emb.embed_query("lone \ud800 surrogate", instruction="ignored").shape == (DIMS,)


def test_order_kept_across_pool_groups(tmp_path):
    make_model(tmp_path / "m")
    emb = StaticEmbedder(tmp_path / "m")
    texts = [f"function_{i} returns {i * 7}" if i % 5 else "" for i in range(100)]
    together = emb.embed_documents(texts)
    np.testing.assert_allclose(together, np.stack([emb.embed_query(t) for t in texts]), atol=1e-6)


def test_read_safetensors_roundtrip(tmp_path):
    tensors = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([1, -2], dtype=np.int64)}
    write_safetensors(tmp_path / "t.safetensors", tensors)
    back = read_safetensors(tmp_path / "t.safetensors")
    assert set(back) == {"a", "b"}
    np.testing.assert_array_equal(back["a"], tensors["a"])
    np.testing.assert_array_equal(back["b"], tensors["b"])


def test_unusable_directories(tmp_path):
    with pytest.raises(BackendUnavailable, match="missing tokenizer.json, model.safetensors, config.json"):
        StaticEmbedder(tmp_path)
    make_model(tmp_path / "m")
    (tmp_path / "m" / "model.safetensors").write_bytes(b"\xff" * 16)
    with pytest.raises(BackendUnavailable):
        StaticEmbedder(tmp_path / "m")


_REAL_MODEL = Path(os.environ.get("PROBE_M2V_MODEL", "/tmp/probe-m2v"))


@pytest.mark.skipif(
    not (_REAL_MODEL / "model.safetensors").is_file(), reason="no distilled model2vec model here"
)
def test_real_distilled_model_semantics():
    emb = StaticEmbedder(_REAL_MODEL)
    q = emb.embed_query("how do I hash a password")
    hash_fn, parse_fn = emb.embed_documents(["def hash_password(pw, salt)", "def parse_http_header(line)"])
    assert q @ hash_fn > q @ parse_fn
