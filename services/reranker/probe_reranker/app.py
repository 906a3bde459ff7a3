"""The HTTP API: ``POST /rerank`` and ``GET /health``.

One model, one lock: requests are scored one at a time (the GPU batches inside a request); a
request that cannot get the model within ``queue_timeout_s``, or whose scoring runs past
``request_timeout_s``, gets 503 and the client keeps its own order.
"""
from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI, Header, HTTPException
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from .scoring import DeadlineExceeded, Scorer, load_scorer
from .settings import Settings

log = logging.getLogger("probe_reranker")


class RerankRequest(BaseModel):
    query: str = Field(min_length=1)
    documents: list[str]
    instruction: str | None = None
    top_n: int | None = Field(default=None, ge=1)


class RerankResponse(BaseModel):
    model: str
    scores: list[float]  # in the order of the request's documents
    indices: list[int]  # documents by descending score (the first top_n when top_n is given)
    took_ms: float


def _default_loader(settings: Settings) -> Scorer:
    return load_scorer(settings.model, kind=settings.kind, device=settings.device, dtype=settings.dtype,
                       max_length=settings.max_length, batch_size=settings.batch_size,
                       default_instruction=settings.default_instruction)


class _State:
    def __init__(self) -> None:
        self.scorer: Scorer | None = None
        self.error: str | None = None
        self.lock = threading.Lock()
        self.loaded = threading.Event()


def create_app(settings: Settings | None = None, *, scorer: Scorer | None = None,
               loader: Callable[[Settings], Scorer] | None = None) -> FastAPI:
    """The service. ``scorer`` skips loading (tests); otherwise the model loads in the background
    at startup, and ``/health`` answers 503 "loading" until it is ready."""
    settings = settings or Settings.from_env()
    state = _State()
    loader = loader or _default_loader

    def load() -> None:
        try:
            state.scorer = loader(settings)
            log.info("loaded %s (%s) on %s", settings.model, state.scorer.kind, state.scorer.device)
        except Exception as exc:
            log.exception("loading %s failed", settings.model)
            state.error = f"{type(exc).__name__}: {exc}"
        finally:
            state.loaded.set()

    @asynccontextmanager
    async def lifespan(_: FastAPI):
        if scorer is not None:
            state.scorer = scorer
            state.loaded.set()
        else:
            threading.Thread(target=load, name="load-model", daemon=True).start()
        yield

    app = FastAPI(title="Probe reranker", version="0.1.0", lifespan=lifespan)
    app.state.reranker = state

    @app.get("/health")
    def health():
        if state.scorer is not None:
            s = state.scorer
            return {"status": "ok", "model": s.model_id or settings.model, "kind": s.kind, "device": s.device,
                    "max_length": settings.max_length, "batch_size": settings.batch_size}
        if state.error:
            return JSONResponse({"status": "error", "model": settings.model, "error": state.error}, status_code=503)
        return JSONResponse({"status": "loading", "model": settings.model}, status_code=503)

    @app.post("/rerank", response_model=RerankResponse)
    def rerank(req: RerankRequest, authorization: str | None = Header(default=None)) -> RerankResponse:
        if settings.api_key and not secrets.compare_digest(authorization or "", f"Bearer {settings.api_key}"):
            raise HTTPException(401, "missing or wrong API key (Authorization: Bearer ...)")
        if len(req.documents) > settings.max_documents:
            raise HTTPException(413, f"at most {settings.max_documents} documents per request")
        if len(req.query) > settings.max_query_chars:
            raise HTTPException(413, f"the query is longer than {settings.max_query_chars} characters")
        if state.scorer is None:
            raise HTTPException(503, state.error or "the model is still loading")
        t0 = time.monotonic()
        if not state.lock.acquire(timeout=settings.queue_timeout_s):
            raise HTTPException(503, f"busy: the model was not free within {settings.queue_timeout_s:g}s")
        try:
            scores = state.scorer.score(req.query, req.documents, req.instruction,
                                        deadline=t0 + settings.request_timeout_s)
        except DeadlineExceeded as exc:
            raise HTTPException(503, f"timed out after {settings.request_timeout_s:g}s: {exc}") from None
        except ValueError as exc:
            raise HTTPException(422, str(exc)) from None
        finally:
            state.lock.release()
        indices = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        if req.top_n is not None:
            indices = indices[:req.top_n]
        return RerankResponse(model=state.scorer.model_id or settings.model, scores=scores, indices=indices,
                              took_ms=round((time.monotonic() - t0) * 1000, 2))

    return app
