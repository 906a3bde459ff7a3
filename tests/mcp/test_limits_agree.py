"""One limit per argument on every face: the MCP schema, the CLI flag and the engine agree, and a
filter value the engine rejects is an `isError` through MCP too (not an empty answer)."""
from __future__ import annotations

import pytest

from probe_cli.main import build_parser
from probe_core import Workspace, index_workspace, search
from probe_core.errors import ConfigError
from probe_core.intel import BadQuery, find_callers, map_code
from probe_core.limits import INTEL_DEPTH, MAP_DEPTH, MAX_RESULTS, MAX_TOKENS, QUERY, TOP_K

from .conftest import call, probe_mcp, wait_indexed

# (tool, argument) → (the bound, the CLI verb and flag that take the same value)
FACES = {
    ("search", "top_k"): (TOP_K, ["search", "q"], "--top-k"),
    ("search", "max_tokens"): (MAX_TOKENS, ["search", "q"], "--max-tokens"),
    ("map_code", "depth"): (MAP_DEPTH, ["map"], "--depth"),
    ("map_code", "max_tokens"): (MAX_TOKENS, ["map"], "--max-tokens"),
    ("find_callers", "depth"): (INTEL_DEPTH, ["callers", "f"], "--depth"),
    ("find_callers", "max_results"): (MAX_RESULTS, ["callers", "f"], "--max-results"),
    ("impact_analysis", "max_tokens"): (MAX_TOKENS, ["impact", "f"], "--max-tokens"),
}


@pytest.mark.parametrize("key", FACES, ids=lambda k: f"{k[0]}.{k[1]}")
def test_the_cli_flag_takes_exactly_the_bound(key):
    bound, verb, flag = FACES[key]
    parser = build_parser()
    assert getattr(parser.parse_args([*verb, flag, str(bound.high)]), flag[2:].replace("-", "_")) == bound.high
    for outside in (bound.low - 1, bound.high + 1):
        with pytest.raises(SystemExit):
            parser.parse_args([*verb, flag, str(outside)])


def test_the_cli_refuses_a_query_over_the_bound_in_one_line(capsys):
    parser = build_parser()
    assert parser.parse_args(["search", "q" * QUERY.high]).query == "q" * QUERY.high
    with pytest.raises(SystemExit):
        parser.parse_args(["search", "q" * (QUERY.high + 1)])
    assert "query is 4,001 characters; at most 4,000 are accepted" in capsys.readouterr().err


def test_the_engine_enforces_the_same_bounds(repo):
    ws = Workspace.open(repo)
    index_workspace(ws, dense=False)
    try:
        assert len(search(ws, "handler", top_k=TOP_K.high).results) > 0
        assert search(ws, "h" * QUERY.high, top_k=1).status  # the longest query is still a query
        with pytest.raises(ConfigError, match="query is 100,000 characters; at most 4,000"):
            search(ws, "handler " * 12_500)  # was answered "healthy" with whatever BM25 matched
        with pytest.raises(ConfigError, match="top_k must be an integer from 1 to 50"):
            search(ws, "handler", top_k=TOP_K.high + 1)  # the CLI allowed 100 while MCP stopped at 50
        with pytest.raises(BadQuery, match="depth must be an integer from 1 to 5"):
            find_callers(ws, "hash_password", depth=INTEL_DEPTH.high + 1)  # was silently clamped to 5
        with pytest.raises(BadQuery, match="max_tokens"):
            map_code(ws, max_tokens=MAX_TOKENS.low - 1)
    finally:
        ws.close()


@pytest.mark.asyncio
async def test_mcp_schemas_declare_the_bounds_and_filters_reject_unknown_values(repo):
    async with probe_mcp(repo) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for (tool, arg), (bound, _, _) in FACES.items():
            prop = tools[tool].input_schema["properties"][arg]
            assert (prop["minimum"], prop["maximum"]) == (bound.low, bound.high), (tool, arg)
        assert tools["search"].input_schema["properties"]["query"]["maxLength"] == QUERY.high

        await wait_indexed(client)
        ok = await call(client, "search", {"query": "parse header line", "filters": {"languages": ["Python"]}})
        assert not ok.is_error and ok.structured_content["results"]
        assert {r["language"] for r in ok.structured_content["results"]} == {"python"}
        bad = await call(client, "search", {"query": "x", "filters": {"languages": ["cobol"]}})
        assert bad.is_error and "unknown language 'cobol'" in bad.content[0].text
        long = await call(client, "search", {"query": "handler " * 12_500})
        assert long.is_error and "query" in long.content[0].text and "4000" in long.content[0].text
        assert "\n" not in long.content[0].text.strip()
        glob = await call(client, "search", {"query": "x", "filters": {"include_globs": ["src/[a"]}})
        assert glob.is_error and "without its ']'" in glob.content[0].text
