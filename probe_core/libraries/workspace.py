"""What makes a workspace a reference library's index.

A library's data dir (``<user data dir>/libraries/<name>/index``) holds a ``config.json`` whose
``library`` key names the library and its mode; ``Workspace.open`` sees it and calls
``configure_library``, so every process that opens the index (an owner ``probe mcp``, the CLI)
indexes it the same way:

* only documents: ``.md .markdown .txt .rst .html .htm``, each chunked as a doc (``chunk_kind``
  ``doc``); HTML as the text ``html_text`` extracts from it, cut by its headings;
* every point's payload carries ``collection: "libraries"`` and ``library_name``;
* the readable text of each document is kept in the index (``texts``) for snippets;
* ``incremental`` mode keeps the points of documents deleted from the folder.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ..chunking import chunk_file
from ..records import Chunk, short_hash
from . import texts
from .html_text import html_to_text

if TYPE_CHECKING:
    from ..workspace import Workspace

DOC_SUFFIXES = (".md", ".markdown", ".txt", ".rst", ".html", ".htm")
HTML_SUFFIXES = (".html", ".htm")
COLLECTION = "libraries"


def is_doc(path: str) -> bool:
    return path.lower().endswith(DOC_SUFFIXES)


file_hash = short_hash  # the manifest's file identity (16 hex of sha256 over the decoded text)


def readable_text(path: str, text: str) -> str:
    """What a library document is indexed and shown as: HTML → extracted text, others as they are."""
    return html_to_text(text) if path.lower().endswith(HTML_SUFFIXES) else text


class LibraryProfile:
    """The indexer's hooks for a library workspace (``Workspace.library``)."""

    def __init__(self, ws: "Workspace", name: str, mode: str):
        self.ws = ws
        self.name = name
        self.mode = mode
        self.keep_deleted = mode == "incremental"

    def accepts(self, path: str) -> bool:
        return is_doc(path)

    def chunk(self, path: str, text: str) -> list[Chunk]:
        """Chunk one document (as a doc) and keep its readable text for snippets."""
        readable = readable_text(path, text)
        texts.retain(self.ws, path, file_hash(text), readable)
        if path.lower().endswith(HTML_SUFFIXES):  # extracted text with Markdown headings
            chunks = [dataclasses.replace(c, path=path, language="html") for c in chunk_file(path + ".md", readable)]
        else:
            chunks = chunk_file(path, readable)
        return [dataclasses.replace(c, chunk_kind="doc") for c in chunks]


def configure_library(ws: "Workspace") -> None:
    """Turn an opened workspace into its library's index (see the module docstring)."""
    spec = ws.config.extra["library"]
    name, mode = spec["name"], spec.get("mode", "sync")
    ws.library = LibraryProfile(ws, name, mode)
    ws.extra_payload = {"collection": COLLECTION, "library_name": name}
    ws.project_id = f"library:{name}"  # not a project: keeps the library out of the project registry
    texts.ensure_table(ws)
