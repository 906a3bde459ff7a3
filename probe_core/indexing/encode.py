"""What the lexical phase stores for a file's chunks, computed where the chunks are made.

Per chunk the index holds a point id, a BM25 sparse vector and (queued for the dense fill) the
chunk's index text, compressed, or nothing when the fill can read it again from the file
(``FROM_FILE``). None of them needs the index: only the workspace id, the file's
hash and the BM25 average length. A worker process (``prepare_pool``) computes them beside the
chunks, so the one process that writes the index only writes; the serial path calls the same
function in the writer, so both paths give the same index.
"""
from __future__ import annotations

from array import array
from collections.abc import Iterator
from dataclasses import dataclass

from .. import sparse
from ..records import Chunk, point_id
from ..storage.dense_queue import FROM_FILE, pack

CONTEXT_HEADER = True  # measured on the dev set: see docs/benchmarks.md


def index_text(c: Chunk) -> str:
    """What BM25 and the embedder see: the chunk under a one-line header naming its file and symbol.

    A method body rarely says which file or class it lives in; the header gives both the lexical
    and the dense side that context (``src/auth.py · Hasher.check``).
    """
    return with_header(c.path, c.parent_symbol, c.symbol, c.text)


def with_header(path: str, parent_symbol: str | None, symbol: str | None, text: str) -> str:
    """``index_text`` of a chunk given by its parts (the dense fill rebuilds it from a manifest row)."""
    if not CONTEXT_HEADER:
        return text
    name = ".".join(x for x in (parent_symbol, symbol) if x)
    return f"{path} · {name}\n{text}" if name else f"{path}\n{text}"


@dataclass(slots=True)
class Encoded:
    """A file's chunks as stored, in chunk order: point ids, chunk hashes, sparse vectors (None
    when the BM25 average length was not known where they were made), compressed index texts.
    The vectors are three flat arrays (chunk k's terms are ``indices[ends[k-1]:ends[k]]``): a
    tenth of the memory of lists of Python numbers, and cheap to send between processes."""

    avg_len: float | None
    ids: list[str]
    hashes: list[str]
    sparse: tuple[array, array, array] | None  # ends ('I'), indices ('I'), values ('d': exact)
    packed: list[bytes]


def encode(workspace_id: str, file_hash: str, chunks: list[Chunk], avg_len: float | None,
           source: str | None = None) -> Encoded:
    """Point ids, chunk hashes, sparse vectors (with ``avg_len``) and compressed index texts of
    ``chunks``. With the file's ``source`` (what they were chunked from), a chunk whose text is its
    lines of it queues no text (``FROM_FILE``): the dense fill reads them again (``dense.py``)."""
    texts = [index_text(c) for c in chunks]
    ids = [point_id(workspace_id, c.path, c.start_line, c.end_line, file_hash) for c in chunks]
    vectors = None
    if avg_len is not None:
        ends, indices, values = array("I"), array("I"), array("d")
        for t in texts:
            v = sparse.embed_document(t, avg_len)
            indices.extend(v.indices)
            values.extend(v.values)
            ends.append(len(indices))
        vectors = (ends, indices, values)
    lines = source.splitlines() if source is not None else None
    packed = [FROM_FILE if lines is not None and c.text == "\n".join(lines[c.start_line - 1:c.end_line]) else pack(t)
              for c, t in zip(chunks, texts)]
    return Encoded(avg_len, ids, [c.chunk_hash for c in chunks], vectors, packed)


def sparse_vectors(enc: Encoded, chunks: list[Chunk], avg_len: float) -> Iterator[sparse.SparseVec]:
    """``enc``'s sparse vectors, made now when they were made without (or with another) ``avg_len``."""
    if enc.sparse is None or enc.avg_len != avg_len:
        for c in chunks:
            yield sparse.embed_document(index_text(c), avg_len)
        return
    ends, indices, values = enc.sparse
    start = 0
    for end in ends:
        yield sparse.SparseVec(indices[start:end].tolist(), values[start:end].tolist())
        start = end
