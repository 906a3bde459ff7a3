"""A small git history with a real index: the material of the evaluation tests."""
from __future__ import annotations

import subprocess

import pytest

from probe_core import Workspace, index_workspace
from probe_core.intel.build import ensure_graph


def write_tree(root, files):
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def git(root, *args):
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@x", "PATH": "/usr/bin:/bin"})


V1 = '''def parse(text):
    return text.split()


def render(items):
    return " ".join(items)
'''
V2 = '''def parse(text):
    """Split on whitespace, dropping empty pieces."""
    return [t for t in text.split() if t]


def render(items):
    return " ".join(items)
'''
V3 = '''import os


def helper():
    return os.sep


''' + V2


@pytest.fixture
def history(tmp_path):
    """parse() changed in commit 2; three lines added above it in commit 3; a test-only commit 4."""
    root = write_tree(tmp_path / "h", {"src/text.py": V1})
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Add a text parser and renderer")
    (root / "src/text.py").write_text(V2)
    git(root, "commit", "-qam", "Drop empty pieces when parsing whitespace separated text")
    (root / "src/text.py").write_text(V3)
    git(root, "commit", "-qam", "Add a path separator helper for callers")
    write_tree(root, {"tests/test_text.py":
                      "from src.text import parse\n\ndef test_parse():\n    assert parse('a') == ['a']\n"})
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Test that parsing keeps single words")
    ws = Workspace.open(root)
    index_workspace(ws)
    ensure_graph(ws)
    yield root, ws
    ws.close()


