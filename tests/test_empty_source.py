"""An empty source is not an all-clear (issue 30, finding 8): an empty file, empty stdin or `diagnose ""` (an unset
variable in a cron job) is exit 3 with one line, "nothing to judge: SOURCE is empty", for every command that reads
logs the diagnose way (diagnose, case, health).  A log with lines but no failure stays exit 0."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import run_cli, run_cli_subprocess


@pytest.fixture
def empty(tmp_path: Path) -> Path:
    path = tmp_path / "empty.log"
    path.write_bytes(b"")
    return path


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_an_empty_file_is_nothing_to_judge(empty: Path, fmt: str) -> None:
    result = run_cli("diagnose", str(empty), "--format", fmt, "--no-user-patterns")
    assert result.exit_code == 3, result.stderr
    assert result.stderr == f"logsleuth: nothing to judge: {empty} is empty\n"
    if fmt == "json":  # the report is still delivered, and does not say "no-failure"
        report = result.json()
        assert report["status"] != "no-failure"
        assert report["sources"][0]["error"] == f"nothing to judge: {empty} is empty"
    else:
        assert "No failure found" not in result.stdout


@pytest.mark.parametrize("argv", [["diagnose"], ["diagnose", "-"]], ids=["implicit", "dash"])
def test_empty_stdin_is_nothing_to_judge(argv: list[str]) -> None:
    result = run_cli_subprocess(*argv, "--format", "text", "--no-user-patterns", stdin=b"")
    assert result.exit_code == 3, result.stderr
    assert result.stderr == "logsleuth: nothing to judge: stdin is empty\n"


def test_an_empty_source_name_is_nothing_to_judge() -> None:
    """`logsleuth diagnose "$LOG"` with LOG unset."""
    result = run_cli("diagnose", "", "--format", "text", "--no-user-patterns")
    assert result.exit_code == 3, result.stderr
    assert result.stderr == "logsleuth: nothing to judge: the source name is empty ('')\n"


def test_health_of_an_empty_file_says_so(empty: Path) -> None:
    result = run_cli_subprocess("health", str(empty), "--format", "text", "--no-user-patterns")
    assert result.exit_code == 3, result.stderr
    assert result.stderr == f"logsleuth: nothing to judge: {empty} is empty\n"


def test_a_case_file_of_an_empty_log_is_nothing_to_judge(empty: Path) -> None:
    result = run_cli("case", str(empty), "--no-user-patterns")
    assert result.exit_code == 3, result.stderr
    assert result.stderr == f"logsleuth: nothing to judge: {empty} is empty\n"


def test_one_empty_log_among_clean_ones_is_not_an_all_clear(empty: Path, tmp_path: Path) -> None:
    clean = tmp_path / "clean.log"
    clean.write_text("[2026-11-29 10:00:09] The server is fired up and ready to roll!\n")
    result = run_cli("diagnose", str(clean), str(empty), "--format", "text", "--no-user-patterns")
    assert result.exit_code == 3, result.stderr
    assert result.stderr == f"logsleuth: nothing to judge: {empty} is empty\n"


def test_a_log_with_lines_but_no_failure_is_still_exit_0(tmp_path: Path) -> None:
    log = tmp_path / "quiet.log"
    log.write_text("\n")  # one empty line is a line: the log was written, and holds no failure
    result = run_cli("diagnose", str(log), "--format", "text", "--no-user-patterns")
    assert result.exit_code == 0, result.stderr
    assert "No failure found" in result.stdout
