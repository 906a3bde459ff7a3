"""Memory rules at the store level: validation, uniqueness per scope, ordering, persistence, isolation."""
from __future__ import annotations

import sqlite3

import pytest

from probe_core.errors import ProbeError
from probe_core.memory.rules import RuleError, RuleStore, render_rules_markdown, user_data_dir


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("PROBE_DATA_DIR", str(tmp_path / "data"))
    root = tmp_path / "repo"
    root.mkdir()
    return RuleStore(root)


def test_data_dir_resolution(tmp_path, monkeypatch):
    monkeypatch.delenv("PROBE_DATA_DIR", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_data_dir() == tmp_path / "home" / ".local" / "share" / "probe"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert user_data_dir() == tmp_path / "xdg" / "probe"
    monkeypatch.setenv("PROBE_DATA_DIR", str(tmp_path / "pd"))
    assert user_data_dir() == tmp_path / "pd"


def test_add_list_update_remove_and_files(store, tmp_path):
    r = store.add("use-uv", "Run Python through uv.", tags=["tooling", " py "], title="Tooling")
    assert (r.label, r.scope, r.tags, r.title) == ("use-uv", "project", ["tooling", "py"], "Tooling")
    assert (tmp_path / "repo" / ".probe" / "memory.sqlite").exists()
    assert not (tmp_path / "data" / "memory.sqlite").exists()
    store.add("be-terse", "Answer tersely.", scope="global")
    assert (tmp_path / "data" / "memory.sqlite").exists()

    u = store.update("use-uv", content="Always `uv run`.")
    assert u.content == "Always `uv run`." and u.title == "Tooling" and u.tags == ["tooling", "py"]
    assert u.created_at == r.created_at and u.updated_at >= r.updated_at
    assert store.update("use-uv", tags=[]).tags == []

    gone = store.remove("use-uv")
    assert gone.label == "use-uv"
    assert [x.label for x in store.list()] == ["be-terse"]


def test_ordering_global_first_then_project_by_creation(store):
    store.add("p-one", "first project rule")
    store.add("g-one", "first global rule", scope="global")
    store.add("p-two", "second project rule")
    store.add("g-two", "second global rule", scope="global")
    rules = store.list()
    assert [(x.scope, x.label) for x in rules] == [("global", "g-one"), ("global", "g-two"),
                                                   ("project", "p-one"), ("project", "p-two")]
    assert [x.label for x in store.list(scope="project")] == ["p-one", "p-two"]
    md = render_rules_markdown(rules)
    assert md.index("g-one") < md.index("g-two") < md.index("p-one")


def test_label_unique_per_scope(store):
    store.add("same", "project version")
    store.add("same", "global version", scope="global")  # other scope: fine
    with pytest.raises(RuleError, match="already exists"):
        store.add("same", "again")
    with pytest.raises(RuleError, match="already exists"):
        store.add("same", "again", scope="global")
    assert sorted((x.scope, x.content) for x in store.list()) == [("global", "global version"),
                                                                  ("project", "project version")]


@pytest.mark.parametrize("label", ["Upper", "under_score", "-lead", "trail-", "dou--ble", "has space",
                                   "sixteen-chars-xx", "", None])
def test_bad_labels(store, label):
    with pytest.raises(RuleError):
        store.add(label, "content")
    assert store.list() == []


def test_label_limits_ok(store):
    assert store.add("a" * 15, "x").label == "a" * 15
    assert store.add("a1-b2-c3", "x").label == "a1-b2-c3"


def test_errors_are_clear_and_nothing_written(store, tmp_path):
    assert issubclass(RuleError, ProbeError)
    with pytest.raises(RuleError, match="empty"):
        store.add("empty", "   ")
    with pytest.raises(RuleError, match="no project rule"):
        store.update("missing", content="x")
    with pytest.raises(RuleError, match="no project rule"):
        store.remove("missing")
    with pytest.raises(RuleError, match="unknown action"):
        store.apply("delete", label="x")
    with pytest.raises(RuleError, match="unknown scope"):
        store.add("x", "y", scope="team")
    store.add("keep", "original")
    with pytest.raises(RuleError, match="empty"):
        store.update("keep", content="")
    with pytest.raises(RuleError, match="something to change"):
        store.update("keep")
    with pytest.raises(RuleError, match="no project rule"):
        store.update("other", content="x")
    assert [(x.label, x.content) for x in store.list()] == [("keep", "original")]


def test_failed_write_rolls_back(store, tmp_path, monkeypatch):
    store.add("keep", "original")
    real = RuleStore._get

    def boom(self, conn, scope, label):  # fails after the INSERT, inside the transaction
        rule = real(self, conn, scope, label)
        if rule is not None and label == "new-one":
            raise sqlite3.OperationalError("disk I/O error (simulated)")
        return rule

    monkeypatch.setattr(RuleStore, "_get", boom)
    with pytest.raises(sqlite3.OperationalError):
        store.add("new-one", "never stored")
    monkeypatch.setattr(RuleStore, "_get", real)
    assert [x.label for x in store.list()] == ["keep"]


def test_persists_across_reopen_and_isolated_by_data_dir(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    root.mkdir()
    monkeypatch.setenv("PROBE_DATA_DIR", str(tmp_path / "a"))
    RuleStore(root).add("g-rule", "global in a", scope="global")
    RuleStore(root).add("p-rule", "project rule")
    assert [x.label for x in RuleStore(root).list()] == ["g-rule", "p-rule"]
    monkeypatch.setenv("PROBE_DATA_DIR", str(tmp_path / "b"))
    assert [x.label for x in RuleStore(root).list()] == ["p-rule"]  # other user store, same project
    other = tmp_path / "other"
    other.mkdir()
    assert RuleStore(other).list() == []


def test_apply_returns_rule_and_current_list(store):
    out = store.apply("add", label="use-uv", content="Use uv.", scope="project", tags=["a"])
    assert out["action"] == "add" and out["rule"]["label"] == "use-uv" and out["rules"] == []  # not the list
    out = store.apply("list")
    assert out["rule"] is None and [r["label"] for r in out["rules"]] == ["use-uv"]
    out = store.apply("remove", label="use-uv")
    assert out["rule"]["content"] == "Use uv." and out["rules"] == []


def test_global_only_store_without_root(tmp_path, monkeypatch):
    monkeypatch.setenv("PROBE_DATA_DIR", str(tmp_path / "d"))
    s = RuleStore(None)
    s.add("g", "global", scope="global")
    assert [x.label for x in s.list()] == ["g"]
    with pytest.raises(RuleError, match="workspace root"):
        s.add("p", "project")
