"""The typer-free reader of plain `diagnose` command lines (cli/quick.py, issue 14 item 4: less CPU per
diagnose): it takes the same options as typer's command, gives the same arguments, gives up on anything
else, and the console script then never imports typer."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main

from logsleuth.cli.app import app
from logsleuth.cli.program import run_diagnose
from logsleuth.cli.quick import FLAGS, SHORT_NAMES, VALUE_OPTIONS, defaults, parse_diagnose

REPO = Path(__file__).resolve().parents[1]
LOG = REPO / "tests" / "fixtures" / "sglang" / "0.5.9" / "chunked_prefill_not_multiple_of_page_size.log"


def _diagnose_command() -> Any:
    return typer.main.get_command(app).commands["diagnose"]  # type: ignore[attr-defined]


def _typer_params(argv: list[str]) -> dict[str, Any]:
    """The arguments typer's `diagnose` command passes on to program.run_diagnose for `argv`."""
    from logsleuth.__main__ import main
    from logsleuth.cli import app as cli

    received: list[dict[str, Any]] = []

    def record(**params: Any) -> int:
        received.append(params)
        return 0

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cli, "run_diagnose", record)
        assert main(["diagnose", *argv]) == 0
    (params,) = received
    del params["diagnose_specs"], params["render_report"]
    return params


def test_the_options_are_those_of_the_typer_command() -> None:
    options = {opt: param for param in _diagnose_command().params for opt in param.opts}
    for word, (name, _) in VALUE_OPTIONS.items():
        assert options[word].name == name and not options[word].is_flag, word
    for short, long in SHORT_NAMES.items():
        assert options[short] is options[long]
    for word, name in FLAGS.items():
        assert options[word].name == name and options[word].is_flag, word


def test_every_parameter_has_its_default() -> None:
    """run_diagnose, typer's command and the quick reader name the same parameters, with the same defaults."""
    names = set(inspect.signature(run_diagnose).parameters) - {"diagnose_specs", "render_report"}
    assert set(defaults()) == names
    assert _typer_params([]) == defaults()


@pytest.mark.parametrize(
    "argv",
    [
        ["gpu7:/var/log/x.log"],
        ["--format", "json", "-o", "out.json", "a.log", "b.log"],
        ["-fjson", "--width=120", "--max-chars", "900", "--max-bytes", "1G", "h:/x"],
        ["--ssh-config", "cfg", "-Fother", "--ssh-backend", "openssh", "--accept-new-host-key", "h:/x"],
        ["--patterns", "p1", "--patterns=p2", "--no-user-patterns", "--all", "--all-files", "h:/x"],
        ["--cmd", "python -m sglang.launch_server --tp 2", "--engine-version", "0.5.9", "x.log"],
        ["--no-redact", "--anonymize", "--slack-webhook", "https://hooks.example/x", "--post-to-slack", "x"],
        ["x.log", "--format", "markdown", "--", "-odd-name.log"],
        ["--parallel", "8", "--hosts-file", "hosts.txt", "node[01-04]:/x"],
        ["-"],
        [],
    ],
)
def test_same_arguments_as_typer(argv: list[str]) -> None:
    assert parse_diagnose(["diagnose", *argv]) == _typer_params(argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["--help", "x.log"],
        ["-h"],
        ["--formt", "json", "x.log"],  # misspelled: typer says so
        ["--format", "yaml", "x.log"],  # not a choice
        ["--width", "10", "x.log"],  # below the minimum
        ["--width", "wide", "x.log"],
        ["--all=yes", "x.log"],  # a flag given a value
        ["x.log", "--output"],  # a value missing
        ["--cmd", "-x", "x.log"],  # a value that looks like an option
        ["--parallel", "0", "x.log"],  # below the minimum
        ["--verbose", "x.log"],  # an option this reader does not know
    ],
)
def test_anything_else_is_left_to_typer(argv: list[str]) -> None:
    assert parse_diagnose(["diagnose", *argv]) is None


@pytest.mark.parametrize("argv", [["--version"], ["watch", "x.log"], ["completion", "bash"], []])
def test_other_commands_are_left_to_typer(argv: list[str]) -> None:
    assert parse_diagnose(argv) is None


# Run the console script's main() (quick=True) in a fresh interpreter: print its exit status and whether
# typer was imported, after the report.
_CONSOLE = """
import sys
from logsleuth.__main__ import main
status = main(sys.argv[1:], quick=True)
print(json.dumps({"status": status, "typer": "typer" in sys.modules}), file=sys.stderr)
"""


def _console(*argv: str) -> tuple[str, list[str], dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-c", "import json\n" + _CONSOLE, *argv], capture_output=True, text=True, timeout=120
    )
    *messages, last = proc.stderr.splitlines()
    return proc.stdout, messages, json.loads(last)


def test_a_plain_diagnose_never_imports_typer() -> None:
    stdout, messages, outcome = _console("diagnose", "--format", "json", str(LOG))
    assert outcome == {"status": 1, "typer": False}
    assert json.loads(stdout)["failures"], messages


@pytest.mark.parametrize(
    "argv",
    [
        ["diagnose", "--format", "json", str(LOG)],
        ["diagnose", "--format", "text", "--width", "100", str(LOG)],
        ["diagnose", "--format", "json", "/nonexistent/server.log"],  # unreadable: exit 3 and one line
        ["diagnose", "--max-bytes", "0", str(LOG)],  # the program's own usage error: exit 2
        ["diagnose", "--format", "yaml", str(LOG)],  # typer's usage error
    ],
)
def test_the_console_script_answers_as_typer_does(argv: list[str]) -> None:
    from tests.helpers import run_cli

    stdout, messages, outcome = _console(*argv)
    expected = run_cli(*argv)  # in-process: typer's parse
    assert (outcome["status"], stdout, messages) == (expected.exit_code, expected.stdout, expected.stderr.splitlines())
