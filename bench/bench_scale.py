"""Monorepo scale: build test trees reproducibly, then measure what grows with the repository.

  python bench/bench_scale.py build --tier small       # Werkzeug 3.0.1 sdist (~40k lines)
  python bench/bench_scale.py build --tier medium      # Django 4.2.7 sdist (1.0M lines with docs and locales)
  python bench/bench_scale.py build --tier monorepo    # + sympy 1.12 sdist + Go 1.19's std library
  python bench/bench_scale.py measure --tree /tmp/probe-scale/medium [--code DIR] [--json out.json]
  python bench/bench_scale.py table before.json after.json   # the markdown rows of docs/benchmarks.md

Sources are what a build machine reaches with the ordinary clients: PyPI sdists (``pip download``),
npm tarballs (``npm pack``) and Debian packages (``apt-get download golang-1.19-src``, which holds
the Go standard library). Versions are pinned, so the same tree comes back on any machine.

``measure`` copies the tree to a scratch folder, indexes it lexically (``dense=False``: filling 2M
lines with dense vectors takes hours on 2 cores), then reports: lexical-ready seconds, peak RSS,
search ``took_ms`` p50/p95 over distinct queries (no cache hits), ``callers``/``callees``/``refs``
ms, and ``.probe/`` size by SQLite table (``dbstat``) and by file. ``--code DIR`` runs another
checkout's ``probe_core`` (main's code, for a before/after table on the same tree).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from report import emit, percentile  # noqa: E402  (bench/ is on sys.path when run as a script)

ROOT = Path(__file__).resolve().parents[1]

PYPI = {"small": [("Werkzeug", "3.0.1")], "medium": [("Django", "4.2.7")], "monorepo": [("Django", "4.2.7"), ("sympy", "1.12")]}
DEBIAN_GO = "golang-1.19-src"  # /usr/share/go-1.19/src: the Go standard library and toolchain
GO_SKIP = ("cmd/", "testdata/")  # the toolchain (960k lines) and test inputs: the library is enough

QUERIES = [
    "how are database migrations applied", "parse an HTTP request header", "render a template with context",
    "validate an email address", "password hashing", "url routing and reverse", "cache backend get and set",
    "serialize an object to json", "read a file line by line", "solve a differential equation",
    "simplify a trigonometric expression", "matrix determinant", "tls handshake", "gzip compression writer",
    "sort a slice with a less function", "parse a time duration string", "goroutine scheduler",
    "csrf token check", "form field cleaning", "sql query compiler", "QuerySet.filter", "get_object_or_404",
    "sympify", "dsolve", "ParseDuration", "bufio.Scanner", "\"invalid literal\"", "\"CSRF verification failed\"",
    "\"unexpected EOF\"", "middleware order", "session expiry", "integer factorization", "rational number",
    "polynomial gcd", "http server shutdown", "json decoder stream", "regular expression compile",
    "timezone aware datetime", "admin site register model", "pagination of results",
]
INTEL = [("callers", "sympify"), ("callers", "get_object_or_404"), ("callers", "ParseDuration"),
         ("refs", "QuerySet"), ("refs", "Matrix"), ("callees", "dsolve"), ("callees", "reverse"),
         ("callers", "Errorf")]


def build(tier: str, dest: Path) -> None:
    """The tier's tree under ``dest`` (downloads into ``dest``/../downloads, kept for reruns)."""
    cache = dest.parent / "downloads"
    cache.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for name, version in PYPI[tier]:
        sdist = next(cache.glob(f"{name}-{version}.tar.gz"), None) or next(cache.glob(f"{name.lower()}-{version}.tar.gz"), None)
        if sdist is None:
            subprocess.run([shutil.which("pip3") or shutil.which("pip") or "pip", "download", "--no-deps", "--no-binary", ":all:",
                            f"{name}=={version}", "-d", str(cache)], check=True)
            sdist = next(cache.glob(f"[{name[0]}{name[0].lower()}]{name[1:]}-{version}.tar.gz"))
        with tarfile.open(sdist) as tar:
            tar.extractall(dest, filter="data")
    if tier == "monorepo":
        deb = next(cache.glob(f"{DEBIAN_GO}_*.deb"), None)
        if deb is None:
            subprocess.run(["apt-get", "download", DEBIAN_GO], cwd=cache, check=True)
            deb = next(cache.glob(f"{DEBIAN_GO}_*.deb"))
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["dpkg", "-x", str(deb), tmp], check=True)
            src = next(Path(tmp).glob("usr/share/go-*/src"))
            for f in src.rglob("*"):
                rel = f.relative_to(src).as_posix()
                if f.is_file() and not f.is_symlink() and not any(s in rel + "/" for s in GO_SKIP):
                    (dest / "go" / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(f, dest / "go" / rel)
    print(f"{dest}: {sum(1 for p in dest.rglob('*') if p.is_file())} files")


def table_sizes(db_path: Path) -> dict[str, float]:
    """MB per table and index of an SQLite file (``dbstat``), largest first."""
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    rows = db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
    db.close()
    return {name: round(size / 1e6, 2) for name, size in rows if size >= 1e5}


def dir_mb(path: Path, *, allocated: bool = False) -> float:
    """Apparent size (what ``ls`` shows), or the blocks allocated (``du``: Qdrant preallocates its WAL)."""
    stats = [f.stat() for f in path.rglob("*") if f.is_file()]
    return round(sum(st.st_blocks * 512 if allocated else st.st_size for st in stats) / 1e6, 1)


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def measure(tree: Path, work: Path) -> dict:
    from probe_core import Workspace, index_workspace, search
    from probe_core.intel import find_callees, find_callers, find_references

    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(tree, work, ignore=shutil.ignore_patterns(".probe"))
    src_bytes = sum(f.stat().st_size for f in work.rglob("*") if f.is_file())
    ws = Workspace.open(work)
    load_start = os.getloadavg()[0]
    t0, c0, k0 = time.perf_counter(), time.process_time(), _children_cpu()
    index_workspace(ws, dense=False)
    lexical_ready, lexical_cpu = time.perf_counter() - t0, time.process_time() - c0
    workers_cpu = _children_cpu() - k0  # the indexer's worker processes (indexing/prepare_pool.py), once joined
    rss_index = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    indexed_bytes = sum((work / p).stat().st_size for p in ws.manifest.file_paths())
    lines = sum((work / p).read_bytes().count(b"\n") for p in ws.manifest.file_paths())

    for q in ("warm up the caches", "warm_up the_caches"):  # the first searches load the per-workspace caches
        search(ws, q)
    took, wall, cpu = [], [], []
    for q in QUERIES:
        t, c = time.perf_counter(), time.process_time()
        took.append(search(ws, q, top_k=10).took_ms)
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    intel: dict[str, float] = {}
    funcs = {"callers": find_callers, "callees": find_callees, "refs": find_references}
    for verb, sym in INTEL:
        t, c = time.perf_counter(), time.process_time()
        try:
            n = len(funcs[verb](ws, sym).items)
        except Exception as exc:  # noqa: BLE001 - a symbol missing from this tier
            n = f"error: {str(exc)[:60]}"
        intel[f"{verb} {sym}"] = {"ms": round((time.perf_counter() - t) * 1000, 1),
                                  "cpu_ms": round((time.process_time() - c) * 1000, 1), "items": n}
    counts = ws.manifest.counts()
    ws.close()
    probe = work / ".probe"
    return {
        "machine": f"{platform.machine()} {os.cpu_count()} cores (shared, under load), Python {platform.python_version()}",
        "tree": str(tree), "files": counts["files"], "lines": lines, "chunks": counts["chunks"],
        "source_mb": round(src_bytes / 1e6, 1), "indexed_source_mb": round(indexed_bytes / 1e6, 1),
        "lexical_ready_s": round(lexical_ready, 1), "lexical_ready_cpu_s": round(lexical_cpu, 1),
        "lexical_ready_workers_cpu_s": round(workers_cpu, 1), "load_average_start": load_start,
        "rss_worker_peak_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 0),
        "load_average": os.getloadavg()[0],
        "rss_after_index_mb": round(rss_index, 0),
        "rss_peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 0),
        "search_took_p50_ms": round(statistics.median(took), 1), "search_took_p95_ms": round(percentile(took, 95), 1),
        "search_wall_p50_ms": round(statistics.median(wall), 1), "search_wall_p95_ms": round(percentile(wall, 95), 1),
        "search_cpu_p50_ms": round(statistics.median(cpu), 1), "search_cpu_p95_ms": round(percentile(cpu, 95), 1),
        "intel": intel,
        "probe_dir_mb": dir_mb(probe), "probe_dir_allocated_mb": dir_mb(probe, allocated=True),
        "store_allocated_mb": dir_mb(probe / "store", allocated=True),
        "probe_files_mb": {f.name: dir_mb(f) if f.is_dir() else round(f.stat().st_size / 1e6, 1) for f in probe.iterdir()},
        "manifest_tables_mb": table_sizes(probe / "manifest.sqlite"),
    }


def table(before: dict, after: dict) -> str:
    """A markdown before/after table of two ``measure`` results (same tree)."""
    def intel(d: dict, key: str) -> str:
        found = [v for k, v in d["intel"].items() if k.startswith(key) and isinstance(v["items"], int)]
        if not found:
            return "—"
        return " / ".join(f"{v['ms']:.0f} ({v['cpu_ms']:.0f})" if "cpu_ms" in v else f"{v['ms']:.0f}" for v in found)

    def tables(d: dict, names: tuple[str, ...]) -> float:
        return round(sum(v for k, v in d["manifest_tables_mb"].items() if k.startswith(names)), 1)

    rows = [
        ("lexical-ready, wall (CPU) s", lambda d: f"{d['lexical_ready_s']} ({d.get('lexical_ready_cpu_s', '—')})"),
        ("lexical-ready, CPU s of worker processes", lambda d: f"{d.get('lexical_ready_workers_cpu_s', '—')}"),
        ("search took_ms p50 / p95", lambda d: f"{d['search_took_p50_ms']} / {d['search_took_p95_ms']}"),
        ("search CPU ms p50 / p95", lambda d: f"{d.get('search_cpu_p50_ms', '—')} / {d.get('search_cpu_p95_ms', '—')}"),
        ("callers, ms wall (CPU)", lambda d: intel(d, "callers")),
        ("refs, ms wall (CPU)", lambda d: intel(d, "refs")),
        ("callees, ms wall (CPU)", lambda d: intel(d, "callees")),
        ("peak RSS MB", lambda d: f"{d['rss_peak_mb']:.0f}"),
        ("peak RSS of a worker process MB", lambda d: f"{d.get('rss_worker_peak_mb', '—')}"),
        (".probe/ MB apparent (allocated)", lambda d: f"{d['probe_dir_mb']} ({d.get('probe_dir_allocated_mb', '—')})"),
        ("store MB allocated", lambda d: f"{d.get('store_allocated_mb', '—')}"),
        ("manifest.sqlite MB", lambda d: f"{d['probe_files_mb'].get('manifest.sqlite', 0)}"),
        ("graph uses (graph_refs, graph_uses + names) MB", lambda d: f"{tables(d, ('graph_refs', 'graph_uses', 'graph_names', 'sqlite_autoindex_graph_names'))}"),
        ("word postings (postings, terms, graph_files) MB", lambda d: f"{tables(d, ('graph_postings', 'graph_terms', 'sqlite_autoindex_graph_terms', 'graph_files'))}"),
        ("pending_dense (+ indexes) MB", lambda d: f"{tables(d, ('pending', 'sqlite_autoindex_pending'))}"),
        ("chunks (+ indexes, paths) MB", lambda d: f"{tables(d, ('chunks', 'sqlite_autoindex_chunks', 'paths', 'sqlite_autoindex_paths'))}"),
        ("load average at the end", lambda d: f"{d.get('load_average', 0):.1f}"),
    ]
    out = [f"| {before['lines']:,} lines, {before['files']:,} files, {before['indexed_source_mb']} MB indexed | main | this branch |",
           "| --- | --- | --- |"]
    out += [f"| {name} | {fmt(before)} | {fmt(after)} |" for name, fmt in rows]
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--tier", choices=sorted(PYPI), required=True)
    b.add_argument("--dest", type=Path)
    m = sub.add_parser("measure")
    m.add_argument("--tree", type=Path, required=True)
    m.add_argument("--work", type=Path, default=Path("/tmp/probe-scale-work"))
    m.add_argument("--code", type=Path, help="a checkout whose probe_core to measure (default: this one)")
    m.add_argument("--json", type=Path)
    t = sub.add_parser("table")
    t.add_argument("before", type=Path)
    t.add_argument("after", type=Path)
    args = ap.parse_args()
    if args.cmd == "table":
        print(table(json.loads(args.before.read_text()), json.loads(args.after.read_text())))
        return 0
    if args.cmd == "build":
        build(args.tier, args.dest or Path("/tmp/probe-scale") / args.tier)
        return 0
    sys.path.insert(0, str((args.code or ROOT).resolve()))
    os.environ.setdefault("PROBE_EMBEDDER", "minilm")
    out = measure(args.tree, args.work)
    out["code"] = str(args.code or ROOT)
    return emit(out, args.json)


if __name__ == "__main__":
    sys.exit(main())
