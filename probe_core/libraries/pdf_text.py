"""A PDF's text layer as Markdown-ish text: what a library indexes and shows for a ``.pdf``.

``pypdf`` extracts each page's text (``page.extract_text()``, in the order pypdf gives it: the
content stream's order, which is usually but not always the reading order). Pages are joined under
``## Page N`` headings, so the Markdown chunker cuts a document by page and the line numbers of
search results and ``open_file`` are those of this text.

There is no OCR: a scanned PDF without a text layer has nothing to index and is reported, like an
encrypted or unreadable one, with a ``PdfTextError`` whose message starts with ``pdf:`` (the
indexer records it as the file's ``last_error``; the rest of the library indexes normally).
"""
from __future__ import annotations

import io
import logging
import re

from ..errors import ProbeError

# pypdf logs each oddity it repairs or gives up on (``EOF marker not found``) as a warning; the
# reason a document cannot be read comes back in ``PdfTextError`` instead, one line per file
logging.getLogger("pypdf").setLevel(logging.ERROR)

# Characters ``str.splitlines`` breaks on besides \n: normalized so that the chunker, the kept text
# and ``open_file`` agree on line numbers.
_LINE_BREAKS = re.compile("\r\n|[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


class PdfTextError(ProbeError, ValueError):
    """A PDF with no text Probe can index; the message says why (``pdf: ...``)."""


def _clean(text: str) -> str:
    lines = [line.rstrip() for line in _LINE_BREAKS.sub("\n", text.replace("\0", "")).split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def pdf_to_text(data: bytes) -> str:
    """The text of every page of the PDF ``data``, each under ``## Page N``.

    Raises ``PdfTextError``: ``pdf: cannot read: ...`` (not a PDF, damaged), ``pdf: encrypted ...``
    (needs a password), ``pdf: no extractable text ...`` (no text layer on any page).
    """
    from pypdf import PasswordType, PdfReader  # imported here: only libraries with PDFs pay for it
    from pypdf.errors import DependencyError

    try:
        reader = PdfReader(io.BytesIO(data))
        # many PDFs are encrypted only to restrict printing or copying, with an empty user password
        if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
            raise PdfTextError("pdf: encrypted: it needs a password to open")
        pages = list(reader.pages)
    except PdfTextError:
        raise
    except DependencyError as exc:
        raise PdfTextError(f"pdf: encrypted with a cipher this install cannot decrypt: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - pypdf raises many kinds on damaged files
        raise PdfTextError(f"pdf: cannot read: {str(exc) or type(exc).__name__}") from exc
    parts: list[str] = []
    found = False
    first_error: str | None = None
    for number, page in enumerate(pages, 1):
        try:
            text = _clean(page.extract_text() or "")
        except Exception as exc:  # noqa: BLE001 - one damaged page must not lose the others
            first_error = first_error or f"page {number}: {str(exc) or type(exc).__name__}"
            text = ""
        found = found or bool(text.strip())
        parts.append(f"## Page {number}\n\n{text}" if text else f"## Page {number}")
    if not found:
        if first_error:
            raise PdfTextError(f"pdf: cannot read: {first_error}")
        raise PdfTextError(f"pdf: no extractable text in {len(pages)} page(s) "
                           "(no text layer: scanned pages would need OCR, which Probe does not do)")
    return "\n\n".join(parts) + "\n"
