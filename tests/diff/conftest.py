"""`logsleuth diff` tests: the command runs in-process through typer's CliRunner, registered here on a test app
exactly as cli/app.py registers it (until the lead registers it there)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from logsleuth.cli.diff import DIFF_EXIT_HELP, diff_command

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "diff"
FORMATS = ("text", "rich", "markdown", "slack", "json")


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("diff", epilog=DIFF_EXIT_HELP)(diff_command)

    @app.callback()
    def _root() -> None:  # a callback keeps `diff` a subcommand, as in cli/app.py
        pass

    return app


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def run_diff(*args: str, stdin: bytes | None = None) -> Run:
    result = CliRunner().invoke(_app(), ["diff", *args], input=stdin)
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    return Run(result.exit_code, result.stdout, result.stderr)


@pytest.fixture
def fixture_path() -> Any:
    return lambda name: str(FIXTURES / name)
