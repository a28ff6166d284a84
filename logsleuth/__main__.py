"""Entry point: run the CLI, map errors to exit statuses, never show a traceback."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable
from typing import Any

INTERRUPTED = "interrupted"


def main(argv: list[str] | None = None, *, quick: bool = False) -> int:
    """Run `logsleuth ARGV`.  `quick`: a plain `diagnose` command line skips typer (cli/quick.py); the console
    script asks for it, while in-process callers (the tests) get typer's parse, and can patch cli's names."""
    args = sys.argv[1:] if argv is None else argv
    if quick and args == ["--version"]:  # before anything else is imported: see cli/version.py
        from logsleuth.cli.version import version_text

        print(version_text())
        return 0
    if quick:
        try:
            from logsleuth.cli.quick import parse_diagnose, parse_health

            parsed = parse_diagnose(args)
            health = parse_health(args) if parsed is None else None
        except KeyboardInterrupt:  # Ctrl-C during imports
            print(f"logsleuth: {INTERRUPTED}", file=sys.stderr)
            return 130
        if parsed is not None:
            return _guarded(lambda: _run_quick(parsed))
        if health is not None:
            return _guarded(lambda: _run_quick_health(health))
    return _main_typer(args)


def _run_quick(parsed: dict[str, Any]) -> int:
    from logsleuth.cli.program import run_diagnose

    return int(run_diagnose(**parsed))


def _run_quick_health(parsed: dict[str, Any]) -> int:
    from logsleuth.cli.health_program import run_health

    return int(run_health(**parsed))


def _guarded(run: Callable[[], int]) -> int:
    """`run()`'s exit status, with every exception turned into one line on stderr and its exit status."""
    from logsleuth.cli.program_io import print_stderr
    from logsleuth.errors import ExitStatus, LogsleuthError

    try:
        return run()
    except KeyboardInterrupt:
        print_stderr(INTERRUPTED)
        return int(ExitStatus.INTERRUPTED)
    except LogsleuthError as exc:
        print_stderr(str(exc))
        return int(exc.exit_status)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - the one place that turns a bug into one line
        print_stderr(f"internal error: {type(exc).__name__}: {exc} (please report this)")
        return int(ExitStatus.INTERNAL)


def _main_typer(args: list[str]) -> int:
    try:
        import typer

        from logsleuth.cli.app import COMPLETE_VAR, app
        from logsleuth.cli.program_io import terminal_text
        from logsleuth.errors import ExitStatus
    except KeyboardInterrupt:  # Ctrl-C during imports
        print(f"logsleuth: {INTERRUPTED}", file=sys.stderr)
        return 130
    # typer vendors click in recent releases and depends on it in older ones: find
    # click's exception base class through typer's public BadParameter either way.
    click_error: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")

    def run() -> int:
        try:
            command = typer.main.get_command(app)
            if os.environ.get(COMPLETE_VAR):  # the shell asking for completions (`logsleuth completion SHELL`)
                return _complete(command, COMPLETE_VAR)
            return _run(command, args)
        except click_error as exc:
            # click's usage message quotes the command line: shown cleaned like every other stderr line.
            message = io.StringIO()
            getattr(exc, "show")(file=message)  # noqa: B009 - click's API, typed through a runtime class
            sys.stderr.write(terminal_text(message.getvalue()))
            return int(getattr(exc, "exit_code", ExitStatus.USAGE))
        except typer.Abort:
            raise KeyboardInterrupt from None

    return _guarded(run)


def _run(command: Any, args: list[str]) -> int:
    """Parse and invoke the click command ourselves: typer's own main() turns KeyboardInterrupt into a
    silent `Exit(130)`, so Ctrl-C would never say "interrupted"."""
    import typer

    try:
        with command.make_context("logsleuth", list(args)) as context:
            command.invoke(context)
    except typer.Exit as exc:
        return int(exc.exit_code)
    return 0


def _complete(command: Any, complete_var: str) -> int:
    """Answer a completion request from the script `logsleuth completion SHELL` printed.  click's own `main()`
    would do it, but logsleuth parses through `_run`."""
    from typer.completion import completion_init, shell_complete

    completion_init()  # typer's bash/zsh/fish completion classes, as its scripts expect them
    return int(shell_complete(command, {}, "logsleuth", complete_var, os.environ[complete_var]))


def _entry() -> None:
    """The console script (and `python -m logsleuth`): the only caller that may fork the SSH helper."""
    import signal

    from logsleuth.internal.ssh_helper import process as ssh_helper

    try:
        ssh_helper.fork_if_remote(sys.argv[1:])  # before typer is imported: see internal/ssh_helper/parent.py
        status = main(quick=True)
    except KeyboardInterrupt:  # before main() was running
        print(f"logsleuth: {INTERRUPTED}", file=sys.stderr)
        status = 130
    finally:
        # One Ctrl-C prints "interrupted" once: a second one while cleaning up ends the process at once.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        ssh_helper.stop()
    sys.exit(status)


if __name__ == "__main__":
    _entry()
