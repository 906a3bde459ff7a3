"""`probe ... | grep`, `| head`, `> file`: plain text, nothing wrapped or cut at a width, no noise
when the reader leaves early (docs/ux-checklist.md, "piped output")."""
from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = [sys.executable, "-m", "probe_cli"]
LONG = "    return " + " + ".join(f"factor_{k}" for k in range(40))  # ~500 characters on one line


def probe(*args, cwd=None):
    return subprocess.run([*PROBE, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


@pytest.fixture
def indexed(repo):
    (repo / "src" / "wide.py").write_text(f"def wide_sum_of_factors():\n{LONG}\n")
    assert probe("index", "--root", str(repo), "-q", "--lexical-only").returncode == 0
    return repo


def test_search_piped_keeps_long_lines_whole(indexed):
    out = probe("search", "wide sum of factors", "--root", str(indexed), "--top-k", "3", "--include", "src/**")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    head = next(ln for ln in lines if "src/wide.py#L" in ln)
    assert "score" in head and "bm25#" in head  # the result's header is one line, not wrapped at 80
    assert any(ln.endswith(LONG) for ln in lines)  # the code line, whole, after its number
    assert "\x1b[" not in out.stdout  # no colour codes in a pipe
    assert all(ln == ln.rstrip() for ln in lines)  # no padding to a width


def test_status_and_library_list_piped_are_plain_lines(indexed, tmp_path):
    out = probe("status", "--root", str(indexed))
    lines = out.stdout.splitlines()
    store = next(ln for ln in lines if ln.startswith("store "))
    assert store.endswith(f"{indexed}/.probe/store/chunks_embedded")  # a long path, never wrapped
    assert all(ln == ln.rstrip() for ln in lines) and len(lines) >= 17

    deep = tmp_path / ("a-rather-long-folder-name-" * 4) / "handbook"
    deep.mkdir(parents=True)
    (deep / "x.md").write_text("# X\n\nText.\n")
    assert probe("library", "add", str(deep), "--name", "handbook", "-q").returncode == 0
    listed = probe("library", "list").stdout.splitlines()
    assert listed[0].split() == ["name", "kind", "mode", "files", "failed", "chunks", "embedded", "path"]
    assert listed[1].split()[-1] == str(deep.resolve()) and listed[1] == listed[1].rstrip()


@pytest.mark.parametrize("verb", [["map"], ["search", "password"], ["status"], ["callers", "hash_password"],
                                  ["library", "list"], ["workspaces"]])
def test_a_reader_that_leaves_early_is_not_an_error(indexed, verb):
    """`probe map | head -1`: the pipe is closed before Probe writes; no traceback, no
    "Exception ignored ... BrokenPipeError", exit status 0."""
    proc = subprocess.Popen([*PROBE, *verb, "--root", str(indexed)] if verb[0] not in ("library", "workspaces")
                            else [*PROBE, *verb], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=indexed)
    proc.stdout.close()  # the reader is gone before the first write
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and err.decode() == ""


def test_output_still_buffered_when_the_reader_leaves_is_dropped_quietly(indexed, monkeypatch):
    """The case behind `probe map | head -1` printing "Exception ignored ... BrokenPipeError": every
    print fits the buffer, and the reader is gone by the time it is flushed (at exit, before)."""
    import io
    import os

    from probe_cli.main import main

    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader left
    stream = io.TextIOWrapper(io.BufferedWriter(io.FileIO(write_end, "w"), buffer_size=1 << 20))
    monkeypatch.setattr(sys, "stdout", stream)
    try:
        assert main(["map", "--root", str(indexed)]) == 0
        stream.flush()  # what the interpreter does at exit: nothing is left to fail
    finally:
        monkeypatch.undo()
        stream.close()
