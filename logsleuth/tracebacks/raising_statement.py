"""The exception a traceback's raising statement names, when the paste lost the exception line (issue 28, stop 39's
blind split).

CPython prints the innermost frame's source line, the statement that raised, right above the exception line.  A
paste cut there (at the statement's first line: `raise ValueError(`, `assert (`), or one whose frames lost their
`File "…", line N, in f` prefix, keeps that statement and no `Type: message` line.  The statement still names the
type: `raise X(…)` / `raise X` raises X, and a failing `assert` raises AssertionError.  The message is the one plain
literal the statement spells out on its line, else unknown (it is on the lines the paste cut) and empty; the block is
marked truncated, and the report says the type was inferred from the last frame (render/view.exception_line).  A
last frame that shows no such statement is placed by the raise site index (indexed_statement.py).

Only a statement that names a class counts: `raise` alone re-raises and `raise exc` raises a variable, whose type
the statement does not say.
"""

from __future__ import annotations

from collections.abc import Sequence

from logsleuth.ingest.line_shapes import CARET_LINE
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ExceptionBlock, Frame

# `raise ValueError(`, `raise torch.OutOfMemoryError(…) from e`, `raise RuntimeError`, `assert x > 0, (`, `assert (`.
# A class name is CamelCase (its last part starts upper-case and holds a lower-case letter): `raise exc`, `raise e`
# and `raise ERRORS[k]` name no class.
RAISING_STATEMENT = compile_lazily(
    r"^\s*(?:raise\s+(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*[a-z]\w*)\s*(?:\(.*|from\s.*)?|(?P<assert>assert)(?:\s.*|\(.*))$"
)
# A frame line that lost CPython's `File "…", line N, in f` wording but kept the place: `  /x/vllm/config.py, in
# __init__`, `vllm/config.py:233 in __init__`, `/x/config.py, line 233`.  A path to a Python file and a line or a
# function: the rest of a frame line, not a sentence that names a file.
STRIPPED_FRAME = compile_lazily(r"^\s*\"?[\w./\\~:-]*\w\.py\"?(?:(?::\d+|,? line \d+)(?:,? in \w+)?|,? in [\w<>.]+)\s*:?\s*$")
# The same, read for its parts: the file, and the line or the function it kept.
STRIPPED_FRAME_PARTS = compile_lazily(
    r"^\s*\"?(?P<file>[\w./\\~:-]*\w\.py)\"?(?:(?::(?P<line>\d+)|,? line (?P<numbered>\d+))(?:,? in (?P<function>\w+))?"
    r"|,? in (?P<named>[\w<>.]+))\s*:?\s*$"
)
# Lines a statement block starts with: quoted code, not the source lines CPython prints (one statement per frame).
_BLOCK_OPENER = compile_lazily(r"^\s*(?:if|elif|else|for|while|try|except|finally|with|def|class|async)\b")
MIN_SOURCE_RUN = 2  # frames shown only by their source lines: at least this many above the raising statement


def raised_type(source: str) -> str | None:
    """The type the raising statement `source` names (`raise X(` -> X, `assert …` -> AssertionError), else None."""
    if "raise" not in source and "assert" not in source:
        return None
    m = RAISING_STATEMENT.match(source)
    if m is None:
        return None
    return "AssertionError" if m["assert"] else m["type"]


# The message a raising statement spells out as one plain string literal closed on its line: `raise ValueError("x")`,
# `raise X('x') from e`, `assert cond, "x"`.  An f-string's holes, a `%` or `.format` call, a literal continued on the
# next line are not the printed text, so they give none (an f-string without holes is plain).
_RAISED_LITERAL = compile_lazily(r"^\s*raise\s+[\w.]+\(\s*f?(?P<q>[\"'])(?P<msg>[^\"'\\{}]*)(?P=q)\s*\)\s*(?:from\s+\S+\s*)?$")
_ASSERTED_LITERAL = compile_lazily(r"^\s*assert\s(?P<test>.+?),\s*\(?\s*f?(?P<q>[\"'])(?P<msg>[^\"'\\{}]*)(?P=q)\s*\)?\s*$")


# An import statement: `from x.y import (a, b,`, `import x.y`, `from . import z`.
_IMPORT_STATEMENT = compile_lazily(r"^\s*(?:from\s+\.*[\w.]*\s+import\s+\S|import\s+[A-Za-z_][\w.]*\s*(?:,|as\s|$))")


def imported_type(source: str) -> str | None:
    """ImportError for an import statement (`from x import y`, `import x`), else None.  CPython raises the import's
    own failure there (ModuleNotFoundError, a subclass, for a module not found); a failure in the imported module's
    own code shows that module's frame below it, so an import that is the last frame a traceback shows failed as an
    import.  Read only for a traceback's parsed frames: a pasted script's imports are no failure."""
    return "ImportError" if ("import" in source and _IMPORT_STATEMENT.match(source)) else None


def statement_message(source: str) -> str:
    """The message the raising statement `source` prints, when it is one plain literal on the line, else ""."""
    if (m := _RAISED_LITERAL.match(source)) is not None:
        return m["msg"].strip()
    m = _ASSERTED_LITERAL.match(source)
    if m is None or not _balanced(m["test"]):
        return ""  # `assert s in ("a", "b")`: the comma is inside the test, the literal a member of it
    return m["msg"].strip()


def _balanced(test: str) -> bool:
    """An assert's test closes every bracket and quote it opens (a comma after it ends the test)."""
    depth = sum(test.count(c) for c in "([{") - sum(test.count(c) for c in ")]}")
    return depth == 0 and test.count('"') % 2 == 0 and test.count("'") % 2 == 0


def without_cut_frame(frames: tuple[Frame, ...]) -> tuple[Frame, ...]:
    """`frames` less a last frame a paste cut after its file (parse_frame: no line, no function): the statement
    readers read the frame before it, whose line the paste shows (`from vllm.config import (` above a cut
    `File "/…/vllm/config.py", l`)."""
    if len(frames) > 1 and frames[-1].line is None and frames[-1].function is None and not frames[-1].source:
        return frames[:-1]
    return frames


def typed_by_statement(block: ExceptionBlock) -> bool:
    """The block's type was read from its raising statement, its exception line lost: truncated, and the innermost
    frame's source names that type (its message, if any, is the statement's literal)."""
    frames = without_cut_frame(block.frames)
    source = frames[-1].source if frames else None
    named = raised_type(source or "") or imported_type(source or "")
    return block.truncated and block.typed_from_statement and bool(source) and named == block.type


def lost_its_exception_line(block: ExceptionBlock) -> bool:
    """No exception line was pasted for the block: no type at all, or only the one its raising statement names (a
    record or a line pasted above that names the exception says more, and replaces it)."""
    return not block.type or typed_by_statement(block)


def stripped_frames_above(statement: str, above: Sequence[str]) -> bool:
    """Whether the lines right above a raising statement (nearest last) are a traceback's frames that lost their
    `File` lines: one of them is a frame's place without CPython's wording (STRIPPED_FRAME), or they are source lines
    as CPython prints them, each at the statement's own indentation and none opening a block (quoted code indents a
    `raise` under its `if …:`)."""
    run: list[str] = []
    for text in reversed(above):
        if not text.strip():
            break
        if not CARET_LINE.match(text):  # CPython 3.11+'s marks under a source line
            run.append(text)
    if any(STRIPPED_FRAME.match(text) for text in run):
        return True
    indent = len(statement) - len(statement.lstrip())
    same_level = [text for text in run if len(text) - len(text.lstrip()) == indent]
    return (
        len(run) >= MIN_SOURCE_RUN
        and len(same_level) == len(run)
        and not any(text.rstrip().endswith(":") or _BLOCK_OPENER.match(text) for text in run)
    )


def statement_frame(statement: str, above: Sequence[str], unplaced: str) -> Frame:
    """The innermost frame of a traceback whose frames lost their `File` wording: the raising statement, placed by the
    frame line right above it when that line kept its file (`  /x/vllm/config.py, in verify_with_parallel_config`),
    so the engine's check it stands in can be looked up; else a frame whose file is `unplaced`."""
    nearest = next((text for text in reversed(above) if text.strip() and not CARET_LINE.match(text)), "")
    m = STRIPPED_FRAME_PARTS.match(nearest)
    if m is None:
        return Frame(file=unplaced, line=None, function=None, source=statement.strip())
    number = m["line"] or m["numbered"]
    return Frame(file=m["file"], line=int(number) if number else None, function=m["function"] or m["named"],
                 source=statement.strip())
