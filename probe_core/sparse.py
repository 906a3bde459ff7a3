"""Code-aware BM25 sparse vectors, computed in-process for documents and queries alike.

Identifiers are split on camelCase / PascalCase / snake_case / digits while the whole identifier
is kept too (``getUserName`` → getusername, get, user, name); no stemming and no stop words, since
``get``/``set``/``is`` carry meaning in code. The store applies IDF (``Modifier.IDF``), so both
the embedded Qdrant Edge shard and a Qdrant server score identically. Document weights use BM25
TF saturation with ``avg_len`` measured on the corpus at first index and recorded in the manifest.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from qdrant_edge import Bm25, Bm25Config, DisabledStemmer, StopwordsSet, TokenizerType

DEFAULT_AVG_LEN = 120.0
BM25_K = 1.2
BM25_B = 0.75


@dataclass(frozen=True, slots=True)
class SparseVec:
    """A store-independent sparse vector (token ids → weights)."""

    indices: list[int]
    values: list[float]

    def __len__(self) -> int:
        return len(self.indices)


@lru_cache(maxsize=8)
def _model(avg_len: float) -> Bm25:
    return Bm25(
        Bm25Config(
            k=BM25_K,
            b=BM25_B,
            avg_len=avg_len,
            tokenizer=TokenizerType.Code,
            stemmer=DisabledStemmer(),
            stopwords=StopwordsSet(custom=set()),
            lowercase=True,
            max_token_len=64,
        )
    )


def _convert(v) -> SparseVec:
    return SparseVec(list(v.indices), [float(x) for x in v.values])


def embed_document(text: str, avg_len: float = DEFAULT_AVG_LEN) -> SparseVec:
    """BM25 term weights of one chunk."""
    return _convert(_model(float(avg_len)).embed_document(text))


def embed_query(text: str) -> SparseVec:
    """Query tokens, each with weight 1.0 (IDF is applied by the store)."""
    return _convert(_model(DEFAULT_AVG_LEN).embed_query(text))


_WORD = re.compile(r"[A-Za-z0-9_]+")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def token_count(text: str) -> int:
    """Approximate BM25 document length: each word, plus its sub-words when it splits."""
    n = 0
    for word in _WORD.findall(text):
        parts = len(_PART.findall(word))
        n += 1 + (parts if parts > 1 else 0)
    return n


def estimate_avg_len(texts: list[str]) -> float:
    """Average document length in code tokens over (a sample of) the corpus."""
    if not texts:
        return DEFAULT_AVG_LEN
    sample = texts[:: max(1, len(texts) // 2000)]
    return max(8.0, sum(token_count(t) for t in sample) / len(sample))
