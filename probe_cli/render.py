"""Human output for the CLI. JSON output never goes through here.

On a terminal: rich (colour, syntax-highlighted snippets that wrap rather than lose text). Piped or
redirected: plain text, one record per line, never wrapped or cut at a width and with no padding,
so ``grep``, ``head`` and ``less`` see exactly what was found (rich alone would wrap at 80 columns
and crop code lines). Piped, ``soft_wrap`` keeps rich from inserting line breaks of its own; on a
terminal, prose wraps at word boundaries within the terminal's width.
"""
from __future__ import annotations

import sys
import time


def _make_console(stderr: bool):
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            """rich would exit with status 1 here; ``main`` treats a reader that left as a normal end."""
            raise BrokenPipeError

    console = _Console(stderr=stderr, highlight=False)
    # piped: never break a line (readers grep it); on a terminal, prose wraps at words within the width
    console.soft_wrap = not console.is_terminal
    return console


class _LazyConsole:
    """A rich ``Console`` made on first use. Piped search and status output is plain ``print`` and
    never imports rich: it is most of what a warm CLI call through the owner would otherwise cost."""

    def __init__(self, stderr: bool):
        self._stderr = stderr
        self._console = None

    def get(self):
        """The rich ``Console`` itself (for rich objects that take one, such as ``Progress``)."""
        if self._console is None:
            self._console = _make_console(self._stderr)
        return self._console

    def __getattr__(self, name: str):
        return getattr(self.get(), name)


console = _LazyConsole(stderr=False)
err_console = _LazyConsole(stderr=True)


def escape(text: str) -> str:
    """``text`` safe inside rich markup (square brackets in paths and messages are not tags)."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def piped() -> bool:
    """True when stdout is not a terminal: print plain, unwrapped text."""
    return not sys.stdout.isatty()


def print_pairs(rows: list[tuple[str, str]]) -> None:
    """``key  value`` lines, keys aligned: a borderless table on a terminal, plain text when piped."""
    if piped():
        width = max((len(k) for k, _ in rows), default=0)
        for key, value in rows:
            print(f"{key.ljust(width)}  {value}".rstrip())
        return
    from rich.table import Table

    t = Table(show_header=False, box=None)
    for key, value in rows:
        t.add_row(key, escape(value))
    console.print(t)


def print_table(header: list[str], rows: list[list[str]]) -> None:
    """Columns with a header: a rich table on a terminal, space-aligned plain text when piped (the
    last column is never padded, so long paths stay whole)."""
    if not piped():
        from rich.table import Table

        table = Table(*header, box=None)
        for row in rows:
            table.add_row(*(escape(c) for c in row))
        console.print(table)
        return
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    for row in [header, *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(row[:-1], widths)) + "  " + row[-1])


def progress_wanted(requested: bool = True) -> bool:
    """Progress bars only for a person watching: both stdout and stderr on a terminal. Piped or
    redirected output (``probe index | cat``, an agent's shell, CI logs) gets the final report only."""
    return requested and sys.stdout.isatty() and sys.stderr.isatty()


class IndexProgressView:
    """A progress display fed by ``IndexProgress`` events: files scanned, chunks stored lexically,
    chunks embedded, each with its rate and ETA. Off unless a terminal watches (``progress_wanted``);
    the columns fit an 80-column terminal."""

    def __init__(self, enabled: bool = True):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.enabled = progress_wanted(enabled)
        self._progress = Progress(TextColumn("{task.description:<14}"), BarColumn(bar_width=None),
                                  MofNCompleteColumn(), TextColumn("{task.fields[rate]:>7}"),
                                  TimeRemainingColumn(compact=True, elapsed_when_finished=True),
                                  console=err_console.get(), transient=False, expand=False)
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


def print_index_report(report) -> None:
    console.print(
        f"[bold green]indexed[/] {report.files_indexed} files ({report.chunks_indexed} chunks), "
        f"{report.files_unchanged} unchanged, {report.files_deleted} deleted, {report.files_skipped} skipped, "
        f"{report.files_failed} failed; {report.chunks_embedded} chunks embedded; "
        f"generation {report.generation} in {report.seconds:.1f}s")
    print_repairs(report.reconciled)
    print_failures(report.errors)


def print_repairs(reconciled: dict) -> None:
    """What an index run repaired before it started (an interrupted run, points lost from the store)."""
    done = {k: v for k, v in (reconciled or {}).items() if k != "cause" and v}
    if done:
        what = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in done.items())
        console.print(f"[yellow]repaired the index after {escape(reconciled.get('cause', 'an interrupted run'))}:[/] "
                      f"{escape(what)}")


def print_failures(errors: list, *, limit: int = 5) -> None:
    """One warning line per file that could not be indexed (on stderr: stdout stays the report)."""
    for path, err in errors[:limit]:
        err_console.print(f"[yellow]warning: {escape(path)}: {escape(err)}[/]")
    if len(errors) > limit:
        err_console.print(f"[yellow]warning: … and {len(errors) - limit} more (`probe status` lists them)[/]")


def print_search(resp) -> None:
    if piped():
        _print_search_plain(resp)
        return
    from rich.syntax import Syntax

    if resp.message:
        console.print(f"[yellow]{resp.status}: {escape(resp.message)}[/]")
    if not resp.results:
        console.print("no results")
    for i, r in enumerate(resp.results, 1):
        stale = " [red]STALE[/]" if r.stale else ""
        sym = f" [cyan]{escape(r.symbol)}[/]" if r.symbol else ""
        console.print(f"[bold]{escape(_result_line(i, r, ''))}[/]{sym}{escape(_result_tail(r))}{stale}")
        if r.snippet:  # long lines wrap under the gutter instead of being cropped at the terminal's edge
            console.print(Syntax(r.snippet, r.language or "text", line_numbers=True, start_line=r.start_line,
                                 word_wrap=True, theme="ansi_dark"))
    console.print(f"[dim]{escape(_search_footer(resp))}[/]")


def _print_search_plain(resp) -> None:
    """Piped: the lines as they are on disk, numbered; nothing wrapped, nothing cut, no colour."""
    if resp.message:
        print(f"{resp.status}: {resp.message}")
    if not resp.results:
        print("no results")
    for i, r in enumerate(resp.results, 1):
        sym = f" {r.symbol}" if r.symbol else ""
        print(f"{_result_line(i, r, sym)}{_result_tail(r)}{' STALE' if r.stale else ''}")
        if not r.snippet:
            continue
        width = len(str(r.start_line + r.snippet.count("\n")))
        for n, line in enumerate(r.snippet.split("\n"), r.start_line):
            print(f"  {n:>{width}}  {line}".rstrip())
    print(_search_footer(resp))


def _result_line(i: int, r, symbol: str) -> str:
    return f"{i:>2}. {r.source}{symbol}"


def _result_tail(r) -> str:
    sig = r.signals
    return f"  score {r.score:.4f}  dense#{sig.get('dense_rank') or '-'} bm25#{sig.get('bm25_rank') or '-'}"


def _search_footer(resp) -> str:
    return (f"{len(resp.results)} results in {resp.took_ms:.0f} ms "
            f"(generation {resp.generation}, dense coverage {resp.dense_coverage:.0%})")


STATUS_KEYS = ("root", "preset", "store", "embedding_model_id", "embedding_dimensions", "index_generation",
               "branch", "indexed_branches", "files_indexed", "files_failed", "chunks_indexed", "points_in_store",
               "chunks_embedded", "dense_coverage", "seconds_since_scan", "backend_reachable",
               "index_config_mismatch", "index_damaged", "interrupted_run")


def print_status(st: dict) -> None:
    rows = []
    # an owner still opening the index (loading the store and the model) knows only its root:
    # its other fields would all read "None"
    opening = bool(st.get("owner_pid")) and "index_generation" not in st
    for key in STATUS_KEYS:
        if (key == "points_in_store" and key not in st) or (opening and key != "root"):
            continue
        value = st.get(key)
        rows.append((key, ", ".join(value) if isinstance(value, list) else str(value)))
    if st.get("owner_pid"):  # answered by a running owner: which, and what it is doing
        from probe_core.engine.lock import owner_name

        rows.append(("owner", f"{owner_name(st.get('owner_kind'))} pid {st['owner_pid']}"))
        if opening:
            rows.append(("state", "opening the index (loading the store and the model); ask again in a moment"))
        rows.append(("indexing_in_progress", str(st.get("indexing_in_progress"))))
        if st.get("indexing_in_progress") and (p := st.get("progress")):
            rows.append(("progress", f"{p.get('phase')}: {p.get('files_scanned')}/{p.get('files_total')} files, "
                                     f"{p.get('chunks_embedded')}/{p.get('chunks_total')} chunks embedded"))
    for lib in st.get("libraries") or []:
        failed = f", {lib['files_failed']} failed" if lib.get("files_failed") else ""
        rows.append((f"library {lib['name']}", f"{lib.get('files') if lib.get('files') is not None else '-'} files"
                                               f"{failed}, {lib.get('chunks') or 0} chunks"))
    print_pairs(rows)
    notes = []  # (plain text, rich style)
    if st.get("last_error"):
        notes.append((f"last error: {st['last_error']}", "red"))
    if st.get("user_data_dir_error"):
        notes.append((f"warning: {st['user_data_dir_error']}", "yellow"))
    for e in st.get("last_errors", [])[:5]:
        notes.append((f"{e['path']}: {e['error']}", "yellow"))
    skipped = st.get("skipped") or {}
    if skipped.get("by_reason"):
        counts = ", ".join(f"{n} {reason}" for reason, n in skipped["by_reason"].items())
        shown = "; ".join(f"{e['path']} ({e['reason']})" for e in skipped.get("examples", [])[:5])
        notes += [(f"skipped: {counts}", ""), (f"  e.g. {shown}", "")]
    for text, style in notes:
        if piped():
            print(text)
        else:
            console.print(text, style=style or None, markup=False)
