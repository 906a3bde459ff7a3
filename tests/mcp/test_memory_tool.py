"""The `memory` tool, the `probe://memory/rules` resource and the rules in the instructions, through
the real stdio client (owner and attached), across server restarts."""
from __future__ import annotations

import pytest

from .conftest import call, probe_mcp

RESOURCE = "probe://memory/rules"


async def memory(client, **args):
    r = await call(client, "memory", args)
    assert not r.is_error, r.content[0].text
    return r.structured_content


async def resource_text(client) -> str:
    res = await client.read_resource(RESOURCE)
    return "\n".join(c.text for c in res.contents)


@pytest.mark.asyncio
async def test_memory_rules_persist_and_reach_the_agent(repo, tmp_path):
    env = {"PROBE_DATA_DIR": str(tmp_path / "user-data")}
    async with probe_mcp(repo, **env) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        tool = tools["memory"]
        assert set(tool.input_schema["properties"]) == {"action", "label", "content", "scope", "title", "tags"}
        assert tool.output_schema["type"] == "object" and "rules" in tool.output_schema["properties"]
        assert "probe://memory/rules" in client.instructions
        assert "Memory rules (" not in client.instructions  # none yet

        out = await memory(client, action="add", label="use-uv", content="Run Python only via `uv run`.",
                           tags=["tooling"])
        assert out["rule"]["label"] == "use-uv" and out["rule"]["scope"] == "project"
        out = await memory(client, action="add", label="be-terse", content="Answer tersely.", scope="global")
        assert out["rules"] == [] and out["rule"]["label"] == "be-terse"  # an add answers with its rule only
        out = await memory(client, action="list")
        assert [(r["scope"], r["label"]) for r in out["rules"]] == [("global", "be-terse"), ("project", "use-uv")]

    assert (repo / ".probe" / "memory.sqlite").exists() and (tmp_path / "user-data" / "memory.sqlite").exists()

    async with probe_mcp(repo, **env) as client:  # a new session
        assert "Memory rules" in client.instructions
        assert "use-uv" in client.instructions and "Answer tersely." in client.instructions
        listed = await memory(client, action="list")
        assert [r["label"] for r in listed["rules"]] == ["be-terse", "use-uv"]
        assert listed["rules"][1]["tags"] == ["tooling"]
        resources = {str(r.uri) for r in (await client.list_resources()).resources}
        assert RESOURCE in resources
        text = await resource_text(client)
        assert text.index("be-terse") < text.index("use-uv") and "`uv run`" in text

        out = await memory(client, action="update", label="use-uv", content="Use `uv run` for everything.")
        assert out["rule"]["content"] == "Use `uv run` for everything."
        assert "Use `uv run` for everything." in await resource_text(client)

        # an attached process sees and changes the same rules (forwarded to the owner)
        async with probe_mcp(repo, **env) as attached:
            a = await memory(attached, action="list")
            assert [r["content"] for r in a["rules"]][1] == "Use `uv run` for everything."
            await memory(attached, action="remove", label="be-terse", scope="global")
        listed = await memory(client, action="list")
        assert [r["label"] for r in listed["rules"]] == ["use-uv"]

    # same user store, another repository: global rules only
    other = tmp_path / "other-repo"
    other.mkdir()
    (other / "a.py").write_text("x = 1\n")
    async with probe_mcp(other, **env) as client:
        await memory(client, action="add", label="g-rule", content="global rule", scope="global")
        assert [r["label"] for r in (await memory(client, action="list"))["rules"]] == ["g-rule"]
    async with probe_mcp(repo, **env) as client:
        assert [r["label"] for r in (await memory(client, action="list"))["rules"]] == ["g-rule", "use-uv"]


@pytest.mark.asyncio
async def test_memory_bad_input_is_an_error_and_the_server_answers(repo, tmp_path):
    async with probe_mcp(repo, PROBE_DATA_DIR=str(tmp_path / "user-data")) as client:
        await memory(client, action="add", label="dup", content="first")
        cases = [
            ({"action": "add", "label": "dup", "content": "second"}, "already exists"),
            ({"action": "add", "label": "much-too-long-label", "content": "x"}, "at most 15"),
            ({"action": "add", "label": "Bad_Label", "content": "x"}, "invalid"),
            ({"action": "add", "label": "empty", "content": "   "}, "empty"),
            ({"action": "add", "label": "no-content"}, "empty"),
            ({"action": "update", "label": "missing", "content": "x"}, "no project rule"),
            ({"action": "remove", "label": "missing"}, "no project rule"),
            ({"action": "forget", "label": "dup"}, ""),  # rejected by the input schema
            ({"action": "add", "label": "x", "content": "y", "scope": "team"}, ""),
        ]
        for args, needle in cases:
            r = await call(client, "memory", args)
            assert r.is_error, args
            assert needle in r.content[0].text, (args, r.content[0].text)
            assert not (await call(client, "index_status")).is_error  # still answering
        listed = await memory(client, action="list")
        assert [(r["label"], r["content"]) for r in listed["rules"]] == [("dup", "first")]
