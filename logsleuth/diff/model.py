"""What `logsleuth diff` hands its renderers: frozen data, already redacted and made inert.

Every string that came from a log went through `redact.redact_secrets` (or `redact_command`) and
`render.safety.clean` before it was put here, so no renderer can show a secret or an escape sequence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

DIFF_SCHEMA = "logsleuth.diff/1"

# The sections of a diff, in the order every format shows them: what most often explains a launch that broke
# first (the engine, the failure, the user's flags), the facts the log measured last.
Section = Literal["version", "failure", "flags", "env", "model", "gpu", "stages"]
SECTIONS: tuple[Section, ...] = ("version", "failure", "flags", "env", "model", "gpu", "stages")
SECTION_TITLES: dict[Section, str] = {
    "version": "Engine version",
    "failure": "Failure",
    "flags": "Flags (server_args, SGLang's defaults folded away)",
    "env": "Environment",
    "model": "Model",
    "gpu": "GPUs and memory",
    "stages": "Stages",
}
# added: only BAD has it; removed: only GOOD has it; changed: both, different values; renamed: a ServerArgs field
# one release renamed (the value may have changed too); slower/faster: a stage's duration; diverged: the first
# stage one launch reached and the other did not.
ChangeKind = Literal["added", "removed", "changed", "renamed", "slower", "faster", "diverged"]


@dataclass(frozen=True, slots=True)
class Change:
    """One difference between the two launches."""

    section: Section
    kind: ChangeKind
    name: str  # the flag (`--max-running-requests`), variable, fact or stage as GOOD names it
    good: str | None  # GOOD's value as shown (None: GOOD does not have it)
    bad: str | None
    new_name: str | None = None  # a rename: the name BAD's release gives it
    note: str = ""  # one line more: what the rename was, why the values are hidden, ...


@dataclass(frozen=True, slots=True)
class FailureSummary:
    """A launch's failure as `diagnose` names it."""

    pattern: str | None  # the pattern id; None when no pattern knows the failure
    title: str  # the pattern's title, or the exception line
    cause: str  # the root cause's first sentence, or the exception's message


@dataclass(frozen=True, slots=True)
class LaunchSummary:
    """One side of the diff."""

    source: str  # as the user named it
    launch: int  # 1-based number of the launch in its source
    launches: int  # how many launches the source holds
    engine: str | None
    version: str | None
    command: str | None  # redacted
    started: str | None  # the first time the launch logged
    reached: str | None  # the label of the last stage it reached
    failure: FailureSummary | None


@dataclass(frozen=True, slots=True)
class DiffReport:
    """GOOD against BAD: what changed, section by section."""

    good: LaunchSummary
    bad: LaunchSummary
    changes: tuple[Change, ...]
    notes: tuple[str, ...] = ()  # what could not be compared, and why

    @property
    def differs(self) -> bool:
        return bool(self.changes)

    def in_section(self, section: Section) -> tuple[Change, ...]:
        return tuple(change for change in self.changes if change.section == section)
