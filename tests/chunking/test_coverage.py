"""Invariants over real files: this repository and a sample of the installed packages.

Every non-blank line in some chunk, exact line numbers and text, bounded chunk size.
"""
from __future__ import annotations

import os
import sysconfig
import time
from pathlib import Path

import pytest

from probe_core.chunking import chunk_file, language_for_path

from .chunk_checks import check_invariants

REPO_ROOT = Path(__file__).resolve().parents[2]
_SKIP_DIRS = {".git", ".venv", "node_modules", "__pycache__", ".probe", ".pytest_cache"}
_MAX_BYTES = 1_000_000


def _text_files(root: Path) -> list[Path]:
    found = []
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            path = Path(directory, name)
            if path.is_symlink():
                continue
            try:
                if path.stat().st_size > _MAX_BYTES:
                    continue
            except OSError:
                continue
            found.append(path)
    return found


def _read_text(path: Path) -> str | None:
    raw = path.read_bytes()
    if b"\x00" in raw[:8192]:
        return None  # binary: the scanner never sends these
    return raw.decode("utf-8", "surrogateescape")


def _sample_site_packages(limit: int) -> list[Path]:
    """An even spread of the venv's files, weighted to the languages with grammars."""
    site = Path(sysconfig.get_paths()["purelib"])
    files = [p for p in _text_files(site) if language_for_path(p.name) is not None]
    step = max(1, len(files) // limit)
    return files[::step][:limit]


def _check_files(root: Path, files: list[Path]) -> int:
    lines = 0
    for path in files:
        text = _read_text(path)
        if text is None:
            continue
        relative = path.relative_to(root).as_posix()
        chunks = chunk_file(relative, text)
        try:
            check_invariants(text, chunks)
        except AssertionError as failure:
            raise AssertionError(f"{relative}: {failure}") from None
        assert all(c.path == relative for c in chunks)
        lines += len(text.splitlines())
    return lines


def test_every_line_of_this_repository_is_covered() -> None:
    files = _text_files(REPO_ROOT)
    assert files
    _check_files(REPO_ROOT, files)


def test_every_line_of_installed_packages_is_covered() -> None:
    site = Path(sysconfig.get_paths()["purelib"])
    files = _sample_site_packages(limit=600)
    if not files:
        pytest.skip("no site-packages to sample")
    started = time.perf_counter()
    lines = _check_files(site, files)
    elapsed = time.perf_counter() - started
    assert lines > 10_000
    # generous bound (checks included): chunking itself runs at ~100k lines/s
    assert elapsed < 30, f"{lines} lines took {elapsed:.1f}s"
