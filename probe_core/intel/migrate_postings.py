"""Graph layout 9 → 10, in place: the word postings packed one row per word (``postings.py``).

Layout 9 held one (term, file) row per distinct word of a file (31.5 MB of a 2.9M-line monorepo's
manifest). It holds everything layout 10 does, so the rows are read in key order, grouped by term
and written as lists in one transaction, nothing parsed again; term and file ids do not change.
"""
from __future__ import annotations

import numpy as np

from . import migrate, migrate_symbols, postings
from .migrate import convert_in_place

FROM_VERSION = "9"
OLDER = (migrate.FROM_VERSION, migrate_symbols.FROM_VERSION, FROM_VERSION)  # the layouts converted in place


def in_place(db, schema: str, version: str) -> None:
    """Convert a graph of an ``OLDER`` layout to ``version`` (``schema``'s), one step after the
    other: each step is a transaction of its own, and a step that fails raises."""
    without_symbols = ";".join(migrate_symbols.symbol_statements(schema, keep=False))
    migrate.to_packed(db, without_symbols, migrate_symbols.FROM_VERSION)
    migrate_symbols.to_file_ids(db, schema, FROM_VERSION)
    to_lists(db, version)


def to_lists(db, version: str) -> bool:
    """Convert a version-9 graph behind ``db`` (autocommit) to ``version``; False when another
    connection did it first."""
    def steps(db) -> None:
        count = db.execute("SELECT count(*) FROM graph_postings").fetchone()[0]
        rows = db.execute("SELECT term << 32 | file FROM graph_postings")  # in key order: (term, file)
        found = np.fromiter((r[0] for r in rows), np.uint64, count)
        found.sort(kind="stable")  # sorted already: a check, at the cost of a pass
        db.execute("DROP TABLE graph_postings")
        db.execute(postings.SCHEMA)
        db.executemany("INSERT INTO graph_postings(term, files) VALUES(?,?)", zip(*postings.encode(found)))
    return convert_in_place(db, FROM_VERSION, version, steps, "word postings packed per word")
