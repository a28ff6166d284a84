"""A launch line the log printed that could not have run as it stands: a corrected command is not rebuilt from it.

A terminal, a pager or a paste that wraps a long line at its width cuts it anywhere, also inside a word
(`--speculative-draft-model` at the end of one line, `-path /models/draft …` at the start of the next), and a log
excerpt can end in the middle of the command.  The engine ran the whole line; logsleuth sees a command that ends in a
flag with no value, or holds a word that is no flag of any release.  A corrected command rebuilt from it keeps the
cut word and loses the rest: it would not run, or run something else.  So the fix gives its flag changes and says why
no command is printed.

The engines read flags with argparse, which takes a flag's unambiguous start for the flag (`--tp` for `--tp-size`
in SGLang) and, in vLLM, underscores for dashes: such words are flags, not cuts."""

from __future__ import annotations

from logsleuth.command_line import CommandLine
from logsleuth.facts import entry_points
from logsleuth.fixes import static_catalogs
from logsleuth.fixes.catalog import Catalog, FlagInfo
from logsleuth.fixes.cross_engine import normalized
from logsleuth.models import Fix, LaunchInfo


def cut_launch_note(launch: LaunchInfo, command: CommandLine | None, fix: Fix, catalog: Catalog | None) -> str | None:
    """Why no corrected command is printed when the log's launch line looks cut or wrapped, else None.  Only a line
    the log printed (the user's own `--cmd` is theirs as written), and never for a flag the fix removes or renames:
    that flag is the failure's subject (an argparse error naming it), not a cut."""
    if command is None or launch.command_source != "log" or launch.engine is None or not command.option_words:
        return None
    if launch.command_wrapped:
        return _note("goes on at the next line (its tail: flags and their values)")
    changed = {op.flag for option in (fix, *fix.alternatives) for op in option.flags if op.op in ("remove", "rename")}
    known = static_catalogs.all_flags(launch.engine)
    if not known:
        return None
    # Another program of the engine (a benchmark) has flags of its own beside the server's (`--input-len` of
    # sglang.bench_one_batch, argparse's `--batch` for its `--batch-size`): they are flags, not cuts.
    program = entry_points.other_entry_point(" ".join(command.prefix))
    known = known | entry_points.own_flags(program[0]) if program else known
    for word, _values in command.option_words:
        flag = word.value
        if flag.startswith("--") and flag not in changed and not _is_flag(flag, launch.engine, known):
            return _note(f"holds `{flag}`, which is no flag of any {launch.engine} release logsleuth knows")
    last, values = command.option_words[-1]
    if not values and last.value not in changed and catalog is not None and _needs_a_value(last.value, catalog):
        return _note(f"ends in `{last.value}` with no value, which the flag needs")
    touched = {op.flag for option in (fix, *fix.alternatives) for op in option.flags}
    stray = _words_no_flag_takes(command, touched, launch.engine, catalog) if catalog is not None else None
    if stray:
        return _note(f"holds words no flag takes (`{stray}`), prose written after the command or another line joined "
                     "to it", reading="it is not the command that ran")
    return None


def _words_no_flag_takes(command: CommandLine, touched: set[str], engine: str, catalog: Catalog) -> str | None:
    """The words after a flag's values that the flag cannot take, joined, or None.  A sentence written on the launch
    line (`… --tp 2 and then it crashes`) parses as more values of the last flag; the engine's parser would have
    refused them (`unrecognized arguments`), so the line is not what ran.  vLLM takes its model as a positional
    argument anywhere among the flags (argparse), so one spare word is its model when no model is given otherwise.
    One spare word after a flag the fix changes is the failure's subject (a switch given a value:
    `--disable-radix-cache True`, `--enable-prefix-caching=false`), not prose."""
    spare: list[str] = []
    for flag, values in command.option_words:
        most = _most_values(flag.value, catalog)
        extra = values[most:] if most is not None else ()
        if len(extra) > (1 if flag.value in touched else 0):
            spare.extend(word.value for word in extra)
    vllm_model_slot = engine == "vllm" and not command.positional_words and not command.has("--model")
    return " ".join(spare) if len(spare) > (1 if vllm_model_slot else 0) else None


def _most_values(flag: str, catalog: Catalog) -> int | None:
    """How many values argparse gives `flag` at most, when every flag of the release it can stand for agrees, else
    None (unknown, or unbounded: nargs "+" and "*")."""
    if "=" in flag:
        return None
    counts = {_arity(info) for info in _flags_it_can_stand_for(flag, catalog)}
    return counts.pop() if len(counts) == 1 else None


def _arity(info: FlagInfo) -> int | None:
    if not info.takes_value or info.nargs == 0:
        return 0
    if info.nargs is None or info.nargs == "?":
        return 1
    return info.nargs if isinstance(info.nargs, int) else None


def _note(what: str, reading: str = "it looks cut or wrapped where the log printed it") -> str:
    return (f"the launch line in the log {what}: {reading}, so no corrected command is printed; make this change in "
            "the command you ran")


def _is_flag(flag: str, engine: str, known: frozenset[str]) -> bool:
    """A flag some release has, by its name, an alias, a negation or an unambiguous start of one (argparse), as the
    engine's parser reads it (vLLM's takes `--max_model_len` for `--max-model-len`: cross_engine.normalized)."""
    name = flag.partition("=")[0]
    spellings = {name, normalized(name, engine)}
    return any(spelling in known or any(other.startswith(spelling) for other in known) for spelling in spellings)


def _needs_a_value(flag: str, catalog: Catalog) -> bool:
    """Every flag of the release `flag` can stand for (itself, or those it is the start of) takes a value it lacks."""
    if "=" in flag:
        return False
    candidates = _flags_it_can_stand_for(flag, catalog)
    return bool(candidates) and all(info.takes_value and info.nargs not in ("?", "*") and info.nargs != 0
                                    for info in candidates)


def _flags_it_can_stand_for(flag: str, catalog: Catalog) -> list[FlagInfo]:
    """The release's flag named `flag`, else every flag it is an unambiguous-or-not start of (argparse's abbreviation:
    the callers ask whether all of them agree)."""
    exact = catalog.find(flag)
    return [exact] if exact else [
        info for info in catalog.flags if any(name.startswith(flag) for name in (info.name, *info.aliases))]
