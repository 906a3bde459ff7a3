"""`probe library add|list|index|remove` and `probe search --include-libraries` as a user runs them."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PROBE = [sys.executable, "-m", "probe_cli"]


def probe(*args, cwd=None):
    return subprocess.run([*PROBE, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def _data() -> Path:
    return Path(os.environ["PROBE_DATA_DIR"])


def test_bad_input_is_one_line_and_writes_nothing(tmp_path):
    for args, needle in ((["library", "add", str(tmp_path / "missing"), "--name", "docs"], "no such folder"),
                         (["library", "add", str(tmp_path), "--name", "Docs!"], "invalid library name"),
                         (["library", "remove", "nope"], "unknown library 'nope'"),
                         (["library", "index", "nope"], "unknown library 'nope'")):
        r = probe(*args)
        assert r.returncode == 1, r
        assert r.stderr.startswith("probe: error: ") and needle in r.stderr and r.stderr.count("\n") == 1
    assert not (_data() / "libraries.json").exists() and not (_data() / "libraries").exists()


def test_add_list_search_remove(repo, tmp_path):
    docs = tmp_path / "handbook"
    docs.mkdir()
    (docs / "oncall.md").write_text("# On-call\n\nPage the secondary after 15 minutes without an acknowledgement.\n")
    (docs / "escalation.html").write_text("<h1>Escalation</h1><p>Severity one incidents wake the director.</p>")

    r = probe("library", "add", str(docs), "--name", "handbook", "--mode", "incremental")
    assert r.returncode == 0, r.stderr
    assert "added library handbook" in r.stdout and "indexed library handbook: 2 files" in r.stdout
    [lib] = json.loads(probe("library", "list", "--json").stdout)["libraries"]
    assert (lib["name"], lib["mode"], lib["files"]) == ("handbook", "incremental", 2)
    assert lib["chunks_embedded"] == lib["chunks"] > 0
    assert "handbook" in probe("library", "list").stdout

    assert probe("index", "--root", str(repo), "-q").returncode == 0
    r = probe("search", "who gets paged when nobody acknowledges", "--root", str(repo), "--include-libraries",
              "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    libs = [x for x in out["results"] if x["collection"] == "libraries"]
    assert libs[0]["source"].startswith("library:handbook/oncall.md#L")
    assert any(x["collection"] == "project" for x in out["results"])
    plain = json.loads(probe("search", "who gets paged", "--root", str(repo), "--json").stdout)
    assert {x["collection"] for x in plain["results"]} == {"project"}

    r = probe("library", "remove", "handbook")
    assert r.returncode == 0 and "untouched" in r.stdout
    assert json.loads(probe("library", "list", "--json").stdout) == {"libraries": []}
    assert sorted(os.listdir(docs)) == ["escalation.html", "oncall.md"]
    assert not (_data() / "libraries" / "handbook").exists()


def test_a_broken_pdf_is_one_warning_counted_everywhere(repo, tmp_path):
    """A PDF pypdf cannot read: no traceback, one warning line, counted as failed (not "unchanged")
    in `library add`/`index`, `library list` and `status`."""
    docs = tmp_path / "manuals"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\nRotate the signing keys every ninety days.\n")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\ngarbage")

    r = probe("library", "add", str(docs), "--name", "manuals")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "pypdf" not in r.stderr
    warnings = [ln for ln in r.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1 and "broken.pdf" in warnings[0] and "pdf: cannot read" in warnings[0]
    assert "1 files (" in r.stdout and "1 failed" in r.stdout

    again = probe("library", "index", "manuals")
    assert again.returncode == 0 and "Traceback" not in again.stderr
    assert "1 unchanged" in again.stdout and "1 failed" in again.stdout  # the PDF is not "unchanged"

    [lib] = json.loads(probe("library", "list", "--json").stdout)["libraries"]
    assert (lib["files"], lib["files_failed"]) == (1, 1)
    assert lib["failures"][0]["path"] == "broken.pdf" and lib["failures"][0]["error"].startswith("pdf: cannot read")
    listed = probe("library", "list")
    assert "failed" in listed.stdout and "manuals/broken.pdf" in listed.stderr

    probe("index", "--root", str(repo), "-q")
    st = json.loads(probe("status", "--root", str(repo), "--json").stdout)
    assert {"name": "manuals", "files": 1, "files_failed": 1}.items() <= st["libraries"][0].items()
    assert "library manuals" in probe("status", "--root", str(repo)).stdout
