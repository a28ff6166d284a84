"""The SSH helper's first look at the command line, before typer is loaded (see process.py).

Only what Python has loaded at start-up may be imported here: this runs first thing in the console entry point.
"""

from __future__ import annotations

from logsleuth.cli.option_table import value_words

# The options that take a value, per command the helper starts for, so that their values are not taken for sources:
# from the command line's own option table (which imports nothing, as this module must not).
DIAGNOSE_VALUE_OPTIONS = value_words("diagnose")
WATCH_VALUE_OPTIONS = value_words("watch")
HEALTH_VALUE_OPTIONS = value_words("health")
# `watch` too: its first stage shows only once the log is open, so it gains what `diagnose` gains; and `health`,
# whose remote reads are a few round trips after connecting (issue 30, finding 4).
VALUE_OPTIONS = {"diagnose": DIAGNOSE_VALUE_OPTIONS, "watch": WATCH_VALUE_OPTIONS, "health": HEALTH_VALUE_OPTIONS}


class HelperArgv:
    """The words of a command line sorted the way click sorts them: command, sources, options.  (Not
    `command_line.CommandLine`, which is a launch command: this is logsleuth's own.)"""

    def __init__(self, argv: list[str]) -> None:
        self.positional: list[str] = []
        self.values: dict[str, str] = {}
        self.flags: set[str] = set()
        # The command is the first word that is not an option (logsleuth's own options take no value).
        command = next((word for word in argv if not word.startswith("-")), None)
        taking_values = VALUE_OPTIONS.get(command or "", frozenset())
        words = iter(argv)
        for word in words:
            if word == "--":
                self.positional.extend(words)
            elif word.startswith("--"):
                name, equals, value = word.partition("=")
                if name in taking_values:
                    self.values[name] = value if equals else next(words, "")
                else:
                    self.flags.add(name)
            elif word.startswith("-") and word != "-":
                name = word[:2]
                if name in taking_values:
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
    named = any(":" in word for word in line.sources) or line.value("--hosts-file") is not None
    return line.command in VALUE_OPTIONS and named
