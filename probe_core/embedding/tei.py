"""Embeddings from a Text Embeddings Inference (TEI) server over HTTP.

TEI's API: ``POST /embed`` with ``{"inputs": [...], "normalize": true, "truncate": true}``
answers a list of vectors in input order; ``GET /info`` describes the served model. The
interface stays synchronous; batches go out on a small thread pool so a GPU server sees
``max_concurrency`` requests in flight and can batch across them.
"""
from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import numpy as np

from probe_core.embedding._pooling import l2_normalise
from probe_core.embedding._text import encodable
from probe_core.errors import BackendUnavailable, ConfigError, EmbeddingError, ProbeError
from probe_core.redaction import redact

#: The task Qwen3-Embedding's model card recommends phrasing per use; this one is ours.
DEFAULT_CODE_SEARCH_TASK = (
    "Given a code search query, retrieve relevant code snippets or documentation that answer it"
)

# Statuses worth another try: the server is overloaded, restarting or briefly unhealthy.
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# Longest we sleep between tries, whatever Retry-After says: indexing should fail visibly.
_MAX_BACKOFF_S = 30.0


def format_query(query: str, task: str) -> str:
    """The Qwen3-Embedding query template (documents are embedded without one)."""
    return f"Instruct: {task}\nQuery:{query}"


@dataclass(frozen=True)
class TeiInfo:
    """What ``GET /info`` says about the served model (fields TEI may omit are None)."""

    model_id: str
    max_input_length: int | None
    max_client_batch_size: int | None
    max_batch_tokens: int | None
    version: str | None


class _Retryable(ProbeError):
    """One attempt failed in a way another attempt may fix."""

    def __init__(self, message: str, *, unreachable: bool, retry_after: float | None = None):
        super().__init__(message)
        self.unreachable = unreachable
        self.retry_after = retry_after


class _BatchTooLarge(ProbeError):
    """HTTP 413 about the batch size: the server's max_client_batch_size is below ours."""


class TeiEmbedder:
    """An ``Embedder`` backed by a TEI server.

    ``model_id`` is the index identity recorded in the manifest (use the id TEI serves, see
    :meth:`info`). With ``dimensions=None`` the constructor embeds one probe text to learn the
    vector size, so a server that is down fails here, with ``BackendUnavailable``.

    Queries for Qwen3-Embedding models (``"qwen"`` in the id) are wrapped in the model's
    instruction template; ``query_instruction`` sets the task for any model.
    """

    def __init__(
        self,
        base_url: str,
        model_id: str,
        dimensions: int | None = None,
        api_key: str | None = None,
        batch_size: int = 32,
        max_concurrency: int = 4,
        timeout: float = 30,
        retries: int = 3,
        query_instruction: str | None = None,
        *,
        backoff_s: float = 0.5,
    ) -> None:
        """Check the settings and, when ``dimensions`` is None, ask the server for one vector."""
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"TEI url must start with http:// or https://, got {base_url!r}")
        if batch_size < 1 or max_concurrency < 1 or retries < 0 or timeout <= 0 or dimensions == 0:
            raise ConfigError(
                "TEI settings out of range: batch_size, max_concurrency and dimensions must be >= 1, "
                "retries >= 0, timeout > 0"
            )
        self.base_url = base_url.rstrip("/")
        self.model_id = model_id
        self.batch_size = batch_size
        self.max_concurrency = max_concurrency
        self.timeout = timeout
        self.retries = retries
        self.query_instruction = query_instruction
        self.backoff_s = backoff_s
        headers = {"User-Agent": "probe"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.Client(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout),
            limits=httpx.Limits(max_connections=max_concurrency, max_keepalive_connections=max_concurrency),
        )
        # 0 means "not known yet": _embed_batch checks the width only once it is known.
        self.dimensions: int = dimensions or 0
        if dimensions is None:
            try:
                self.dimensions = int(self._embed_batch(["probe"]).shape[1])
            except BaseException:
                self._client.close()
                raise

    # -- public API (the Embedder protocol) ---------------------------------------------

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """Embed chunks as sent (no instruction); float32 ``(len(texts), dimensions)``, order kept."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        batches = [texts[i : i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        if len(batches) == 1 or self.max_concurrency == 1:
            parts = [self._embed_batch(b) for b in batches]
        else:
            with ThreadPoolExecutor(
                max_workers=min(self.max_concurrency, len(batches)), thread_name_prefix="probe-tei"
            ) as pool:
                futures = [pool.submit(self._embed_batch, b) for b in batches]
                try:
                    parts = [f.result() for f in futures]  # in submission order: input order
                except BaseException:
                    for f in futures:
                        f.cancel()
                    raise
        return np.concatenate(parts)

    def embed_query(self, text: str, instruction: str | None = None) -> np.ndarray:
        """Embed one query, shape ``(dimensions,)``, instruction-templated where the model wants it.

        The task is ``instruction`` if given, else ``query_instruction``, else (Qwen models
        only) :data:`DEFAULT_CODE_SEARCH_TASK`; with none of these the query is sent raw.
        """
        task = instruction or self.query_instruction
        if task is None and "qwen" in self.model_id.lower():
            task = DEFAULT_CODE_SEARCH_TASK
        payload = format_query(text, task) if task else text
        return self._embed_batch([payload])[0]

    # -- extras ------------------------------------------------------------------------

    def info(self) -> TeiInfo:
        """``GET /info``: the served model id and the server's limits."""
        body = self._request("GET", "/info", None)
        if not isinstance(body, dict) or not isinstance(body.get("model_id"), str):
            raise EmbeddingError(f"TEI at {self.base_url}/info answered something that is not TEI's info")

        def _int(key: str) -> int | None:
            value = body.get(key)
            return value if isinstance(value, int) else None

        version = body.get("version")
        return TeiInfo(
            model_id=body["model_id"],
            max_input_length=_int("max_input_length"),
            max_client_batch_size=_int("max_client_batch_size"),
            max_batch_tokens=_int("max_batch_tokens"),
            version=version if isinstance(version, str) else None,
        )

    def close(self) -> None:
        """Close the pooled HTTP connections."""
        self._client.close()

    def __enter__(self) -> TeiEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -----------------------------------------------------------------------

    def _embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        # TEI refuses an empty string ("`inputs` cannot be empty"); a space embeds as the model's
        # special tokens alone, the same thing an in-process model gives for "".
        inputs = [t if t else " " for t in encodable(list(texts))]
        payload = {"inputs": inputs, "normalize": True, "truncate": True}
        try:
            body = self._request("POST", "/embed", payload)
        except _BatchTooLarge:
            if len(texts) == 1:
                raise EmbeddingError(
                    f"TEI at {self.base_url} refuses even a batch of one text (HTTP 413)"
                ) from None
            # The server's max_client_batch_size is smaller than ours: halve until it fits.
            mid = len(texts) // 2
            return np.concatenate([self._embed_batch(texts[:mid]), self._embed_batch(texts[mid:])])
        if (
            not isinstance(body, list)
            or len(body) != len(texts)
            or not all(isinstance(v, list) and v for v in body)
            or len({len(v) for v in body}) != 1
        ):
            raise EmbeddingError(
                f"TEI at {self.base_url}/embed answered {len(texts)} texts with something other "
                f"than {len(texts)} equal-length vectors"
            )
        try:
            vectors = np.asarray(body, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise EmbeddingError(f"TEI at {self.base_url}/embed returned non-numeric vectors") from exc
        if self.dimensions and vectors.shape[1] != self.dimensions:
            raise EmbeddingError(
                f"TEI at {self.base_url} returned {vectors.shape[1]}-d vectors, expected "
                f"{self.dimensions}-d for {self.model_id}: is another model being served?"
            )
        # normalize=true asks TEI to do this; TEI-compatible servers may ignore the flag.
        return l2_normalise(vectors)

    def _request(self, method: str, path: str, payload: dict[str, Any] | None) -> Any:
        """One call with retries and exponential backoff; returns the decoded JSON body."""
        url = f"{self.base_url}{path}"
        last: _Retryable | None = None
        for attempt in range(self.retries + 1):
            if last is not None:
                delay = self.backoff_s * 2 ** (attempt - 1) * (1 + random.random() / 4)
                if last.retry_after is not None:
                    delay = max(delay, last.retry_after)
                time.sleep(min(delay, _MAX_BACKOFF_S))
            try:
                return self._attempt(method, url, path, payload)
            except _Retryable as exc:
                last = exc
        assert last is not None
        tries = f"after {self.retries + 1} attempt{'s' if self.retries else ''}"
        if last.unreachable:
            raise BackendUnavailable(f"{last} {tries}")
        raise EmbeddingError(f"{last} {tries}")

    def _attempt(self, method: str, url: str, path: str, payload: dict[str, Any] | None) -> Any:
        try:
            response = self._client.request(method, path, json=payload)
        except httpx.TimeoutException as exc:
            raise _Retryable(
                f"TEI at {url} did not answer within {self.timeout:g}s ({type(exc).__name__})",
                unreachable=isinstance(exc, httpx.ConnectTimeout),
            ) from exc
        except (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            raise _Retryable(f"cannot reach TEI at {url}: {exc}", unreachable=True) from exc
        except httpx.HTTPError as exc:
            raise BackendUnavailable(f"cannot reach TEI at {url}: {exc}") from exc

        status = response.status_code
        # TEI answers 413 for every validation error; only the batch-size one is ours to fix.
        if status == 413 and "batch size" in _error_text(response):
            raise _BatchTooLarge()
        if status in _RETRY_STATUSES:
            raise _Retryable(
                f"TEI at {url} answered HTTP {status}: {_error_text(response)}",
                unreachable=status == 503,
                retry_after=_retry_after(response),
            )
        if status in (401, 403):
            raise BackendUnavailable(
                f"TEI at {url} refused the API key (HTTP {status}): check the TEI api key setting"
            )
        if status == 404:
            raise BackendUnavailable(f"{url} is not found (HTTP 404): is this a TEI server?")
        if status >= 400:
            raise EmbeddingError(f"TEI at {url} answered HTTP {status}: {_error_text(response)}")
        try:
            return response.json()
        except ValueError as exc:
            raise EmbeddingError(f"TEI at {url} answered HTTP {status} with a body that is not JSON") from exc


def _error_text(response: httpx.Response) -> str:
    """TEI's ``{"error": ..., "error_type": ...}`` message, or the start of the raw body."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return redact(body["error"])
    return redact(response.text[:200].strip()) or response.reason_phrase  # a proxy may echo the key


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None  # the HTTP-date form: fall back to our own backoff
    return seconds if math.isfinite(seconds) and seconds >= 0 else None
