"""The MCP tool table on its own: an entry's check, handler and renderer answer without a server, and the
table is exactly what a real ``probe mcp`` lists over stdio."""
from __future__ import annotations

import pytest
from mcp.server.mcpserver.utilities.func_metadata import func_metadata
from pydantic import ValidationError

from probe_core import Workspace, index_workspace
from probe_core.engine import open_engine
from probe_mcp.tools import EngineSlot, table

from .conftest import probe_mcp


def test_an_intel_entry_answers_from_a_real_engine_without_a_server(repo):
    index_workspace(Workspace.open(repo), dense=False)  # a small real index (lexical + code graph)
    tools = {t.name: t for t in table()}
    slot = EngineSlot(lambda: None)
    slot.engine = open_engine(repo, background=False)
    try:
        callers = tools["find_callers"]
        args = callers.check({"symbol": "hash_password"})
        assert args["depth"] == 1 and args["max_results"] == 50  # defaults filled in, as the SDK does
        out = callers.handler(slot, args)
        assert ("src/auth/passwords.py", 18) in {(i["path"], i["line"]) for i in out["items"]}
        text = callers.render(out)
        assert text.startswith("hash_password") and "src/auth/passwords.py:18" in text

        opened = tools["open_file"]
        out = opened.handler(slot, opened.check({"path": "src/auth/passwords.py", "start_line": 1, "end_line": 2}))
        assert out["start_line"] == 1 and opened.render(out).startswith("src/auth/passwords.py lines 1-2")
    finally:
        slot.close()
    with pytest.raises(ValidationError):
        callers.check({"symbol": "hash_password", "depth": 0})


@pytest.mark.asyncio
async def test_the_table_is_what_the_server_lists(repo):
    entries = table()
    async with probe_mcp(repo) as client:
        listed = (await client.list_tools()).tools
    assert [t.name for t in listed] == [e.name for e in entries]
    for tool, entry in zip(listed, entries):
        assert (tool.title, tool.description) == (entry.title, entry.description)
        assert tool.input_schema == func_metadata(entry.function(None)).arg_model.model_json_schema(by_alias=True)
        assert tool.annotations == entry.annotations
