"""``probe library add|list|index|remove``: reference libraries (``probe_core.libraries``).

``add`` registers a folder and indexes it here, blocking with a progress bar (``--no-index`` leaves
that to the next ``probe mcp``); when a running ``probe mcp`` already owns the new library's index,
that process indexes and watches it and ``add`` says so. ``remove`` unregisters the library and
deletes its index (a running ``probe mcp`` is asked to let go of it first).
"""
from __future__ import annotations

import json


def _index(name: str, *, quiet: bool) -> int:
    from probe_core.libraries import LibraryError, index_library
    from probe_core.libraries.registry import get

    from .render import IndexProgressView, console, print_failures, print_repairs

    get(name)  # an unknown name is an error before any progress bar shows
    try:
        with IndexProgressView(enabled=not quiet) as view:
            report = index_library(name, progress=view.update)
    except LibraryError as exc:
        if "open in another Probe process" not in str(exc):
            raise
        print(f"{exc}; it is indexed there")
        return 0
    if not quiet:
        console.print(f"[bold green]indexed[/] library {name}: {report['files_indexed']} files "
                      f"({report['chunks_indexed']} chunks), {report['files_unchanged']} unchanged, "
                      f"{report['files_deleted']} deleted, {report['files_failed']} failed; "
                      f"{report['chunks_embedded']} chunks embedded in {report['seconds']:.1f}s")
        print_repairs(report["reconciled"])
    print_failures(report["errors"])  # even with --quiet: a document that is not searchable is news
    return 0


def cmd_add(args) -> int:
    from probe_core.libraries import add_library

    entry = add_library(args.path, args.name, mode=args.mode)
    print(f"added library {entry['name']} ({entry['kind']} {entry['path']}, mode {entry['mode']})")
    if args.no_index:
        print("not indexed yet: the next `probe mcp` indexes and watches it (or run `probe library index "
              f"{entry['name']}`)")
        return 0
    return _index(entry["name"], quiet=args.quiet)


def cmd_index(args) -> int:
    return _index(args.name, quiet=args.quiet)


def _count(value) -> str:
    return "-" if value is None else str(value)


def cmd_list(args) -> int:
    from probe_core.libraries import list_libraries

    libs = list_libraries()
    if args.json:
        print(json.dumps({"libraries": libs}, indent=2))
        return 0
    if not libs:
        print("no reference libraries yet: `probe library add PATH --name NAME`, or the MCP store tool")
        return 0
    from .render import print_failures, print_table

    print_table(["name", "kind", "mode", "files", "failed", "chunks", "embedded", "path"],
                [[lib["name"], lib["kind"], lib["mode"], _count(lib["files"]), _count(lib["files_failed"]),
                  _count(lib["chunks"]), _count(lib["chunks_embedded"]), lib["path"]] for lib in libs])
    print_failures([(f"{lib['name']}/{f['path']}", f["error"]) for lib in libs for f in lib.get("failures", [])])
    return 0


def cmd_remove(args) -> int:
    from probe_core.libraries import remove_library

    entry = remove_library(args.name)
    kept = "" if entry["kind"] == "stored" else f" (the folder {entry['path']} is untouched)"
    print(f"removed library {entry['name']} and its index{kept}")
    return 0


def register(subparsers) -> None:
    """Add `probe library` and its actions to `probe`'s subparsers."""
    lp = subparsers.add_parser("library", help="reference libraries: documentation folders searched beside the code")
    lsub = lp.add_subparsers(dest="library_action", metavar="ACTION", required=True)

    sp = lsub.add_parser("add", help="register a folder of docs (.md .txt .rst .html .pdf) and index it")
    sp.add_argument("path", help="the folder (it is only read; the index lives in Probe's data dir)")
    sp.add_argument("--name", required=True, help="lowercase letters, digits, '-', '_', '.' (e.g. numpy-docs)")
    sp.add_argument("--mode", choices=["sync", "incremental"], default="sync",
                    help="sync: files deleted from the folder leave the index; incremental: they stay searchable")
    sp.add_argument("--no-index", action="store_true", help="register only; the next `probe mcp` indexes it")
    sp.add_argument("--quiet", "-q", action="store_true")
    sp.set_defaults(func=cmd_add)

    sp = lsub.add_parser("list", help="the registered libraries with their counts")
    sp.add_argument("--json", action="store_true", help="print {libraries: [...]} as JSON")
    sp.set_defaults(func=cmd_list)

    sp = lsub.add_parser("index", help="bring a library's index up to date (blocks, with progress)")
    sp.add_argument("name")
    sp.add_argument("--quiet", "-q", action="store_true")
    sp.set_defaults(func=cmd_index)

    sp = lsub.add_parser("remove", help="unregister a library and delete its index (never the folder itself)")
    sp.add_argument("name")
    sp.set_defaults(func=cmd_remove)
