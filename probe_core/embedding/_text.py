"""Text clean-up before a Rust tokenizer sees it."""
from __future__ import annotations

# No tokenizer we use averages more than this many characters per token on real text (code
# runs ~3-4); cutting beyond max_tokens * this is lossless in practice and keeps a
# multi-megabyte input from being tokenized in full only to be truncated.
CHARS_PER_TOKEN_BOUND = 32


def encodable(texts: list[str], max_tokens: int | None = None) -> list[str]:
    """The texts cut to what ``max_tokens`` can use (if given), with lone surrogates replaced.

    Python strings can hold unpaired surrogates (from ``surrogateescape`` decoding of a file
    with bad bytes, or a ``\\ud800`` escape in JSON); ``tokenizers`` rejects those with a
    bare TypeError, so they become ``?``.
    """
    limit = None if max_tokens is None else max_tokens * CHARS_PER_TOKEN_BOUND
    out = []
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts to embed must be str, got {type(text).__name__} at index {i}")
        text = text[:limit]
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = text.encode("utf-8", "replace").decode("utf-8")
        out.append(text)
    return out
