"""The real `logsleuth` command, in-process and as a subprocess, on real logs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import CORPUS, run_cli, run_cli_subprocess, spawn, wait_until_reading_stdin
from tests.logs import crash_record, launch_line, noise, scheduler_traceback

EAGLE_LOG = CORPUS / "sglang-validation" / "0.5.9" / "eagle3_incident_topk1_ndt16.log"
EAGLE_CMD = (
    "python -m sglang.launch_server --model-path /data/models/tiny-llama --speculative-algorithm EAGLE3 "
    "--speculative-draft-model-path /data/models/tiny-eagle3 --speculative-num-draft-tokens 16 "
    "--speculative-eagle-topk 1"
)
needs_corpus = pytest.mark.skipif(not EAGLE_LOG.exists(), reason="shared dev corpus not present")


@pytest.fixture
def crash_log(tmp_path: Path) -> Path:
    path = tmp_path / "server.log"
    path.write_text(launch_line() + noise(50) + crash_record("2026-11-29 10:00:05", "TP0", scheduler_traceback()))
    return path


def test_json_report_of_a_real_sglang_crash(crash_log: Path) -> None:
    result = run_cli("diagnose", str(crash_log), "--format", "json")
    assert result.exit_code == 1, result.stderr
    report = result.json()
    assert report["schema"] == "logsleuth.report/1"
    primary = report["failures"][0]
    final = primary["exceptions"][-1]
    assert final["type"] == "AssertionError"
    assert final["message"] == "tp must divide dp"
    assert [f["function"] for f in final["frames"]] == ["<module>", "run_scheduler_process", "event_loop"]
    assert final["frames"][-1]["source"] == 'assert cfg["tp"] % cfg["dp"] == 0, "tp must divide dp"'
    assert primary["ranks"] == ["TP0"]
    assert primary["header"] == "Scheduler hit an exception:"
    assert report["launch"]["command"].startswith("python -m sglang.launch_server")


def test_subprocess_and_in_process_agree(crash_log: Path) -> None:
    inside = run_cli("diagnose", str(crash_log), "--format", "json").json()
    outside = run_cli_subprocess("diagnose", str(crash_log), "--format", "json")
    assert outside.exit_code == 1
    assert outside.json() == inside


@needs_corpus
def test_eagle3_incident_fix_and_corrected_command() -> None:
    result = run_cli("diagnose", str(EAGLE_LOG), "--format", "json", "--cmd", EAGLE_CMD)
    diagnosis = result.json()["failures"][0]["diagnosis"]
    assert diagnosis["pattern"] == "sglang-eagle-partial-spec-args"
    assert diagnosis["category"] == "spec-decoding-args"
    fix = diagnosis["fix"]
    assert fix["flags"] == [{"op": "add", "flag": "--speculative-num-steps", "value": "15", "to": None}]
    assert fix["command"] == EAGLE_CMD + " --speculative-num-steps 15"
    (alternative,) = fix["alternatives"]
    assert {(f["op"], f["flag"]) for f in alternative["flags"]} == {
        ("remove", "--speculative-eagle-topk"),
        ("remove", "--speculative-num-draft-tokens"),
    }
    assert "--speculative-eagle-topk" not in alternative["command"]
    assert "--speculative-num-draft-tokens" not in alternative["command"]


@needs_corpus
def test_text_report_names_root_cause_and_both_fixes() -> None:
    result = run_cli("diagnose", str(EAGLE_LOG), "--format", "text", "--cmd", EAGLE_CMD)
    assert result.exit_code == 1
    assert "Removing only --speculative-eagle-topk still crashes" in " ".join(result.stdout.split())
    assert "--speculative-num-steps 15" in result.stdout
    assert "Or:" in result.stdout


def test_stdin_source(crash_log: Path) -> None:
    result = run_cli("diagnose", "-", "--format", "json", stdin=crash_log.read_bytes())
    assert result.exit_code == 1
    assert result.json()["failures"][0]["exceptions"][-1]["type"] == "AssertionError"


def test_no_failure_exits_zero(tmp_path: Path) -> None:
    path = tmp_path / "ok.log"
    path.write_text(noise(100) + "[2026-11-29 10:00:09] The server is fired up and ready to roll!\n")
    result = run_cli("diagnose", str(path), "--format", "text")
    assert result.exit_code == 0
    assert "No failure found" in result.stdout


def test_empty_file_is_nothing_to_judge(tmp_path: Path) -> None:
    """Not an all-clear (issue 30, finding 8: tests/test_empty_source.py has the rest)."""
    path = tmp_path / "empty.log"
    path.write_bytes(b"")
    result = run_cli("diagnose", str(path), "--format", "json")
    assert result.exit_code == 3
    assert result.json()["failures"] == []


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp: tmp / "missing.log", "no such file"),
        (lambda tmp: tmp, "is a directory"),
    ],
    ids=["missing", "directory"],
)
def test_unreadable_sources_exit_3_with_one_line(tmp_path: Path, make, message: str) -> None:  # type: ignore[no-untyped-def]
    target = make(tmp_path)
    result = run_cli_subprocess("diagnose", str(target), "--format", "text")
    assert result.exit_code == 3
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line == f"logsleuth: {target}: {message}"


def _unprivileged_python() -> list[str] | None:
    """A Python that user `nobody` can execute, with our package and deps on its path
    (the venv's own interpreter usually links into root's home)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.access(candidate, os.X_OK):
            return [candidate]
    return None


def run_as_nobody(*args: str, env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`logsleuth ARGS` as user nobody (root would read anything), with our package on its path."""
    import site

    # addsitedir processes the venv's .pth files, which hold the editable install's finder.
    bootstrap = (
        "import site, sys\n"
        f"for d in {site.getsitepackages()!r}: site.addsitedir(d)\n"
        "from logsleuth.__main__ import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    return subprocess.run(
        [*_unprivileged_python(), "-c", bootstrap, *args],  # type: ignore[misc]
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: os.setuid(65534),
        env={"PATH": os.environ.get("PATH", ""), **env},
    )


@pytest.mark.skipif(_unprivileged_python() is None, reason="needs root (to drop to nobody) and a system python3")
def test_permission_denied_exit_3(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    path = tmp_path / "secret.log"
    path.write_text("ValueError: x\n")
    path.chmod(0o600)
    proc = run_as_nobody("diagnose", str(path), env={"HOME": "/tmp"})
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.strip() == f"logsleuth: {path}: permission denied"


def test_usage_error_exit_2() -> None:
    result = run_cli_subprocess("diagnose", "--no-such-option", "x")
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr


def test_several_sources_one_failing(tmp_path: Path, crash_log: Path) -> None:
    result = run_cli("diagnose", str(tmp_path / "missing.log"), str(crash_log), "--format", "json")
    assert result.exit_code == 1
    report = result.json()
    errors = {s["name"]: s["error"] for s in report["sources"]}
    assert errors[str(tmp_path / "missing.log")].endswith("no such file")
    assert errors[str(crash_log)] is None
    assert report["failures"][0]["exceptions"][-1]["type"] == "AssertionError"


def test_binary_and_invalid_utf8_never_crash(tmp_path: Path) -> None:
    path = tmp_path / "binary.log"
    path.write_bytes(bytes(range(256)) * 4000 + b"\xff\xfe\n" + b"ValueError: bad \xff value\n" + b"\x00" * 1000)
    result = run_cli_subprocess("diagnose", str(path), "--format", "json")
    assert result.exit_code == 1, result.stderr
    final = result.json()["failures"][0]["exceptions"][-1]
    assert final["type"] == "ValueError"
    assert final["message"] == "bad \ufffd value"


def test_hundred_megabyte_line_then_traceback(tmp_path: Path) -> None:
    path = tmp_path / "huge-line.log"
    with path.open("wb") as handle:
        chunk = b"x" * (1 << 20)
        for _ in range(100):
            handle.write(chunk)
        handle.write(b"\n")
        handle.write(crash_record("2026-11-29 10:00:05", "TP1", scheduler_traceback()).encode())
    result = run_cli_subprocess("diagnose", str(path), "--format", "json")
    assert result.exit_code == 1, result.stderr
    assert result.json()["failures"][0]["ranks"] == ["TP1"]


def test_hundred_megabyte_line_alone(tmp_path: Path) -> None:
    path = tmp_path / "one-line.log"
    with path.open("wb") as handle:
        for _ in range(100):
            handle.write(b"y" * (1 << 20))
    result = run_cli_subprocess("diagnose", str(path), "--format", "json", "--all")
    assert result.exit_code == 0, result.stderr
    assert result.json()["failures"] == []


def test_help_documents_exit_codes() -> None:
    result = run_cli_subprocess("diagnose", "--help")
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    for fragment in ("0 no failure found", "1 failure found", "2 usage error", "3 a source could not be read", "130"):
        assert fragment in text


# --- hardening (issue 9): options, interrupts, errors printed once, internal errors --------------------------


@pytest.mark.parametrize("value", ["0", "-1", "199"])
def test_max_chars_below_a_useful_report_is_a_usage_error(crash_log: Path, value: str) -> None:
    """Below 200 characters not even the verdict line fits (a report of nothing but the "cut" note)."""
    result = run_cli("diagnose", str(crash_log), "--format", "slack", "--max-chars", value)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "--max-chars" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("value", ["0", "-5", "0k", "-1M", "infk", "nan"])
def test_max_bytes_must_be_a_positive_size(crash_log: Path, value: str) -> None:
    result = run_cli("diagnose", str(crash_log), "--max-bytes", value)
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("logsleuth: --max-bytes: ")


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_watch_timeout_must_be_positive(crash_log: Path, value: str) -> None:
    result = run_cli("watch", str(crash_log), "--timeout", value)
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("logsleuth: --timeout: ")


def test_ctrl_c_prints_interrupted_once_and_exits_130() -> None:
    """A real SIGINT while `diagnose -` waits on stdin (typer turns KeyboardInterrupt into a silent exit 130)."""
    import signal
    import sys

    process = spawn(
        [sys.executable, "-m", "logsleuth", "diagnose", "-"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        wait_until_reading_stdin(process)  # started and blocked reading stdin: the event, not a guess of time
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 130
    assert err.decode() == "logsleuth: interrupted\n"
    assert out == b""


@pytest.mark.parametrize("fmt", ["text", "rich"])
def test_a_source_error_is_printed_once_on_stderr(tmp_path: Path, crash_log: Path, fmt: str) -> None:
    """stdout carries the report, stderr each error line exactly once.  The report's table of sources lists
    the unreadable one with its reason (a fleet report never drops a host), not the error line again."""
    missing = tmp_path / "missing.log"
    result = run_cli("diagnose", str(missing), str(crash_log), "--format", fmt)
    assert result.exit_code == 1
    assert result.stderr == f"logsleuth: {missing}: no such file\n"
    assert f"{missing}: no such file" not in result.stdout
    assert "unreadable" in result.stdout


def test_internal_error_is_one_line_with_status_4(crash_log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A logsleuth bug, simulated by a renderer that raises (a mock: no real input reaches a bug on purpose)."""
    from logsleuth.cli import app as cli
    from logsleuth.errors import ExitStatus

    def broken(*args: object) -> str:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(cli, "render", broken)
    result = run_cli("diagnose", str(crash_log))
    assert result.exit_code == ExitStatus.INTERNAL == 4
    assert result.stderr == "logsleuth: internal error: ZeroDivisionError: division by zero (please report this)\n"


@pytest.mark.skipif(_unprivileged_python() is None, reason="needs root (to drop to nobody) and a system python3")
def test_unreadable_config_dir_is_a_warning(tmp_path: Path) -> None:
    """$XDG_CONFIG_HOME that the user cannot search: one warning line, and the bundled patterns still diagnose."""
    config = tmp_path / "config"
    (config / "logsleuth" / "patterns").mkdir(parents=True)
    config.chmod(0o000)
    proc = run_as_nobody(
        "diagnose", "-", "--format", "json",
        env={"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(config)},
        stdin=launch_line() + crash_record("2026-11-29 10:00:05", "TP0", scheduler_traceback()),
    )
    config.chmod(0o755)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == f"logsleuth: warning: {config}/logsleuth/patterns: cannot read user patterns: Permission denied\n"
