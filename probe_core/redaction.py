"""Keeping credentials out of everything Probe says: messages, logs, status and files.

API keys (``QDRANT_API_KEY``, ``TEI_API_KEY``, ``RERANKER_API_KEY``, or the same keys in
``.probe/config.json``) and passwords in URLs (``http://user:secret@host``) reach Probe's messages
by routes no single place controls: a server error body that echoes the request's headers, an
``httpx`` error that quotes the full URL, a log line that formats an exception. So the sources that
show a URL show ``public_url`` (credentials dropped), and every edge that lets text out (the CLI's
error lines, MCP tool errors, ``index_status``'s last error, the doctor's lines, every log handler)
passes it through ``redact`` as well.
"""
from __future__ import annotations

import logging
import re
import threading
from urllib.parse import urlsplit, urlunsplit
from . import environment

KEY_VARIABLES = ("QDRANT_API_KEY", "TEI_API_KEY", "RERANKER_API_KEY")
MASK = "***"
_MIN_SECRET = 4  # shorter "keys" would mask ordinary words; no real key is that short
# Bounded repetitions keep the scan linear: an unbounded scheme pattern backtracked quadratically over
# a 1 MB argument echoed in an error (the adversarial suite caught it).
_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]{0,31}://)(?P<userinfo>[^/@\s'\"]{1,512})@")
_registered: set[str] = set()
_lock = threading.Lock()


def register_secret(value: str | None) -> None:
    """Treat ``value`` (a key read from a config file) as a secret from now on."""
    if value and len(value) >= _MIN_SECRET:
        with _lock:
            _registered.add(value)


def register_url_secrets(url: str | None) -> None:
    """Treat the password of ``url``'s ``user:password@`` as a secret from now on: a server may echo
    it on its own (a decoded Basic auth header), where no URL pattern would find it."""
    if not url or "@" not in url:
        return
    try:
        password = urlsplit(url).password
    except ValueError:
        return
    register_secret(password)


def _secrets() -> list[str]:
    found = {environment.get(name) or "" for name in KEY_VARIABLES}
    with _lock:
        found |= _registered
    return sorted((s for s in found if len(s) >= _MIN_SECRET), key=len, reverse=True)


def redact(text: str) -> str:
    """``text`` with every known key replaced by ``***`` and URL credentials dropped to ``***@``."""
    if not text:
        return text
    for secret in _secrets():
        text = text.replace(secret, MASK)
    return _USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)


def public_url(url: str | None) -> str | None:
    """A URL as Probe shows it: no ``user:password@``, no query string (tokens travel there too)."""
    if not url:
        return None
    if url.startswith("local:"):
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


class RedactingFilter(logging.Filter):
    """A log handler filter that redacts the formatted message (and any exception text) in place."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if cleaned != message or record.args:
            record.msg, record.args = cleaned, None
        return True
