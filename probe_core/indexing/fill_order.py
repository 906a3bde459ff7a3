"""The order dense vectors are filled in: the chunks queries want first.

On a large repository the dense fill takes hours, and while it runs only the embedded chunks can be
found by meaning. So the queue (the manifest's ``pending_dense``) is served by a key, not by arrival:
source code first, then tests, docs, configuration, and generated files last (the search priors
rank tests above docs: ×0.75 against ×0.5); within a kind, the most recently changed files first
(the code someone is working on), and a file's chunks in their order.

The key is one integer, kept with each queued chunk and indexed, so taking the next batch is an index
walk however long the queue is.
"""
from __future__ import annotations

import re

from ..storage.manifest import Manifest

KIND_RANK = {"code": 0, "test": 1, "doc": 2, "config": 3}
GENERATED_RANK = 4
_SPAN = 10 ** 10  # seconds: mtimes up to the year 2286 fit below it
UNRANKED = -1  # a chunk queued before fill order existed (manifest migration): ranked by ``rank_queue``

# names generators leave on what they write (protobuf, gRPC, Go's stringer and deepcopy, .NET
# designers, Dart's build_runner, minified or bundled output), and directories holding their output
_GENERATED = re.compile(
    r"(^|/)(generated|__generated__|dist|vendor|third_party)/"
    r"|(_pb2(_grpc)?\.pyi?|\.pb\.(go|cc|h)|_pb\.(js|ts|d\.ts)|_grpc\.pb\.go|_gen\.go|_generated\.\w+"
    r"|^zz_generated[^/]*|/zz_generated[^/]*|\.designer\.cs|\.g\.(dart|cs)|\.freezed\.dart"
    r"|\.min\.\w+|\.bundle\.\w+)$")


def looks_generated(path: str) -> bool:
    """Whether ``path`` looks like a generator's output (by name or directory)."""
    return bool(_GENERATED.search(path))


def fill_order(path: str, chunk_kind: str | None, mtime_ns: int) -> int:
    """The queue key of a file's chunks: smaller is embedded sooner (see the module docstring)."""
    rank = GENERATED_RANK if looks_generated(path) else KIND_RANK.get(chunk_kind or "code", 0)
    age = _SPAN - 1 - min(max(mtime_ns // 1_000_000_000, 0), _SPAN - 1)  # newer → smaller
    return rank * _SPAN + age


def rank_queue(man: Manifest) -> int:
    """Key the queued chunks that have no fill order (queued by a Probe before this one, or by a
    caller that passed none), so they join the queue at their place. Returns how many files."""
    rows = man.unranked_pending()
    if rows:
        man.set_fill_order([(fill_order(path, kind, mtime_ns), path) for path, kind, mtime_ns in rows])
    return len(rows)
