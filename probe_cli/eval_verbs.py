"""``probe eval``: retrieval quality on this repository's own git history, Probe vs plain BM25
(``probe_core.evaluation``)."""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path


def cmd_eval(args) -> int:
    from probe_core import Workspace
    from probe_core.engine import EngineSettings, open_engine
    from probe_core.evaluation import evaluate_history
    from probe_core.records import SearchRequest

    root = Path(args.root or os.getcwd())
    max_tokens = EngineSettings().default_max_tokens  # answers are scored as the MCP tool returns them
    ws = Workspace.open(root, create=False)  # the manifest and symbol graph, read-only
    try:
        # Probe answers through the same engine as `probe search` (in-process, or a running `probe mcp`)
        with open_engine(root, background=False) as engine, _Progress(args) as bar:
            def search(query: str, _ranking: dict | None) -> list[dict]:
                return engine.search(SearchRequest(query, top_k=args.top_k, max_tokens=max_tokens))["results"]

            report = evaluate_history(ws, search, max_commits=args.max_commits, max_seconds=args.max_seconds,
                                      top_k=args.top_k, progress=bar.update)
    finally:
        ws.close()
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print_eval(report)
    return 0


class _Progress:
    """``probe eval``'s bar on a terminal (stderr): commits evaluated of the cap, commits read.
    Nothing without a terminal or with --json."""

    def __init__(self, args):
        self._bar = self._task = None
        if not args.json and sys.stderr.isatty():
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            from .render import err_console

            self._bar = Progress(TextColumn("commits evaluated"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[read]} read"), TimeElapsedColumn(), console=err_console.get(),
                                 transient=True)

    def __enter__(self):
        if self._bar is not None:
            self._bar.start()
            self._task = self._bar.add_task("eval", total=None, read=0)
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.stop()

    def update(self, p) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=p.evaluated, total=p.cap, read=p.examined)


_STOPPED_BY = {"history": "history", "max_commits": "--max-commits", "max_seconds": "--max-seconds"}


def print_eval(report) -> None:
    """The systems' scores and what was skipped."""
    stopped = _STOPPED_BY.get(report.stopped_by, f"the read limit of {report.read_limit} commits")
    print(f"{len(report.cases)} commits evaluated ({report.examined} read; stopped by {stopped}) "
          f"in {report.seconds:.0f}s")
    print(f"{'system':<8} {'R@1':>6} {'R@10':>6} {'MRR@10':>7}")
    for system, m in report.summary().items():
        print(f"{system:<8} {m['R@1']:>6.3f} {m['R@10']:>6.3f} {m['MRR@10']:>7.3f}")
    if report.skipped:
        print("skipped: " + "; ".join(f"{n} {reason}" for reason, n in report.skipped.most_common()))


def _count(text: str) -> int:
    """An argparse ``type=``: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _seconds(text: str) -> float:
    """An argparse ``type=``: a positive, finite number of seconds (``nan`` and ``inf`` are not)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, not {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text!r}")
    return value


def register(sub) -> None:
    from probe_core.limits import TOP_K

    sp = sub.add_parser("eval", help="score retrieval on this repository's git history (Probe vs BM25)",
                        description="Each usable commit's message is a query and the functions it changed are the "
                                    "answer; reports R@1, R@10 and MRR@10 for Probe and a plain BM25 baseline.")
    sp.add_argument("--root", default=argparse.SUPPRESS, help="workspace root (default: current directory)")
    sp.add_argument("--max-commits", type=_count, default=100, metavar="N",
                    help="evaluate at most this many commits (default 100)")
    sp.add_argument("--max-seconds", type=_seconds, default=600, metavar="S",
                    help="stop after this many seconds (default 600)")
    sp.add_argument("--top-k", type=TOP_K.flag, default=10, help=argparse.SUPPRESS)
    sp.add_argument("--json", action="store_true", help="print the full report (every commit) as JSON")
    sp.set_defaults(func=cmd_eval)
