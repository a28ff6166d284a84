"""The case file as data: what a reader needs to diagnose one failure, and nothing else (issue 18).

Frozen, plain-typed dataclasses, so the JSON form is `dataclasses.asdict` plus a schema name.  Every string
here is already redacted and free of terminal escapes; renderers only lay it out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CASE_SCHEMA = "logsleuth.case/1"
CASE_LIMIT = 12_000  # characters: what fits a chat message

# Why a flag is in the case file, strongest first: the trimmer drops the weakest reasons first.
FlagReason = Literal["named in the failure", "in logsleuth's fix", "related, in the launch command", "named just before"]
FLAG_REASONS: tuple[FlagReason, ...] = (
    "named in the failure",
    "in logsleuth's fix",
    "related, in the launch command",
    "named just before",
)


@dataclass(frozen=True)
class CaseFrame:
    file: str  # the module path (`sglang/srt/server_args.py`); the install prefix is said once, in Case.packages
    line: int | None
    function: str | None
    source: str | None
    in_app: bool


@dataclass(frozen=True)
class CaseException:
    type: str
    message: tuple[str, ...]  # its lines
    frames: tuple[CaseFrame, ...]
    relation: str | None  # how it leads to the next one: "cause" | "context" | None
    frames_left_out: int = 0  # frames in the middle left out to fit (shown where they were)
    frames_left_out_at: int = 0  # index in `frames` where they were
    message_left_out: int = 0  # message lines left out at the end


@dataclass(frozen=True)
class PrimaryFailure:
    kind: str  # models.FailureKind
    headline: str  # "Type: first message line"
    chain: tuple[CaseException, ...]  # oldest first; the last one ended the process
    header: str | None  # the log's own words before the traceback ("Scheduler hit an exception:")
    timestamp: str | None
    count: int
    ranks: tuple[str, ...]
    hosts: tuple[str, ...]
    truncated: bool  # the log shows only part of the traceback


@dataclass(frozen=True)
class FlagFacts:
    """One flag in one catalog version."""

    version: str
    present: bool
    choices: tuple[str, ...] = ()
    default: str = ""  # repr of the argparse default ("None", "False", "'auto'", "0.9")
    switch: bool = False  # takes no value
    deprecated: bool = False
    renamed_to: str | None = None


@dataclass(frozen=True)
class FlagRow:
    flag: str  # as named (dashes included)
    reason: FlagReason
    given: str | None  # the value in the launch command; "" for a switch given; None: not given (or unknown)
    facts: tuple[FlagFacts, ...]  # one per catalog consulted
    elsewhere: tuple[str, ...] = ()  # shipped catalog versions that have it, when the consulted ones do not


@dataclass(frozen=True)
class Case:
    """Everything a reader needs to diagnose the primary failure of a report."""

    engine: str | None
    engine_version: str | None
    version_origin: str  # where the version came from, in words
    catalogs: tuple[str, ...]  # the catalog versions the flag rows come from
    catalog_note: str  # how they were chosen
    failure: PrimaryFailure | None  # None: the log holds no failure
    known_pattern: str | None  # "id: title" when a bundled pattern matched
    cascade: tuple[str, ...]  # what followed, summarised (other failure groups, then cascade log lines)
    launch_command: str | None
    launch_origin: str | None  # "the log" | "--cmd" | "rebuilt from server_args"
    server_args: tuple[tuple[str, str], ...]  # non-default server_args fields, when no command is known
    gpu_facts: tuple[str, ...]  # log lines that state GPU or memory facts
    lines_before: tuple[str, ...]  # the log lines just before the failure
    lines_before_origin: str  # where they came from, in words
    flags: tuple[FlagRow, ...]
    packages: str | None  # the directory the engine's frames were installed under
    sources: tuple[str, ...]
    left_out: tuple[str, ...] = ()  # what was dropped to fit the limit, in words
    limit: int = CASE_LIMIT


@dataclass(frozen=True)
class LogWindow:
    """What the case reads from the log around the failure, besides the report: the lines just before it and
    the lines that state GPU and memory facts.  `origin` says where they came from."""

    before: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()
    origin: str = ""
    failure: tuple[str, ...] = ()  # the failure's own lines, as the log printed them (a drafted pattern's fixture)
    # The first line that shows the engine (SGLang's `[… TP0]` header, a banner), when it is not among `before`:
    # a drafted engine pattern's fixture needs it to fire (issue 28: a log that shows no engine gets no fix).
    opening: str = ""
