"""The one error of `--explain`."""

from __future__ import annotations

from logsleuth.errors import LogsleuthError


class ExplainError(LogsleuthError):
    """`--explain` could not get an answer (no endpoint, a failing one, an answer that does not fit).

    One line, starting `--explain: `.  The caller prints it on stderr and still prints the report with its own
    exit status: an explanation is an extra, never the verdict."""

    def __init__(self, message: str) -> None:
        self.detail = " ".join(message.split())  # without the `--explain: ` prefix
        super().__init__(f"--explain: {self.detail}")
