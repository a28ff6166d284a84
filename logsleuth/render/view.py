"""What every renderer shows, decided once: verdict, location, frames with library
frames folded, the innermost app frame.  Renderers only lay this out."""

from __future__ import annotations

from dataclasses import dataclass

from logsleuth.grouping import module_path
from logsleuth.models import ExceptionBlock, Frame, FailureGroup, Report

RELATION_TEXT = {
    "cause": "the above was the direct cause of:",
    "context": "while handling the above, another exception occurred:",
}
MAX_APP_FRAMES = 8


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
class GroupView:
    verdict: str
    where: str
    chain: list[BlockView]
    innermost: str | None
    context: list[str]
    truncated: bool


def frame_location(frame: Frame) -> str:
    where = f"{module_path(frame.file)}:{frame.line}" if frame.line is not None else module_path(frame.file)
    text = f"{where} in {frame.function}" if frame.function else where
    if frame.repeated:
        text += f" (repeated {frame.repeated} more times)"
    return text


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
            out.append(FrameView(frame_location(frame), frame.source, frame.in_app))
        else:
            hidden += 1
    if hidden:
        out.append(FrameView(folded=hidden))
    shown = [view for view in out if not view.folded]
    if len(shown) > MAX_APP_FRAMES:
        dropped = len(shown) - MAX_APP_FRAMES
        out = [FrameView(folded=dropped), *out[-(MAX_APP_FRAMES * 2) :]]
    return out


def exception_line(block: ExceptionBlock) -> tuple[str, list[str]]:
    lines = block.message.splitlines() if block.message else []
    head = f"{block.type}: {lines[0]}" if lines else (block.type or "(exception line missing)")
    return head, lines[1:]


def build_view(group: FailureGroup) -> GroupView:
    failure = group.failure
    final = failure.final
    head, _ = exception_line(final)
    verdict = group.diagnosis.title if group.diagnosis else head
    parts = []
    if group.hosts:
        parts.append("host " + ", ".join(group.hosts))
    if group.ranks:
        parts.append("ranks " + ", ".join(group.ranks))
    if group.count > 1:
        parts.append(f"seen {group.count} times")
    if failure.meta.timestamp:
        parts.append(f"at {failure.meta.timestamp}")
    if failure.header:
        parts.append(failure.header.rstrip(":"))
    chain: list[BlockView] = []
    previous: ExceptionBlock | None = None
    for block in failure.exceptions:
        line, tail = exception_line(block)
        relation = RELATION_TEXT.get(previous.relation) if previous and previous.relation else None
        chain.append(BlockView(fold_frames(block.frames), line, tail[:12], relation))
        previous = block
    innermost = next((frame_location(f) for f in reversed(final.frames) if f.in_app), None)
    return GroupView(verdict, " · ".join(parts), chain, innermost, list(failure.context[-5:]), failure.truncated)


def describe_source_errors(report: Report) -> list[str]:
    return [f"could not read {s.name}: {s.error}" for s in report.sources if s.error]
