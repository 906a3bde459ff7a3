"""Optional language-server answers for find_callers / find_references / find_implementations.

Only on request: the tree-sitter graph answers by default, since it is complete for the whole
repository and answers in a fraction of a second, where a language server takes seconds to start
and (jedi, measured) found fewer callers. Asked for (`lsp=True` in a query, `probe callers --lsp`,
`PROBE_LSP=1`, or `"lsp": true` in `.probe/config.json`), and when a server for the target's
language is installed (`servers`), the query asks it at the target's definition (`backend`,
through a per-workspace process kept by `session`) and its answer replaces the graph's
(`source: "lsp"`). With none, or when it fails or times out, the graph answers and `message` says
why. `PROBE_LSP_TIMEOUT_S` (default 10) bounds each request, `PROBE_LSP_IDLE_S` (default 300)
stops an idle server. pygls loads only when a server is asked.
"""
from __future__ import annotations

from dataclasses import dataclass

from ... import environment
from ..model import Item, Symbol
from ..resolve import family

MAX_TARGETS = 5  # a name with more definitions than this is asked of the graph
FALLBACK = "answered from the tree-sitter graph"


@dataclass(slots=True)
class LspAnswer:
    items: list[Item] | None  # None: use the tree-sitter graph
    message: str | None = None


def enabled(ws, requested: bool | None = None) -> bool:
    """Whether to ask a language server: the request, else ``PROBE_LSP``, else the workspace config."""
    if requested is not None:
        return requested
    env = environment.get("PROBE_LSP")
    if env:
        return env == "1"
    return ws.config.lsp


def timeout_s() -> float:
    return float(environment.get("PROBE_LSP_TIMEOUT_S") or 10)


def ask(ctx, targets: list[Symbol], question: str, *, use: bool | None = None, **kwargs) -> LspAnswer:
    """`question` (references | callers | implementations) for every target, or why not.
    ``use``: ask a server (True), never (False), or as configured (None: ``enabled``)."""
    if not enabled(ctx.ws, use) or not targets or len(targets) > MAX_TARGETS:
        return LspAnswer(None)
    languages = {family(t.language) for t in targets}
    if len(languages) != 1:
        return LspAnswer(None)
    language = languages.pop()
    from .servers import discover

    spec, argv, why = discover(language)
    if argv is None:
        return LspAnswer(None, f"{why}; {FALLBACK}")
    try:
        from .backend import Asker
        from .session import LspError, session_for
    except ImportError as exc:  # pygls/lsprotocol missing from this install
        return LspAnswer(None, f"cannot talk to {spec.name} ({exc}); {FALLBACK}")
    asker = Asker(session_for(ctx.ws.root, spec, argv), ctx, timeout_s())
    items: list[Item] = []
    try:
        for t in targets:
            got = getattr(asker, question)(t, **kwargs)
            if got is None:
                return LspAnswer(None, f"{spec.name} cannot answer {question} of {t.qualname}; {FALLBACK}")
            items += got
    except (LspError, OSError) as exc:
        return LspAnswer(None, f"{exc}; {FALLBACK}")
    return LspAnswer(items)
