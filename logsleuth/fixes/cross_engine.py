"""A launch command written for one engine, translated flag by flag for the other (vLLM <-> SGLang).

Every flag of the command gets an outcome, none is dropped silently:

- kept: the engine it runs on has the flag (by name or alias), so it stays as written;
- renamed: the other engine's flag for the same setting (`cross_engine.toml`, or the same argparse dest in both
  catalogs), its value carried over as written or converted where the conversion is exact (`32k` -> 32000);
- left out: the setting has no exact counterpart (a "near" one is named, and its value is left to the user), is
  the default of the engine it runs on, has a value that engine does not accept, or is a flag of neither engine.

Pure data in, data out: the fix builder (builders/other_engine.py) turns a `Translation` into flag operations
and prose.  The catalogs say which flags exist; the table says what they mean where the names differ.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from logsleuth.command_line import CommandLine, Word
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes.catalog import Catalog, FlagInfo
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, FlagOp

Engine = Literal["sglang", "vllm"]
Kind = Literal["same", "near", "default", "none"]
ENGINES: tuple[Engine, Engine] = ("sglang", "vllm")

# Package data next to this module (a path, as catalog.py reads its JSON).
_TABLE = Path(__file__).resolve().parent / "cross_engine.toml"
_DIRECTIONS = {"both", "to-sglang", "to-vllm"}
_KINDS = {"same", "near", "default", "none"}
_CONVERSIONS = {"human-int"}


def engine_of(name: str | None) -> Engine:
    """The engine a log names (SGLang when it names none: logsleuth's first engine)."""
    return "vllm" if name == "vllm" else "sglang"


def other(engine: str) -> Engine:
    return "vllm" if engine == "sglang" else "sglang"


@dataclass(frozen=True)
class Row:
    """One row of cross_engine.toml: a setting as each engine spells it."""

    names: dict[str, tuple[str, ...]]  # engine -> its spellings, the first is the one written
    kind: Kind
    direction: str = "both"
    why: str = ""
    values: tuple[tuple[str, str], ...] = ()  # (vLLM value, SGLang value)
    convert: str | None = None

    def applies(self, target: str) -> bool:
        return self.direction in ("both", f"to-{target}")

    def value_for(self, value: str, target: str) -> str:
        """The value as the target engine writes it (exact spellings only: `values`)."""
        for vllm_value, sglang_value in self.values:
            if target == "sglang" and value == vllm_value:
                return sglang_value
            if target == "vllm" and value == sglang_value:
                return vllm_value
        return value


def _names(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise ValueError(f"cross_engine.toml: a flag name or a list of names, not {value!r}")


def parse_table(text: str) -> tuple[Row, ...]:
    """The rows of a cross_engine.toml text; a malformed row is an error (the file ships with logsleuth)."""
    import tomllib  # here: only a command written for the other engine reads the table (~3 ms to import)

    rows = []
    for entry in tomllib.loads(text).get("flag", ()):
        unknown = set(entry) - {"vllm", "sglang", "kind", "direction", "why", "values", "convert"}
        if unknown:
            raise ValueError(f"cross_engine.toml: unknown keys {sorted(unknown)} in {entry}")
        kind, direction, convert = entry.get("kind"), entry.get("direction", "both"), entry.get("convert")
        if kind not in _KINDS or direction not in _DIRECTIONS or (convert is not None and convert not in _CONVERSIONS):
            raise ValueError(f"cross_engine.toml: bad kind, direction or convert in {entry}")
        names = {str(engine): _names(entry.get(engine)) for engine in ENGINES}
        if not any(names.values()) or (kind in ("same", "near") and not all(names.values())):
            raise ValueError(f"cross_engine.toml: a {kind} row needs the flag of both engines: {entry}")
        values = tuple((str(k), str(v)) for k, v in dict(entry.get("values", {})).items())
        rows.append(Row(names, kind, direction, " ".join(str(entry.get("why", "")).split()), values, convert))
    return tuple(rows)


@lru_cache(maxsize=1)
def table() -> tuple[Row, ...]:
    return parse_table(_TABLE.read_text(encoding="utf-8"))


def row_for(flag: str, source: str, target: str) -> Row | None:
    """The row that says what `flag` (a flag of `source`) is for `target`."""
    for row in table():
        if flag in row.names[source] and row.applies(target):
            return row
    return None


def rows_naming(flag: str) -> tuple[Row, ...]:
    return tuple(row for row in table() if any(flag in names for names in row.names.values()))


# -- values -------------------------------------------------------------------------------------------------

_HUMAN_INT = compile_lazily(r"(\d+(?:\.\d+)?)([kKmMgGtT])")
_DECIMAL = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def human_int(value: str) -> int | None:
    """vLLM's reading of `8k` (8000), `8K` (8192), `25.6k` (25600) or a plain integer (vllm/utils/
    argparse_utils.py human_readable_int); None for what vLLM would refuse, or its `auto`/-1."""
    text = value.strip()
    m = _HUMAN_INT.fullmatch(text)
    if m:
        number, suffix = m.groups()
        if suffix in _DECIMAL:
            return int(float(number) * _DECIMAL[suffix])
        return int(number) * _BINARY[suffix] if number.isdigit() else None
    if text.isdigit():
        return int(text)
    return None


# -- catalogs -----------------------------------------------------------------------------------------------


def normalized(flag: str, engine: str) -> str:
    """vLLM's parser reads `--max_model_len` as `--max-model-len` (FlexibleArgumentParser); SGLang's does not."""
    if engine == "vllm" and flag.startswith("--"):
        return "--" + flag[2:].replace("_", "-")
    return flag


_CATALOG_DIR = Path(__file__).resolve().parent / "catalogs"


_BOOLEAN_OPTIONAL = {"boolean_optional", "BooleanOptionalAction", "EnableDisableAction"}
_INVERSE_PREFIXES = {"--enable-": "--disable-", "--disable-": "--enable-"}


@lru_cache(maxsize=8)
def negations(engine: str, version: str) -> dict[str, str]:
    """The spellings that turn a switch off, each with the switch: `--no-X` of argparse's BooleanOptionalAction
    (a catalog's top-level `negations`, or derived from the action), and vLLM's EnableDisableAction pairing
    `--enable-X` with `--disable-X` (vllm/utils/argparse_utils.py, 0.33)."""
    try:
        data = json.loads((_CATALOG_DIR / f"{engine}-{version}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    found: dict[str, str] = {}
    for entry in data.get("flags", ()):
        name, action = str(entry.get("name", "")), entry.get("action")
        if action in _BOOLEAN_OPTIONAL and name.startswith("--"):
            found["--no-" + name[2:]] = name
        if action == "EnableDisableAction":
            for prefix, inverse in _INVERSE_PREFIXES.items():
                if name.startswith(prefix):
                    found[inverse + name[len(prefix) :]] = name
    for name in data.get("negations", ()):
        if isinstance(name, str) and name.startswith("--no-"):
            found.setdefault(name, "--" + name[len("--no-") :])
    return found


def find(flag: str, engine: str, catalog: Catalog | None) -> FlagInfo | None:
    """The catalog entry of `flag`, or of the switch it turns off (`--no-enable-prefix-caching`)."""
    if catalog is None:
        return None
    name = normalized(flag, engine)
    info = catalog.find(name)
    if info is None and (positive := negations(catalog.engine, catalog.version).get(name)):
        info = catalog.find(positive)
    return info


def is_negation(flag: str, engine: str, catalog: Catalog | None) -> bool:
    """`--no-X` of a switch X, or vLLM's `--disable-X` of `--enable-X` (not a flag whose own name says no)."""
    info = find(flag, engine, catalog)
    if info is None:
        return False
    name = normalized(flag, engine)
    return name not in (info.name, *info.aliases) or (name.startswith("--no-") and not info.name.startswith("--no-"))


def catalog_for(engine: str, version: str | None = None) -> Catalog | None:
    return catalogs.load(engine, version)


def source_info(flag: str, engine: str) -> FlagInfo | None:
    """`flag` in the newest catalog of `engine` that has it (a flag of an older release is still that engine's)."""
    return find(flag, engine, _catalog_having(flag, engine))


# -- one flag -----------------------------------------------------------------------------------------------

Outcome = Literal["kept", "renamed", "left-out"]
Reason = Literal["same-name", "table", "dest", "near", "default", "none", "value", "unknown"]


@dataclass(frozen=True)
class FlagTranslation:
    """What became of one flag of the command."""

    flag: str  # as given
    outcome: Outcome
    reason: Reason
    target: str | None = None  # the flag written instead ("renamed"), or the nearest one not written ("near")
    value: str | None = None  # a value converted for the target (None: the given words carry over)
    given: tuple[str, ...] = ()  # the values as given (for the prose; a secret's is never printed)
    note: str = ""  # why, completing "<flag> ...: <note>"


@dataclass(frozen=True)
class Translation:
    """A whole command translated for `target`: one entry per flag, in the command's order."""

    source: Engine  # the engine the foreign flags were written for
    target: Engine  # the engine that runs the command
    flags: tuple[FlagTranslation, ...]
    model: str | None = None  # a positional model moved to the target's model flag
    model_flag: str | None = None

    @property
    def kept(self) -> tuple[FlagTranslation, ...]:
        return tuple(item for item in self.flags if item.outcome == "kept")

    @property
    def renamed(self) -> tuple[FlagTranslation, ...]:
        return tuple(item for item in self.flags if item.outcome == "renamed")

    @property
    def left_out(self) -> tuple[FlagTranslation, ...]:
        return tuple(item for item in self.flags if item.outcome == "left-out")

    @property
    def near(self) -> tuple[FlagTranslation, ...]:
        return tuple(item for item in self.flags if item.reason == "near")

    @property
    def foreign(self) -> tuple[FlagTranslation, ...]:
        """The flags the target does not take as written."""
        return tuple(item for item in self.flags if item.outcome != "kept" or item.reason == "value")

    def ops(self) -> tuple[FlagOp, ...]:
        ops: list[FlagOp] = []
        for item in self.flags:
            if item.outcome == "renamed" and item.target:
                ops.append(FlagOp("rename", item.flag, item.value, to=item.target))
            elif item.outcome == "left-out":
                ops.append(FlagOp("remove", item.flag))
        if self.model is not None and self.model_flag is not None:
            ops.append(FlagOp("add", self.model_flag, self.model))
        return tuple(ops)


def _choices_note(info: FlagInfo, value: str, engine: str, catalog: Catalog) -> str:
    shown = ", ".join(info.choices[:12]) + (", ..." if len(info.choices) > 12 else "")
    return f"{ENGINE_NAMES[engine]} {catalog.version} has no {value!r} for {info.name} (it takes {shown})"


def _fit_value(
    words: tuple[Word, ...], info: FlagInfo, row: Row | None, target: Engine, catalog: Catalog
) -> tuple[str | None, str | None]:
    """(the value to write, None when the given words carry over; a reason it cannot be written, or None)."""
    if not words:
        return None, None
    if not info.takes_value:
        return None, None  # a stray word after a switch: the engine's own error says so
    if len(words) > 1 and info.nargs in (None, "?"):
        return None, f"{ENGINE_NAMES[target]}'s {info.name} takes one value, not {len(words)}"
    if not all(word.literal for word in words):
        return None, None  # `$LEN`: its value is not known here, so it is carried over as written
    given = words[0].value
    value = given
    if row is not None and info.choices and value not in info.choices:
        value = row.value_for(value, target)  # only a spelling the target refuses is respelled
    if row is not None and row.convert == "human-int" and target == "sglang":
        number = human_int(value)
        if number is None:
            why = "vLLM fits the length to the memory, SGLang has no such value; without the flag it uses the model's own length"
            return None, f"{given!r}: {why}" if given.lower() in ("auto", "-1") else f"{given!r} is not a length"
        value = str(number)
    if info.choices and len(words) == 1 and value not in info.choices:
        return None, _choices_note(info, value, target, catalog)
    return (value if value != given else None), None


def translate_flag(
    flag: str, words: tuple[Word, ...], target: Engine, target_catalog: Catalog | None
) -> FlagTranslation:
    """What `flag` (with its value words) becomes in a command run by `target`."""
    source = other(target)
    given = tuple(word.value for word in words)
    kept = find(flag, target, target_catalog)
    if kept is not None and target_catalog is not None:
        # The same name in both engines can still differ in meaning (a --config file holds one engine's names),
        # or in how a value is spelled (vLLM's --kv-cache-dtype fp8 is SGLang's fp8_e4m3).
        caution = next((row.why for row in rows_naming(flag) if row.kind == "none" and flag in row.names[target]), "")
        same = row_for(normalized(flag, source), source, target)
        spelled = same if same is not None and same.kind == "same" and flag in same.names[target] else None
        value, problem = _fit_value(words, kept, spelled, target, target_catalog)
        if problem:
            return FlagTranslation(flag, "left-out", "value", kept.name, None, given, problem)
        if value is not None:
            return FlagTranslation(flag, "renamed", "table", flag, value, given, caution)
        return FlagTranslation(flag, "kept", "same-name", flag, None, given, caution)
    name = normalized(flag, source)
    info = source_info(name, source)
    # The table names each flag once, by its name; an alias (vLLM's -tp, -q) is found through the catalog.
    # Never through a negation: --no-enforce-eager is not --enforce-eager.
    negation = info is not None and is_negation(name, source, _catalog_having(name, source))
    row = row_for(name, source, target) or (row_for(info.name, source, target) if info is not None and not negation else None)
    if row is not None:
        return _by_row(flag, words, row, target, target_catalog, given)
    if target_catalog is None:  # nothing to check it against: carried over, and said so
        return FlagTranslation(flag, "kept", "same-name", flag, None, given, f"not checked: logsleuth has no {ENGINE_NAMES[target]} flag catalog")
    if info is not None and negation:
        return _negation(flag, info, target, target_catalog, given)
    if info is not None:
        counterpart = _same_dest(info, target_catalog)
        if counterpart is not None and target_catalog is not None:
            value, problem = _fit_value(words, counterpart, None, target, target_catalog)
            if problem:
                return FlagTranslation(flag, "left-out", "value", counterpart.name, None, given, problem)
            return FlagTranslation(flag, "renamed", "dest", counterpart.name, value, given, "")
        why = f"{ENGINE_NAMES[target]} has no counterpart of {ENGINE_NAMES[source]}'s {flag}"
        return FlagTranslation(flag, "left-out", "none", None, None, given, why)
    return FlagTranslation(flag, "left-out", "unknown", None, None, given, f"neither {ENGINE_NAMES[target]} nor {ENGINE_NAMES[source]} has {flag}")


def _catalog_having(flag: str, engine: str) -> Catalog | None:
    """The newest catalog of `engine` that has `flag` (as a name, an alias or a negation)."""
    newest = catalog_for(engine)
    if find(flag, engine, newest) is not None:
        return newest
    for version in reversed(catalogs.versions_with(engine, normalized(flag, engine))):
        return catalog_for(engine, version)
    older = [version for found, version in catalogs.available() if found == engine]
    for version in reversed(older):  # a negation is in no catalog's names: look for its switch
        catalog = catalog_for(engine, version)
        if find(flag, engine, catalog) is not None:
            return catalog
    return None


def _written(names: Iterable[str], engine: str, catalog: Catalog | None) -> tuple[str, FlagInfo] | None:
    """The first of `names` the target catalog has (an older release may know only one spelling)."""
    for name in names:
        info = find(name, engine, catalog)
        if info is not None:
            return name, info
    return None


def _by_row(
    flag: str, words: tuple[Word, ...], row: Row, target: Engine, catalog: Catalog | None, given: tuple[str, ...]
) -> FlagTranslation:
    source = other(target)
    if row.kind in ("default", "none"):
        return FlagTranslation(flag, "left-out", row.kind, None, None, given, row.why or f"{ENGINE_NAMES[target]} has no counterpart")
    written = _written(row.names[target], target, catalog)
    name = written[0] if written is not None else row.names[target][0]
    if row.kind == "near":
        return FlagTranslation(flag, "left-out", "near", name, None, given, row.why)
    if catalog is None:  # no catalog to check against: the table's name, and only its exact conversions
        value = words[0].value if words and words[0].literal else None
        converted = row.value_for(value, target) if value is not None else None
        if converted is not None and row.convert == "human-int" and target == "sglang":
            number = human_int(converted)
            converted = str(number) if number is not None else None
        return FlagTranslation(flag, "renamed", "table", name, converted if converted != value else None, given, row.why)
    if written is None:
        why = f"{ENGINE_NAMES[target]} {catalog.version} has no {name} ({ENGINE_NAMES[source]}'s {flag})"
        return FlagTranslation(flag, "left-out", "none", name, None, given, why)
    value, problem = _fit_value(words, written[1], row, target, catalog)
    if problem:
        return FlagTranslation(flag, "left-out", "value", name, None, given, problem)
    return FlagTranslation(flag, "renamed", "table", name, value, given, row.why)


def _same_dest(info: FlagInfo, catalog: Catalog | None) -> FlagInfo | None:
    """The target's flag with the same argparse dest (or named after it): the same setting under another name."""
    if catalog is None or not info.dest:
        return None
    for candidate in catalog.flags:
        if candidate.dest == info.dest:
            return candidate
    return catalog.find("--" + info.dest.replace("_", "-"))


def _negation(flag: str, info: FlagInfo, target: Engine, catalog: Catalog | None, given: tuple[str, ...]) -> FlagTranslation:
    """`--no-X`: the default of the target when X is a switch the target has off by default."""
    source = other(target)
    positive = translate_flag(info.name, (), target, catalog)
    counterpart = find(positive.target, target, catalog) if positive.target else None
    if positive.outcome in ("kept", "renamed") and counterpart is not None and not counterpart.takes_value and not counterpart.default:
        why = f"{ENGINE_NAMES[target]} leaves {counterpart.name} off unless it is given"
        return FlagTranslation(flag, "left-out", "default", None, None, given, why)
    return FlagTranslation(flag, "left-out", "none", None, None, given, f"{ENGINE_NAMES[target]} has no counterpart of {ENGINE_NAMES[source]}'s {flag}")


# -- a whole command ----------------------------------------------------------------------------------------

_MODEL_FLAG = {"sglang": "--model-path", "vllm": "--model"}


def translate(command: CommandLine, target: Engine, catalog: Catalog | None = None) -> Translation:
    """Every flag of `command`, as the engine `target` (the one that runs it) takes it.  `catalog`: the target
    version's flags (default: the newest shipped catalog of `target`)."""
    catalog = catalog if catalog is not None else catalog_for(target)
    translated = tuple(translate_flag(flag.value, values, target, catalog) for flag, values in command.option_words)
    model = model_flag = None
    names = {item.target for item in translated if item.outcome != "left-out"} | {item.flag for item in translated if item.outcome == "kept"}
    model_names = {_MODEL_FLAG[target], "--model", "--model-path"}
    # `sglang serve MODEL`-style: a positional model is vLLM's way; SGLang's launcher wants the model flag.
    if target == "sglang" and command.positional_words and not names & model_names:
        model, model_flag = command.positional_words[0].value, _MODEL_FLAG[target]
    return Translation(other(target), target, translated, model, model_flag)


def mapping(source: Engine, target: Engine) -> dict[str, str | None]:
    """The table as a plain name map, `source` flag -> `target` flag (None: no counterpart).  The "did you
    mean" of an unrecognized flag reads it."""
    out: dict[str, str | None] = {}
    for row in table():
        if not row.applies(target):
            continue
        for name in row.names[source]:
            written = row.names[target][0] if row.names[target] and row.kind in ("same", "near") else None
            out.setdefault(name, written)
    return out
