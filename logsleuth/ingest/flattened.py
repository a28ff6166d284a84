"""A Python traceback a paste flattened onto one line, or a few long lines, its line breaks lost (an issue form's
single-line field, a chat client, a log shipper that joins a record's lines with spaces): `Traceback (most recent call
last): File "x.py", line 3, in <module> main() File "/y.py", line 12, in main raise ValueError("bad") ValueError:
msg`.  CPython prints every part of it on a line of its own (Lib/traceback.py StackSummary.format: `  File "{}", line
{}, in {}` then the source line indented by four; TracebackException.format_exception_only: `Type: message` last;
the chain separators between tracebacks), so the line is cut back at those parts and the lines it had are read as
printed (Reflow.lines, before anything else reads them).

Only a line holding CPython's header followed by a frame, or two frames, or a frame with text after it right after
such a line: a sentence quoting one frame (`the error is in File "x.py", line 3`) is left as it is."""

from __future__ import annotations

from logsleuth.ingest.line_shapes import CAUSE_SEPARATOR, CONTEXT_SEPARATOR, TRACEBACK_HEADER
from logsleuth.lazyre import compile_lazily

FRAME_WORDS = 'File "'
# The parts CPython prints on lines of their own: the header, the chain separators, a frame's location.
_PART = compile_lazily(
    r"(?P<header>Traceback \(most recent call last\):)"
    r"|(?P<separator>The above exception was the direct cause of the following exception:"
    r"|During handling of the above exception, another exception occurred:)"
    r"|(?P<frame>File \"[^\"\n]{1,500}\", line \d{1,7}, in (?:<[a-z]+>|[\w.]{1,200}))"
)
# The exception line inside the last frame's text: a class name (dotted, ending in Error, Exception, Exit, Interrupt or
# Warning) then a colon, or alone at the end.  `raise ValueError("bad")` before it has no colon after the name.
_EXCEPTION = compile_lazily(
    r"(?:^|(?<=\s))(?P<exc>[A-Za-z_][\w.]{0,200}(?:Error|Exception|Exit|Interrupt|Warning)(?::\s|:$|$))"
)
_CARETS = compile_lazily(r"(?:^|\s)[\^~]{3,}(?=\s|$)")


def unflattened(text: str, after_flattened: bool = False) -> list[str] | None:
    """The lines a flattened traceback had, else None.  `after_flattened`: the line before was one (a paste that
    kept a few long lines), so a line holding one frame with text after it is one too."""
    if FRAME_WORDS not in text or len(text) > 65536:
        return None
    parts = list(_PART.finditer(text))
    frames = [m for m in parts if m["frame"]]
    if not frames:
        return None
    headed = any(m["header"] and text[m.end():].lstrip().startswith(FRAME_WORDS) for m in parts)
    if not (headed or len(frames) >= 2 or (after_flattened and text[frames[0].end():].strip())):
        return None
    lines: list[str] = []
    lead = text[:parts[0].start()].rstrip()
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
