"""The case file as data: what a reader needs to diagnose one failure, and nothing else (issue 18).

Frozen, plain-typed dataclasses, so the JSON form is `dataclasses.asdict` plus a schema name.  Every string
here is already redacted and free of terminal escapes; renderers only lay it out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CASE_SCHEMA = "logsleuth.case/1"
# Characters: what fits a chat message with the log's own evidence in it (issue 28, item 6).  It was 12,000; on the
# 163 wild fixtures (real pastes' wordings) 4 then lost lines of the log itself (the earliest of its last lines,
# the middle of a failure region and of the error lines), the largest a 21 KB paste of interleaved vLLM workers;
# at 20,000 none loses a line of the log, and 311 of 343 fixture logs are shown whole (288 at 12,000).  About
# 5,000 to 7,000 tokens: well within what any assistant reads in one message.  --explain sends a case fitted to
# its own, smaller limit (explain.EXPLAIN_CASE_LIMIT): a small local model must still have room to answer.
CASE_LIMIT = 20_000

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
    """One frame of a failure, as the case file shows it."""
    file: str  # the module path (`sglang/srt/server_args.py`); the install prefix is said once, in Case.packages
    line: int | None
    function: str | None
    source: str | None
    in_app: bool


@dataclass(frozen=True)
class CaseException:
    """One exception of a failure's chain, as the case file shows it."""
    type: str
    message: tuple[str, ...]  # its lines
    frames: tuple[CaseFrame, ...]
    relation: str | None  # how it leads to the next one: "cause" | "context" | None
    frames_left_out: int = 0  # frames in the middle left out to fit (shown where they were)
    frames_left_out_at: int = 0  # index in `frames` where they were
    message_left_out: int = 0  # message lines left out at the end


@dataclass(frozen=True)
class PrimaryFailure:
    """The failure a case file is about: its kind, headline and chain."""
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
    """A flag of the release's catalog that the failure touches, and why it is listed."""
    flag: str  # as named (dashes included)
    reason: FlagReason
    given: str | None  # the value in the launch command; "" for a switch given; None: not given (or unknown)
    facts: tuple[FlagFacts, ...]  # one per catalog consulted
    elsewhere: tuple[str, ...] = ()  # shipped catalog versions that have it, when the consulted ones do not


@dataclass(frozen=True)
class ErrorLine:
    """An error-looking line of the log, as it first printed it, and how often it printed it."""

    text: str
    count: int


@dataclass(frozen=True)
class CaseDiagnosis:
    """What logsleuth concluded (models.Diagnosis): its own words, added to the log's, never in their place."""

    basis: str  # "pattern" | "rule" | "general"
    category: str
    title: str
    root_cause: str
    evidence: tuple[str, ...]  # the facts a rule used
    engine_says: tuple[tuple[str, str], ...]  # (who says it, the instruction with what logsleuth checked of it)


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
    # The log's own lines (case/window.py), the evidence: redacted, otherwise as the log printed them.
    paste: tuple[str, ...] = ()  # the whole log, when it fits: the failure region, error lines and tail are in it
    failure_lines: tuple[str, ...] = ()  # the failure region as the log printed it (after `lines_before`)
    failure_lines_left_out: int = 0  # lines in its middle left out to fit, where `failure_lines_cut_at` says
    failure_lines_cut_at: int = 0
    error_lines: tuple[ErrorLine, ...] = ()  # each error-looking line once, in order
    error_lines_left_out: int = 0  # distinct ones left out in the middle (beyond those read, or to fit)
    error_lines_cut_at: int = 0  # where in `error_lines` they were
    error_scope: str = ""  # what part of the log they were searched in
    tail: tuple[str, ...] = ()  # the log's last lines
    # logsleuth's own reading, added to the evidence: the first to go when the limit bites.
    diagnosis: CaseDiagnosis | None = None
    parsed_shown: bool = True  # the failure rebuilt in CPython's layout (`failure.chain`) is shown


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
    whole: tuple[str, ...] = ()  # every line of a small log (case/window.py WHOLE_BYTES)
    tail: tuple[str, ...] = ()  # the log's last lines
    errors: tuple[tuple[str, int], ...] = ()  # each error-looking line once, with how often it occurs, in order
    errors_left_out: int = 0  # distinct error-looking lines left out in the middle (beyond those kept)
    scope: str = ""  # what part of the log the error-looking lines were searched in
