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


def _print_items(result: dict) -> None:
    target = result.get("target") or {}
    if target.get("path"):
        print(f"{target.get('kind', '')} {target.get('symbol', '')} ({target['path']}:{target.get('line')})")
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
    return out


def cmd_intel(args) -> int:
    """Answered by the running owner when there is one (warm), else from the symbol graph here."""
    from . import owner_verbs

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
        _print_items(result)
    return 0


def register(subparsers) -> None:
    """Add the code-intelligence verbs to `probe`'s subparsers."""

    def verb(name: str, help_text: str, *, depth: bool = False) -> argparse.ArgumentParser:
        sp = subparsers.add_parser(name, help=help_text)
        sp.add_argument("--root", default=argparse.SUPPRESS, help="workspace root (default: current directory)")
        sp.add_argument("--json", action="store_true", help="print the result object as JSON")
        sp.add_argument("--max-tokens", type=int, default=4000)
        if name != "map":
            sp.add_argument("symbol", nargs="?", help="name, `Type.method` or `Type::method`")
            sp.add_argument("--file", help="file holding the definition (with --line)")
            sp.add_argument("--line", type=int, help="line of the definition in --file")
            sp.add_argument("--max-results", type=int, default=50)
        if depth:
            sp.add_argument("--depth", type=int, default=1, help="levels to follow (1 = direct)")
        sp.set_defaults(func=cmd_intel)
        return sp

    sp = verb("map", "structure overview: files, definitions and their signatures")
    sp.add_argument("path", nargs="?", default=".")
    sp.add_argument("--depth", type=int, default=2, help="folder levels to list (deeper ones are summarized)")
    sp.add_argument("--detail", choices=["files", "signatures", "full"], default="signatures")
    sp.add_argument("--language", help="only this language (python, go, rust, typescript, ...)")
    verb("callers", "who calls this function or method", depth=True)
    verb("callees", "what this function calls (definitions in this repository)", depth=True)
    sp = verb("refs", "every use of a symbol in code (not comments or docs)")
    sp.add_argument("--include-declaration", action="store_true")
    verb("impls", "implementations, subclasses, `impl … for`, Go types satisfying an interface")
    verb("impact", "what would break if this symbol changed: callers, uses, implementations, tests",
         depth=True)
