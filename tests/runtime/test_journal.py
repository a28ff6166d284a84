"""systemd units (sources/runtime/journal.py) through the stand-in `journalctl` and `systemctl`: journald and a
systemd PID 1 cannot run on the test machines (conftest.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from logsleuth.errors import ExitStatus, SourceError
from logsleuth.reading.reader import read_latest
from logsleuth.sources.runtime.command import CommandSource
from logsleuth.sources.runtime.journal import UnitFacts, open_unit, parse_show
from tests.helpers import real_traceback
from tests.runtime.conftest import STANDINS, Runtime, open_spec, text_of

PREFIX = "2026-11-30T23:58:40+0000 gpu7 python3[41873]: "
STARTED = ["2026-11-30T22:10:03+0000 gpu7 systemd[1]: Started sglang.service - SGLang server.",
           PREFIX + "[2026-11-30 22:10:31] Load weight begin. avail mem=78.50 GB"]
OOM_KILLED = {"Result": "oom-kill", "NRestarts": "2", "ExecMainCode": "2", "ExecMainStatus": "9",
              "LoadState": "loaded", "ActiveState": "failed"}


def _open(spec: str) -> CommandSource:
    return open_spec(open_unit, spec)


_text = text_of


def test_an_oom_killed_unit_ends_with_its_fact_line(runtime: Runtime) -> None:
    # Stand-in journalctl and systemctl (no journald or systemd PID 1 here).
    runtime.unit("sglang.service", STARTED, OOM_KILLED)
    text = _text(_open("journal:sglang"))
    assert text == "".join(line + "\n" for line in STARTED) + (
        "[logsleuth: unit sglang: failed, killed by the OOM killer (Result=oom-kill), main process killed by SIGKILL, "
        "restarts 2]\n"
    )
    assert runtime.calls() == [
        ["systemctl", "show", "sglang", "-p", "LoadState,ActiveState,Result,ExecMainCode,ExecMainStatus,NRestarts"],
        ["journalctl", "-u", "sglang", "-n", "2000", "--no-pager", "-o", "short-iso"],
    ]


@pytest.mark.parametrize(
    ("show", "line"),
    [
        ({"Result": "success", "ExecMainCode": "0", "ExecMainStatus": "0", "NRestarts": "0", "ActiveState": "active"}, None),
        ({"Result": "exit-code", "ExecMainCode": "1", "ExecMainStatus": "1", "NRestarts": "4", "ActiveState": "activating"},
         "[logsleuth: unit u: activating, exited with an error (Result=exit-code), exit status 1, restarts 4]"),
        ({"Result": "signal", "ExecMainCode": "2", "ExecMainStatus": "6", "NRestarts": "0", "ActiveState": "failed"},
         "[logsleuth: unit u: failed, killed by a signal (Result=signal), main process killed by SIGABRT, restarts 0]"),
        ({"Result": "core-dump", "ExecMainCode": "3", "ExecMainStatus": "11", "NRestarts": "1", "ActiveState": "failed"},
         "[logsleuth: unit u: failed, dumped core (Result=core-dump), main process killed by SIGSEGV, restarts 1]"),
        ({"Result": "success", "ExecMainCode": "1", "ExecMainStatus": "0", "NRestarts": "3", "ActiveState": "active"},
         "[logsleuth: unit u: active, restarts 3]"),
    ],
)
def test_fact_lines_from_systemctl_show(show: dict[str, str], line: str | None) -> None:
    text = "".join(f"{key}={value}\n" for key, value in show.items()).encode()
    assert parse_show("u", text).fact_line() == line


def test_show_output_is_read_in_any_order() -> None:
    facts = parse_show("u", b"NRestarts=7\nLoadState=not-found\nResult=success\n")
    assert facts == UnitFacts("u", "not-found", "unknown", "success", "0", 0, 7) and not facts.found


def test_a_unit_journal_keeps_its_traceback(runtime: Runtime) -> None:
    # Stand-in journalctl (no journald here) prints a real CPython traceback as journald stores it: one entry
    # per line, each with the short-iso prefix.
    crash = real_traceback("def serve():\n    raise ValueError('bad --tp-size')\nserve()\n")
    runtime.unit("sglang.service", [*STARTED, *(PREFIX + line for line in crash.splitlines())])
    text = _text(_open("journal:sglang.service"))
    assert text.endswith(PREFIX + "ValueError: bad --tp-size\n")  # no systemctl facts: nothing appended


def test_a_unit_journal_traceback_is_parsed(runtime: Runtime) -> None:
    # Stand-in journalctl (no journald here); a real CPython traceback behind journalctl's short-iso prefix.
    crash = real_traceback("def serve():\n    raise ValueError('bad --tp-size')\nserve()\n")
    runtime.unit("sglang.service", [*STARTED, *(PREFIX + line for line in crash.splitlines())])
    [failure] = read_latest(_open("journal:sglang.service")).failures
    assert (failure.final.type, failure.final.message) == ("ValueError", "bad --tp-size")


def test_no_such_unit(runtime: Runtime) -> None:
    # Stand-in systemctl shows an unknown unit as systemd does (LoadState=not-found, exit 0); journalctl says
    # "-- No entries --" with exit status 0.
    with pytest.raises(SourceError) as caught:
        _open("journal:ghost")
    assert str(caught.value) == "journal:ghost: no such unit (ghost; systemctl list-units --all lists them)"
    assert caught.value.exit_status == ExitStatus.SOURCE_ERROR


def test_a_unit_removed_since_is_still_read_from_its_journal(runtime: Runtime) -> None:
    # Stand-in: systemctl no longer knows the unit (not-found) but the journal still holds its lines.
    runtime.unit("old.service", STARTED)
    assert _text(_open("journal:old")).splitlines() == STARTED


def test_no_permission_to_read_the_system_journal(runtime: Runtime) -> None:
    # Stand-in journalctl answers as for a user outside adm/systemd-journal: no entries, and a hint on stderr.
    runtime.unit("sglang.service", STARTED)
    runtime.hide_system_journal()
    with pytest.raises(SourceError) as caught:
        _open("journal:sglang")
    assert str(caught.value) == (
        "journal:sglang: permission denied: reading a system unit's journal needs the adm or systemd-journal group"
    )


def test_journalctl_missing(nothing_on_path: None) -> None:
    with pytest.raises(SourceError) as caught:
        _open("journal:sglang")
    assert str(caught.value) == "journal:sglang: journalctl is not installed (not found on PATH)"
    assert caught.value.exit_status == ExitStatus.SOURCE_ERROR


def test_without_systemctl_the_journal_is_still_read(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    # Only the stand-in journalctl on PATH (a container with journal files but no systemd): no facts, the log.
    only = runtime.state / "only-journalctl"
    only.mkdir()
    (only / "journalctl").symlink_to(STANDINS / "journalctl")
    (only / "python3").symlink_to(Path(sys.executable).resolve())  # what the stand-in runs on
    monkeypatch.setenv("PATH", str(only))
    runtime.unit("sglang.service", STARTED, OOM_KILLED)
    assert _text(_open("journal:sglang")).splitlines() == STARTED
