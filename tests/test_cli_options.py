"""The one option table (cli/option_table.py): typer's commands, the quick reader and the SSH helper are all
built from it, and the same option means the same thing in every command that takes it (issue 30)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from enum import StrEnum
from pathlib import Path
from typing import Any

import pytest
import typer.main

from logsleuth.cli.app import app
from logsleuth.cli.option_table import (
    COMMANDS,
    FORMATS,
    MIN_SLACK_CHARS,
    MIN_WIDTH,
    OPTIONS,
    SSH_BACKEND_CHOICES,
    options_of,
    value_words,
)
from logsleuth.cli.options import SSHBackendChoice
from logsleuth.internal.ssh_helper.argv import DIAGNOSE_VALUE_OPTIONS, WATCH_VALUE_OPTIONS
from logsleuth.render import options as render_options
from logsleuth.sources import base as sources_base
from logsleuth.sources import fanout
from logsleuth.sources.options import SSH_BACKENDS

REPO = Path(__file__).resolve().parents[1]
TABLE = REPO / "logsleuth" / "cli" / "option_table.py"
LOG = REPO / "tests" / "fixtures" / "sglang" / "0.5.9" / "chunked_prefill_not_multiple_of_page_size.log"


def _click_command(name: str) -> Any:
    return typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]


def test_the_table_imports_nothing() -> None:
    """The SSH helper reads it first thing in the console entry point, before anything else is imported."""
    tree = ast.parse(TABLE.read_text(encoding="utf-8"))
    imports = [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]
    assert [node.module for node in imports if isinstance(node, ast.ImportFrom)] == ["__future__"]
    assert [node for node in imports if isinstance(node, ast.Import)] == []


def test_the_tables_choices_and_limits_are_the_engines_own() -> None:
    assert tuple(render_options.OutputFormat) == FORMATS
    assert SSH_BACKEND_CHOICES == tuple(SSH_BACKENDS) == tuple(SSHBackendChoice)
    assert MIN_WIDTH == render_options.MIN_WIDTH
    assert MIN_SLACK_CHARS == render_options.MIN_MAX_CHARS
    assert OPTIONS["--max-bytes"].default == f"{sources_base.DEFAULT_MAX_BYTES >> 20}M"
    assert OPTIONS["--parallel"].default == fanout.DEFAULT_PARALLEL


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_typer_gives_each_command_the_tables_defaults(command: str) -> None:
    params = {p.name: p for p in _click_command(command).params}
    for option in options_of(command):
        default = params[option.param].default
        assert (default.value if isinstance(default, StrEnum) else default) == option.default, option.long


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_commands_shared_options_come_from_the_table(command: str) -> None:
    """Words, parameter, kind, metavar and lower limit as the table declares them (help may be the command's)."""
    params = {opt: param for param in _click_command(command).params for opt in param.opts}
    for long in COMMANDS[command]:
        option = OPTIONS[long]
        param = params[long]
        assert tuple(param.opts) + tuple(param.secondary_opts) == option.names, long
        assert param.name == option.param, long
        assert param.is_flag is (not option.takes_value), long
        if option.metavar:
            assert param.metavar == option.metavar, long
        if option.minimum is not None:
            assert getattr(param.type, "min", None) == option.minimum, long
        if option.kind == "choice":
            assert tuple(param.type.choices) == option.choices, long


@pytest.mark.parametrize("command", ["diagnose", "health", "diff"])
def test_a_shared_option_declared_once_everywhere_it_is_taken(command: str) -> None:
    """`--max-chars` used to be declared four ways: `health --max-chars 50` printed an empty report."""
    param = next(p for p in _click_command(command).params if "--max-chars" in p.opts)
    assert getattr(param.type, "min", None) == MIN_SLACK_CHARS


@pytest.mark.parametrize("command", ["diagnose", "health"])
def test_a_slack_report_too_short_for_its_verdict_is_a_usage_error_in_every_command(command: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "logsleuth", command, str(LOG), "--format", "slack", "--max-chars", "50"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert "--max-chars" in result.stderr and "Traceback" not in result.stderr


def test_the_ssh_helper_knows_every_option_that_takes_a_value() -> None:
    for command, known in (("diagnose", DIAGNOSE_VALUE_OPTIONS), ("watch", WATCH_VALUE_OPTIONS)):
        options = [p for p in _click_command(command).params if p.param_type_name == "option"]
        taking = {opt for p in options if not p.is_flag for opt in p.opts}
        assert known == value_words(command) == taking, command


@pytest.mark.parametrize("command", ["diagnose", "watch", "launch", "case", "health", "diff", "check", "merge", "completion"])
def test_every_commands_help_has_examples_and_names_no_repository_file(command: str) -> None:
    """A pipx install has no docs/ directory: help that sends the reader there sends them nowhere (issue 30)."""
    result = subprocess.run([sys.executable, "-m", "logsleuth", command, "--help"], capture_output=True, text=True,
                            timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    examples = result.stdout.split("Examples:", 1)[1].split("Exit status", 1)[0]
    assert [line.strip() for line in examples.strip().splitlines()][0].startswith(f"logsleuth {command} ")
    assert "docs/" not in result.stdout


def test_examples_fit_sixty_columns() -> None:
    from logsleuth.cli.help_text import EXAMPLES

    assert max(len(line) for lines in EXAMPLES.values() for line in lines) <= 56


ESCAPED_NAME = "missing-\x1b]0;owned\x07-\x1b[31mred.log"


@pytest.mark.parametrize("argv", [["health", ESCAPED_NAME], ["diff", ESCAPED_NAME, ESCAPED_NAME],
                                  ["diagnose", ESCAPED_NAME], ["case", ESCAPED_NAME]])
def test_an_error_naming_a_file_reaches_the_terminal_inert_from_every_command(argv: list[str], tmp_path: Path) -> None:
    """`health` printed its errors raw: a file name holding a terminal escape acted on the terminal (issue 30)."""
    result = subprocess.run([sys.executable, "-m", "logsleuth", *argv], capture_output=True, text=True,
                            timeout=120, cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert result.stderr.startswith("logsleuth") and "missing-" in result.stderr


def test_the_command_layer_prints_errors_one_way() -> None:
    """Only program_io.print_stderr writes to stderr (it redacts and strips escapes); __main__ prints only the
    fixed word 'interrupted' before anything is imported."""
    cli = REPO / "logsleuth" / "cli"
    raw = [
        f"{path.name}:{node.lineno}"
        for path in cli.glob("*.py") if path.name != "program_io.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "print"
        and any(k.arg == "file" and "stderr" in ast.unparse(k.value) for k in node.keywords)
    ]
    assert raw == []
