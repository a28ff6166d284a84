"""Read what a real launch_server run did from its combined output: argparse error or the final exception.

Shared by make_fixtures.py (fixture metadata, assert inventory) and verify_fixes.py (sanity checks).
Only plain CPython traceback and argparse formats are parsed; logsleuth's own parser is the product,
this is just bookkeeping for the oracle.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

_FRAME_RE = re.compile(r'^  File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.+)$')
_EXC_RE = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)?)(?::\s?(?P<msg>.*))?$"
)
_COMPOUND = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.TryStar,
    ast.Match,
)
_ARGPARSE_RE = re.compile(r"^(?P<prog>[^\s:][^:]*): error: (?P<msg>.*)$")


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    function: str


@dataclass
class Outcome:
    kind: str  # "passed" | "argparse" | "exception" | "unknown"
    exception_type: str = ""
    message: str = ""
    frames: list[Frame] = field(default_factory=list)

    @property
    def innermost(self) -> Frame | None:
        return self.frames[-1] if self.frames else None

    @property
    def innermost_sglang(self) -> Frame | None:
        return next((f for f in reversed(self.frames) if "/sglang/" in f.file), None)


def parse_outcome(output: str, passed: bool) -> Outcome:
    if passed:
        return Outcome("passed")
    lines = output.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last):")]
    if starts:
        frames: list[Frame] = []
        i = starts[-1] + 1
        while i < len(lines):
            m = _FRAME_RE.match(lines[i])
            if m:
                frames.append(Frame(m["file"], int(m["line"]), m["func"]))
            elif lines[i] and not lines[i].startswith(" "):
                break  # first unindented line after the frames: the exception line
            i += 1
        exc_line = lines[i] if i < len(lines) else ""
        m = _EXC_RE.match(exc_line)
        if m:
            # Messages can span lines (ValueError with a long f-string); keep them until a blank line.
            msg_lines = [m["msg"] or ""]
            for extra in lines[i + 1 :]:
                if not extra.strip() or extra.startswith("[") or extra.startswith("Traceback"):
                    break
                msg_lines.append(extra)
            return Outcome("exception", m["type"], "\n".join(msg_lines).strip(), frames)
        return Outcome("exception", "", exc_line, frames)
    for line in reversed(lines):
        m = _ARGPARSE_RE.match(line)
        if m:
            return Outcome("argparse", "SystemExit(2)", m["msg"])
    return Outcome("unknown", message="\n".join(lines[-5:]))


def statement_at(path: str | Path, line: int) -> tuple[int, int, str] | None:
    """(first line, last line, source) of the innermost simple statement covering ``line``.

    Python 3.11 blames the last line of a multi-line ``assert (...)`` (3.12 the first), so the inventory
    records the whole statement instead of trusting one line number.
    """
    try:
        source = Path(path).read_text()
        tree = ast.parse(source)
    except (OSError, SyntaxError):
        return None
    best: ast.stmt | None = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or isinstance(node, _COMPOUND):
            continue
        end = node.end_lineno or node.lineno
        if node.lineno <= line <= end and (
            best is None or end - node.lineno <= (best.end_lineno or 0) - best.lineno
        ):
            best = node
    if best is None:
        # e.g. a TypeError raised by an `if` condition: the blamed line itself is the useful text.
        lines = source.splitlines()
        return (line, line, lines[line - 1].strip()) if 0 < line <= len(lines) else None
    segment = ast.get_source_segment(source, best) or ""
    return best.lineno, best.end_lineno or best.lineno, segment
