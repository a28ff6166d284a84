"""`logsleuth launch HOST [--log PATH] -- COMMAND…`: start a server on a host, detached, and watch it (docs/launch.md).

The only part of logsleuth that writes to a remote host, so it is careful:
- it prints exactly what it runs there, as shell lines one could paste on the host, and `--dry-run` stops there
  (nothing is connected to, nothing is written);
- it never overwrites a log or a pid file unless asked (`overwrite`), and never starts a launch over a pid file
  whose process group is still running, even when asked;
- the server runs as `setsid nohup COMMAND`: its own session and process group (so stopping it reaches its
  children too, and a dropped SSH connection does not hang it up), output and errors into the log;
- it stops the server only when asked (Ctrl-C, then a y/N question on a terminal), by the recorded process group;
- it retries only with a corrected command from the pattern library, after a y/N question.

Plain functions over plain values (no typer, no rich): `run_launch` returns the exit status.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TextIO

from logsleuth.api import DiagnoseOptions
from logsleuth.errors import ExitStatus, LogsleuthError, SourceError, UsageError
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Report
from logsleuth.render import render
from logsleuth.render.options import OutputFormat, RenderOptions
from logsleuth.render.safety import quote_shell_word, quote_shell_words, strip_controls
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.spec import RemoteSpec, parse_remote_spec

if TYPE_CHECKING:
    from logsleuth.render.launch_view import LaunchView
    from logsleuth.sources.ssh.remote_command import HostScripts

# The default log directory, under the login directory: always writable by the account, kept across reboots
# (unlike /tmp), and private (a launch log can hold the command line's tokens; /tmp is readable by all).
LOG_DIRECTORY = "logsleuth"
MAX_RETRIES = 3  # corrected launches after the first, each confirmed: a fix that keeps failing is not retried on
STOP_WAIT_SECONDS = 10  # after SIGTERM, how long the process group gets to exit before we report it still running
# While watching, how often the host is asked whether the launch still runs: a server killed without a traceback
# (the kernel's OOM killer, a segfault) writes nothing more, and the watch alone would wait for ever.
ALIVE_CHECK_SECONDS = 5.0
LAST_LINES = 20  # of the log, shown when the server exited without a failure logsleuth recognises

# A y/N question: the question without the "[y/N]"; True for yes.  None where no one can answer.
Confirm = Callable[[str], bool]
_ASSIGNMENT = compile_lazily(r"[A-Za-z_][A-Za-z0-9_]*=")

# -- the plan: what runs where ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LaunchPlan:
    """One launch: the user's command, the host and the log (relative paths are in the login directory)."""

    host: str
    remote: RemoteSpec
    words: tuple[str, ...]
    log: str
    overwrite: bool = False
    private_directory: bool = False  # the log's directory is logsleuth's default one: made the account's alone

    @property
    def pid_file(self) -> str:
        return f"{self.log}.pid"

    @property
    def run_words(self) -> tuple[str, ...]:
        """What nohup runs: the command, behind `env` when it starts with `NAME=value` (nohup runs programs)."""
        return ("env", *self.words) if _ASSIGNMENT.match(self.words[0]) else self.words

    @property
    def program(self) -> str:
        """The program the command runs, checked on the host before anything is written."""
        return next((word for word in self.words if not _ASSIGNMENT.match(word)), "env")

    @property
    def command_text(self) -> str:
        return shlex.join(self.words)

    @property
    def header(self) -> str:
        """The log's first line: the command as `sh -x` shows it, which `diagnose` reads back for the fix."""
        return f"+ {self.command_text}"

    def shell_lines(self) -> list[str]:
        """What runs on the host, as sh lines to paste there (in any directory: paths are absolute or $HOME's).
        A word holding a character a terminal would not show (a tab, ESC, a bidi override) is written in bash's
        `$'…'` form with it escaped, so the lines read as what runs."""
        log, pid_file = _shell_path(self.log), _shell_path(self.pid_file)
        directory = self.log.rpartition("/")[0]
        lines = ["umask 077"]  # the log's first line holds the command, tokens included
        lines += [f"mkdir -p {_shell_path(directory)}"] if directory else []
        lines += [f"chmod go-rwx {_shell_path(directory)}"] if directory and self.private_directory else []
        lines += [f"rm -f {log} {pid_file}"] if self.overwrite else []
        return lines + [
            f"printf '%s\\n' {quote_shell_word(self.header)} > {log}",
            f"setsid nohup {quote_shell_words(self.run_words)} >> {log} 2>&1 < /dev/null &",
            f"echo $! > {pid_file}",
        ]

    def retried(self, words: Sequence[str], attempt: int) -> LaunchPlan:
        """The plan for a corrected command: the same host, the log named by `retry_log_path`."""
        return replace(self, words=tuple(words), log=retry_log_path(self.log, attempt))


def _shell_path(path: str) -> str:
    return quote_shell_word(path) if path.startswith("/") else f'"$HOME"/{quote_shell_word(path)}'


def default_log_path(now: datetime) -> str:
    """`logsleuth/launch-20261130T224800Z.log` in the login directory: UTC, so names sort by time whatever the
    host's zone (a second launch within the same second is refused, as any existing log is)."""
    return f"{LOG_DIRECTORY}/launch-{now.astimezone(UTC):%Y%m%dT%H%M%SZ}.log"


def retry_log_path(log: str, attempt: int) -> str:
    """The log of the `attempt`-th corrected launch, next to the first: `x/launch-T.log` -> `x/launch-T.retry1.log`.
    One rule for a default and a --log path, so the failed launch's log is always kept."""
    head, slash, name = log.rpartition("/")
    stem, dot, suffix = name.rpartition(".")
    renamed = f"{stem}.retry{attempt}.{suffix}" if dot and stem else f"{name}.retry{attempt}"
    return f"{head}{slash}{renamed}"


def make_plan(host: str, words: Sequence[str], log_path: str | None, *, overwrite: bool, now: datetime) -> LaunchPlan:
    """Check the command line's parts (UsageError, exit 2) and build the plan."""
    if not words:
        raise UsageError("no command to launch: give it after --, e.g. logsleuth launch gpu7 -- python -m "
                         "sglang.launch_server --model-path MODEL")
    log = default_log_path(now) if log_path is None else _checked_log(log_path)
    remote = parse_remote_spec(f"{host}:{log}") if host and not host.startswith("-") else None
    if remote is None or remote.path != log.removeprefix("~/"):
        raise UsageError(f"{host!r}: not a host (HOST, user@host or user@host:port)")
    return LaunchPlan(host, remote, tuple(words), remote.path, overwrite, private_directory=log_path is None)


def _checked_log(path: str) -> str:
    if not path.strip() or path.endswith("/") or "\0" in path or "\n" in path:
        raise UsageError(f"--log: not a file path: {path!r}")
    if path.startswith("~") and not path.startswith("~/"):
        raise UsageError(f"--log: {path!r}: only ~/ (your own login directory) is understood")
    return path


# -- the remote side ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Started:
    """A launch started on a host: its pid and log."""
    pid: int  # also the process group and session id (setsid)
    log: str  # absolute, as the host resolved it


def start(plan: LaunchPlan, ssh: SSHOptions) -> Started:
    """Start the plan's command on its host.  Raises SourceError (exit 3) with one line when it cannot."""
    from logsleuth.sources.ssh.remote_command import LAUNCH_SCRIPT, run_remote_script

    records = run_remote_script(plan.remote, ssh, LAUNCH_SCRIPT, plan.log, plan.pid_file, int(plan.overwrite),
                                plan.program, plan.header, int(plan.private_directory), *plan.run_words)
    problem = _launch_problem(plan, records)
    if problem is not None:
        raise SourceError(f"{plan.host}: {problem}")
    if "nopidfile" in records:
        raise SourceError(f"{plan.host}: started the server (pid {records['pid']}) but could not write "
                          f"{records['nopidfile']}: stop it with kill -TERM -{records['pid']}")
    return Started(int(records["pid"]), records.get("log", plan.log))


def _launch_problem(plan: LaunchPlan, records: dict[str, str]) -> str | None:
    """Why the launch script started nothing, in one phrase; None when it started the server."""
    if "nocmd" in records:
        return f"'{records['nocmd']}' is not installed (launch needs setsid and nohup)"
    if "noprogram" in records:
        return f"no program '{records['noprogram']}' on the PATH of a non-interactive shell there"
    if "nodir" in records:
        return f"cannot create or write the log directory {records['nodir']}"
    if "running" in records:
        return _still_running(plan, records)
    if "exists" in records:
        return f"{records['exists']} already exists: choose another --log, or --overwrite to replace it"
    if "nolog" in records:
        return f"cannot write the log {records['nolog']}"
    if not _is_group(records.get("pid", "")):
        return "the launch script did not report a pid"
    return None


def _is_group(pid: str) -> bool:
    """A process group logsleuth may name in a kill command: 0 and 1 (and -1) mean "every process" to kill(1)."""
    return pid.isascii() and pid.isdigit() and int(pid) >= 2


def _still_running(plan: LaunchPlan, records: dict[str, str]) -> str:
    """The pid file's process group runs: a kill command only for a group that is the account's own and whose
    leader runs the command the log's first line records (a reused pid, or a pid file holding 1, is neither)."""
    group = records["running"]
    if _is_group(group) and "owned" in records and _runs_recorded_command(records):
        return (f"{plan.pid_file} records a launch that is still running (process group {group}): "
                f"stop it first (kill -TERM -{group}) or choose another --log")
    return (f"{plan.pid_file} names process group {group}, which is running but is not confirmed to be the launch "
            f"{plan.log} records: look at it on the host before stopping anything, or choose another --log")


def _runs_recorded_command(records: dict[str, str]) -> bool:
    """The group leader's argv (the `leader` record) is the command of the log's first line, `+ COMMAND`, after
    its NAME=value words (env(1) consumed them; nohup and setsid exec'd)."""
    recorded = records.get("recorded", "")
    if not recorded.startswith("+ ") or "leader" not in records:
        return False
    try:
        words = shlex.split(recorded[2:])
    except ValueError:
        return False
    while words and (_ASSIGNMENT.match(words[0]) or words[0] == "env"):
        words.pop(0)
    leader = records["leader"].removesuffix("\x01").split("\x01")
    return bool(words) and leader == words


def stop_launch(remote: RemoteSpec, pid: int, ssh: SSHOptions, wait: int = STOP_WAIT_SECONDS) -> str:
    """SIGTERM to the launch's process group (the recorded pid: setsid made it the group's leader), then wait up
    to `wait` seconds.  Returns "stopped", "gone" (nothing was running), "running" (still there after
    the wait) or "denied" (not ours to signal)."""
    from logsleuth.sources.ssh.remote_command import STOP_SCRIPT, run_remote_script

    records = run_remote_script(remote, ssh, STOP_SCRIPT, pid, wait)
    return next((state for state in ("stopped", "gone", "running", "denied") if state in records), "running")


# -- the program -------------------------------------------------------------------------------------------


@dataclass
class LaunchStreams:
    """Where launch writes (tests pass StringIO): stdout for outcomes and --dry-run's lines, stderr for the rest."""

    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)


def ask_on_terminal(question: str) -> bool:
    """A y/N question on the terminal; anything but y/yes (an empty line, EOF) is no."""
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    try:
        answer = sys.stdin.readline()
    except (OSError, ValueError):
        return False
    return answer.strip().lower() in ("y", "yes")


def terminal_confirm() -> Confirm | None:
    """ask_on_terminal when someone is there to answer (stdin and stderr are terminals), else None."""
    return ask_on_terminal if sys.stdin.isatty() and sys.stderr.isatty() else None


def run_launch(
    host: str,
    command_words: Sequence[str],
    *,
    log_path: str | None = None,
    dry_run: bool = False,
    retry: bool = False,
    overwrite: bool = False,
    options: DiagnoseOptions,
    render_options: RenderOptions | None = None,
    confirm: Confirm | None = None,
    streams: LaunchStreams | None = None,
    now: datetime | None = None,
    alive_check: float = ALIVE_CHECK_SECONDS,
    redact: bool = True,
) -> int:
    """Launch COMMAND on HOST and watch it: 0 ready, 1 crashed (diagnosis printed), 2 usage, 3 could not start or
    read the log, 130 interrupted.  `confirm` answers the y/N questions (None: nobody can; then nothing is stopped
    and nothing retried)."""
    out = _Output(streams or LaunchStreams(), render_options or RenderOptions(), redact=redact)
    try:
        plan = make_plan(host, command_words, log_path, overwrite=overwrite, now=now or datetime.now(UTC))
        if dry_run:
            out.stdout("\n".join(plan.shell_lines()))
            out.note(f"dry run: nothing was run on {plan.host}")
            return int(ExitStatus.NO_FAILURE)
        return _launch_with_retries(plan, options, out, retry=retry, confirm=confirm, alive_check=alive_check)
    except LogsleuthError as exc:
        out.note(str(exc))
        return int(exc.exit_status)
    except KeyboardInterrupt:  # not while watching (that asks whether to stop the server): nothing to ask
        out.note("interrupted")
        return int(ExitStatus.INTERRUPTED)


def _launch_with_retries(plan: LaunchPlan, options: DiagnoseOptions, out: _Output, *, retry: bool,
                         confirm: Confirm | None, alive_check: float) -> int:
    tried = {plan.words}
    for attempt in range(MAX_RETRIES + 1):
        started = _start_and_say(plan, options.ssh, out)
        status, report = _watch(plan, started, options, out, confirm, alive_check)
        fixed = _corrected_command(report)
        if status != ExitStatus.FAILURE_FOUND or fixed is None:
            if status == ExitStatus.FAILURE_FOUND:
                out.note("no corrected command for this failure: nothing to retry")
            return status
        words = tuple(shlex.split(fixed))
        out.note(f"corrected command: {quote_shell_words(words)}")  # what a retry runs, hidden characters shown
        if not retry:
            out.note("--retry runs it after asking")
            return status
        if words in tried or attempt == MAX_RETRIES:
            out.note("the corrected command was already tried: not retrying again")
            return status
        question = (f"stop what is left of the failed launch (process group {started.pid}) and run the corrected "
                    f"command on {plan.host}?")
        if confirm is None or not _ask(confirm, question):
            out.note("not retried" + (" (no terminal to confirm on)" if confirm is None else ""))
            return status
        _stop_and_say(plan, started, options.ssh, out, quiet_if_gone=True)
        tried.add(words)
        plan = plan.retried(words, attempt + 1)
    return int(ExitStatus.FAILURE_FOUND)


def _start_and_say(plan: LaunchPlan, ssh: SSHOptions, out: _Output) -> Started:
    out.note(f"running on {plan.host}:")
    for line in plan.shell_lines():
        out.note(f"  {line}", prefix=False)
    try:
        started = start(plan, ssh)
    except KeyboardInterrupt:
        out.note(f"interrupted while starting: if the server started, its pid is in {plan.pid_file} on {plan.host}")
        raise
    out.note(f"started pid {started.pid} (its own process group); log {plan.host}:{started.log}; "
             f"pid in {started.log}.pid")
    return started


def _watch(plan: LaunchPlan, started: Started, options: DiagnoseOptions, out: _Output,
           confirm: Confirm | None, alive_check: float) -> tuple[int, Report | None]:
    """Follow the log from its first byte: (exit status, the failure's report when it crashed)."""
    from logsleuth.sources.ssh.remote_command import HostScripts
    from logsleuth.watch.follow import watch_spec

    spec = f"{plan.host}:{started.log}"
    watch_options = replace(options, command=options.command or plan.command_text)
    alive = _Liveness(HostScripts(plan.remote, options.ssh), started.pid, alive_check)
    # On a terminal, the launch view watch draws (stages in place, bars, memory); else a line per stage.
    view = _launch_view(spec) if out.live else None
    try:
        ready, ended = False, None
        with _drawn(view, out.streams.stderr):
            for event in watch_spec(spec, watch_options, from_start=True, stop=alive, details=view is not None):
                if view is not None:
                    view.apply(event)
                elif event.kind == "stage" and event.stage is not None:
                    out.note(f"{spec}: {event.stage.label}")
                elif event.kind in ("restarted", "waiting", "warning") and event.text:
                    out.note(f"{spec}: {event.text}")
                if event.kind == "ready" or (event.kind == "failure" and event.report is not None):
                    ready, ended = event.kind == "ready", event.report
                    break
        if ready:  # said once the view has stopped drawing
            out.outcome(f"{spec}: the server is ready (pid {started.pid})")
            return int(ExitStatus.NO_FAILURE), None
        if ended is not None:
            out.report(ended)
            return int(ExitStatus.FAILURE_FOUND), ended
        if alive.exited:
            return _exited(spec, started, watch_options, alive.host, out)
    except SourceError as exc:
        out.note(str(exc))
        out.note(f"the server may still be running on {plan.host}: to stop it, run there: kill -TERM -{started.pid}")
        return int(ExitStatus.SOURCE_ERROR), None
    except KeyboardInterrupt:
        return _interrupted(plan, started, options.ssh, out, confirm), None
    finally:
        alive.host.close()
    out.note(f"{spec}: the watch ended before the server was ready")
    return int(ExitStatus.SOURCE_ERROR), None


class _Liveness:
    """The watch's `stop`: true once the launch's process group has no process left.  The host is asked every
    `interval` seconds over a connection of its own; when it cannot be asked, the watch goes on."""

    def __init__(self, host: HostScripts, pid: int, interval: float) -> None:
        self.host = host
        self.pid = pid
        self.interval = interval
        self.exited = False
        self._next = time.monotonic() + interval

    def __call__(self) -> bool:
        if time.monotonic() < self._next:
            return False
        from logsleuth.sources.ssh.remote_command import ALIVE_SCRIPT
        from logsleuth.sources.ssh.scripts import parse_records

        try:
            self.exited = "gone" in parse_records(self.host.run(ALIVE_SCRIPT, self.pid))
        except SourceError:
            self.exited = False
        self._next = time.monotonic() + self.interval
        return self.exited


def _exited(spec: str, started: Started, options: DiagnoseOptions, host: HostScripts,
            out: _Output) -> tuple[int, Report | None]:
    """The server exited before it was ready and the watch reported no failure (yet): diagnose the whole log, and
    when it holds no failure, show how it ends.  Either way the launch failed (exit 1)."""
    from logsleuth.api import diagnose
    from logsleuth.sources.ssh.remote_command import TAIL_SCRIPT

    report = diagnose([spec], options)
    unreadable = next((source.error for source in report.sources if source.error), None)
    if report.failures:
        out.report(report)
        return int(ExitStatus.FAILURE_FOUND), report
    if unreadable is not None:
        out.note(unreadable)
        return int(ExitStatus.SOURCE_ERROR), None
    last = host.run(TAIL_SCRIPT, started.log, LAST_LINES).decode("utf-8", "replace").rstrip("\n")
    out.outcome(f"{spec}: the server exited (process group {started.pid} is gone) before it was ready, and its "
                f"log shows no failure logsleuth recognises; its last lines:", "exited", last.splitlines())
    return int(ExitStatus.FAILURE_FOUND), None


def _interrupted(plan: LaunchPlan, started: Started, ssh: SSHOptions, out: _Output, confirm: Confirm | None) -> int:
    """Ctrl-C while watching: stop the server only if the user says so; otherwise say how to."""
    out.note("interrupted")
    if confirm is not None and _ask(confirm, f"stop the server on {plan.host} (process group {started.pid})?"):
        _stop_and_say(plan, started, ssh, out, quiet_if_gone=False)
    else:
        out.note(f"the server keeps running on {plan.host}; to stop it, run there: kill -TERM -{started.pid} "
                 f"(the pid is also in {started.log}.pid)")
    return int(ExitStatus.INTERRUPTED)


def _stop_and_say(plan: LaunchPlan, started: Started, ssh: SSHOptions, out: _Output, *, quiet_if_gone: bool) -> None:
    state = stop_launch(plan.remote, started.pid, ssh)
    if state == "stopped":
        out.note(f"stopped process group {started.pid} on {plan.host}")
    elif state == "gone" and not quiet_if_gone:
        out.note(f"process group {started.pid} on {plan.host} had already exited")
    elif state == "running":
        out.note(f"process group {started.pid} on {plan.host} is still running {STOP_WAIT_SECONDS} s after "
                 f"SIGTERM: kill -KILL -{started.pid} ends it")
    elif state == "denied":
        out.note(f"not allowed to signal process group {started.pid} on {plan.host}")


def _ask(confirm: Confirm, question: str) -> bool:
    """The answer; a second Ctrl-C (or EOF) while asking is no."""
    try:
        return confirm(question)
    except (KeyboardInterrupt, EOFError):
        return False


def _corrected_command(report: Report | None) -> str | None:
    """The primary failure's corrected launch command from its pattern's verified fix, if it has one."""
    primary = report.primary if report is not None else None
    fix = primary.diagnosis.fix if primary is not None and primary.diagnosis is not None else None
    return fix.command if fix is not None else None


class _Output:
    """The lines launch prints: notes on stderr (`logsleuth: …`), outcomes and the diagnosis on stdout."""

    def __init__(self, streams: LaunchStreams, render_options: RenderOptions, *, redact: bool) -> None:
        self.streams = streams
        self.render_options = render_options
        self.redact = redact  # the diagnosis's secrets (--no-redact shows them); stderr is always redacted

    @property
    def live(self) -> bool:
        """Whether the watch is drawn as watch's launch view: stderr is a terminal, and the output is not JSON."""
        isatty = getattr(self.streams.stderr, "isatty", None)
        return self.render_options.format is not OutputFormat.JSON and bool(isatty and isatty())

    def note(self, text: str, *, prefix: bool = True) -> None:
        self._write(self.streams.stderr, ("logsleuth: " if prefix else "") + _inert(text) + "\n")

    def stdout(self, text: str) -> None:
        self._write(self.streams.stdout, text + "\n")

    def outcome(self, text: str, status: str = "ready", lines: Sequence[str] = ()) -> None:
        """The end of a launch on stdout: a line (and the log lines that explain it), or one JSON object."""
        if self.render_options.format is OutputFormat.JSON:
            import json

            record = {"schema": "logsleuth.launch/1", "status": status, "message": _inert(text),
                      "lines": [_inert(line) for line in lines]}
            self.stdout(json.dumps(record, ensure_ascii=False))
            return
        self.stdout("\n".join([_inert(text), *(f"  {_inert(line)}" for line in lines)]))

    def report(self, report: Report) -> None:
        if self.redact:
            from logsleuth.redact import redact_report

            report = redact_report(report)
        self._write(self.streams.stdout, render(report, self.render_options))

    @staticmethod
    def _write(stream: TextIO, text: str) -> None:
        stream.write(text)
        stream.flush()


def _launch_view(spec: str) -> LaunchView:
    from logsleuth.render.launch_view import LaunchView

    return LaunchView(spec)


def _drawn(view: LaunchView | None, stream: TextIO) -> AbstractContextManager[object]:
    """The launch view drawn live on `stream` while the watch runs (rich Live); it stays on screen after."""
    if view is None:
        return nullcontext()
    from rich.console import Console
    from rich.live import Live

    return Live(view, console=Console(file=stream), refresh_per_second=8, transient=False)


def _inert(text: str) -> str:
    """Text for the terminal: no escape sequences, no secrets (the command line may hold a token)."""
    from logsleuth.redact import redact_secrets

    return strip_controls(redact_secrets(text))
