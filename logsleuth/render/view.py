"""What every renderer shows, decided once, in the order a reader needs it: the answer first (a headline
saying what died and where, the root cause, the fix, the corrected command), then the evidence (frames, log
lines, what followed).

Renderers only lay this out, so the formats agree.  Every log-derived string here has already been through
`safety.clean` (no escape sequences, no control characters, one line, clipped with a note of how much was
cut); pattern prose (root cause, fix summaries, steps) is cleaned but never clipped.  Each renderer still
applies its own format's escaping.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from logsleuth.lazyre import compile_lazily
from logsleuth.models import (
    Diagnosis,
    ExceptionBlock,
    Failure,
    FailureGroup,
    Fix,
    FlagOp,
    Fleet,
    FleetMember,
    Frame,
    LaunchInfo,
    Report,
    SourceInfo,
)
from logsleuth.reasoning.wrapper_death import actor_death_headline
from logsleuth.render.safety import clean, clean_lines, quote_shell_word, strip_controls
from logsleuth.render.search_words import search_text

RELATION_TEXT = {
    "cause": "the above was the direct cause of:",
    "context": "while handling the above, another exception occurred:",
}
MAX_APP_FRAMES = 8
MAX_MESSAGE_LINES_SHOWN = 12  # of an exception message in a report (the scanner keeps up to 60)
MAX_CONTEXT_LINES = 5
# What a report says where a traceback ends: cut before its exception line (no type, no message), the line that names
# the failure is the one to paste next (blind split 17: eleven of its cases were cut so, and the reports said only
# that the traceback was incomplete).
INCOMPLETE_NOTE = "(traceback incomplete in the log)"
CUT_NOTE = ("(the paste stops here, before the exception line: paste the lines that follow the last frame, from the "
            "`Type: message` line on)")
ENDS_PASTE_NOTE = ("(the paste ends on this record: its traceback, the lines right after it in the server's log, says "
                   "what failed; paste them)")
NO_ERROR_ABOVE_NOTE = "(none of the lines just before the cut reads as an error)"
_QUOTED = compile_lazily(r"'([^'\n]{4,})'")  # what a root cause quotes of the lines it read: ('NVRM: Xid')
MAX_CASCADE_LINES = 3
COMMAND_CHARS = 4000  # a corrected command is shown whole unless absurd
# A failure's name in the summary table: the table (render/table.py) cuts it to the width it has, so this only
# bounds an absurd one (a cut at 80 clipped names with room to spare on a wide terminal).
SUMMARY_FAILURE_CHARS = 300
_VARIABLE_NAME = compile_lazily(r"[A-Za-z_][A-Za-z0-9_]*")
# How a version's origin is said (LaunchInfo.engine_version_source); a version read from the log is plain.
VERSION_ORIGIN = {
    "inferred": "guessed from the code layout or wording; no version line of the engine's is in the log",
    "user": "given with --engine-version",
}
# (LaunchInfo.version_from_image: the tag names what the image was built from, not what ran)
IMAGE_ORIGIN = "read from the engine's image tag; no version line of the engine's is in the log, and the image that ran may be another"


@dataclass(frozen=True)
class FrameView:
    """A frame, as shown."""
    location: str = ""
    source: str | None = None
    in_app: bool = False
    folded: int = 0  # >0: a placeholder for that many hidden frames
    folded_app: bool = False  # the hidden frames are the outermost ones (beyond MAX_APP_FRAMES), of any kind

    @property
    def folded_text(self) -> str:
        return folded_text(self.folded, "earlier" if self.folded_app else "library")


@dataclass(frozen=True)
class BlockView:
    """An exception block of a chain, as shown."""
    frames: list[FrameView]
    exception_line: str
    message_tail: list[str]  # the message's further lines shown
    relation_text: str | None
    message_left_out: int = 0  # lines of the message beyond those


@dataclass(frozen=True)
class FixView:
    """A fix, as shown."""
    summary: str
    changes: list[str]  # "add --speculative-num-steps 15", "env HF_HOME=/data"
    steps: list[str]
    command: str | None
    alternatives: list[FixView] = field(default_factory=list)
    command_label: str = "Corrected command"  # says when the command was rebuilt from the log's server_args
    # Where the corrected command would be, when the launch command is not known: how to give it (--cmd)
    command_hint: str | None = None


@dataclass(frozen=True)
class EngineSaysView:
    """An instruction in the engine's own message, and what logsleuth checked of it for the user's release."""

    text: str
    checks: list[str]
    label: str  # "The engine says", or "transformers says", "nvidia-container-cli says" (EngineWords.speaker)


# How far to trust a diagnosis (Diagnosis.basis), said in every format.
GENERAL_LABEL = "general guidance, not a proven fix"
FACTS_LABEL = "Facts"
RAISED_AT_LABEL = "Raised by a check in the code"  # Diagnosis.raised_at (the engine's or a package's), with the traceback
ENGINE_SAYS_LABEL = "The engine says"


def says_label(speaker: str | None) -> str:
    """"The engine says", or who else said it (EngineWords.speaker), cleaned like log text: it comes from the log."""
    return ENGINE_SAYS_LABEL if speaker is None else f"{clean(speaker, 60)} says"


@dataclass(frozen=True)
class GroupView:
    """A failure group, as shown."""
    verdict: str  # the pattern's title, or the failure's exception line
    place: str  # where it died: "host gpu7 · ranks TP0-7", or ""
    details: str  # engine and version, how often, when, the log's own header, the sources
    chain: list[BlockView]
    innermost: str | None
    innermost_source: str | None  # the source line of that frame, as the log shows it
    context: list[str]  # the log lines just before it (the last MAX_CONTEXT_LINES)
    truncated: bool
    cut_before_exception: bool = False  # a traceback the paste cut before its exception line
    ends_paste: bool = False  # an ERROR record the paste ends on, its traceback not pasted (Failure.ends_paste)
    context_dropped: bool = False  # lines before such a cut left out: none reads as an error
    category: str | None = None
    pattern: str | None = None
    root_cause: str | None = None
    fix: FixView | None = None
    cascade: list[str] = field(default_factory=list)  # what followed (the first MAX_CASCADE_LINES)
    context_left_out: int = 0  # earlier context lines not shown
    cascade_left_out: int = 0
    signature: str = ""
    search: str = ""  # the words the log printed for the failure, variable parts left out (render/search_words.py)
    engine: str = ""  # "sglang 0.5.9", and what is not known of it
    sources: list[str] = field(default_factory=list)
    basis: str = "pattern"  # Diagnosis.basis: "pattern", "rule" (reasoned from facts) or "general"
    evidence: list[str] = field(default_factory=list)  # the facts a rule used
    raised_at: list[str] = field(default_factory=list)  # the engine's own check that raised it (Diagnosis.raised_at)
    engine_says: list[EngineSaysView] = field(default_factory=list)

    @property
    def truncated_note(self) -> str:
        """What the evidence says where the traceback ends: cut before its exception line, what to paste next."""
        return CUT_NOTE if self.cut_before_exception else ENDS_PASTE_NOTE if self.ends_paste else INCOMPLETE_NOTE

    @property
    def headline(self) -> str:
        """What died, and where."""
        return f"{self.verdict} · {self.place}" if self.place else self.verdict

    @property
    def general(self) -> bool:
        """No pattern or rule proves it: the likeliest category and its general checks."""
        return self.basis == "general"

    @property
    def cause_heading(self) -> str:
        """"Root cause" for a proven answer, "Likely cause" for general guidance."""
        return "Likely cause" if self.general else "Root cause"

    @property
    def cause_source(self) -> str:
        """Where the answer comes from, after its category: "pattern sglang-gpu-oom", "rule rule-gpu-dtype",
        or the general label."""
        if self.general:
            return GENERAL_LABEL
        return f"{'rule' if self.basis == 'rule' else 'pattern'} {self.pattern or ''}".rstrip()

    @property
    def fix_label(self) -> str:
        return "What to check" if self.general else "Fix"


@dataclass(frozen=True)
class SummaryRow:
    """One row of the failures' summary table."""
    index: int
    failure: str
    count: int
    ranks: str
    hosts: str
    category: str


def folded_text(count: int, kind: str = "library") -> str:
    """The line that stands for `count` frames left out."""
    return f"… {count} {kind} frame{'s' if count > 1 else ''}"


def more_lines_text(count: int, which: str = "more") -> str:
    """The note that stands for `count` log lines left out."""
    return f"… {count} {which} line{'s' if count > 1 else ''}"


def prose(text: str) -> str:
    """Pattern prose (root cause, fix summary, a step): one line, inert, never clipped."""
    return " ".join(strip_controls(text).split())


def frame_location(frame: Frame) -> str:
    where = f"{frame.module_path}:{frame.line}" if frame.line is not None else frame.module_path
    text = f"{where} in {frame.function}" if frame.function else where
    if frame.repeated:
        text += f" (repeated {frame.repeated} more times)"
    return clean(text)


def fold_frames(frames: tuple[Frame, ...]) -> list[FrameView]:
    """Keep app frames (the last MAX_APP_FRAMES) and the innermost frame; fold runs of library frames."""
    out: list[FrameView] = []
    hidden = 0
    keep_last = len(frames) - 1
    for index, frame in enumerate(frames):
        if frame.in_app or index == keep_last:
            if hidden:
                out.append(FrameView(folded=hidden))
                hidden = 0
            source = clean(frame.source) if frame.source else None
            out.append(FrameView(frame_location(frame), source, frame.in_app))
        else:
            hidden += 1
    if hidden:
        out.append(FrameView(folded=hidden))
    shown = [index for index, view in enumerate(out) if not view.folded]
    if len(shown) > MAX_APP_FRAMES:  # the innermost ones are kept: a note counts every frame before them
        start = shown[-MAX_APP_FRAMES]
        earlier = sum(view.folded or 1 for view in out[:start])
        out = [FrameView(folded=earlier, folded_app=True), *out[start:]]
    return out


def exception_line(block: ExceptionBlock) -> tuple[str, list[str]]:
    lines = clean_lines(block.message) if block.message else []
    kind = clean(block.type)
    head = f"{kind}: {lines[0]}" if lines else (kind or "(exception line missing)")
    if kind and block.typed_from_statement:
        # the paste lost the exception line (tracebacks/raising_statement.py, indexed_statement.py): the type and any
        # message the statement spells out are inferred, said so, never shown as if printed
        head = f"{head} (inferred from the last frame's statement; the exception line is not in the log)"
    elif kind and block.typed_from_message:
        # CPython's (or requests') own message printed without its type (tracebacks/typeless_errors.py typed_by_message)
        head = f"{head} (type inferred from its message; the log does not print it)"
    elif kind and block.read_from_prose == "stated":
        # a sentence says the run failed with this class of error (tracebacks/stated_failures.py): nothing printed it
        head = f"{head} (stated by the user in words; no error line is in the log: the exception is inferred)"
    elif kind and block.read_from_prose == "retyped":
        # an error line retyped by hand in a sentence (tracebacks/grammar.retyped_usage_error): its template's wording
        head = f"{head} (retyped by hand in the paste: read as the program prints it, the exception inferred)"
    return head, lines[1:]


def describe_op(op: FlagOp, needs_input: tuple[str, ...] = ()) -> str:
    if op.op == "rename":
        return f"rename {op.flag} -> {op.to}" if op.to else f"rename {op.flag} -> (the full flag name you mean)"
    if op.value is None and (op.op == "set" or op.op == "add" and op.flag in needs_input):
        return f"{op.op} {op.flag} (to a value you choose)"
    return f"{op.op} {op.flag}" + (f" {op.value}" if op.value else "")


def env_change(name: str, value: str) -> str:
    """`env NAME=VALUE` with the assignment as one shell word (a value can hold log text: `0; touch x #`)."""
    assignment = f"{name}={quote_shell_word(value)}" if _VARIABLE_NAME.fullmatch(name) else quote_shell_word(f"{name}={value}")
    return clean(f"env {assignment}", COMMAND_CHARS)


def _without_or(summary: str) -> str:
    """An alternative's summary under its "Or:" label: a pattern's leading "Or" would say it twice."""
    for lead in ("Or: ", "Or, ", "Or "):
        if summary.startswith(lead):
            rest = summary[len(lead) :]
            return rest[:1].upper() + rest[1:]
    return summary


def fix_view(fix: Fix, alternative: bool = False, command_unknown: bool = False) -> FixView:
    """`command_unknown`: the launch command is not known, so a fix that changes flags gets the --cmd hint
    where its corrected command would be (the first fix only: said once)."""
    return FixView(
        summary=prose(_without_or(fix.summary) if alternative else fix.summary),
        changes=[clean(describe_op(op, fix.needs_input)) for op in fix.flags] + [env_change(k, v) for k, v in fix.env],
        steps=[prose(step) for step in fix.steps],
        command=clean(fix.command, COMMAND_CHARS) if fix.command else None,
        alternatives=[fix_view(other, alternative=True) for other in fix.alternatives],
        command_label=REBUILT_COMMAND_LABEL if fix.command_origin == "server_args" else "Corrected command",
        command_hint=CMD_HINT_SHORT if command_unknown and _hints_cmd(fix) else None,
    )


def _hints_cmd(fix: Fix) -> bool:
    """A fix that changes flags has a corrected command once the launch command is known (unless its own words
    already say how to give it)."""
    return bool(fix.flags) and not fix.command and not any("--cmd" in text for text in (fix.summary, *fix.steps))


CMD_HINT_SHORT = "No corrected command: the launch command is not in the log (add --cmd '...')."


# A command rebuilt from `server_args=` is SGLang's view of the launch (every field that differs from the default,
# derived ones too), not the command line the user ran: never printed as theirs.
REBUILT_COMMAND_LABEL = "Corrected command (rebuilt from the log's server_args, not your command line)"


def place_text(group: FailureGroup) -> str:
    """Where it died: the hosts and ranks."""
    parts = []
    if group.hosts:
        parts.append(("host " if len(group.hosts) == 1 else "hosts ") + _list_text(list(group.hosts), 3))
    if group.ranks:
        ranks = compress_ranks(group.ranks)
        parts.append(("rank " if len(group.ranks) == 1 else "ranks ") + _list_text(ranks, 4))
    return clean(" · ".join(parts))


def details_text(
    group: FailureGroup,
    launch: LaunchInfo | None,
    show_source: bool = False,
    sources: list[str] | None = None,
    note: str | None = None,
) -> str:
    """The facts after the headline: what it followed in a fleet (`note`), the engine (and how its version is
    known), how often, when, the log's own words before the traceback, and (with several sources) which ones.
    `sources` overrides the names shown."""
    failure = group.failure
    parts = [note] if note else []
    if launch is not None and launch.engine:
        parts.append(engine_text(launch))
    if group.count > 1:
        parts.append(f"seen {group.count} times")
    if failure.meta.timestamp:
        parts.append(f"at {failure.meta.timestamp}")
    if failure.header:
        parts.append(failure.header.rstrip(":"))
    names = list(group.sources) if sources is None else sources
    if show_source and names:
        parts.append("in " + _list_text(names, 2))
    return clean(" · ".join(parts), 1000)


def engine_text(launch: LaunchInfo | None) -> str:
    """`sglang 0.5.9`, and how the version is known when the log does not say it."""
    if launch is None or not launch.engine:
        return "engine not named in the log"
    if not launch.engine_version:
        return f"{launch.engine}, version not in the log"
    origin = version_origin(launch)
    return f"{launch.engine} {launch.engine_version}" + (f" ({origin})" if origin else "")


def version_origin(launch: LaunchInfo) -> str | None:
    """Where the launch's engine version came from, as the reports say it: None for a version the log names."""
    return IMAGE_ORIGIN if launch.version_from_image else VERSION_ORIGIN.get(launch.engine_version_source or "")


SEARCH_LABEL = "Search for"


def abstention(view: GroupView) -> list[tuple[str, str]]:
    """What helps next when no pattern fits, as (label, text) rows: the innermost app frame and its source
    line, the engine and its version, the exact text to search for."""
    rows: list[tuple[str, str]] = []
    if view.innermost:
        rows.append(("Innermost app frame", view.innermost))
        if view.innermost_source:
            rows.append(("Its source line", view.innermost_source))
    rows.append(("Engine", view.engine))
    if view.search:
        rows.append((SEARCH_LABEL, view.search))
    return rows


def _chain(failure_exceptions: tuple[ExceptionBlock, ...]) -> list[BlockView]:
    chain: list[BlockView] = []
    previous: ExceptionBlock | None = None
    for block in failure_exceptions:
        line, tail = exception_line(block)
        relation = RELATION_TEXT.get(previous.relation) if previous and previous.relation else None
        shown = tail[:MAX_MESSAGE_LINES_SHOWN]
        chain.append(BlockView(fold_frames(block.frames), line, shown, relation, len(tail) - len(shown)))
        previous = block
    return chain


def build_view(
    group: FailureGroup,
    show_source: bool = False,
    launch: LaunchInfo | None = None,
    sources: list[str] | None = None,
    note: str | None = None,
) -> GroupView:
    failure = group.failure
    final = failure.final
    head, _ = exception_line(final)
    diagnosis = group.diagnosis
    innermost_frame = next((f for f in reversed(final.frames) if f.in_app), None)
    cut = failure.kind == "traceback" and not final.type and not final.message
    context = _shown_context(failure, diagnosis, cut)
    return GroupView(
        verdict=group_title(group),
        place=place_text(group),
        details=details_text(group, launch, show_source, sources, note),
        chain=_chain(failure.exceptions),
        innermost=frame_location(innermost_frame) if innermost_frame else None,
        innermost_source=clean(innermost_frame.source) if innermost_frame and innermost_frame.source else None,
        context=[clean(line) for line in context[-MAX_CONTEXT_LINES:]],
        truncated=failure.truncated,
        cut_before_exception=cut,
        ends_paste=failure.ends_paste,
        context_dropped=cut and bool(failure.context) and not context,
        category=clean(diagnosis.category) if diagnosis else None,
        pattern=clean(diagnosis.pattern) if diagnosis else None,
        root_cause=prose(diagnosis.root_cause) if diagnosis else None,
        fix=fix_view(diagnosis.fix, command_unknown=launch is not None and launch.command is None)
        if diagnosis and diagnosis.fix else None,
        cascade=[clean(line) for line in group.cascade[:MAX_CASCADE_LINES]],
        context_left_out=max(0, len(context) - MAX_CONTEXT_LINES),
        cascade_left_out=max(0, len(group.cascade) - MAX_CASCADE_LINES),
        signature=clean(group.signature),
        search=clean(search_text(diagnosis, failure), 300),
        engine=clean(engine_text(launch)),
        sources=[clean(source) for source in group.sources],
        basis=diagnosis.basis if diagnosis else "pattern",
        evidence=[clean(fact, 400) for fact in diagnosis.evidence] if diagnosis else [],
        raised_at=[clean(fact, 600) for fact in diagnosis.raised_at] if diagnosis else [],
        engine_says=_engine_says(diagnosis),
    )


def _shown_context(failure: Failure, diagnosis: Diagnosis | None, cut: bool) -> tuple[str, ...]:
    """The lines shown before a failure: for a traceback cut before its exception line, only those that read as an
    error (Failure.error_context, decided by the scanner: they stand in for the missing line; any other is a line of
    another matter), and always a line the diagnosis quotes as what it read."""
    if not cut:
        return failure.context
    quoted = [words for words in _QUOTED.findall(diagnosis.root_cause)] if diagnosis else []
    return tuple(line for line in failure.context
                 if line in failure.error_context or any(words in line for words in quoted))


def _engine_says(diagnosis: Diagnosis | None) -> list[EngineSaysView]:
    """The engine's own words and what logsleuth checked of them; they quote log text, so they are cleaned and
    clipped like any log line."""
    if diagnosis is None:
        return []
    return [
        EngineSaysView(clean(words.text, 400), [clean(check, 400) for check in words.checks], says_label(words.speaker))
        for words in diagnosis.engine_says
    ]


def compress_ranks(ranks: tuple[str, ...]) -> list[str]:
    """`TP0, TP1, TP2, TP3` -> `TP0-3`; labels that are not `NAME<number>` stay as they are."""
    out: list[str] = []
    run: tuple[str, int, int] | None = None  # (name, first, last)
    for rank in ranks:
        match = re.fullmatch(r"([A-Za-z_]+)(\d+)", rank)
        if match and run and match[1] == run[0] and int(match[2]) == run[2] + 1:
            run = (run[0], run[1], int(match[2]))
            continue
        if run:
            out.append(f"{run[0]}{run[1]}" + (f"-{run[2]}" if run[2] != run[1] else ""))
            run = None
        if match:
            run = (match[1], int(match[2]), int(match[2]))
        else:
            out.append(rank)
    if run:
        out.append(f"{run[0]}{run[1]}" + (f"-{run[2]}" if run[2] != run[1] else ""))
    return out


def _list_text(items: list[str], limit: int) -> str:
    if len(items) <= limit:
        return ", ".join(items)
    return ", ".join(items[:limit]) + f" +{len(items) - limit}"


def is_multi(report: Report) -> bool:
    """Several failures, or several sources: the report has a summary table."""
    return len(report.failures) > 1 or (len(report.sources) > 1 and bool(report.failures))


def multi_heading(report: Report) -> str:
    count = len(report.failures)
    if report.launches > 1:  # a relaunch failed on its own: neither failure caused the other
        return f"{count} failures from {report.launches} separate launches; each launch failed on its own."
    return f"{count} failure{'s' if count > 1 else ''}; the first is the root failure."


def summary_rows(report: Report) -> list[SummaryRow]:
    rows = []
    for index, group in enumerate(report.failures, start=1):
        verdict = group_title(group)
        rows.append(
            SummaryRow(
                index=index,
                failure=clean(verdict, SUMMARY_FAILURE_CHARS),  # the table cuts it to the real width
                count=group.count,
                ranks=clean(_list_text(compress_ranks(group.ranks), 2) or "-"),
                hosts=clean(_list_text(list(group.hosts), 1) or "-"),
                category=clean(group.diagnosis.category) if group.diagnosis else "unknown",
            )
        )
    return rows


def headline(report: Report) -> str:
    """The one-line verdict of the whole report: what died and where, or that nothing did."""
    primary = report.primary
    if primary is None:
        readable = [source for source in report.sources if not source.error]
        return "No failure found" if readable or not report.sources else unread_text(report)
    return build_view(primary).headline


def unread_text(report: Report) -> str:
    """What a report none of whose sources could be judged says: "No log could be read", or "Nothing to judge:
    the log is empty" when they were all empty (models.nothing_to_judge)."""
    if report.sources and all(source.empty for source in report.sources):
        return "Nothing to judge: the log is empty" if len(report.sources) == 1 else "Nothing to judge: every log is empty"
    return "No log could be read"


def source_error_text(source: SourceInfo) -> str:
    """`could not read x.log: no such file`; an empty source's error as it is (`nothing to judge: …`)."""
    return clean(f"{source.error}" if source.empty else f"could not read {source.error}")


def describe_source_errors(report: Report) -> list[str]:
    return [source_error_text(s) for s in report.sources if s.error]  # the error names its source


def source_notes(report: Report) -> list[str]:
    """What the report must say about where a log came from: "k8s:serving/sglang-0: read the previous
    container …" (a runtime source's note), and "Run by: Ray" when the log shows a program running the engine."""
    notes = [clean(f"{s.name}: {s.note}", 1000) for s in report.sources if s.note and not s.error]
    if report.launch.wrapper:
        notes.append(clean(f"Run by: {report.launch.wrapper}"))
    return notes


def no_failure_lines(report: Report, local_names: bool = True) -> list[str]:
    """What was read and found clean.  Without `local_names` (reports shared with people on other machines) a
    local path is said as "the log"."""
    readable = [s for s in report.sources if not s.error]
    hosts = {host for group in report.failures for host in group.hosts}

    def name(source_name: str) -> str:
        return source_name if local_names or is_remote_name(source_name, hosts) else "the log"

    read = ", ".join(f"{name(s.name)} ({s.bytes_read} bytes read)" for s in readable)
    out = [clean(f"No failure found in {read}." if read else f"{unread_text(report)}.", 1000)]
    capped = [name(s.name) for s in readable if s.capped]
    if capped:
        out.append(
            clean(f"Searched only the end of {', '.join(capped)} (byte cap reached); use --all to scan everything.", 1000)
        )
    if readable and report.launch.engine:  # what was read clean, so a reader knows which engine's log it was
        out.append(clean(f"Engine: {engine_text(report.launch)}.", 1000))
    if readable and report.launch.ended_in_startup:  # not a healthy run: a paste that stops before its end
        out.extend(clean(line, 1000) for line in startup_notice(report.launch))
    for hint in report.launch.engine_hints if readable else ():  # the lead the engine's own warning left
        checks = "; ".join(hint.checks)
        out.append(clean(f"Before the log ends, the engine warned: {hint.text}" + (f" ({checks})" if checks else ""), 1000))
    return out


def startup_notice(launch: LaunchInfo) -> list[str]:
    """What a clean report says of a log that stops during the start-up (LaunchInfo.ended_in_startup): it shows no
    error and no start that finished; where it stopped; for a stall, general guidance for that stage; what to paste."""
    stage = f" (the last stage it shows: {launch.startup_stage})" if launch.startup_stage else ""
    lines = [f"The log ends during the server's start-up{stage}, with nothing after it saying the server came up or "
             "served: it shows no error, but it does not show the start finish either."]
    if launch.startup_stalled:
        lines.append(f"It ends on a wait ({launch.startup_stage}) that nothing of the engine followed: the start-up "
                     "stalled there. General guidance for a start-up stalled at this stage, not a proven fix:")
        lines.extend(f"  - {tip}" for tip in launch.startup_guidance)
    elif launch.startup_poll_seconds:
        lines.append(f"It ends on the API server's polls for its engine cores: no engine core line for about "
                     f"{launch.startup_poll_seconds} s. A normal start prints a few of these while the weights load, "
                     "so they alone do not show a stall.")
    if launch.startup_leads:
        lines.append("What the log names gives these leads to check, not a failure it shows:")
        lines.extend(f"  - {lead}" for lead in launch.startup_leads)
    lines.append(STARTUP_NEXT_PASTE)
    return lines


# What a reader of a log that stops during the start-up should paste next.
STARTUP_NEXT_PASTE = ("If the server failed, its error is in the lines after the last one here: paste those (the whole "
                      "log from the launch command on, and the engine's own log if a wrapper started it).")


def omitted_line(report: Report) -> str | None:
    """What the bounded report left out ("… and 236,134 more distinct failures …"), or None."""
    if not report.omitted_failures:
        return None
    about = "about " if report.omitted_groups_estimated else ""
    groups = report.omitted_groups
    shown = len(report.failures)
    return (
        f"… and {about}{groups:,} more distinct failure{'s' if groups != 1 else ''} "
        f"({report.omitted_failures:,} occurrence{'s' if report.omitted_failures != 1 else ''}) not shown: "
        f"the report keeps the first {shown} groups"
    )


# `host:path`, `user@host:path`, `ssh://[user@]host[:port]/path`: the host part of a source name.
_REMOTE_NAME = compile_lazily(r"^(?:ssh://)?(?:[^@/:\s]+@)?(?:\[(?P<v6>[^\]]+)\]|(?P<host>[\w.\-]+))[:/]")


def is_remote_name(name: str, hosts: set[str]) -> bool:
    """A source name spelled `host:path` whose host is one the report knows (an SSH source's host is recorded
    with its failures), as opposed to a local path, which means nothing to someone on another machine."""
    match = _REMOTE_NAME.match(name)
    return match is not None and (match["v6"] or match["host"]) in hosts


def remote_source_names(report: Report) -> list[str]:
    hosts = {host for group in report.failures for host in group.hosts}
    return [clean(s.name) for s in report.sources if not s.error and is_remote_name(s.name, hosts)]


def log_location(report: Report, explicit: str | None) -> str | None:
    """Where the full log is, for shared reports: the option, else the remote sources (`host:path`) read.  A
    local path is left out: it names a file on the machine that ran logsleuth, not one the reader can open."""
    if explicit:
        return clean(explicit)
    names = remote_source_names(report)
    return ", ".join(names) if names else None


# -- a fleet: one line per host (issue 14) -------------------------------------------------------------------------

OUTCOME_TEXT = {"root": "failed first", "failed": "failed", "no-failure": "no failure", "unreadable": "unreadable"}


@dataclass(frozen=True)
class HostRow:
    """One host of a fleet report's table."""
    host: str
    outcome: str  # "failed first", "cascade of node03", "failed", "no failure", "unreadable"
    failure: str  # its first failure, short; for an unreadable host, why
    time: str  # as the log printed it; "" when not known


def group_title(group: FailureGroup) -> str:
    """A failure in a few words: its pattern's or rule's title, or its exception line (also under general
    guidance: what died is surer than the likeliest category, which the answer names)."""
    diagnosis = group.diagnosis
    if diagnosis is None or diagnosis.basis == "general":
        # a traceback cut under Ray's record of an actor's failed constructor: that record says what died
        return clean(actor_death_headline(group.failure) or exception_line(group.failure.final)[0])
    return prose(diagnosis.title)


def outcome_text(fleet: Fleet, member: FleetMember) -> str:
    if member.outcome == "cascade":
        return f"cascade of {fleet.root}"
    return OUTCOME_TEXT[member.outcome]


def _own_error(member: FleetMember) -> str:
    """The error without the source or host name it starts with (the row names the host already)."""
    error = member.error or "not read"
    for name in (member.source, member.name):
        if error.startswith(f"{name}: "):
            return error[len(name) + 2 :]
    return error


def fleet_rows(report: Report) -> list[HostRow]:
    fleet = report.fleet
    if fleet is None:
        return []
    return [
        HostRow(
            host=clean(member.name, 120),
            outcome=clean(outcome_text(fleet, member), 200),
            failure=clean(_own_error(member) if member.outcome == "unreadable" else member.signature, 200),
            time=clean(member.timestamp or ""),
        )
        for member in fleet.members
    ]


def fleet_heading(report: Report) -> str:
    """The answer for the whole fleet, first: `node03 failed first: GPU out of memory · 32 hosts: 29 cascade ·
    1 no failure · 1 unreadable`."""
    fleet = report.fleet
    assert fleet is not None
    counts: dict[str, int] = {}
    for member in fleet.members:
        if member.outcome != "root":
            counts[member.outcome] = counts.get(member.outcome, 0) + 1
    root = next((g for g in report.failures if g.fingerprint == fleet.root_fingerprint), None)
    lead = f"{fleet.root} failed first: {group_title(root)} · " if fleet.root and root else ""
    tally = " · ".join(f"{count} {OUTCOME_TEXT.get(outcome, outcome)}" for outcome, count in counts.items())
    return clean(f"{lead}{len(fleet.members)} hosts" + (f": {tally}" if tally else ""), 1000)


def fleet_notes(report: Report) -> list[str]:
    """What makes the root less than certain: hosts whose order is unknown, clocks that disagree."""
    fleet = report.fleet
    if fleet is None or not fleet.root:
        return []
    notes = []
    failed = sum(1 for member in fleet.members if member.fingerprint is not None)
    if not fleet.order_known and failed > 1:  # one failed host: there is no order to know
        untimed = [m.name for m in fleet.members if m.fingerprint is not None and not m.time_known]
        which = f"{_list_text(untimed, 3)} logged no time" if untimed else "the logs' times cannot be compared"
        notes.append(f"Order unknown: {which}, so the root is the usual first failure, not the earliest.")
    if fleet.root_uncertain and fleet.clock_spread is not None and fleet.first_gap is not None:
        notes.append(
            f"The clocks differ by up to {fleet.clock_spread:.1f} s, more than the {fleet.first_gap:.1f} s between "
            "the first two failures: the root is uncertain."
        )
    return [clean(note, 1000) for note in notes]


def cascade_note(report: Report, group: FailureGroup) -> str | None:
    """`cascade of GPU out of memory on node03` for a group that followed the fleet's root failure."""
    fleet = report.fleet
    if fleet is None or group.cascade_of is None:
        return None
    root = next((g for g in report.failures if g.fingerprint == group.cascade_of), None)
    if root is None:
        return None
    return clean(f"cascade of {group_title(root)} on {fleet.root}", 300)


def fleet_summary(report: Report, names: int = 3, kinds: int = 8) -> list[str]:
    """The hosts in a few lines for a short report (Slack): the root, then one line per outcome and failure
    with a few of the hosts (`61 hosts: cascade of node03 (NCCL watchdog timeout): node01, node02 +59`), at most
    `kinds` such lines."""
    fleet = report.fleet
    if fleet is None:
        return []
    lines = []
    by_kind: dict[tuple[str, str], list[FleetMember]] = {}
    for member in fleet.members:
        if member.outcome == "root":
            when = f" at {member.timestamp}" if member.timestamp else ""
            lines.append(f"{member.name} failed first: {member.signature}{when}")
        elif member.outcome == "unreadable":
            by_kind.setdefault(("unreadable", ""), []).append(member)
        else:
            by_kind.setdefault((outcome_text(fleet, member), member.signature), []).append(member)
    for (outcome, what), members in list(by_kind.items())[:kinds]:
        about = f" ({what})" if what else ""
        if outcome == "unreadable":
            shown = "; ".join(f"{m.name}: {_own_error(m)}" for m in members[:names])
        else:
            shown = ", ".join(m.name for m in members[:names])
        more = f" +{len(members) - names}" if len(members) > names else ""
        lines.append(f"{_hosts(len(members))}: {outcome}{about}: {shown}{more}")
    left = sum(len(members) for members in list(by_kind.values())[kinds:])
    if left:
        lines.append(f"… and {_hosts(left)} more")
    return [clean(line, 400) for line in lines]


def _hosts(count: int) -> str:
    return f"{count} host{'s' if count != 1 else ''}"


# -- the report's ending: what helps next when logsleuth has no proven fix (issue 28, item 6) ----------------------

STDIN_NAMES = ("-", "<text>")  # stdin, and text given to the api (a paste): both read again from stdin


@dataclass(frozen=True)
class Ending:
    """What a report ends with: when its first failure has no proven fix (a general diagnosis, the engine not
    known, no fix at all), the two ways to get more help for the same logs; when the launch command is not
    known, how to give it."""

    case_command: str | None = None  # `logsleuth case 'server.log'`
    explain_command: str | None = None  # `logsleuth diagnose --explain 'server.log'`
    stdin: bool = False  # the logs were read from stdin: the same input goes to the command again
    cmd_hint: str | None = None
    # The first failure's fix already says it where its corrected command would be (FixView.command_hint): the
    # formats read by people leave the ending's hint out; JSON keeps it in next_steps.
    cmd_hint_in_fix: bool = False

    @property
    def empty(self) -> bool:
        return self.case_command is None and self.cmd_hint is None

    def offers(self) -> list[tuple[str, str]]:
        """(command, what it gives), in order."""
        out = [(self.case_command, CASE_NOTE)] if self.case_command else []
        return out + ([(self.explain_command, EXPLAIN_NOTE)] if self.explain_command else [])


NO_PROVEN_FIX = "No proven fix for this failure. For more help with the same logs:"
CASE_NOTE = "its case file (the evidence, redacted) for any assistant"
EXPLAIN_NOTE = "your own model's answer, labelled unverified (docs/explain.md)"
STDIN_NOTE = "(give it the same input on stdin)"
CMD_HINT = "The launch command is not in the log: give it with --cmd '...' (the command you ran) for a fix built on it."


def _source_word(name: str) -> str:
    """A source as the user named it, for a command to copy; a name holding a terminal escape or another
    character a terminal would not show (a file named by hostile hands) is said as a placeholder instead:
    log and file-name text is never printed raw, and escaped it would not read as the name."""
    if name in STDIN_NAMES:
        return "-"
    if clean(name, len(name) + 1) != name or quote_shell_word(name).startswith("$'"):
        return UNSHOWN_SOURCE
    return name


UNSHOWN_SOURCE = "<the log you gave>"


def has_proven_fix(group: FailureGroup) -> bool:
    diagnosis = group.diagnosis
    return diagnosis is not None and diagnosis.basis != "general" and diagnosis.fix is not None


def ending(report: Report) -> Ending:
    """The report's ending (empty without a failure)."""
    primary = report.primary
    if primary is None:
        return Ending()
    fix = primary.diagnosis.fix if primary.diagnosis else None
    says_cmd = fix is not None and any("--cmd" in text for text in (fix.summary, *fix.steps))
    hint = CMD_HINT if report.launch.command is None and not says_cmd else None
    in_fix = hint is not None and fix is not None and _hints_cmd(fix)
    if has_proven_fix(primary):
        return Ending(cmd_hint=hint, cmd_hint_in_fix=in_fix)
    asked = report.explanation is not None  # --explain ran already: its answer is in the report
    names = [source.name for source in report.sources if not source.error] or [s.name for s in report.sources]
    stdin = any(name in STDIN_NAMES for name in names)
    words = " ".join(quote_shell_word(_source_word(name)) for name in dict.fromkeys(names))
    return Ending(
        case_command=clean(f"logsleuth case {words}", COMMAND_CHARS),
        explain_command=None if asked else clean(f"logsleuth diagnose --explain {words}", COMMAND_CHARS),
        stdin=stdin,
        cmd_hint=hint,
        cmd_hint_in_fix=in_fix,
    )


# -- the recap: the answer in one line at the end of a report taller than the terminal (issue 30, finding 5) -------

RECAP = "Recap: "
NO_PROVEN_FIX_SHORT = "no proven fix"
_MIN_VERDICT = 24  # the verdict is shortened to fit the line, never below this (else the line wraps)


def _shortened(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(1, limit - 1)].rstrip() + "…"


def recap(report: Report, width: int) -> str | None:
    """The verdict in a line: the failure, its category, and the fix's changes or "no proven fix"; the failure's
    title is shortened to fit `width` where it can (None without a failure)."""
    primary = report.primary
    if primary is None:
        return None
    view = build_view(primary)
    fix = view.fix if has_proven_fix(primary) else None
    changes = "; ".join(fix.changes[:2]) + ("; …" if len(fix.changes) > 2 else "") if fix else ""
    answer = f"fix: {changes or _shortened(fix.summary, 60)}" if fix else NO_PROVEN_FIX_SHORT
    tail = f" · {view.category or 'unknown'} · {answer}"
    verdict = _shortened(view.verdict, max(_MIN_VERDICT, width - len(RECAP) - len(tail)))
    return f"{RECAP}{verdict}{tail}"
