"""Client of ``services/reranker``: scores for the top candidates, within a hard deadline.

Reranking is an improvement, never a dependency: when the service is slow, down or answers
nonsense, :meth:`RerankClient.rerank` returns None and search keeps its RRF order.
:meth:`RerankClient.rerank_or_raise` raises :class:`RerankUnavailable` instead, for callers
(the doctor) that want the reason.

The deadline is the caller's: the request runs on a small worker pool and the caller waits at
most ``timeout_s``. httpx's own timeouts (a few times larger) only bound how long an abandoned
request keeps its worker.
"""
from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass

import httpx

from ..errors import BackendUnavailable, ConfigError
from ..redaction import redact

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 0.3
#: quality mode reranks only this many of the fused candidates (RRF order below them is kept)
QUALITY_TOP_N = 20
QUALITY_MIN, QUALITY_MAX = 15, 25
#: characters of each candidate sent to the service (it truncates by tokens too)
MAX_DOC_CHARS = 4000


class RerankUnavailable(BackendUnavailable):
    """The reranker did not give usable scores in time; search falls back to RRF order."""


def candidates_to_rerank(available: int, top_n: int = QUALITY_TOP_N) -> int:
    """How many of ``available`` fused candidates quality mode reranks (15–25, never more than exist)."""
    return max(0, min(available, max(QUALITY_MIN, min(QUALITY_MAX, top_n))))


def order_by_scores(scores: Sequence[float]) -> list[int]:
    """Indices, best score first; ties keep the incoming (RRF) order."""
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


@dataclass(frozen=True, slots=True)
class RerankHealth:
    status: str
    model: str | None
    detail: dict


class RerankClient:
    """HTTP client of one reranker service. Thread-safe; keep one per process."""

    def __init__(self, base_url: str, *, timeout_s: float = DEFAULT_TIMEOUT_S, api_key: str | None = None,
                 max_workers: int = 2) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"reranker url must start with http:// or https://, got {base_url!r}")
        if not (timeout_s > 0 and math.isfinite(timeout_s)):
            raise ConfigError("reranker timeout must be a positive number of seconds")
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        headers = {"User-Agent": "probe"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        # generous transport timeouts: they only free a worker whose caller has given up
        cleanup = max(2.0, timeout_s * 4)
        self._http = httpx.Client(base_url=self.base_url, headers=headers, timeout=httpx.Timeout(cleanup),
                                  limits=httpx.Limits(max_connections=max_workers + 2))
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="probe-rerank")
        self._lock = threading.Lock()
        self.last_error: str | None = None
        self.last_latency_ms: float | None = None

    # -- public --------------------------------------------------------------------------------
    def rerank(self, query: str, documents: Sequence[str], instruction: str | None = None, *,
               timeout_s: float | None = None) -> list[float] | None:
        """Relevance scores in ``documents`` order, or None (timeout, unreachable, bad answer)."""
        try:
            return self.rerank_or_raise(query, documents, instruction, timeout_s=timeout_s)
        except RerankUnavailable as exc:
            log.info("rerank skipped, keeping RRF order: %s", exc)
            return None

    def rerank_or_raise(self, query: str, documents: Sequence[str], instruction: str | None = None, *,
                        timeout_s: float | None = None) -> list[float]:
        """Like :meth:`rerank`, raising :class:`RerankUnavailable` with the reason."""
        if not documents:
            return []
        payload: dict = {"query": query, "documents": [d[:MAX_DOC_CHARS] for d in documents]}
        if instruction:
            payload["instruction"] = instruction
        deadline = self.timeout_s if timeout_s is None else timeout_s
        t0 = time.perf_counter()
        future: Future = self._pool.submit(self._post, payload)
        try:
            body = future.result(timeout=deadline)
        except FutureTimeout:
            future.cancel()
            raise self._fail(f"the reranker at {self.base_url} did not answer within {deadline * 1000:.0f} ms") from None
        except (httpx.HTTPError, ValueError) as exc:  # ValueError: a body that is not JSON
            raise self._fail(f"the reranker at {self.base_url} failed: {type(exc).__name__}: {exc}") from exc
        scores = body.get("scores") if isinstance(body, dict) else None
        if (not isinstance(scores, list) or len(scores) != len(documents)
                or not all(isinstance(s, (int, float)) and math.isfinite(s) for s in scores)):
            raise self._fail(f"the reranker at {self.base_url} answered {len(documents)} documents with something "
                             "other than as many finite scores")
        self.last_latency_ms = (time.perf_counter() - t0) * 1000
        self.last_error = None
        return [float(s) for s in scores]

    def health(self, timeout_s: float = 2.0) -> RerankHealth:
        """``GET /health`` (``RerankUnavailable`` when it does not answer 200)."""
        try:
            r = self._http.get("/health", timeout=timeout_s)
        except httpx.HTTPError as exc:
            raise RerankUnavailable(f"cannot reach the reranker at {self.base_url}: {type(exc).__name__}") from exc
        try:
            body = r.json()
        except ValueError:
            body = {}
        if r.status_code != 200:
            status = body.get("status") if isinstance(body, dict) else None
            raise RerankUnavailable(f"the reranker at {self.base_url} is not ready (HTTP {r.status_code}"
                                    + (f", {status}" if status else "") + ")")
        body = body if isinstance(body, dict) else {}
        return RerankHealth(status=str(body.get("status", "ok")), model=body.get("model"), detail=body)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._http.close()

    def __enter__(self) -> RerankClient:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -----------------------------------------------------------------------------
    def _post(self, payload: dict) -> dict:
        r = self._http.post("/rerank", json=payload)
        if r.status_code != 200:
            raise httpx.HTTPStatusError(f"HTTP {r.status_code}: {redact(r.text[:200])}", request=r.request, response=r)
        return r.json()

    def _fail(self, message: str) -> RerankUnavailable:
        with self._lock:
            self.last_error = message
        return RerankUnavailable(message)


_clients: dict[tuple[str, str | None, float], RerankClient] = {}
_clients_lock = threading.Lock()


def client_for(url: str, api_key: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> RerankClient:
    """A shared client per (url, key, timeout): connections stay warm across searches."""
    key = (url, api_key, timeout_s)
    with _clients_lock:
        if key not in _clients:
            _clients[key] = RerankClient(url, timeout_s=timeout_s, api_key=api_key)
        return _clients[key]


def rerank(query: str, documents: Sequence[str], instruction: str | None = None, *, url: str,
           api_key: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> list[float] | None:
    """Scores for ``documents`` (input order) from the reranker at ``url``, or None to keep RRF order."""
    return client_for(url, api_key, timeout_s).rerank(query, documents, instruction)
