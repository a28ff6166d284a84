"""Parse the text of one failure (already cut out of the log) into exception blocks.

Input is a list of text lines with log prefixes removed.  Output is the chain of
`ExceptionBlock`s, oldest first.  Handles chains (cause/context), 3.11 caret lines,
SyntaxError location blocks, recursion markers, exception groups (recursively, by
stripping their `| ` margins) and faulthandler dumps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from logsleuth.lazyre import compile_lazily
from logsleuth.models import ExceptionBlock, Frame, Relation
from logsleuth.tracebacks.grammar import (
    CARET_LINE,
    CAUSE_SEPARATOR,
    CONTEXT_SEPARATOR,
    CUT_FRAME_LINE,
    ELIDED_LINE,
    ELISION_LENGTH,
    EXCEPTION_LINE,
    FATAL_HEADER,
    FAULT_FRAME_LINE,
    FRAME_LINE,
    GROUP_END,
    GROUP_HEADER,
    MEMBER_SEPARATOR,
    MEMBERS_START,
    MORE_EXCEPTIONS,
    QUOTED_FRAMES_HEADING,
    REPEATED_LINE,
    STRICT_EXCEPTION_LINE,
    THREAD_HEADER,
    TRACEBACK_HEADER,
    WRAPPER_TAG,
    is_elision,
    names_an_exception,
)


def parse_frame(text: str) -> Frame | None:
    m = FRAME_LINE.match(text)
    if not m:
        cut = CUT_FRAME_LINE.match(text)  # cut after its file: the file alone is known
        return Frame(file=windows_path_as_posix(cut["file"]), line=None, function=None) if cut else None
    file = windows_path_as_posix(m["file"])
    function = m["func"].rstrip() if m["func"] else None
    if function and " " in function and file.endswith((".py", ">")):
        # A Python function's name has no space: the frame's source line was joined to it by the copy
        # (`…, in run_scheduler_process scheduler.event_loop()`).  (Native frames, `foo.cu`, print
        # whole C++ signatures.)
        name, source = function.split(" ", 1)
        if name.isidentifier() or name.startswith("<") and name.endswith(">"):
            return Frame(file=file, line=int(m["line"]), function=name, source=source.strip())
    return Frame(file=file, line=int(m["line"]), function=function)


def windows_path_as_posix(file: str) -> str:
    """A Windows path CPython printed (`C:\\Users\\me\\…\\site-packages\\vllm\\config.py`) with forward slashes,
    so that every rule reading a frame's path (`/site-packages/vllm/`, a module path) reads it; the drive stays."""
    if on_a_drive(file) and file[2] == "\\":
        return file.replace("\\", "/")
    return file


def on_a_drive(file: str) -> bool:
    """A path that starts with a Windows drive letter (`C:\\…` as printed, `C:/…` as windows_path_as_posix gives it)."""
    return len(file) > 2 and file[1] == ":" and file[0].isalpha() and file[2] in "/\\"


def is_exception_line(text: str) -> bool:
    return bool(text) and not text[0].isspace() and names_an_exception(text)


# CPython prints an exception that carries no traceback as its `Type: message` lines alone, with no `Traceback` header:
# as the cause of another, right above the chain separator.  torch.compile strips the tracebacks of its errors' causes
# and re-raises its own without one (torch/_dynamo/eval_frame.py: `cur_exn.__cause__.with_traceback(None)`, then
# `raise e.with_traceback(None) from e.__cause__`), so a Dynamo error such as `torch._dynamo.exc.Unsupported: …` (a class
# of one word, which a bare line outside a traceback is not read as, grammar.STRICT_EXCEPTION_LINE) comes this way.
FRAMELESS_CAUSE_REACH = 12  # lines above a separator searched for that exception line (its message may have paragraphs)
_MODULE_CLASS = compile_lazily(r"^(?:[a-z_][a-z0-9_]*\.)+[A-Z]\w*$")


def frameless_cause(above: Sequence[str]) -> tuple[str, ...]:
    """The lines of an exception printed without a traceback just above a chain separator that starts a traceback
    (`above`: the lines no failure took, oldest first): from its `module.Class: message` line on, its trailing blank
    lines left out; () when there is none.  Only a class named with its module: a bare line of another shape is read
    as a failure of its own when it looks like one (scanner), and a separator it is not read against."""
    lines = list(above)[-FRAMELESS_CAUSE_REACH:]
    while lines and not lines[-1].strip():
        lines.pop()
    for index in range(len(lines) - 1, -1, -1):
        text = lines[index]
        if not is_exception_line(text) or STRICT_EXCEPTION_LINE.match(text):
            continue
        m = EXCEPTION_LINE.match(text)
        if m is not None and m["msg"] and _MODULE_CLASS.match(m["type"]):
            return tuple(lines[index:])
    return ()


class _ChainBuilder:
    """Accumulates blocks of a chain while walking the lines of one failure."""

    def __init__(self) -> None:
        self.blocks: list[ExceptionBlock] = []
        self.frames: list[Frame] = []
        self.type: str | None = None
        self.message_lines: list[str] = []
        self.truncated_start = False
        self.pending_relation: Relation | None = None
        self.members: tuple[tuple[ExceptionBlock, ...], ...] = ()
        self.more_members = 0

    # -- frames ------------------------------------------------------------
    def add_frame(self, frame: Frame) -> None:
        if self.type is not None:  # a File line after the exception line: a new, headerless block
            self.close_block()
            self.truncated_start = True
        self.frames.append(frame)

    def set_source(self, source: str) -> None:
        if self.frames and self.frames[-1].source is None:
            self.frames[-1] = replace(self.frames[-1], source=source.strip())

    def set_repeated(self, count: int) -> None:
        if self.frames:
            self.frames[-1] = replace(self.frames[-1], repeated=self.frames[-1].repeated + count)

    # -- exception line ------------------------------------------------------
    def set_exception(self, type_name: str, message: str) -> None:
        if self.type is not None:
            self.close_block()
        if message.startswith("[address="):
            message = WRAPPER_TAG.sub("", message, count=1)
        if message.startswith("**") and message.endswith("**") and len(message) > 4 and message.count("**") == 2:
            # the message alone put in bold by the paste (`ValueError: **There is no module or parameter named …**`,
            # modelscope/ms-swift#4676): GitHub renders the markers, the program never printed them
            message = message[2:-2]
        self.type = type_name
        self.message_lines = [message]

    def add_message_line(self, text: str) -> None:
        self.message_lines.append(text)

    # -- chain ---------------------------------------------------------------
    def close_block(self, relation: Relation | None = None) -> None:
        if self.type is None and not self.frames and not self.members:
            if relation:  # the previous block (e.g. an exception group) is already closed
                self.pending_relation = relation
            return
        message = "\n".join(self.message_lines).strip("\n")  # `ValueError:` alone, its text on the next line
        block = ExceptionBlock(
            type=self.type or "",
            message=message,
            frames=tuple(self.frames),
            relation=None,
            members=self.members,
            more_members=self.more_members,
            truncated=self.truncated_start or self.type is None,
        )
        if self.pending_relation and self.blocks:
            self.blocks[-1] = replace(self.blocks[-1], relation=self.pending_relation)
        self.pending_relation = None
        self.blocks.append(block)
        self.frames = []
        self.type = None
        self.message_lines = []
        self.truncated_start = False
        self.members = ()
        self.more_members = 0
        if relation:
            self.pending_relation = relation

    def separator(self, relation: Relation) -> None:
        if self.type is None and not self.frames and not self.blocks:
            # The excerpt starts at the separator: the older exception is missing.
            self.blocks.append(ExceptionBlock(type="", message="", truncated=True))
            self.pending_relation = relation
            return
        self.close_block(relation)

    def finish(self) -> tuple[ExceptionBlock, ...]:
        self.close_block()
        return tuple(self.blocks)


def _strip_message_tail(lines: list[str]) -> list[str]:
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def parse_chain(lines: list[str]) -> tuple[ExceptionBlock, ...]:
    """Parse the lines of one traceback chain (possibly with groups) into blocks."""
    builder = _ChainBuilder()
    i = 0
    n = len(lines)
    in_message = False
    quoting = False  # inside the user's frames torch.compile's message quotes after `from user code:`
    while i < n:
        text = lines[i]
        stripped = text.strip()
        quoting = in_message and (stripped == QUOTED_FRAMES_HEADING or (quoting and bool(stripped)))
        group = GROUP_HEADER.match(text)
        if (stripped == TRACEBACK_HEADER or stripped.endswith(TRACEBACK_HEADER)) and not group:
            if builder.type is not None or builder.frames:
                builder.close_block()
            in_message = False
            i += 1
            continue
        if stripped in (CAUSE_SEPARATOR, CONTEXT_SEPARATOR):
            builder.message_lines = _strip_message_tail(builder.message_lines)
            builder.separator("cause" if stripped == CAUSE_SEPARATOR else "context")
            in_message = False
            i += 1
            continue
        if group:
            if builder.type is not None or builder.frames:
                builder.close_block()
            end = _group_extent(lines, i, len(group["indent"]))
            block = parse_group(lines[i:end], len(group["indent"]))
            if builder.pending_relation and builder.blocks:
                builder.blocks[-1] = replace(builder.blocks[-1], relation=builder.pending_relation)
                builder.pending_relation = None
            builder.blocks.append(block)
            in_message = False
            i = end
            continue
        if ELIDED_LINE.match(text) or len(text) < ELISION_LENGTH and is_elision(text):
            builder.truncated_start = True  # frames are missing between the ones kept
            i += 1
            continue
        frame = None if quoting else parse_frame(text)
        if frame is not None and (text.startswith("  ") or not in_message):
            builder.add_frame(frame)
            in_message = False
            i += 1
            continue
        if not in_message:
            repeated = REPEATED_LINE.match(text)
            if repeated:
                builder.set_repeated(int(repeated["n"]))
                i += 1
                continue
            if CARET_LINE.match(text):
                i += 1
                continue
            if text.startswith("    ") and builder.frames and builder.type is None:
                builder.set_source(text)
                i += 1
                continue
        if is_exception_line(text) and not in_message:
            m = EXCEPTION_LINE.match(text)
            assert m is not None
            builder.set_exception(m["type"], m["msg"] or "")
            in_message = True
            i += 1
            continue
        if in_message:
            builder.add_message_line(text)
        elif builder.frames and builder.type is None and stripped:
            # A source line pasted without its indentation.
            builder.set_source(text)
        i += 1
    builder.message_lines = _strip_message_tail(builder.message_lines)
    return builder.finish()


def _group_extent(lines: list[str], start: int, indent: int) -> int:
    """Index just past the last line of the exception group starting at `start`."""
    i = start + 1
    while i < len(lines):
        text = lines[i]
        body = text[indent:]
        if len(text) > indent and not text[:indent].strip() and body[:1] in ("|", "+"):
            i += 1
            continue
        if text.startswith(" " * (indent + 1)) and text.lstrip()[:1] in ("|", "+"):
            i += 1  # a deeper nested margin
            continue
        if i + 1 < len(lines) and _has_margin(lines[i + 1], indent) and not _has_margin(lines[i - 1], indent, "+"):
            i += 1  # CPython 3.11 prints a member's message continuation without its margin
            continue
        break
    return i


def _has_margin(text: str, indent: int, marks: str = "|+") -> bool:
    return len(text) > indent and not text[:indent].strip() and text.lstrip()[:1] in marks


def parse_group(lines: list[str], indent: int) -> ExceptionBlock:
    """Parse an exception group whose `+`/`|` margin sits at column `indent`."""
    own: list[str] = []
    i = 1  # line 0 is the "+ Exception Group Traceback" header
    own.append(TRACEBACK_HEADER)
    while i < len(lines):
        body = lines[i][indent:]
        if body.startswith("|"):
            own.append(body[2:] if body.startswith("| ") else body[1:])
            i += 1
            continue
        break
    members, more = _parse_members(lines[i:], indent)
    chain = parse_chain(own)
    if not chain:
        chain = (ExceptionBlock(type="ExceptionGroup", message="", truncated=True),)
    head = chain[-1]
    return replace(head, members=members, more_members=more)


def _parse_members(lines: list[str], indent: int) -> tuple[tuple[tuple[ExceptionBlock, ...], ...], int]:
    """Members start with `+-+---- 1 ----` at `indent`; their own lines sit at indent+2."""
    if not lines or not MEMBERS_START.match(lines[0][indent:].rstrip()):
        return (), 0
    inner = indent + 2
    members: list[tuple[ExceptionBlock, ...]] = []
    more = 0
    current: list[str] = []

    def flush() -> None:
        nonlocal more
        if not current:
            return
        first = current[0][inner:]
        # A line without margin (a 3.11 message continuation) is kept whole.
        texts = [line[inner:] if not line[:inner].strip() else line for line in current]
        flat = [t[2:] if t.startswith("| ") else t[1:] if t.startswith("|") else t for t in texts]
        more_match = MORE_EXCEPTIONS.match(flat[0].strip()) if len(flat) == 1 else None
        if more_match:
            more += int(more_match["n"])
        elif first.startswith("|") and not any(t.startswith("+") for t in texts):
            members.append(parse_chain(flat))
        else:
            members.append(_parse_nested_member(current, inner))
        current.clear()

    for line in lines[1:]:
        body = line[inner:] if len(line) >= inner else line.strip()
        if line[:inner].strip() == "" and (MEMBER_SEPARATOR.match(body.rstrip()) or GROUP_END.match(body.rstrip())):
            flush()
            continue
        current.append(line)
    flush()
    return tuple(members), more


def _parse_nested_member(lines: list[str], inner: int) -> tuple[ExceptionBlock, ...]:
    """A member that is itself a group: `| ExceptionGroup: …` then `+-+--- 1 ---` at the same margin."""
    own = [TRACEBACK_HEADER]
    i = 0
    while i < len(lines) and lines[i][inner:].startswith("|"):
        body = lines[i][inner:]
        own.append(body[2:] if body.startswith("| ") else body[1:])
        i += 1
    # A nested group printed with its own traceback header.
    if own[1:] and GROUP_HEADER.match("  " + own[1].lstrip()) is None and own[1].startswith("Exception Group Traceback"):
        own[1] = TRACEBACK_HEADER
    members, more = _parse_members(lines[i:], inner)
    chain = parse_chain(own)
    if not chain:
        chain = (ExceptionBlock(type="ExceptionGroup", message="", truncated=True),)
    return (*chain[:-1], replace(chain[-1], members=members, more_members=more))


def parse_faulthandler(lines: list[str]) -> tuple[ExceptionBlock, ...]:
    """`Fatal Python error: …` then per-thread stacks, newest call first."""
    message = ""
    frames: list[Frame] = []
    current = False
    seen_current = False
    other_frames: list[Frame] = []
    for text in lines:
        header = FATAL_HEADER.match(text.strip())
        if header:
            message = header["msg"]
            continue
        thread = THREAD_HEADER.match(text.strip())
        if thread:
            current = thread["current"] == "Current thread"
            seen_current = seen_current or current
            continue
        m = FAULT_FRAME_LINE.match(text)
        if m:
            line = int(m["line"]) if m["line"].isdigit() else None
            frame = Frame(file=m["file"], line=line, function=m["func"].rstrip())
            (frames if current else other_frames).append(frame)
    chosen = frames if seen_current else other_frames
    chosen.reverse()  # faulthandler prints the newest call first
    return (ExceptionBlock(type="Fatal Python error", message=message, frames=tuple(chosen)),)
