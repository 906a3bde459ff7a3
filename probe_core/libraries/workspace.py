"""The collection profile of a reference library's index (``probe_core.collection``).

A library's data dir (``<user data dir>/libraries/<name>/index``) holds a ``config.json`` whose
``library`` key names the library and its mode; ``Workspace`` sees that key and makes its profile
with ``configure_library`` (named in ``collection.FACTORIES``), so every process that opens the
index (an owner ``probe mcp``, the CLI) indexes it the same way:

* only documents: ``.md .markdown .txt .rst .html .htm .pdf``, each chunked as a doc
  (``chunk_kind`` ``doc``); HTML as the text ``html_text`` extracts from it, cut by its headings;
  PDF as the text layer ``pdf_text`` extracts, cut by page (``scan`` lists PDFs, which a
  project's scan leaves out as binary, up to ``PDF_MAX_BYTES``; ``read`` hands the indexer their
  bytes);
* every point's payload carries ``collection: "libraries"`` and ``library_name``;
* the readable text of each document is kept in the index (``texts``) for snippets, and a search
  answers from it (``search.library_search``);
* ``incremental`` mode keeps the points of documents deleted from the folder;
* not tracked per git branch, and kept out of the project registry (libraries have their own).
"""
from __future__ import annotations

import dataclasses
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from ..chunking import chunk_file
from ..errors import PathOutsideRoot
from ..records import Chunk, ScannedFile, short_hash
from ..scan import IgnoreRules, ScanResult, SkipReason, read_regular_file, read_text, resolve_inside_root, scan_files
from . import texts
from .html_text import html_to_text
from .pdf_text import pdf_to_text
from .search import COLLECTION

if TYPE_CHECKING:
    from ..workspace import Workspace

DOC_SUFFIXES = (".md", ".markdown", ".txt", ".rst", ".html", ".htm", ".pdf")
HTML_SUFFIXES = (".html", ".htm")
PDF_SUFFIX = ".pdf"
# PDFs carry fonts and images beside their text: a 300-page manual is often 10-30 MB, far over the
# scanner's 1 MB cap for text files. 50 MB takes such manuals and leaves out scan dumps (whose
# pages are images, with no text layer to index anyway).
PDF_MAX_BYTES = 50_000_000


def is_doc(path: str) -> bool:
    return path.lower().endswith(DOC_SUFFIXES)


def is_pdf(path: str) -> bool:
    return path.lower().endswith(PDF_SUFFIX)


# The manifest's file identity: 16 hex of sha256 over the string the indexer reads (``read``): the
# decoded text of a text document, the bytes (one Latin-1 character per byte) of a PDF.
file_hash = short_hash


def decode(path: str, data: bytes) -> str:
    """What ``read`` makes of a document's bytes: a PDF's bytes as Latin-1 (lossless, one character
    per byte, so its ``file_hash`` changes exactly when its bytes do and ``chunk`` gets the bytes
    back), any other document as UTF-8 text (``read_text``'s decoding)."""
    return data.decode("latin-1") if is_pdf(path) else data.decode("utf-8", errors="replace")


def disk_hash(path: Path) -> str | None:
    """The ``file_hash`` the document at ``path`` (absolute) would be indexed with now; None if unreadable."""
    try:
        return file_hash(decode(str(path), path.read_bytes()))
    except OSError:
        return None


def _pdf_file(root: Path | str, path: str) -> ScannedFile | None:
    """The PDF the scanner skipped as binary or too large, if it is a file within ``PDF_MAX_BYTES``."""
    try:
        info = os.stat(resolve_inside_root(root, path))
    except (OSError, PathOutsideRoot):  # gone since the scan, or a symlink that now points out
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size > PDF_MAX_BYTES:
        return None
    return ScannedFile.from_stat(path, info)


class LibraryProfile:
    """A library index's profile (``ws.profile``; see the module docstring)."""

    kind = "library"
    tracks_branches = False  # the folder is indexed as it is
    records_project = False  # libraries have their own registry (libraries.json)
    searched_with_libraries = False
    prepares_in_workers = False  # PDFs, HTML and the texts it keeps for snippets: read and chunked here

    def __init__(self, ws: "Workspace", name: str, mode: str):
        self.ws = ws
        self.name = name
        self.mode = mode
        self.keep_deleted = mode == "incremental"
        self.payload = {"collection": COLLECTION, "library_name": name}
        self.project_id = f"library:{name}"  # not a project: keeps the library out of the project registry

    def accepts(self, path: str) -> bool:
        return is_doc(path)

    def ignore_rules(self, root: Path | str) -> IgnoreRules:
        """The library's ignore rules: a project's, except that ``.pdf`` is not a default binary
        extension (``.gitignore``/``.probeignore`` rules still apply to PDFs). A watcher of the
        library folder needs these to see PDF changes before the periodic rescan."""
        return IgnoreRules(root, keep_extensions=(PDF_SUFFIX.lstrip("."),))

    def scan(self, root: Path | str, *, max_file_bytes: int) -> ScanResult:
        """``scan_files`` for a library: PDFs included, up to ``PDF_MAX_BYTES``.

        The generic scanner leaves PDFs out twice over: ``.pdf`` is on the built-in list of binary
        extensions, and a PDF has NUL bytes (``binary``) or is over the text cap (``too_large``).
        Here the ignore rules keep ``.pdf`` (``.gitignore``/``.probeignore`` still apply to it), and
        the PDFs the scan then skips as binary or too large move from ``skipped`` to ``files``. A
        symlink out of the root or to a directory keeps its own skip reason: never taken.
        """
        scan = scan_files(root, max_file_bytes=max_file_bytes, rules=self.ignore_rules(root))
        taken: list[ScannedFile] = []
        rest = []
        for skipped in scan.skipped:
            found = None
            if is_pdf(skipped.path) and skipped.reason in (SkipReason.BINARY, SkipReason.TOO_LARGE):
                found = _pdf_file(root, skipped.path)
            if found is None:
                rest.append(skipped)
            else:
                taken.append(found)
        if taken:
            scan.skipped = rest
            scan.files = sorted(scan.files + taken, key=lambda f: f.path)
        return scan

    def read(self, root: Path | str, path: str, *, max_bytes: int | None = None) -> str:
        """What the indexer hashes and hands to ``chunk`` (see ``decode``). ``max_bytes`` is the
        project's text cap, which a library's documents do not take."""
        if is_pdf(path):
            return decode(path, read_regular_file(resolve_inside_root(root, path), PDF_MAX_BYTES)[0])
        return read_text(root, path)

    def chunk(self, path: str, text: str) -> list[Chunk]:
        """Chunk one document (as a doc) and keep its readable text for snippets.

        A PDF with no text to index raises ``PdfTextError`` (``pdf: ...``): the indexer records it
        as the file's ``last_error`` and goes on with the other documents.
        """
        if is_pdf(path):  # ``text`` is the file's bytes (``read``); its text layer, a heading per page
            readable, language = pdf_to_text(text.encode("latin-1")), "pdf"
        elif path.lower().endswith(HTML_SUFFIXES):  # extracted text with Markdown headings
            readable, language = html_to_text(text), "html"
        else:
            readable, language = text, None
        texts.retain(self.ws, path, file_hash(text), readable)
        if language is not None:  # cut as Markdown, by the headings the extraction wrote
            chunks = [dataclasses.replace(c, path=path, language=language) for c in chunk_file(path + ".md", readable)]
        else:
            chunks = chunk_file(path, readable)
        return [dataclasses.replace(c, chunk_kind="doc") for c in chunks]


    def search(self, ws: "Workspace", query: str, *, top_k: int = 12, mode: str = "auto",
               instruction: str | None = None, filters: dict | None = None) -> dict:
        """A library answers from its index, snippets from the texts it keeps (``search``)."""
        from .search import library_search

        return library_search(ws, query, top_k=top_k, mode=mode, instruction=instruction, filters=filters)


def configure_library(ws: "Workspace") -> LibraryProfile:
    """The profile of a library's index (``collection.FACTORIES["library"]``). Its texts' table is
    made by the first text the manifest keeps (``texts.retain``), so opening the index reads
    nothing yet: a damaged manifest is found, and repaired, by the engine's own check."""
    spec = ws.config.extra["library"]
    return LibraryProfile(ws, spec["name"], spec.get("mode", "sync"))
