"""The code-intelligence tools through the real stdio client, on the owner and on an attached process."""
from __future__ import annotations

import pytest

from probe_core.intel.lsp.servers import find_command

from .conftest import call, probe_mcp, wait_indexed


@pytest.mark.asyncio
async def test_intel_tools_answer_on_owner_and_attached(repo):
    async with probe_mcp(repo) as owner:
        await wait_indexed(owner)
        r = await call(owner, "find_callers", {"symbol": "hash_password"})
        assert not r.is_error, r.content[0].text
        out = r.structured_content
        # the tree-sitter graph answers by default, even though jedi-language-server (a dev dependency)
        # is installed: a language server answers only when asked for (PROBE_LSP=1, config "lsp": true)
        assert find_command("jedi-language-server") and out["source"] == "treesitter"
        callers = {(i["path"], i["line"]) for i in out["items"]}
        assert ("src/auth/passwords.py", 18) in callers  # check_password calls it
        assert ("tests/test_passwords.py", 5) in callers
        assert "hash_password" in r.content[0].text and "from treesitter" in r.content[0].text

        r = await call(owner, "find_callees", {"symbol": "HeaderParser.parse_block"})
        assert {i["symbol"] for i in r.structured_content["items"]} >= {"HeaderParser.parse_line"}

        r = await call(owner, "map_code", {"path": ".", "detail": "signatures"})
        assert not r.is_error and "router/mux.go" in r.structured_content["text"]

        r = await call(owner, "impact_analysis", {"symbol": "hash_password"})
        assert not r.is_error and r.structured_content["items"]

        r = await call(owner, "find_references", {"symbol": "no_such_symbol_anywhere"})
        assert r.is_error and "no_such_symbol_anywhere" in r.content[0].text
        assert not (await call(owner, "index_status")).is_error  # still answering

        async with probe_mcp(repo) as attached:
            r2 = await call(attached, "find_callers", {"symbol": "hash_password"})
            assert not r2.is_error
            assert {(i["path"], i["line"]) for i in r2.structured_content["items"]} == callers


@pytest.mark.asyncio
async def test_a_language_without_a_call_graph_is_named_not_an_empty_list(tmp_path):
    root = tmp_path / "kt"
    (root / "src").mkdir(parents=True)
    (root / "src/Calc.kt").write_text("fun add(a: Int, b: Int): Int = a + b\n"
                                      "fun twice(a: Int): Int { return add(a, a) }\n")
    async with probe_mcp(root) as owner:
        await wait_indexed(owner)
        for tool in ("find_callers", "find_callees", "find_references"):
            r = await call(owner, tool, {"symbol": "add"})
            assert not r.is_error, r.content[0].text
            assert r.structured_content["items"] == []
            assert r.structured_content["message"] == "no call graph for Kotlin files"
            assert "no call graph for Kotlin files" in r.content[0].text
