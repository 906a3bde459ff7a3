"""The answers every face gives: a search trimmed to a token budget, exact file lines, status.

These are plain functions over a ``Workspace`` so that the owner engine, the CLI's one-shot engine
and (through RPC) attached processes all return the same JSON-ready dicts.
"""
from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError, IndexDamaged, InvalidRange, ProbeError
from ..limits import MAX_TOKENS
from ..retrieval.coverage import EMPTY_INDEX, EMPTY_INDEX_ADVICE
# fit_budget and mark_project live with the other last steps of an answer (retrieval/finish.py);
# named here too for the faces and benches that import them from the engine
from ..retrieval.finish import fit_answer, fit_budget, mark_project  # noqa: F401
from ..records import SearchRequest

if TYPE_CHECKING:
    from ..workspace import Workspace

MAX_OPEN_LINES = 400  # one open_file answer; longer ranges come back in pages
MAX_OPEN_BYTES = 20 * 1024 * 1024
_SOURCE_REF = re.compile(r"^(?P<path>.+?)#L(?P<start>\d+)(?:-L?(?P<end>\d+))?$")


def search_answer(ws: Workspace, request: SearchRequest | str, **options) -> dict:
    """The workspace's search (its profile's: a project ranks code, a library answers from its
    documents) shaped for agents: every result says whether its snippet is whole, and the answer
    fits ``max_tokens`` (None: no budget), saying what it cut. ``options``: the keyword form of
    the request (``SearchRequest.of``)."""
    req = SearchRequest.of(request, **options)
    query, top_k, mode, instruction, filters, max_tokens = (req.query, req.top_k, req.mode, req.instruction,
                                                            req.filters, req.max_tokens)
    if max_tokens is not None:
        MAX_TOKENS.check(max_tokens)
    out = ws.profile.search(ws, query, top_k=top_k, mode=mode, instruction=instruction, filters=filters)
    if len(out["results"]) < top_k:  # few or no hits: make sure it is not because the store lost its points
        _flag_lost_points(ws, out)
    if not out["results"] and filters:
        _explain_empty(ws, out, filters)
    if (out.get("message") or "").startswith(EMPTY_INDEX):  # (a library's notes start with its name)
        from ..indexing.empty_reason import why_nothing_indexed

        if ws.manifest.generation and (why := why_nothing_indexed(ws.root)):  # a scan ran and found nothing
            out["message"] = out["message"].replace(EMPTY_INDEX_ADVICE, why, 1)
    # whose similarity scale signals.dense_score is on (fusing a project with libraries compares them)
    out["embedding_model_id"] = ws.manifest.get_meta("embedding_model_id")
    note = fit_answer(out, max_tokens)
    if note:
        out["message"] = f"{out['message']}; {note}" if out.get("message") else note
    return out


def note_pending_update(out: dict, pending: int) -> None:
    """Say in a search answer that changed files wait to be indexed (a checkout, a burst of edits):
    its results may show the old content, and new code is not found yet. ``healthy`` becomes
    ``uncertain``; a worse status stays."""
    if pending <= 0:
        return
    if out.get("status") == "healthy":
        out["status"] = "uncertain"
    out["index_update_pending"] = True
    note = (f"an index update is pending ({pending} change(s) seen, not indexed yet, e.g. a checkout): results "
            "may show old content and miss new code; open_file reads the current text")
    out["message"] = f"{note}; {out['message']}" if out.get("message") else note


def _flag_lost_points(ws: Workspace, out: dict) -> None:
    """An answer from a store that lacks points the manifest lists is ``degraded`` and says what to
    run (checked only when an answer comes back short, so a full answer costs no extra count)."""
    from ..indexing.store_check import check_store

    message = check_store(ws).message()
    if message:
        out["status"] = "degraded"
        out["message"] = f"{message}; {out['message']}" if out.get("message") else message


def _explain_empty(ws: Workspace, out: dict, filters: dict) -> None:
    """No results under filters: say which filter matched no indexed file, or that no file passes
    them all together (a filter that excludes everything is easy to write and otherwise looks like
    "nothing relevant")."""
    from ..retrieval.search import SearchFilters, file_filter

    flt = SearchFilters.from_dict({k: v for k, v in filters.items() if k in SearchFilters.__slots__})
    facets = ws.manifest.file_facets()
    passing = set(facets)
    notes = []
    for name, wanted, index in (("languages", flt.languages, 0), ("kinds", flt.chunk_kinds, 1)):
        if not wanted:
            continue
        matching = {p for p, f in facets.items() if f[index] in wanted}
        if not matching:
            indexed = sorted({f[index] for f in facets.values() if f[index]})
            notes.append(f"no indexed file is {'in' if index == 0 else 'of kind'} {', '.join(wanted)} "
                         f"(indexed {name}: {', '.join(indexed) or 'none'})")
        passing &= matching
    globbed = file_filter(ws, flt)
    if globbed is not None:
        if not globbed:
            globs = [*(flt.include_globs or []), *(f"!{g}" for g in flt.exclude_globs or [])]
            notes.append(f"no indexed file matches the globs {globs} (paths are relative to the root, "
                         "gitignore syntax: 'src/**', '*.py')")
        passing &= set(globbed)
    if not notes and not passing:
        notes.append("each filter matches indexed files, but no file passes all of them together")
    if notes:
        note = "; ".join(notes)
        out["message"] = f"{out['message']}; {note}" if out.get("message") else note


def parse_source(ref: str) -> tuple[str, int | None, int | None]:
    """``src/a.py#L10-L20`` (a search result's ``source``) → ``("src/a.py", 10, 20)``."""
    m = _SOURCE_REF.match(ref)
    if not m:
        return ref, None, None
    start = int(m["start"])
    return m["path"], start, int(m["end"]) if m["end"] else start


def check_range(start_line: int | None, end_line: int | None) -> int:
    """Validate a requested line range (1-based, inclusive); returns the start (1 when omitted)."""
    start = 1 if start_line is None else start_line
    for label, value in (("start_line", start), ("end_line", end_line)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise InvalidRange(f"{label} must be an integer")
    if start < 1:
        raise InvalidRange(f"start_line must be 1 or more (lines are numbered from 1), got {start}")
    if end_line is not None and end_line < start:
        raise InvalidRange(f"end_line {end_line} is before start_line {start}")
    return start


def page_range(start: int, end_line: int | None, total: int, max_lines: int, *, name: str,
               kind: str) -> tuple[int, bool, list[str]]:
    """Fit a checked range to a text of ``total`` lines: ``end_line`` past the end is clamped and
    more than ``max_lines`` is cut to a page. Returns (end, truncated, notes for the answer)."""
    if start > max(total, 1):
        raise InvalidRange(f"start_line {start} is past the end of {name} ({total} lines)")
    notes = []
    end = total if end_line is None else min(end_line, total)
    if end_line is not None and end_line > total:
        notes.append(f"end_line {end_line} clamped to the end of the {kind} ({total})")
    truncated = end - start + 1 > max_lines
    if truncated:
        end = start + max_lines - 1
        notes.append(f"showing {max_lines} lines; continue with start_line={end + 1}")
    return end, truncated, notes


def file_hash(text: str) -> str:
    """The file identity the manifest records (16 hex of sha256 over the decoded text)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def open_file_answer(root: Path, path: str, start_line: int | None = None, end_line: int | None = None, *,
                     ws: Workspace | None = None, max_lines: int = MAX_OPEN_LINES) -> dict:
    """Exact lines ``start_line..end_line`` (1-based, inclusive) of a file under ``root``, from disk.

    ``path`` is relative to the root (or absolute inside it), or a search ``source`` such as
    ``src/a.py#L10-L20`` when no range is given. Every symlink is resolved and anything that
    lands outside the root is refused. ``end_line`` past the end of the file is clamped;
    a range longer than ``max_lines`` comes back in pages (``next_start_line``).
    """
    if not isinstance(path, str) or not path.strip():
        raise ConfigError("path must be a non-empty string, relative to the repository root")
    if start_line is None and end_line is None:
        path, start_line, end_line = parse_source(path.strip())
    start = check_range(start_line, end_line)
    from ..scan import BINARY_SNIFF_BYTES, read_regular_file, resolve_inside_root, shown_path

    root_real = os.path.realpath(root)
    real = resolve_inside_root(root_real, path)
    shown = shown_path(path)
    rel = os.path.relpath(os.path.normpath(os.path.join(root_real, path)), root_real).replace(os.sep, "/")
    try:
        info = os.stat(real)
        if stat.S_ISDIR(info.st_mode):
            raise ProbeError(f"{shown} is a directory; open_file reads one file (search finds files)")
        if not stat.S_ISREG(info.st_mode):
            raise ProbeError(f"{shown} is not a regular file")
        if info.st_size > MAX_OPEN_BYTES:
            raise ProbeError(f"{shown} is {info.st_size} bytes, more than open_file reads ({MAX_OPEN_BYTES})")
        data, info = read_regular_file(real, MAX_OPEN_BYTES)  # checked again on the open file
    except FileNotFoundError:
        raise ProbeError(f"{shown}: no such file in the repository") from None
    except OSError as exc:  # a name too long, no permission, replaced meanwhile by a FIFO...
        raise ProbeError(f"{shown}: cannot read it ({exc.strerror or exc})") from None
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        raise ProbeError(f"{shown} is a binary file")
    text = data.decode("utf-8", errors="replace")
    lines = text.splitlines()
    total = len(lines)
    end, truncated, notes = page_range(start, end_line, total, max_lines, name=rel, kind="file")
    digest = file_hash(text)
    index_state = "unknown"
    if ws is not None:
        try:
            row = ws.manifest.files().get(rel)
            index_state = "not_indexed" if row is None else ("current" if row.file_hash == digest else "stale")
        except IndexDamaged:  # recorded; the owner repairs it (engine.service.open_file)
            index_state = "damaged"
        except Exception:  # the manifest is advisory here; the lines are the answer
            index_state = "unknown"
    return {
        "path": rel,
        "start_line": start,
        "end_line": max(end, start - 1),
        "total_lines": total,
        "lines": lines[start - 1:end],
        "file_hash": digest,
        "mtime": info.st_mtime,
        "size": info.st_size,
        "truncated": truncated,
        "next_start_line": end + 1 if truncated else None,
        "index_state": index_state,
        "message": "; ".join(notes) or None,
    }


INTEL_TOOLS = ("map_code", "find_callers", "find_callees", "find_references", "find_implementations",
               "impact_analysis")


def intel_answer(ws: "Workspace", tool: str, args: dict) -> dict:
    """A code-intelligence answer (``probe_core.intel``) as a JSON-ready dict; same on every face."""
    if tool not in INTEL_TOOLS:
        raise ConfigError(f"unknown code-intelligence tool {tool!r}; one of {', '.join(INTEL_TOOLS)}")
    from .. import intel

    args = {k: v for k, v in args.items() if v is not None}
    return getattr(intel, tool)(ws, **args).to_dict()


MEMORY_ARGS = ("label", "content", "scope", "title", "tags")


def memory_answer(root: "Path | str", action: str, args: dict) -> dict:
    """A ``memory`` tool answer (``probe_core.memory.rules``) for the workspace at ``root``."""
    from ..memory.rules import RuleError, RuleStore

    unknown = set(args) - set(MEMORY_ARGS)
    if unknown:
        raise RuleError(f"unknown memory argument(s): {', '.join(sorted(unknown))}")
    return RuleStore(root).apply(action, **args)
