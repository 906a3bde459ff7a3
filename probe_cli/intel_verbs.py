"""``probe map|callers|callees|refs|impls|impact``: thin calls into ``probe_core.intel``.

A running owner (``probe mcp`` or the background owner) answers them when there is one, else this
process reads the symbol graph itself. ``register(subparsers)`` adds the verbs. With ``--json``
each prints the tools' result object
(``{target, items, truncated, source}``); otherwise a short human listing. Errors are
``ProbeError``s that ``main`` prints as one line.
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path


def _workspace(args):
    from probe_core import Workspace

    root = Path(getattr(args, "root", None) or os.getcwd())
    return Workspace.open(root, create=False)


SOURCES = {"treesitter": "the tree-sitter symbol graph", "lsp": "a language server (LSP)"}


def answered_by(result: dict, seconds: float) -> str:
    """The closing line of every code-intelligence answer: which source answered, and how fast."""
    line = f"{len(result.get('items', []))} items from {SOURCES.get(result.get('source'), result.get('source'))} " \
           f"in {seconds:.1f}s"
    return f"{line}; {result['message']}" if result.get("message") else line


def _print_items(result: dict, seconds: float) -> None:
    target = result.get("target") or {}
    if target.get("path"):
        print(f"{target.get('kind', '')} {target.get('symbol', '')} ({target['path']}:{target.get('line')})")
        if others := target.get("candidates"):
            print(f"  also defined at {', '.join(others[:5])}{' …' if len(others) > 5 else ''} "
                  "(ask for one with --file F --line N)")
    for item in result.get("items", []):
        conf = item.get("confidence", 1.0)
        mark = "" if conf >= 0.99 else f"  [{conf:.2f}]"
        label = item.get("category") or item.get("kind", "")
        where = f"{item['path']}:{item['line']}"
        print(f"  {where:<40} {label:<14} {item.get('symbol') or ''}  {item.get('context', '')}{mark}")
    if summary := result.get("summary"):
        print(f"files {summary['files_affected']}, functions {summary['functions_affected']}, "
              f"tests {summary['tests_covering']}, risk {summary['risk'].upper()}")
    if result.get("truncated"):
        print("  … truncated (raise --max-results / --max-tokens)")
    print(answered_by(result, seconds))


TOOLS = {"map": "map_code", "callers": "find_callers", "callees": "find_callees", "refs": "find_references",
         "impls": "find_implementations", "impact": "impact_analysis"}


def _tool_args(args) -> dict:
    """The verb's flags as the tool's keyword arguments (the MCP tools take the same)."""
    if args.command == "map":
        return dict(path=args.path, depth=args.depth, detail=args.detail, language=args.language,
                    max_tokens=args.max_tokens)
    out = dict(symbol=args.symbol, file=args.file, line=args.line, max_results=args.max_results,
               max_tokens=args.max_tokens)
    if args.command in ("callers", "callees", "impact"):
        out["depth"] = args.depth
    if args.command == "refs":
        out["include_declaration"] = args.include_declaration
    if args.command in ("callers", "refs", "impls") and getattr(args, "lsp", False):
        out["lsp"] = True  # unset: as configured (PROBE_LSP, config.json), the graph by default
    return out


def cmd_intel(args) -> int:
    """Answered by the running owner when there is one (warm), else from the symbol graph here."""
    import time

    from . import owner_verbs

    t0 = time.perf_counter()
    root = Path(getattr(args, "root", None) or os.getcwd())
    tool, kwargs = TOOLS[args.command], _tool_args(args)
    result = owner_verbs.call_owner(root, "intel", tool, kwargs)
    if result is None:
        from probe_core.engine.answers import intel_answer

        ws = _workspace(args)
        try:
            result = intel_answer(ws, tool, kwargs)
        finally:
            ws.close()
        owner_verbs.start_after_cold_answer(root)
    if args.command == "map":
        print(json.dumps(result, indent=2) if args.json else result["text"])
    elif args.json:
        print(json.dumps(result, indent=2))
    else:
        _print_items(result, time.perf_counter() - t0)
    return 0


def register(subparsers) -> None:
    """Add the code-intelligence verbs to `probe`'s subparsers."""
    from probe_core.limits import INTEL_DEPTH, MAP_DEPTH, MAX_RESULTS, MAX_TOKENS

    def verb(name: str, help_text: str, *, depth: bool = False, lsp: bool = False) -> argparse.ArgumentParser:
        sp = subparsers.add_parser(name, help=help_text)
        sp.add_argument("--root", default=argparse.SUPPRESS, help="workspace root (default: current directory)")
        sp.add_argument("--json", action="store_true", help="print the result object as JSON")
        sp.add_argument("--max-tokens", type=MAX_TOKENS.flag, default=4000, metavar="N",
                        help=f"budget for the answer, about N tokens ({MAX_TOKENS.low}-{MAX_TOKENS.high})")
        if name != "map":
            sp.add_argument("symbol", nargs="?", help="name, `Type.method` or `Type::method`")
            sp.add_argument("--file", help="file holding the definition (with --line)")
            sp.add_argument("--line", type=int, help="line of the definition in --file")
            sp.add_argument("--max-results", type=MAX_RESULTS.flag, default=50, metavar="N",
                            help=f"at most N locations ({MAX_RESULTS.low}-{MAX_RESULTS.high})")
        if lsp:
            sp.add_argument("--lsp", action="store_true",
                            help="ask an installed language server instead of the tree-sitter graph (slower; "
                                 "falls back to the graph, saying why)")
        if depth:
            sp.add_argument("--depth", type=INTEL_DEPTH.flag, default=1, metavar="N",
                            help=f"levels to follow (1 = direct, at most {INTEL_DEPTH.high})")
        sp.set_defaults(func=cmd_intel)
        return sp

    sp = verb("map", "structure overview: files, definitions and their signatures")
    sp.add_argument("path", nargs="?", default=".")
    sp.add_argument("--depth", type=MAP_DEPTH.flag, default=2, metavar="N",
                    help=f"folder levels to list, at most {MAP_DEPTH.high} (deeper ones are summarized)")
    sp.add_argument("--detail", choices=["files", "signatures", "full"], default="signatures")
    sp.add_argument("--language", help="only this language (python, go, rust, typescript, ...)")
    verb("callers", "who calls this function or method", depth=True, lsp=True)
    verb("callees", "what this function calls (definitions in this repository)", depth=True)
    sp = verb("refs", "every use of a symbol in code (not comments or docs)", lsp=True)
    sp.add_argument("--include-declaration", action="store_true")
    verb("impls", "implementations, subclasses, `impl … for`, Go types satisfying an interface", lsp=True)
    verb("impact", "what would break if this symbol changed: callers, uses, implementations, tests",
         depth=True)
