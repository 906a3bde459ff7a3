"""Human output for the CLI (rich). JSON output never goes through here."""
from __future__ import annotations

import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.syntax import Syntax
from rich.table import Table

console = Console(stderr=False)
err_console = Console(stderr=True)


class IndexProgressView:
    """A rich progress display fed by ``IndexProgress`` events (files, lexical and dense chunks)."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self._progress = Progress(TextColumn("{task.description:<16}"), BarColumn(), MofNCompleteColumn(),
                                  TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), console=err_console,
                                  transient=False)
        self._tasks: dict[str, int] = {}
        self._t0 = time.perf_counter()

    def __enter__(self):
        if self.enabled:
            self._progress.start()
            self._tasks["files"] = self._progress.add_task("files scanned", total=None, rate="")
            self._tasks["sparse"] = self._progress.add_task("chunks (BM25)", total=None, rate="")
            self._tasks["dense"] = self._progress.add_task("chunks (dense)", total=None, rate="")
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self._progress.stop()

    def update(self, p) -> None:
        if not self.enabled:
            return
        pr = self._progress
        pr.update(self._tasks["files"], completed=p.files_scanned, total=p.files_total or None)
        pr.update(self._tasks["sparse"], completed=p.chunks_indexed, total=p.chunks_total or None)
        elapsed = max(1e-6, time.perf_counter() - self._t0)
        rate = f"{p.chunks_embedded / elapsed:.0f}/s" if p.phase == "dense" else ""
        pr.update(self._tasks["dense"], completed=p.chunks_embedded, total=p.chunks_total or None, rate=rate)


def print_index_report(report, ws) -> None:
    console.print(
        f"[bold green]indexed[/] {report.files_indexed} files ({report.chunks_indexed} chunks), "
        f"{report.files_unchanged} unchanged, {report.files_deleted} deleted, {report.files_skipped} skipped, "
        f"{report.files_failed} failed; {report.chunks_embedded} chunks embedded; "
        f"generation {report.generation} in {report.seconds:.1f}s")
    if report.reconciled and any(report.reconciled.values()):
        console.print(f"[yellow]recovered from an interrupted run:[/] {report.reconciled}")
    for path, err in report.errors[:5]:
        console.print(f"[yellow]  {path}: {err}[/]")


def print_search(resp) -> None:
    if resp.message:
        console.print(f"[yellow]{resp.status}: {resp.message}[/]")
    if not resp.results:
        console.print("no results")
    for i, r in enumerate(resp.results, 1):
        sig = r.signals
        stale = " [red]STALE[/]" if r.stale else ""
        sym = f" [cyan]{r.symbol}[/]" if r.symbol else ""
        console.print(f"[bold]{i:>2}. {r.source}[/]{sym}  score {r.score:.4f}  "
                      f"dense#{sig.get('dense_rank') or '-'} bm25#{sig.get('bm25_rank') or '-'}{stale}")
        if r.snippet:
            console.print(Syntax(r.snippet, r.language or "text", line_numbers=True, start_line=r.start_line,
                                 word_wrap=False, theme="ansi_dark"))
    console.print(f"[dim]{len(resp.results)} results in {resp.took_ms:.0f} ms "
                  f"(generation {resp.generation}, dense coverage {resp.dense_coverage:.0%})[/]")


def print_status(st: dict) -> None:
    t = Table(show_header=False, box=None)
    for key in ("root", "preset", "store", "embedding_model_id", "embedding_dimensions", "index_generation",
                "branch", "indexed_branches", "files_indexed", "files_failed", "chunks_indexed", "chunks_embedded",
                "dense_coverage", "seconds_since_scan", "backend_reachable", "index_config_mismatch", "interrupted_run"):
        value = st.get(key)
        t.add_row(key, ", ".join(value) if isinstance(value, list) else str(value))
    console.print(t)
    if st.get("last_error"):
        console.print(f"[red]last error:[/] {st['last_error']}")
    for e in st.get("last_errors", [])[:5]:
        console.print(f"[yellow]{e['path']}: {e['error']}[/]")
    skipped = st.get("skipped") or {}
    if skipped.get("by_reason"):
        counts = ", ".join(f"{n} {reason}" for reason, n in skipped["by_reason"].items())
        shown = "; ".join(f"{e['path']} ({e['reason']})" for e in skipped.get("examples", [])[:5])
        console.print(f"skipped: {counts}", markup=False)
        console.print(f"  e.g. {shown}", markup=False)
