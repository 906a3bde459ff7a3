"""The text half of every MCP answer: what an agent reads in ``content`` (``structuredContent`` carries the JSON).

Kept apart from the tool table so a renderer can be read, and tested, as a plain ``dict -> str`` function.
"""
from __future__ import annotations


def render_search(out: dict) -> str:
    """The short text rendering of a search answer (the structured content carries the same)."""
    lines = []
    if out.get("status") != "healthy" or out.get("message"):
        lines.append(f"[{out.get('status')}] {out.get('message') or ''}".rstrip())
    if not out["results"]:
        lines.append("No results.")
    for i, r in enumerate(out["results"], 1):
        lib = f"library {r['library_name']}" if r.get("collection") == "libraries" else None
        tags = [t for t in (lib, r.get("symbol"), r.get("chunk_kind")) if t]
        flags = " STALE (file changed since indexing; open_file for current text)" if r.get("stale") else ""
        lines.append(f"{i}. {r['source']}" + (f"  ({', '.join(tags)})" if tags else "") + flags)
        for n, text in enumerate((r.get("snippet") or "").split("\n"), r["start_line"]):
            lines.append(f"{n:>6}  {text}")
        if r.get("snippet_truncated"):
            lines.append(f"{'':>6}  … open_file(\"{r['source']}\") for lines {r['start_line']}-{r['end_line']}")
    lines.append(f"({len(out['results'])} results, {out.get('took_ms', 0):.0f} ms, "
                 f"index generation {out.get('index_generation')}, dense coverage {out.get('dense_coverage', 0):.0%})")
    return "\n".join(lines)


def render_open_file(out: dict) -> str:
    head = (f"{out['path']} lines {out['start_line']}-{out['end_line']} of {out['total_lines']} "
            f"(file_hash {out['file_hash']}, index {out['index_state']})")
    body = [f"{n:>6}\t{text}" for n, text in enumerate(out["lines"], out["start_line"])]
    tail = [out["message"]] if out.get("message") else []
    return "\n".join([head, *body, *tail])


def render_status(st: dict) -> str:
    p = st.get("progress") or {}
    parts = [
        f"role {st.get('role')} (owner pid {st.get('owner_pid')}), root {st.get('root')}",
        f"indexing in progress: {st.get('indexing_in_progress')}"
        + (f" — {p.get('phase')}: {p.get('files_scanned')}/{p.get('files_total')} files, "
           f"{p.get('chunks_embedded')}/{p.get('chunks_total')} chunks embedded" if p else ""),
        f"files {st.get('files_indexed')}, chunks {st.get('chunks_indexed')}, dense coverage "
        f"{st.get('dense_coverage')}, generation {st.get('index_generation')}",
        f"watcher running: {st.get('watcher_running')}, backend reachable: {st.get('backend_reachable')}",
    ]
    if st.get("last_error"):
        parts.append(f"last error: {st['last_error']}")
    return "\n".join(parts)


def render_intel(out: dict) -> str:
    """A short text rendering of a code-intelligence answer (the JSON is in structuredContent)."""
    if "text" in out and "dirs" in out:  # map_code: its text says what a budget cut, if anything
        return out["text"]
    t = out.get("target") or {}
    head = (f"{t.get('symbol', '?')} ({t.get('path', '?')}:{t.get('line', '?')}): {len(out['items'])} locations "
            f"from {out.get('source', 'treesitter')}")
    if out.get("truncated"):
        head += " (truncated)"
    lines = [head]
    if others := t.get("candidates"):  # an ambiguous name: the CLI names them too (intel_verbs)
        lines.append(f"also defined at {', '.join(others[:5])}{' …' if len(others) > 5 else ''} "
                     "(ask for one with file and line)")
    lines += [f"{i['path']}:{i['line']} {i.get('symbol') or ''} [{i['kind']}] {i.get('context', '')[:100]}"
              for i in out["items"][:40]]
    if out.get("message"):
        lines.append(out["message"])
    return "\n".join(lines)


def render_memory(out: dict) -> str:
    from probe_core.memory.rules import render_rules_markdown

    if out.get("action") != "list":  # a change answers with the rule it changed, not the whole list
        return out["message"] + ("\n\n" + render_rules_markdown([out["rule"]], heading="") if out.get("rule") else "")
    return out["message"] + "\n\n" + render_rules_markdown(out["rules"])


def render_message(out: dict) -> str:
    """An answer whose text is its ``message`` (store)."""
    return out["message"]
