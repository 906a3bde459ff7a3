"""``probe map|callers|callees|refs|impls|impact``: thin calls into ``probe_core.intel``.

``register(subparsers)`` adds the verbs. With ``--json`` each prints the tools' result object
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


def cmd_intel(args) -> int:
    from probe_core import intel

    ws = _workspace(args)
    try:
        if args.command == "map":
            result = intel.map_code(ws, args.path, depth=args.depth, detail=args.detail,
                                    language=args.language, max_tokens=args.max_tokens).to_dict()
            print(json.dumps(result, indent=2) if args.json else result["text"])
            return 0
        common = dict(symbol=args.symbol, file=args.file, line=args.line, max_results=args.max_results,
                      max_tokens=args.max_tokens)
        if args.command == "callers":
            out = intel.find_callers(ws, depth=args.depth, **common)
        elif args.command == "callees":
            out = intel.find_callees(ws, depth=args.depth, **common)
        elif args.command == "refs":
            out = intel.find_references(ws, include_declaration=args.include_declaration, **common)
        elif args.command == "impls":
            out = intel.find_implementations(ws, **common)
        else:
            out = intel.impact_analysis(ws, depth=args.depth, **common)
        result = out.to_dict()
    finally:
        ws.close()
    if args.json:
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
