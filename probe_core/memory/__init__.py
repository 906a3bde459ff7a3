"""Project memory: identity, behavioral rules, and the registry of workspaces (when each was last
seen: ``workspaces``, ``workspaces_server``, ``seen``; ``probe_core.registry`` prunes by it)."""
