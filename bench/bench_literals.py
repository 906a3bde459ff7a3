"""How to find the chunks holding a quoted string or an identifier of the query, fast enough for
the search path: three ways, timed on the same corpora and the same needles.

* ``memory``: what search does (``retrieval/literals.py``): the indexed files' text kept in memory,
  a substring test, then a regular expression on the files that hold the needle.
* ``ripgrep``: one ``rg`` process per needle over the root (``-F -i -l`` for literals, ``-w`` for
  identifiers); needs ripgrep installed, and re-reads the tree every time.
* ``fts5``: an SQLite FTS5 table with the trigram tokenizer (substring search), one row per line,
  kept beside the manifest; the index has to be built and kept up to date.

  uv run python bench/bench_literals.py --corpus-root /tmp/probe-dev

The needles are the dev set's quoted strings and identifiers (``query_intent.parse_query``). A
second table times what search runs, ``exact_lists`` end to end (the scan, the names a message
is defined under, the symbol-graph definitions, the line → chunk mapping) per dev query, and the
memory the text cache holds; ``--replicate 8 --corpus chi --end-to-end-only`` measures it on chi
with every file eight times as long.
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


def replicated(src: Path, times: int, dest: Path) -> Path:
    """The corpus ``src`` with every indexed file's text repeated ``times`` times, indexed lexically
    under ``dest`` (the exact-match scan needs no dense vector): the same files and needles, in a
    repository ``times`` times longer, so a needle stays in as many files as before."""
    from probe_core import Workspace, index_workspace

    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".probe", ".git"))
    source = Workspace.open(src, create=False)
    for path in source.manifest.indexed_files():
        (dest / path).write_bytes((src / path).read_bytes() * times)
    source.close()
    ws = Workspace.open(dest)
    index_workspace(ws, dense=False)
    ws.close()
    return dest


def generated_file(functions: int, dest: Path) -> Path:
    """A repository of one generated module: ``functions`` functions of 10 lines, each using
    ``foo_bar_baz`` on most lines (a file where one name matches thousands of lines), indexed lexically."""
    from probe_core import Workspace, index_workspace

    body = ("def function_{n:05d}(foo_bar_baz, other=None):\n"
            "    \"\"\"Value {n} from foo_bar_baz.\"\"\"\n"
            "    first = foo_bar_baz + {n}\n"
            "    second = first * 2 + foo_bar_baz\n"
            "    if other is not None:\n"
            "        second += other * foo_bar_baz\n"
            "    third = [foo_bar_baz] * 3\n"
            "    result = (first, second, third, foo_bar_baz)\n"
            "    log_result(result, foo_bar_baz, 'f{n}')\n"
            "    return result\n\n\n")
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "generated.py").write_text("".join(body.format(n=n) for n in range(functions)))
    ws = Workspace.open(dest)
    index_workspace(ws, dense=False)
    ws.close()
    return dest


def _scan_reference():
    """The in-memory scan search used before the word postings, kept frozen beside its equivalence test."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "literals_scan_reference", ROOT / "tests" / "retrieval" / "literals_scan_reference.py")
    module = sys.modules.get(spec.name)
    if module is None:
        module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


def cache_memory(ws) -> tuple[float, float]:
    """(MB the text cache holds once every file has been scanned, MB of the source it holds)."""
    import tracemalloc

    tracemalloc.start()
    files = _scan_reference().FileTexts().current(ws)
    for f in files.values():  # what a case-blind scan and a match in every file build
        f.holds(b"x", case=False)
        f.line_of(0)
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return held / 1e6, sum(len(f.data) for f in files.values()) / 1e6


def end_to_end(ws, queries: list[str]) -> list[tuple[float, str]]:
    """``exact_lists`` as search calls it (warm text cache, every file allowed, the default kind
    prior): (best of 3 in ms, query) per query that quotes a literal or names an identifier."""
    from probe_core.retrieval.literals import exact_lists
    from probe_core.retrieval.priors import kind_prior
    from probe_core.retrieval.query_intent import parse_query
    from probe_core.retrieval.ranking import DEFAULT_RANKING

    out = []
    for query in queries:
        intent = parse_query(query)
        if not intent.literals and not intent.identifiers:
            continue
        prior = lambda path, kind, i=intent: kind_prior({"file_path": path, "chunk_kind": kind}, i, None,
                                                        DEFAULT_RANKING)
        out.append((timed(lambda i=intent, pr=prior: exact_lists(ws, i, lambda *_: True, pr)), query))
    return out


def compare_methods(ws, corpus: str, needles: list[tuple[str, bool]]) -> None:
    """One row of the first table: the in-memory scan, ripgrep and FTS5 on the same needles."""
    ref = _scan_reference()  # search's former in-memory scan (it now reads the word postings first)
    _identifier_pattern, _literal_pattern, _occurrences = ref._identifier_pattern, ref._literal_pattern, ref._occurrences
    _utf8, file_texts = ref._utf8, ref.file_texts

    t0 = time.perf_counter()
    files = file_texts(ws).current(ws)  # cold: reads every indexed file
    load_ms = (time.perf_counter() - t0) * 1000
    lines = sum(f.data.count(b"\n") for f in files.values())

    def memory(needle, ident):
        pattern = _identifier_pattern(needle) if ident else _literal_pattern(needle)
        return _occurrences(files, _utf8(needle), pattern, 10**6, case=ident)

    mem = [timed(lambda n=n, i=i: memory(n, i)) for n, i in needles]

    rg = shutil.which("rg")
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
                       ((p, i + 1, text) for p, f in files.items()
                        for i, text in enumerate(f.data.decode().splitlines())))
        db.commit()
        build_ms = (time.perf_counter() - t0) * 1000
        size_mb = (Path(tmp) / "fts.sqlite").stat().st_size / 1e6

        def fts(needle):
            quoted = '"' + needle.replace('"', '""') + '"'
            return db.execute("SELECT path, line FROM lines WHERE text MATCH ?", (quoted,)).fetchall()

        fts_ms = [timed(lambda n=n: fts(n)) for n, _ in needles if len(n) >= 3]
        db.close()
    print(f"{corpus:<11} {lines:>7} {len(needles):>7} | {load_ms:>9.0f}ms {p50_max(mem):>15} | "
          f"{p50_max(rg_ms):>12} | {build_ms:>8.0f}ms {size_mb:>7.1f} {p50_max(fts_ms):>13}")


def p50_max(xs: list[float]) -> str:
    return f"{statistics.median(xs):.1f}/{max(xs):.1f}" if xs else "-"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus-root", type=Path, required=True)
    ap.add_argument("--queries", type=Path, default=ROOT.parent / "shared/eval/dev/queries.jsonl")
    ap.add_argument("--corpus", action="append", help="only these corpora (default: every one)")
    ap.add_argument("--replicate", type=int, default=1,
                    help="each corpus with every file's text repeated N times (indexed lexically in a temp dir)")
    ap.add_argument("--end-to-end-only", action="store_true", help="skip the ripgrep / FTS5 comparison")
    ap.add_argument("--query", action="append", default=[],
                    help="also time this query end to end (e.g. '\"rctx\"' on chi: a literal on many lines)")
    ap.add_argument("--generated-functions", type=int, default=0,
                    help="also time the identifier foo_bar_baz over one generated module of N functions")
    args = ap.parse_args()

    # the text cache's first load imports the indexer (search has by then): not the cache's time or memory
    import probe_core.indexing.indexer  # noqa: F401
    from probe_core import Workspace
    from probe_core.retrieval.query_intent import parse_query

    queries = [json.loads(line) for line in args.queries.read_text().splitlines() if line.strip()]
    searches = [q for q in queries if q["kind"] == "search"]
    corpora = args.corpus or sorted({q["corpus"] for q in searches})
    rows = []
    if not args.end_to_end_only:
        print(f"{'corpus':<11} {'lines':>7} {'needles':>7} | {'memory load':>11} {'memory p50/max':>15} | "
              f"{'rg p50/max':>12} | {'fts5 build':>10} {'fts5 MB':>7} {'fts5 p50/max':>13}")
    for corpus in corpora:
        texts = [q["query"] for q in searches if q["corpus"] == corpus]
        with tempfile.TemporaryDirectory(prefix="probe-bench-literals-") as tmp:
            root = (args.corpus_root / corpus if args.replicate == 1
                    else replicated(args.corpus_root / corpus, args.replicate, Path(tmp) / corpus))
            ws = Workspace.open(root, create=False)
            if not args.end_to_end_only:
                needles = []
                for text in texts:
                    intent = parse_query(text)
                    needles += [(lit, False) for lit in intent.literals] + [(n, True) for n in intent.identifiers]
                compare_methods(ws, corpus, needles)
            held_mb, source_mb = cache_memory(ws)
            times = end_to_end(ws, texts + args.query)
            ws.close()
        slowest = max(times, default=(0.0, "-"))
        name = corpus + (f" x{args.replicate}" if args.replicate > 1 else "")
        rows.append(f"{name:<14} {source_mb:>9.2f} {held_mb:>8.2f} {held_mb / source_mb:>5.2f}x {len(times):>7} "
                    f"{p50_max([t for t, _ in times]):>13}   {slowest[1][:60]}")
    print(f"\nexact_lists end to end (warm; best of 3 per query)\n{'corpus':<14} {'source MB':>9} "
          f"{'cache MB':>8} {'ratio':>6} {'queries':>7} {'p50/max ms':>13}   slowest query")
    print("\n".join(rows))
    if args.generated_functions:
        with tempfile.TemporaryDirectory(prefix="probe-bench-generated-") as tmp:
            ws = Workspace.open(generated_file(args.generated_functions, Path(tmp) / "gen"), create=False)
            size_kb = (ws.root / "generated.py").stat().st_size / 1e3
            (ms, _), = end_to_end(ws, ["where is foo_bar_baz used"])
            ws.close()
        print(f"\nexact_lists for foo_bar_baz, one generated module of {args.generated_functions} functions "
              f"({size_kb:.0f} KB): {ms:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
