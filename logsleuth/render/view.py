"""What every renderer shows, decided once: verdict, location, frames with library
frames folded, root cause, fix, and the summary of a multi-failure report.

Renderers only lay this out, so the formats agree.  Every log-derived string here has
already been through `safety.clean` (no escape sequences, no control characters, one
line, clipped); each renderer still applies its own format's escaping.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from logsleuth.models import ExceptionBlock, FailureGroup, Fix, FlagOp, Frame, LaunchInfo, Report
from logsleuth.render.safety import clean, clean_lines

RELATION_TEXT = {
    "cause": "the above was the direct cause of:",
    "context": "while handling the above, another exception occurred:",
}
MAX_APP_FRAMES = 8
MAX_MESSAGE_LINES_SHOWN = 12  # of an exception message in a report (the scanner keeps up to 60)
MAX_CONTEXT_LINES = 5
MAX_CASCADE_LINES = 3
COMMAND_CHARS = 4000  # a corrected command is shown whole unless absurd


@dataclass(frozen=True)
class FrameView:
    location: str = ""
    source: str | None = None
    in_app: bool = False
    folded: int = 0  # >0: a placeholder for that many hidden library frames


@dataclass(frozen=True)
class BlockView:
    frames: list[FrameView]
    exception_line: str
    message_tail: list[str]
    relation_text: str | None


@dataclass(frozen=True)
class FixView:
    summary: str
    changes: list[str]  # "add --speculative-num-steps 15", "env HF_HOME=/data"
    steps: list[str]
    command: str | None
    alternatives: list[FixView] = field(default_factory=list)


@dataclass(frozen=True)
class GroupView:
    verdict: str
    where: str
    chain: list[BlockView]
    innermost: str | None
    innermost_source: str | None  # the source line of that frame, as the log shows it
    context: list[str]
    truncated: bool
    category: str | None = None
    pattern: str | None = None
    root_cause: str | None = None
    fix: FixView | None = None
    cascade: list[str] = field(default_factory=list)
    signature: str = ""
    search: str = ""  # the failure's exact first line ("Type: message"), to search issue trackers with
    engine: str = ""  # "sglang 0.5.9", or what is not known of it
    sources: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SummaryRow:
    index: int
    failure: str
    count: int
    ranks: str
    hosts: str
    category: str


def folded_text(count: int) -> str:
    """The line that stands for `count` library frames left out."""
    return f"… {count} library frame{'s' if count > 1 else ''}"


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
    shown = [view for view in out if not view.folded]
    if len(shown) > MAX_APP_FRAMES:
        kept = out[-(MAX_APP_FRAMES * 2) :]
        dropped = len(shown) - sum(1 for view in kept if not view.folded)
        out = [FrameView(folded=dropped), *kept]
    return out


def exception_line(block: ExceptionBlock) -> tuple[str, list[str]]:
    lines = clean_lines(block.message) if block.message else []
    kind = clean(block.type)
    head = f"{kind}: {lines[0]}" if lines else (kind or "(exception line missing)")
    return head, lines[1:]


def describe_op(op: FlagOp) -> str:
    if op.op == "rename":
        return f"rename {op.flag} -> {op.to}"
    return f"{op.op} {op.flag}" + (f" {op.value}" if op.value else "")


def fix_view(fix: Fix) -> FixView:
    return FixView(
        summary=" ".join(clean_lines(fix.summary)),
        changes=[clean(describe_op(op)) for op in fix.flags] + [clean(f"env {k}={v}") for k, v in fix.env],
        steps=[clean(step) for step in fix.steps],
        command=clean(fix.command, COMMAND_CHARS) if fix.command else None,
        alternatives=[fix_view(alternative) for alternative in fix.alternatives],
    )


def where_text(group: FailureGroup, show_source: bool = False) -> str:
    failure = group.failure
    parts = []
    if group.hosts:
        parts.append("host " + ", ".join(group.hosts))
    if group.ranks:
        parts.append("ranks " + ", ".join(compress_ranks(group.ranks)))
    if group.count > 1:
        parts.append(f"seen {group.count} times")
    if failure.meta.timestamp:
        parts.append(f"at {failure.meta.timestamp}")
    if failure.header:
        parts.append(failure.header.rstrip(":"))
    if show_source and group.sources:
        parts.append("in " + _list_text(list(group.sources), 2))
    return clean(" · ".join(parts))


def engine_text(launch: LaunchInfo | None) -> str:
    if launch is None or not launch.engine:
        return "not named in the log"
    return f"{launch.engine} {launch.engine_version}" if launch.engine_version else f"{launch.engine}, version not in the log"


def abstention(view: GroupView) -> list[tuple[str, str]]:
    """What helps next when no pattern fits, as (label, text) rows: the innermost app frame and its source
    line, the engine and its version, the exact text to search for."""
    rows: list[tuple[str, str]] = []
    if view.innermost:
        rows.append(("Innermost app frame", view.innermost))
        if view.innermost_source:
            rows.append(("Its source line", view.innermost_source))
    rows.append(("Engine", view.engine))
    rows.append(("Search for", view.search or view.signature))
    return rows


def build_view(group: FailureGroup, show_source: bool = False, launch: LaunchInfo | None = None) -> GroupView:
    failure = group.failure
    final = failure.final
    head, _ = exception_line(final)
    diagnosis = group.diagnosis
    chain: list[BlockView] = []
    previous: ExceptionBlock | None = None
    for block in failure.exceptions:
        line, tail = exception_line(block)
        relation = RELATION_TEXT.get(previous.relation) if previous and previous.relation else None
        chain.append(BlockView(fold_frames(block.frames), line, tail[:MAX_MESSAGE_LINES_SHOWN], relation))
        previous = block
    innermost_frame = next((f for f in reversed(final.frames) if f.in_app), None)
    innermost = frame_location(innermost_frame) if innermost_frame else None
    return GroupView(
        verdict=clean(diagnosis.title) if diagnosis else head,
        where=where_text(group, show_source),
        chain=chain,
        innermost=innermost,
        innermost_source=clean(innermost_frame.source) if innermost_frame and innermost_frame.source else None,
        context=[clean(line) for line in failure.context[-MAX_CONTEXT_LINES:]],
        truncated=failure.truncated,
        category=clean(diagnosis.category) if diagnosis else None,
        pattern=clean(diagnosis.pattern) if diagnosis else None,
        root_cause=" ".join(clean_lines(diagnosis.root_cause)) if diagnosis else None,
        fix=fix_view(diagnosis.fix) if diagnosis and diagnosis.fix else None,
        cascade=[clean(line) for line in group.cascade[:MAX_CASCADE_LINES]],
        signature=clean(group.signature),
        search=clean(f"{final.type}: {final.message.splitlines()[0]}" if final.message else final.type, 300),
        engine=clean(engine_text(launch)),
        sources=[clean(source) for source in group.sources],
    )


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
    """Several failures, or several sources: the report opens with a summary table."""
    return len(report.failures) > 1 or (len(report.sources) > 1 and bool(report.failures))


def summary_rows(report: Report) -> list[SummaryRow]:
    rows = []
    for index, group in enumerate(report.failures, start=1):
        verdict = group.diagnosis.title if group.diagnosis else exception_line(group.failure.final)[0]
        rows.append(
            SummaryRow(
                index=index,
                failure=clean(verdict, 80),
                count=group.count,
                ranks=clean(_list_text(compress_ranks(group.ranks), 2) or "-"),
                hosts=clean(_list_text(list(group.hosts), 1) or "-"),
                category=clean(group.diagnosis.category) if group.diagnosis else "unknown",
            )
        )
    return rows


def headline(report: Report) -> str:
    """The one-line verdict of the whole report."""
    primary = report.primary
    if primary is None:
        readable = [source for source in report.sources if not source.error]
        return "No failure found" if readable or not report.sources else "No log could be read"
    view_verdict = primary.diagnosis.title if primary.diagnosis else exception_line(primary.failure.final)[0]
    parts = [clean(view_verdict, 160)]
    launch = report.launch
    engine = " ".join(p for p in (launch.engine, launch.engine_version) if p)
    if primary.hosts:
        parts.append(clean(", ".join(primary.hosts[:3])))
    if engine:
        parts.append(clean(engine))
    parts.append(clean(primary.diagnosis.category) if primary.diagnosis else "unknown failure")
    return " · ".join(parts)


def first_sentences(text: str, count: int = 2) -> str:
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z`'\"(-])", text.strip())
    return " ".join(sentences[:count])


def describe_source_errors(report: Report) -> list[str]:
    return [clean(f"could not read {s.error}") for s in report.sources if s.error]  # the error names its source


def no_failure_lines(report: Report) -> list[str]:
    read = ", ".join(f"{s.name} ({s.bytes_read} bytes read)" for s in report.sources if not s.error)
    out = [clean(f"No failure found in {read}." if read else "No log could be read.", 1000)]
    capped = [s.name for s in report.sources if s.capped]
    if capped:
        out.append(
            clean(
                f"Searched only the end of {', '.join(capped)} (byte cap reached); use --all to scan everything.",
                1000,
            )
        )
    return out


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


def log_location(report: Report, explicit: str | None) -> str | None:
    """Where the full log is, for shared reports: the option, else the sources read."""
    if explicit:
        return clean(explicit)
    names = [s.name for s in report.sources if not s.error and s.name not in ("-", "<text>")]
    return clean(", ".join(names)) if names else None
