"""Relevance scores from a causal LM's next-token logits, for two model families behind one interface.

* Qwen3-Reranker: a chat prompt whose system turn asks for "yes"/"no"; the user turn is
  ``<Instruct>: {instruction}\\n<Query>: {query}\\n<Document>: {doc}``; the score is the softmax
  over the ("no", "yes") logits at the last position, i.e. P(yes).
* zerank-2 (Qwen3-4B based): cross-encoder style on (query, document) pairs, the query in the
  system turn and the document in the user turn of the model's chat template; the instruction is
  prepended to the query. The score is sigmoid(logit("Yes") / 5) at the last position.

Common machinery: the document is cut (by tokens) so that each prompt fits ``max_length``;
prompts are sorted by length and run in batches of ``batch_size`` with left padding, so the last
position is every row's final token; only that position's logits are computed.
"""
from __future__ import annotations

import math
import time
from typing import Protocol

import torch

QWEN3_SYSTEM = ('Judge whether the Document meets the requirements based on the Query and the Instruct '
                'provided. Note that the answer can only be "yes" or "no".')
QWEN3_PREFIX = f"<|im_start|>system\n{QWEN3_SYSTEM}<|im_end|>\n<|im_start|>user\n"
QWEN3_SUFFIX = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
_DOC = "\u0000PROBE-DOCUMENT\u0000"  # stands where the document goes while a prompt is split


class DeadlineExceeded(Exception):
    """Scoring ran past the request's time budget (checked between batches)."""


class Scorer(Protocol):
    kind: str
    model_id: str
    device: str

    def score(self, query: str, documents: list[str], instruction: str | None = None,
              deadline: float | None = None) -> list[float]:
        """Scores in ``documents`` order, higher is more relevant, each in [0, 1]."""
        ...


class _YesTokenScorer:
    """Shared batching, truncation and last-position logits; subclasses render prompts and map logits."""

    kind = "base"

    def __init__(self, model, tokenizer, *, model_id: str = "", max_length: int = 2048, batch_size: int = 16,
                 default_instruction: str = "") -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model_id = model_id
        self.max_length = max_length
        self.batch_size = batch_size
        self.default_instruction = default_instruction
        self.device = str(next(model.parameters()).device)
        self._init_tokens()

    # -- per family ------------------------------------------------------------------------------
    def _init_tokens(self) -> None:
        raise NotImplementedError

    def render(self, query: str, document: str, instruction: str | None) -> str:
        raise NotImplementedError

    def to_scores(self, last_logits: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _token_id(self, token: str) -> int:
        tid = self.tokenizer.convert_tokens_to_ids(token)
        if tid is None or tid == self.tokenizer.unk_token_id:
            raise ValueError(f"the tokenizer of {self.model_id or 'this model'} has no {token!r} token")
        return int(tid)

    # -- shared --------------------------------------------------------------------------------
    def _encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def prompt_ids(self, query: str, document: str, instruction: str | None) -> list[int]:
        """Token ids of one prompt, the document cut so the whole fits ``max_length``."""
        head, tail = self.render(query, _DOC, instruction).split(_DOC)
        head_ids, tail_ids = self._encode(head), self._encode(tail)
        budget = self.max_length - len(head_ids) - len(tail_ids)
        if budget < 1:
            raise ValueError(f"query and instruction take {len(head_ids) + len(tail_ids)} tokens; "
                             f"max_length is {self.max_length}")
        return head_ids + self._encode(document)[:budget] + tail_ids

    @torch.inference_mode()
    def score(self, query: str, documents: list[str], instruction: str | None = None,
              deadline: float | None = None) -> list[float]:
        if not documents:
            return []
        prompts = [self.prompt_ids(query, d, instruction) for d in documents]
        order = sorted(range(len(prompts)), key=lambda i: -len(prompts[i]))  # similar lengths share a batch
        scores = [math.nan] * len(prompts)
        for start in range(0, len(order), self.batch_size):
            if deadline is not None and time.monotonic() > deadline:
                raise DeadlineExceeded(f"scored {start} of {len(documents)} documents before the deadline")
            idx = order[start:start + self.batch_size]
            batch = self.tokenizer.pad({"input_ids": [prompts[i] for i in idx]}, padding=True, return_tensors="pt")
            batch = {k: v.to(self.model.device) for k, v in batch.items()}
            logits = self.model(**batch, logits_to_keep=1).logits[:, -1, :].float()
            for i, s in zip(idx, self.to_scores(logits).tolist()):
                scores[i] = float(s)
        return scores


class Qwen3RerankerScorer(_YesTokenScorer):
    """Qwen3-Reranker: P("yes") against "no" at the last position of the instruction template."""

    kind = "qwen3"

    def _init_tokens(self) -> None:
        self.yes_id = self._token_id("yes")
        self.no_id = self._token_id("no")

    def render(self, query: str, document: str, instruction: str | None) -> str:
        task = instruction or self.default_instruction
        return f"{QWEN3_PREFIX}<Instruct>: {task}\n<Query>: {query}\n<Document>: {document}{QWEN3_SUFFIX}"

    def to_scores(self, last_logits: torch.Tensor) -> torch.Tensor:
        pair = torch.stack([last_logits[:, self.no_id], last_logits[:, self.yes_id]], dim=1)
        return torch.softmax(pair, dim=1)[:, 1]


class ZerankScorer(_YesTokenScorer):
    """zerank-2: the model's chat template on (query, document); instruction prepended to the query."""

    kind = "zerank"
    LOGIT_SCALE = 5.0  # zerank's documented calibration: sigmoid(logit / 5)

    def _init_tokens(self) -> None:
        self.yes_id = self._token_id("Yes")
        if not getattr(self.tokenizer, "chat_template", None):
            raise ValueError(f"the tokenizer of {self.model_id or 'this model'} has no chat template")

    def query_text(self, query: str, instruction: str | None) -> str:
        return f"{instruction.strip()}\n{query}" if instruction else query

    def render(self, query: str, document: str, instruction: str | None) -> str:
        messages = [{"role": "system", "content": self.query_text(query, instruction)},
                    {"role": "user", "content": document}]
        return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    def to_scores(self, last_logits: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(last_logits[:, self.yes_id] / self.LOGIT_SCALE)


SCORERS = {"qwen3": Qwen3RerankerScorer, "zerank": ZerankScorer}


def kind_for(model_id: str) -> str:
    """The scorer family a model id belongs to (zerank-* → zerank, anything else → qwen3)."""
    return "zerank" if "zerank" in model_id.lower() else "qwen3"


def _device(name: str) -> str:
    if name != "auto":
        return name
    return "cuda" if torch.cuda.is_available() else "cpu"


def _dtype(name: str, device: str) -> torch.dtype:
    if name == "auto":
        if device.startswith("cuda"):
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]


def load_scorer(model_id: str, *, kind: str | None = None, device: str = "auto", dtype: str = "auto",
                max_length: int = 2048, batch_size: int = 16, default_instruction: str = "") -> Scorer:
    """Load a model (hub id or local directory) and wrap it in the scorer of its family."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kind = kind or kind_for(model_id)
    if kind not in SCORERS:
        raise ValueError(f"unknown reranker kind {kind!r}; choose one of {', '.join(SCORERS)}")
    dev = _device(device)
    tokenizer = AutoTokenizer.from_pretrained(model_id, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(model_id, dtype=_dtype(dtype, dev)).to(dev)
    return SCORERS[kind](model, tokenizer, model_id=model_id, max_length=max_length, batch_size=batch_size,
                         default_instruction=default_instruction)
