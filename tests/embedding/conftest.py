"""A real, deterministic TEI-compatible HTTP server on 127.0.0.1 for the TEI client tests."""
from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest


def stub_vector(text: str, dims: int) -> np.ndarray:
    """The stub's embedding of ``text``: a unit vector seeded by the text's sha256."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    v = np.random.default_rng(seed).standard_normal(dims).astype(np.float32)
    return v / np.linalg.norm(v)


class StubTei:
    """State and knobs of the stub server; the handler reads them under ``lock``.

    ``fail_first`` /embed calls answer ``fail_status``; each /embed sleeps ``delay`` seconds
    (or ``delay_for(inputs)`` if set); batches over ``max_client_batch_size`` get HTTP 413.
    """

    def __init__(self, dims: int = 8, model_id: str = "stub/embedder") -> None:
        self.dims = dims
        self.model_id = model_id
        self.lock = threading.Lock()
        self.embed_calls: list[list[str]] = []
        self.bodies: list[dict] = []
        self.auth_headers: list[str | None] = []
        self.fail_first = 0
        self.fail_status = 503
        self.delay = 0.0
        self.delay_for = None
        self.max_client_batch_size: int | None = None
        self.in_flight = 0
        self.max_in_flight = 0
        self.url = ""

    def expected(self, texts: list[str]) -> np.ndarray:
        return np.stack([stub_vector(t, self.dims) for t in texts])


def _handler_for(stub: StubTei) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # keep pytest output quiet
            pass

        counted = False  # this request is in ``stub.in_flight``

        def _leave(self) -> None:
            """Out of ``in_flight`` before the answer is written: once the client has read it, it may
            send its next request at once, and that one must not be counted beside this one."""
            if self.counted:
                with stub.lock:
                    stub.in_flight -= 1
                self.counted = False

        def _send(self, status: int, body: object) -> None:
            self._leave()
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            try:
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (the timeout tests)

        def do_GET(self) -> None:
            if self.path == "/info":
                self._send(200, {
                    "model_id": stub.model_id,
                    "model_dtype": "float32",
                    "max_concurrent_requests": 512,
                    "max_input_length": 512,
                    "max_batch_tokens": 16384,
                    "max_client_batch_size": stub.max_client_batch_size or 32,
                    "version": "1.8.0-stub",
                })
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path != "/embed":
                self._send(404, {"error": "not found"})
                return
            inputs = body["inputs"]
            with stub.lock:
                n = len(stub.embed_calls)
                stub.embed_calls.append(list(inputs))
                stub.bodies.append(body)
                stub.auth_headers.append(self.headers.get("Authorization"))
                stub.in_flight += 1
                stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
                self.counted = True
            try:
                if n < stub.fail_first:
                    self._send(stub.fail_status, {"error": "model is warming up", "error_type": "Unhealthy"})
                    return
                time.sleep(stub.delay_for(inputs) if stub.delay_for else stub.delay)
                limit = stub.max_client_batch_size
                if limit and len(inputs) > limit:
                    message = f"batch size {len(inputs)} > maximum allowed batch size {limit}"
                    self._send(413, {"error": message, "error_type": "Validation"})
                    return
                if any(t == "" for t in inputs):
                    self._send(400, {"error": "`inputs` cannot be empty", "error_type": "Empty"})
                    return
                if any(t == "__413__" for t in inputs):
                    message = "`inputs` must have less than 512 tokens. Given: 900"
                    self._send(413, {"error": message, "error_type": "Validation"})
                    return
                if any(t == "__422__" for t in inputs):
                    self._send(422, {"error": "input is invalid", "error_type": "Validation"})
                    return
                self._send(200, [stub_vector(t, stub.dims).tolist() for t in inputs])
            finally:
                self._leave()

    return Handler


@pytest.fixture
def tei_stub() -> Iterator[StubTei]:
    """A running stub TEI server; ``stub.url`` is its base URL."""
    stub = StubTei()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(stub))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    stub.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def dead_url() -> str:
    """A loopback URL nothing listens on (the port was free a moment ago)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"
