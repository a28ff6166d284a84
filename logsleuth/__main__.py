"""Entry point: run the CLI, map errors to exit statuses, never show a traceback."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    try:
        import typer

        from logsleuth.cli import app
        from logsleuth.errors import ExitStatus, LogsleuthError
    except KeyboardInterrupt:  # pragma: no cover - Ctrl-C during imports
        return 130
    # typer vendors click in recent releases and depends on it in older ones: find
    # click's exception base class through typer's public BadParameter either way.
    click_error: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
    try:
        status = app(args=argv, prog_name="logsleuth", standalone_mode=False)
        return status if isinstance(status, int) else 0
    except click_error as exc:
        getattr(exc, "show")()  # noqa: B009 - click's API, typed through a runtime class
        return int(getattr(exc, "exit_code", 2))
    except (KeyboardInterrupt, typer.Abort):
        print("logsleuth: interrupted", file=sys.stderr)
        return int(ExitStatus.INTERRUPTED)
    except LogsleuthError as exc:
        print(f"logsleuth: {exc}", file=sys.stderr)
        return int(exc.exit_status)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - the one place that turns a bug into one line
        print(f"logsleuth: internal error: {type(exc).__name__}: {exc} (please report this)", file=sys.stderr)
        return 4


def _entry() -> None:
    """The console script (and `python -m logsleuth`): the only caller that may fork the SSH helper."""
    from logsleuth.sources import ssh_prefork

    ssh_prefork.fork_if_remote(sys.argv[1:])  # before typer is imported: see sources/ssh_worker.py
    try:
        status = main()
    finally:
        ssh_prefork.stop()
    sys.exit(status)


if __name__ == "__main__":
    _entry()
