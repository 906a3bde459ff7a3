"""Path attacks on every tool and verb that takes a path or a name: nothing outside the root (or a
library's folder) is ever opened, read or written, and `store` never replaces a document nobody
named. The kernel is the witness: ``AccessSpy`` (inotify) watches the directories next to the
workspace and reports any open, read or write there while the attacks run.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anyio
import pytest

from .conftest import REPO_FILES, AccessSpy, call, probe_cli, probe_mcp, search, tally, wait_indexed, write_tree

SECRET = "def outside_secret():\n    return 'sk-live-do-not-leak'\n"


@pytest.fixture
def arena(tmp_path):
    """A repository with every kind of link out, a secret next to it, and a fake home."""
    root = write_tree(tmp_path / "repo", REPO_FILES)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    outside = write_tree(tmp_path / "outside", {"secret.py": SECRET, "deeper/more.md": "# sk-live-do-not-leak\n"})
    home = write_tree(tmp_path / "home", {".bashrc": "export TOKEN=sk-live-do-not-leak\n",
                                         ".ssh/id_rsa": "-----BEGIN sk-live-do-not-leak-----\n"})
    (root / "to_outside").symlink_to(outside, target_is_directory=True)
    (root / "to_root").symlink_to("/", target_is_directory=True)
    (root / "secret_link.py").symlink_to(outside / "secret.py")
    (root / "src" / "up").symlink_to(Path("..") / ".." / "outside", target_is_directory=True)
    (root / "src" / "loop").symlink_to("..", target_is_directory=True)
    return root, outside, home


def _refused(r) -> bool:
    return r.is_error and "sk-live" not in r.content[0].text


def test_no_tool_reads_or_writes_outside_the_root(arena, tmp_path):
    root, outside, home = arena
    data = tmp_path / "probe-data"
    data.mkdir()
    spy = AccessSpy(outside, home)
    abs_secret = str(outside / "secret.py")
    attacks = {
        "open_file": ["../outside/secret.py", abs_secret, "~/.bashrc", "~", "secret_link.py", "to_outside/secret.py",
                      "to_root/etc/passwd", "src/up/secret.py", "src/../../outside/secret.py", "a\0b", "x" * 5000,
                      "d/" * 3000 + "f", ".git/config", ".git/HEAD", "src/../.git/config", ".probe/config.json",
                      ".probe/../.probe/manifest.sqlite", "src/loop/../.git/HEAD", "library:../../outside/secret.py#L1",
                      "library:nope/../../../outside/secret.py#L1-L2", f"{abs_secret}#L1-L2", "to_outside#L1"],
        "map_code": ["../outside", "/", str(outside), "~", ".git", ".probe", "to_outside", "to_root/etc", "\0",
                     "x" * 5000, "src/up"],
        "intel_file": ["../outside/secret.py", abs_secret, "to_outside/secret.py", ".probe/config.json", "~/.bashrc",
                       "secret_link.py", "\0"],
        "globs": [["../outside/*"], ["/**"], ["to_outside/**"], ["~/*"], [abs_secret], ["**/../../**"], ["\0"],
                  ["[" * 500], ["**/" * 2000]],
        "store_names": ["../x", "..", ".", "a/b", "/abs", "~", "x\0y", "n" * 100, "UPPER", "-lead", " sp"],
    }

    async def scenario():
        async with probe_mcp(root, HOME=str(home), PROBE_DATA_DIR=str(data)) as client:
            await wait_indexed(client)
            for path in attacks["open_file"]:
                r = await call(client, "open_file", {"path": path})
                assert _refused(r), (path, r.content[0].text[:200])
            # a link that stays inside the root is followed like any path inside it
            r = await call(client, "open_file", {"path": "src/loop/src/auth/passwords.py#L1-L3"})
            assert not r.is_error and r.structured_content["lines"][0] == '"""Password hashing."""'
            for path in attacks["map_code"]:
                r = await call(client, "map_code", {"path": path})
                assert _refused(r), (path, r.content[0].text[:200])
            for path in attacks["intel_file"]:
                for tool in ("find_callers", "find_references", "impact_analysis"):
                    r = await call(client, tool, {"file": path, "line": 1})
                    assert _refused(r), (tool, path, r.content[0].text[:200])
            for globs in attacks["globs"]:
                for key in ("include_globs", "exclude_globs"):
                    out = await call(client, "search", {"query": "outside secret leak", "filters": {key: globs}})
                    assert "sk-live" not in out.content[0].text
                    paths = [r["path"] for r in (out.structured_content or {}).get("results", [])]
                    assert not [p for p in paths if "outside" in p or "secret" in p or p.startswith("to_")], paths
            for name in attacks["store_names"]:
                r = await call(client, "store", {"content": "# Notes\nkeep me\n", "library_name": name})
                assert _refused(r), (name, r.content[0].text[:200])
            leaked = await search(client, "outside_secret sk-live-do-not-leak")
            assert all("secret" not in r["path"] and "outside" not in r["path"] for r in leaked["results"])

    anyio.run(scenario)
    touched = spy.events()
    spy.close()
    assert touched == [], f"Probe touched files outside the root: {touched}"
    tally("paths.attacks", sum(len(v) for k, v in attacks.items() if k != "intel_file") + 3 * len(attacks["intel_file"])
          + len(attacks["globs"]))


def test_store_never_replaces_a_document_nobody_named(tmp_path):
    from probe_core.libraries import registry
    from probe_core.libraries.store_doc import slugify

    root = write_tree(tmp_path / "repo", REPO_FILES)
    data = tmp_path / "probe-data"

    async def scenario():
        async with probe_mcp(root, PROBE_DATA_DIR=str(data)) as client:
            await wait_indexed(client)
            first = await call(client, "store", {"content": "Alpha body.\n", "library_name": "notes", "title": "Same"})
            assert not first.is_error, first.content[0].text
            docs = Path(first.structured_content["file"]).parent
            # a user's own file that happens to carry the name the next document would get
            import hashlib

            body = "Beta body.\n"
            digest = hashlib.sha256(body.strip().encode()).hexdigest()[:8]
            squatter = docs / f"{slugify('Same')}-{digest}.md"
            squatter.write_text("the user's own notes\n")
            second = await call(client, "store", {"content": body, "library_name": "notes", "title": "Same"})
            assert not second.is_error and second.structured_content["created"], second.content[0].text
            assert Path(second.structured_content["file"]) != squatter
            assert squatter.read_text() == "the user's own notes\n"
            assert "Alpha body." in Path(first.structured_content["file"]).read_text()
            again = await call(client, "store", {"content": body, "library_name": "notes", "title": "Same"})
            assert again.structured_content["created"] is False  # same content: found, nothing written
            assert again.structured_content["file"] == second.structured_content["file"]
            names = sorted(p.name for p in docs.iterdir())
            assert len(names) == 3 and not [n for n in names if n.endswith(".tmp")]
            return docs

    docs = anyio.run(scenario)
    assert registry.libraries_root().resolve() != docs  # sanity: docs live in the data dir given
    assert str(docs).startswith(str(data))
    tally("paths.store_no_overwrite", 3)


def test_a_library_folder_with_links_out_reads_only_its_folder(tmp_path):
    outside = write_tree(tmp_path / "outside", {"secret.md": "# Secret\nsk-live-do-not-leak\n"})
    folder = write_tree(tmp_path / "kb", {"guide.md": "# Guide\nConnection pools hand out sockets.\n"})
    (folder / "leak").symlink_to(outside, target_is_directory=True)
    (folder / "leak.md").symlink_to(outside / "secret.md")
    (folder / "root").symlink_to("/", target_is_directory=True)
    env = {"PROBE_DATA_DIR": str(tmp_path / "probe-data")}
    for bad in ["../kb", "a/b", "..", "x\ty", "K" * 80, ""]:  # argv cannot carry a NUL
        proc = probe_cli("library", "add", str(folder), "--name", bad, "--no-index", env=env, check=False)
        assert proc.returncode != 0 and "Traceback" not in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    spy = AccessSpy(outside)
    probe_cli("library", "add", str(folder), "--name", "kb", "--no-index", env=env)
    probe_cli("library", "index", "kb", env=env)
    listing = probe_cli("library", "list", "--json", env=env).stdout
    touched = spy.events()
    spy.close()
    assert touched == [], touched
    (kb,) = json.loads(listing)["libraries"]
    assert kb["files"] == 1  # guide.md; the links out are skipped
    tally("paths.library_links", 3)
