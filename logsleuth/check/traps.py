"""Flags that pass one by one but that SGLang rejects together.  Each trap is the pattern of the library that
diagnoses the crash it causes: the check names that pattern, and its fix comes from that pattern's own builder
for this command, so `check` and `diagnose` give the same advice."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from logsleuth.check import knowledge
from logsleuth.check.flags import Given
from logsleuth.check.model import TrapVerdict
from logsleuth.command_line import CommandLine
from logsleuth.fixes.build import fit_to_command, with_commands
from logsleuth.fixes.builders.speculative import DRAFT, STEPS, TOPK
from logsleuth.fixes.catalog import Catalog

# The algorithms SGLang sizes as an EAGLE draft tree (0.5.9 _handle_speculative_decoding; NEXTN becomes EAGLE).
EAGLE_FAMILY = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE")


@dataclass(frozen=True, slots=True)
class Flags:
    """The flags given, by their catalog name (an alias or abbreviation resolved), last value wins as in argparse."""

    values: dict[str, str | None]

    @classmethod
    def of(cls, given: Sequence[Given]) -> Flags:
        return cls({item.info.name: (item.values[-1] if item.values else None) for item in given if item.info})

    def has(self, flag: str, catalog: Catalog) -> bool:
        info = catalog.find(flag)
        return info is not None and info.name in self.values

    def value(self, flag: str, catalog: Catalog) -> str | None:
        info = catalog.find(flag)
        return self.values.get(info.name) if info is not None else None


def _eagle(flags: Flags, catalog: Catalog) -> bool:
    return (flags.value("--speculative-algorithm", catalog) or "").upper() in EAGLE_FAMILY


def _partial_sizes(flags: Flags, catalog: Catalog) -> tuple[str, ...] | None:
    """Top-k or draft tokens without the number of steps: SGLang asserts both are unset."""
    if not _eagle(flags, catalog) or flags.has(STEPS, catalog):
        return None
    given = tuple(flag for flag in (TOPK, DRAFT) if flags.has(flag, catalog))
    return given or None


def _steps_without_topk(flags: Flags, catalog: Catalog) -> tuple[str, ...] | None:
    """Steps without top-k: SGLang compares the unset top-k with a number (TypeError)."""
    if _eagle(flags, catalog) and flags.has(STEPS, catalog) and not flags.has(TOPK, catalog):
        return (STEPS,)
    return None


# pattern id -> the flags that spring it (None: not sprung), and why, in words that need no log
TRAPS: dict[str, tuple[Callable[[Flags, Catalog], tuple[str, ...] | None], str]] = {
    "sglang-eagle-partial-spec-args": (
        _partial_sizes,
        f"without {STEPS}, SGLang chooses all three speculative sizes itself and asserts that neither {TOPK} nor "
        f"{DRAFT} was given: give all three, or none",
    ),
    "sglang-eagle-missing-topk": (
        _steps_without_topk,
        f"with {STEPS} but no {TOPK}, SGLang compares the unset top-k with a number and fails with a TypeError",
    ),
}


SPECULATIVE_SIZES = (STEPS, TOPK, DRAFT)


def partial_size_removal(removed: Sequence[str], added: Sequence[str], catalog: Catalog) -> str | None:
    """Why removing some of the speculative sizes, and adding none, is the seed incident's wrong fix even without
    the launch command: the sizes go all together or not at all, so an EAGLE command that keeps another of them
    still crashes (the two patterns above).  None when the removal is not that."""
    def names(flags: Sequence[str]) -> set[str]:
        return {info.name for flag in flags if (info := catalog.find(flag)) is not None}

    sizes = names(SPECULATIVE_SIZES)
    taken = names(removed) & sizes
    if not taken or taken == sizes or names(added) & sizes:
        return None
    kept = " or ".join(sorted(sizes - taken))
    return (f"removing only {' and '.join(sorted(taken))} is the known trap: the speculative sizes go all together "
            f"or not at all, so an EAGLE command that keeps {kept} still crashes (sglang-eagle-partial-spec-args, "
            f"sglang-eagle-missing-topk): remove every size the command gives, or give all three")


def find_traps(given: Sequence[Given], catalog: Catalog, command: CommandLine | None, *,
               whole: bool = True) -> tuple[TrapVerdict, ...]:
    """The traps the flags spring.  `command`: the flags as a command line, for the fix's values; `whole`: it is
    the user's whole command, so the corrected command is shown (for bare flags it would not be one)."""
    flags = Flags.of(given)
    found = []
    for pattern_id, (sprung, reason) in TRAPS.items():
        involved = sprung(flags, catalog)
        if involved is None:
            continue
        found.append(_verdict(pattern_id, involved, reason, catalog, command, whole))
    return tuple(found)


def _verdict(pattern_id: str, involved: tuple[str, ...], reason: str, catalog: Catalog,
             command: CommandLine | None, whole: bool) -> TrapVerdict:
    pattern = knowledge.pattern(pattern_id)
    title = pattern.title if pattern is not None else pattern_id
    builder_name = pattern.fix.get("builder") if pattern is not None else None
    fix_text, corrected = "", None
    if pattern is not None and builder_name:
        from logsleuth.fixes.builders import BUILDERS

        context = knowledge.fix_context(catalog, command, catalog.version)
        fix = BUILDERS[builder_name](context, pattern.fix)
        fitted = fit_to_command(fix, command) if fix is not None else None
        if fitted is not None:
            fitted = with_commands(fitted, command)
            fix_text, corrected = fitted.summary, fitted.command if whole else None
    return TrapVerdict(pattern_id, title, involved, reason, fix_text, corrected)
