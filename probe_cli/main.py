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

from probe_core import environment

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


def _response_from_dict(data: dict):
    """An engine's search answer (a dict, possibly from the owner process) as the CLI renders it.
    A namespace with ``SearchResponse``'s fields, not the class: importing ``probe_core.retrieval``
    pulls numpy and the stores (~0.15 s), which the warm path through an owner must not pay."""
    from types import SimpleNamespace

    from probe_core.records import SearchResult

    results = [SearchResult(path=r["path"], start_line=r["start_line"], end_line=r["end_line"], snippet=r["snippet"],
                            score=r["score"], stale=r["stale"], symbol=r.get("symbol"), language=r.get("language"),
                            chunk_kind=r.get("chunk_kind"), signals=r.get("signals") or {})
               for r in data["results"]]
    return SimpleNamespace(results=results, status=data["status"], message=data.get("message"),
                           took_ms=data.get("took_ms", 0.0), generation=data.get("index_generation", 0),
                           dense_coverage=data.get("dense_coverage", 0.0), mode=data.get("mode", "fast"))


def cmd_search(args) -> int:
    """Search through the same engine as the MCP tool: via the running owner (``probe mcp`` or the
    daemon) when there is one, else in-process (and then the daemon starts for the next calls)."""
    from probe_core.records import SearchRequest

    from . import owner_verbs

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
    request = SearchRequest(args.query, top_k=args.top_k, mode=args.mode, instruction=args.instruction,
                            filters=filters or None, max_tokens=args.max_tokens)
    data = None if args.include_libraries else owner_verbs.call_owner(_root(args), "search", request)
    if data is not None:
        from probe_core.engine.answers import mark_project

        mark_project(data)
    else:
        from probe_core.engine import open_engine
        from probe_core.libraries import LibraryPool, search_sources

        # the project, and with --include-libraries the reference libraries too, merged by their
        # similarity to the query (probe_core/libraries/fusion.py)
        with open_engine(_root(args), background=False) as engine, LibraryPool(background=False) as libraries:
            data = search_sources(engine, libraries, request, include_libraries=args.include_libraries)
            cold = engine.role == "direct"
        if cold:
            owner_verbs.start_after_cold_answer(_root(args))
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        from .render import print_search

        print_search(_response_from_dict(data))
    return 0


def cmd_status(args) -> int:
    from . import owner_verbs

    from probe_core.errors import OwnerNotAnswering

    try:
        st = owner_verbs.call_owner(_root(args), "index_status")
    except OwnerNotAnswering as exc:  # answered here, read-only, with the reason
        st = owner_verbs.status_without_owner(_root(args), exc)
    if st is None:
        from probe_core.engine import open_engine

        with open_engine(_root(args), background=False) as engine:
            st = engine.index_status()
    from probe_core.libraries.manage import with_library_summaries

    with_library_summaries(st)  # the reference libraries searched beside the project
    if args.json:
        print(json.dumps(st, indent=2))
    else:
        from .render import print_status

        print_status(st)
    return 0


def cmd_mcp(args) -> int:
    from probe_mcp.server import run_stdio

    return run_stdio(Path(args.root) if args.root else None)


def cmd_install_mcp(args) -> int:
    from probe_core.install_mcp import command_warning, install

    for result in install(args.client, args.scope, _root(args), agents_md=args.agents_md, command=args.server_command,
                          pin_root=args.pin_root):
        print(result.line())
    if args.server_command and (warning := command_warning(args.server_command)):
        print(f"probe: warning: {warning}", file=sys.stderr)
    if args.client == "codex" and args.scope == "project":
        print("note: Codex reads a project's .codex/config.toml only in projects you trust (it asks when it opens "
              "one); --scope user works everywhere")
    return 0


def cmd_app(args) -> int:
    from probe_tui.app import run_app

    return run_app(_root(args))


class _PrintVersion(argparse.Action):
    """``--version``, looked up only when asked: reading the package metadata costs every other
    call ~15 ms, a sixth of a warm search."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        from probe_core import package_version

        print(f"probe {package_version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    from probe_core.limits import MAX_TOKENS, QUERY, TOP_K

    p = argparse.ArgumentParser(prog="probe", description="Local hybrid code search for coding agents.")
    p.add_argument("--version", action=_PrintVersion, help="print Probe's version and exit")
    p.add_argument("--root", help="workspace root (default: current directory)")
    sub = p.add_subparsers(dest="command")

    def with_root(sp):
        sp.add_argument("--root", default=argparse.SUPPRESS, help="workspace root (default: current directory)")
        return sp

    sp = with_root(sub.add_parser("init", help="create .probe/config.json for this repository"))
    sp.add_argument("--preset", choices=["embedded", "lite", "balanced", "pro"])
    sp.set_defaults(func=cmd_init)

    from . import index_verbs

    index_verbs.register(sub)  # index [--wait|--background]

    sp = with_root(sub.add_parser("search", help="hybrid search over the index"))
    sp.add_argument("query", type=QUERY.flag)
    sp.add_argument("--top-k", type=TOP_K.flag, default=12, metavar="N",
                    help=f"results to return ({TOP_K.low}-{TOP_K.high}, default 12)")
    sp.add_argument("--mode", choices=["fast", "quality", "auto"], default="auto")
    sp.add_argument("--instruction", help="rerank/query instruction (instruction-aware models)")
    sp.add_argument("--language", action="append", help="only this language (repeatable)")
    sp.add_argument("--kind", action="append", choices=["code", "doc", "config", "test"], help="only this chunk kind")
    sp.add_argument("--include", action="append", help="only paths matching this glob (repeatable)")
    sp.add_argument("--exclude", action="append", help="skip paths matching this glob (repeatable)")
    sp.add_argument("--branch", help='git branch to search: default the checked-out one; "*" every indexed branch')
    sp.add_argument("--max-tokens", type=MAX_TOKENS.flag, metavar="N",
                    help=f"trim the answer to about N tokens ({MAX_TOKENS.low}-{MAX_TOKENS.high}), "
                         "as the MCP tool does")
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
    sp.add_argument("--command", dest="server_command", metavar="COMMAND",
                    help="the command clients run (default: the absolute path of this probe, which works "
                         "without PATH or an activated virtualenv)")
    sp.add_argument("--pin-root", action="store_true",
                    help="pass this --root to the server instead of relying on the client's working directory")
    sp.set_defaults(func=cmd_install_mcp)

    from . import eval_verbs, intel_verbs, library_verbs, memory_verbs, owner_verbs, prune_verbs, stack_verbs

    owner_verbs.register(sub)  # stop

    stack_verbs.register(sub)  # doctor, up, down
    intel_verbs.register(sub)  # map, callers, callees, refs, impls, impact
    memory_verbs.register(sub)  # memory list|add|update|remove
    library_verbs.register(sub)  # library add|list|index|remove
    prune_verbs.register(sub)  # prune, workspaces
    eval_verbs.register(sub)  # eval
    return p


def _check_cwd(args) -> None:
    """A shell left in a deleted (or moved) directory: say so, instead of "internal error:
    FileNotFoundError" from the first ``os.getcwd()`` (``probe mcp`` exited 70 before initialize)."""
    from probe_core.errors import ConfigError

    try:
        os.getcwd()
    except FileNotFoundError:
        root = getattr(args, "root", None)
        if not root or not os.path.isabs(root):
            raise ConfigError("the current directory no longer exists (deleted or moved): cd into your repository, "
                              "or pass --root with an absolute path") from None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=environment.get("PROBE_LOG", "WARNING").upper(), stream=sys.stderr,
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
        _check_cwd(args)
        code = args.func(args)
        sys.stdout.flush()  # here, not at exit: a reader that left early (`| head`) is handled below
        return code
    except ProbeError as exc:
        print(f"probe: error: {redact(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("probe: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `probe ... | head`: the reader left; not an error worth a message
        # what is still buffered can never be written: point stdout at /dev/null so the flush at
        # exit does not print "Exception ignored ... BrokenPipeError"
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # a bug: one line unless debugging
        if environment.get("PROBE_DEBUG"):
            raise
        from probe_core.storage.damage import as_probe_error

        if isinstance(known := as_probe_error(exc), ProbeError):  # a damaged index file, with the fix
            print(f"probe: error: {redact(str(known))}", file=sys.stderr)
            return EXIT_ERROR
        print(f"probe: internal error: {type(exc).__name__}: {redact(str(exc))} (rerun with PROBE_DEBUG=1 for details)",
              file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
