"""Tiny random-weight Qwen3 models with a tokenizer built here: no hub downloads, seconds on a CPU.

They check plumbing (templates, instruction mapping, truncation, batching, ordering, the API),
not ranking quality: with random weights the scores mean nothing, but they are deterministic.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import torch
from tokenizers import Regex, Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"]
WORDS = ["yes", "no", "Yes", "No"]
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def build_tokenizer() -> PreTrainedTokenizerFast:
    """Character-level tokenizer: every printable ASCII char, newline, and the chat special tokens."""
    chars = [chr(i) for i in range(32, 127)] + ["\n"]
    vocab = {tok: i for i, tok in enumerate(SPECIALS + WORDS + chars)}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<|endoftext|>"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    core.add_special_tokens(SPECIALS)
    tok = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                  unk_token="<|endoftext|>")
    tok.chat_template = CHATML
    return tok


def build_model_dir(path: Path, seed: int) -> Path:
    tok = build_tokenizer()
    torch.manual_seed(seed)
    cfg = Qwen3Config(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=4096,
                      pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, tie_word_embeddings=False)
    Qwen3ForCausalLM(cfg).save_pretrained(path)
    tok.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def qwen3_dir(tmp_path_factory) -> Path:
    # "reranker" in the folder name, like Qwen/Qwen3-Reranker-0.6B
    return build_model_dir(tmp_path_factory.mktemp("tiny-Qwen3-Reranker"), seed=1)


@pytest.fixture(scope="session")
def zerank_dir(tmp_path_factory) -> Path:
    return build_model_dir(tmp_path_factory.mktemp("tiny-zerank-2"), seed=2)
