"""What every command's program prints and reads, without importing the api: `diagnose` (cli/program.py),
`health` (cli/health_program.py), `diff` and `case` share these.  Neither this module nor what it imports at
the top imports typer or rich."""

from __future__ import annotations

import codecs
import contextlib
import os
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from logsleuth.errors import LogsleuthError, SourceError, UsageError
from logsleuth.render.options import MIN_WIDTH, OutputFormat
from logsleuth.render.safety import strip_controls
from logsleuth.sources.options import SSHBackend, SSHOptions
from logsleuth.sources.source_spec import SourceSpec

if TYPE_CHECKING:
    from logsleuth.models import Report


def terminal_text(message: str) -> str:
    """A message for the terminal, made inert like report text: secrets redacted (always: stderr ends up in
    CI logs, whatever --no-redact says of the report), escape sequences and control characters removed."""
    from logsleuth.redact import redact_secrets

    return strip_controls(redact_secrets(message))


def print_stderr(message: str, command: str | None = None) -> None:
    """The one way logsleuth prints an error, a warning or a watch line: `logsleuth: ` (`logsleuth COMMAND: ` for
    the commands that name themselves) and one clean line: secrets redacted, escapes and control characters gone
    (a file name may hold them)."""
    prefix = f"logsleuth {command}" if command else "logsleuth"
    print(f"{prefix}: {terminal_text(message).replace(chr(10), ' ')}", file=sys.stderr, flush=True)


def write_report(text: str, fmt: OutputFormat) -> None:
    """JSON is UTF-8 by definition (RFC 8259), so it is written as UTF-8 whatever the locale says.  The
    other formats follow the stream's encoding; what it cannot encode (`›` on an ASCII terminal) is
    written as a backslash escape rather than failing the run or printing mojibake."""
    stream = sys.stdout
    encoding = getattr(stream, "encoding", None) or "utf-8"
    buffer = getattr(stream, "buffer", None)
    if fmt is OutputFormat.JSON and buffer is not None and codecs.lookup(encoding).name != "utf-8":
        stream.flush()
        buffer.write(text.encode("utf-8"))
        buffer.flush()
        return
    if buffer is not None:
        text = text.encode(encoding, "backslashreplace").decode(encoding)
    stream.write(text)
    stream.flush()


def ssh_options(
    config: Path | None,
    accept_new_host_key: bool,
    backend: SSHBackend,
    *,
    all_files: bool = False,
    timeout: float | None = None,
) -> SSHOptions:
    """How diagnose, watch and launch reach a host, from their shared command-line options.  `timeout` bounds
    the whole command, connecting included (three connect attempts must not outlast it)."""
    return SSHOptions(
        config_file=str(config) if config else None,
        accept_new_host_key=accept_new_host_key,
        backend=backend,
        all_files=all_files,
        notice=print_stderr,  # "Permanently added … to the list of known hosts", as OpenSSH prints it
        deadline=time.monotonic() + timeout if timeout is not None else None,
        deadline_seconds=timeout,
    )


# `-o FILE` without --format: the format its extension names (anything else is plain text).
EXTENSION_FORMATS = {
    ".json": OutputFormat.JSON,
    ".md": OutputFormat.MARKDOWN,
    ".markdown": OutputFormat.MARKDOWN,
    ".slack": OutputFormat.SLACK,
    ".txt": OutputFormat.TEXT,
    ".text": OutputFormat.TEXT,
    ".log": OutputFormat.TEXT,
}


def default_format(output: Path | None) -> OutputFormat:
    """--format when it is not given: the output file's extension, else rich on a terminal, else text."""
    if output is not None:
        return EXTENSION_FORMATS.get(output.suffix.lower(), OutputFormat.TEXT)
    return OutputFormat.RICH if sys.stdout.isatty() else OutputFormat.TEXT


FALLBACK_WIDTH = 80  # a pipe or a file: what rich, man and git assume


def output_width(explicit: int | None, to_terminal: bool) -> int:
    """--width, else $COLUMNS (as rich reads it), else the terminal's width when the report goes to one,
    else 80 columns."""
    if explicit is not None:
        return explicit
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return max(MIN_WIDTH, int(columns))
    if to_terminal:
        with contextlib.suppress(OSError, ValueError):
            return max(MIN_WIDTH, os.get_terminal_size(sys.stdout.fileno()).columns)
    return FALLBACK_WIDTH


def output_height(to_terminal: bool) -> int | None:
    """The terminal's rows when the report goes to one ($LINES first, as rich reads it), else None: a report
    taller than that ends with a recap line (render/rich_view.py)."""
    if not to_terminal:
        return None
    lines = os.environ.get("LINES", "")
    if lines.isdigit() and int(lines) > 0:
        return int(lines)
    with contextlib.suppress(OSError, ValueError):
        return os.get_terminal_size(sys.stdout.fileno()).lines
    return None


def sources_or_stdin(sources: list[str] | None, hosts_file: str | None = None) -> list[SourceSpec]:
    """The sources given, their host ranges and `{host}` templates expanded (docs/fleet-syntax.md), or stdin
    when none is given and a log is piped in (`cat server.log | logsleuth diagnose`).  With a hosts file there
    is no stdin default: the file names the sources (and may itself be stdin)."""
    if sources or hosts_file is not None:
        from logsleuth.sources.fleet import expand_sources

        return expand_sources(sources or [], hosts_file)  # a hosts file that names none is its UsageError
    if sys.stdin is not None and not sys.stdin.isatty():
        return [SourceSpec("-", "stdin")]
    raise UsageError("no log given: name a file or HOST:PATH, or pipe one in (cat server.log | logsleuth diagnose)")


def stdin_chunks(size: int = 1 << 20) -> Iterator[bytes]:
    """stdin's bytes, a chunk at a time (`case -`, `diff -`).  SourceError when there is no stdin: started with
    fd 0 closed (`<&-`), Python sets sys.stdin to None; or when reading it fails."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:
        raise SourceError("stdin: not open (nothing to read)")
    try:
        yield from iter(lambda: buffer.read(size), b"")
    except OSError as exc:
        raise SourceError(f"stdin: {exc.strerror or exc}") from None


def write_output(output: Path, text: str) -> None:
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise LogsleuthError(f"cannot write {output}: {exc.strerror or exc}") from None




def deliver(text: str, fmt: OutputFormat, output: Path | None, errors: list[str], warnings: tuple[str, ...]) -> None:
    """A report out: each source's error and each warning once on stderr, the report on stdout or in
    `output` (--output)."""
    for error in errors:
        print_stderr(error)
    for warning in warnings:
        print_stderr(f"warning: {warning}")
    if output is not None:
        write_output(output, text)
    else:
        write_report(text, fmt)


STDIN_NAME = "<stdin>"


@contextlib.contextmanager
def spooled_stdin(specs: Sequence[str]) -> Iterator[tuple[list[str], str | None]]:
    """stdin spooled to a temporary file, so that the lines around the failure can be read again after the
    diagnosis (a pipe is read once): `case`, and `diagnose --explain`, whose case file needs them.  Yields the
    specs with `-` replaced, and the temporary path."""
    if "-" not in specs:
        yield list(specs), None
        return
    import tempfile  # here: its import (random, hashlib) costs every start ~20 ms

    with tempfile.NamedTemporaryFile(prefix="logsleuth-stdin-", suffix=".log") as spool:
        for chunk in stdin_chunks():
            spool.write(chunk)
        spool.flush()
        yield [spool.name if spec == "-" else spec for spec in specs], spool.name


def renamed_source(report: Report, old: str, new: str) -> Report:
    """The report with a source named `new` instead of `old` (the spooled stdin is `<stdin>` to the reader)."""
    sources = tuple(replace(s, name=new) if s.name == old else s for s in report.sources)
    failures = tuple(
        replace(group, sources=tuple(new if name == old else name for name in group.sources)) for group in report.failures
    )
    return replace(report, sources=sources, failures=failures)
