"""What can go wrong with the Docker stack, as ``ProbeError``s the edges print as one line.

(They live here rather than in ``probe_core.errors`` only because this package owns them; they
subclass the shared hierarchy, so ``except ProbeError`` at the edges catches them.)
"""
from __future__ import annotations

from ..errors import BackendUnavailable, ConfigError, ProbeError


class StackError(ProbeError):
    """The compose stack could not be planned, started, stopped or inspected."""


class DockerUnavailable(StackError, BackendUnavailable):
    """No Docker engine answers (not installed, not running, no permission, wrong DOCKER_HOST)."""


class ComposeNotFound(StackError):
    """No Docker Compose v2 to run (neither the `docker compose` plugin nor a compose binary)."""


class ComposeFailed(StackError):
    """`docker compose ...` ran and failed; the message carries its last error line."""


class StackNotReady(StackError):
    """Services did not become healthy: one exited, turned unhealthy, or the wait ran out."""


class StackConfigError(StackError, ConfigError):
    """A profile, flag or environment setting the stack cannot use."""
