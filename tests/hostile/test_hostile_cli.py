"""The permanent hostile-input suite: every corpus case, in every format, through the real CLI.

Each case is diagnosed twice (a crash no pattern knows, so context and message are shown; and the EAGLE-3
incident, so corrected commands are printed), together with a second source that does not exist (so an
error line is printed).  Every output must be inert: no control character, no live mention, no Markdown
block of the log's making, no secret, strict UTF-8 JSON, and every printed command a harmless shell line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from logsleuth.render.safety import ZWSP
from tests.hostile.checks import (
    CONTROL,
    LIVE_GITHUB_MENTION,
    LIVE_MENTION,
    Output,
    assert_safe_shell_command,
    injected_markdown_blocks,
    markdown_rendered_text,
    printed_commands,
    run_cli_bytes,
)
from tests.hostile.corpora import ALL_CASES, ESCAPE_MARKERS, LOGS, Case
from tests.render.helpers import slack_split

FORMATS = ("rich", "text", "markdown", "slack", "json")
OWN_COLOURS = re.compile(r"\x1b\[[0-9;]*m")  # `--format rich` colours with its theme: SGR sequences only
CASES = {case.name: case for case in ALL_CASES}


def diagnose(case: Case, base: str, fmt: str, tmp_path: Path) -> Output:
    log = tmp_path / f"server-{case.file_name}.log"
    log.write_text(LOGS[base](case), encoding="utf-8")
    sources = [str(log), str(tmp_path / f"missing-{case.file_name}.log")][: 2 if case.second_source else 1]
    options = ["--cmd", case.cmd] if case.cmd else []
    return run_cli_bytes("diagnose", *sources, "--format", fmt, *options)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("base", sorted(LOGS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_log_is_shown_never_obeyed(name: str, base: str, fmt: str, tmp_path: Path) -> None:
    case = CASES[name]
    result = diagnose(case, base, fmt, tmp_path)
    assert result.exit_code == 1, result.stderr
    report, errors = result.text, result.errors  # both strict UTF-8
    if fmt == "rich":
        report = OWN_COLOURS.sub("", report)
    if fmt == "json":
        result.json()
    assert not CONTROL.search(report.replace("\n", "")), f"control character in the {fmt} report"
    assert not CONTROL.search(errors.replace("\n", "")), f"control character on stderr: {errors!r}"
    for marker in ESCAPE_MARKERS:
        assert marker not in errors
        if fmt != "json":  # JSON keeps the data, with the escape characters written as \u escapes
            assert marker not in report
    leaked = [secret for secret in case.secrets if secret in report or secret in errors]
    assert not leaked, f"{fmt} leaks {leaked}"
    if case.second_source:
        assert errors.count("no such file") == 1, errors  # the missing source: one error line, on stderr
    if fmt == "slack":  # Slack pings for no mention inside a code block, whose text must copy as it is
        code, prose = slack_split(report)
        live = [line for line in prose if LIVE_MENTION.search(line)]
        assert not live, live
        assert not [line for line in code if ZWSP in line]
    if fmt == "markdown":
        live = [text for text in markdown_rendered_text(report) if LIVE_GITHUB_MENTION.search(text)]
        assert not live, live
        assert not injected_markdown_blocks(report)
    commands = printed_commands(fmt, report)
    if base == "diagnosed":
        assert commands, f"no corrected command in the {fmt} report"
    for command in commands:
        echoed = assert_safe_shell_command(command, tmp_path / "run")
        assert not [secret for secret in case.secrets if secret in echoed]
