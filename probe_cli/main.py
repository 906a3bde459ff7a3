"""``probe``: the command line. Each verb is a thin call into ``probe_core``.

Errors are one clear line on stderr and a non-zero exit; tracebacks only with ``PROBE_DEBUG=1``.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 70


def _root(args) -> Path:
    return Path(args.root or os.getcwd())


def cmd_init(args) -> int:
    from probe_core import init_workspace

    cfg, created = init_workspace(_root(args), preset=args.preset)
    verb = "created" if created else "kept"
    print(f"{verb} workspace {cfg.workspace_id} (preset {cfg.preset}) in {_root(args) / '.probe'}")
    return 0


def cmd_index(args) -> int:
    """Index in this process under the workspace's engine lock, or, when a ``probe mcp`` owns the
    workspace, ask it to rescan. While indexing here the lock is held and no RPC is served, so this
    process publishes itself in engine.json (role ``cli-index``): other clients then say who is busy."""
    import time

    from probe_core import Workspace
    from probe_core.engine.lock import EngineLock, cli_indexer_pid, cli_indexing_message
    from probe_core.engine.settings import EngineSettings
    from probe_core.errors import BackendUnavailable, IndexLocked

    ws = Workspace.open(_root(args))
    lock = EngineLock(ws.probe_dir)  # held while indexing: a `probe mcp` started meanwhile waits
    deadline = time.monotonic() + EngineSettings.from_env().attach_timeout_s
    try:
        while True:
            if lock.try_acquire():
                return _index_here(args, ws)
            indexer = cli_indexer_pid(ws.probe_dir)
            if indexer is not None:  # another `probe index`: it serves no RPC to ask
                raise IndexLocked(cli_indexing_message(indexer))
            if args.rebuild:
                raise IndexLocked("--rebuild needs the index to itself: stop the running `probe mcp` "
                                  "(your editor's Probe server) first")
            # a running `probe mcp` owns the index: it does the scan
            done = _index_via_owner(args, ws)
            if done is not None:
                return done
            # nobody answered: the owner exited since (the lock is free on the next try), is still
            # starting, or a short-lived CLI holds the lock (`probe search`): try again
            if time.monotonic() >= deadline:
                raise BackendUnavailable(f"another Probe process holds {lock.path} but does not answer; "
                                         "if it is stuck, stop it")
            time.sleep(0.1)
    finally:
        ws.close()  # the store is closed before the lock goes: the next owner can open it
        lock.release()


def _index_here(args, ws) -> int:
    """Index ``ws`` in this process; the caller holds the engine lock."""
    from probe_core import index_workspace
    from probe_core.engine.lock import clear_indexer_info, write_indexer_info
    from probe_core.indexing.indexer import rebuild
    from probe_core.registry import note_seen

    from .render import IndexProgressView, print_index_report

    write_indexer_info(ws.probe_dir)
    try:
        if args.rebuild:
            rebuild(ws)
        with IndexProgressView(enabled=not args.json and not args.quiet) as view:
            report = index_workspace(ws, progress=view.update, dense=not args.lexical_only)
        note_seen(ws)  # the workspace registry (`probe prune`)
        if args.json:
            print(json.dumps(report.to_dict(), indent=2))
        elif not args.quiet:
            print_index_report(report, ws)
    finally:
        clear_indexer_info(ws.probe_dir)  # while the lock is still held
    return 0


def _index_via_owner(args, ws) -> int | None:
    """``probe index`` while ``probe mcp`` owns the workspace: ask that process for a full scan.
    None when no owner answered (it may have exited since the lock was tried): the caller retries.

    ``--lexical-only`` does not apply here: the owner scans lexically, answers, and fills dense
    vectors in the background as it always does."""
    from probe_core.engine.client import AttachedEngine
    from probe_core.engine.lock import read_owner_info
    from probe_core.engine.rpc import OwnerUnavailable
    from probe_core.engine.settings import EngineSettings
    from probe_core.registry import note_seen

    # AttachedEngine, not EngineHandle: the handle would take the lock over by itself and scan with
    # defaults (dense, no registry record, reported as if an owner had done it)
    engine = AttachedEngine(ws.root, rpc_timeout_s=EngineSettings.from_env().rpc_timeout_s)
    try:
        out = engine.rescan()
    except OwnerUnavailable:
        return None
    try:
        owner = engine.index_status().get("owner_pid")
    except OwnerUnavailable:  # it scanned, then exited
        owner = read_owner_info(ws.probe_dir).get("pid")
    note_seen(ws)  # the workspace registry (`probe prune`), as the direct path does
    if args.json:
        print(json.dumps({**out, "owner_pid": owner}, indent=2))
    elif not args.quiet:
        print(f"a running probe mcp (pid {owner}) owns this index and rescanned it: {out['files_indexed']} files "
              f"indexed ({out['chunks_indexed']} chunks), {out['files_unchanged']} unchanged, "
              f"{out['files_deleted']} deleted; generation {out['generation']}. Dense vectors follow in that process.")
    return 0


def _response_from_dict(data: dict):
    """An engine's search answer (a dict, possibly from the owner process) as the CLI renders it."""
    from probe_core import SearchResponse, SearchResult

    results = [SearchResult(path=r["path"], start_line=r["start_line"], end_line=r["end_line"], snippet=r["snippet"],
                            score=r["score"], stale=r["stale"], symbol=r.get("symbol"), language=r.get("language"),
                            chunk_kind=r.get("chunk_kind"), signals=r.get("signals") or {})
               for r in data["results"]]
    return SearchResponse(results=results, status=data["status"], message=data.get("message"),
                          took_ms=data.get("took_ms", 0.0), generation=data.get("index_generation", 0),
                          dense_coverage=data.get("dense_coverage", 0.0), mode=data.get("mode", "fast"))


def cmd_search(args) -> int:
    """Search through the same engine as the MCP tool: in-process, or via a running ``probe mcp``."""
    from probe_core.engine import open_engine

    from .render import print_search

    filters = {}
    if args.language:
        filters["languages"] = args.language
    if args.kind:
        filters["chunk_kinds"] = args.kind
    if args.include:
        filters["include_globs"] = args.include
    if args.exclude:
        filters["exclude_globs"] = args.exclude
    if args.branch:
        filters["branch"] = args.branch
    from probe_core.libraries import LibraryPool, search_sources

    # the project, and with --include-libraries the reference libraries too, fused by rank
    with open_engine(_root(args), background=False) as engine, LibraryPool(background=False) as libraries:
        data = search_sources(engine, libraries, args.query, top_k=args.top_k, mode=args.mode,
                              instruction=args.instruction, filters=filters or None, max_tokens=args.max_tokens,
                              include_libraries=args.include_libraries)
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print_search(_response_from_dict(data))
    return 0


def cmd_status(args) -> int:
    from probe_core.engine import open_engine

    from .render import print_status

    with open_engine(_root(args), background=False) as engine:
        st = engine.index_status()
    if args.json:
        print(json.dumps(st, indent=2))
    else:
        print_status(st)
    return 0


def cmd_mcp(args) -> int:
    from probe_core.mcp_server import run_stdio

    return run_stdio(Path(args.root) if args.root else None)


def cmd_install_mcp(args) -> int:
    from probe_core.install_mcp import install

    for result in install(args.client, args.scope, _root(args), agents_md=args.agents_md, command=args.command,
                          pin_root=args.pin_root):
        print(result.line())
    return 0


def cmd_app(args) -> int:
    from probe_tui.app import run_app

    return run_app(_root(args))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="probe", description="Local hybrid code search for coding agents.")
    p.add_argument("--root", help="workspace root (default: current directory)")
    sub = p.add_subparsers(dest="command")

    def with_root(sp):
        sp.add_argument("--root", default=argparse.SUPPRESS, help="workspace root (default: current directory)")
        return sp

    sp = with_root(sub.add_parser("init", help="create .probe/config.json for this repository"))
    sp.add_argument("--preset", choices=["embedded", "lite", "balanced", "pro"])
    sp.set_defaults(func=cmd_init)

    sp = with_root(sub.add_parser("index", help="index (incrementally) and block until done"))
    sp.add_argument("--rebuild", action="store_true", help="drop the index and re-embed everything")
    sp.add_argument("--lexical-only", action="store_true", help="stop after BM25; dense vectors stay queued")
    sp.add_argument("--json", action="store_true", help="print the index report as JSON")
    sp.add_argument("--quiet", "-q", action="store_true")
    sp.set_defaults(func=cmd_index)

    sp = with_root(sub.add_parser("search", help="hybrid search over the index"))
    sp.add_argument("query")
    sp.add_argument("--top-k", type=int, default=12)
    sp.add_argument("--mode", choices=["fast", "quality", "auto"], default="auto")
    sp.add_argument("--instruction", help="rerank/query instruction (instruction-aware models)")
    sp.add_argument("--language", action="append", help="only this language (repeatable)")
    sp.add_argument("--kind", action="append", choices=["code", "doc", "config", "test"], help="only this chunk kind")
    sp.add_argument("--include", action="append", help="only paths matching this glob (repeatable)")
    sp.add_argument("--exclude", action="append", help="skip paths matching this glob (repeatable)")
    sp.add_argument("--branch", help='git branch to search: default the checked-out one; "*" every indexed branch')
    sp.add_argument("--max-tokens", type=int, help="trim the answer to about this many tokens, as the MCP tool does")
    sp.add_argument("--include-libraries", action="store_true",
                    help="also search the reference libraries (`probe library`) and fuse the results")
    sp.add_argument("--json", action="store_true", help="print the result schema as JSON")
    sp.set_defaults(func=cmd_search)

    sp = with_root(sub.add_parser("status", help="index counts, generation, health"))
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(func=cmd_status)

    sp = with_root(sub.add_parser("mcp", help="MCP server over stdio: indexes and watches the root, serves agents"))
    sp.set_defaults(func=cmd_mcp)

    sp = with_root(sub.add_parser("install-mcp", help="register `probe mcp` with Claude Code, Cursor or Codex"))
    sp.add_argument("--client", required=True, choices=["claude", "cursor", "codex"])
    sp.add_argument("--scope", choices=["project", "user"], default="project",
                    help="project: config in the repository; user: in your home directory")
    sp.add_argument("--agents-md", action="store_true",
                    help="also add a short 'when to use Probe' block to AGENTS.md (CLAUDE.md for claude)")
    sp.add_argument("--command", default="probe", help="the command clients run (default: probe on PATH)")
    sp.add_argument("--pin-root", action="store_true",
                    help="pass this --root to the server instead of relying on the client's working directory")
    sp.set_defaults(func=cmd_install_mcp)

    from . import intel_verbs, library_verbs, memory_verbs, prune_verbs, stack_verbs

    stack_verbs.register(sub)  # doctor, up, down
    intel_verbs.register(sub)  # map, callers, callees, refs, impls, impact
    memory_verbs.register(sub)  # memory list|add|update|remove
    library_verbs.register(sub)  # library add|list|index|remove
    prune_verbs.register(sub)  # prune, workspaces
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=os.environ.get("PROBE_LOG", "WARNING").upper(), stream=sys.stderr,
                        format="probe: %(levelname)s %(name)s: %(message)s")
    from probe_core.redaction import RedactingFilter, redact

    for handler in logging.getLogger().handlers:
        handler.addFilter(RedactingFilter())
    if args.command is None:
        if not sys.stdin.isatty() or not sys.stdout.isatty():
            parser.print_help()
            return EXIT_USAGE
        args.func = cmd_app
    from probe_core.errors import ProbeError

    try:
        return args.func(args)
    except ProbeError as exc:
        print(f"probe: error: {redact(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("probe: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `probe ... | head`: the reader left; not an error worth a message
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # a bug: one line unless debugging
        if os.environ.get("PROBE_DEBUG"):
            raise
        print(f"probe: internal error: {type(exc).__name__}: {redact(str(exc))} (rerun with PROBE_DEBUG=1 for details)",
              file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
