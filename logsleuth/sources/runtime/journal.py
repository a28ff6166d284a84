"""systemd units as sources: `journalctl -u UNIT -n N` for the log, `systemctl show UNIT` for what systemd knows
and the log does not (killed by the OOM killer, the signal, the exit status, restarts).

journalctl says nothing is wrong for a unit that does not exist ("-- No entries --", exit status 0), so an empty
journal is an error here, named by `systemctl show`'s LoadState when systemctl can answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from logsleuth.errors import SourceError
from logsleuth.sources.runtime.command import (
    Command,
    CommandSource,
    Finished,
    Runner,
    fact_line,
    last_line,
    run_checked,
    run_local,
    signal_name,
)
from logsleuth.sources.runtime.spec import RuntimeSpec

NO_ENTRIES = b"-- No entries --\n"  # what journalctl prints on stdout when nothing matched
_HIDDEN = "You are currently not seeing messages from other users and the system"
PROPERTIES = ("LoadState", "ActiveState", "Result", "ExecMainCode", "ExecMainStatus", "NRestarts")
_KILLED = {"2", "3"}  # ExecMainCode: CLD_KILLED, CLD_DUMPED (then ExecMainStatus is a signal number)
# systemd.service(5), Result=: what each value means, when it is not "success".
_RESULTS = {
    "oom-kill": "killed by the OOM killer (Result=oom-kill)",
    "signal": "killed by a signal (Result=signal)",
    "core-dump": "dumped core (Result=core-dump)",
    "exit-code": "exited with an error (Result=exit-code)",
    "timeout": "timed out (Result=timeout)",
    "watchdog": "watchdog timeout (Result=watchdog)",
    "start-limit-hit": "restarted too often and gave up (Result=start-limit-hit)",
    "resources": "could not get its resources (Result=resources)",
    "protocol": "broke the service protocol (Result=protocol)",
}


def journal_command(unit: str, lines: int | None) -> Command:
    """`journalctl -u UNIT -n N --no-pager -o short-iso`; without `-n` for every line."""
    count = () if lines is None else ("-n", str(lines))
    return Command(("journalctl", "-u", unit, *count, "--no-pager", "-o", "short-iso"))


def show_command(unit: str) -> Command:
    return Command(("systemctl", "show", unit, "-p", ",".join(PROPERTIES)))


def explain_journal(finished: Finished) -> str | None:
    """The one-line message for a journalctl run that read nothing useful; None when it read the log."""
    said = last_line(finished.errors)
    if finished.returncode != 0:
        return f"journalctl failed with exit status {finished.returncode}: {said or 'no message'}"
    if not finished.output and _HIDDEN in finished.errors.decode("utf-8", "replace"):
        return "permission denied: reading a system unit's journal needs the adm or systemd-journal group"
    return None


@dataclass(frozen=True, slots=True)
class UnitFacts:
    """What `systemctl show` says about a unit's last run."""

    unit: str
    load_state: str  # "loaded", "not-found", …
    active_state: str  # "active", "failed", "activating", …
    result: str  # "success", "oom-kill", "signal", "exit-code", …
    main_code: str  # ExecMainCode: 0 none, 1 exited, 2 killed, 3 dumped
    main_status: int  # the exit status, or the signal number when killed
    restarts: int

    @property
    def found(self) -> bool:
        return self.load_state != "not-found"

    def fact_line(self) -> str | None:
        """One marked line naming what went wrong, or None for a unit with nothing to report."""
        parts = []
        if self.result != "success":
            parts.append(_RESULTS.get(self.result, f"Result={self.result}"))
        if self.main_code in _KILLED:
            name = signal_name(0, self.main_status) or f"signal {self.main_status}"
            parts.append(f"main process killed by {name}")
        elif self.main_status:
            parts.append(f"exit status {self.main_status}")
        if not parts and not self.restarts:
            return None
        return fact_line(f"unit {self.unit}", [self.active_state, *parts, f"restarts {self.restarts}"])


def parse_show(unit: str, text: bytes) -> UnitFacts:
    """The facts in `systemctl show -p …` output (`Key=Value` lines, in any order)."""
    values = dict(line.partition("=")[::2] for line in text.decode("utf-8", "replace").splitlines() if "=" in line)

    def number(key: str) -> int:
        value = values.get(key, "0")
        return int(value) if value.isdigit() else 0

    return UnitFacts(
        unit=unit,
        load_state=values.get("LoadState", "loaded"),
        active_state=values.get("ActiveState", "unknown"),
        result=values.get("Result", "success"),
        main_code=values.get("ExecMainCode", "0"),
        main_status=number("ExecMainStatus"),
        restarts=number("NRestarts"),
    )


def read_facts(spec: RuntimeSpec, runner: Runner = run_local) -> UnitFacts | None:
    """Ask systemd about the unit; None when systemctl cannot answer (not installed, or systemd is not PID 1 as
    in most containers): the journal alone is still worth reading."""
    try:
        finished = run_checked(runner, show_command(spec.target), spec.spec, _succeeded)
    except SourceError:
        return None
    return parse_show(spec.target, finished.output)


def _succeeded(finished: Finished) -> str | None:
    return None if finished.returncode == 0 else "systemctl show failed"


def open_unit(spec: RuntimeSpec, runner: Runner = run_local) -> CommandSource:
    """The unit's journal as a source, its facts line after it.  Raises SourceError (one line) for a unit with
    no journal entries: there is nothing to diagnose, and journalctl itself would not say why."""
    facts = read_facts(spec, runner)
    source = CommandSource(
        spec.spec,
        spec.remote.host if spec.remote else None,
        lambda lines: journal_command(spec.target, lines),
        explain_journal,
        _without_no_entries(runner),
    )
    if source.size() == 0:
        if facts is not None and not facts.found:
            raise SourceError(f"{spec.spec}: no such unit ({spec.target}; systemctl list-units --all lists them)")
        raise SourceError(f"{spec.spec}: the journal holds no entries for {spec.target}")
    line = facts.fact_line() if facts is not None else None
    if line is not None:
        source.set_trailer(line.encode())
    return source


def _without_no_entries(runner: Runner) -> Runner:
    """journalctl's "-- No entries --" is a message, not a log line: an empty journal is an empty log."""

    def run(command: Command) -> Finished:
        finished = runner(command)
        if finished.returncode == 0 and finished.output == NO_ENTRIES:
            return Finished(0, b"", finished.errors, finished.clipped)
        return finished

    return run
