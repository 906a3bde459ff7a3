"""``probe memory list|add|update|remove``: the memory rules (``probe_core.memory.rules``).

Reads and writes the rule stores directly (SQLite, safe beside a running ``probe mcp``), so it
works without an index and fast enough for an agent's SessionStart hook (``probe memory list``).
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path


def _store(args):
    from probe_core.memory.rules import RuleStore

    return RuleStore(Path(getattr(args, "root", None) or os.getcwd()))


def cmd_memory(args) -> int:
    from probe_core.memory.rules import render_rules_markdown

    store = _store(args)
    action = args.memory_action
    if action == "list":
        rules = store.list(scope=args.scope)
        if args.json:
            print(json.dumps({"rules": [r.to_dict() for r in rules]}, indent=2))
        else:
            print(render_rules_markdown(rules))
        return 0
    tags = [t for t in args.tags.split(",")] if getattr(args, "tags", None) is not None else None
    out = store.apply(action, label=args.label, content=getattr(args, "content", None), scope=args.scope,
                      title=getattr(args, "title", None), tags=tags)
    print(out["message"])
    return 0


def register(subparsers) -> None:
    """Add `probe memory` and its actions to `probe`'s subparsers."""
    mp = subparsers.add_parser("memory", help="durable rules for agents: global (you) and project (this repository)")
    msub = mp.add_subparsers(dest="memory_action", metavar="ACTION", required=True)

    def action(name: str, help_text: str) -> argparse.ArgumentParser:
        sp = msub.add_parser(name, help=help_text)
        sp.add_argument("--root", default=argparse.SUPPRESS, help="workspace root (default: current directory)")
        sp.set_defaults(func=cmd_memory)
        return sp

    sp = action("list", "print the rules as markdown (global first, then the project's)")
    sp.add_argument("--scope", choices=["global", "project"], default=None, help="only this scope")
    sp.add_argument("--json", action="store_true", help="print {rules: [...]} as JSON")

    for name, help_text in (("add", "add a rule (the label must be new in its scope)"),
                            ("update", "change a rule's content, title or tags")):
        sp = action(name, help_text)
        sp.add_argument("label", help="lowercase, hyphenated, at most 15 characters (e.g. use-uv)")
        sp.add_argument("content", nargs=None if name == "add" else "?", help="the rule's text")
        sp.add_argument("--scope", choices=["global", "project"], default="project")
        sp.add_argument("--title")
        sp.add_argument("--tags", help="comma-separated tags")

    sp = action("remove", "delete a rule")
    sp.add_argument("label")
    sp.add_argument("--scope", choices=["global", "project"], default="project")
