"""How to find the chunks holding a quoted string or an identifier of the query, fast enough for
the search path: three ways, timed on the same corpora and the same needles.

* ``memory``: what search does (``retrieval/literals.py``): the indexed files' text kept in memory,
  a substring test, then a regular expression on the files that hold the needle.
* ``ripgrep``: one ``rg`` process per needle over the root (``-F -i -l`` for literals, ``-w`` for
  identifiers); needs ripgrep installed, and re-reads the tree every time.
* ``fts5``: an SQLite FTS5 table with the trigram tokenizer (substring search), one row per line,
  kept beside the manifest; the index has to be built and kept up to date.

  uv run python bench/bench_literals.py --corpus-root /tmp/probe-dev

The needles are the dev set's quoted strings and identifiers (``query_intent.parse_query``).
"""
from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def timed(fn, repeat: int = 3) -> float:
    """Best of ``repeat`` runs, in ms (the machine is shared: the minimum is the least noisy)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, (time.perf_counter() - t0) * 1000)
    return best


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus-root", type=Path, required=True)
    ap.add_argument("--queries", type=Path, default=ROOT.parent / "shared/eval/dev/queries.jsonl")
    args = ap.parse_args()

    from probe_core import Workspace
    from probe_core.retrieval.literals import _identifier_pattern, _occurrences, file_texts
    from probe_core.retrieval.query_intent import parse_query

    import re

    queries = [json.loads(line) for line in args.queries.read_text().splitlines() if line.strip()]
    rg = shutil.which("rg")
    print(f"{'corpus':<11} {'lines':>7} {'needles':>7} | {'memory load':>11} {'memory p50/max':>15} | "
          f"{'rg p50/max':>12} | {'fts5 build':>10} {'fts5 MB':>7} {'fts5 p50/max':>13}")
    for corpus in sorted({q["corpus"] for q in queries}):
        needles = []
        for q in queries:
            if q["corpus"] == corpus and q["kind"] == "search":
                intent = parse_query(q["query"])
                needles += [(lit, False) for lit in intent.literals] + [(name, True) for name in intent.identifiers]
        ws = Workspace.open(args.corpus_root / corpus, create=False)
        t0 = time.perf_counter()
        files = file_texts(ws).current(ws)  # cold: reads every indexed file
        load_ms = (time.perf_counter() - t0) * 1000
        lines = sum(f.text.count("\n") for f in files.values())

        def memory(needle, ident):
            pattern = _identifier_pattern(needle) if ident else re.compile(re.escape(needle), re.I)
            return _occurrences(files, needle, pattern, 10**6, case=ident)

        mem = [timed(lambda n=n, i=i: memory(n, i)) for n, i in needles]

        rg_ms = []
        if rg:
            for needle, ident in needles:
                cmd = [rg, "-n", "-F", "-w", "-e", needle] if ident else [rg, "-n", "-F", "-i", "-e", needle]
                rg_ms.append(timed(lambda c=cmd: subprocess.run([*c, str(ws.root)], capture_output=True)))

        with tempfile.TemporaryDirectory(prefix="probe-fts-") as tmp:
            db = sqlite3.connect(Path(tmp) / "fts.sqlite")
            t0 = time.perf_counter()
            db.execute("CREATE VIRTUAL TABLE lines USING fts5(path UNINDEXED, line UNINDEXED, text, tokenize='trigram')")
            db.executemany("INSERT INTO lines VALUES (?, ?, ?)",
                           ((p, i + 1, text) for p, f in files.items() for i, text in enumerate(f.text.splitlines())))
            db.commit()
            build_ms = (time.perf_counter() - t0) * 1000
            size_mb = (Path(tmp) / "fts.sqlite").stat().st_size / 1e6

            def fts(needle):
                quoted = '"' + needle.replace('"', '""') + '"'
                return db.execute("SELECT path, line FROM lines WHERE text MATCH ?", (quoted,)).fetchall()

            fts_ms = [timed(lambda n=n: fts(n)) for n, _ in needles if len(n) >= 3]
            db.close()
        ws.close()

        def p(xs):
            return f"{statistics.median(xs):.1f}/{max(xs):.1f}" if xs else "-"

        print(f"{corpus:<11} {lines:>7} {len(needles):>7} | {load_ms:>9.0f}ms {p(mem):>15} | {p(rg_ms):>12} | "
              f"{build_ms:>8.0f}ms {size_mb:>7.1f} {p(fts_ms):>13}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
