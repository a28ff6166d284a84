"""Exit statuses and the errors that map onto them."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    NO_FAILURE = 0  # the log was read and holds no failure
    FAILURE_FOUND = 1  # a failure was found and reported
    USAGE = 2  # bad command line
    SOURCE_ERROR = 3  # a source could not be read (missing file, ssh error, ...)
    INTERNAL = 4  # a logsleuth bug, reported in one line
    TIMEOUT = 124  # watch: --timeout or --stall passed (what timeout(1) returns)
    INTERRUPTED = 130  # Ctrl-C


class LogsleuthError(Exception):
    """An error the user can act on: printed as one line, never as a traceback."""

    exit_status = ExitStatus.SOURCE_ERROR


class SourceError(LogsleuthError):
    """A source could not be opened or read."""

    exit_status = ExitStatus.SOURCE_ERROR


class UsageError(LogsleuthError):
    exit_status = ExitStatus.USAGE


class PatternError(LogsleuthError):
    """A pattern file is malformed.  `location` is `file:line` when known."""

    def __init__(self, location: str, message: str) -> None:
        super().__init__(f"{location}: {message}")
        self.location = location
        self.message = message
