"""resolve_inside_root and read_text: no way out of the root, no crash on bad bytes."""
from __future__ import annotations

from pathlib import Path

import pytest

from probe_core.errors import PathOutsideRoot, ProbeError
from probe_core.scan import read_text, resolve_inside_root


@pytest.fixture
def root(make_tree, tmp_path: Path) -> Path:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("not yours")
    return make_tree({"src/app.py": "print('hi')\n", "docs/readme.md": "# hi\n"})


@pytest.mark.parametrize(
    "rel",
    ["../outside/secret.txt", "src/../../outside/secret.txt", "..", "/etc/passwd", "a\0b"],
)
def test_paths_that_leave_the_root_are_refused(root, rel):
    with pytest.raises(PathOutsideRoot):
        resolve_inside_root(root, rel)
    with pytest.raises(ProbeError):
        read_text(root, rel)


def test_symlinks_pointing_out_are_refused(root, tmp_path):
    (root / "leakdir").symlink_to(tmp_path / "outside", target_is_directory=True)
    (root / "leak.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    (root / "src" / "up").symlink_to(Path("..") / ".." / "outside", target_is_directory=True)
    for rel in ["leakdir/secret.txt", "leakdir", "leak.txt", "src/up/secret.txt"]:
        with pytest.raises(PathOutsideRoot):
            resolve_inside_root(root, rel)
    with pytest.raises(PathOutsideRoot):
        read_text(root, "leakdir/secret.txt")


def test_paths_inside_the_root_resolve_to_real_paths(root):
    real_root = root.resolve()
    assert resolve_inside_root(root, "src/app.py") == real_root / "src" / "app.py"
    assert resolve_inside_root(root, "docs/../src/app.py") == real_root / "src" / "app.py"
    assert resolve_inside_root(root, "") == real_root
    assert resolve_inside_root(root, str(real_root / "src" / "app.py")) == real_root / "src/app.py"
    assert resolve_inside_root(root, "not/yet/created.py") == real_root / "not/yet/created.py"
    (root / "alias.py").symlink_to(root / "src" / "app.py")
    assert resolve_inside_root(root, "alias.py") == real_root / "src" / "app.py"


def test_a_root_that_is_itself_a_symlink_works(root, tmp_path):
    link = tmp_path / "link-to-root"
    link.symlink_to(root, target_is_directory=True)
    assert resolve_inside_root(link, "src/app.py") == root.resolve() / "src" / "app.py"
    assert read_text(link, "src/app.py") == "print('hi')\n"


def test_read_text_replaces_invalid_utf8_instead_of_failing(root):
    (root / "latin1.py").write_bytes(b"name = 'caf\xe9'\n# \xff\xfe\n")
    text = read_text(root, "latin1.py")
    assert text == "name = 'caf\ufffd'\n# \ufffd\ufffd\n"


def test_read_text_keeps_content_as_is(root):
    raw = "\ufeffline one\r\nline two\rline three\n\ttabbed  \n".encode("utf-8")
    (root / "crlf.txt").write_bytes(raw)
    text = read_text(root, "crlf.txt")
    assert text.encode("utf-8") == raw
    assert text.splitlines() == ["\ufeffline one", "line two", "line three", "\ttabbed  "]


def test_read_text_raises_oserror_for_missing_files_and_directories(root):
    with pytest.raises(FileNotFoundError):
        read_text(root, "src/nope.py")
    with pytest.raises(IsADirectoryError):
        read_text(root, "src")
