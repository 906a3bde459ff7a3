"""A repository that commits `.probe` (or something inside it) as a symbolic link must not make Probe
create, truncate, chmod or write anything where the link points: every verb refuses in one line
and the target is left exactly as it was."""
from __future__ import annotations

import os
import stat
import subprocess

import pytest

from .conftest import REPO_FILES, probe_cli, tally, write_tree

VERBS = [("index",), ("index", "--background"), ("search", "password"), ("status",), ("callers", "hash_password")]


def _snapshot(folder):
    return {p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else None, stat.S_IMODE(p.lstat().st_mode))
            for p in [folder, *sorted(folder.rglob("*"))]}


@pytest.mark.parametrize("planted", [".probe", ".probe/engine.lock", ".probe/logs", ".probe/manifest.sqlite"])
def test_a_planted_link_in_probe_dir_is_refused_and_nothing_is_touched(tmp_path, planted):
    root = write_tree(tmp_path / "repo", REPO_FILES)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    target = write_tree(tmp_path / "target", {"victim.txt": "the user's file\n", "config.json": "{}\n"})
    target.chmod(0o755)
    link = root / planted
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target / "victim.txt" if planted.endswith((".lock", ".sqlite")) else target)
    before = _snapshot(target)
    for verb in VERBS:
        out = probe_cli(*verb, root=root, check=False, env={"PROBE_DAEMON": "1"})
        assert out.returncode == 1, (verb, out.stdout, out.stderr)
        assert out.stderr.startswith("probe: error: ") and out.stderr.count("\n") == 1, (verb, out.stderr)
        assert "is a symbolic link" in out.stderr and "remove it" in out.stderr, (verb, out.stderr)
        tally("probe_dir_link_refusals")
    assert _snapshot(target) == before
    assert os.path.islink(link)  # refused, not "repaired" by deleting what the user may want to inspect
