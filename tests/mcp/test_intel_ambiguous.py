"""An ambiguous name in the MCP text of the intel tools: like the CLI, the text names the other
definitions and how to ask for one (real ``probe mcp`` over stdio, and the real ``probe callers``)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from ..conftest import write_tree
from .conftest import call, probe_mcp, wait_indexed

FILES = {
    "app/users.py": "def save(user):\n    return user\n\n\ndef register(user):\n    return save(user)\n",
    "app/orders.py": "def save(order):\n    return order\n\n\ndef checkout(order):\n    return save(order)\n",
}


@pytest.mark.asyncio
async def test_callers_of_an_ambiguous_name_say_where_else_it_is_defined(tmp_path):
    root = write_tree(tmp_path / "repo", FILES)
    async with probe_mcp(root) as owner:
        await wait_indexed(owner)
        r = await call(owner, "find_callers", {"symbol": "save"})
        assert not r.is_error, r.content[0].text
        others = r.structured_content["target"]["candidates"]
        assert len(others) == 1, r.structured_content["target"]
        text = r.content[0].text
        assert f"also defined at {others[0]}" in text, text
        assert "file and line" in text  # how to ask for that one
    cli = subprocess.run([sys.executable, "-m", "probe_cli", "callers", "save", "--root", str(root)],
                         capture_output=True, text=True, check=True)
    assert f"also defined at {others[0]}" in cli.stdout  # the CLI says the same
