"""TeiEmbedder against a real HTTP server on loopback (see conftest.StubTei)."""
from __future__ import annotations

import time

import numpy as np
import pytest

from probe_core.embedding import Embedder
from probe_core.embedding.tei import DEFAULT_CODE_SEARCH_TASK, TeiEmbedder, format_query
from probe_core.errors import BackendUnavailable, ConfigError, EmbeddingError


def make(stub, **kwargs) -> TeiEmbedder:
    kwargs.setdefault("dimensions", stub.dims)
    kwargs.setdefault("backoff_s", 0.01)
    return TeiEmbedder(stub.url, kwargs.pop("model_id", stub.model_id), **kwargs)


def test_embeds_in_input_order_with_tei_request_shape(tei_stub):
    texts = [f"def f{i}(): return {i}" for i in range(5)]
    with make(tei_stub) as emb:
        vectors = emb.embed_documents(texts)
    assert isinstance(emb, Embedder)
    assert vectors.dtype == np.float32 and vectors.shape == (5, tei_stub.dims)
    np.testing.assert_allclose(vectors, tei_stub.expected(texts), atol=1e-6)
    assert tei_stub.bodies == [{"inputs": texts, "normalize": True, "truncate": True}]


def test_batches_by_batch_size(tei_stub):
    texts = [f"chunk {i}" for i in range(10)]
    with make(tei_stub, batch_size=4, max_concurrency=1) as emb:
        vectors = emb.embed_documents(texts)
    assert [len(c) for c in tei_stub.embed_calls] == [4, 4, 2]
    np.testing.assert_allclose(vectors, tei_stub.expected(texts), atol=1e-6)


def test_empty_list_makes_no_request(tei_stub):
    with make(tei_stub) as emb:
        assert emb.embed_documents([]).shape == (0, tei_stub.dims)
    assert tei_stub.embed_calls == []


def test_discovers_dimensions_with_one_probe(tei_stub):
    with make(tei_stub, dimensions=None) as emb:
        assert emb.dimensions == tei_stub.dims
        assert len(tei_stub.embed_calls) == 1
        emb.embed_documents(["a", "b"])
    assert len(tei_stub.embed_calls) == 2


def test_order_preserved_under_concurrency(tei_stub):
    # Later batches answer sooner, so responses arrive out of order.
    tei_stub.delay_for = lambda inputs: 0.2 if inputs[0] == "t0" else 0.02
    texts = [f"t{i}" for i in range(24)]
    with make(tei_stub, batch_size=3, max_concurrency=4) as emb:
        vectors = emb.embed_documents(texts)
    np.testing.assert_allclose(vectors, tei_stub.expected(texts), atol=1e-6)
    assert len(tei_stub.embed_calls) == 8
    assert 1 < tei_stub.max_in_flight <= 4


def test_retries_503_then_succeeds(tei_stub):
    tei_stub.fail_first = 2
    with make(tei_stub, retries=3) as emb:
        vectors = emb.embed_documents(["x", "y"])
    assert len(tei_stub.embed_calls) == 3
    np.testing.assert_allclose(vectors, tei_stub.expected(["x", "y"]), atol=1e-6)


@pytest.mark.parametrize("status", [429, 500, 502])
def test_retries_other_transient_statuses(tei_stub, status):
    tei_stub.fail_first, tei_stub.fail_status = 1, status
    with make(tei_stub, retries=1) as emb:
        emb.embed_documents(["x"])
    assert len(tei_stub.embed_calls) == 2


def test_503_after_all_retries_is_backend_unavailable(tei_stub):
    tei_stub.fail_first = 100
    with make(tei_stub, retries=2) as emb, pytest.raises(BackendUnavailable) as err:
        emb.embed_documents(["x"])
    assert len(tei_stub.embed_calls) == 3
    assert tei_stub.url in str(err.value) and "503" in str(err.value) and "warming up" in str(err.value)


def test_500_after_all_retries_is_embedding_error(tei_stub):
    tei_stub.fail_first, tei_stub.fail_status = 100, 500
    with make(tei_stub, retries=1) as emb, pytest.raises(EmbeddingError) as err:
        emb.embed_documents(["x"])
    assert not isinstance(err.value, BackendUnavailable)
    assert "HTTP 500" in str(err.value) and "2 attempts" in str(err.value)


def test_client_error_is_not_retried(tei_stub):
    with make(tei_stub, retries=3) as emb, pytest.raises(EmbeddingError, match="HTTP 422: input is invalid"):
        emb.embed_documents(["ok", "__422__"])
    assert len(tei_stub.embed_calls) == 1


def test_timeout_becomes_embedding_error(tei_stub):
    tei_stub.delay = 1.0
    started = time.monotonic()
    with make(tei_stub, timeout=0.2, retries=1) as emb, pytest.raises(EmbeddingError) as err:
        emb.embed_documents(["slow"])
    assert time.monotonic() - started < 1.5
    assert "did not answer within 0.2s" in str(err.value) and tei_stub.url in str(err.value)
    assert len(tei_stub.embed_calls) == 2


def test_server_down_is_backend_unavailable(dead_url):
    started = time.monotonic()
    with pytest.raises(BackendUnavailable, match=f"cannot reach TEI at {dead_url}/embed"):
        TeiEmbedder(dead_url, "any/model", dimensions=None, retries=2, backoff_s=0.01)
    assert time.monotonic() - started < 5
    emb = TeiEmbedder(dead_url, "any/model", dimensions=4, retries=0)  # no probe: no network yet
    with pytest.raises(BackendUnavailable, match="after 1 attempt"):
        emb.embed_query("q")


def test_batch_too_large_is_split(tei_stub):
    tei_stub.max_client_batch_size = 4
    texts = [f"s{i}" for i in range(10)]
    with make(tei_stub, batch_size=10) as emb:
        vectors = emb.embed_documents(texts)
    np.testing.assert_allclose(vectors, tei_stub.expected(texts), atol=1e-6)
    # 10 and 5 are refused (413); the halves that fit go through.
    assert [len(c) for c in tei_stub.embed_calls] == [10, 5, 2, 3, 5, 2, 3]


def test_other_validation_413_is_not_split(tei_stub):
    with make(tei_stub) as emb:
        with pytest.raises(EmbeddingError, match="HTTP 413: `inputs` must have less than 512 tokens"):
            emb.embed_documents(["a", "__413__", "b"])
    assert len(tei_stub.embed_calls) == 1


def test_empty_and_unencodable_texts_are_sent_safely(tei_stub):
    with make(tei_stub) as emb:
        vectors = emb.embed_documents(["", "ok", "bad \ud800 surrogate"])
    assert tei_stub.embed_calls == [[" ", "ok", "bad ? surrogate"]]
    np.testing.assert_allclose(vectors, tei_stub.expected([" ", "ok", "bad ? surrogate"]), atol=1e-6)


def test_wrong_dimension_is_an_error(tei_stub):
    with make(tei_stub, dimensions=tei_stub.dims * 2) as emb:
        with pytest.raises(EmbeddingError, match="another model"):
            emb.embed_documents(["x"])


def test_api_key_sent_as_bearer(tei_stub):
    with make(tei_stub, api_key="s3cret") as emb:
        emb.embed_query("q")
    assert tei_stub.auth_headers == ["Bearer s3cret"]


def test_info(tei_stub):
    tei_stub.max_client_batch_size = 16
    with make(tei_stub) as emb:
        info = emb.info()
    assert (info.model_id, info.max_client_batch_size, info.max_input_length) == (tei_stub.model_id, 16, 512)


def test_qwen_queries_get_instruction_documents_do_not(tei_stub):
    with make(tei_stub, model_id="Qwen/Qwen3-Embedding-0.6B") as emb:
        q = emb.embed_query("hash a password")
        emb.embed_documents(["def hash_password(pw): ..."])
        emb.embed_query("hash a password", instruction="Find the function")
    expected_query = f"Instruct: {DEFAULT_CODE_SEARCH_TASK}\nQuery:hash a password"
    assert tei_stub.embed_calls == [
        [expected_query],
        ["def hash_password(pw): ..."],
        ["Instruct: Find the function\nQuery:hash a password"],
    ]
    assert q.shape == (tei_stub.dims,)
    np.testing.assert_allclose(q, tei_stub.expected([expected_query])[0], atol=1e-6)


def test_other_models_get_raw_queries_unless_told(tei_stub):
    with make(tei_stub, model_id="BAAI/bge-small-en-v1.5") as emb:
        emb.embed_query("hash a password")
        emb.embed_query("hash a password", instruction="Find code")
    with make(tei_stub, model_id="intfloat/e5-small", query_instruction="Find code") as emb:
        emb.embed_query("hash a password")
    assert tei_stub.embed_calls == [
        ["hash a password"],
        [format_query("hash a password", "Find code")],
        [format_query("hash a password", "Find code")],
    ]


def test_bad_settings_are_config_errors():
    with pytest.raises(ConfigError):
        TeiEmbedder("localhost:8080", "m", dimensions=4)
    with pytest.raises(ConfigError):
        TeiEmbedder("http://localhost:8080", "m", dimensions=4, batch_size=0)
