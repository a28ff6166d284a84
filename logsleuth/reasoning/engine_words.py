"""The engine's own words (issue 28, item 2): an instruction a failure's message gives, quoted and checked.

Engines say what to do in their messages: "Please install vllm by `pip install vllm==0.9.0.1`", "Use a shorter
input or enable --allow-auto-truncate.", "set --mem-fraction-static to a smaller value", "set the env var
SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1".  Such a sentence is kept as the engine said it (escapes removed,
never rewritten as a command) in `Diagnosis.engine_says`, with what logsleuth checked of it for the user's
release: each flag it names in the decided engine's catalog for that version (fixes/catalog.py), each choice
it lists, each package pin against what the release's wheel declares (facts/requires.py).  An environment
variable is quoted only: no data of ours says which variables a release reads.

An engine's message may name the other engine ("Please install vllm …" in SGLang's quantization code): it stays
a quote and decides nothing; the engine is decided from positive evidence (ingest/launch.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from logsleuth import versions
from logsleuth.facts.requires import pinned_requirement
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes import static_catalogs
from logsleuth.fixes.catalog import Catalog, FlagInfo
from logsleuth.fixes.cross_engine import find as find_flag
from logsleuth.ingest.normalize import clean_text
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, EngineWords, ExceptionBlock, Failure, LaunchInfo
from logsleuth.pydantic_display import checked_as, validator_error

__all__ = ["checked", "flag_facts", "instructions", "with_engine_words"]

# Bounded cost: a chain's last exceptions, the start of each message, a few instructions.
MAX_EXCEPTIONS = 8
MAX_MESSAGE_CHARS = 4000
MAX_INSTRUCTIONS = 6
MAX_QUOTE_CHARS = 400
MAX_CHOICES_SHOWN = 8


# A configuration check's sentence that ties a setting, named by its field, to another setting or value: "num_redundant_experts
# should be used with EPLB.", "collect_detailed_traces requires `--otlp-traces-endpoint` to be set.", "numa_bind_nodes and
# numa_bind_cpus require numa_bind=True." (vLLM's config classes, the raise site index; facts/categories.toml's row of
# such checks).  It says what to give with the setting, so it is quoted, and the fields it names are checked as flags.
_SETTINGS_TIE_PATTERN = (
    r"(?<![\w-])`?[a-z][a-z0-9]*(?:_[a-z0-9]+)+`?(?:=[^\s=]+)?\s+"
    r"(?:(?:should|must|can)\s+(?:only\s+)?be\s+used\s+(?:only\s+)?(?:with|together\s+with|when)\b"
    r"|requires?\s+`?(?:--[a-z]|[a-z][a-z0-9]*(?:_[a-z0-9]+)+))"
)
_TIES_SETTINGS = compile_lazily(_SETTINGS_TIE_PATTERN, re.IGNORECASE)  # as in _INSTRUCTION: an env var may lead
# A field named without backticks, read only in such a sentence (elsewhere a snake_case word is as often a variable).
_BARE_FIELD = compile_lazily(r"(?<![\w`.\-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![\w`])")


# What makes a sentence an instruction (or one of the engine's statements that say what to do).  Each
# alternative is a shape found in the engines' own code; tests/test_engine_words.py cites a site of each.
_INSTRUCTION = compile_lazily(
    r"\bplease\s+(?:re)?(?:install|upgrade|update|downgrade|use|set|enable|disable|specify|try|add|pass|reduce"
    r"|increase|decrease|lower|raise|make\s+sure|provide|switch|consider|remove)\b"
    r"|\btry\s+(?:to\s+)?(?:increas|decreas|reduc|lower|rais|set|us|enabl|disabl|add|pass|switch|upgrad"
    r"|downgrad|install)\w*"
    r"|\bconsider\s+(?:setting|using|increasing|decreasing|reducing|lowering|raising|enabling|disabling"
    r"|passing|adding|upgrading|installing|switching)\b"
    r"|\bpip\s+install\b"
    r"|\bmake\s+sure\b"
    r"|\byou\s+must\s+(?:use|set|pass|install|enable|disable|specify|call|run|provide|add)\b"
    r"|(?<![\w-])(?:use|using|enable|disable|set|pass|add|specify|remove|increase|decrease|reduce|lower|raise|by)\b"
    r"[^.\n]{0,60}?(?<![\w-])--[a-z]"
    r"|\bset\b[^.\n]{0,40}?\b[A-Z][A-Z0-9]*_[A-Z0-9_]+="
    r"|\bonly\b[^.\n]{0,160}?\b(?:are|is)\s+supported\b"
    r"|\bis\s+the\s+only\s+supported\b"
    r"|\b(?:is\s+longer\s+than|exceeds)\s+the\s+(?:model's\s+)?(?:maximum\s+)?(?:context\s+length|model\s+length)"
    r"|\bdoes\s+not\s+appear\s+to\s+have\s+a\s+file\s+named\b"
    r"|\bchat_template\s+is\s+not\s+set\b"
    r"|" + _SETTINGS_TIE_PATTERN,
    re.IGNORECASE,
)
# A flag as a message writes it, with a value given by `=`, or the word after it (a value only if it is one of
# the flag's choices in some release: "use --attention-backend triton", not "set --x to a smaller value").
_FLAG = compile_lazily(
    r"(?<![\w-])(--[A-Za-z][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*)(?:=([^\s`'\",;)\]]+)|[ \t]+`?([A-Za-z0-9_][\w.\-]*))?"
)
# A launch setting named as its ServerArgs / EngineArgs field: `gpu_memory_utilization`.
_FIELD = compile_lazily(r"`([a-z][a-z0-9]*(?:_[a-z0-9]+)+)`")
# A requirement: `vllm==0.9.0.1`, `bitsandbytes>=0.46.1`, `timm==0.9.10`.
_PIN = compile_lazily(
    r"(?<![\w.\-])([A-Za-z][A-Za-z0-9_.\-]*)(?:\[[A-Za-z0-9_,\-]+\])?\s*(==|>=|<=|~=|!=)\s*(\d[\w.+!*\-]*)"
)
# A package an install instruction names without a version: "Please install timm", "pip install vllm[flashinfer]".
_INSTALL = compile_lazily(
    r"\b(?:pip\s+install|please\s+(?:re)?install|to\s+install)\s+(?:-U\s+|--upgrade\s+)?"
    r"`?([A-Za-z][A-Za-z0-9_.\-]*)(?:\[[A-Za-z0-9_,\-]+\])?",
    re.IGNORECASE,
)
# A pip command the message gives: its options are pip's (--upgrade), not the engine's flags.
_PIP_COMMAND = compile_lazily(r"\bpip3?\s+install\b[^`'\"\n]*", re.IGNORECASE)
_INSTALL_CONTEXT = compile_lazily(r"\b(?:install|upgrade|downgrade|requires?|version)\b", re.IGNORECASE)
# Words between a package and its version in a sentence ("upgrade transformers to >= 5.0.0", "torch is >= 2.4").
_LINKING_WORDS = frozenset({"to", "is", "be", "at", "least"})
_WORD_BEFORE = compile_lazily(r"([A-Za-z][A-Za-z0-9_.\-]*)\s+(?:to|is|be|at least)\s*$")
_NOT_PACKAGES = frozenset({"it", "the", "a", "an", "by", "via", "with", "using", "from", "them", "this", "that",
                           "and", "or", "one", "following", "required", "latest", "newer", "dependencies", "version",
                           "versions",
                           # "unsatisfied condition: cuda>=12.4" (the container runtime): the driver's CUDA, no package
                           "cuda"})
# The words of an "only A, B and C are supported" list.
_ONLY_LIST = compile_lazily(r"\bonly\b([^.\n]{0,160}?)\b(?:are|is)\s+supported\b", re.IGNORECASE)
_WORD = compile_lazily(r"[A-Za-z0-9][\w.\-]*")
# Not an instruction though it names flags: argparse's own refusals (patterns read those) and "cannot X with Y".
_REFUSAL = compile_lazily(
    r"\s*(?:argument\s+-|ambiguous\s+option|unrecognized\s+arguments|invalid\s+choice"
    r"|(?:cannot|can't|can\s+not)\b[^.\n]{0,80}?(?<![\w-])--[a-z])",
    re.IGNORECASE,
)
# Escapes a message carries as text: a repr's `\n`, an ANSI colour written out (`\x1b[31m`, `\033[0m`), or left
# behind when a paste lost the ESC byte (`[0m`).
_LITERAL_NEWLINE = compile_lazily(r"\\[nr]")
_LITERAL_ESCAPE = compile_lazily(r"(?:\\x1b|\\033|\\u001b|\\e)\[[0-9;]*[A-Za-z]|\\t|\[\d{1,3}(?:;\d{1,3})*m")
_LIST_ITEM = compile_lazily(r"\n\s*(?:\d{1,2}[.)]|[-*\u2022])\s+")
# A line that starts with a capital starts a sentence (a traceback prints each of a message's lines as written).
_LINE_SENTENCE = compile_lazily(r"\n\s*(?=[A-Z])")
_LEADING_ITEM = compile_lazily(r"^\s*(?:\d{1,2}[.)]|[-*\u2022])\s+")
_SENTENCE_END = compile_lazily(r"(?<=[.!?])\s+(?=[A-Z`'\"(\[])")


def with_engine_words(diagnosis: Diagnosis | None, failure: Failure, launch: LaunchInfo) -> Diagnosis | None:
    """`diagnosis` with the instructions of `failure`'s messages, checked for the decided engine (the
    diagnosis's, else the launch's) at the version the log or the user gives (a guessed one is not used:
    a flag is then checked in every catalog of the engine)."""
    if diagnosis is None:
        return None
    engine = diagnosis.engine or launch.engine
    version = launch.named_version
    said = {words.text for words in diagnosis.engine_says}
    found = tuple(words for words in instructions(failure, engine, version) if words.text not in said)
    return replace(diagnosis, engine_says=diagnosis.engine_says + found) if found else diagnosis


def instructions(failure: Failure, engine: str | None = None, version: str | None = None) -> tuple[EngineWords, ...]:
    """The instructions the messages of `failure`'s chain give, in chain order, each with its checks for
    `engine` `version` (None: not known)."""
    found: dict[str, EngineWords] = {}
    for block in failure.exceptions[-MAX_EXCEPTIONS:]:
        # A ValidationError's validator words are the engine's message, without pydantic's header and display.
        _, message = checked_as(block)
        for sentence in _sentences(message[:MAX_MESSAGE_CHARS]):
            if sentence in found or not _INSTRUCTION.search(sentence):
                continue
            found[sentence] = EngineWords(_clipped(sentence), tuple(_checks(sentence, engine, version)), _speaker(block))
            if len(found) == MAX_INSTRUCTIONS:
                return tuple(found.values())
    return tuple(found.values())


# An installed package's own directory: `…/site-packages/transformers/…` (the package is what follows).
_INSTALLED_PACKAGE = compile_lazily(r"[/\\](?:site|dist)-packages[/\\]([A-Za-z_]\w*)[/\\]")
# A program's name as a fatal line gives it for the type (`nvidia-container-cli: requirement error: …`): lower case,
# words joined by hyphens, never a Python exception's name.
_PROGRAM = compile_lazily(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+")


# The validation library whose frames run a class's validators: not the speaker of the validator's words.
_VALIDATORS = frozenset({"pydantic", "pydantic_core"})


def _installed_package(path: str) -> str | None:
    m = _INSTALLED_PACKAGE.search(path)
    return m[1] if m is not None else None


def _speaker(block: ExceptionBlock) -> str | None:
    """Who printed the message, when it is positively not the engine: the installed package of the innermost frame
    (the engine's frames, a source checkout or no frame at all say nothing against the engine), or the program a
    frameless fatal line names.  So the container runtime's or transformers' instruction is not put in the
    engine's mouth."""
    frames = block.frames
    if validator_error(block) is not None:
        # pydantic only ran the validator: who raised is the code that built the validated class, above its frames.
        frames = tuple(frame for frame in frames if _installed_package(frame.file) not in _VALIDATORS)
    if frames:
        m = _INSTALLED_PACKAGE.search(frames[-1].file)
        return m[1] if m is not None and m[1] not in ENGINE_NAMES else None
    return block.type if _PROGRAM.fullmatch(block.type) else None


def _sentences(message: str) -> Iterator[str]:
    """The message's sentences, escapes removed and wrapped lines rejoined; each item of a numbered or bulleted
    list ("Possible solutions:\\n1. set --x …") is a sentence of its own."""
    text = _LITERAL_NEWLINE.sub("\n", message)
    text = _LITERAL_ESCAPE.sub(" ", "\n".join(clean_text(line) for line in text.split("\n")))
    for block in _LIST_ITEM.split(text):
        for line in _LINE_SENTENCE.split(_LEADING_ITEM.sub("", block)):
            flat = " ".join(line.split())
            yield from (sentence for sentence in _SENTENCE_END.split(flat) if sentence and not _REFUSAL.match(sentence))


def _clipped(sentence: str) -> str:
    return sentence if len(sentence) <= MAX_QUOTE_CHARS else sentence[:MAX_QUOTE_CHARS].rstrip() + "…"


# -- what is checked ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Scope:
    """The catalogs a name is checked in: the user's release's (logsleuth has its catalog), else every
    release's of the engine, or of both engines when the engine is not known."""

    engine: str | None
    version: str | None
    catalogs: tuple[Catalog, ...]

    @property
    def release(self) -> Catalog | None:
        """The user's release's own catalog (never a nearby release's: a flag can come or go in between)."""
        return self.catalogs[0] if len(self.catalogs) == 1 and self.catalogs[0].version == self.version else None

    def unknown(self) -> str:
        if self.engine is None:
            return "the log shows no engine"
        if self.version is None:
            return f"the {ENGINE_NAMES[self.engine]} release is not known"
        return f"logsleuth has no catalog of {ENGINE_NAMES[self.engine]} {self.version}"


def _checks(sentence: str, engine: str | None, version: str | None) -> Iterator[str]:
    scope = _scope(engine, version)
    flags: dict[str, str | None] = {}
    for match in _FLAG.finditer(_PIP_COMMAND.sub(" ", sentence)):
        given = (match[2] or "").rstrip(".") or None
        after = (match[3] or "").rstrip(".")
        flags.setdefault(match[1], given or (after if _is_a_choice(match[1], after, scope) else None))
    for flag, value in flags.items():
        # The flag in backticks: a secret's flag followed by a word (`--api-key is …`) reads as its value to the
        # redactor, which would replace "is".
        yield f"`{flag}` {_flag_facts(flag, value, scope)}"
    fields = _FIELD.findall(sentence)
    if _TIES_SETTINGS.search(sentence):
        fields += _BARE_FIELD.findall(sentence)
    for field in dict.fromkeys(fields):
        line = _field_check(field, scope, set(flags))
        if line:
            yield line
    only = _ONLY_LIST.search(sentence)
    if only:
        line = _choices_check(_WORD.findall(only[1]), list(flags), scope)
        if line:
            yield line
    if _INSTALL_CONTEXT.search(sentence):
        yield from _package_checks(sentence, engine, version)


def _scope(engine: str | None, version: str | None) -> _Scope:
    if engine not in ENGINE_NAMES:
        return _Scope(None, None, tuple(catalog for name in ENGINE_NAMES for catalog in _all_catalogs(name)))
    every = _all_catalogs(engine)
    own = tuple(catalog for catalog in every if catalog.version == version)
    if not own and version is not None and (exact := catalogs.load(engine, version)) is not None:
        own = (exact,)  # the release's static catalog (read from its source): which flags it has
    return _Scope(engine, version, own or every)


@lru_cache(maxsize=4)
def _all_catalogs(engine: str) -> tuple[Catalog, ...]:
    """Every shipped catalog of `engine`, oldest first (held here: catalog.load keeps only a few)."""
    ordered = sorted((key, v) for e, v in catalogs.available() if e == engine and (key := versions.version_key(v)))
    return tuple(catalog for _, v in ordered if (catalog := catalogs.load(engine, v)) is not None)


def _named(catalog: Catalog) -> str:
    return f"{ENGINE_NAMES[catalog.engine]} {catalog.version}"


def _listed(found: Sequence[Catalog]) -> str:
    """`SGLang 0.5.9, 0.5.23; vLLM 0.33.0`: releases grouped by engine."""
    by_engine: dict[str, list[str]] = {}
    for catalog in found:
        by_engine.setdefault(catalog.engine, []).append(catalog.version)
    return "; ".join(f"{ENGINE_NAMES[engine]} {', '.join(releases)}" for engine, releases in by_engine.items())


def checked(words: EngineWords, engine: str | None, version: str | None) -> EngineWords:
    """`words` with what logsleuth checked of its sentence for `engine` at `version` (a warning's recommendation)."""
    return replace(words, checks=tuple(_checks(words.text, engine, version)))


def flag_facts(flag: str, engine: str | None, version: str | None) -> str:
    """What the catalogs say of `flag` for `engine` at `version` (None: not known), as a predicate ("is a flag of
    SGLang 0.5.9", "is in the catalogs of SGLang 0.5.23, not of SGLang 0.4.10.post2 (the SGLang release is not known)"):
    the check an instruction's flag gets, for a rule that names a flag of the engine's message."""
    return _flag_facts(flag, None, _scope(engine, version))


def _flag_facts(flag: str, value: str | None, scope: _Scope) -> str:
    """What the catalogs say of `flag` (and of `value`, one of its choices?), as a predicate: of the user's
    release when logsleuth has its catalog, else which releases have it."""
    release = scope.release
    if release is not None:
        info = find_flag(flag, release.engine, release)
        if info is not None:
            static = " (its catalog is read from its source: the flag exists; no value is validated)" \
                if release.source == "static" else ""
            return f"is a flag of {_named(release)}" + _deprecation(info) + _value_check(value, info) + static
        short_for = _abbreviated(flag, release)
        if short_for is not None:
            return f"is not a flag of {_named(release)} by that name; its argparse takes it as short for {short_for}"
        return f"is not a flag of {_named(release)}" + _elsewhere(flag, release)
    having = [catalog for catalog in scope.catalogs if find_flag(flag, catalog.engine, catalog) is not None]
    lacking = [catalog for catalog in scope.catalogs if catalog not in having]
    if not having:
        other = _other_engines(flag, scope.engine) if scope.engine else ""
        return f"is in no catalog of {_listed(scope.catalogs)} ({scope.unknown()}; {_ONLY_SERVER_FLAGS}){other}"
    not_of = f", not of {_listed(lacking)}" if lacking else ""
    return f"is in the catalogs of {_listed(having)}{not_of} ({scope.unknown()})" + _values_check(flag, value, having)


def _elsewhere(flag: str, catalog: Catalog) -> str:
    """Where else a flag the user's release lacks is: the engine's other releases, else the other engine."""
    having = [other for other in _all_catalogs(catalog.engine)
              if other.version != catalog.version and find_flag(flag, other.engine, other) is not None]
    if catalog.source == "static" and (when := _static_range(flag, catalog)):
        return f" ({when})"
    if having:
        return f" (it is in {_listed(having)})"
    return f" (nor of any {ENGINE_NAMES[catalog.engine]} release logsleuth has a catalog of; {_ONLY_SERVER_FLAGS})" + (
        _other_engines(flag, catalog.engine))


def _static_range(flag: str, catalog: Catalog) -> str:
    """"added in 0.7.2" or "last in 0.11.2": where a flag the release lacks is, by the static catalogs."""
    having = static_catalogs.releases_with(catalog.engine, flag)
    mine = versions.version_key(catalog.version)
    later = [v for v in having if mine is not None and (key := versions.version_key(v)) is not None and key > mine]
    if later:
        return f"{ENGINE_NAMES[catalog.engine]} added it in {later[0]}"
    return f"{ENGINE_NAMES[catalog.engine]} {having[-1]} was the last release with it" if having else ""


# A flag in no catalog may still be a flag of another program of the engine (its benchmark, its router, SGLang's
# diffusion server): the catalogs are read from the server's own parser, and a check must not claim more.
_ONLY_SERVER_FLAGS = "the catalogs hold the server's launch flags: another program's flag is not in them"


def _abbreviated(flag: str, catalog: Catalog) -> str | None:
    """The one flag `flag` begins (argparse accepts a unique beginning of a long option); None when it begins
    none or several (argparse refuses an ambiguous one)."""
    begun = {alias: info.name for info in catalog.flags for alias in (info.name, *info.aliases)
             if alias.startswith(flag) and alias.startswith("--")}
    return min(begun, key=len) if len(set(begun.values())) == 1 else None


def _other_engines(flag: str, engine: str) -> str:
    having = [catalog for name in ENGINE_NAMES if name != engine for catalog in _all_catalogs(name)
              if find_flag(flag, catalog.engine, catalog) is not None]
    return f"; it is a flag of {_listed(having)}" if having else ""


def _deprecation(info: FlagInfo) -> str:
    if not info.deprecated:
        return ""
    return "; deprecated" + (f", replaced by {info.renamed_to}" if info.renamed_to else "")


def _is_a_choice(flag: str, word: str, scope: _Scope) -> bool:
    """`word` is one of `flag`'s choices in some release of the engine (both engines when it is not known)."""
    engines = [scope.engine] if scope.engine else list(ENGINE_NAMES)
    return bool(word) and any(word in info.choices for engine in engines for catalog in _all_catalogs(engine)
                              if (info := find_flag(flag, engine, catalog)) is not None)


def _value_check(value: str | None, info: FlagInfo) -> str:
    if value is None or not info.choices:
        return ""
    if value in info.choices:
        return f"; {value} is one of its choices"
    shown = ", ".join(info.choices[:MAX_CHOICES_SHOWN]) + (", …" if len(info.choices) > MAX_CHOICES_SHOWN else "")
    return f"; {value} is not one of its choices ({shown})"


def _values_check(flag: str, value: str | None, having: Sequence[Catalog]) -> str:
    """`value` against the flag's choices in each release that has the flag (the release is not known)."""
    infos = [(catalog, find_flag(flag, catalog.engine, catalog)) for catalog in having]
    choosing = [(catalog, info) for catalog, info in infos if info is not None and info.choices]
    if value is None or not choosing:
        return ""
    accepting = [catalog for catalog, info in choosing if value in info.choices]
    if len(accepting) == len(choosing):
        return f"; {value} is one of its choices"
    if accepting:
        return f"; {value} is one of its choices in {_listed(accepting)} only"
    return f"; {value} is not one of its choices"


def _field_check(field: str, scope: _Scope, named: set[str]) -> str | None:
    """A setting named by its field (`gpu_memory_utilization`): the flag that sets it, checked like a flag."""
    for catalog in reversed(scope.catalogs):  # newest first
        info = catalog.by_field(field)
        if info is not None and info.dest == field:
            if info.name in named:
                return None  # the sentence names the flag too: checked once
            return f"`{field}` is set by {info.name}, which {_flag_facts(info.name, None, scope)}"
    return None


def _choices_check(words: list[str], flags: list[str], scope: _Scope) -> str | None:
    """Of the choices an "only A, B, C are supported" sentence names, which the flags they belong to accept in
    each release of the scope: the flags the sentence names, else the flags whose choices hold most of the
    words (at least two: one word, "fp8", is a choice of too many flags to say which was meant)."""
    named = list(dict.fromkeys(words))
    seen: dict[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], list[Catalog]] = {}
    for catalog in scope.catalogs:
        infos = [info for flag in flags if (info := find_flag(flag, catalog.engine, catalog)) is not None]
        infos = infos or _flags_choosing(named, catalog)
        if not infos:
            continue
        choices = set(infos[0].choices)
        known = {word for word in named if any(word in other.choices for other in _same_flags(infos, catalog.engine))}
        accepted = tuple(word for word in named if word in choices)
        rejected = tuple(word for word in named if word in known and word not in choices)
        if accepted or rejected:
            seen.setdefault((tuple(sorted(info.name for info in infos)), accepted, rejected), []).append(catalog)
    parts = []
    for (names, accepted, rejected), found in seen.items():
        verb = "accepts" if len(names) == 1 else "accept"
        line = f"{', '.join(names)} of {_listed(found)} {verb} {', '.join(accepted) or 'none of them'}"
        parts.append(line + (f", not {', '.join(rejected)}" if rejected else ""))
    return "of the choices named: " + "; ".join(parts) if parts else None


def _same_flags(infos: list[FlagInfo], engine: str) -> list[FlagInfo]:
    """The same flags in every catalog of the engine: a named choice one release has is a choice, not a word."""
    return [other for catalog in _all_catalogs(engine) for info in infos
            if (other := catalog.find(info.name)) is not None]


def _flags_choosing(words: list[str], catalog: Catalog) -> list[FlagInfo]:
    """The flags whose choices hold the most of `words` (at least two), all with the same choices."""
    scored = [(sum(word in info.choices for word in words), info) for info in catalog.flags if info.choices]
    best = max((score for score, _ in scored), default=0)
    if best < 2:
        return []
    top = [info for score, info in scored if score == best]
    return [info for info in top if info.choices == top[0].choices][:3]


def _package_checks(sentence: str, engine: str | None, version: str | None) -> Iterator[str]:
    """Each package the sentence pins, against what the user's release declares (facts/requires.py); a package
    named without a version only when the release declares it."""
    pinned: set[str] = set()
    for m in _PIN.finditer(sentence):
        name, op, wanted = m.groups()
        if name.lower() in _LINKING_WORDS and (before := _WORD_BEFORE.search(sentence, 0, m.end(1))):
            name = before[1]  # "upgrade transformers to >= 5.0.0": the package is the word before "to"
        if name.lower() in _NOT_PACKAGES or name.lower() in _LINKING_WORDS:  # "requires a version >= 4.51": none
            continue
        said = f"{name}{op}{wanted.rstrip('.')}"
        pinned.add(_dist(name))
        if engine not in ENGINE_NAMES:
            yield f"the pin {said} could not be checked: the log shows no engine, so no release's requirements apply"
        elif version is None:
            yield f"the pin {said} could not be checked: the {ENGINE_NAMES[engine]} release is not known"
        else:
            release = f"{ENGINE_NAMES[engine]} {version}"
            declared = pinned_requirement(engine, version, name)
            if declared is None:
                yield f"the pin {said} could not be checked against what {release} declares"
            elif declared.replace(" ", "") == said:
                yield f"{release} declares {declared} too"
            else:
                yield f"{release} declares {declared} (the message names {said})"
    if engine not in ENGINE_NAMES or version is None:
        return
    for name in dict.fromkeys(_INSTALL.findall(sentence)):
        if name.lower() not in _NOT_PACKAGES and _dist(name) not in pinned:
            declared = pinned_requirement(engine, version, name)
            if declared is not None:
                yield f"{ENGINE_NAMES[engine]} {version} declares {declared}"


def _dist(requirement: str) -> str:
    """A distribution's normalized name (PEP 503), from a name or a requirement."""
    name = re.split(r"[\s\[<>=!~;]", requirement.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()
