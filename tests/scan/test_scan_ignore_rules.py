"""Ignore rules: gitignore semantics, .git/info/exclude, .probeignore, built-in defaults."""
from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from probe_core.scan import IgnoreRules, ScanResult, is_ignored, scan_files


def paths(result: ScanResult) -> list[str]:
    return [scanned.path for scanned in result.files]


def test_nested_gitignore_negation_applies_relative_to_its_directory(make_tree):
    root = make_tree(
        {
            ".gitignore": "*.log\n",
            "top.log": "x",
            "keep.log": "x",
            "sub/.gitignore": "!keep.log\n",
            "sub/keep.log": "x",
            "sub/other.log": "x",
            "sub/deeper/keep.log": "x",
            "other/keep.log": "x",
        }
    )
    found = paths(scan_files(root))
    assert "sub/keep.log" in found
    assert "sub/deeper/keep.log" in found  # unanchored: applies below sub/ too
    assert "sub/other.log" not in found
    assert "keep.log" not in found and "top.log" not in found
    assert "other/keep.log" not in found


def test_deeper_gitignore_overrides_shallower(make_tree):
    root = make_tree(
        {
            ".gitignore": "!gen.py\n",
            "a/.gitignore": "gen.py\n",
            "a/gen.py": "x",
            "gen.py": "x",
        }
    )
    found = paths(scan_files(root))
    assert "gen.py" in found
    assert "a/gen.py" not in found


def test_anchored_versus_unanchored_patterns(make_tree):
    root = make_tree(
        {
            ".gitignore": "/only_root.txt\nanywhere.txt\ndocs/*.md\n",
            "only_root.txt": "x",
            "sub/only_root.txt": "x",
            "anywhere.txt": "x",
            "sub/anywhere.txt": "x",
            "docs/a.md": "x",
            "docs/deep/b.md": "x",  # a slash in the middle anchors and `*` stops at `/`
            "sub/docs/c.md": "x",
            "pkg/.gitignore": "/gen.py\n",
            "pkg/gen.py": "x",
            "pkg/inner/gen.py": "x",
            "gen.py": "x",
        }
    )
    found = paths(scan_files(root))
    assert "only_root.txt" not in found
    assert "sub/only_root.txt" in found
    assert "anywhere.txt" not in found and "sub/anywhere.txt" not in found
    assert "docs/a.md" not in found
    assert "docs/deep/b.md" in found
    assert "sub/docs/c.md" in found
    assert "pkg/gen.py" not in found  # anchored to pkg/, where its .gitignore lives
    assert "pkg/inner/gen.py" in found
    assert "gen.py" in found


def test_dir_only_patterns_do_not_match_files(make_tree):
    root = make_tree(
        {
            ".gitignore": "cache/\n",
            "cache/data.txt": "x",
            "src/cache/data.txt": "x",
            "src/cache_file/cache": "a file named cache",
        }
    )
    found = paths(scan_files(root))
    assert found == [".gitignore", "src/cache_file/cache"]


def test_file_inside_excluded_directory_cannot_be_reincluded(make_tree):
    # git: "It is not possible to re-include a file if a parent directory of that file is
    # excluded."
    root = make_tree({".gitignore": "logs/\n!logs/keep.txt\n", "logs/keep.txt": "x"})
    assert paths(scan_files(root)) == [".gitignore"]
    assert IgnoreRules(root).matches("logs/keep.txt", is_dir=False)


def test_ignored_directories_are_pruned_without_listing_them(make_tree, monkeypatch):
    root = make_tree(
        {
            ".gitignore": "generated/\n",
            "generated/a/b/c.py": "x",
            "node_modules/pkg/index.js": "x",
            "src/main.py": "x",
        }
    )
    listed: list[str] = []
    real_scandir = os.scandir

    def recording_scandir(path):  # the walk lists through a descriptor
        shown = os.readlink(f"/proc/self/fd/{path}") if isinstance(path, int) else path
        listed.append(os.path.relpath(shown, root))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", recording_scandir)
    assert paths(scan_files(root)) == [".gitignore", "src/main.py"]
    assert sorted(listed) == [".", "src"]


def test_git_info_exclude_is_honoured(make_tree, git_init):
    root = make_tree({"secret.txt": "x", "notes/todo.md": "x", "main.py": "x"})
    git_init(root)
    (root / ".git" / "info" / "exclude").write_text("secret.txt\nnotes/\n")
    assert paths(scan_files(root)) == ["main.py"]
    assert IgnoreRules(root).matches("notes/todo.md")


def test_gitignore_negation_beats_info_exclude(make_tree, git_init):
    root = make_tree({".gitignore": "!wanted.txt\n", "wanted.txt": "x"})
    git_init(root)
    (root / ".git" / "info" / "exclude").write_text("*.txt\n")
    assert paths(scan_files(root)) == [".gitignore", "wanted.txt"]


def test_info_exclude_of_a_worktree_is_read_from_the_common_git_dir(tmp_path, git_init):
    main = tmp_path / "main"
    main.mkdir()
    git_init(main)
    (main / "f.txt").write_text("x")
    git = ["git", "-C", str(main), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "f.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    worktree = tmp_path / "wt"
    subprocess.run([*git, "worktree", "add", "-q", str(worktree)], check=True)
    (main / ".git" / "info" / "exclude").write_text("local.txt\n")
    (worktree / "local.txt").write_text("x")
    assert (worktree / ".git").is_file()
    assert paths(scan_files(worktree)) == ["f.txt"]


def test_scan_agrees_with_git_on_a_tricky_tree(make_tree, git_init):
    """git itself is the oracle: the files it reports as not ignored are the ones we keep."""
    root = make_tree(
        {
            ".gitignore": (
                "# comment\n*.log\n!important.log\n/rootonly\nbuildx/\ndocs/**/draft*\n"
                "a/**/b/\n\\#hash.txt\nspace\\ \n*.tmp\n!keep/*.tmp\n"
            ),
            "important.log": "x",
            "debug.log": "x",
            "rootonly": "x",
            "sub/rootonly": "x",
            "buildx/out.txt": "x",
            "sub/buildx": "a file, not a dir",
            "docs/draft1.md": "x",
            "docs/x/y/draft2.md": "x",
            "docs/final.md": "x",
            "a/b/f.txt": "x",
            "a/x/y/b/f.txt": "x",
            "a/x/b.txt": "x",
            "#hash.txt": "x",
            "space ": "x",
            "c.tmp": "x",
            "keep/d.tmp": "x",
            "keep/deep/e.tmp": "x",
            "nested/.gitignore": "*\n!*/\n!*.py\n",
            "nested/code.py": "x",
            "nested/data.csv": "x",
            "nested/deep/more.py": "x",
            "nested/deep/more.txt": "x",
            "nested2/.gitignore": "/*\n!/keep/\n",
            "nested2/keep/k.py": "x",
            "nested2/drop/d.py": "x",
            "nested2/top.py": "x",
            "plain/readme.md": "x",
        }
    )
    git_init(root)
    (root / ".git" / "info" / "exclude").write_text("plain/readme.md\n")
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "--others", "--exclude-standard", "-z"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    expected = sorted(p for p in listed.split("\0") if p)
    assert paths(scan_files(root)) == expected
    rules = IgnoreRules(root)
    for rel in expected:
        assert not rules.matches(rel), rel
    every_file = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
    for rel in set(every_file) - set(expected):
        if not rel.startswith(".git/"):
            assert rules.matches(rel), rel


def test_probeignore_adds_rules_and_overrides_gitignore(make_tree):
    root = make_tree(
        {
            ".gitignore": "generated/\n",
            ".probeignore": "fixtures/\n!generated/\n",
            "generated/api.py": "x",
            "fixtures/big.json": "x",
            "src/app.py": "x",
        }
    )
    expected = [".gitignore", ".probeignore", "generated/api.py", "src/app.py"]
    assert paths(scan_files(root)) == expected


def test_nested_probeignore_is_relative_to_its_directory(make_tree):
    root = make_tree({"pkg/.probeignore": "/snap.txt\n", "pkg/snap.txt": "x", "snap.txt": "x"})
    assert paths(scan_files(root)) == ["pkg/.probeignore", "snap.txt"]


def test_probeignore_negation_reincludes_a_default_but_never_vcs_dirs(make_tree):
    root = make_tree(
        {
            ".probeignore": "!build/\n!.git/\n!*.min.js\n",
            "build/tool.py": "x",
            ".git/config": "x",
            "app.min.js": "x",
        }
    )
    assert paths(scan_files(root)) == [".probeignore", "app.min.js", "build/tool.py"]


def test_gitignore_negation_does_not_reinclude_defaults(make_tree):
    root = make_tree(
        {
            ".gitignore": "*\n!*/\n!*.js\n!.gitignore\n",
            "node_modules/lib/index.js": "x",
            "src/index.js": "x",
        }
    )
    assert paths(scan_files(root)) == [".gitignore", "src/index.js"]


def test_keep_extensions_lifts_only_the_builtin_binary_list(make_tree):
    root = make_tree(
        {
            ".gitignore": "drafts/\nold-*.pdf\n",
            "manual.pdf": "%PDF-1.4 text",
            "SCAN.PDF": "%PDF-1.4 text",
            "old-1.pdf": "%PDF-1.4 text",
            "drafts/d.pdf": "%PDF-1.4 text",
            "node_modules/x.pdf": "%PDF-1.4 text",
            "logo.png": "png",
        }
    )
    assert paths(scan_files(root)) == [".gitignore"]  # a project: .pdf is a default binary extension
    rules = IgnoreRules(root, keep_extensions={"pdf"})
    assert paths(scan_files(root, rules=rules)) == [".gitignore", "SCAN.PDF", "manual.pdf"]
    assert rules.matches("old-1.pdf") and rules.matches("drafts/d.pdf") and rules.matches("logo.png")
    assert not IgnoreRules(root, ["!manual.pdf"], keep_extensions={"pdf"}).matches("manual.pdf")
    assert IgnoreRules(root, ["manual.pdf"], keep_extensions={"pdf"}).matches("manual.pdf")


def test_extra_ignores_take_precedence(make_tree):
    root = make_tree(
        {".probeignore": "!dist/\n", "dist/a.js": "x", "scratch/n.txt": "x", "main.py": "x"}
    )
    result = scan_files(root, extra_ignores=["scratch/", "dist/"])
    assert paths(result) == [".probeignore", "main.py"]
    assert IgnoreRules(root, ["scratch/"]).matches("scratch/n.txt")
    assert is_ignored(root, "scratch/n.txt", extra_ignores=["scratch/"])


@pytest.mark.parametrize(
    "rel",
    [
        ".git/HEAD",
        ".hg/store/data",
        ".svn/entries",
        ".probe/manifest.txt",
        "node_modules/react/index.js",
        "web/node_modules/x/y.js",
        ".venv/lib/site.py",
        "__pycache__/mod.txt",
        "pkg/__pycache__/mod.txt",
        ".mypy_cache/x.json",
        ".pytest_cache/v/cache",
        ".ruff_cache/x",
        ".tox/py311/log.txt",
        "dist/app.js",
        "build/lib/mod.py",
        "target/debug/main.rs",
        "out/index.html",
        ".next/server.js",
        "coverage/lcov.info",
        "mypkg.egg-info/PKG-INFO",
        "package-lock.json",
        "web/yarn.lock",
        "pnpm-lock.yaml",
        "Cargo.lock",
        "poetry.lock",
        "uv.lock",
        "go.sum",
        "static/app.min.js",
        "static/site.min.css",
        "static/app.js.map",
        "static/vendor.bundle.js",
        "img/logo.png",
        "img/LOGO.PNG",
        "fonts/a.woff2",
        "lib/native.so",
        "mod.pyc",
        "model.onnx",
        "weights.bin",
        "data.sqlite",
        "docs/manual.pdf",
        "release.tar.gz",
        "App.class",
    ],
)
def test_default_ignores(make_tree, rel):
    root = make_tree({rel: "plain text", "kept.py": "x"})
    assert paths(scan_files(root)) == ["kept.py"]
    assert IgnoreRules(root).matches(rel)


def test_virtualenv_is_recognised_by_pyvenv_cfg_whatever_its_name(make_tree):
    root = make_tree(
        {
            "env/pyvenv.cfg": "home = /usr/bin\n",
            "env/lib/site.py": "x",
            "tools/my-venv/pyvenv.cfg": "home = /usr/bin\n",
            "tools/my-venv/lib/x.py": "x",
            "config/env/settings.py": "an ordinary package called env",
        }
    )
    assert paths(scan_files(root)) == ["config/env/settings.py"]
    assert IgnoreRules(root).matches("env/lib/site.py")


def test_matches_checks_ancestors_and_normalises_paths(make_tree):
    root = make_tree({".gitignore": "gen/\n*.out\n", "src/gen/x.py": "x", "a.out": "x"})
    rules = IgnoreRules(root)
    assert rules.matches("src/gen/x.py")
    assert rules.matches("src/gen", is_dir=True)
    assert rules.matches("src/gen/")
    assert not rules.matches("src/gen", is_dir=False)  # a file called gen is not ignored
    assert rules.matches("./a.out")
    assert not rules.matches("src")
    assert not rules.matches("")
    assert rules.matches("new/dir/never/created.out", is_dir=False)
    with pytest.raises(ValueError):
        rules.matches("../x.py")
    with pytest.raises(ValueError):
        rules.matches("/etc/passwd")


def test_invalidate_rereads_changed_rule_files(make_tree):
    root = make_tree({"a.txt": "x"})
    rules = IgnoreRules(root)
    assert not rules.matches("a.txt")
    (root / ".gitignore").write_text("a.txt\n")
    assert IgnoreRules.is_rule_file(".gitignore")
    assert IgnoreRules.is_rule_file("sub/.probeignore")
    assert IgnoreRules.is_rule_file(".git/info/exclude")
    assert not IgnoreRules.is_rule_file("src/gitignore.py")
    rules.invalidate()
    assert rules.matches("a.txt")


def test_malformed_lines_and_odd_encodings_in_ignore_files_do_not_break_the_rest(make_tree):
    root = make_tree(
        {
            ".gitignore": b"\xef\xbb\xbf*.tmp\r\n!\r\n\\\r\nbad\xff.txt\r\n# c\r\n",
            "a.tmp": "x",
            "main.py": "x",
            "sub/.gitignore/oops": "a directory named .gitignore is not a rule file",
        }
    )
    assert paths(scan_files(root)) == [".gitignore", "main.py", "sub/.gitignore/oops"]


_FUZZ_NAMES = ["a", "b", "src", "lib", "deep", "x.py", "y.txt", "z.log", "keep.log", "doc.md"]
_FUZZ_PATTERNS = [
    "*.log", "!keep.log", "/a", "a/", "b", "*", "!*/", "!*.py", "src/**", "!src/x.py",
    "**/deep", "deep/", "/lib/*", "!lib/b/", "*.md", "!/doc.md", "a/**/x.py", "**/b/*.txt",
    "?.py", "[xy].*", "lib", "!lib", "*/", "/*", "!/src/", "b/*", "!b/deep",
]


def _random_tree(rng: random.Random, directory: Path, depth: int = 0) -> None:
    for _ in range(rng.randint(1, 4)):
        name = rng.choice(_FUZZ_NAMES)
        path = directory / name
        if path.exists():
            continue
        if depth < 3 and "." not in name and rng.random() < 0.6:
            path.mkdir()
            _random_tree(rng, path, depth + 1)
            if rng.random() < 0.3:
                rules = rng.sample(_FUZZ_PATTERNS, rng.randint(1, 4))
                (path / ".gitignore").write_text("\n".join(rules) + "\n")
        else:
            path.write_text("x")


@pytest.mark.parametrize("seed", range(40))
def test_random_trees_agree_with_git(tmp_path, git_init, seed):
    rng = random.Random(seed)
    root = tmp_path / "repo"
    root.mkdir()
    _random_tree(rng, root)
    (root / ".gitignore").write_text("\n".join(rng.sample(_FUZZ_PATTERNS, rng.randint(1, 6))))
    git_init(root)
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "--others", "--exclude-standard", "-z"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    expected = sorted(p for p in listed.split("\0") if p)
    assert paths(scan_files(root)) == expected
    rules = IgnoreRules(root)
    every_file = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
    kept = sorted(p for p in every_file if not p.startswith(".git/") and not rules.matches(p))
    assert kept == expected
