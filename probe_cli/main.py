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
    from probe_core import Workspace, index_workspace
    from probe_core.indexing.indexer import rebuild

    from .render import IndexProgressView, print_index_report

    ws = Workspace.open(_root(args))
    try:
        if args.rebuild:
            rebuild(ws)
        with IndexProgressView(enabled=not args.json and not args.quiet) as view:
            report = index_workspace(ws, progress=view.update, dense=not args.lexical_only)
        if args.json:
            print(json.dumps(report.to_dict(), indent=2))
        elif not args.quiet:
            print_index_report(report, ws)
    finally:
        ws.close()
    return 0


def cmd_search(args) -> int:
    from probe_core import Workspace, search

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
    ws = Workspace.open(_root(args), create=False)
    try:
        resp = search(ws, args.query, top_k=args.top_k, mode=args.mode, instruction=args.instruction,
                      filters=filters or None)
    finally:
        ws.close()
    if args.json:
        print(json.dumps(resp.to_dict(), indent=2))
    else:
        print_search(resp)
    return 0


def cmd_status(args) -> int:
    from probe_core import Workspace, index_status

    from .render import print_status

    ws = Workspace.open(_root(args), create=False)
    try:
        st = index_status(ws)
    finally:
        ws.close()
    if args.json:
        print(json.dumps(st, indent=2))
    else:
        print_status(st)
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
    sp.add_argument("--json", action="store_true", help="print the result schema as JSON")
    sp.set_defaults(func=cmd_search)

    sp = with_root(sub.add_parser("status", help="index counts, generation, health"))
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(func=cmd_status)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=os.environ.get("PROBE_LOG", "WARNING").upper(), stream=sys.stderr,
                        format="probe: %(levelname)s %(name)s: %(message)s")
    if args.command is None:
        if not sys.stdin.isatty() or not sys.stdout.isatty():
            parser.print_help()
            return EXIT_USAGE
        args.func = cmd_app
    from probe_core.errors import ProbeError

    try:
        return args.func(args)
    except ProbeError as exc:
        print(f"probe: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("probe: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: one line unless debugging
        if os.environ.get("PROBE_DEBUG"):
            raise
        print(f"probe: internal error: {type(exc).__name__}: {exc} (rerun with PROBE_DEBUG=1 for details)",
              file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
