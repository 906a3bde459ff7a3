"""Both scorer families: templates, instruction mapping, truncation, batching and score ranges."""
from __future__ import annotations

import time

import pytest
import torch
from probe_reranker.scoring import (
    QWEN3_PREFIX,
    QWEN3_SUFFIX,
    DeadlineExceeded,
    Qwen3RerankerScorer,
    ZerankScorer,
    kind_for,
    load_scorer,
)

DOCS = [
    "def parse_header(line):\n    name, _, value = line.partition(':')\n    return name, value",
    "import os",
    "class RetryPolicy:\n    '''retry with exponential backoff'''\n" * 3,
    "",
]


def test_kind_from_the_model_id():
    assert kind_for("Qwen/Qwen3-Reranker-0.6B") == "qwen3"
    assert kind_for("zeroentropy/zerank-2") == "zerank"
    assert kind_for("/models/ZeRank-2-local") == "zerank"


def test_load_picks_the_family_from_the_directory_name(qwen3_dir, zerank_dir):
    assert isinstance(load_scorer(str(qwen3_dir)), Qwen3RerankerScorer)
    assert isinstance(load_scorer(str(zerank_dir)), ZerankScorer)
    assert isinstance(load_scorer(str(zerank_dir), kind="qwen3"), Qwen3RerankerScorer)
    with pytest.raises(ValueError, match="unknown reranker kind"):
        load_scorer(str(qwen3_dir), kind="colbert")


def test_qwen3_template_is_the_official_one(qwen3_dir):
    s = load_scorer(str(qwen3_dir), default_instruction="find code")
    text = s.render("parse a header", "DOC", "prefer implementation code, not tests")
    assert text == (
        "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the "
        'Instruct provided. Note that the answer can only be "yes" or "no".<|im_end|>\n<|im_start|>user\n'
        "<Instruct>: prefer implementation code, not tests\n<Query>: parse a header\n<Document>: DOC"
        "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    )
    assert text.startswith(QWEN3_PREFIX) and text.endswith(QWEN3_SUFFIX)
    # no instruction → the service's default task
    assert "<Instruct>: find code\n" in s.render("q", "d", None)


def test_qwen3_special_tokens_are_single_tokens(qwen3_dir):
    s = load_scorer(str(qwen3_dir))
    ids = s.prompt_ids("q", "d", "i")
    assert ids[0] == s.tokenizer.convert_tokens_to_ids("<|im_start|>")
    assert s.tokenizer.convert_ids_to_tokens(ids[-2:]) == ["\n", "\n"]
    assert s.tokenizer.convert_tokens_to_ids("</think>") in ids


def test_zerank_prepends_the_instruction_to_the_query(zerank_dir):
    s = load_scorer(str(zerank_dir))
    text = s.render("parse a header", "DOC", "prefer TypeScript files")
    assert text == ("<|im_start|>system\nprefer TypeScript files\nparse a header<|im_end|>\n"
                    "<|im_start|>user\nDOC<|im_end|>\n<|im_start|>assistant\n")
    assert s.render("q", "d", None).startswith("<|im_start|>system\nq<|im_end|>")


@pytest.mark.parametrize("family", ["qwen3", "zerank"])
def test_scores_are_probabilities_in_input_order(family, qwen3_dir, zerank_dir):
    s = load_scorer(str(qwen3_dir if family == "qwen3" else zerank_dir), batch_size=2)
    scores = s.score("parse an http header", DOCS, "prefer implementation code")
    assert len(scores) == len(DOCS)
    assert all(0.0 <= x <= 1.0 for x in scores)
    assert len({round(x, 6) for x in scores}) > 1  # the model sees the documents
    assert s.score("q", []) == []


@pytest.mark.parametrize("family", ["qwen3", "zerank"])
def test_batching_and_left_padding_do_not_change_scores(family, qwen3_dir, zerank_dir):
    path = qwen3_dir if family == "qwen3" else zerank_dir
    batched = load_scorer(str(path), batch_size=3).score("parse header", DOCS, "x")
    alone = [load_scorer(str(path), batch_size=1).score("parse header", [d], "x")[0] for d in DOCS]
    assert batched == pytest.approx(alone, abs=1e-5)


@pytest.mark.parametrize("family", ["qwen3", "zerank"])
def test_the_instruction_reaches_the_model(family, qwen3_dir, zerank_dir):
    s = load_scorer(str(qwen3_dir if family == "qwen3" else zerank_dir))
    a = s.score("parse header", DOCS[:2], "prefer implementation code, not tests")
    b = s.score("parse header", DOCS[:2], "only show async/await patterns")
    assert a != pytest.approx(b, abs=1e-7)


def test_long_documents_are_cut_to_max_length(qwen3_dir):
    s = load_scorer(str(qwen3_dir), max_length=400)
    ids = s.prompt_ids("query", "x" * 5000, "instruction")
    assert len(ids) == 400
    suffix = s._encode(QWEN3_SUFFIX)
    assert ids[-len(suffix):] == suffix  # the document is cut, never the template
    assert s.score("query", ["x" * 5000, "short"])  # scores, no error


def test_query_longer_than_max_length_is_refused(qwen3_dir):
    s = load_scorer(str(qwen3_dir), max_length=64)
    with pytest.raises(ValueError, match="max_length"):
        s.score("q" * 500, ["d"])


def test_deadline_is_checked_between_batches(qwen3_dir):
    s = load_scorer(str(qwen3_dir), batch_size=1)
    with pytest.raises(DeadlineExceeded):
        s.score("q", DOCS, deadline=time.monotonic() - 1)


def test_only_the_last_position_logits_are_computed(qwen3_dir):
    s = load_scorer(str(qwen3_dir))
    batch = s.tokenizer.pad({"input_ids": [s.prompt_ids("q", d, None) for d in DOCS[:2]]}, return_tensors="pt")
    with torch.inference_mode():
        out = s.model(**batch, logits_to_keep=1)
    assert out.logits.shape[1] == 1
