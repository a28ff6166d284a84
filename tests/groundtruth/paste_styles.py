"""Paste styles: how people quote a log in an issue thread, as text transforms of real CPython output.

Each `Style` takes what the interpreter printed for one shape (shapes.py, run by runner.py) and
pastes it the way the wild corpus shows (tests/fixtures/wild/README.md): inside Markdown, behind the
prefixes of what ran the server, hard-wrapped, cut, double-spaced, mixed with another rank.  It says
which failures it can carry (`fits`), and what of CPython's own structure survives it (`expect`):
`test_paste_styles.py` parses the paste and compares with that.

The transforms are written from the formats themselves (docker compose's `name  | `, journald's
`Mon DD HH:MM:SS host unit[pid]: `, a terminal's wrap at its width, …), never copied from a log.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Block = dict[str, Any]
Raw = dict[str, Any]  # one shape's run: kind, text (stderr), exceptions (what CPython knew)


@dataclass(frozen=True)
class Expected:
    kind: str
    exceptions: list[Block]
    truncated: bool
    count: int = 1  # failures in the paste (one per rank pasted)
    header: str | None = None


@dataclass(frozen=True)
class Style:
    name: str
    paste: Callable[[Raw, random.Random], str]
    fits: Callable[[Raw], bool] = field(default=lambda raw: True)
    expect: Callable[[Raw], Expected] = field(default=lambda raw: whole(raw))


# -- what a paste keeps of the failure -----------------------------------------------------------------


def whole(raw: Raw, count: int = 1) -> Expected:
    return Expected(raw["kind"], [dict(block) for block in raw["exceptions"]], False, count)


def final_line(raw: Raw) -> str:
    """The final exception line as printed (first line of its message only)."""
    if raw["kind"] == "usage":
        return raw["text"].rstrip("\n").splitlines()[-1]
    last = raw["exceptions"][-1]
    return f"{last['type']}: {last['message']}" if last["message"] else last["type"]


def final_lines(raw: Raw) -> list[str]:
    last = raw["exceptions"][-1]
    return f"{last['type']}: {last['message']}".splitlines() if last["message"] else [last["type"]]


def bare(raw: Raw) -> Expected:
    """Only the final exception line(s) pasted: CPython's final exception, without frames or chain."""
    last = raw["exceptions"][-1]
    kind = "usage" if raw["kind"] == "usage" else "bare"
    return Expected(kind, [{**last, "frames": [], "relation": None, "members": [], "more": 0}], False)


def is_traceback(raw: Raw) -> bool:
    return raw["kind"] == "traceback"


def one_line_final(raw: Raw) -> bool:
    """A final exception printed on one line, that a sentence can quote."""
    last = raw["exceptions"][-1]
    return raw["kind"] in ("traceback", "usage") and "\n" not in last["message"] and bool(last["message"])


def has_group(raw: Raw) -> bool:
    return any(block["members"] or block["more"] for block in raw["exceptions"])


def lines_of(raw: Raw) -> list[str]:
    return raw["text"].rstrip("\n").splitlines()


def join(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


# -- Markdown ------------------------------------------------------------------------------------------


def fenced(raw: Raw, rng: random.Random) -> str:
    info = rng.choice(("", "text", "python", "shell", "console"))
    ticks = "`" * rng.choice((3, 3, 4))
    return f"Here is the log:\n\n{ticks}{info}\n{raw['text'].rstrip(chr(10))}\n{ticks}\n\nAny idea?\n"


def fence_glued(raw: Raw, rng: random.Random) -> str:
    """The closing fence on the last line of the block: the message ends at it."""
    return f"```\n{raw['text'].rstrip(chr(10))}```\nThanks.\n"


def quote(raw: Raw, rng: random.Random) -> str:
    return "".join(f"> {line}\n" if line else ">\n" for line in lines_of(raw)) + "\nWhat does this mean?\n"


def indented_block(raw: Raw, rng: random.Random) -> str:
    """A Markdown indented code block: four spaces before every line."""
    body = "".join(f"    {line}\n" if line else "\n" for line in lines_of(raw))
    return f"The server printed:\n\n{body}\nThen it exited.\n"


def details_pre(raw: Raw, rng: random.Random) -> str:
    return f"<details>\n<summary>Full log</summary>\n<pre>\n{raw['text'].rstrip(chr(10))}\n</pre></div></details>\n"


def _around_final(template: str) -> Callable[[Raw, random.Random], str]:
    """A style that writes the final exception line into a sentence or a Markdown mark-up: `{line}`."""
    return lambda raw, rng: template.format(line=final_line(raw))


inline_in_sentence = _around_final("Starting the server with `--tp 2` I get `{line}` and it exits.\n")
bold_line = _around_final("**Errors**\n\nThe server stops at start-up:\n\n**{line}**\n\nWith 0.85 it runs.\n")
indented_line = _around_final("Serving the model:\n\n    {line}\n")


def quoted_in_prose(raw: Raw, rng: random.Random) -> str:
    opening, closing = rng.choice((('"', '"'), ("\u201c", "\u201d")))
    return f"After the upgrade it occurs that {opening}{final_line(raw)}{closing}, every time.\n"


def inline_span(raw: Raw, rng: random.Random) -> str:
    """One inline-code span over several lines: a backtick opens the first line and closes the last."""
    return f"Launched with --page-size 64; under load:\n\n`{raw['text'].strip(chr(10))}`\n"


def exception_only(raw: Raw, rng: random.Random) -> str:
    """Only the final exception, in a fence (how many people paste a `raise Exception(…)`)."""
    return f"```\n{join(final_lines(raw))}```\n"


# -- prefixes of what ran the server -------------------------------------------------------------------


def _mixed(copies: list[list[str]], rng: random.Random) -> list[str]:
    """Interleave the copies line by line (each copy in order)."""
    queues = [list(reversed(copy)) for copy in copies]
    merged: list[str] = []
    while any(queues):
        queue = rng.choice([q for q in queues if q])
        merged.append(queue.pop())
    return merged


def docker_compose(raw: Raw, rng: random.Random) -> str:
    """`docker compose up` of two replicas, each line behind `<service>  | ` (a blank line: the bare prefix)."""
    copies = [[f"sglang-{n}  | {line}" if line else f"sglang-{n}  |" for line in lines_of(raw)] for n in (1, 2)]
    return join(["Attaching to sglang-1, sglang-2", *_mixed(copies, rng)])


def torchrun(raw: Raw, rng: random.Random) -> str:
    """torchrun's `[rankN]: ` on every line of two ranks, the indentation after it stripped."""
    copies = [[f"[rank{n}]: {line.lstrip()}" for line in lines_of(raw)] for n in (0, 1)]
    return join(_mixed(copies, rng))


def journald(raw: Raw, rng: random.Random) -> str:
    """`journalctl` output of two processes: `Nov 30 12:00:01 gpu-node-3 python3[123]: `."""
    copies = [[f"Nov 30 12:00:{i % 60:02d} gpu-node-3 python3[{pid}]: {line}" for i, line in enumerate(lines_of(raw))]
              for pid in (2315, 2316)]
    return join(_mixed(copies, rng))


def _each_line(prefix: Callable[[int], str], doc: str) -> Callable[[Raw, random.Random], str]:
    """A style that writes `prefix(i)` before line i of the output."""

    def paste(raw: Raw, rng: random.Random) -> str:
        return join(prefix(i) + line for i, line in enumerate(lines_of(raw)))

    paste.__doc__ = doc
    return paste


cri = _each_line(lambda i: f"2026-01-17T18:48:10.{418481013 + i * 987411:09d}+01:00 stderr F ",
                 "A container runtime's log file: `<RFC 3339 nanoseconds+offset> stderr F `.")
cloud_log_viewer = _each_line(lambda i: f"ERROR 2025-04-04T06:24:51.{493646621 + i * 212:09d}Z ",
                              "A cloud log viewer's export: the entry's severity and time.")
stderr_logger = _each_line(lambda i: f"2025-03-02 10:26:{i % 60:02d} | ERROR | stderr | ",
                           "A wrapper re-logging its child's stderr line by line: `<ts> | ERROR | stderr | `.")
module_logger = _each_line(lambda i: f"2025-11-20 16:02:11.{304512 + i * 873:06d}+08:00 - gpustack.worker.backends.sglang - INFO - ",
                           "A wrapper logging its child's output under its own logger: `<ts> - <module> - INFO - `.")
docker_desktop = _each_line(lambda i: f"> 2025-04-15 14:30:{i % 60:02d} ", "Docker Desktop's local time before every line, quoted.")
ray_colour_remnants = _each_line(lambda i: "[36m(WorkerDict pid=1216, ip=train-8e2c7a-worker-0)[0m ",
                                 "Ray's actor prefix with what is left of its colour codes once the ESC bytes are gone.")
skypilot = _each_line(lambda i: "(head, rank=0, pid=8292) ", "SkyPilot's job prefix.")
nul_glyphs = _each_line(lambda i: "^@^@^@" if i % 3 == 1 else "", "NUL bytes a terminal shows as `^@`, at the start of some lines.")


def sglang_record(raw: Raw, rng: random.Random) -> str:
    """SGLang's record header on the first line, whose `[` the copy lost."""
    lines = lines_of(raw)
    return join([f"2025-02-09 10:14:05 TP0] Scheduler hit an exception: {lines[0]}", *lines[1:],
                 "[2025-02-09 10:14:06 TP1] Decode batch. #running-req: 1, #token: 1903, token usage: 0.01"])


def xinference_tag(raw: Raw, rng: random.Random) -> str:
    """The final message re-raised by Xinference behind its `[address=…, pid=…] ` tag."""
    last = raw["exceptions"][-1]
    printed = f"{last['type']}: {last['message'].splitlines()[0]}"
    tagged = printed.replace(": ", ": [address=0.0.0.0:39501, pid=13418] ", 1)
    lines = lines_of(raw)
    index = max(i for i, line in enumerate(lines) if line == printed)
    return join([*lines[:index], tagged, *lines[index + 1 :]])


# -- line breaks, cuts, corruption ----------------------------------------------------------------------


def wrap_width(raw: Raw) -> int:
    """A width that cuts frame lines (so the paste is really wrapped), no narrower than a terminal, and
    that no line of the output has by itself: a line exactly as long as the terminal is wide that was
    not cut cannot be told from one that was (the paste lost that), so such widths are left out."""
    lengths = {len(line) for line in lines_of(raw)}
    frames = [len(line) for line in lines_of(raw) if line.lstrip(" |").startswith('File "')]
    width = max(60, min(frames) - 7) if frames else 80
    while width in lengths:
        width += 1
    return width


def hard_wrap(raw: Raw, rng: random.Random) -> str:
    """A terminal's hard wrap at its width: every longer line cut into pieces of exactly that width."""
    return hard_wrap_at(raw, wrap_width(raw))


def hard_wrap_at(raw: Raw, width: int) -> str:
    out: list[str] = []
    for line in lines_of(raw):
        out.extend(line[i : i + width] for i in range(0, max(len(line), 1), width))
    return join(out)


def strip_indent(raw: Raw, rng: random.Random) -> str:
    return join(line.lstrip() for line in lines_of(raw))


def join_source_lines(raw: Raw, rng: random.Random) -> str:
    """A frame line and its source line joined into one by the copy."""
    return re.sub(r'^(\s*File "[^"]+", line \d+, in \S+)\n\s+(?!File ")([^\s~^])', r"\1 \2", raw["text"], flags=re.M)


def double_space(raw: Raw, rng: random.Random) -> str:
    return "".join(line + "\n\n" for line in lines_of(raw))


def json_escaped(raw: Raw, rng: random.Random) -> str:
    """Copied out of a JSON string: every double quote escaped."""
    return raw["text"].replace('"', '\\"')


def _frame_spans(lines: list[str]) -> list[tuple[int, int]]:
    """(first, end) line indexes of each frame of the last traceback: its File line, source and carets."""
    start = max(i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last):"))
    spans: list[tuple[int, int]] = []
    for i in range(start, len(lines)):
        if lines[i].startswith('  File "'):
            spans.append((i, i + 1))
        elif spans and spans[-1][1] == i and lines[i].startswith("    "):
            spans[-1] = (spans[-1][0], i + 1)
    return spans


def elide(raw: Raw, rng: random.Random) -> str:
    """The middle frames of the last traceback replaced by one `...` line."""
    lines = lines_of(raw)
    spans = _frame_spans(lines)
    return join([*lines[: spans[1][0]], rng.choice(("...", "\u2026")), *lines[spans[-1][0] :]])


def elided(raw: Raw) -> Expected:
    blocks = [dict(block) for block in raw["exceptions"]]
    blocks[-1]["frames"] = [blocks[-1]["frames"][0], blocks[-1]["frames"][-1]]
    return Expected("traceback", blocks, True)


def exception_first(raw: Raw, rng: random.Random) -> str:
    """The exception line shown first, a `...`, then the innermost frame it ended."""
    lines = lines_of(raw)
    first, end = _frame_spans(lines)[-1]
    return join([final_line(raw), "...", *lines[first:end]])


def exception_first_expected(raw: Raw) -> Expected:
    last = raw["exceptions"][-1]
    innermost = [*last["frames"][-1][:3], 0]  # a `[Previous line repeated]` line is not pasted
    return Expected("traceback", [{**last, "frames": [innermost], "relation": None}], True)


def two_ranks_by_line(raw: Raw, rng: random.Random) -> str:
    """Two ranks' identical tracebacks on one terminal, mixed at any line, no prefix at all."""
    return join(_mixed([lines_of(raw), lines_of(raw)], rng))


# -- the table ---------------------------------------------------------------------------------------------


def _plain_chain(raw: Raw) -> bool:
    """Frames and messages only: what survives losing its indentation or its quotes."""
    return is_traceback(raw) and not has_group(raw) and "SyntaxError" not in {b["type"] for b in raw["exceptions"]}


def _elidable(raw: Raw) -> bool:
    return _plain_chain(raw) and len(raw["exceptions"][-1]["frames"]) >= 4 and not any(
        frame[3] for frame in raw["exceptions"][-1]["frames"])


def _interleavable(raw: Raw) -> bool:
    """Two copies mixed at any line can be told apart only where no text repeats inside one copy:
    not a recursion's repeated frames, nor a cause printed without a traceback (its chain separator
    and blank lines then sit next to the other copy's)."""
    lines = [line for line in lines_of(raw) if line.strip()]
    return _plain_chain(raw) and all(block["frames"] for block in raw["exceptions"]) and len(set(lines)) == len(lines)


def _no_double_quotes(raw: Raw) -> bool:
    return not any('"' in block["message"] for block in raw["exceptions"])


STYLES: tuple[Style, ...] = (
    Style("fenced", fenced),
    Style("fence-glued", fence_glued, fits=lambda raw: raw["kind"] != "fatal"),
    Style("quote", quote),
    Style("indented-block", indented_block, fits=lambda raw: raw["kind"] != "usage"),
    Style("details-pre", details_pre),
    Style("inline-in-sentence", inline_in_sentence, fits=lambda raw: one_line_final(raw) and "`" not in final_line(raw), expect=bare),
    Style("bold", bold_line, fits=lambda raw: one_line_final(raw) and "*" not in final_line(raw), expect=bare),
    Style("quoted-in-prose", quoted_in_prose, fits=lambda raw: one_line_final(raw) and '"' not in final_line(raw), expect=bare),
    Style("inline-span", inline_span, fits=lambda raw: _plain_chain(raw) and "`" not in raw["text"]),
    Style("indented-line", indented_line, fits=one_line_final, expect=bare),
    Style("exception-only", exception_only, fits=lambda raw: is_traceback(raw) and not has_group(raw), expect=bare),
    Style("docker-compose", docker_compose, expect=lambda raw: whole(raw, 2)),
    Style("torchrun", torchrun, fits=_plain_chain, expect=lambda raw: whole(raw, 2)),
    Style("journald", journald, expect=lambda raw: whole(raw, 2)),
    Style("cri", cri),
    Style("cloud-log-viewer", cloud_log_viewer),
    Style("stderr-logger", stderr_logger),
    Style("module-logger", module_logger),
    Style("docker-desktop", docker_desktop),
    Style("ray-colour-remnants", ray_colour_remnants),
    Style("skypilot", skypilot),
    Style("lost-bracket", sglang_record, fits=lambda raw: is_traceback(raw) and raw["text"].startswith("Traceback"),
          expect=lambda raw: Expected("traceback", whole(raw).exceptions, False, 1, "Scheduler hit an exception:")),
    Style("xinference-tag", xinference_tag, fits=lambda raw: is_traceback(raw) and bool(raw["exceptions"][-1]["message"])
          and not has_group(raw)),
    Style("hard-wrap", hard_wrap, fits=lambda raw: is_traceback(raw) and wrap_width(raw) < max(map(len, lines_of(raw)))),
    Style("strip-indent", strip_indent, fits=_plain_chain),
    Style("join-source-lines", join_source_lines, fits=_plain_chain),
    Style("double-space", double_space),
    Style("nul-glyphs", nul_glyphs),
    Style("json-escaped", json_escaped, fits=lambda raw: raw["kind"] != "usage" and _no_double_quotes(raw)),
    Style("elide", elide, fits=_elidable, expect=elided),
    Style("exception-first", exception_first, fits=lambda raw: one_line_final(raw) and _plain_chain(raw)
          and len(raw["exceptions"]) == 1, expect=exception_first_expected),
    Style("two-ranks-by-line", two_ranks_by_line, fits=_interleavable, expect=lambda raw: whole(raw, 2)),
)
