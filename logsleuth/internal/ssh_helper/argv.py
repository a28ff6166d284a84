"""The SSH helper's first look at the command line, before typer is loaded (see process.py).

Only what Python has loaded at start-up may be imported here: this runs first thing in the console entry point.
"""

from __future__ import annotations

_COMMANDS = ("diagnose",)  # watch follows a log for minutes: its start-up time does not matter
# The options of `diagnose` that take a value (cli.py), so that their values are not taken for sources.
# tests/ssh/test_ssh_worker.py checks this against the real command.
DIAGNOSE_VALUE_OPTIONS = frozenset(
    {"--format", "-f", "--cmd", "--engine-version", "--patterns", "--max-bytes", "--output", "-o", "--width",
     "--max-chars", "--ssh-config", "-F", "--slack-webhook", "--ssh-backend"}
)

class HelperArgv:
    """The words of a command line sorted the way click sorts them: command, sources, options.  (Not
    `fixes.command.CommandLine`, which is a launch command: this is logsleuth's own.)"""

    def __init__(self, argv: list[str]) -> None:
        self.positional: list[str] = []
        self.values: dict[str, str] = {}
        self.flags: set[str] = set()
        words = iter(argv)
        for word in words:
            if word == "--":
                self.positional.extend(words)
            elif word.startswith("--"):
                name, equals, value = word.partition("=")
                if name in DIAGNOSE_VALUE_OPTIONS:
                    self.values[name] = value if equals else next(words, "")
                else:
                    self.flags.add(name)
            elif word.startswith("-") and word != "-":
                name = word[:2]
                if name in DIAGNOSE_VALUE_OPTIONS:
                    self.values[name] = word[2:] or next(words, "")
                else:
                    self.flags.add(word)
            else:
                self.positional.append(word)

    @property
    def command(self) -> str | None:
        return self.positional[0] if self.positional else None

    @property
    def sources(self) -> list[str]:
        return self.positional[1:]

    def value(self, *names: str) -> str | None:
        return next((self.values[name] for name in names if name in self.values), None)


def may_name_a_remote_log(argv: list[str]) -> bool:
    line = HelperArgv(argv)
    return line.command in _COMMANDS and any(":" in word for word in line.sources)
