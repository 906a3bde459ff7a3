"""``probe mcp``: the MCP stdio server. It registers the tool table (``tools``) over an ``Engine``.

Whether this process indexes (owner) or forwards to another ``probe mcp`` on the same repository
(attached) is the engine's business (``probe_core/engine``); tools look the same either way.

Startup stays fast: the engine, and with it the heavy imports (onnxruntime, Qdrant Edge,
tree-sitter), starts in the server's lifespan, after the stdio transport owns the real stdout,
and does its work on background threads while ``initialize`` and ``tools/list`` are answered.

Stdout carries protocol messages only: from the first line of ``run_stdio`` fd 1 points at stderr
and the wire lives on a private duplicate that only the SDK's stdio transport writes to
(``_StdoutGuard``), so stray prints from any library, Python or C, land on stderr. Logs go to
stderr and ``.probe/logs/probe-mcp.log``.
"""
from __future__ import annotations

import logging
import logging.handlers
import os
import signal
import sys
from collections.abc import Callable
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer

from probe_core import environment, package_version
from probe_core.errors import ProbeError
from probe_core.private_dir import ensure_private_dir
from probe_core.redaction import RedactingFilter

from .input import ReplyToUnreadable, refuse_unknown_arguments
from .tools import EngineSlot, call, table

log = logging.getLogger("probe.mcp")

MEMORY_RESOURCE = "probe://memory/rules"


def instructions_text() -> str:
    """What an agent reads at ``initialize`` (``instructions.md``, shipped in the package)."""
    return resources.files(__package__).joinpath("instructions.md").read_text(encoding="utf-8").removesuffix("\n")


def memory_instructions(root: Path | None, *, max_chars: int = 3000) -> str:
    """A short "Memory rules" section for the server instructions, read straight from the stores
    (cheap SQLite reads); "" when there are none or they cannot be read."""
    if root is None:
        return ""
    try:
        from probe_core.memory.rules import RuleStore, render_rules_markdown

        rules = RuleStore(root).list()
        if not rules:
            return ""
        text = render_rules_markdown(rules, heading="Memory rules (follow these; manage them with the memory tool):")
    except Exception:
        log.warning("could not read the memory rules for the instructions", exc_info=True)
        return ""
    if len(text) > max_chars:
        text = text[:max_chars].rsplit("\n", 1)[0] + f"\n… (more: read {MEMORY_RESOURCE})"
    return text


def build_server(engine_factory: Callable[[], object], *, default_max_tokens: int = 6000,
                 root: Path | None = None, libraries_factory: Callable[[], object] | None = None) -> MCPServer:
    """The MCP server: every entry of the tool table, and the memory-rules resource.
    ``engine_factory`` runs in the lifespan (after the transport is up); ``root`` (optional) puts the
    workspace's memory rules into the instructions; ``libraries_factory`` (optional) starts the
    reference libraries' ``LibraryPool``."""
    slot = EngineSlot(engine_factory, libraries_factory)

    @asynccontextmanager
    async def lifespan(_server):
        slot.engine = await anyio.to_thread.run_sync(slot.factory)
        if slot.libraries_factory is not None:
            slot.libraries = await anyio.to_thread.run_sync(slot.libraries_factory)
        try:
            yield {}
        finally:
            await anyio.to_thread.run_sync(slot.close)

    instructions = instructions_text()
    if rules_text := memory_instructions(root):
        instructions += "\n\n" + rules_text
    server = MCPServer(name="probe", version=package_version(), instructions=instructions, lifespan=lifespan,
                       log_level="WARNING")
    server.probe_engine_slot = slot  # run_stdio closes the engine on SIGTERM
    server.middleware.append(refuse_unknown_arguments(server.list_tools))
    for tool in table(default_max_tokens):
        server.add_tool(tool.function(slot), name=tool.name, title=tool.title, description=tool.description,
                        annotations=tool.annotations)

    @server.resource(MEMORY_RESOURCE, name="memory-rules", title="Memory rules", mime_type="text/markdown",
                     description="The user's global and this repository's memory rules, as markdown.")
    def memory_rules() -> str:
        from probe_core.memory.rules import render_rules_markdown

        out = call(slot.get().memory, "list", {})
        return render_rules_markdown(out["rules"])

    return server


def find_root(start: Path) -> Path:
    """The workspace for a server started without ``--root``: the nearest directory at or above
    ``start`` that has a Probe index, else the nearest git repository, else ``start``."""
    start = start.resolve()
    for marker in (Path(".probe") / "config.json", Path(".git")):
        for d in (start, *start.parents):
            if (d / marker).exists():
                return d
    return start


def configure_logging(root: Path) -> None:
    """Probe's logs to stderr and a rotating ``.probe/logs/probe-mcp.log``; never to stdout."""
    level = environment.get("PROBE_LOG", "INFO").upper()
    fmt = logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s")
    handlers: list[logging.Handler] = []
    try:
        log_dir = root / ".probe" / "logs"
        ensure_private_dir(log_dir.parent)
        log_dir.mkdir(exist_ok=True)
        handlers.append(logging.handlers.RotatingFileHandler(log_dir / "probe-mcp.log", maxBytes=2_000_000,
                                                             backupCount=3, encoding="utf-8"))
    except OSError as exc:
        print(f"probe: cannot write logs under {root / '.probe'}: {exc}", file=sys.stderr)
    handlers.append(logging.StreamHandler(sys.stderr))
    probe_log = logging.getLogger("probe")
    for h in handlers:
        h.setFormatter(fmt)
        h.addFilter(RedactingFilter())
        probe_log.addHandler(h)
    probe_log.setLevel(level)
    probe_log.propagate = False


class _StdoutGuard:
    """Keep everything but the MCP transport off the real stdout, from the first line on.

    fd 1 is pointed at stderr at once (C libraries, child processes); the wire lives on a private
    duplicate. ``sys.stdout`` is stderr except while the SDK's ``stdio_server`` starts: it takes
    the stream it will serve from ``sys.stdout`` at that moment, so ``wire()`` hands it the private
    duplicate and ``seal()`` (first thing in the lifespan, once it has it) takes it back.
    """

    def __init__(self):
        import io

        self._wire = io.TextIOWrapper(io.FileIO(os.dup(1), "wb", closefd=True), encoding="utf-8",
                                      write_through=True)
        os.dup2(2, 1)
        sys.stdout = sys.stderr

    def wire(self) -> None:
        sys.stdout = self._wire

    def seal(self) -> None:
        sys.stdout = sys.stderr


async def _serve_stdio(server: MCPServer) -> None:
    """``MCPServer.run_stdio_async``, with unreadable JSON-RPC lines answered (``mcp_input``) rather
    than dropped: the SDK offers no hook for that, so the low-level server is driven directly."""
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server
    async with stdio_server() as (read_stream, write_stream):
        await lowlevel.run(ReplyToUnreadable(read_stream, write_stream), write_stream,
                           lowlevel.create_initialization_options())


def run_stdio(root: Path | None = None) -> int:
    """Serve MCP over stdin/stdout for ``root`` until the client disconnects."""
    from probe_core.engine import EngineSettings, open_engine
    from probe_core.scan import refuse_git_internals

    guard = _StdoutGuard()
    root = Path(root).expanduser().resolve() if root else find_root(Path.cwd())
    if not root.is_dir():
        raise ProbeError(f"{root} is not a directory")
    refuse_git_internals(root)  # a bare repository or .git/: refused before .probe/logs is made in it
    configure_logging(root)
    settings = EngineSettings.from_env()

    def start_engine():
        guard.seal()
        return open_engine(root, settings=settings)

    def start_libraries():
        from probe_core.libraries.pool import LibraryPool

        return LibraryPool(settings).start()  # opens each library's engine in the background

    server = build_server(start_engine, default_max_tokens=settings.default_max_tokens, root=root,
                          libraries_factory=start_libraries)
    log.info("probe mcp starting for %s (pid %d)", root, os.getpid())
    from probe_core.config import user_data_dir_problem

    if problem := user_data_dir_problem():  # said at start, not when the first global rule fails
        log.warning("%s", problem)

    def _terminate(signum, _frame):
        # A client stopping us. The transport's stdin reader sits in a thread that cancellation
        # cannot reach, so close the engine (flush the index, drop the owner lock) right here.
        log.info("signal %d: shutting down", signum)
        try:
            server.probe_engine_slot.close()
        except Exception:
            log.exception("closing the engines failed")
        logging.shutdown()
        os._exit(0)

    signal.signal(signal.SIGTERM, _terminate)
    # Ctrl-C, or a client that interrupts its server: the same clean exit. Left to Python, SIGINT
    # raised KeyboardInterrupt inside the event loop, which stopped answering while the stdin reader
    # thread kept the process alive.
    signal.signal(signal.SIGINT, _terminate)
    guard.wire()
    try:
        anyio.run(_serve_stdio, server)
    except KeyboardInterrupt:
        pass
    except BaseExceptionGroup as group:
        # the client closed its end with answers still on their way: it left, which is how a stdio
        # server's life ends, not an internal error; anything else in the group still is one
        rest = group.split(_CLIENT_GONE)[1]
        if rest is not None:
            raise rest
        log.info("the client went away with calls in flight; shutting down")
        try:  # the lifespan may not have got to it: flush the index, drop the owner lock, stop the
            server.probe_engine_slot.close()  # native threads before the interpreter exits
        except Exception:
            log.exception("closing the engines failed")
    finally:
        guard.seal()
    return 0


_CLIENT_GONE = (BrokenPipeError, ConnectionResetError, anyio.BrokenResourceError, anyio.ClosedResourceError)
