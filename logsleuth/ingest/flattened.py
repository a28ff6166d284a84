"""A Python traceback a paste flattened onto one line, or a few long lines, its line breaks lost (an issue form's
single-line field, a chat client, a log shipper that joins a record's lines with spaces): `Traceback (most recent call
last): File "x.py", line 3, in <module> main() File "/y.py", line 12, in main raise ValueError("bad") ValueError:
msg`.  CPython prints every part of it on a line of its own (Lib/traceback.py StackSummary.format: `  File "{}", line
{}, in {}` then the source line indented by four; TracebackException.format_exception_only: `Type: message` last;
the chain separators between tracebacks), so the line is cut back at those parts and the lines it had are read as
printed (Reflow.lines, before anything else reads them).

Only a line holding CPython's header followed by a frame, or two frames and the exception line after the last, or a
frame with text after it right after such a line: a sentence quoting one frame (`the error is in File "x.py", line
3`), or two with no exception after them, is left as it is.  Nor a record logged at a quiet level or one saying it
retries (`WARNING … Request failed, retrying: Traceback …`, `DEBUG … slow call from: File …`): a stack a server logs
on its way is no failure, as its printed lines are none (their record's level is theirs).  Every piece gets the
line's log prefix (torchrun's `[rank1]: `, a process prefix and a logger's header), so the normalizer reads each as
it read the line: its rank, its stream."""

from __future__ import annotations

import re
from collections.abc import Callable

from logsleuth.ingest.line_shapes import CAUSE_SEPARATOR, CONTEXT_SEPARATOR, TORCHRUN_PREFIX, TRACEBACK_HEADER
from logsleuth.lazyre import compile_lazily

FRAME_WORDS = 'File "'
# The parts CPython prints on lines of their own: the header, the chain separators, a frame's location.
_PART = compile_lazily(
    rf"(?P<header>{re.escape(TRACEBACK_HEADER)})"
    rf"|(?P<separator>{re.escape(CAUSE_SEPARATOR)}|{re.escape(CONTEXT_SEPARATOR)})"
    r"|(?P<frame>File \"[^\"\n]{1,500}\", line \d{1,7}, in (?:<[a-z]+>|[\w.]{1,200}))"
)
# The exception line inside the last frame's text: a class name then a colon, or alone at the end: one ending in
# Error, Exception, Exit, Interrupt, Warning, Fault, Failure or Timeout, or any class a module path names
# (`triton.runtime.errors.OutOfResources: …`, `httpx.ReadTimeout: …`, `torch._dynamo.exc.BackendCompilerFailed: …`,
# as tracebacks/grammar.STRICT_EXCEPTION_LINE reads a dotted class).  `raise ValueError("bad")` before it has no colon
# after the name; the leftmost is the exception (a chained message quotes the inner one after it).
_EXCEPTION = compile_lazily(
    r"(?:^|(?<=\s))(?P<exc>(?:[A-Za-z_][\w.]{0,200}(?:Error|Exception|Exit|Interrupt|Warning|Fault|Failure|Timeout)"
    r"|(?:[A-Za-z_]\w{0,60}\.){1,8}[A-Z]\w{1,80})(?::\s|:$|$))"
)
# A lead (the text before the first part) that is a record logged at a quiet level or says the call is retried: the
# stack it holds was logged on the way.
_QUIET_LEAD = compile_lazily(r"\b(?:DEBUG|INFO|WARNING|WARN)\b|(?i:\bretr(?:y|ying|ied)\b|\bfall(?:ing)? ?back\b)")
_CARETS = compile_lazily(r"(?:^|\s)[\^~]{3,}(?=\s|$)")


def unflattened(text: str, after_flattened: bool = False, body: Callable[[str], str] = lambda text: text
                ) -> list[str] | None:
    """The lines a flattened traceback had, else None.  `after_flattened`: the line before was one (a paste that
    kept a few long lines), so a line holding one frame with text after it is one too.  `body`: the text after a
    line's process prefix and logger header (normalize.after_line_prefix)."""
    if FRAME_WORDS not in text or len(text) > 65536:
        return None
    parts = list(_PART.finditer(text))
    frames = [m for m in parts if m["frame"]]
    if not frames:
        return None
    headed = any(m["header"] and text[m.end():].lstrip().startswith(FRAME_WORDS) for m in parts)
    if not (headed or (len(frames) >= 2 and _EXCEPTION.search(text, frames[-1].end()) is not None)
            or (after_flattened and text[frames[0].end():].strip())):
        return None
    lead = text[:parts[0].start()]
    if _QUIET_LEAD.search(lead) is not None:
        return None
    rank = TORCHRUN_PREFIX.match(lead)
    after_rank = lead[rank.end():] if rank else lead
    prefix = (lead[:rank.end()] if rank else "") + after_rank[:len(after_rank) - len(body(after_rank))]
    return [f"{prefix}{line}" if line else prefix.rstrip()
            for line in _lines(text, parts, lead[len(prefix):].rstrip())]


def _lines(text: str, parts: list[re.Match[str]], lead: str) -> list[str]:
    """The lines of the parts, the lead (the text before the first, its log prefix taken off) on the first."""
    lines: list[str] = []
    for index, m in enumerate(parts):
        end = parts[index + 1].start() if index + 1 < len(parts) else len(text)
        after = _CARETS.sub(" ", text[m.end():end]).strip()
        if m["header"]:
            lines.append(f"{lead} {TRACEBACK_HEADER}".lstrip() if index == 0 and lead else TRACEBACK_HEADER)
            if after:
                lines.append(after)
        elif m["separator"]:
            if index == 0 and lead:
                lines.append(lead)
            lines.extend(("", CAUSE_SEPARATOR if "direct cause" in m["separator"] else CONTEXT_SEPARATOR, ""))
            if after:
                lines.append(after)
        else:
            if index == 0 and lead:
                lines.append(lead)
            lines.append(f"  {m['frame']}")
            lines.extend(_frame_rest(after, last=index + 1 == len(parts) or not parts[index + 1]["frame"]))
    return lines


def _frame_rest(after: str, *, last: bool) -> list[str]:
    """A frame's source line, and after the last frame of a traceback its exception line."""
    if not after:
        return []
    exception = _EXCEPTION.search(after) if last else None
    if exception is None:
        return [f"    {after}"]
    source = after[:exception.start()].strip()
    return [*([f"    {source}"] if source else []), after[exception.start():].strip()]
