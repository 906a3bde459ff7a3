"""What a doctor check reports: one line of status, and one line of fix when there is something to do."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..redaction import redact

Status = Literal["ok", "warn", "fail", "skip"]
STATUSES: tuple[Status, ...] = ("ok", "warn", "fail", "skip")


@dataclass(frozen=True, slots=True)
class Check:
    """One doctor line. ``skip`` is neutral: a part that is not running or not configured, and
    need not be (the stack on the embedded default); it is never a failure."""

    name: str
    status: Status
    detail: str
    fix: str | None = None
    group: str = ""  # hardware | stack | engine
    data: dict = field(default_factory=dict)  # structured facts for --json and the TUI

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown check status {self.status!r}")
        # checks quote URLs and server answers; neither may carry a key out (see probe_core.redaction)
        object.__setattr__(self, "detail", redact(self.detail))
        if self.fix:
            object.__setattr__(self, "fix", redact(self.fix))

    def to_dict(self) -> dict:
        out = {"name": self.name, "status": self.status, "detail": self.detail, "fix": self.fix,
               "group": self.group}
        if self.data:
            out["data"] = self.data
        return out


def worst(checks: list[Check]) -> Status:
    """fail > warn > ok; a list of only skips is ok."""
    for status in ("fail", "warn"):
        if any(c.status == status for c in checks):
            return status  # type: ignore[return-value]
    return "ok"
