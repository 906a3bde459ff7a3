"""Probe's MCP face: ``probe mcp`` serves the engine to coding agents over stdio (``probe_mcp.server.run_stdio``).

``tools`` holds the one table of tools, ``render`` their text answers, ``schemas`` their output models,
``instructions.md`` what an agent reads at ``initialize``. The face imports the engine (``probe_core``),
never the reverse.
"""
