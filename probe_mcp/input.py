"""Input the MCP server refuses before any tool runs, each with an answer instead of silence.

* **Unreadable JSON-RPC lines.** The SDK's stdio transport turns a line it cannot parse into an
  exception on its read stream, and the session drops it with a debug log: the client never hears
  back, and a request with an id waits forever. JSON-RPC 2.0 (§5.1) wants ``-32700 Parse error``
  for invalid JSON and ``-32600 Invalid Request`` for JSON that is not a request. ``ReplyToUnreadable``
  sits between the transport and the session and writes that answer. When the id can still be read
  (a lone surrogate escape is valid JSON syntax but not text; a request with a malformed ``params``)
  the answer carries it, so the client's pending call ends instead of hanging.
* **Unknown tool arguments.** The SDK ignores argument names a tool does not declare, so an agent
  that writes ``limit`` for ``top_k`` silently gets the default. ``refuse_unknown_arguments`` (a
  server middleware) answers such a call with a tool error naming the arguments the tool takes,
  and turns the SDK's multi-line pydantic report of a wrongly typed argument into one line.
"""
from __future__ import annotations

import json
import logging
import re
from typing import Any

from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, CallToolResult, ErrorData, JSONRPCError, TextContent
from pydantic import ValidationError

log = logging.getLogger("probe.mcp")

_MAX_QUOTED = 80  # how much of an offending line an error message quotes


def error_reply(exc: Exception) -> JSONRPCError:
    """The JSON-RPC error answering a line the transport could not turn into a message."""
    raw = _raw_line(exc)
    if raw is not None:  # the text was not JSON the SDK accepts
        parsed = _lenient_json(raw)
        request_id = _request_id(parsed)
        if parsed is _UNPARSABLE:
            message = f"Parse error: not valid JSON: {_quote(raw)}"
        else:
            message = ("Parse error: the message is not valid Unicode text (a lone surrogate escape such as "
                       "\\ud800); send UTF-8 text")
        return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=PARSE_ERROR, message=message))
    request_id = next((rid for value in _inputs(exc) if (rid := _request_id(value)) is not None), None)
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(
        code=INVALID_REQUEST, message="Invalid Request: not a JSON-RPC 2.0 request, notification or response "
                                      "(expected an object with \"jsonrpc\": \"2.0\" and a \"method\" or a result)"))


class ReplyToUnreadable:
    """The session's read stream, minus the transport's parse failures, which are answered on
    ``write_stream`` instead (see the module docstring). Everything else passes through unchanged."""

    def __init__(self, read_stream: Any, write_stream: Any):
        self._read = read_stream
        self._write = write_stream

    @property
    def last_context(self):  # the SDK reads the sender's context from the stream it consumes
        return getattr(self._read, "last_context", None)

    async def receive(self):
        while True:
            item = await self._read.receive()
            if not isinstance(item, Exception):
                return item
            reply = error_reply(item)
            log.warning("answered an unreadable JSON-RPC line with %d: %s", reply.error.code, reply.error.message)
            await self._write.send(SessionMessage(reply))

    async def aclose(self) -> None:
        await self._read.aclose()

    def __aiter__(self):
        return self

    async def __anext__(self):
        from anyio import EndOfStream

        try:
            return await self.receive()
        except EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.aclose()


def refuse_unknown_arguments(list_tools):
    """A server middleware: a ``tools/call`` with argument names its tool does not declare gets a
    tool error (``isError``) listing them and the ones the tool takes. ``list_tools``: the server's
    own (async) tool listing, read once for the input schemas."""
    declared: dict[str, frozenset[str]] = {}

    async def middleware(ctx, call_next):
        params = ctx.params if ctx.method == "tools/call" else None
        if isinstance(params, dict) and isinstance(params.get("arguments"), dict):
            if not declared:
                declared.update((tool.name, frozenset((tool.input_schema or {}).get("properties") or ()))
                                for tool in await list_tools())
            known = declared.get(params.get("name"))  # an unknown tool is the SDK's to answer
            unknown = sorted(set(params["arguments"]) - known) if known is not None else []
            if unknown:
                names = ", ".join(repr(name)[:_MAX_QUOTED] for name in unknown[:10])
                takes = ", ".join(sorted(known)) or "no arguments"
                text = f"unknown argument(s) for {params['name']}: {names}; it takes {takes}"
                return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        result = await call_next(ctx)  # the tools/call answer, already in its wire form
        if isinstance(result, dict) and result.get("isError") and result.get("content"):
            first = result["content"][0]
            if isinstance(first, dict) and (line := one_line_validation_error(str(first.get("text", "")))):
                result = {**result, "content": [{**first, "text": line}, *result["content"][1:]]}
        return result

    return middleware


_VALIDATION_HEAD = re.compile(r"^Error executing tool (?P<tool>\S+): \d+ validation errors? for \S+\n")
_VALIDATION_ITEM = re.compile(r"^(?P<loc>\S[^\n]*)\n  (?P<msg>[^\n]*?)(?: \[type=[^,\]]+(?:, input_value=(?P<value>.*?), "
                              r"input_type=[^\]]+)?\])?\n(?:    For further information[^\n]*(?:\n|$))?", re.M)


def one_line_validation_error(text: str) -> str | None:
    """The SDK's "Error executing tool X: N validation errors for XArguments" (pydantic's multi-line
    report) as one line: ``invalid arguments for X: top_k: Input should be ... (got 1000)``; None
    for any other text."""
    head = _VALIDATION_HEAD.match(text)
    if head is None:
        return None
    parts = []
    for item in _VALIDATION_ITEM.finditer(text, head.end()):
        got = f" (got {item['value'][:_MAX_QUOTED]})" if item["value"] and item["msg"] != "Field required" else ""
        parts.append(f"{item['loc']}: {item['msg']}{got}")
    if not parts:
        return None
    return f"invalid arguments for {head['tool']}: " + "; ".join(parts)


_UNPARSABLE = object()


def _raw_line(exc: Exception) -> str | None:
    """The raw text of a line that failed as JSON (pydantic reports it as the input of a
    ``json_invalid`` error), else None."""
    if isinstance(exc, ValidationError):
        for err in exc.errors():
            if err.get("type") == "json_invalid" and isinstance(err.get("input"), str):
                return err["input"]
    return None


def _inputs(exc: Exception):
    if isinstance(exc, ValidationError):
        for err in exc.errors():
            yield err.get("input")


def _lenient_json(raw: str) -> object:
    """Python's parser accepts lone surrogate escapes, which tells "not JSON" from "not text"."""
    try:
        return json.loads(raw)
    except ValueError:
        return _UNPARSABLE


def _request_id(value: object) -> str | int | None:
    if isinstance(value, dict):
        rid = value.get("id")
        if isinstance(rid, str):
            return rid if rid.isprintable() and _encodes(rid) else None
        if isinstance(rid, int) and not isinstance(rid, bool):
            return rid
    return None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _quote(raw: str) -> str:
    text = raw.strip().encode("utf-8", "replace").decode("utf-8")
    return repr(text[:_MAX_QUOTED]) + ("…" if len(text) > _MAX_QUOTED else "")
