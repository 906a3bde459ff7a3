"""Real directory trees in tmp_path for the scanner tests."""
from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Create ``files`` (posix relative path -> content) under ``root``."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", newline="")
    return root


@pytest.fixture
def make_tree(tmp_path: Path) -> Callable[[dict[str, str | bytes]], Path]:
    """Build a tree under a fresh ``repo/`` directory (tmp_path/outside stays free for
    targets outside the root)."""
    root = tmp_path / "repo"
    root.mkdir()
    return lambda files: write_tree(root, files)


@pytest.fixture
def git_init() -> Callable[[Path], None]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")

    def init(root: Path) -> None:
        subprocess.run(["git", "init", "-q", str(root)], check=True)

    return init

