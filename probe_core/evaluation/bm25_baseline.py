"""The plain lexical baseline ``probe eval`` reports beside Probe: Okapi BM25 over 60-line windows
(stride 30) of the indexed files, identifiers split on camelCase / snake_case, common English
words dropped. It is what a grep-and-rank tool without an index of code structure would return,
so "Probe vs BM25" on a repository's own history says what Probe adds there.
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable

WINDOW, STRIDE = 60, 30
K1, B = 1.2, 0.75
STOPWORDS = frozenset("""a an the and or of to in on at by for from with into onto is are was were be been being it its
this that these those how where what which when who why does do did can could should would will may might must there
here than then so such as not no we you they i me my our your their them us if else also only just about each any all
some""".split())
_WORD = re.compile(r"[A-Za-z0-9_]+")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def tokens(text: str) -> list[str]:
    """Lowercased words and the parts of compound identifiers, without stop words."""
    out = []
    for word in _WORD.findall(text):
        pieces = [p for w in word.split("_") for p in _PART.findall(w)]
        for t in {word, *pieces} if len(pieces) > 1 else {word}:
            t = t.lower()
            if len(t) > 1 and t not in STOPWORDS:
                out.append(t)
    return out


class WindowBm25:
    """BM25 over fixed line windows of a set of files; ``search`` returns ranges best first."""

    def __init__(self, files: Iterable[tuple[str, str]]):
        self._windows: list[tuple[str, int, int]] = []
        self._lengths: list[int] = []
        self._postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for path, text in files:
            lines = text.splitlines()
            starts = range(0, max(1, len(lines) - WINDOW + STRIDE), STRIDE) if lines else []
            for start in starts:
                chunk = lines[start:start + WINDOW]
                if not chunk:
                    break
                doc = len(self._windows)
                counts = Counter(tokens("\n".join(chunk)))
                self._windows.append((path, start + 1, start + len(chunk)))
                self._lengths.append(sum(counts.values()))
                for term, tf in counts.items():
                    self._postings[term].append((doc, tf))
        self._avg = (sum(self._lengths) / len(self._lengths)) if self._lengths else 1.0

    def __len__(self) -> int:
        return len(self._windows)

    def search(self, query: str, top_k: int = 10) -> list[dict]:
        n = len(self._windows)
        scores: dict[int, float] = defaultdict(float)
        for term in set(tokens(query)):
            posting = self._postings.get(term)
            if not posting:
                continue
            idf = math.log(1 + (n - len(posting) + 0.5) / (len(posting) + 0.5))
            for doc, tf in posting:
                norm = tf + K1 * (1 - B + B * self._lengths[doc] / self._avg)
                scores[doc] += idf * tf * (K1 + 1) / norm
        best = sorted(scores, key=lambda d: (-scores[d], d))[:top_k]
        return [{"path": self._windows[d][0], "start_line": self._windows[d][1], "end_line": self._windows[d][2]}
                for d in best]
