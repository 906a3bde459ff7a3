"""Build a git history out of a package's released versions, for ``probe eval`` studies offline.

Real clones are rarely at hand offline, but package registries keep every release. This script
fetches a range of an npm package's versions with the ordinary ``npm pack`` client, commits each
version's tree (``package/`` without ``dist/``, as the dev set materialises it) on top of the
previous one, and uses that version's changelog entry (from the newest release's changelog,
links and credits stripped) as the commit message. The result is a small repository whose
commits are "the changes of one release, described by the release notes": coarser than real
commits, but real code and real descriptions.

  uv run python bench/history_from_releases.py --npm mobx --from 6.1.0 --to 6.13.5 \\
      --out /tmp/probe-hist/mobx-releases

The newest tree equals the dev set's ``mobx`` corpus, so its index can be copied in instead of
re-embedding (``--index-from /tmp/probe-dev/mobx``).
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

# "## 6.13.5" (changesets Markdown) or "Version 3.1.3" over a dashed underline (reST)
_VERSION_HEAD = re.compile(r"^(?:##\s+v?|Version\s+)(\d+\.\d+\.\d+)\s*$(?:\n-+\s*$)?", re.M)
_ROLE = re.compile(r":\w+:`([^`]*)`")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_THANKS = re.compile(r"Thanks\s+@?[\w-]+!\s*-?\s*")
_SHA = re.compile(r"`?[0-9a-f]{7,40}`?")


def final_release(v: str) -> bool:
    """A final release: ``1.2.3``, not npm's ``1.2.3-beta.1`` nor PyPI's ``2.0.0rc1`` / ``1.0.post1``."""
    return re.fullmatch(r"\d+(?:\.\d+)*", v) is not None


def version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


def changelog_entries(text: str) -> dict[str, str]:
    """version → its entry as plain text (bullets joined), from a changesets-style CHANGELOG.md."""
    heads = list(_VERSION_HEAD.finditer(text))
    out = {}
    for i, m in enumerate(heads):
        body = text[m.end():heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        bullets = []
        for line in body.splitlines():
            line = line.strip()
            if not line.startswith(("-", "*")):
                if bullets and line and not line.startswith(("#", "Released ")):
                    bullets[-1] += " " + line
                continue
            if line.startswith("Released "):
                continue
            line = _LINK.sub(r"\1", line.lstrip("-* "))
            line = _THANKS.sub("", line)
            line = _SHA.sub("", line)
            bullets.append(line)
        bullets = [re.sub(r"\s+", " ", _ROLE.sub("", b).replace("``", "`")).strip(" -") for b in bullets]
        out[m.group(1)] = "\n".join(f"- {b}" for b in bullets if b)
    return out


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "release", "GIT_AUTHOR_EMAIL": "release@example.invalid",
                        "GIT_COMMITTER_NAME": "release", "GIT_COMMITTER_EMAIL": "release@example.invalid",
                        "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
                        "PATH": "/usr/bin:/bin"})


def main() -> int:
    ap = argparse.ArgumentParser()
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--npm", help="npm package name (tree: package/ without dist/)")
    src.add_argument("--pypi", help="PyPI package name (tree: the whole sdist)")
    ap.add_argument("--from", dest="first", required=True)
    ap.add_argument("--to", dest="last", required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--changelog", default="CHANGELOG.md", help="CHANGELOG.md (changesets) or CHANGES.rst")
    ap.add_argument("--index-from", type=Path, help="copy this corpus's .probe/ (same tree as --to)")
    args = ap.parse_args()

    name = args.npm or args.pypi
    if args.npm:
        versions = json.loads(subprocess.run(["npm", "view", name, "versions", "--json"], check=True,
                                             capture_output=True, text=True).stdout)
    else:
        listing = subprocess.run(["python3", "-m", "pip", "index", "versions", name], check=True,
                                 capture_output=True, text=True).stdout
        versions = re.search(r"Available versions:\s*(.*)", listing).group(1).replace(" ", "").split(",")
    lo, hi = version_key(args.first), version_key(args.last)
    versions = sorted((v for v in versions if final_release(v) and lo <= version_key(v) <= hi), key=version_key)
    if args.out.exists():
        sys.exit(f"{args.out} exists; remove it first")
    args.out.mkdir(parents=True)
    git(args.out, "init", "-q", "-b", "main")
    with tempfile.TemporaryDirectory(prefix="probe-hist-") as tmp:
        trees = {}
        for v in versions:
            dest = Path(tmp) / v
            if args.npm:
                subprocess.run(["npm", "pack", f"{name}@{v}", "--silent"], cwd=tmp, check=True, capture_output=True)
                archive = next(Path(tmp).glob(f"{name}-{v}.tgz"))
            else:
                subprocess.run(["python3", "-m", "pip", "download", f"{name}=={v}", "--no-deps", "--no-binary",
                                ":all:", "-q", "-d", str(dest)], check=True, capture_output=True)
                archive = next(dest.glob("*.tar.gz"))
            with tarfile.open(archive) as tf:
                tf.extractall(dest / "x", filter="data")
            top = dest / "x" / "package" if args.npm else next((dest / "x").iterdir())
            if args.npm:
                shutil.rmtree(top / "dist", ignore_errors=True)
            trees[v] = top
            print(f"fetched {name} {v}", file=sys.stderr)
        entries = changelog_entries((trees[versions[-1]] / args.changelog).read_text("utf-8"))
        for v in versions:
            for child in args.out.iterdir():
                if child.name != ".git":
                    shutil.rmtree(child) if child.is_dir() else child.unlink()
            shutil.copytree(trees[v], args.out, dirs_exist_ok=True)
            git(args.out, "add", "-A")
            bullets = [b.removeprefix("- ") for b in entries.get(v, "").splitlines() if b.strip()]
            message = "\n\n".join([bullets[0], "\n".join(f"- {b}" for b in bullets[1:])] if bullets else [f"{name} {v}"])
            git(args.out, "commit", "-q", "--allow-empty", "-m", message.strip())
    if args.index_from:
        shutil.copytree(args.index_from / ".probe", args.out / ".probe")
    print(f"{len(versions)} releases committed in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
