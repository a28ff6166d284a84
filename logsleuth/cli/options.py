"""typer's parameters for the shared options, built from the one option table (cli/option_table.py).

A command that takes the table's options for its name is declared with `@table_options("diagnose")` and a
`**options` parameter: the decorator gives it one keyword parameter per option, with the table's words, help,
metavar, limits and default, so `diagnose` and `health` cannot accept different values for the same option,
and no command lists its options a second time.  A command that takes only a few of them (case, diff, check,
launch) names each with its `Annotated` alias (`width: WidthOption = None`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from logsleuth.cli.option_table import FORMAT_HELP, OPTIONS, Option, options_of
from logsleuth.render.options import OutputFormat

__all__ = ["FORMAT_HELP", "table_options", "typer_option"]

Command = TypeVar("Command", bound=Callable[..., Any])


class SSHBackendChoice(StrEnum):  # the table's SSH_BACKEND_CHOICES (a test keeps them the same)
    AUTO = "auto"
    PARAMIKO = "paramiko"
    OPENSSH = "openssh"


def typer_option(long: str, **changes: Any) -> Any:
    """The typer.Option of the table's option `long` (`changes`: a command's own help wording, say)."""
    option = OPTIONS[long]
    settings: dict[str, Any] = {"help": option.help}
    if option.metavar:
        settings["metavar"] = option.metavar
    if option.minimum is not None:
        settings["min"] = option.minimum
    settings.update(changes)
    return typer.Option(*option.names, **settings)


def _value_type(option: Option) -> Any:
    """The Python type typer converts the option's words to."""
    if option.kind == "flag":
        return bool
    if option.kind == "choice":
        return OutputFormat | None if option.param == "output_format" else SSHBackendChoice
    if option.kind == "path":
        return list[Path] | None if option.repeatable else Path | None
    if option.kind == "count":
        return int if option.default is not None else int | None
    if option.kind == "seconds":
        return float | None
    return str if option.default is not None else str | None


def annotated(long: str, **changes: Any) -> Any:
    """`Annotated[type, typer.Option(...)]` for the table's option `long`."""
    return Annotated[_value_type(OPTIONS[long]), typer_option(long, **changes)]


def table_options(command: str, **help_of: str) -> Callable[[Command], Command]:
    """Give a command function that ends in `**options` one keyword parameter per option the table lists for
    `command`, in the table's order (typer reads `__signature__`).  `help_of`: this command's own help for an
    option, keyed by its parameter name."""

    def decorate(function: Command) -> Command:
        signature = inspect.signature(function, eval_str=True)  # a __signature__ is taken as it is: no strings
        own = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        shared = [
            inspect.Parameter(
                option.param,
                inspect.Parameter.KEYWORD_ONLY,
                default=option.default,
                annotation=annotated(option.long, **({"help": help_of[option.param]} if option.param in help_of else {})),
            )
            for option in options_of(command)
        ]
        function.__signature__ = signature.replace(parameters=[*own, *shared])  # type: ignore[attr-defined]
        return function

    return decorate


# The options a command names one by one (explicit types: mypy reads these as the parameters' types).
FormatOption = Annotated[OutputFormat | None, typer_option("--format")]
OutputFileOption = Annotated[Path | None, typer_option("--output")]
WidthOption = Annotated[int | None, typer_option("--width")]
MaxCharsOption = Annotated[int, typer_option("--max-chars")]
NoRedactOption = Annotated[bool, typer_option("--no-redact")]
AnonymizeOption = Annotated[bool, typer_option("--anonymize")]
CommandOption = Annotated[str | None, typer_option("--cmd")]
EngineVersionOption = Annotated[str | None, typer_option("--engine-version")]
AllFailuresOption = Annotated[bool, typer_option("--all")]
MaxBytesOption = Annotated[str, typer_option("--max-bytes")]
PatternDirsOption = Annotated[list[Path] | None, typer_option("--patterns")]
NoUserPatternsOption = Annotated[bool, typer_option("--no-user-patterns")]
SSHConfigOption = Annotated[Path | None, typer_option("--ssh-config")]
AcceptNewHostKeyOption = Annotated[bool, typer_option("--accept-new-host-key")]
SSHBackendOption = Annotated[SSHBackendChoice, typer_option("--ssh-backend")]
HostsFileOption = Annotated[str | None, typer_option("--hosts-file")]
ParallelOption = Annotated[int, typer_option("--parallel")]
