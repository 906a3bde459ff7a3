"""``open_file("library:NAME/PATH")``: a library document's lines, read from its index.

Line numbers are those of the indexed text (an HTML page's or a PDF's extracted text), the same
ones search results cite, and an incremental library's documents stay readable after they leave
the folder.
``index_state`` compares the indexed version with the file on disk now.
"""
from __future__ import annotations

from pathlib import Path

from ..engine.answers import MAX_OPEN_LINES, check_range, page_range, parse_source
from ..errors import ProbeError
from . import registry
from .search import COLLECTION, library_ref, parse_library_ref
from .texts import TextReader
from .workspace import disk_hash, is_pdf


def open_document(ref: str, start_line: int | None = None, end_line: int | None = None, *,
                  max_lines: int = MAX_OPEN_LINES) -> dict:
    """Lines ``start_line..end_line`` of a library document (``library:NAME/PATH``, or a search
    ``source`` with ``#Lx-Ly`` when no range is given); shaped like ``open_file``'s answer."""
    if start_line is None and end_line is None:
        ref, start_line, end_line = parse_source(ref.strip())
    name, path = parse_library_ref(ref)
    entry = registry.get(name)
    reader = TextReader(registry.index_dir(name) / "manifest.sqlite")
    try:
        row = reader.get(path)
    finally:
        reader.close()
    if row is None:
        raise ProbeError(f"{ref}: no such document in library {name!r} (not indexed, or removed)")
    text, indexed_hash, indexed_at = row
    lines = text.splitlines()
    total = len(lines)
    start = check_range(start_line, end_line)
    end, truncated, notes = page_range(start, end_line, total, max_lines, name=ref, kind="document")
    on_disk = Path(entry["path"]) / path
    disk = disk_hash(on_disk)
    if disk is None:
        notes.append("the file is no longer in the library folder; this is the indexed text")
    if path.lower().endswith((".html", ".htm")):
        notes.append("text extracted from HTML; line numbers are those of the extracted text")
    elif is_pdf(path):
        notes.append("text layer extracted from PDF (a `## Page N` heading per page); line numbers are"
                     " those of the extracted text")
    return {
        "path": library_ref(name, path),
        "start_line": start,
        "end_line": max(end, start - 1),
        "total_lines": total,
        "lines": lines[start - 1:end],
        "file_hash": indexed_hash,
        "mtime": indexed_at,
        "size": len(text.encode("utf-8", "surrogatepass")),
        "truncated": truncated,
        "next_start_line": end + 1 if truncated else None,
        "index_state": "current" if disk == indexed_hash else "stale",
        "message": "; ".join(notes) or None,
        "collection": COLLECTION,
        "library_name": name,
        "file": str(on_disk),
    }
