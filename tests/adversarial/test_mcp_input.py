"""Hostile MCP input against a real `probe mcp`: every tool with generated wrong, missing, unknown,
huge and odd arguments; malformed JSON-RPC lines; calls before `initialize`; 200 concurrent calls;
clients that disconnect mid-call. Always a tool error or a protocol error, never a crash or a hang,
and the server answers the next call.

The generated arguments go through the MCP SDK's stdio client (what editors use). Lone surrogates
cannot be sent that way (the client refuses to encode them), so they are written as raw JSON-RPC
lines, like the other malformed input, by ``RawServer``.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import anyio
import pytest
from anyio.from_thread import start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import REPO_FILES, RawServer, call, probe_mcp, search, status, tally, wait_indexed, write_tree

CALL_TIMEOUT_S = 60  # a call that takes longer counts as a hang
EXAMPLES_PER_TOOL = int(os.environ.get("PROBE_FUZZ_EXAMPLES", "100"))
FUZZ = settings(max_examples=EXAMPLES_PER_TOOL, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])


class Bridge:
    """A connected SDK client living on a background event loop, callable from sync test code
    (hypothesis drives plain functions)."""

    def __init__(self, portal, client):
        self.portal, self.client = portal, client

    def call(self, tool: str, args: dict):
        async def bounded():
            with anyio.fail_after(CALL_TIMEOUT_S):
                return await call(self.client, tool, args)
        return self.portal.call(bounded)

    def alive(self) -> dict:
        r = self.call("index_status", {})
        assert not r.is_error, r.content[0].text
        return r.structured_content


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = write_tree(tmp_path_factory.mktemp("fuzz") / "repo", REPO_FILES)
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(probe_mcp(root)) as client:
            portal.call(wait_indexed, client)
            bridge = Bridge(portal, client)
            tools = portal.call(client.list_tools).tools
            bridge.schemas = {t.name: t.input_schema for t in tools}
            yield bridge


# --- generated arguments -----------------------------------------------------------------------
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)  # no lone surrogates
HOSTILE_STRINGS = st.sampled_from([
    "", " ", "\0", "a\0b", "../../../../etc/passwd", "/etc/passwd", "~/.ssh/id_rsa", ".git/config",
    ".probe/config.json", "src/../../outside", "x" * 1_000_000, "é" * 300_000, "\u202e\ufeff\u200b", "🦀" * 1000,
    "src/auth/passwords.py#L1-L99999999999", "*", "**/*", "[", "{a,b", "Router.route", "%s%s%n", "\\x00",
    "library:../../x#L1", "library:docs/../../../etc/passwd#L1-L2", "a" * 5000 + "/b", "CON", "\n\n\n",
])
NUMBERS = st.one_of(st.integers(min_value=-(2**70), max_value=2**70), st.sampled_from([0, -1, 2**31, 2**63, -2**63]),
                    st.floats(allow_nan=False, allow_infinity=False))
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, TEXT, HOSTILE_STRINGS)
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                              st.dictionaries(TEXT, inner, max_size=4)), max_leaves=8)


def _valid_value(prop: dict):
    """A value of the type a property declares (so calls get past validation and into the engine)."""
    kinds = {s.get("type") for s in prop.get("anyOf", [prop])}
    if "enum" in prop:
        return st.sampled_from(prop["enum"])
    options = []
    if "string" in kinds:
        options.append(st.one_of(TEXT, HOSTILE_STRINGS))
    if "integer" in kinds:
        lo, hi = prop.get("minimum", -(2**40)), prop.get("maximum", 2**40)
        options.append(st.integers(min_value=lo, max_value=hi))
    if "boolean" in kinds:
        options.append(st.booleans())
    if "array" in kinds:
        options.append(st.lists(st.one_of(TEXT, HOSTILE_STRINGS), max_size=3))
    if "object" in kinds or "$ref" in json.dumps(prop):
        options.append(st.dictionaries(st.sampled_from(["languages", "chunk_kinds", "include_globs", "exclude_globs",
                                                        "branch", "collections", "libraries", "bogus"]),
                                       st.one_of(st.lists(st.one_of(TEXT, HOSTILE_STRINGS), max_size=3), TEXT,
                                                 HOSTILE_STRINGS, NUMBERS), max_size=4))
    return st.one_of(*options) if options else JSON_VALUES


@st.composite
def arguments(draw, schema: dict) -> dict:
    """Arguments for one tool. Half the examples are well-typed (required ones present, values of
    the declared types, hostile strings and numbers among them) so they reach the engine; the other
    half mix in wrong types, missing required fields and unknown names."""
    props = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    well_typed = draw(st.booleans())
    args = {}
    for name, prop in props.items():
        if well_typed:
            if name in required or draw(st.booleans()):
                args[name] = draw(_valid_value(prop))
            continue
        choice = draw(st.sampled_from(["valid", "hostile", "omit"]))
        if choice == "valid":
            args[name] = draw(_valid_value(prop))
        elif choice == "hostile":
            args[name] = draw(JSON_VALUES)
    if not well_typed and draw(st.integers(0, 4)) == 0:
        args[draw(st.sampled_from(["bogus", "limit", "Query", "\0", "x" * 300]))] = draw(JSON_VALUES)
    return args


TOOLS = ["search", "open_file", "index_status", "map_code", "find_callers", "find_callees", "find_references",
         "find_implementations", "impact_analysis", "memory", "store"]


def _check(result, tool: str, args: dict) -> None:
    """A tool answer or a tool error with one clear line, nothing else."""
    if result.is_error:
        text = result.content[0].text if result.content else ""
        assert text.strip(), f"{tool}: an error with no message for {args!r:.300}"
        assert "\n" not in text.strip(), f"{tool}: a multi-line error for {args!r:.300}:\n{text}"
        assert "Traceback" not in text
        assert len(text) < 2000, f"{tool}: a {len(text)}-character error (echoing the input?)"
    else:
        assert result.structured_content is not None, f"{tool}: no structured content for {args!r:.300}"


@pytest.mark.parametrize("tool", TOOLS)
def test_every_tool_answers_generated_arguments(server, tool):
    schema = server.schemas[tool]
    counts = {"ok": 0, "error": 0}

    @FUZZ
    @given(args=arguments(schema))
    def one(args):
        if tool == "store" and isinstance(args.get("library_name"), str):
            args["library_name"] = args["library_name"][:3] + "-lib"  # at most a few libraries get made
        result = server.call(tool, args)
        _check(result, tool, args)
        counts["error" if result.is_error else "ok"] += 1

    one()
    server.alive()  # and the server still answers
    tally("mcp.generated_calls", sum(counts.values()))
    tally("mcp.generated_calls_tool_error", counts["error"])
    assert sum(counts.values()) >= EXAMPLES_PER_TOOL


def test_wrong_types_missing_and_unknown_fields_are_one_line_errors(server):
    cases = [
        ("search", {}, "query: Field required"),
        ("search", {"query": 5}, "query: Input should be a valid string"),
        ("search", {"query": "x", "top_k": -1}, "top_k: Input should be greater than or equal to 1"),
        ("search", {"query": "x", "top_k": 10**12}, "top_k: Input should be less than or equal to 50"),
        ("search", {"query": "x", "limit": 3}, "unknown argument(s) for search: 'limit'"),
        ("open_file", {"path": "src/a.py", "start_line": "ten"}, "start_line"),
        ("open_file", {"path": "x" * 100_000}, "cannot read it (File name too long)"),
        ("impact_analysis", {"symbol": "hash_password", "depth": 10**9}, "depth: Input should be less than"),
        ("find_callers", {"symbol": "x" * 1_000_000}, "(message cut)"),  # a 1 MB name echoed back, cut short
        ("memory", {"action": "explode"}, "action: Input should be"),
        ("store", {"content": "a\0b", "library_name": "docs"}, "NUL byte"),
        ("index_status", {"verbose": True}, "unknown argument(s) for index_status: 'verbose'; it takes no arguments"),
    ]
    for tool, args, expected in cases:
        r = server.call(tool, args)
        assert r.is_error and expected in r.content[0].text, (tool, args, r.content[0].text)
        _check(r, tool, args)
    tally("mcp.named_bad_inputs", len(cases))
    server.alive()


# --- raw JSON-RPC lines ------------------------------------------------------------------------
@pytest.fixture
def raw(tmp_path):
    root = write_tree(tmp_path / "repo", REPO_FILES)
    server = RawServer(root)
    yield server
    assert server.close() == 0  # it exits cleanly at end of input, whatever it was sent


NOT_JSON = st.text(alphabet=st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=200)\
    .filter(lambda s: not _parses(s))
NOT_A_MESSAGE = st.one_of(
    st.integers().map(json.dumps), st.lists(st.integers(), max_size=3).map(json.dumps), TEXT.map(json.dumps),
    st.fixed_dictionaries({"jsonrpc": st.sampled_from(["1.0", "3", 2]), "id": st.integers(0, 10**6),
                           "method": st.just("ping")}).map(json.dumps),
    st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "id": st.integers(0, 10**6),
                           "params": st.dictionaries(TEXT, st.integers(), max_size=2)}).map(json.dumps),
)


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def test_malformed_lines_get_parse_errors_and_the_next_call_is_answered(raw):
    raw.initialize()
    lines = {"not json": 0, "not a message": 0}

    @settings(max_examples=4 * EXAMPLES_PER_TOOL, deadline=None, database=None, derandomize=True)
    @given(line=st.one_of(NOT_JSON.map(lambda s: ("not json", s)), NOT_A_MESSAGE.map(lambda s: ("not a message", s))))
    def one(line):
        kind, text = line
        raw.send(text)
        reply = raw.recv()
        assert reply is not None, f"no answer to {text!r:.200}"
        want = -32700 if kind == "not json" else -32600
        assert reply["error"]["code"] == want, (text, reply)
        if kind == "not a message" and '"id": ' in text and '"jsonrpc": "2.0"' in text:
            assert reply["id"] == json.loads(text)["id"]  # the caller's pending request ends
        lines[kind] += 1

    one()
    assert raw.request(1, "ping") == {"jsonrpc": "2.0", "id": 1, "result": {}}
    tally("jsonrpc.malformed_lines", sum(lines.values()))


def test_invalid_bytes_and_lone_surrogates(raw):
    raw.initialize()
    call_ = {"jsonrpc": "2.0", "method": "tools/call"}
    cases = [
        (b"\xff\xfe\x00garbage", -32700, None),
        (b'{"jsonrpc":"2.0","id":3,', -32700, None),
        (json.dumps({**call_, "id": 5, "params": {"name": "search", "arguments": {"query": "\ud800 x"}}}), -32700, 5),
        (json.dumps({**call_, "id": 6, "params": {"name": "open_file", "arguments": {"path": "\udfff"}}}), -32700, 6),
        (json.dumps({**call_, "id": 7, "params": "not an object"}), -32600, 7),
    ]
    for line, code, rid in cases:
        raw.send(line)
        reply = raw.recv()
        assert reply is not None and reply["error"]["code"] == code and reply["id"] == rid, (line, reply)
    # a non-UTF-8 byte inside a string is replaced (U+FFFD), not fatal: the call is answered
    raw.send(b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"index_status","arguments":{}}}'
             .replace(b"index_status", b"index_status\xff"))
    reply = raw.recv()
    assert reply["id"] == 8 and ("error" in reply or reply["result"]["isError"])
    assert raw.request(9, "ping")["result"] == {}
    tally("jsonrpc.malformed_lines", len(cases) + 1)


def test_calls_before_initialize_are_refused_and_initialize_still_works(raw):
    for rid, method, params in [(1, "tools/call", {"name": "index_status", "arguments": {}}), (2, "tools/list", None),
                                (3, "resources/read", {"uri": "probe://memory/rules"})]:
        reply = raw.request(rid, method, params)
        assert reply["id"] == rid and "error" in reply, reply
    raw.initialize()
    reply = raw.request(4, "tools/call", {"name": "index_status", "arguments": {}})
    assert reply["id"] == 4 and "result" in reply
    tally("jsonrpc.calls_before_initialize", 3)


# --- concurrency and disconnects ---------------------------------------------------------------
def test_200_concurrent_calls_all_answer_like_single_calls(tmp_path):
    root = write_tree(tmp_path / "repo", REPO_FILES)
    queries = ["hash a password with a salt", "route requests to handlers", "parse http header lines",
               "limit concurrent requests", "server port configuration"]

    async def scenario():
        async with probe_mcp(root) as client:
            await wait_indexed(client)
            alone = {q: [r["source"] for r in (await search(client, q))["results"]] for q in queries}
            calls = []
            for i in range(200):
                q = queries[i % len(queries)]
                calls.append(("search", {"query": q}) if i % 4 == 0 else
                             ("open_file", {"path": "src/auth/passwords.py#L1-L10"}) if i % 4 == 1 else
                             ("find_callers", {"symbol": "hash_password"}) if i % 4 == 2 else ("index_status", {}))
            results: list = [None] * len(calls)

            async def one(i, tool, args):
                results[i] = await call(client, tool, args)

            with anyio.fail_after(240):
                async with anyio.create_task_group() as tg:
                    for i, (tool, args) in enumerate(calls):
                        tg.start_soon(one, i, tool, args)
            for (tool, args), r in zip(calls, results, strict=True):
                assert not r.is_error, (tool, r.content[0].text)
                if tool == "search":
                    assert [x["source"] for x in r.structured_content["results"]] == alone[args["query"]]
            st_ = await status(client)
            assert st_["watcher_running"] is True

    anyio.run(scenario)
    tally("mcp.concurrent_calls_held", 200)


def test_a_client_that_disconnects_mid_call(tmp_path):
    """The owner's client vanishes during a call: the server exits cleanly (lock released, index
    intact) and the next `probe mcp` answers. An attached process's client vanishing mid-call
    leaves the owner serving."""
    root = write_tree(tmp_path / "repo", REPO_FILES)
    first = RawServer(root)
    first.initialize()
    assert "result" in first.request("warm", "tools/call", {"name": "index_status", "arguments": {}})
    for i in range(5):  # calls in flight, then the client is gone
        first.send(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                               "params": {"name": "search", "arguments": {"query": "password " * 2000}}}))
    first.proc.stdin.close()
    first.proc.stdout.close()
    assert first.proc.wait(timeout=60) == 0

    owner = RawServer(root)
    owner.initialize()
    attached = RawServer(root)
    attached.initialize()
    deadline = time.monotonic() + 60
    while True:  # the second server attaches to the first
        st_ = attached.request("st", "tools/call", {"name": "index_status", "arguments": {}})
        if st_["result"]["structuredContent"].get("role") == "attached" or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert st_["result"]["structuredContent"]["role"] == "attached"
    attached.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                              "params": {"name": "search", "arguments": {"query": "salted hash " * 2000}}}))
    attached.proc.send_signal(signal.SIGKILL)  # the attached side dies with the call in flight
    attached.proc.wait(timeout=10)
    reply = owner.request(2, "tools/call", {"name": "search", "arguments": {"query": "hash a password"}})
    assert reply["result"]["isError"] is False and reply["result"]["structuredContent"]["results"]
    assert owner.close() == 0
    tally("mcp.disconnects_mid_call", 2)


def test_an_rpc_peer_that_hangs_up_mid_request(tmp_path):
    """Raw connections to the owner's socket: half a line, garbage, a request then a hang-up."""
    import socket

    root = write_tree(tmp_path / "repo", REPO_FILES)
    owner = RawServer(root)
    owner.initialize()
    owner.request("st", "tools/call", {"name": "index_status", "arguments": {}})
    info = json.loads((root / ".probe" / "engine.json").read_text())
    payloads = [b'{"v": 1, "method": "search", "par', b"\xff\xfe garbage\n", b"[1, 2]\n",
                b'{"v": 1, "method": "search", "params": {"query": "x"}}\n', b'{"v": 99, "method": "ping"}\n',
                b'{"v": 1, "method": "search", "params": {"query": 5}}\n', b'{"v": 1, "method": "no_such"}\n']
    for payload in payloads:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(info["socket"])
            s.sendall(payload)
    with socket.socket(socket.AF_UNIX) as s:  # and it still answers properly
        s.connect(info["socket"])
        s.sendall(b'{"v": 1, "method": "search", "params": {"query": 5}}\n')
        answer = json.loads(s.makefile("rb").readline())
        assert "error" in answer and answer["error"]["message"]
    reply = owner.request(3, "tools/call", {"name": "search", "arguments": {"query": "hash a password"}})
    assert reply["result"]["isError"] is False
    assert owner.close() == 0
    tally("rpc.hostile_connections", len(payloads))
