"""`logsleuth check [HOST] -- COMMAND|FLAGS…`: registered by cli/app.py as `app.command("check")(check_command)`."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from logsleuth.cli.options import AcceptNewHostKeyOption, SSHBackendChoice, SSHBackendOption, SSHConfigOption
from logsleuth.errors import ExitStatus, UsageError

if TYPE_CHECKING:
    from logsleuth.check.model import CheckResult
    from logsleuth.sources.options import SSHBackend

CHECK_EXIT_HELP = ("Exit status: 0 every flag passes (and SGLang's validation, where it ran, accepted it), 1 a flag, "
                   "a combination or the validation fails, 2 usage error, 3 the host could not be reached or has "
                   "no SGLang, 130 interrupted.")


class CheckFormat(StrEnum):
    TEXT = "text"
    MARKDOWN = "markdown"
    JSON = "json"


def _looks_like_host(word: str) -> bool:
    """HOST comes first and is neither a flag, an assignment, a program (python…, sglang, env) nor pasted text."""
    from logsleuth.check.words import looks_like_command_start

    return not looks_like_command_start(word) and not any(space in word for space in " \t\n")


def check_command(
    words: Annotated[list[str] | None, typer.Argument(
        help="[HOST] then, after --, the launch command or its flags; one quoted word with spaces, or -, is read "
        "as pasted text (an assistant's answer).", metavar="[HOST] -- COMMAND...", show_default=False)] = None,
    engine_version: Annotated[str | None, typer.Option(
        "--engine-version", help="The SGLang version whose flag catalog to check against (default: the newest "
        "catalog; with HOST, the version installed there).", metavar="VERSION")] = None,
    output_format: Annotated[CheckFormat, typer.Option("--format", "-f", help="text, markdown or json.")] = CheckFormat.TEXT,
    no_validate: Annotated[bool, typer.Option("--no-validate", help="Check against the catalog only; do not run "
                                              "SGLang's validation (the oracle venv).")] = False,
    allow_download: Annotated[bool, typer.Option("--allow-download", help="With HOST: let the validation fetch a "
                                                 "model's config from the hub when the model is not a local "
                                                 "directory there (asked on a terminal otherwise).")] = False,
    ssh_config: SSHConfigOption = None,
    accept_new_host_key: AcceptNewHostKeyOption = False,
    ssh_backend: SSHBackendOption = SSHBackendChoice.AUTO,
) -> None:
    """Check every flag of a launch command, or of a fix an assistant suggested, against the flag catalog of an
    SGLang release: unknown, removed, renamed and deprecated flags, bad choices and values, and flag combinations
    SGLang rejects.  Where an oracle venv for that version exists it also runs SGLang's own argument validation.
    With HOST, that validation runs on the host's own SGLang over SSH."""
    status = run_check(list(words or []), engine_version, output_format.value, validate=not no_validate,
                       allow_download=allow_download, ssh_config=ssh_config, accept_new_host_key=accept_new_host_key,
                       ssh_backend=ssh_backend.value)
    raise typer.Exit(status)


def run_check(words: list[str], version: str | None, fmt: str, *, validate: bool = True, allow_download: bool = False,
              ssh_config: Path | None = None, accept_new_host_key: bool = False, ssh_backend: str = "auto") -> int:
    """Print the check and return the exit status; errors are one line on stderr."""
    from logsleuth.check.render import RENDERERS
    from logsleuth.errors import LogsleuthError

    try:
        result = _result(words, version, validate=validate, allow_download=allow_download, ssh_config=ssh_config,
                         accept_new_host_key=accept_new_host_key, ssh_backend=ssh_backend)
    except LogsleuthError as error:
        from logsleuth.cli.program_io import print_stderr

        print_stderr(str(error), "check")  # may quote a host or pasted text
        return int(error.exit_status)
    from logsleuth.cli.program_io import write_report
    from logsleuth.render.options import OutputFormat

    # What an ASCII-only stdout cannot carry (✓) is written as an escape; JSON is ASCII already.
    write_report(RENDERERS[fmt](result), OutputFormat.JSON if fmt == "json" else OutputFormat.TEXT)
    return int(ExitStatus.NO_FAILURE if result.passed else ExitStatus.FAILURE_FOUND)


def _result(words: list[str], version: str | None, *, validate: bool, allow_download: bool, ssh_config: Path | None,
            accept_new_host_key: bool, ssh_backend: str) -> CheckResult:
    from logsleuth.check.verify import check_text, check_words

    if not words:
        raise UsageError("nothing to check: give the command or flags after --, e.g. logsleuth check "
                         "--engine-version 0.5.9 -- --tp-size 2")
    if words == ["-"]:
        return check_text(_stdin_text(), version, validate=validate)
    if len(words) > 1 and _looks_like_host(words[0]):
        return _on_host(words[0], words[1:], version, allow_download=allow_download, ssh_config=ssh_config,
                        accept_new_host_key=accept_new_host_key, ssh_backend=ssh_backend)
    return check_words(words, version, validate=validate)


def _stdin_text() -> str:
    """`check -`'s text: standard input's bytes as UTF-8 (what is not, replaced), whatever the locale says."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise UsageError("check -: there is no standard input to read (it is closed)")
    try:
        return stream.read().decode("utf-8", "replace")
    except (OSError, ValueError) as exc:
        raise UsageError(f"check -: cannot read standard input ({getattr(exc, 'strerror', None) or exc})") from None


def _on_host(host: str, words: list[str], version: str | None, *, allow_download: bool, ssh_config: Path | None,
             accept_new_host_key: bool, ssh_backend: str) -> CheckResult:
    """The host's own validation (a RemoteError is a SourceError: exit 3)."""
    from logsleuth.check.remote import check_host
    from logsleuth.check.words import parse_command_text, parse_words
    from logsleuth.cli.program import ssh_options
    from logsleuth.watch.launch import terminal_confirm

    try:
        command = parse_command_text(words[0]) if len(words) == 1 and " " in words[0] else parse_words(words)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    ssh = ssh_options(ssh_config, accept_new_host_key, cast("SSHBackend", ssh_backend))
    return check_host(host, command, version, ssh, allow_download=allow_download, confirm=terminal_confirm())
