"""Human output for the CLI (rich). JSON output never goes through here."""
from __future__ import annotations

import sys
import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.syntax import Syntax
from rich.table import Table

console = Console(stderr=False)
err_console = Console(stderr=True)


def progress_wanted(requested: bool = True) -> bool:
    """Progress bars only for a person watching: both stdout and stderr on a terminal. Piped or
    redirected output (``probe index | cat``, an agent's shell, CI logs) gets the final report only."""
    return requested and sys.stdout.isatty() and sys.stderr.isatty()


class IndexProgressView:
    """A progress display fed by ``IndexProgress`` events: files scanned, chunks stored lexically,
    chunks embedded, each with its rate and ETA. Off unless a terminal watches (``progress_wanted``);
    the columns fit an 80-column terminal."""

    def __init__(self, enabled: bool = True):
        self.enabled = progress_wanted(enabled)
        self._progress = Progress(TextColumn("{task.description:<14}"), BarColumn(bar_width=None),
                                  MofNCompleteColumn(), TextColumn("{task.fields[rate]:>7}"),
                                  TimeRemainingColumn(compact=True, elapsed_when_finished=True),
                                  console=err_console, transient=False, expand=False)
        self._tasks: dict[str, int] = {}
        self._rates: dict[str, tuple[float, int]] = {}  # task → (time, count) when it started moving
        self._final: dict[str, str] = {}  # task → its rate when it completed (frozen from then on)

    def __enter__(self):
        if self.enabled:
            self._progress.start()
            self._tasks["files"] = self._progress.add_task("files", total=None, rate="")
            self._tasks["sparse"] = self._progress.add_task("chunks lexical", total=None, rate="")
            self._tasks["dense"] = self._progress.add_task("chunks dense", total=None, rate="")
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self._progress.stop()

    def _rate(self, name: str, done: int, total: int) -> str:
        """Items per second since this counter first moved (a resumed run starts from its count),
        frozen once the counter is complete."""
        if name in self._final:
            return self._final[name]
        now = time.perf_counter()
        t0, n0 = self._rates.setdefault(name, (now, done))
        rate = f"{(done - n0) / (now - t0):.0f}/s" if done > n0 and now - t0 > 0.5 else ""
        if total and done >= total:
            self._final[name] = rate
        return rate

    def update(self, p) -> None:
        if not self.enabled:
            return
        pr = self._progress
        counts = {"files": (p.files_scanned, p.files_total), "sparse": (p.chunks_indexed, p.chunks_total),
                  "dense": (p.chunks_embedded, p.chunks_total)}
        for name, (done, total) in counts.items():
            pr.update(self._tasks[name], completed=done, total=total or None, rate=self._rate(name, done, total))


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
    if st.get("owner_pid"):  # answered by a running owner: which, and what it is doing
        t.add_row("owner", f"{st.get('owner_kind') or 'probe mcp'} pid {st['owner_pid']}")
        t.add_row("indexing_in_progress", str(st.get("indexing_in_progress")))
        if st.get("indexing_in_progress") and (p := st.get("progress")):
            t.add_row("progress", f"{p.get('phase')}: {p.get('files_scanned')}/{p.get('files_total')} files, "
                                  f"{p.get('chunks_embedded')}/{p.get('chunks_total')} chunks embedded")
    console.print(t)
    if st.get("last_error"):
        console.print(f"[red]last error:[/] {st['last_error']}")
    for e in st.get("last_errors", [])[:5]:
        console.print(f"[yellow]{e['path']}: {e['error']}[/]")
