"""The command line's shared options, declared once: their words, the parameter each sets, its kind, help and
limits, and which commands take it.

Three readers are built from this table: typer's parameters (cli/options.py), the typer-free reader of a plain
command line (cli/quick.py), and the SSH helper's first look at the command line (internal/ssh_helper/argv.py),
which runs before anything else is imported.  So this module imports nothing: the choices of `--format` and
`--ssh-backend` are written here as words, and tests/test_cli_options.py keeps them equal to
`render.options.OutputFormat` and `sources.options.SSH_BACKENDS`.

An option one command alone has (`launch --dry-run`, `case --suggest-pattern`) stays with that command.
"""

from __future__ import annotations

FORMATS = ("rich", "text", "markdown", "slack", "json")
SSH_BACKEND_CHOICES = ("auto", "paramiko", "openssh")
# render/options.py's MIN_WIDTH and MIN_MAX_CHARS (that module imports what start-up has not loaded; a test keeps
# them equal).
MIN_WIDTH = 40
MIN_SLACK_CHARS = 200
# sources.base.DEFAULT_MAX_BYTES (as --max-bytes writes it) and sources.fanout.DEFAULT_PARALLEL, likewise.
DEFAULT_MAX_BYTES = "256M"
DEFAULT_PARALLEL = 32
FORMAT_HELP = "rich (default on a terminal), text (default otherwise), markdown, slack or json."


class Option:
    """One option.  `kind`: flag (no value), text, path, size (`256M`), count (a whole number, at least
    `minimum`), seconds, or choice (one of `choices`).  `default`: what the command gets without it (False for a
    flag, else None unless given)."""

    __slots__ = ("names", "param", "kind", "help", "metavar", "minimum", "choices", "repeatable", "default")

    def __init__(
        self,
        names: tuple[str, ...],
        param: str,
        kind: str,
        help: str,  # noqa: A002 - typer's own word for it
        *,
        metavar: str | None = None,
        minimum: int | None = None,
        choices: tuple[str, ...] = (),
        repeatable: bool = False,
        default: object = None,
    ) -> None:
        self.names = names  # the long name first, then a short one
        self.param = param
        self.kind = kind
        self.help = help
        self.metavar = metavar
        self.minimum = minimum
        self.choices = choices
        self.repeatable = repeatable
        self.default = False if kind == "flag" else default

    @property
    def long(self) -> str:
        return self.names[0]

    @property
    def takes_value(self) -> bool:
        return self.kind != "flag"


_TABLE = (
    Option(("--format", "-f"), "output_format", "choice",
           f"Report format: {FORMAT_HELP} With -o, the file's extension decides.", choices=FORMATS),
    Option(("--output", "-o"), "output", "path",
           "Write the report to FILE (.json, .md, .slack, .txt pick the format).", metavar="FILE"),
    Option(("--width",), "width", "count", "Wrap rich and text reports at N columns (default: the terminal's "
           "width, $COLUMNS, or 80).", metavar="N", minimum=MIN_WIDTH),
    Option(("--all",), "all_failures", "flag", "Every failure group in the file, not just the latest launch."),
    Option(("--cmd",), "command", "text", "The launch command, to print it corrected.", metavar="COMMAND"),
    Option(("--engine-version",), "engine_version", "text", "The engine's release (SGLang or vLLM, whichever the log shows), when the log does not name it.",
           metavar="VERSION"),
    Option(("--patterns",), "patterns", "path", "Also read patterns from DIR (repeatable).", metavar="DIR",
           repeatable=True),
    Option(("--no-user-patterns",), "no_user_patterns", "flag", "Ignore ~/.config/logsleuth/patterns."),
    Option(("--max-bytes",), "max_bytes", "size", "Read at most SIZE from the end of each log (e.g. 256M, 1G).",
           metavar="SIZE", default=DEFAULT_MAX_BYTES),
    Option(("--max-chars",), "max_chars", "count", "Length limit of the Slack report, in characters.",
           metavar="N", minimum=MIN_SLACK_CHARS, default=3500),
    Option(("--no-redact",), "no_redact", "flag", "Show secrets (API keys, tokens) as they are in the log."),
    Option(("--anonymize",), "anonymize", "flag", "Also replace host names, IPs and user names."),
    Option(("--slack-webhook",), "slack_webhook", "text", "Also post the Slack report to this incoming-webhook URL.",
           metavar="URL"),
    Option(("--post-to-slack",), "post_to_slack", "flag",
           "Also post the Slack report to the webhook URL in $LOGSLEUTH_SLACK_WEBHOOK."),
    # SSH: how remote sources are reached (docs/ssh.md).
    Option(("--ssh-config", "-F"), "ssh_config", "path", "ssh config file (default ~/.ssh/config).",
           metavar="FILE"),
    Option(("--accept-new-host-key",), "accept_new_host_key", "flag",
           "Trust and remember an unknown host key (like accept-new)."),
    Option(("--ssh-backend",), "ssh_backend", "choice",
           "How to reach remote hosts: auto (OpenSSH's ssh when the host's config needs it: host certificates, "
           "ControlMaster, FIDO keys, Match exec; else paramiko), paramiko, openssh.", choices=SSH_BACKEND_CHOICES,
           default="auto"),
    Option(("--all-files",), "all_files", "flag", "A remote glob reads every match, not the newest."),
    # Fleets (docs/fleet-syntax.md): node[01-16]:/var/log/sglang.log, {host} templates, a hosts file.
    Option(("--hosts-file",), "hosts_file", "text", "Read sources from FILE, one per line (# comments): HOST:PATH, "
           "or a bare HOST that fills each {host} SOURCE. '-' reads it from stdin.", metavar="FILE"),
    Option(("--parallel",), "parallel", "count", "Read at most N sources at once.", metavar="N", minimum=1,
           default=DEFAULT_PARALLEL),
    # --explain (docs/explain.md): opt-in; nothing is sent anywhere without it.
    Option(("--explain",), "explain", "flag", "Also send the redacted case file of the failure to your own "
           "OpenAI-compatible model and show its answer, labelled unverified."),
    Option(("--llm-url",), "llm_url", "text", "The model's endpoint for --explain (default: $LOGSLEUTH_LLM_URL, "
           "then url in ~/.config/logsleuth/config.toml).", metavar="URL"),
    Option(("--llm-model",), "llm_model", "text", "The model to ask with --explain (default: $LOGSLEUTH_LLM_MODEL, "
           "the config file, else the one the server serves).", metavar="NAME"),
    Option(("--verify-fix",), "verify_fix", "text", "Also check a fix someone suggested (flags or a command, as "
           "pasted) against the log's SGLang version and launch command.", metavar="TEXT"),
    Option(("--host",), "host", "text", "Name this machine in the JSON report (default: its host name); "
           "`logsleuth merge` names its logs after it.", metavar="NAME"),
    # watch
    Option(("--timeout",), "timeout", "seconds",
           "Give up after SECONDS (exit 124); default: wait for ready or a crash.", metavar="SECONDS"),
    Option(("--stall",), "stall", "seconds", "Exit 124 when no new stage or progress shows for SECONDS; print the "
           "stuck stage, its last lines and the usual causes.", metavar="SECONDS"),
    Option(("--settle",), "settle", "seconds", "After a crash, wait up to SECONDS (default 1) for ranks that have "
           "not failed yet (a single-rank launch is reported at once).", metavar="SECONDS"),
    Option(("--then-follow",), "then_follow", "flag",
           "After ready, keep watching: report a runtime crash (exit 1), warn of a struggling server."),
    Option(("--from-start",), "from_start", "flag", "Read the whole log, not only its last 1 MiB."),
)
OPTIONS: dict[str, Option] = {option.long: option for option in _TABLE}

_SSH = ("--ssh-config", "--accept-new-host-key", "--ssh-backend")
# Which commands take which of the options above (in the order `--help` lists them).
COMMANDS: dict[str, tuple[str, ...]] = {
    "diagnose": (
        "--format", "--output", "--width", "--all", "--cmd", "--engine-version", "--patterns", "--no-user-patterns",
        "--max-bytes", "--max-chars", "--no-redact", "--anonymize", "--slack-webhook", "--post-to-slack", *_SSH,
        "--all-files", "--hosts-file", "--parallel", "--explain", "--llm-url", "--llm-model", "--verify-fix",
        "--host",
    ),
    "watch": (
        "--format", "--timeout", "--stall", "--settle", "--then-follow", "--from-start", "--cmd", "--engine-version",
        "--width", "--no-redact", *_SSH, "--hosts-file",
    ),
    "health": (
        "--format", "--output", "--width", "--cmd", "--engine-version", "--patterns", "--no-user-patterns",
        "--max-chars", "--no-redact", *_SSH, "--hosts-file", "--parallel", "--host",
    ),
}


def options_of(command: str) -> tuple[Option, ...]:
    return tuple(OPTIONS[name] for name in COMMANDS.get(command, ()))


def value_words(command: str) -> frozenset[str]:
    """Every word (long and short) of the options of `command` that take a value."""
    return frozenset(name for option in options_of(command) if option.takes_value for name in option.names)
