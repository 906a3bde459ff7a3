"""The values of search filters, checked and normalized before they reach the store.

A filter value that can match nothing is a question answered with silence: ``Python`` (the payload
says ``python``), an unclosed ``[`` in a glob, a glob that gitignore syntax reads as a comment.
Here every value either becomes what the index stores or is a one-line ``ConfigError`` that says
what is accepted. Globs use gitignore syntax (``src/**``, ``*.py``, ``!`` only in excludes); shell
braces (``*.{py,go}``), which gitignore lacks but people type, are expanded.
"""
from __future__ import annotations

import re
import warnings

import pathspec

from ..chunking.languages import normalize_language
from ..errors import ConfigError

_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")


def clean_filter_value(key: str, values: list[str]) -> list[str]:
    """``values`` of filter ``key`` as the store matches them (languages, globs); others unchanged."""
    if key == "languages":
        return list(dict.fromkeys(normalize_language(v) for v in values))
    if key in ("include_globs", "exclude_globs"):
        return [g for value in values for g in check_glob(value, key)]
    return values


def expand_braces(glob: str) -> list[str]:
    """``*.{py,go}`` → ``*.py``, ``*.go`` (nested and repeated braces too)."""
    m = _BRACES.search(glob)
    if m is None:
        return [glob]
    head, tail = glob[:m.start()], glob[m.end():]
    return [g for alt in m[1].split(",") for g in expand_braces(head + alt + tail)]


def _unclosed_bracket(glob: str) -> bool:
    depth_open = False
    escaped = False
    for ch in glob:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "[":
            depth_open = True
        elif ch == "]":
            depth_open = False
    return depth_open


def check_glob(glob: str, key: str = "include_globs") -> list[str]:
    """One glob as the gitignore-style patterns it stands for; raises ``ConfigError`` when it could
    never match (empty, a comment, an unclosed ``[``, a negation among includes) or does not parse."""
    label = f"{key} glob {glob!r}"
    if not glob.strip():
        raise ConfigError(f"{key}: an empty glob matches nothing; give a pattern such as 'src/**' or '*.py'")
    if glob.lstrip().startswith("#"):
        raise ConfigError(f"{label} starts with '#', which gitignore syntax reads as a comment; write '\\#' "
                          "for a literal #")
    if glob.startswith("!") and key == "include_globs":
        raise ConfigError(f"{label}: a negated include matches nothing; exclude it instead "
                          "(--exclude / exclude_globs)")
    if _unclosed_bracket(glob):
        raise ConfigError(f"{label} has a '[' without its ']'; write '\\[' for a literal bracket")
    patterns = expand_braces(glob)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a nested set ("[[:alpha:]]") would match other characters
            pathspec.PathSpec.from_lines("gitignore", patterns)
    except (ValueError, re.error, FutureWarning) as exc:  # pathspec's own errors, and its regex's ("[z-a]")
        raise ConfigError(f"{label} is not a valid gitignore-style pattern ({exc})") from None
    return patterns
