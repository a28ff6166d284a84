"""How users paste logs: each style is a small pure function on text (str -> str).

Keyword parameters (a prefix's pid, a clock's start) are bound with functools.partial in the case
tables; the function name is the style's name in the .toml (`paste_style`).  Each docstring says
which thread(s) showed the style.  Clocks are fixed so the output is the same on every run.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from datetime import datetime, timedelta

# an SGLang record's header, `[2025-01-02 03:04:05 TP0] ` (0.3: `[03:04:05 TP0] `); group 1 is the message
RECORD = re.compile(r"^\[(?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d(?: [^\]]+)?\] (.*)$")

# -- Markdown ------------------------------------------------------------------------------------


def fenced(text: str, info: str = "", ticks: int = 3) -> str:
    """A fenced code block (most threads: sglang#1058, #12496, #9950, #7918); four backticks in sglang#8296."""
    fence = "`" * ticks
    return f"{fence}{info}\n{text.rstrip(chr(10))}\n{fence}\n"


def fence_glued(text: str) -> str:
    """A fence whose closing backticks sit on the message's last line (`...message```), so the message
    ends at the fence.  A common GitHub habit listed in the corpus conventions; no recorded thread
    pins it to one report."""
    return f"```\n{text.rstrip(chr(10))}```\n"


def quote(text: str) -> str:
    """Markdown quote on every line, empty lines as a bare `>` (verl#1691, sglang PR#577, sglang#10835)."""
    return "".join(f"> {line}\n" if line else ">\n" for line in text.splitlines())


def inline_in_sentence(text: str, lead: str = "I get ", tail: str = " when I start the server.") -> str:
    """The exception line in inline backticks inside a sentence (flashinfer#794, sglang#29110, #18819)."""
    return f"{lead}`{text.strip()}`{tail}\n"


def inline_span(text: str) -> str:
    """A whole block inside one inline-code span: a backtick opens the first line and closes the last
    (sglang#4159 traceback, #4602 multi-line exception, #24224 exception and frame)."""
    return f"`{text.strip(chr(10))}`\n"


def bold(text: str) -> str:
    """The exception line in **bold** in prose (sglang#4330 wrote its report in bold sections, sglang#2584
    put the error under a bold label)."""
    return "".join(f"**{line}**\n" if line.strip() else "\n" for line in text.splitlines())


def quoted_in_prose(text: str, lead: str = "The launch fails with ", tail: str = ".") -> str:
    """The exception quoted with double quotes in a sentence (sglang#25877, the title of sglang#6160)."""
    return f'{lead}"{text.strip()}"{tail}\n'


def indented(text: str, spaces: int = 4) -> str:
    """A Markdown indented code block (four spaces before every line).  Listed in the corpus conventions;
    no recorded thread pins it to one report."""
    return "".join(" " * spaces + line + "\n" if line.strip() else "\n" for line in text.splitlines())


def prose(text: str, before: str = "", after: str = "") -> str:
    """Sentences around the paste, as issue templates have them ("Describe the bug", sglang#1921, #5762)."""
    head = f"{before}\n\n" if before else ""
    tail = f"\n{after}\n" if after else ""
    return f"{head}{text.rstrip(chr(10))}\n{tail}"


def details(text: str, summary: str = "Logs") -> str:
    """A collapsible block (gpustack#3392: <details><summary> around a fence)."""
    return f"<details><summary>{summary}</summary>\n\n{text.rstrip(chr(10))}\n\n</details>\n"


def details_pre(text: str) -> str:
    """Raw HTML <details><pre> instead of a fence, as in the SkyPilot report (skypilot#4723)."""
    return f"<details>\n<pre>\n{text.rstrip(chr(10))}\n</pre></div></details>\n"


def dunders_eaten(text: str) -> str:
    """Markdown read `__x__` as bold and ate the underscores (sglang#8654: `sgl_kernel/init.py`)."""
    return re.sub(r"__(\w+?)__", r"\1", text)


def autolinked(text: str, names: tuple[str, ...] = ("libc.so",)) -> str:
    """GitHub turned file names into links (verl#1691: `[libc.so](http://libc.so/).6`)."""
    for name in names:
        text = text.replace(name, f"[{name}](http://{name}/)")
    return text


def json_escaped(text: str) -> str:
    """Copied out of a JSON log record: every double quote shows as \\" (sglang#15050)."""
    return text.replace('"', '\\"')


# -- cuts and reshaping -----------------------------------------------------------------------------


def exception_only(text: str, marker: str) -> str:
    """Only the exception: from the last line starting with `marker` to the end of its message (the next
    blank line or record).  sglang#5441, #22739, #34676 pasted nothing else."""
    lines = text.splitlines()
    start = max(index for index, line in enumerate(lines) if line.startswith(marker))
    end = next((index for index in range(start + 1, len(lines)) if not lines[index].strip() or RECORD.match(lines[index])), len(lines))
    return "".join(line + "\n" for line in lines[start:end])


def also_inline(text: str, marker: str, lead: str = "The scheduler dies with ") -> str:
    """The error line first inline in a sentence, its own backticks breaking the span so the closing
    backtick lands on the next line, then the whole log (sglang#10408)."""
    line = next(line for line in reversed(text.splitlines()) if line.startswith(marker))
    return f"{lead}`{line}\n`\n\nThe complete stack trace:\n{text}"


def last_lines(text: str, count: int) -> str:
    """Only the last lines (sglang#12818: the argparse line; #14464: the innermost frames)."""
    return "".join(line + "\n" for line in text.rstrip("\n").splitlines()[-count:])


def first_lines(text: str, count: int) -> str:
    """Only the first lines: the paste stops early (sglang#4116 stops in the argparse usage block)."""
    return "".join(line + "\n" for line in text.splitlines()[:count])


def cut_after(text: str, marker: str) -> str:
    """The paste stops right after the last line containing `marker` (a traceback cut inside its raising statement:
    `raise ValueError(` kept, the exception line not; issue 28's blind split shape, paste style ours)."""
    lines = text.splitlines()
    end = max(index for index, line in enumerate(lines) if marker in line)
    return "".join(line + "\n" for line in lines[: end + 1])


def file_wording_lost(text: str) -> str:
    """Each `  File "<path>", line N, in <f>` kept as `  <path>, in <f>` (a copy that kept only the paths and functions
    of the frames; issue 28's blind split shape, paste style ours)."""
    return re.sub(r'^(\s*)File "([^"]+)", line \d+, in (\S+)$', r"\1\2, in \3", text, flags=re.M)


def cut_at_start(text: str, marker: str, occurrence: int = 1) -> str:
    """The paste begins mid-traceback, at the `occurrence`-th line containing `marker` (sglang#1279,
    #4048, #9950)."""
    lines = text.splitlines()
    hits = [index for index, line in enumerate(lines) if marker in line]
    return "".join(line + "\n" for line in lines[hits[occurrence - 1]:])


def elide(text: str, start: str, end: str, mark: str = "...") -> str:
    """Lines from the first containing `start` up to (not including) the next containing `end` replaced
    by one `...` / `…` line (sglang#24224 '...', sglang#7783 'redacted ...')."""
    lines = text.splitlines()
    first = next(index for index, line in enumerate(lines) if start in line)
    last = next(index for index in range(first + 1, len(lines)) if end in lines[index])
    return "".join(line + "\n" for line in [*lines[:first], mark, *lines[last:]])


def elide_in_line(text: str, start: str, end: str, mark: str = " redacted ... ") -> str:
    """Part of one long line cut by hand, between the first `start` and the next `end` after it
    (sglang#7783 cut the batch dump's input_ids with 'redacted ...')."""
    head, found, rest = text.partition(start)
    if not found:
        return text
    _, _, tail = rest.partition(end)
    return f"{head}{start}{mark}{end}{tail}"


def truncate_end(text: str, count: int) -> str:
    """The paste stops mid-word: the last `count` characters are missing (sglang#4289: 'the child fa')."""
    return text.rstrip("\n")[:-count] + "\n"


def grep(text: str, pattern: str) -> str:
    """Only the lines matching `pattern`, each once (sglang#29993 kept two signature lines of a long CI log)."""
    seen: list[str] = []
    for line in text.splitlines():
        if re.search(pattern, line) and line not in seen:
            seen.append(line)
    return "".join(line + "\n" for line in seen)


def gap_after_first(text: str, mark: str = "...") -> str:
    """A `...` line after the first line, where the reporter left lines out (sglang#24224)."""
    first, _, rest = text.partition("\n")
    return f"{first}\n{mark}\n{rest}"


def shorten_paths(text: str, prefix: str) -> str:
    """A path's head replaced by `...` (sglang#24224: '.../sglang/srt/layers/rotary_embedding.py')."""
    return text.replace(prefix, "...")


def join_source_lines(text: str) -> str:
    """A frame line and its source line joined into one, the line break and indent collapsed to a
    space (sglang#4048: '..., line 1796, in run_scheduler_process schedule...')."""
    return re.sub(r'^(\s*File "[^"]+", line \d+, in \S+)\n\s+(?!File ")([^\s~^])', r"\1 \2", text, flags=re.M)


def lose_last_quote(text: str) -> str:
    """The closing quote of a name lost in the copy (sglang#362: "...input_metadata`")."""
    head, quote_mark, tail = text.rpartition("'")
    return head + tail if quote_mark else text


def move_last_line_first(text: str) -> str:
    """The exception line put above the frames it ended (sglang#24224 shows the error, then the frame)."""
    lines = text.rstrip("\n").splitlines()
    return "".join(line + "\n" for line in [lines[-1], *lines[:-1]])


def reverse_lines(text: str) -> str:
    """A cloud log viewer's order, newest line first (sglang#5095)."""
    return "".join(line + "\n" for line in reversed(text.rstrip("\n").splitlines()))


def strip_indent(text: str) -> str:
    """Traceback indentation stripped (sglang#4048, #14464, #5095; the flashinfer#924 copy of sglang#5491)."""
    return "".join(line.lstrip() + "\n" for line in text.splitlines())


def hard_wrap(text: str, width: int = 80) -> str:
    """A terminal's hard wrap at `width` columns, cutting tokens (sglang#3424 `WorkNCCL(S` / `eqNum=`,
    verl#1759 at about 165 columns)."""
    out: list[str] = []
    for line in text.splitlines():
        out.extend(line[i:i + width] for i in range(0, max(len(line), 1), width))
    return "".join(line + "\n" for line in out)


def lose_first_bracket(text: str) -> str:
    """The copy lost the first character, the `[` of the first record (sglang#10408, #3424)."""
    return text[1:] if text.startswith("[") else text


def double_space(text: str) -> str:
    """A blank line after every line (sglang PR#12031 CI log, sglang#10350 faulthandler dump)."""
    return "".join(line + "\n\n" for line in text.splitlines())


def crlf(text: str) -> str:
    """Windows line ends, `^M` at every line end in a terminal (sglang PR#7434)."""
    return "".join(line + "\r\n" for line in text.splitlines())


def caret_nuls(text: str, every: int = 5) -> str:
    """NUL bytes a terminal showed as `^@`, glued to the start of some lines (sglang#1467)."""
    return "".join(("^@^@^@" if index % every == 2 and line else "") + line + "\n" for index, line in enumerate(text.splitlines()))


# -- prefixes added by what ran the server -------------------------------------------------------------


def _prefixed(text: str, prefixes: Iterator[str], keep: re.Pattern[str] | None = None) -> str:
    out = []
    for line in text.splitlines():
        out.append(line if keep is not None and keep.search(line) else next(prefixes) + line)
    return "".join(line + "\n" for line in out)


def _clock(start: str, step: timedelta, fmt: str) -> Iterator[str]:
    moment = datetime.fromisoformat(start)
    for index in itertools.count():
        yield (moment + step * index).strftime(fmt)


def docker_compose(text: str, service: str = "sglang-1") -> str:
    """`docker compose up` output, `<service>  | ` before every line (sglang#12496, #12076, #11218)."""
    return "".join(f"{service}  | {line}\n" for line in text.splitlines())


def torchrun(text: str, rank: int = 0) -> str:
    """torch's `[rankN]: ` before every line, indentation stripped after it (sglang#3604)."""
    return "".join(f"[rank{rank}]: {line.lstrip()}\n" for line in text.splitlines())


def ray(text: str, actor: str = "WorkerDict", pid: int = 4180, ip: str = "", ansi: bool = False, unprefixed: str = "") -> str:
    """Ray's actor prefix `(WorkerDict pid=N) `, `(WorkerDict pid=N, ip=A) ` (verl#1049, #705, #1611) or
    `(SGLangEngine pid=N) ` (slime#369); with the ANSI colour codes' visible remains `[36m...[0m`
    (verl#1691).  Lines matching `unprefixed` (tqdm bars) get no prefix, as in verl#705."""
    tag = f"({actor} pid={pid}{', ip=' + ip if ip else ''})"
    prefix = f"[36m{tag}[0m " if ansi else f"{tag} "
    return _prefixed(text, itertools.repeat(prefix), re.compile(unprefixed) if unprefixed else None)


def skypilot(text: str, pid: int = 8292) -> str:
    """SkyPilot's job prefix `(head, rank=0, pid=N) ` (skypilot#4723)."""
    return _prefixed(text, itertools.repeat(f"(head, rank=0, pid={pid}) "))


def journald(text: str, host: str = "gpu-node-3", unit: str = "python3", pid: int = 2315, start: str = "2025-11-30 12:00:01") -> str:
    """`journalctl -u` output, `Nov 30 12:00:01 gpu-node-3 python3[123]: ` before every line.  Seen for a
    server under systemd in community-scripts/ProxmoxVED#2047 (vLLM); no SGLang thread recorded it."""
    clock = _clock(start, timedelta(milliseconds=40), "%b %d %H:%M:%S")
    return _prefixed(text, (f"{stamp} {host} {unit}[{pid}]: " for stamp in clock))


def _nanos(start: str, step_ns: int, offset: str) -> Iterator[str]:
    """RFC 3339 with nanoseconds: `2026-01-17T18:48:10.418481013` + offset, advancing `step_ns` a line."""
    seconds, _, fraction = start.partition(".")
    base = datetime.fromisoformat(seconds)
    nanos = int(fraction)
    for index in itertools.count():
        total = nanos + step_ns * index
        moment = base + timedelta(seconds=total // 10**9)
        yield f"{moment:%Y-%m-%dT%H:%M:%S}.{total % 10**9:09d}{offset}"


def kubectl_timestamps(text: str, start: str = "2026-01-17T18:48:10.418481013", step_ns: int = 1_203_877) -> str:
    """`kubectl logs --timestamps`: an RFC 3339 nanosecond UTC time before every line (sglang#13016)."""
    return _prefixed(text, (f"{stamp} " for stamp in _nanos(start, step_ns, "Z")))


def cri(text: str, start: str = "2026-01-17T18:48:10.418481013", step_ns: int = 987_411) -> str:
    """A container runtime's log file (CRI): `<time+offset> stderr F ` before every line (sglang#17274)."""
    return _prefixed(text, (f"{stamp} stderr F " for stamp in _nanos(start, step_ns, "+01:00")))


def ci_timestamps(text: str, start: str = "2025-11-06 02:10:00.702") -> str:
    """A CI log viewer's `[2025-11-06T02:10:00.702Z] ` before every line (sglang PR#12031)."""
    clock = _clock(start, timedelta(milliseconds=1), "%Y-%m-%dT%H:%M:%S.%f")
    return _prefixed(text, (f"[{stamp[:-3]}Z] " for stamp in clock))


def cloud_log_viewer(text: str, severity: str = "ERROR", start: str = "2025-04-04T06:24:51.493646621", step_ns: int = 212) -> str:
    """A cloud log viewer export, `ERROR 2025-04-04T06:24:51.493646621Z ` before every line (sglang#5095)."""
    return _prefixed(text, (f"{severity} {stamp} " for stamp in _nanos(start, step_ns, "Z")))


def docker_desktop(text: str, start: str = "2025-04-15 14:30:13") -> str:
    """Docker Desktop's local time before every line, ahead of SGLang's own UTC stamp (sglang#5095)."""
    return _prefixed(text, (f"{stamp} " for stamp in _clock(start, timedelta(milliseconds=300), "%Y-%m-%d %H:%M:%S")))


def stderr_logger(text: str, start: str = "2025-03-02 10:26:10") -> str:
    """A wrapper that re-logs the child's stderr: `<ts> | ERROR | stderr | ` (FastChat#3372's logger)."""
    return _prefixed(text, (f"{stamp} | ERROR | stderr | " for stamp in _clock(start, timedelta(milliseconds=5), "%Y-%m-%d %H:%M:%S")))


def gpustack_logger(text: str, start: str = "2025-11-20 16:02:11.304512+08:00") -> str:
    """GPUStack's worker log: `<ts> - gpustack.worker.backends.sglang - INFO - ` (gpustack#3392)."""
    clock = _clock(start, timedelta(microseconds=873), "%Y-%m-%d %H:%M:%S.%f%z")
    return _prefixed(text, (f"{stamp[:-2]}:{stamp[-2:]} - gpustack.worker.backends.sglang - INFO - " for stamp in clock))


def shell_prompt(text: str, prompt: str, command: str) -> str:
    """The prompt and command kept above the output (sglang#391 `sgl ➜ ...`, #8131 `$python ...`)."""
    return f"{prompt}{command}\n{text}"


def dynamo_logger(text: str, start: str = "2025-11-05 01:56:54.243403") -> str:
    """Dynamo re-logging SGLang's records: `<ISO>Z  INFO <module>.<function>: <message>   `, ERROR for the
    scheduler's failure, continuation lines as they were (ai-dynamo/dynamo#4121)."""
    clock = _clock(start, timedelta(microseconds=137), "%Y-%m-%dT%H:%M:%S.%f")
    out = []
    for line in text.splitlines():
        record = RECORD.match(line)
        if record is None:
            out.append(line)
            continue
        message = record.group(1)
        failed = message.startswith("Scheduler hit an exception")
        where = "scheduler.run_scheduler_process" if failed else "scheduler.__init__"
        out.append(f"{next(clock)}Z {'ERROR' if failed else ' INFO'} {where}: {message}   ")
    return "".join(line + "\n" for line in out)
