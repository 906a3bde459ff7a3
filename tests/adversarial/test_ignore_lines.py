"""An ignore line git accepts never stops indexing. ``[z-a]*`` was "internal error: bad character
range" and 0 files indexed; ``[[:alpha:]*`` printed FutureWarning source lines and ignored files git
keeps. Now a line git can never match with is skipped with a warning naming its file and line, and
the rest follow git's reading: random bracket-heavy patterns are compared with ``git check-ignore``.
"""
from __future__ import annotations

import json
import random
import subprocess
import warnings

from probe_core.scan import IgnoreRules, scan_files

from .conftest import probe_cli, tally, write_tree

GITIGNORE = "*.log\n[z-a]*\n[[:alpha:]*\n[[:digit:]]*.txt\n[!]x\n"


def _git_untracked(root) -> set[str]:
    out = subprocess.run(["git", "-C", str(root), "ls-files", "--others", "--exclude-standard", "-z"],
                         capture_output=True, text=True, check=True).stdout
    return {p for p in out.split("\0") if p and not p.startswith(".probe/")}


def test_lines_git_accepts_never_stop_indexing(tmp_path):
    files = {".gitignore": GITIGNORE, "zeta.py": "def zeta_marker():\n    return 1\n",
             "alpha.py": "def alpha_marker():\n    return 2\n", "7days.txt": "seven\n", "notes.txt": "notes\n",
             "x": "x\n", "run.log": "log\n"}
    root = write_tree(tmp_path / "repo", files)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no FutureWarning from a nested set any more
        scanned = {f.path for f in scan_files(root).files}
    assert scanned == _git_untracked(root) == {".gitignore", "alpha.py", "notes.txt", "x"}

    out = probe_cli("index", "--lexical-only", "--json", root=root, env={"PROBE_DAEMON": "0"}, check=False)
    assert out.returncode == 0, out.stderr  # before: "internal error: bad character range", exit 70
    assert json.loads(out.stdout)["files_indexed"] == 4
    gitignore = str(root / ".gitignore")
    assert f"{gitignore}:3: ignore pattern '[[:alpha:]*' skipped: a '[' is never closed" in out.stderr
    assert f"{gitignore}:5: ignore pattern '[!]x' skipped" in out.stderr
    assert "FutureWarning" not in out.stderr and "Traceback" not in out.stderr and "re.compile" not in out.stderr
    found = json.loads(probe_cli("search", "alpha_marker", "--json", root=root, env={"PROBE_DAEMON": "0"}).stdout)
    assert "alpha.py" in [r["path"] for r in found["results"]]
    tally("ignore_lines.cli_cases", 5)


_TOKENS = ["[", "]", "!", "^", "-", "a", "b", "z", "Z", "0", "[:alpha:]", "[:digit:]", "[:upper:]", "[:foo:]",
           "*", "?", "\\", ":", "A"]
_NAME_CHARS = "abzAZ09-]![:^\\?*"


def test_random_bracket_patterns_match_git_check_ignore(tmp_path):
    """300 random patterns (one per directory's .gitignore) × up to 60 random names each, seeded:
    Probe's verdict equals ``git check-ignore``'s for every path."""
    rng = random.Random(20)
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    names = sorted({"".join(rng.choice(_NAME_CHARS) for _ in range(rng.randint(1, 4))) for _ in range(60)})
    patterns = []
    for k in range(300):
        pattern = "".join(rng.choice(_TOKENS) for _ in range(rng.randint(1, 6)))
        if pattern.startswith("#"):
            continue
        write_tree(root / f"d{k}", {".gitignore": pattern + "\n"})
        patterns.append((f"d{k}", pattern))
    paths = [f"{d}/{name}" for d, _ in patterns for name in names]
    out = subprocess.run(["git", "-C", str(root), "check-ignore", "-z", "--stdin", "--no-index"],
                         input="\0".join(paths) + "\0", capture_output=True, text=True, check=False)
    assert out.returncode in (0, 1), out.stderr
    git_ignored = set(filter(None, out.stdout.split("\0")))
    rules = IgnoreRules(root)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        differ = [(pattern, name) for d, pattern in patterns for name in names
                  if rules.matches(f"{d}/{name}", False) != (f"{d}/{name}" in git_ignored)]
    assert differ == [], differ[:10]
    assert len(git_ignored) > 300  # the patterns do match things
    tally("ignore_lines.git_check_ignore_paths", len(paths))


def test_search_globs_python_cannot_read_as_written_are_refused_in_one_line(tmp_path):
    """The same class in search filters: ``include_globs: ["[z-a]*"]`` was an internal error
    (``re.error``), ``[[:alpha:]]*`` printed a FutureWarning and matched other characters."""
    root = write_tree(tmp_path / "repo", {"a.py": "def alpha_marker():\n    return 1\n"})
    probe_cli("index", "--lexical-only", root=root, env={"PROBE_DAEMON": "0"})
    for glob in ("[z-a]*", "[[:alpha:]]*.py"):
        out = probe_cli("search", "alpha_marker", "--include", glob, root=root, env={"PROBE_DAEMON": "0"},
                        check=False)
        assert out.returncode == 1 and out.stderr.count("\n") == 1, out.stderr
        assert "is not a valid gitignore-style pattern" in out.stderr and "internal error" not in out.stderr
        assert "FutureWarning" not in out.stderr
        tally("ignore_lines.cli_cases")
