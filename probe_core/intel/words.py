"""The words of a file's text, for the word postings the exact-match lists search
(``retrieval/term_index.py``): kept with the symbol graph, which every indexed file passes through.

A word is a maximal run of the bytes the exact-match scan counts as part of a name
(``retrieval/literals.py``: ASCII letters, digits, ``_``, ``$`` and every byte of a multi-byte
UTF-8 character), case kept. Any occurrence of a needle made of such bytes lies inside one word,
so the files holding a needle are found from the vocabulary without reading any text.
"""
from __future__ import annotations

import re

WORD = re.compile(rb"[\w$\x80-\xff]+")


def words_of(text: str) -> set[bytes]:
    """The distinct words of ``text`` as UTF-8 bytes (encoded as the scan encodes it)."""
    return set(WORD.findall(text.encode("utf-8", "surrogatepass")))
