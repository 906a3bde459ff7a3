"""``store``: save a document into a *stored* library and make it searchable at once.

Each call writes one Markdown file, ``<slug of the title>-<8 hex of the content's sha256>.md``, into
the library's ``docs/`` folder (created with the library on first use), with a small header
(title, source, url), then asks the library's engine to index that file before returning (the
lexical phase; dense vectors follow in the background). Storing the same content again finds the
existing file and writes nothing. Bad input (empty content, a bad library name, a folder library)
is refused before anything is written; if indexing fails, the new file is removed again.
"""
from __future__ import annotations

import errno
import hashlib
import os
import re
from typing import Protocol

from . import registry
from .manage import ensure_stored_library
from .registry import LibraryError
from .search import library_ref

MAX_CONTENT_BYTES = 900_000  # below the indexer's 1 MB file cap, with room for the header
_SLUG = re.compile(r"[^a-z0-9]+")


class EngineSource(Protocol):
    def engine(self, name: str): ...


def slugify(text: str, limit: int = 48) -> str:
    slug = _SLUG.sub("-", text.lower()).strip("-")[:limit].strip("-")
    return slug or "doc"


def _one_line(value: object, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise LibraryError(f"{field} must be a string")
    if "\0" in value:
        raise LibraryError(f"{field} contains a NUL byte; give plain text")
    value = " ".join(value.split())
    if len(value) > 500:
        raise LibraryError(f"{field} is longer than 500 characters")
    return value or None


def render_document(content: str, title: str | None, source: str | None, url: str | None) -> str:
    head = [f"# {title}", ""] if title else []
    meta = [f"{k}: {v}" for k, v in (("Source", source), ("URL", url)) if v]
    if meta:
        head += meta + [""]
    return "\n".join(head) + content.strip("\n") + "\n"


def store(libraries: EngineSource, content: str, library_name: str, title: str | None = None,
          source: str | None = None, url: str | None = None) -> dict:
    """Store ``content`` as a document of library ``library_name`` and index it now."""
    if not isinstance(content, str) or not content.strip():
        raise LibraryError("content is empty: store needs the text of the document")
    if "\0" in content:  # the indexer would take the document for a binary file and never index it
        raise LibraryError("content contains a NUL byte, so it is not a text document; store text")
    if len(content.encode("utf-8", "surrogatepass")) > MAX_CONTENT_BYTES:
        raise LibraryError(f"content is larger than {MAX_CONTENT_BYTES} bytes; split it into several documents")
    registry.validate_name(library_name)
    title, source, url = _one_line(title, "title"), _one_line(source, "source"), _one_line(url, "url")

    entry, library_created = ensure_stored_library(library_name)
    docs = registry.docs_dir(library_name)
    docs.mkdir(parents=True, exist_ok=True)
    text = render_document(content, title, source, url)
    digest = hashlib.sha256(content.strip().encode("utf-8", "surrogatepass")).hexdigest()[:8]
    existing = [p for p in sorted(docs.glob(f"*-{digest}.md")) if _holds(p, content)]
    created = not existing
    if existing:
        rel = existing[0].name
    else:
        first_line = next((ln for ln in content.strip().splitlines() if ln.strip()), "")
        rel = _free_name(docs, slugify(title or first_line.lstrip('# ')), digest)
        _write_new(docs, rel, text)
    try:
        report = libraries.engine(library_name).index_paths([rel])
    except BaseException:
        if created:
            (docs / rel).unlink(missing_ok=True)
        raise
    ref = library_ref(library_name, rel)
    verb = "stored" if created else "already stored (identical content)"
    return {
        "library_name": library_name,
        "path": ref,
        "source": ref,
        "file": str(docs / rel),
        "created": created,
        "library_created": library_created,
        "chunks_indexed": report.get("chunks_indexed", 0),
        "message": f"{verb} as {ref}; search it with include_libraries=true or "
                   f"filters={{\"collections\": [\"libraries\"], \"libraries\": [\"{library_name}\"]}}",
    }


def _holds(path, content: str) -> bool:
    """Whether the stored document at ``path`` has this content (an 8-hex digest can collide)."""
    try:
        return content.strip("\n") in path.read_text("utf-8", errors="replace")
    except OSError:
        return False


def _free_name(docs, slug: str, digest: str) -> str:
    """``slug-digest.md``, or with a counter when that name is taken by another document: a store
    never replaces a document the caller did not name."""
    rel, n = f"{slug}-{digest}.md", 1
    while os.path.lexists(docs / rel):
        n += 1
        rel = f"{slug}-{n}-{digest}.md"
    return rel


def _write_new(docs, rel: str, text: str) -> None:
    """Write ``docs/rel`` through a temp file created exclusively (never through a planted symlink),
    then link it into place without replacing anything that appeared meanwhile."""
    tmp = docs / f".{rel}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        try:
            os.link(tmp, docs / rel)  # fails if the name exists: nothing is overwritten
        except FileExistsError:
            raise
        except OSError as exc:  # a filesystem without hard links (FAT, some network and FUSE mounts)
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.ENOSYS):
                raise
            _write_exclusive(docs / rel, text)
    finally:
        tmp.unlink(missing_ok=True)


def _write_exclusive(path, text: str) -> None:
    """Create ``path`` (never through a link, never over an existing file) and write ``text``; a
    write that fails removes the half-written file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
    except BaseException:
        os.unlink(path)
        raise
