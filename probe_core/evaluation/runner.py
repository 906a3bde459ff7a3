"""``probe eval``: how well search finds what each commit of the repository changed, from its own
message, for Probe and for a plain BM25 baseline in the same run.

For each usable commit (newest first; see ``commits`` and ``gold`` for what is skipped and why)
the cleaned message is the query and the definitions the commit changed, located in today's tree,
are the gold. Every system answers every query; the report gives R@1, R@10 and MRR@10 per system
(the dev set's definitions, ``metrics``), the commits used and skipped, and what stopped the run
(the commit cap, the time cap, the read limit, or the end of the history).
"""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ProbeError
from ..scan import read_text
from ..workspace import Workspace
from .bm25_baseline import WindowBm25
from .commits import head_commit, iter_commits, query_from_message, read_hunks, skip_reason
from .errors import EvaluationError, GitError
from .gold import GoldSpan, commit_gold
from .metrics import mean_scores, score

BASELINE = "bm25"
TOP_K = 10
# Commits read from the log at most, for a --max-commits of N: most commits are skipped (tests or
# docs only, too short a message), but a history with few usable ones must not be read to its end.
MIN_COMMITS_READ = 200
COMMITS_READ_PER_CASE = 20
SearchFn = Callable[[str, dict | None], list[dict]]  # (query, ranking overrides) -> ranked results


@dataclass(slots=True)
class EvalProgress:
    """Where a run is: commits evaluated of the cap, commits read so far."""

    evaluated: int
    cap: int
    examined: int


@dataclass(slots=True)
class EvalCase:
    sha: str
    subject: str
    query: str
    gold: list[GoldSpan]
    scores: dict[str, dict[str, float]] = field(default_factory=dict)  # system → metrics

    def to_dict(self) -> dict:
        return {"sha": self.sha, "subject": self.subject, "query": self.query,
                "gold": [g.to_dict() for g in self.gold], "scores": self.scores}


@dataclass(slots=True)
class EvalReport:
    root: str
    head: str
    systems: list[str]
    cases: list[EvalCase] = field(default_factory=list)
    examined: int = 0
    skipped: Counter = field(default_factory=Counter)
    stopped_by: str = "history"  # history | max_commits | max_seconds | read_limit
    read_limit: int = 0  # the most commits this run would read (``stopped_by == "read_limit"``: reached)
    seconds: float = 0.0

    def summary(self) -> dict[str, dict[str, float]]:
        """Mean metrics per system over the evaluated commits."""
        return {s: mean_scores([c.scores[s] for c in self.cases]) for s in self.systems}

    def to_dict(self) -> dict:
        return {"root": self.root, "head": self.head, "commits_examined": self.examined,
                "commits_evaluated": len(self.cases), "skipped": dict(self.skipped.most_common()),
                "stopped_by": self.stopped_by, "read_limit": self.read_limit, "seconds": round(self.seconds, 1),
                "systems": {s: {k: round(v, 4) for k, v in m.items()} for s, m in self.summary().items()},
                "cases": [c.to_dict() for c in self.cases]}


def baseline_index(ws: Workspace) -> WindowBm25:
    """The BM25 baseline over the files the index holds, read from disk."""
    files = []
    for path in sorted(ws.manifest.indexed_files()):
        try:
            files.append((path, read_text(ws.root, path)))
        except (OSError, ProbeError):  # vanished or unreadable since it was indexed
            continue
    return WindowBm25(files)


def evaluate_history(ws: Workspace, search: SearchFn, *, variants: dict[str, dict | None] | None = None,
                     max_commits: int = 100, max_seconds: float = 600.0, top_k: int = TOP_K,
                     progress: Callable[[EvalProgress], None] | None = None) -> EvalReport:
    """Evaluate search on ``ws``'s git history (see the module docstring).

    ``search(query, ranking)`` answers one query; ``variants`` names the ranking overrides to
    score (default: ``{"probe": None}``, the workspace's own ranking). ``max_commits`` caps the
    commits evaluated, ``max_seconds`` the wall time (checked between commits); at most
    ``max(MIN_COMMITS_READ, COMMITS_READ_PER_CASE * max_commits)`` commits are read. A commit git
    cannot show is skipped (counted under its reason)."""
    if max_commits < 1 or not max_seconds > 0:  # "not >" also refuses NaN
        raise EvaluationError("--max-commits must be at least 1 and --max-seconds positive")
    from ..intel.build import ensure_graph, graph_store

    t0 = time.monotonic()
    root = Path(ws.root)
    variants = variants or {"probe": None}
    report = EvalReport(root=str(root), head=head_commit(root), systems=[*variants, BASELINE],
                        read_limit=max(MIN_COMMITS_READ, COMMITS_READ_PER_CASE * max_commits))
    if ws.manifest.counts()["chunks"] == 0:
        raise EvaluationError(f"{root} has no indexed chunks; run `probe index` first")
    ensure_graph(ws)
    graph = graph_store(ws)
    kinds = {p: kind for p, (_h, _lang, kind) in ws.manifest.indexed_files().items()}
    baseline = baseline_index(ws)
    # one more than the limit: a history that ends exactly there was read to its end
    for commit in iter_commits(root, limit=report.read_limit + 1):
        if len(report.cases) >= max_commits:
            report.stopped_by = "max_commits"
            break
        if time.monotonic() - t0 >= max_seconds:
            report.stopped_by = "max_seconds"
            break
        if report.examined >= report.read_limit:
            report.stopped_by = "read_limit"
            break
        report.examined += 1
        query = query_from_message(commit.message)
        reason = skip_reason(commit, query)
        gold: list[GoldSpan] = []
        if reason is None:
            try:
                read_hunks(root, commit)
            except GitError:  # one unreadable commit (a missing object, a timeout) is one skip
                reason = "git could not show the commit"
        if reason is None:
            gold, reason = commit_gold(root, commit, graph, kinds)
        if reason is not None:
            report.skipped[reason] += 1
        else:
            case = EvalCase(commit.sha, commit.subject, query, gold)
            golds = [g.to_dict() for g in gold]
            for name, ranking in variants.items():
                case.scores[name] = score(search(query, ranking)[:top_k], golds)
            case.scores[BASELINE] = score(baseline.search(query, top_k), golds)
            report.cases.append(case)
        if progress is not None:
            progress(EvalProgress(len(report.cases), max_commits, report.examined))
    report.seconds = time.monotonic() - t0
    if not report.cases:
        raise EvaluationError(
            f"none of the {report.examined} commits read gave a usable query and gold "
            f"({', '.join(f'{n} {r}' for r, n in report.skipped.most_common()) or 'no commits'})")
    return report
