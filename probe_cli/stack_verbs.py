"""``probe doctor``, ``probe up``, ``probe down``: thin calls into ``probe_core.doctor`` and ``probe_core.stack``.

``register(subparsers)`` adds the three verbs; errors are ``ProbeError``s that ``main`` prints as
one line.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

_MARK = {"ok": ("✓", "green"), "warn": ("!", "yellow"), "fail": ("✗", "red"), "skip": ("–", "dim")}


def _root(args) -> Path:
    return Path(getattr(args, "root", None) or os.getcwd())


def _config(root: Path):
    from probe_core.config import WorkspaceConfig, load_config

    return (load_config(root) or WorkspaceConfig()).with_env()


def cmd_doctor(args) -> int:
    from probe_core.doctor import run_doctor, worst

    root = _root(args)
    checks = run_doctor(_config(root), root=root)
    overall = worst(checks)
    if args.json:
        print(json.dumps({"status": overall, "checks": [c.to_dict() for c in checks]}, indent=2))
    else:
        from .render import console, escape

        for c in checks:
            mark, colour = _MARK[c.status]
            console.print(f"[{colour}]{mark} {c.name:<12}[/] {escape(c.detail)}")
            if c.fix and c.status != "ok":
                console.print(f"  [dim]fix:[/] {escape(c.fix)}")
        console.print({"ok": "[green]all good[/]", "warn": "[yellow]works, with warnings[/]",
                       "fail": "[red]something needs fixing[/]"}[overall])
    return 1 if overall == "fail" else 0


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def cmd_up(args) -> int:
    from probe_core.stack import StackController, endpoint_settings

    ctl = StackController()
    settings = ctl.plan(args.profile, cpu=args.cpu, tei_image_tag=args.tei_tag, api_keys=args.api_keys,
                        lan_unsafe=args.lan_unsafe)
    if args.dry_run:
        from probe_core.stack import Compose, ComposeNotFound, find_compose

        try:
            argv = find_compose()
        except ComposeNotFound:
            argv = ["docker", "compose"]
        compose = Compose(env_file=ctl.env_file, files=settings.files, argv=argv)
        print("\n".join(f"{k}={v}" for k, v in settings.env().items()))
        print(" ".join(compose.command("up", "--detach", profiles=[settings.profile])))
        return 0
    status = ctl.up(settings, wait_s=args.wait, say=_say)
    for line in status.describe():
        print(line)
    env = endpoint_settings(settings)
    if args.configure:
        from probe_core.config import init_workspace, load_config, save_config

        root = _root(args)
        init_workspace(root, preset=settings.profile)
        cfg = load_config(root)
        cfg.qdrant_url, cfg.tei_url = env["QDRANT_URL"], env["TEI_EMBED_URL"]
        cfg.reranker_url = env.get("RERANKER_URL")
        save_config(root, cfg)
        print(f"workspace {root} now uses preset {settings.profile} and this stack (reindex with `probe index`)")
    else:
        print("use it from a workspace with: probe init --preset " + settings.profile + " and "
              + " ".join(f"{k}={v}" for k, v in env.items() if k != "PROBE_PRESET")
              + " (or rerun with --configure)")
    return 0


def cmd_down(args) -> int:
    from probe_core.stack import StackController

    StackController().down(volumes=args.volumes, say=_say)
    print("stack stopped" + (" and its volumes (indexes, downloaded models) deleted" if args.volumes else ""))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``doctor``, ``up`` and ``down`` to ``probe``'s subcommands."""

    def with_root(sp):
        sp.add_argument("--root", default=argparse.SUPPRESS, help="workspace root (default: current directory)")
        return sp

    sp = with_root(subparsers.add_parser("doctor", help="check GPU, Docker, the stack and the engine"))
    sp.add_argument("--json", action="store_true", help="print the checks as JSON")
    sp.set_defaults(func=cmd_doctor)

    sp = with_root(subparsers.add_parser("up", help="start the Docker stack (Qdrant, TEI, reranker)"))
    sp.add_argument("--profile", choices=["lite", "balanced", "pro"],
                    help="stack preset (default: what this GPU fits)")
    sp.add_argument("--cpu", action="store_true", help="CPU variant: no GPU reservation, the CPU TEI image")
    sp.add_argument("--tei-tag", help="TEI image tag instead of the detected one (e.g. cuda-1.9)")
    sp.add_argument("--api-keys", action="store_true",
                    help="require API keys (QDRANT_API_KEY, TEI_API_KEY, RERANKER_API_KEY from the environment)")
    sp.add_argument("--lan-unsafe", action="store_true",
                    help="UNSAFE: publish on every interface (implies --api-keys); prefer an SSH tunnel")
    sp.add_argument("--wait", type=float, default=300, metavar="SECONDS",
                    help="wait this long for healthy services (0: do not wait; default 300)")
    sp.add_argument("--configure", action="store_true",
                    help="point this workspace's .probe/config.json at the stack (preset + endpoints)")
    sp.add_argument("--dry-run", action="store_true", help="print the env file and the compose command only")
    sp.set_defaults(func=cmd_up)

    sp = with_root(subparsers.add_parser("down", help="stop the Docker stack"))
    sp.add_argument("--profile", choices=["lite", "balanced", "pro"],
                    help="accepted for symmetry; the stack `probe up` started is stopped")
    sp.add_argument("--volumes", action="store_true", help="also delete its volumes (Qdrant data, model caches)")
    sp.set_defaults(func=cmd_down)
