"""PDF documents in a library: the text layer (pypdf) indexed page by page, snippets and
``open_file`` from the kept text, unreadable PDFs reported per file, the PDF size cap and the
scanner's ignore and symlink rules — and a project still leaves PDFs out. The PDFs are written by
hand in the test (Helvetica text objects, a Flate content stream, xref offsets computed here)."""
from __future__ import annotations

import io
import os
import sqlite3
import zlib
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter

from probe_core.indexing.indexer import index_workspace
from probe_core.libraries import add_library, open_document, registry
from probe_core.libraries import workspace as library_workspace
from probe_core.libraries.pdf_text import PdfTextError, pdf_to_text
from probe_core.libraries.search import library_search
from probe_core.scan import scan_files
from probe_core.workspace import Workspace

MANUAL = [
    ["Connection pools", "A pool hands out pooled sockets (and takes them back)."],
    ["The flux capacitor needs 1.21 gigawatts.", "Café crème costs 3 euros."],
]


def _escape(line: str) -> str:
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[list[str]]) -> bytes:
    """A PDF whose page ``k`` shows the lines ``pages[k]`` in Helvetica, one text line each."""
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    }
    kids, number = [], 4
    for lines in pages:
        page, content = number, number + 1
        number += 2
        kids.append(f"{page} 0 R")
        ops = "BT /F1 12 Tf 14 TL 72 720 Td " + " ".join(f"({_escape(x)}) Tj T*" for x in lines) + " ET"
        body = zlib.compress(ops.encode("cp1252"))
        objects[page] = (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]"
                         f" /Resources << /Font << /F1 3 0 R >> >> /Contents {content} 0 R >>").encode()
        objects[content] = (f"<< /Length {len(body)} /Filter /FlateDecode >>\nstream\n".encode()
                            + body + b"\nendstream")
    objects[2] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>".encode()
    objects[number] = b"<< /Length 16 >>\nstream\n" + bytes(16) + b"\nendstream"  # NUL bytes, like real PDFs
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for num in sorted(objects):
        offsets[num] = len(out)
        out += f"{num} 0 obj\n".encode() + objects[num] + b"\nendobj\n"
    xref, size = len(out), max(objects) + 1
    out += f"xref\n0 {size}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offsets[num]:010d} 00000 n \n".encode() for num in range(1, size))
    out += f"trailer\n<< /Size {size} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def encrypted(pdf: bytes, user_password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm="RC4-128")
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def blank_pdf() -> bytes:
    writer = PdfWriter()
    writer.add_blank_page(612, 792)
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def _open(name: str) -> Workspace:
    entry = registry.get(name)
    return Workspace.open(entry["path"], probe_dir=registry.index_dir(name))


def _errors(ws: Workspace) -> dict[str, str | None]:
    return {path: row.last_error for path, row in ws.manifest.files().items()}


@pytest.fixture
def folder(tmp_path) -> Path:
    root = tmp_path / "docs"
    (root / "manuals").mkdir(parents=True)
    (root / "guide.md").write_text("# Guide\n\nEviction uses an LRU policy.\n", "utf-8")
    (root / "manuals" / "flux.pdf").write_bytes(make_pdf(MANUAL))
    return root


def test_the_pdf_text_is_page_by_page():
    text = pdf_to_text(make_pdf([["alpha (one)"], [], ["gamma \\ three"]]))
    assert text == "## Page 1\n\nalpha (one)\n\n## Page 2\n\n## Page 3\n\ngamma \\ three\n"


@pytest.mark.parametrize("data, message", [
    (b"%PDF-1.4\n\x00 not really a pdf", "pdf: cannot read: "),
    (b"", "pdf: cannot read: "),
    (make_pdf(MANUAL)[:300], "pdf: cannot read: "),
    (encrypted(make_pdf(MANUAL), "secret"), "pdf: encrypted: it needs a password"),
    (blank_pdf(), "pdf: no extractable text in 1 page(s)"),
])
def test_unreadable_pdfs_raise_a_clear_error(data, message):
    with pytest.raises(PdfTextError) as caught:
        pdf_to_text(data)
    assert str(caught.value).startswith(message)


def test_an_owner_password_only_pdf_is_read():
    assert "flux capacitor" in pdf_to_text(encrypted(make_pdf(MANUAL), ""))


def test_a_two_page_pdf_is_searched_by_page_and_opened(folder):
    plain = scan_files(folder)  # a project's scan: .pdf is a default-ignored binary extension
    assert [f.path for f in plain.files] == ["guide.md"] and plain.skipped == []
    add_library(folder, "kb")
    ws = _open("kb")
    try:
        report = index_workspace(ws, dense=False)
        assert _errors(ws) == {"guide.md": None, "manuals/flux.pdf": None}
        assert report.files_indexed == 2 and report.files_skipped == 0
        out = library_search(ws, "flux capacitor gigawatts", top_k=3)
        top = out["results"][0]
        assert top["path"] == "library:kb/manuals/flux.pdf" and top["source"] == "library:kb/manuals/flux.pdf#L6-L9"
        assert top["snippet"] == "## Page 2\n\nThe flux capacitor needs 1.21 gigawatts.\nCafé crème costs 3 euros."
        page_one = library_search(ws, "pooled sockets", top_k=3)["results"][0]
        assert page_one["source"] == "library:kb/manuals/flux.pdf#L1-L4"
        assert page_one["snippet"].startswith("## Page 1\n\nConnection pools\n")
        opened = open_document(top["source"])
        assert opened["lines"] == ["## Page 2", "", "The flux capacitor needs 1.21 gigawatts.", "Café crème costs 3 euros."]
        assert (opened["start_line"], opened["total_lines"]) == (6, 9)
        assert opened["index_state"] == "current" and "PDF" in opened["message"]
        assert open_document("library:kb/manuals/flux.pdf", 1, 1)["lines"] == ["## Page 1"]
    finally:
        ws.close()


def test_unreadable_pdfs_get_a_last_error_and_the_rest_indexes(folder):
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\n\x00\x01 truncated garbage")
    (folder / "locked.pdf").write_bytes(encrypted(make_pdf(MANUAL), "secret"))
    (folder / "scan.pdf").write_bytes(blank_pdf())
    add_library(folder, "kb")
    ws = _open("kb")
    try:
        report = index_workspace(ws, dense=False)
        errors = _errors(ws)
        assert errors["guide.md"] is None and errors["manuals/flux.pdf"] is None
        assert "pdf: cannot read: " in errors["broken.pdf"]
        assert "pdf: encrypted: it needs a password" in errors["locked.pdf"]
        assert "pdf: no extractable text" in errors["scan.pdf"]
        assert report.files_failed == 3 and report.files_indexed == 2
        assert {p for p, _ in report.errors} >= {"broken.pdf", "locked.pdf", "scan.pdf"}
        paths = {r["path"] for r in library_search(ws, "flux capacitor lru eviction", top_k=10)["results"]}
        assert paths == {"library:kb/manuals/flux.pdf", "library:kb/guide.md"}
        with pytest.raises(Exception, match="no such document"):
            open_document("library:kb/locked.pdf")
        # unchanged, a failed file is not retried; once fixed it indexes and its error is gone
        assert index_workspace(ws, dense=False).files_indexed == 0
        (folder / "locked.pdf").write_bytes(make_pdf([["Unlocked now: the warp core manual."]]))
        assert index_workspace(ws, dense=False).files_indexed == 1
        assert _errors(ws)["locked.pdf"] is None
        assert library_search(ws, "warp core")["results"][0]["path"] == "library:kb/locked.pdf"
    finally:
        ws.close()


def test_a_pdf_is_redone_when_its_bytes_change(folder):
    add_library(folder, "kb")
    ws = _open("kb")
    pdf = folder / "manuals" / "flux.pdf"
    try:
        index_workspace(ws, dense=False)
        first_hash = ws.manifest.files()["manuals/flux.pdf"].file_hash
        os.utime(pdf, ns=(pdf.stat().st_atime_ns, pdf.stat().st_mtime_ns + 5_000_000_000))
        touched = index_workspace(ws, dense=False)
        assert touched.files_indexed == 0 and touched.files_unchanged == 2  # same bytes: same hash
        pdf.write_bytes(make_pdf([MANUAL[0], ["The time circuits need plutonium."]]))
        edited = index_workspace(ws, dense=False)
        assert edited.files_indexed == 1 and ws.manifest.files()["manuals/flux.pdf"].file_hash != first_hash
        [hit] = [r for r in library_search(ws, "time circuits plutonium")["results"] if "flux.pdf" in r["path"]]
        assert hit["snippet"] == "## Page 2\n\nThe time circuits need plutonium."
        assert not [r for r in library_search(ws, "gigawatts")["results"] if "flux.pdf" in r["path"]]
        assert open_document(hit["source"])["index_state"] == "current"
        db = sqlite3.connect(ws.probe_dir / "manifest.sqlite")
        assert db.execute("SELECT COUNT(*) FROM library_texts WHERE path='manuals/flux.pdf'").fetchone()[0] == 1
        db.close()
        pdf.write_bytes(make_pdf([["Replaced on disk, not yet indexed."]]))
        assert open_document(hit["source"])["index_state"] == "stale"
    finally:
        ws.close()


def test_pdf_size_cap_ignore_rules_and_symlinks(folder, tmp_path, monkeypatch):
    small = make_pdf([["A small booklet about quokkas."]])
    big = make_pdf([[f"Chapter {k} about wombats."] for k in range(40)])
    (folder / "small.pdf").write_bytes(small)
    (folder / "big.pdf").write_bytes(big)
    (folder / "private").mkdir()
    (folder / "private" / "secret.pdf").write_bytes(make_pdf([["Confidential quokka plans."]]))
    (folder / ".probeignore").write_text("private/\n", "utf-8")
    (folder / "draft-1.pdf").write_bytes(make_pdf([["Draft quokka notes."]]))
    (folder / ".gitignore").write_text("draft-*.pdf\n", "utf-8")
    outside = tmp_path / "outside.pdf"
    outside.write_bytes(make_pdf([["Outside the library: quokka."]]))
    (folder / "outside-link.pdf").symlink_to(outside)
    (folder / "inside-link.pdf").symlink_to(folder / "small.pdf")
    monkeypatch.setattr(library_workspace, "PDF_MAX_BYTES", (len(small) + len(big)) // 2)
    add_library(folder, "kb")
    ws = _open("kb")
    try:
        ws.config.max_file_bytes = 200  # every PDF is over the text cap: the PDF cap decides
        scan = ws.library.scan(folder, max_file_bytes=200)
        pdfs = ["inside-link.pdf", "manuals/flux.pdf", "small.pdf"]
        assert [f.path for f in scan.files if f.path.endswith(".pdf")] == pdfs
        assert {s.path: s.reason for s in scan.skipped} == {"big.pdf": "too_large", "outside-link.pdf": "symlink_outside_root"}
        report = index_workspace(ws, dense=False)
        assert sorted(_errors(ws)) == ["guide.md", *pdfs]
        assert report.files_skipped == 2
        paths = {r["path"] for r in library_search(ws, "booklet quokkas wombats", top_k=10)["results"]}
        assert paths == {"library:kb/small.pdf", "library:kb/inside-link.pdf"}
    finally:
        ws.close()


def test_a_project_still_leaves_pdfs_out(folder):
    (folder / "tool.py").write_text("def flux():\n    return 'capacitor'\n", "utf-8")
    ws = Workspace.open(folder)
    try:
        assert ws.library is None
        report = index_workspace(ws, dense=False)
        assert sorted(ws.manifest.file_paths()) == ["guide.md", "tool.py"]
        assert report.files_seen == 2 and report.files_skipped == 0  # ignored by extension, not even sniffed
    finally:
        ws.close()
