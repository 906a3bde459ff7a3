"""What can stop an evaluation, each with a message a user can act on."""
from __future__ import annotations

from ..errors import ProbeError


class EvaluationError(ProbeError):
    """The evaluation cannot run (no history, nothing usable in it, a bad option)."""


class GitError(EvaluationError):
    """``git`` could not read the repository's history."""
