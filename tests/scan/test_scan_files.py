"""scan_files and scan_path: what gets indexed, what is skipped and why, and how fast."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from probe_core.records import ScannedFile, SkippedFile
from probe_core.scan import (
    BINARY_SNIFF_BYTES,
    DEFAULT_MAX_FILE_BYTES,
    IgnoreRules,
    ScanResult,
    read_text,
    scan_files,
    scan_path,
)


def paths(result: ScanResult) -> list[str]:
    return [scanned.path for scanned in result.files]


def reasons(result: ScanResult) -> dict[str, str]:
    return {skipped.path: skipped.reason for skipped in result.skipped}


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the root, with a file in it: a symlink target outside the root."""
    target = tmp_path / "outside"
    target.mkdir()
    (target / "secret.txt").write_text("not yours")
    return target


def test_paths_are_posix_relative_sorted_and_carry_size_and_mtime(make_tree):
    root = make_tree({"b.py": "12345", "a/z.py": "x", "a/b/c.py": "x", "A.md": "x"})
    result = scan_files(root)
    assert paths(result) == ["A.md", "a/b/c.py", "a/z.py", "b.py"]
    b = result.files[-1]
    info = (root / "b.py").stat()
    assert b == ScannedFile(path="b.py", size=5, mtime_ns=info.st_mtime_ns, ctime_ns=info.st_ctime_ns,
                            inode=info.st_ino, dev=info.st_dev)
    assert result.skipped == []


def test_accepts_a_string_root_and_a_symlinked_root(make_tree, tmp_path):
    root = make_tree({"a.py": "x"})
    link = tmp_path / "root-link"
    link.symlink_to(root, target_is_directory=True)
    assert paths(scan_files(str(root))) == ["a.py"]
    assert paths(scan_files(link)) == ["a.py"]


def test_root_that_is_not_a_directory_raises(tmp_path):
    with pytest.raises(NotADirectoryError):
        scan_files(tmp_path / "nope")


def test_binary_detected_by_nul_byte_in_first_8_kb(make_tree):
    root = make_tree(
        {
            "blob.dat": b"header\x00\x01\x02",
            "late_nul.txt": b"a" * BINARY_SNIFF_BYTES + b"\x00",
            "utf16.txt": "hi".encode("utf-16"),
            "latin1.txt": "caf\xe9".encode("latin-1"),
        }
    )
    result = scan_files(root)
    assert reasons(result) == {"blob.dat": "binary", "utf16.txt": "binary"}
    assert paths(result) == ["late_nul.txt", "latin1.txt"]


def test_file_over_the_size_cap_is_skipped_as_too_large(make_tree):
    root = make_tree({"small.py": "x = 1\n"})
    (root / "huge.sql").write_bytes(b"insert into t values (1);\n" * (5_000_000 // 26 + 1))
    assert (root / "huge.sql").stat().st_size > 5_000_000
    result = scan_files(root)
    assert reasons(result) == {"huge.sql": "too_large"}
    assert paths(result) == ["small.py"]
    assert DEFAULT_MAX_FILE_BYTES == 1_000_000


def test_size_cap_is_configurable_and_inclusive(make_tree):
    root = make_tree({"ten.txt": "x" * 10, "eleven.txt": "x" * 11})
    result = scan_files(root, max_file_bytes=10)
    assert paths(result) == ["ten.txt"]
    assert reasons(result) == {"eleven.txt": "too_large"}


def test_empty_files_are_included(make_tree):
    root = make_tree({"pkg/__init__.py": ""})
    assert scan_files(root).files == [
        ScannedFile.from_stat("pkg/__init__.py", (root / "pkg/__init__.py").stat())
    ]


def test_symlinks_pointing_outside_the_root_are_skipped(make_tree, outside):
    root = make_tree({"main.py": "x"})
    (root / "leak.txt").symlink_to(outside / "secret.txt")
    (root / "leakdir").symlink_to(outside, target_is_directory=True)
    (root / "gone").symlink_to(outside / "missing.txt")  # dangling, and outside anyway
    result = scan_files(root)
    assert paths(result) == ["main.py"]
    assert reasons(result) == {
        "gone": "symlink_outside_root",
        "leak.txt": "symlink_outside_root",
        "leakdir": "symlink_outside_root",
    }


def test_symlinks_inside_the_root_follow_files_but_not_directories(make_tree):
    root = make_tree({"src/real.py": "print(1)\n"})
    (root / "alias.py").symlink_to(root / "src" / "real.py")
    (root / "relative.py").symlink_to(Path("src") / "real.py")
    (root / "src_again").symlink_to(root / "src", target_is_directory=True)
    (root / "src" / "loop").symlink_to(root, target_is_directory=True)
    result = scan_files(root)
    assert paths(result) == ["alias.py", "relative.py", "src/real.py"]
    assert result.files[0].size == len("print(1)\n")
    assert reasons(result) == {"src/loop": "symlink_dir", "src_again": "symlink_dir"}


def test_broken_symlink_and_symlink_loop_are_skipped_not_fatal(make_tree):
    root = make_tree({"ok.py": "x"})
    (root / "dangling.py").symlink_to(root / "deleted.py")  # a file deleted after listing
    (root / "loop_a").symlink_to(root / "loop_b")
    (root / "loop_b").symlink_to(root / "loop_a")
    result = scan_files(root)
    assert paths(result) == ["ok.py"]
    assert reasons(result) == {
        "dangling.py": "missing",
        "loop_a": "unreadable",
        "loop_b": "unreadable",
    }


def test_fifo_is_skipped_without_blocking(make_tree):
    root = make_tree({"ok.py": "x"})
    os.mkfifo(root / "pipe")
    result = scan_files(root)
    assert paths(result) == ["ok.py"]
    assert reasons(result) == {"pipe": "not_regular_file"}


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files regardless of permissions")
def test_unreadable_file_and_directory_are_skipped(make_tree):
    root = make_tree({"ok.py": "x", "locked.py": "x", "private/inner.py": "x"})
    (root / "locked.py").chmod(0)
    (root / "private").chmod(0)
    try:
        result = scan_files(root)
    finally:
        (root / "locked.py").chmod(0o644)
        (root / "private").chmod(0o755)
    assert paths(result) == ["ok.py"]
    assert reasons(result) == {"locked.py": "unreadable", "private": "unreadable"}


def test_non_utf8_names_are_skipped_with_a_printable_path(make_tree):
    root = make_tree({"ok.py": "x"})
    root_bytes = os.fsencode(root)
    with open(root_bytes + b"/caf\xe9.py", "wb") as handle:
        handle.write(b"x = 1\n")
    os.mkdir(root_bytes + b"/dir\xff")
    with open(root_bytes + b"/dir\xff/inner.py", "wb") as handle:
        handle.write(b"x = 1\n")
    result = scan_files(root)
    assert paths(result) == ["ok.py"]
    assert reasons(result) == {"caf\ufffd.py": "undecodable_name", "dir\ufffd": "undecodable_name"}
    for skipped in result.skipped:
        skipped.path.encode("utf-8")  # safe to print, serialise, hash


def test_scan_of_a_2k_file_100k_line_repository_lists_every_file(make_tree):
    """Speed is measured in bench/, not asserted here; this checks the large-tree walk is complete."""
    body = "".join(f"value_{i} = compute({i})  # line {i}\n" for i in range(50))
    files: dict[str, str | bytes] = {
        f"pkg{i % 20}/sub{i % 7}/module_{i}.py": body for i in range(2000)
    }
    files[".gitignore"] = "*.log\nbuild/\n/dist\n*.tmp\n!keep.tmp\n" * 10
    root = make_tree(files)
    result = scan_files(root)
    assert len(result.files) == 2001


def test_scan_path_gives_the_scanners_verdict_for_one_path(make_tree, outside):
    root = make_tree(
        {
            ".gitignore": "gen/\n",
            "src/app.py": "x",
            "gen/out.py": "x",
            "blob.dat": b"\x00\x01",
            "node_modules/x/i.js": "x",
        }
    )
    (root / "leakdir").symlink_to(outside, target_is_directory=True)
    (root / "src_again").symlink_to(root / "src", target_is_directory=True)
    rules = IgnoreRules(root)
    app = scan_path(rules, "src/app.py")
    assert isinstance(app, ScannedFile) and app.path == "src/app.py"
    assert scan_path(rules, "./src//app.py") == app
    assert scan_path(rules, "gen/out.py") is None
    assert scan_path(rules, "node_modules/x/i.js") is None
    assert scan_path(rules, "src") is None
    assert scan_path(rules, "blob.dat") == SkippedFile("blob.dat", "binary")
    assert scan_path(rules, "src/deleted.py") == SkippedFile("src/deleted.py", "missing")
    assert scan_path(rules, "leakdir/secret.txt") == SkippedFile(
        "leakdir/secret.txt", "symlink_outside_root"
    )
    assert scan_path(rules, "src_again/app.py") == SkippedFile("src_again/app.py", "symlink_dir")
    assert scan_path(rules, "big.txt", max_file_bytes=0) == SkippedFile("big.txt", "missing")
    with pytest.raises(ValueError):
        scan_path(rules, "../outside/secret.txt")
    # every verdict of a full scan is reproduced path by path
    full = scan_files(root, rules=rules)
    for scanned in full.files:
        assert scan_path(rules, scanned.path) == scanned
    for skipped in full.skipped:
        assert scan_path(rules, skipped.path) == skipped


def test_scanned_files_are_readable_as_text(make_tree):
    root = make_tree({"a.py": "x = 'é'\n", "b.txt": b"bad \xff\xfe bytes\n"})
    for scanned in scan_files(root).files:
        assert isinstance(read_text(root, scanned.path), str)
