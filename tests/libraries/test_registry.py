"""The library registry and add/remove: validation, nothing half-written, two processes at once."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from probe_core.config import user_data_dir
from probe_core.engine.lock import EngineLock
from probe_core.errors import ProbeError
from probe_core.libraries import LibraryError, add_library, list_libraries, remove_library, validate_name
from probe_core.libraries import registry


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


@pytest.fixture
def docs(tmp_path) -> Path:
    d = tmp_path / "docs"
    d.mkdir()
    (d / "a.md").write_text("# A\n\ntext\n")
    return d


@pytest.mark.parametrize("name", ["numpy", "numpy-docs", "a", "x1.2_b", "a" * 64])
def test_good_names(name):
    assert validate_name(name) == name


@pytest.mark.parametrize("name", ["", "Numpy", "with space", "../up", "a/b", "-lead", ".hidden", "a" * 65, "é", None, 3])
def test_bad_names_are_clear_errors(name):
    with pytest.raises(LibraryError, match="library name"):
        validate_name(name)


def test_add_list_remove(docs):
    entry = add_library(docs, "guide", mode="incremental")
    assert entry["kind"] == "folder" and entry["mode"] == "incremental" and entry["path"] == str(docs.resolve())
    [lib] = list_libraries()
    assert {k: lib[k] for k in ("name", "kind", "mode", "path")} == {
        "name": "guide", "kind": "folder", "mode": "incremental", "path": str(docs.resolve())}
    assert lib["files"] is None and lib["chunks"] is None  # not indexed yet
    cfg = json.loads((registry.index_dir("guide") / "config.json").read_text())
    assert cfg["library"] == {"name": "guide", "mode": "incremental"}
    assert _tree(docs) == ["a.md"]  # nothing written into the user's folder

    removed = remove_library("guide")
    assert removed["name"] == "guide"
    assert list_libraries() == [] and not registry.library_home("guide").exists()
    assert _tree(docs) == ["a.md"]


@pytest.mark.parametrize("path, needle", [("missing", "no such folder"), ("docs/a.md", "is not a folder")])
def test_bad_paths_write_nothing(tmp_path, docs, path, needle):
    with pytest.raises(LibraryError, match=needle):
        add_library(tmp_path / path, "guide")
    assert not registry.registry_path().exists() and not registry.libraries_root().exists()


def test_bad_name_and_mode_write_nothing(docs):
    with pytest.raises(LibraryError, match="invalid library name"):
        add_library(docs, "Guide")
    with pytest.raises(LibraryError, match="invalid library mode"):
        add_library(docs, "guide", mode="mirror")
    assert not registry.registry_path().exists() and not registry.libraries_root().exists()


def test_duplicates_are_refused_and_leave_the_first_alone(docs, tmp_path):
    add_library(docs, "guide")
    before = registry.registry_path().read_bytes()
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(LibraryError, match="already exists"):
        add_library(other, "guide")
    with pytest.raises(LibraryError, match="already registered as library 'guide'"):
        add_library(docs, "guide2")
    assert registry.registry_path().read_bytes() == before
    assert sorted(os.listdir(registry.libraries_root())) == ["guide"]


def test_unknown_library_is_a_clear_error():
    with pytest.raises(LibraryError, match="unknown library 'nope'"):
        remove_library("nope")


def test_remove_refuses_while_another_process_holds_the_index(docs, monkeypatch):
    from probe_core.libraries import manage

    add_library(docs, "guide")
    holder = EngineLock(registry.index_dir("guide"))
    assert holder.try_acquire()  # another owner (flock conflicts across descriptors like across processes)
    monkeypatch.setattr(manage, "REMOVE_WAIT_S", 0.5)
    try:
        with pytest.raises(LibraryError, match="nothing was removed"):
            remove_library("guide")
        [lib] = list_libraries()  # no half state: still registered, not marked, index intact
        assert "removing" not in registry.load()["guide"] and lib["name"] == "guide"
        assert (registry.index_dir("guide") / "config.json").exists()
    finally:
        holder.release()
    remove_library("guide")
    assert list_libraries() == []


def test_two_processes_adding_at_once_lose_nothing(tmp_path):
    folders = []
    for i in range(16):
        d = tmp_path / f"lib{i}"
        d.mkdir()
        folders.append(d)
    script = ("import sys; from probe_core.libraries import add_library\n"
              "for p in sys.argv[1:]:\n    add_library(p, p.rsplit('/', 1)[1])\n")
    env = {**os.environ, "PROBE_DATA_DIR": str(user_data_dir())}
    procs = [subprocess.Popen([sys.executable, "-c", script, *map(str, folders[k::2])], env=env,
                              cwd=Path(__file__).resolve().parents[2]) for k in range(2)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert sorted(lib["name"] for lib in list_libraries()) == sorted(f"lib{i}" for i in range(16))


def test_two_processes_adding_the_same_names_keep_the_winners_index(tmp_path):
    """Both processes add the same names (each from its own folder), then store into the same stored
    libraries: one wins each name, the other gets "already exists" (or the winner's stored library)
    and must not delete anything of the winner's (its index dir and config)."""
    names = [f"lib{i}" for i in range(24)]
    for k in range(2):
        for n in names:
            (tmp_path / f"p{k}" / n).mkdir(parents=True)
    script = ("import sys\n"
              "from probe_core.libraries import LibraryError, add_library\n"
              "from probe_core.libraries.manage import ensure_stored_library\n"
              "base, names = sys.argv[1], sys.argv[2:]\n"
              "for n in names:\n"
              "    try:\n"
              "        add_library(f'{base}/{n}', n)\n"
              "        print('won', n, flush=True)\n"
              "    except LibraryError as exc:\n"
              "        assert 'already exists' in str(exc), exc\n"
              "    ensure_stored_library('s' + n)\n")
    env = {**os.environ, "PROBE_DATA_DIR": str(user_data_dir())}
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path / f"p{k}"), *names], env=env,
                              stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2])
             for k in range(2)]
    outs = [p.communicate(timeout=180)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    won = [{line.split()[1] for line in out.splitlines()} for out in outs]
    assert won[0] | won[1] == set(names) and not won[0] & won[1]
    libs = registry.load()
    for n in names:
        winner = 0 if n in won[0] else 1
        assert libs[n]["path"] == str((tmp_path / f"p{winner}" / n).resolve())
        cfg = json.loads((registry.index_dir(n) / "config.json").read_text())
        assert cfg["library"]["name"] == n
        assert libs["s" + n]["kind"] == "stored" and registry.docs_dir("s" + n).is_dir()
        assert json.loads((registry.index_dir("s" + n) / "config.json").read_text())["library"]["name"] == "s" + n


def test_a_failed_add_removes_only_what_it_created(docs, monkeypatch):
    from probe_core.libraries import manage

    def broken(*args):
        raise LibraryError("simulated failure")

    monkeypatch.setattr(manage, "_prepare_index", broken)
    with pytest.raises(LibraryError, match="simulated"):
        add_library(docs, "guide")
    with pytest.raises(LibraryError, match="simulated"):
        manage.ensure_stored_library("notes")
    assert not registry.library_home("guide").exists() and not registry.library_home("notes").exists()
    leftover = registry.library_home("kept")  # not created by this call: left alone
    (leftover / "index").mkdir(parents=True)
    with pytest.raises(LibraryError, match="simulated"):
        add_library(docs, "kept")
    assert (leftover / "index").is_dir() and registry.load() == {}


def test_library_error_is_a_probe_error():
    assert issubclass(LibraryError, ProbeError)


def test_an_add_right_after_a_remove_keeps_its_new_index(tmp_path, monkeypatch):
    """`remove` moves the library's home aside inside the registry change, so an `add` of the same
    name landing before the old data is deleted keeps its own index."""
    import probe_core.libraries.manage as manage
    from probe_core.libraries import registry as reg

    old, new = tmp_path / "old", tmp_path / "new"
    for folder in (old, new):
        folder.mkdir()
        (folder / "a.md").write_text("# A\n")
    add_library(old, "kb")
    real_rmtree = manage.shutil.rmtree

    def add_then_delete(path, *a, **k):  # another process adds "kb" again in this instant
        add_library(new, "kb")
        return real_rmtree(path, *a, **k)

    monkeypatch.setattr(manage.shutil, "rmtree", add_then_delete)
    remove_library("kb")
    monkeypatch.setattr(manage.shutil, "rmtree", real_rmtree)
    assert reg.get("kb")["path"] == str(new.resolve())
    assert (reg.index_dir("kb") / "config.json").exists()
    assert not [p for p in reg.library_home("kb").parent.iterdir() if ".removed-" in p.name]
