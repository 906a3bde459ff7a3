"""Errors of the code-intelligence queries (each a `ProbeError`: one line a user can act on)."""
from __future__ import annotations

from probe_core.errors import ProbeError


class IntelError(ProbeError):
    """A code-intelligence query cannot be answered as asked."""


class SymbolNotFound(IntelError):
    """No definition matches the symbol name or the file and line given."""


class BadQuery(IntelError):
    """The arguments do not name a target (neither `symbol` nor `file` + `line`) or are out of range."""
