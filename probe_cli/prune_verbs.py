"""``probe prune [--older-than 30d] [--dry-run] [--json]``: delete the indexes of workspaces nobody used
for a while (``probe_core.registry``). ``probe workspaces`` lists what the registry knows."""
from __future__ import annotations

import json
import sys
import time

EXIT_USAGE = 2


def cmd_prune(args) -> int:
    from probe_core.registry import RegistryError, parse_duration, prune, render_prune

    try:
        older_than = parse_duration(args.older_than)
    except RegistryError as exc:
        print(f"probe: error: --older-than: {exc}", file=sys.stderr)
        return EXIT_USAGE
    report = prune(older_than, dry_run=args.dry_run)
    if args.json:
        print(json.dumps(report.to_list(), indent=2))
    else:
        print(render_prune(report))
    return 0


def cmd_workspaces(args) -> int:
    from probe_core.registry import format_age, list_workspaces

    records = list_workspaces()
    if args.json:
        print(json.dumps([r.to_dict() for r in records], indent=2))
        return 0
    if not records:
        print("no workspaces recorded yet (a workspace is recorded when `probe mcp` or `probe index` runs on it)")
        return 0
    from .render import print_table

    now = time.time()
    print_table(["WORKSPACE", "LAST SEEN", "AGE", "PRESET", "BACKEND", "ROOT"],
                [[r.workspace_id[:8], r.to_dict()["last_seen"].replace("T", " ")[:16], format_age(now - r.last_seen_at),
                  r.preset, r.backend if r.backend == "edge" else r.url or "", r.root]
                 for r in sorted(records, key=lambda r: -r.last_seen_at)])
    return 0


def register(subparsers) -> None:
    sp = subparsers.add_parser(
        "prune", help="delete the indexes of workspaces not used for a while (see also `probe workspaces`)")
    sp.add_argument("--older-than", default="30d", metavar="AGE",
                    help="stale = last seen longer ago than this: 30d (default), 12h, 2w, 90m, 0d "
                         "(a workspace on a Qdrant server: never under 10m, its running owner re-records it every 5m)")
    sp.add_argument("--dry-run", action="store_true", help="list what would be deleted; change nothing")
    sp.add_argument("--json", action="store_true", help="print a JSON list of the stale workspaces and actions")
    sp.set_defaults(func=cmd_prune)

    sp = subparsers.add_parser("workspaces", help="list the workspaces Probe knows (root, last seen, preset)")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(func=cmd_workspaces)
