"""What `logsleuth check` finds: one verdict per flag, the multi-flag traps, and the real validation's outcome.

Plain frozen data (no typer, no rich): the renderers draw it, `--format json` is `asdict` plus a schema version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# "validated": SGLang's own argument validation accepted the command; "rejected": it raised (message says what);
# "unavailable": it could not run here (no oracle venv for that version, no SGLang on the host), with the reason.
ValidationState = Literal["validated", "rejected", "unavailable"]


@dataclass(frozen=True, slots=True)
class FlagVerdict:
    """One flag (or a stray word) of the command, checked against the version's flag catalog."""

    flag: str  # as written (an abbreviation stays one); a stray word is given as is
    values: tuple[str, ...]
    ok: bool
    reason: str  # why it passes or fails, one sentence
    suggestion: str | None = None  # what to write instead: a flag, or `--flag value`
    deprecated: bool = False  # accepted, but the release says it goes away
    # False: a change that cannot be judged on its own (a removal without the launch command): neither ✓ nor ✗
    judged: bool = True


@dataclass(frozen=True, slots=True)
class TrapVerdict:
    """A combination of flags that each pass alone but that SGLang rejects together (a pattern of the library)."""

    pattern: str  # the pattern id that diagnoses the crash this combination causes
    title: str
    flags: tuple[str, ...]  # the flags involved
    reason: str
    fix: str  # the pattern's fix for this command, in one sentence
    corrected: str | None = None  # the command with the fix applied, when a whole command was checked


@dataclass(frozen=True, slots=True)
class Validation:
    """The command run through SGLang's own argument validation (the oracle, or the host's SGLang)."""

    state: ValidationState
    where: str  # "SGLang 0.5.9 (local oracle)", "gpu7: SGLang 0.5.9"
    message: str  # one line: "validated on ...", the error raised, or why it did not run
    notes: tuple[str, ...] = ()  # what was changed to run it here (a stand-in model, --device cpu)
    command: str | None = None  # what ran, as one shell line


@dataclass(frozen=True, slots=True)
class CheckResult:
    """`check` of one command or suggestion against one engine version."""

    engine: str
    version: str | None  # the version asked for (None: not given)
    catalog_version: str | None  # the catalog the flags were checked against
    version_note: str | None  # how the catalog was chosen, when it is not the version asked for
    command: str | None  # the command or flags checked, as one line
    flags: tuple[FlagVerdict, ...]
    traps: tuple[TrapVerdict, ...] = ()
    validation: Validation | None = None
    notes: tuple[str, ...] = ()  # what was read from the text (a suggestion in prose), what was not checked
    # The checked command with each ✗ flag written as SGLang names it (or left out): what to run instead
    corrected: str | None = None

    @property
    def passed(self) -> bool:
        """Every flag passes and was judged, no trap, and the real validation (where it ran) accepted it."""
        rejected = self.validation is not None and self.validation.state == "rejected"
        return all(verdict.ok and verdict.judged for verdict in self.flags) and not self.traps and not rejected

    @property
    def verified(self) -> bool:
        """What a ✓ means: it passed, and SGLang's own validation ran and accepted it (not just "the flags exist")."""
        return self.passed and self.validation is not None and self.validation.state == "validated"

    @property
    def unjudged(self) -> tuple[FlagVerdict, ...]:
        return tuple(verdict for verdict in self.flags if not verdict.judged)
