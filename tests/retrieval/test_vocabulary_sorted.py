"""A needle's word runs are looked up in the sorted vocabulary, not by a scan of it.

The exact-match lists ask the vocabulary, for each word run of a needle, which posted words fit. A
run bounded on both sides (every run of an identifier, the inner runs of a literal) is a whole word;
a literal's first run may end a word and its last may begin one. The vocabulary scanned its whole
blob for each: 5 MB on the monorepo, ~3 ms a run, up to 50 ms for a quoted message, the stage that
made the same question dearer there than in the repository alone (docs/benchmarks.md, "The same
questions on a 40k-line repository and on a monorepo holding it"). Once the blob is large its words
are hashed (whole words) and sorted by their first and last bytes (beginnings, ends); only the words
added since are scanned. A real repository (the installed ``click`` package) is indexed; every run,
in other cases, and runs it lacks, must give what a brute-force look-up gives, before and after an
edit adds words, and the blob must not be scanned from its start.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import click
import pytest

from probe_core import Workspace, index_workspace
from probe_core.intel.build import graph_store
from probe_core.retrieval import term_index as ti


class _CountedBlob(bytearray):
    """A vocabulary blob that records where each ``find`` starts."""

    starts: list[int]

    def find(self, sub, start=0, *args):  # noqa: D102
        self.starts.append(start)
        return super().find(sub, start, *args)


@pytest.fixture()
def ws(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    shutil.copytree(Path(click.__file__).parent, root / "click", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "click" / "wörter.py").write_text(  # words with bytes past ASCII, sorted with the rest
        "def café_crème(naïve_Größe, ÉTAT):\n    return 'Ärger über Straße' + 日本語_テキスト + ΣΤΑΣΗ_σταση\n",
        encoding="utf-8")
    workspace = Workspace.open(root)
    index_workspace(workspace, dense=False)
    monkeypatch.setattr(ti, "TAIL_SCAN_BYTES", 2000, raising=False)  # click's vocabulary (~36 KB) is sorted, an edit's tail is not
    monkeypatch.setattr(ti, "_HASH_SLICE", 1000, raising=False)  # in several slices
    yield workspace
    workspace.close()


SHAPES = {(True, True): bytes.__eq__, (True, False): bytes.startswith, (False, True): bytes.endswith}


def _expected(words: dict[int, bytes], run: bytes, case: bool, shape: tuple[bool, bool],
              limit: int | None) -> list[int] | None:
    fits = SHAPES[shape]
    out = [i for i, w in words.items() if (fits(w, run) if case else fits(w.lower(), run.lower()))]
    return None if limit is not None and len(out) > limit else out


def _check(ws: Workspace, runs: list[bytes], limits=(ti.MAX_RUN_WORDS,)) -> None:
    store = graph_store(ws)
    index = ti.term_index(ws)
    index.refresh(ws, store)
    words = dict(store.terms_after(0))
    for run in runs:
        for case in (True, False):
            for shape in SHAPES:
                for limit in limits:
                    got = index.vocabulary.words(run, case=case, starts=shape[0], ends=shape[1], limit=limit)
                    assert got == _expected(words, run, case, shape, limit), (run, case, shape, limit)


def test_whole_words_are_the_brute_force_ones(ws):
    words = [w for _, w in graph_store(ws).terms_after(0)]
    assert len(words) > 3000
    runs = words[::3] + [w.upper() for w in words[::7]] + [w.swapcase() for w in words[::11]]
    parts = [w[:n] for w in words[::13] for n in (1, 3, 8, 9)] + [w[-n:] for w in words[::17] for n in (2, 8, 11)]
    _check(ws, runs + parts + [b"no_such_word_here", b"Clic", b"lick", b"x", b"_", b"ing", b"Get", b"ERROR"])
    _check(ws, [b"e", b"s", b"get", b"_", b"ing", b"Param", b"context_settings"], limits=(None, 3, 40, 400))
    assert {"café_crème".encode(), "日本語_テキスト".encode()} <= set(words)
    past_ascii = ["café", "caf", "é", "crème", "naïve_Größe", "Größe", "größe", "ße", "ÉTAT", "état", "Ärger",
                  "ärger", "über", "Straße", "日本", "語", "テキスト", "ΣΤΑΣΗ", "σταση", "Σ", "η"]
    _check(ws, [w.encode() for w in past_ascii], limits=(None, 3, ti.MAX_RUN_WORDS))
    (ws.root / "click" / "added.py").write_text("def brand_new_word_alpha(BRAND_NEW_word_alpha):\n"
                                                "    return Brand_New_Word_Alpha + click_echo_zz\n")
    index_workspace(ws, dense=False)
    _check(ws, [b"brand_new_word_alpha", b"BRAND_NEW_WORD_ALPHA", b"click_echo_zz", b"echo", b"Context",
                b"brand_n", b"Brand_New_", b"word_alpha", b"_zz", b"ALPHA"], limits=(None, 3, ti.MAX_RUN_WORDS))


def test_a_run_does_not_scan_the_sorted_words(ws):
    store = graph_store(ws)
    vocabulary = ti.term_index(ws).vocabulary
    vocabulary.refresh(store)
    vocabulary._blob, vocabulary._folded = _CountedBlob(vocabulary._blob), _CountedBlob(vocabulary._folded)
    vocabulary._blob.starts, vocabulary._folded.starts = [], []
    for run in (b"echo", b"Context", b"no_such_word_here", b"ctx", b"Param", b"_"):
        for case in (True, False):
            for starts, ends in SHAPES:
                vocabulary.words(run, case=case, starts=starts, ends=ends, limit=ti.MAX_RUN_WORDS)
    scans = vocabulary._blob.starts + vocabulary._folded.starts
    assert scans and min(scans) >= len(vocabulary._blob) - 1  # every word sorted: nothing left to scan
