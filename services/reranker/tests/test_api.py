"""The HTTP API in-process (FastAPI TestClient) over the tiny models."""
from __future__ import annotations

import threading

import pytest
from fastapi.testclient import TestClient
from probe_reranker.app import create_app
from probe_reranker.scoring import load_scorer
from probe_reranker.settings import Settings

DOCS = ["def parse_header(line): ...", "import os", "class RetryPolicy: pass", "x = 1"]


@pytest.fixture
def qwen3(qwen3_dir):
    return load_scorer(str(qwen3_dir), batch_size=2)


def client(scorer=None, **settings):
    return TestClient(create_app(Settings(**settings), scorer=scorer))


def test_rerank_returns_scores_in_input_order_and_sorted_indices(qwen3):
    with client(qwen3) as c:
        r = c.post("/rerank", json={"query": "parse header", "documents": DOCS, "instruction": "prefer code"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["scores"] == pytest.approx(qwen3.score("parse header", DOCS, "prefer code"), abs=1e-6)
    scores = body["scores"]
    assert body["indices"] == sorted(range(len(DOCS)), key=lambda i: -scores[i])
    assert sorted(body["indices"]) == list(range(len(DOCS)))
    assert body["took_ms"] >= 0 and body["model"]


def test_top_n_keeps_the_best(qwen3):
    with client(qwen3) as c:
        full = c.post("/rerank", json={"query": "q", "documents": DOCS}).json()
        top = c.post("/rerank", json={"query": "q", "documents": DOCS, "top_n": 2}).json()
    assert top["indices"] == full["indices"][:2]
    assert top["scores"] == pytest.approx(full["scores"])  # scores always cover every document


def test_the_instruction_is_passed_through(qwen3):
    with client(qwen3) as c:
        a = c.post("/rerank", json={"query": "q", "documents": DOCS[:2], "instruction": "prefer tests"}).json()
        b = c.post("/rerank", json={"query": "q", "documents": DOCS[:2]}).json()
    assert a["scores"] == pytest.approx(qwen3.score("q", DOCS[:2], "prefer tests"), abs=1e-6)
    assert a["scores"] != pytest.approx(b["scores"], abs=1e-7)


def test_zerank_behind_the_same_api(zerank_dir):
    z = load_scorer(str(zerank_dir))
    with client(z) as c:
        body = c.post("/rerank", json={"query": "q", "documents": DOCS, "instruction": "i"}).json()
        health = c.get("/health").json()
    assert body["scores"] == pytest.approx(z.score("q", DOCS, "i"), abs=1e-6)
    assert health["kind"] == "zerank"


def test_health_reports_the_model(qwen3, qwen3_dir):
    with client(qwen3) as c:
        h = c.get("/health")
    assert h.status_code == 200
    assert h.json()["status"] == "ok" and h.json()["model"] == str(qwen3_dir) and h.json()["kind"] == "qwen3"


def test_health_is_503_while_loading_then_ok(qwen3):
    release = threading.Event()

    def slow_loader(_settings):
        release.wait(10)
        return qwen3

    app = create_app(Settings(), loader=slow_loader)
    with TestClient(app) as c:
        assert c.get("/health").status_code == 503
        assert c.get("/health").json()["status"] == "loading"
        assert c.post("/rerank", json={"query": "q", "documents": ["d"]}).status_code == 503
        release.set()
        app.state.reranker.loaded.wait(10)
        assert c.get("/health").status_code == 200


def test_a_failed_load_is_reported_not_fatal():
    def broken(_settings):
        raise OSError("no such model: nowhere/none")

    app = create_app(Settings(model="nowhere/none"), loader=broken)
    with TestClient(app) as c:
        app.state.reranker.loaded.wait(10)
        h = c.get("/health")
        assert h.status_code == 503 and h.json()["status"] == "error" and "no such model" in h.json()["error"]


def test_limits_and_validation(qwen3):
    with client(qwen3, max_documents=3, max_query_chars=10) as c:
        assert c.post("/rerank", json={"query": "q", "documents": DOCS}).status_code == 413
        assert c.post("/rerank", json={"query": "q" * 11, "documents": ["d"]}).status_code == 413
        assert c.post("/rerank", json={"query": "", "documents": ["d"]}).status_code == 422
        assert c.post("/rerank", json={"documents": ["d"]}).status_code == 422
        assert c.post("/rerank", json={"query": "q", "documents": ["d"], "top_n": 0}).status_code == 422
        empty = c.post("/rerank", json={"query": "q", "documents": []}).json()
    assert empty["scores"] == [] and empty["indices"] == []


def test_query_too_long_for_max_length_is_422(qwen3_dir):
    s = load_scorer(str(qwen3_dir), max_length=64)
    with client(s) as c:
        r = c.post("/rerank", json={"query": "q" * 200, "documents": ["d"]})
    assert r.status_code == 422 and "max_length" in r.text


def test_busy_model_answers_503_after_the_queue_timeout(qwen3):
    app = create_app(Settings(queue_timeout_s=0.2), scorer=qwen3)
    with TestClient(app) as c:
        app.state.reranker.lock.acquire()
        try:
            r = c.post("/rerank", json={"query": "q", "documents": ["d"]})
        finally:
            app.state.reranker.lock.release()
    assert r.status_code == 503 and "busy" in r.text


def test_request_timeout_between_batches(qwen3_dir):
    s = load_scorer(str(qwen3_dir), batch_size=1)
    with client(s, request_timeout_s=1e-9) as c:
        r = c.post("/rerank", json={"query": "q", "documents": DOCS})
    assert r.status_code == 503 and "timed out" in r.text


def test_api_key(qwen3):
    with client(qwen3, api_key="s3cret") as c:
        assert c.post("/rerank", json={"query": "q", "documents": ["d"]}).status_code == 401
        bad = c.post("/rerank", json={"query": "q", "documents": ["d"]}, headers={"Authorization": "Bearer no"})
        assert bad.status_code == 401
        ok = c.post("/rerank", json={"query": "q", "documents": ["d"]}, headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200
        assert c.get("/health").status_code == 200  # health stays open for container healthchecks


def test_settings_from_env():
    s = Settings.from_env({"RERANKER_MODEL": "zeroentropy/zerank-2", "RERANKER_MAX_LENGTH": "512",
                           "RERANKER_BATCH_SIZE": "4", "PORT": "9000", "RERANKER_API_KEY": "k"})
    assert (s.model, s.max_length, s.batch_size, s.port, s.api_key) == ("zeroentropy/zerank-2", 512, 4, 9000, "k")
    with pytest.raises(SystemExit):
        Settings.from_env({"RERANKER_BATCH_SIZE": "0"})


def test_the_module_entry_point_imports():
    import probe_reranker.__main__ as entry

    assert callable(entry.main)
