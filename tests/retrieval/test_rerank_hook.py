"""Quality mode through a real HTTP reranker on 127.0.0.1: reorders the head, falls back on timeout."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from probe_core import Workspace, index_workspace, search


class _Reranker(BaseHTTPRequestHandler):
    delay = 0.0
    favourite = "router/mux.go"  # scores documents that mention "ServeHTTP" highest
    calls: list[dict] = []

    def do_POST(self):  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls.append(body)
        time.sleep(type(self).delay)
        scores = [1.0 if "ServeHTTP" in d else 0.1 / (i + 1) for i, d in enumerate(body["documents"])]
        data = json.dumps({"scores": scores}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def reranker():
    _Reranker.delay, _Reranker.calls = 0.0, []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Reranker)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


def test_quality_mode_reorders_with_scores_and_fast_mode_does_not(repo, reranker, monkeypatch):
    monkeypatch.setenv("RERANKER_URL", reranker)
    ws = Workspace.open(repo)
    index_workspace(ws)
    q = "hash a password with a salt"
    fast = search(ws, q, mode="fast")
    assert fast.results[0].path == "src/auth/passwords.py" and not _Reranker.calls
    quality = search(ws, q, mode="quality", instruction="prefer HTTP code")
    assert quality.results[0].path == "router/mux.go"
    assert quality.results[0].signals["rerank_score"] == 1.0
    assert _Reranker.calls[0]["instruction"] == "prefer HTTP code"
    assert 1 <= len(_Reranker.calls[0]["documents"]) <= 25
    assert search(ws, q).mode == "quality"  # auto means quality when a reranker is configured
    ws.close()


def test_slow_reranker_falls_back_to_rrf_order(repo, reranker, monkeypatch):
    monkeypatch.setenv("RERANKER_URL", reranker)
    _Reranker.delay = 1.0  # the client's deadline is 300 ms
    ws = Workspace.open(repo)
    index_workspace(ws)
    resp = search(ws, "hash a password with a salt", mode="quality")
    assert resp.results[0].path == "src/auth/passwords.py"
    assert "RRF order kept" in resp.message and "rerank_score" not in resp.results[0].signals
    ws.close()


def test_quality_without_reranker_says_so(repo):
    ws = Workspace.open(repo)
    index_workspace(ws)
    resp = search(ws, "router", mode="quality")
    assert "no reranker configured" in resp.message and resp.mode == "quality"
    ws.close()
