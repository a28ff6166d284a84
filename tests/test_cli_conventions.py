"""What a command-line user expects of any tool: --version, shell completion, help for every option that reads
at any width, stdin when a log is piped in, -o FILE in the format its name says, the terminal's width, each
error once, and a JSON report that says what wrote it and what it found."""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
from importlib.metadata import version as installed_version
from pathlib import Path

import pytest
import typer

import logsleuth
from logsleuth.cli.app import app
from tests.helpers import run_cli, run_cli_subprocess
from tests.logs import crash_record, launch_line, noise, scheduler_traceback

VENV_BIN = Path(sys.executable).parent


@pytest.fixture
def crash_log(tmp_path: Path) -> Path:
    path = tmp_path / "server.log"
    path.write_text(launch_line() + noise(20) + crash_record("2026-11-29 10:00:05", "TP0", scheduler_traceback()))
    return path


# --- --version ---------------------------------------------------------------------------------------------


def test_version_names_logsleuth_python_and_paramiko_without_importing_paramiko() -> None:
    probe = (
        "import sys\n"
        "from logsleuth.__main__ import main\n"
        "status = main(['--version'])\n"
        "print('paramiko imported' if 'paramiko' in sys.modules else 'paramiko not imported', file=sys.stderr)\n"
        "sys.exit(status)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"logsleuth {logsleuth.__version__}",
        f"Python {platform.python_version()}",
        f"paramiko {installed_version('paramiko')}",
    ]
    assert result.stderr == "paramiko not imported\n"


# --- shell completion ----------------------------------------------------------------------------------------

SCRIPT_MARKERS = {
    "bash": "complete -o default -F _logsleuth_completion logsleuth",
    "zsh": "#compdef logsleuth",
    "fish": "complete --command logsleuth",
}


@pytest.mark.parametrize("shell", sorted(SCRIPT_MARKERS))
def test_completion_prints_a_script_for_each_shell(shell: str) -> None:
    result = run_cli("completion", shell)
    assert result.exit_code == 0, result.stderr
    assert SCRIPT_MARKERS[shell] in result.stdout
    assert "_LOGSLEUTH_COMPLETE" in result.stdout


def test_completion_for_another_shell_is_a_usage_error() -> None:
    result = run_cli("completion", "tcsh")
    assert result.exit_code == 2
    assert result.stderr == "logsleuth: completion: unsupported shell 'tcsh' (choose bash, zsh or fish)\n"


def test_bash_completes_commands_options_and_values(tmp_path: Path) -> None:
    """The printed script, sourced in a real bash, completing against the installed `logsleuth` command."""
    script = tmp_path / "logsleuth.bash"
    script.write_text(run_cli("completion", "bash").stdout)

    def complete(*words: str) -> list[str]:
        line = " ".join(words)
        program = (
            f"source {script}\n"
            f"COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}\n"
            "_logsleuth_completion logsleuth\n"
            'printf "%s\\n" "${COMPREPLY[@]}"\n'
        )
        env = {**os.environ, "PATH": f"{VENV_BIN}:{os.environ['PATH']}"}
        done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert complete("logsleuth", "di") == ["diagnose", "diff"]
    assert complete("logsleuth", "he") == ["health"]
    assert complete("logsleuth", "diagnose", "--accept") == ["--accept-new-host-key"]
    assert complete("logsleuth", "diagnose", "--format", "ma") == ["markdown"]


@pytest.mark.parametrize(
    ("shell", "env"),
    [
        ("zsh", {"_TYPER_COMPLETE_ARGS": "logsleuth watch --time"}),
        ("fish", {"_TYPER_COMPLETE_ARGS": "logsleuth watch --time", "_TYPER_COMPLETE_FISH_ACTION": "get-args"}),
    ],
)
def test_zsh_and_fish_completion_requests_are_answered(shell: str, env: dict[str, str]) -> None:
    """What the zsh and fish scripts run, without those shells: the program answers their protocol."""
    result = run_cli_subprocess(env={"_LOGSLEUTH_COMPLETE": f"complete_{shell}", **env})
    assert result.exit_code == 0, result.stderr
    assert "--timeout" in result.stdout


# --- help ----------------------------------------------------------------------------------------------------

ROOT = typer.main.get_command(app)  # a click group (typer vendors click)
COMMANDS = {"": ROOT, **getattr(ROOT, "commands", {})}


@pytest.mark.parametrize("name", sorted(COMMANDS), ids=lambda name: name or "logsleuth")
def test_every_option_and_argument_has_help(name: str) -> None:
    params = [p for p in COMMANDS[name].params if p.name != "help"]
    missing = [p.name for p in params if not getattr(p, "help", None)]
    assert params and not missing, missing


@pytest.mark.parametrize("name", sorted(COMMANDS), ids=lambda name: name or "logsleuth")
def test_help_never_cuts_a_flag_name_at_60_columns(name: str) -> None:
    result = run_cli_subprocess(*([name] if name else []), "--help", env={"COLUMNS": "60", "TERMINAL_WIDTH": "60"})
    assert result.exit_code == 0, result.stderr
    assert max(len(line) for line in result.stdout.splitlines()) <= 60, result.stdout
    flags = ["--help", *(flag for p in COMMANDS[name].params for flag in (*p.opts, *p.secondary_opts) if flag[0] == "-")]
    for flag in flags:
        assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", result.stdout), f"{flag} is cut or missing"
    assert "…" not in result.stdout


# --- stdin ---------------------------------------------------------------------------------------------------


def test_a_piped_log_is_read_when_no_source_is_given(crash_log: Path) -> None:
    result = run_cli("diagnose", "--format", "json", stdin=crash_log.read_bytes())
    assert result.exit_code == 1, result.stderr
    assert result.json()["failures"][0]["exceptions"][-1]["type"] == "AssertionError"


def test_no_source_on_a_terminal_is_a_usage_error() -> None:
    """stdin a real terminal (a pty): nothing is piped in, so there is nothing to read."""
    leader, follower = os.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "logsleuth", "diagnose"], stdin=follower, capture_output=True, text=True, timeout=60
        )
    finally:
        os.close(leader)
        os.close(follower)
    assert done.returncode == 2
    assert done.stderr == (
        "logsleuth: no log given: name a file or HOST:PATH, or pipe one in (cat server.log | logsleuth diagnose)\n"
    )


# --- -o FILE -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "options", "starts"),
    [
        ("report.json", [], "{"),
        ("report.md", [], "### logsleuth: "),
        ("report.markdown", [], "### logsleuth: "),
        ("report.slack", [], "*logsleuth:* "),
        ("report.txt", [], "AssertionError: tp must divide dp"),
        ("report.out", [], "AssertionError: tp must divide dp"),
        ("report.md", ["--format", "json"], "{"),  # --format wins over the extension
    ],
)
def test_output_file_takes_its_format_from_the_extension(
    crash_log: Path, tmp_path: Path, name: str, options: list[str], starts: str
) -> None:
    target = tmp_path / name
    result = run_cli("diagnose", str(crash_log), "-o", str(target), *options)
    assert result.exit_code == 1 and result.stdout == ""
    text = target.read_text()
    assert text.startswith(starts), text[:80]
    assert "\x1b" not in text
    if starts == "{":
        json.loads(text)


# --- width ---------------------------------------------------------------------------------------------------


def _wrapped_lines(output: str) -> list[str]:
    lines = output.splitlines()
    whole = {"Corrected command:", "Search for:"}
    offered = ("logsleuth case ", "logsleuth diagnose ")  # the ending's commands, each on a line of its own
    return [
        line
        for before, line in zip(["", *lines], lines, strict=False)
        if before.strip() not in whole and not line.strip().startswith(offered)
    ]


@pytest.mark.parametrize(("env", "width"), [({"COLUMNS": "60"}, 60), ({"COLUMNS": "200"}, 200), ({}, 80)])
def test_width_follows_columns_else_80(crash_log: Path, env: dict[str, str], width: int) -> None:
    environment = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = subprocess.run(
        [sys.executable, "-m", "logsleuth", "diagnose", str(crash_log), "--format", "text"],
        capture_output=True, text=True, timeout=60, env={**environment, **env},
    )
    assert done.returncode == 1, done.stderr
    lengths = [len(line) for line in _wrapped_lines(done.stdout)]
    assert max(lengths) <= width
    assert max(lengths) > (width - 25 if width <= 80 else 80), "the text uses the width it has"


def test_width_option_wins_and_has_a_floor(crash_log: Path) -> None:
    result = run_cli_subprocess("diagnose", str(crash_log), "--format", "text", "--width", "70", env={"COLUMNS": "200"})
    assert max(len(line) for line in _wrapped_lines(result.stdout)) <= 70
    too_narrow = run_cli("diagnose", str(crash_log), "--width", "30")
    assert too_narrow.exit_code == 2 and "--width" in too_narrow.stderr


# --- each error once -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "status", "marker"),
    [
        (["diagnose", "{log}", "--no-such-option"], 2, "No such option"),
        (["diagnose", "{tmp}/missing.log"], 3, "no such file"),
        (["diagnose", "{log}", "-o", "{tmp}/no/such/dir/out.txt"], 3, "cannot write"),
        (["diagnose", "{log}", "--post-to-slack"], 2, "LOGSLEUTH_SLACK_WEBHOOK"),
        (["diagnose", "{log}", "--max-bytes", "0"], 2, "--max-bytes"),
        (["completion", "tcsh"], 2, "unsupported shell"),
    ],
)
def test_each_error_is_printed_once(crash_log: Path, tmp_path: Path, args: list[str], status: int, marker: str) -> None:
    argv = [a.format(log=crash_log, tmp=tmp_path) for a in args]
    result = run_cli_subprocess(*argv, env={"LOGSLEUTH_SLACK_WEBHOOK": ""})
    assert result.exit_code == status, result.stderr
    assert result.stderr.count(marker) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert len([line for line in result.stderr.splitlines() if "rror" in line or line.startswith("logsleuth:")]) == 1


# --- the JSON's tool and status ------------------------------------------------------------------------------


@pytest.mark.parametrize(("make", "status", "exit_code"), [
    (lambda tmp, log: [str(log)], "failure", 1),
    (lambda tmp, log: [str(tmp / "missing.log"), str(log)], "failure", 1),
    (lambda tmp, log: [str(tmp / "clean.log")], "no-failure", 0),
    (lambda tmp, log: [str(tmp / "missing.log")], "unreadable", 3),
    (lambda tmp, log: [str(tmp / "missing.log"), str(tmp / "clean.log")], "unreadable", 3),
    (lambda tmp, log: [str(tmp / "empty.log")], "unreadable", 3),  # nothing to judge is not an all-clear
], ids=["failure", "failure-and-missing", "clean", "missing", "missing-and-clean", "empty"])
def test_json_says_what_wrote_it_and_what_it_found(crash_log: Path, tmp_path: Path, make, status: str, exit_code: int) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "clean.log").write_text("[2026-11-29 10:00:09] The server is fired up and ready to roll!\n")
    (tmp_path / "empty.log").write_text("")
    result = run_cli("diagnose", *make(tmp_path, crash_log), "--format", "json")
    report = result.json()
    assert report["tool"] == {"name": "logsleuth", "version": logsleuth.__version__}
    assert (report["status"], result.exit_code) == (status, exit_code)


def test_ssh_backend_choices_are_the_sources_backends() -> None:
    from logsleuth.cli.app import SSHBackendChoice
    from logsleuth.sources.options import SSH_BACKENDS

    assert tuple(choice.value for choice in SSHBackendChoice) == SSH_BACKENDS
