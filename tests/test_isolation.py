"""The suite never touches the user's own Probe data: fixtures of every scope see a data dir under
pytest's temporary root (a module-scoped ``probe mcp`` used to store fuzzed libraries in HOME)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def data_dir_seen_by_a_module_fixture() -> str | None:
    return os.environ.get("PROBE_DATA_DIR")


def test_module_fixtures_get_a_temporary_data_dir(data_dir_seen_by_a_module_fixture, tmp_path_factory):
    seen = data_dir_seen_by_a_module_fixture
    assert seen is not None, "a module-scoped fixture would write into ~/.local/share/probe"
    assert Path(seen).is_relative_to(tmp_path_factory.getbasetemp())
    assert os.environ.get("PROBE_DAEMON") == "0"
