"""Bracket expressions (``[a-z]``, ``[!0-9]``, ``[[:alpha:]]``) of an ignore pattern, read the way
git's ``wildmatch`` reads them, as regex classes.

pathspec copies a bracket's text into its regex nearly verbatim, which differs from git: a
reversed range (``[z-a]``) is a regex compile error ("bad character range", which stopped indexing
altogether), a POSIX class (``[[:alpha:]]``) becomes a nested set (a ``FutureWarning`` printed
with source lines, and other characters matched), ``\\`` inside brackets is not an escape. Git
instead:

* matches the first character of a reversed range (it is read as a literal before the ``-``);
* knows the classes ``alnum alpha blank cntrl digit graph lower print punct space upper xdigit``;
* never matches with a pattern holding an unknown class or a bracket left open (``WM_ABORT_ALL``):
  such a line is inert, and Probe skips it (saying so) rather than guessing;
* never matches ``/`` with a bracket.

``split_brackets`` replaces each bracket by a placeholder character pathspec treats as a literal,
and gives the regex class to put in its place in pathspec's regex.
"""
from __future__ import annotations

import re

from ..errors import ProbeError

# Supplementary private-use characters: never in a real ignore line (one that holds them is skipped)
_PLACEHOLDER_BASE = 0xF0000
_PLACEHOLDERS = re.compile("[\U000F0000-\U000FFFFD]")

_CLASSES = {
    "alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f", "digit": "0-9",
    "graph": "!-~", "lower": "a-z", "print": " -~", "punct": "!-/:-@\\[-`{-~", "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z", "xdigit": "0-9a-fA-F",
}


class InertPattern(ProbeError, ValueError):
    """A line git accepts but can never match with; the message says why."""


def split_brackets(body: str) -> tuple[str, dict[str, str]]:
    """``body`` with each bracket expression replaced by a placeholder, and placeholder → regex.

    Raises ``InertPattern`` when git would never match with this line.
    """
    if _PLACEHOLDERS.search(body):
        raise InertPattern("it holds private-use characters Probe reserves")
    out: list[str] = []
    classes: dict[str, str] = {}
    i = 0
    while i < len(body):
        char = body[i]
        if char == "\\" and i + 1 < len(body):
            out.append(body[i:i + 2])
            i += 2
        elif char == "[":
            regex, i = _bracket(body, i + 1)
            placeholder = chr(_PLACEHOLDER_BASE + len(classes))
            classes[placeholder] = regex
            out.append(placeholder)
        else:
            out.append(char)
            i += 1
    return "".join(out), classes


def _bracket(body: str, i: int) -> tuple[str, int]:
    """The regex for the bracket whose ``[`` ends just before ``i``, and the index after its ``]``
    (wildmatch's loop: the first character, even ``]``, is a member)."""
    negated = i < len(body) and body[i] in "!^"
    i += negated
    items: list[str] = []
    prev: str | None = None
    first = True
    while True:
        if i >= len(body):
            raise InertPattern("a '[' is never closed")
        char = body[i]
        if char == "]" and not first:
            break
        first = False
        if char == "\\":
            if i + 1 >= len(body):
                raise InertPattern("it ends with a '\\' inside brackets")
            prev = body[i + 1]
            items.append(re.escape(prev))
            i += 2
        elif char == "-" and prev is not None and i + 1 < len(body) and body[i + 1] != "]":
            end, i = body[i + 1], i + 2
            if end == "\\":
                if i >= len(body):
                    raise InertPattern("it ends with a '\\' inside brackets")
                end, i = body[i], i + 1
            if end >= prev:  # a reversed range adds nothing: its first character is already in
                items[-1] = f"{re.escape(prev)}-{re.escape(end)}"
            prev = None
        elif char == "[" and body[i + 1:i + 2] == ":":
            close = body.find("]", i + 2)
            if close < 0:
                raise InertPattern("a '[' is never closed")
            if close - (i + 2) < 1 or body[close - 1] != ":":  # no ":]": a literal '['
                prev = "["
                items.append("\\[")
                i += 1
                continue
            name = body[i + 2:close - 1]
            if name not in _CLASSES:
                raise InertPattern(f"git knows no character class [:{name}:]")
            items.append(_CLASSES[name])
            prev = None
            i = close + 1
        else:
            prev = char
            items.append(re.escape(char))
            i += 1
    members = "".join(items)
    return (f"[^/{members}]" if negated else f"(?!/)[{members}]"), i + 1


def fill_brackets(regex: str, classes: dict[str, str]) -> str:
    """pathspec's regex with each placeholder replaced by its class."""
    for placeholder, cls in classes.items():
        regex = regex.replace(placeholder, cls)
    return regex
