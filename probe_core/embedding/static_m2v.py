"""Static (model2vec-format) embeddings: a token-vector lookup and a mean, no neural network.

A model2vec directory holds ``tokenizer.json``, ``model.safetensors`` (one ``embeddings``
matrix, ``vocab x dim``, optionally ``weights`` per token and a ``mapping`` from token id to
row) and ``config.json``. Embedding a text is: tokenize without special tokens, drop
``[UNK]``, average the rows, L2-normalise, the same arithmetic as ``model2vec.StaticModel``.
It is ~100x faster than a transformer on a CPU, at some cost in quality; the benchmark
decides whether it is worth offering. Only numpy and tokenizers are needed: no torch, and no
hub look-up (``model2vec.StaticModel.from_pretrained`` falls back to the hub on a bad path).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from probe_core.embedding._pooling import l2_normalise
from probe_core.embedding._text import encodable
from probe_core.errors import BackendUnavailable, ConfigError

# Texts pooled together: large enough to amortise numpy calls, small enough that the
# gathered (tokens x dim) block stays a few MB.
_POOL_GROUP = 32

# safetensors dtype tags -> numpy, for the tensors a model2vec file may hold.
_SAFETENSORS_DTYPES = {
    "F16": np.float16,
    "F32": np.float32,
    "F64": np.float64,
    "I8": np.int8,
    "I32": np.int32,
    "I64": np.int64,
}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Memory-map every tensor of a ``.safetensors`` file as a read-only numpy array.

    The format is an 8-byte little-endian header size, a JSON header naming each tensor's
    dtype, shape and byte range, then the raw little-endian data. Mapping it keeps load time
    and resident memory low: rows are paged in as tokens use them.
    """
    with path.open("rb") as f:
        header_size = int.from_bytes(f.read(8), "little")
        if not 2 <= header_size <= 100_000_000:
            raise BackendUnavailable(f"{path} is not a safetensors file")
        header = json.loads(f.read(header_size))
    data_start = 8 + header_size
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    tensors: dict[str, np.ndarray] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        dtype = _SAFETENSORS_DTYPES.get(spec["dtype"])
        if dtype is None:
            raise BackendUnavailable(f"{path}: tensor {name!r} has unsupported dtype {spec['dtype']}")
        begin, end = spec["data_offsets"]
        view = raw[data_start + begin : data_start + end].view(np.dtype(dtype).newbyteorder("<"))
        tensors[name] = view.reshape(spec["shape"])
    return tensors


class StaticEmbedder:
    """A model2vec static model loaded from a local directory.

    ``model_id`` defaults to ``"model2vec/<directory name>"``; pass the id the benchmark and
    the manifest should know it by. ``max_tokens`` defaults to the model's ``max_length``.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        model_id: str | None = None,
        max_tokens: int | None = None,
    ) -> None:
        """Load the directory (~50 ms); raises BackendUnavailable if unusable."""
        from tokenizers import Tokenizer

        root = Path(model_path)
        paths = {name: root / name for name in ("tokenizer.json", "model.safetensors", "config.json")}
        missing = [name for name, p in paths.items() if not p.is_file()]
        if missing:
            raise BackendUnavailable(
                f"{root} is not a model2vec model directory (missing {', '.join(missing)})"
            )
        try:
            config = json.loads(paths["config.json"].read_text(encoding="utf-8"))
            tensors = read_safetensors(paths["model.safetensors"])
            tokenizer = Tokenizer.from_file(str(paths["tokenizer.json"]))
        except (OSError, ValueError, KeyError) as exc:
            raise BackendUnavailable(f"cannot load the static model in {root}: {exc}") from exc
        except Exception as exc:  # tokenizers raises a bare Exception on a bad file
            raise BackendUnavailable(f"cannot load the static model in {root}: {exc}") from exc
        if "embeddings" not in tensors or tensors["embeddings"].ndim != 2:
            raise BackendUnavailable(f"{paths['model.safetensors']} holds no 2-d 'embeddings' tensor")

        if max_tokens is None:
            max_tokens = config.get("max_length") or 512
        if max_tokens < 1:
            raise ConfigError(f"max_tokens must be at least 1, got {max_tokens}")
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=max_tokens)
        unk = getattr(tokenizer.model, "unk_token", None)

        self.model_id: str = model_id or f"model2vec/{root.resolve().name}"
        self.max_tokens = max_tokens
        self._tokenizer = tokenizer
        # float32 in memory (vocab x dim x 4 bytes, ~30 MB for a 30k x 256 model): gathering
        # from the memory-mapped float16 file was ~5x slower.
        self._embeddings = np.ascontiguousarray(tensors["embeddings"], dtype=np.float32)
        weights = tensors.get("weights")
        self._weights = None if weights is None else np.asarray(weights, dtype=np.float32)
        mapping = tensors.get("mapping")
        self._mapping = None if mapping is None else np.asarray(mapping, dtype=np.int64)
        self._unk_id = tokenizer.token_to_id(unk) if unk else None
        self.dimensions: int = int(self._embeddings.shape[1])

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """Embed chunks; float32 ``(len(texts), dimensions)``, rows unit-length (an empty text is 0)."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(
            encodable(texts, self.max_tokens), add_special_tokens=False
        )
        ids = [np.asarray(e.ids, dtype=np.int64) for e in encodings]
        if self._unk_id is not None:
            ids = [row[row != self._unk_id] for row in ids]
        means = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(ids), _POOL_GROUP):
            means[start : start + _POOL_GROUP] = self._mean_rows(ids[start : start + _POOL_GROUP])
        return l2_normalise(means)

    def _mean_rows(self, ids: list[np.ndarray]) -> np.ndarray:
        """Mean token vector per text: one gather and one segmented sum for the whole group."""
        counts = np.fromiter((len(row) for row in ids), dtype=np.int64, count=len(ids))
        sums = np.zeros((len(ids), self.dimensions), dtype=np.float32)
        nonempty = counts > 0
        if nonempty.any():
            flat = np.concatenate(ids)
            vectors = self._embeddings[self._mapping[flat] if self._mapping is not None else flat]
            if self._weights is not None:
                vectors *= self._weights[flat][:, None]
            starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
            # reduceat over the non-empty rows' starts: each segment ends where the next begins.
            sums[nonempty] = np.add.reduceat(vectors, starts[nonempty], axis=0)
        return sums / np.maximum(counts, 1)[:, None]

    def embed_query(self, text: str, instruction: str | None = None) -> np.ndarray:
        """Embed one query, shape ``(dimensions,)``; ``instruction`` is ignored (static models take none)."""
        return self.embed_documents([text])[0]
