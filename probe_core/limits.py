"""The bounds of every argument that more than one face takes, in one place.

The engine checks them (so a call from anywhere gets the same one-line error), the MCP schemas
declare them (``ge``/``le``, so an agent sees them in ``tools/list``) and the CLI's flags parse
with them (so ``--top-k 100`` fails the way ``top_k: 100`` does, naming the flag). A limit that
differed between faces would make the same question answerable in one and an error in another.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass

from .errors import ConfigError


@dataclass(frozen=True, slots=True)
class Bound:
    """An inclusive integer range for the argument ``name``."""

    name: str
    low: int
    high: int

    def check(self, value, error: type[Exception] = ConfigError) -> int:
        """``value`` when it is an integer in range; else ``error`` with a one-line message."""
        if isinstance(value, bool) or not isinstance(value, int) or not self.low <= value <= self.high:
            raise error(f"{self.name} must be an integer from {self.low} to {self.high}, not {value!r}")
        return value

    def flag(self, text: str) -> int:
        """An argparse ``type=``: the same range for a command-line flag."""
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer from {self.low} to {self.high}, not {text!r}") \
                from None
        if not self.low <= value <= self.high:
            raise argparse.ArgumentTypeError(f"must be from {self.low} to {self.high}, not {value}")
        return value


TOP_K = Bound("top_k", 1, 50)  # search results per answer; more is never worth an agent's context
MAX_TOKENS = Bound("max_tokens", 256, 100_000)  # an answer's budget (characters / 4)
MAX_RESULTS = Bound("max_results", 1, 500)  # code-intelligence locations per answer
INTEL_DEPTH = Bound("depth", 1, 5)  # levels of callers/callees/impact followed
MAP_DEPTH = Bound("depth", 1, 10)  # folder levels map_code expands


@dataclass(frozen=True, slots=True)
class TextBound:
    """A most number of characters for the text argument ``name``."""

    name: str
    high: int

    def _message(self, value: str) -> str:
        return f"{self.name} is {len(value):,} characters; at most {self.high:,} are accepted: shorten it"

    def check(self, value, error: type[Exception] = ConfigError) -> str:
        """``value`` when it is short enough (its type is the caller's to check); else ``error``."""
        if isinstance(value, str) and len(value) > self.high:
            raise error(self._message(value))
        return value

    def flag(self, text: str) -> str:
        """An argparse ``type=``: the same limit for a command-line argument."""
        if len(text) > self.high:
            raise argparse.ArgumentTypeError(self._message(text))
        return text


# A search query: a sentence, an identifier, a pasted function or error message. The embedder reads
# only its first few hundred tokens and BM25 would score a whole file as one bag of words, so a longer
# "query" is a mistake (a file pasted whole) better said than answered.
QUERY = TextBound("query", 4000)
