"""The service's settings, all from the environment (the compose file sets them)."""
from __future__ import annotations

import os
from dataclasses import dataclass

DEFAULT_INSTRUCTION = "Given a code search query, retrieve relevant code snippets or documentation that answer it"


def _int(env: dict, key: str, default: int) -> int:
    try:
        value = int(env.get(key, default))
    except ValueError:
        raise SystemExit(f"{key} must be an integer") from None
    if value < 1:
        raise SystemExit(f"{key} must be at least 1")
    return value


def _float(env: dict, key: str, default: float) -> float:
    try:
        value = float(env.get(key, default))
    except ValueError:
        raise SystemExit(f"{key} must be a number of seconds") from None
    if value <= 0:
        raise SystemExit(f"{key} must be positive")
    return value


@dataclass(frozen=True)
class Settings:
    model: str = "Qwen/Qwen3-Reranker-0.6B"
    kind: str | None = None  # qwen3 | zerank; None: from the model id
    device: str = "auto"  # auto | cpu | cuda | cuda:1
    dtype: str = "auto"  # auto | float32 | bfloat16 | float16
    max_length: int = 2048  # tokens per (instruction, query, document) prompt; documents are cut to fit
    batch_size: int = 16
    max_documents: int = 128
    max_query_chars: int = 4000
    queue_timeout_s: float = 30.0  # longest a request waits for the model to be free
    request_timeout_s: float = 60.0  # longest one request may spend scoring
    api_key: str | None = None
    default_instruction: str = DEFAULT_INSTRUCTION
    host: str = "127.0.0.1"
    port: int = 8081

    @classmethod
    def from_env(cls, env: dict | None = None) -> Settings:
        env = dict(os.environ if env is None else env)
        return cls(
            model=env.get("RERANKER_MODEL", cls.model),
            kind=env.get("RERANKER_KIND") or None,
            device=env.get("RERANKER_DEVICE", "auto"),
            dtype=env.get("RERANKER_DTYPE", "auto"),
            max_length=_int(env, "RERANKER_MAX_LENGTH", cls.max_length),
            batch_size=_int(env, "RERANKER_BATCH_SIZE", cls.batch_size),
            max_documents=_int(env, "RERANKER_MAX_DOCUMENTS", cls.max_documents),
            queue_timeout_s=_float(env, "RERANKER_QUEUE_TIMEOUT_S", cls.queue_timeout_s),
            request_timeout_s=_float(env, "RERANKER_REQUEST_TIMEOUT_S", cls.request_timeout_s),
            api_key=env.get("RERANKER_API_KEY") or None,
            default_instruction=env.get("RERANKER_DEFAULT_INSTRUCTION", DEFAULT_INSTRUCTION),
            host=env.get("HOST", cls.host),
            port=_int(env, "PORT", cls.port),
        )
