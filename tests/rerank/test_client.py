"""The rerank client against a real HTTP server on 127.0.0.1: scores, deadline, fallback to RRF order."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from probe_core.errors import BackendUnavailable, ConfigError
from probe_core.rerank import (
    RerankClient,
    RerankUnavailable,
    candidates_to_rerank,
    order_by_scores,
    rerank,
)
from probe_core.rerank.client import MAX_DOC_CHARS


class FakeReranker(BaseHTTPRequestHandler):
    """Scores = document length / 1000; ``mode`` on the server switches behaviours."""

    def log_message(self, *args):
        pass

    def _send(self, status, body, raw=False):
        data = body if raw else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            self._send(200, {"status": "ok", "model": "fake-reranker"})
        else:
            self._send(404, {})

    def do_POST(self):
        srv = self.server
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        srv.requests.append((req, dict(self.headers)))
        if srv.mode == "slow":
            time.sleep(srv.delay)
        if srv.mode == "error":
            return self._send(500, {"detail": "boom"})
        if srv.mode == "garbage":
            return self._send(200, b"not json", raw=True)
        scores = [len(d) / 1000 for d in req["documents"]]
        if srv.mode == "short":
            scores = scores[:-1]
        self._send(200, {"model": "fake", "scores": scores, "indices": order_by_scores(scores)})


@pytest.fixture
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), FakeReranker)
    srv.mode, srv.delay, srv.requests = "ok", 1.0, []
    srv.daemon_threads = True
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def url(srv) -> str:
    return f"http://127.0.0.1:{srv.server_address[1]}"


DOCS = ["a", "abcd", "ab"]


def test_scores_in_input_order(server):
    with RerankClient(url(server)) as c:
        assert c.rerank("q", DOCS, "prefer code") == pytest.approx([0.001, 0.004, 0.002])
        assert c.last_error is None and c.last_latency_ms is not None
    req, _ = server.requests[-1]
    assert req == {"query": "q", "documents": DOCS, "instruction": "prefer code"}
    assert order_by_scores([0.001, 0.004, 0.002]) == [1, 2, 0]


def test_no_instruction_is_not_sent(server):
    with RerankClient(url(server)) as c:
        c.rerank("q", DOCS)
    assert "instruction" not in server.requests[-1][0]


def test_slow_server_falls_back_within_the_default_300_ms(server):
    server.mode = "slow"
    with RerankClient(url(server)) as c:
        assert c.timeout_s == 0.3
        t0 = time.perf_counter()
        assert c.rerank("q", DOCS) is None
        elapsed = time.perf_counter() - t0
        assert "300 ms" in c.last_error
    assert 0.25 <= elapsed < 0.6


def test_slow_server_raises_the_specific_error(server):
    server.mode = "slow"
    with RerankClient(url(server), timeout_s=0.1) as c, pytest.raises(RerankUnavailable, match="100 ms"):
        c.rerank_or_raise("q", DOCS)
    assert issubclass(RerankUnavailable, BackendUnavailable)


def test_a_generous_timeout_waits_for_a_slow_server(server):
    server.mode, server.delay = "slow", 0.2
    with RerankClient(url(server), timeout_s=2.0) as c:
        assert c.rerank("q", DOCS) == pytest.approx([0.001, 0.004, 0.002])


@pytest.mark.parametrize("mode", ["error", "garbage", "short"])
def test_bad_answers_fall_back(server, mode):
    server.mode = mode
    with RerankClient(url(server), timeout_s=2.0) as c:
        assert c.rerank("q", DOCS) is None
        assert c.last_error
        with pytest.raises(RerankUnavailable):
            c.rerank_or_raise("q", DOCS)


def test_unreachable_service_falls_back():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with RerankClient(f"http://127.0.0.1:{port}") as c:
        assert c.rerank("q", DOCS) is None
        with pytest.raises(RerankUnavailable):
            c.health()


def test_health_and_api_key(server):
    with RerankClient(url(server), api_key="k3y") as c:
        assert c.health().model == "fake-reranker"
        c.rerank("q", DOCS)
    assert server.requests[-1][1].get("Authorization") == "Bearer k3y"


def test_documents_are_capped_before_sending(server):
    with RerankClient(url(server)) as c:
        c.rerank("q", ["x" * (MAX_DOC_CHARS + 500)])
    assert len(server.requests[-1][0]["documents"][0]) == MAX_DOC_CHARS


def test_empty_documents_need_no_request(server):
    with RerankClient(url(server)) as c:
        assert c.rerank("q", []) == []
    assert server.requests == []


def test_module_level_rerank(server):
    assert rerank("q", DOCS, "i", url=url(server)) == pytest.approx([0.001, 0.004, 0.002])
    server.mode = "slow"
    assert rerank("q", DOCS, None, url=url(server)) is None


def test_quality_mode_reranks_15_to_25():
    assert candidates_to_rerank(100) == 20
    assert candidates_to_rerank(100, top_n=50) == 25
    assert candidates_to_rerank(100, top_n=3) == 15
    assert candidates_to_rerank(7) == 7
    assert candidates_to_rerank(0) == 0


def test_ties_keep_rrf_order():
    assert order_by_scores([0.5, 0.9, 0.5, 0.9]) == [1, 3, 0, 2]


def test_bad_settings():
    with pytest.raises(ConfigError):
        RerankClient("localhost:8081")
    with pytest.raises(ConfigError):
        RerankClient("http://127.0.0.1:8081", timeout_s=0)
