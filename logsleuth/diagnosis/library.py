"""The pattern library: one TOML file per known failure, loaded from layers.

Layers, later ones first in matching order: bundled (`logsleuth.patterns`, shipped in the wheel), the user's
`~/.config/logsleuth/patterns`, then each `--patterns DIR`.  A broken user file is reported (file and line) and
skipped; one bad pattern never breaks a run.  A `[fix] builder` must name one of the fix builders the caller
passes as `known_builders` (the api passes fixes.builders.BUILDERS).  See docs/writing-patterns.md.
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import regex

from logsleuth import paths, versions
from logsleuth import toml_cache as cache
from logsleuth.diagnosis.schema import BUILTIN_LAYER, CATEGORIES, LazyRegex, MatchRule, Pattern, Regex
from logsleuth.errors import PatternError
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import ENV_NAME

_ID = compile_lazily_regex(r"^[a-z0-9]+(?:-[a-z0-9]+)+$")
_KINDS = frozenset({"traceback", "bare", "usage", "fatal", "abort", "line", "killed"})
_FLAG_OPS = frozenset({"add", "remove", "set", "rename"})
_MATCH_KEYS = frozenset(
    {"kind", "exception_type", "message", "chain_message", "frame_file", "frame_function", "source", "log_line", "usage", "command"}
)
_TOP_KEYS = frozenset(
    {
        "id", "title", "category", "priority", "engine", "versions", "cascade", "match", "root_cause", "fix",
        "references", "aliases", "fixed_in", "own_words",
    }
)


# -- loading -------------------------------------------------------------------------


_Locate = Callable[[str], str]


def _compile(value: Any, at: _Locate, key: str, *, lazy: bool) -> Regex:
    if not isinstance(value, str):
        raise PatternError(at(key), f"match.{key} must be a string (a regular expression)")
    if lazy:
        return LazyRegex(value, regex.MULTILINE)
    try:
        return regex.compile(value, regex.MULTILINE)
    except regex.error as exc:
        raise PatternError(at(key), f"match.{key}: invalid regular expression: {exc}") from None


def _parse_rule(table: Any, at: _Locate, *, lazy: bool = False) -> MatchRule:
    if not isinstance(table, dict) or not table:
        raise PatternError(at("[[match]]"), "each [[match]] must be a non-empty table")
    unknown = set(table) - _MATCH_KEYS
    if unknown:
        first = sorted(unknown)[0]
        raise PatternError(
            at(first), f"unknown match key(s): {', '.join(sorted(unknown))} (known: {', '.join(sorted(_MATCH_KEYS))})"
        )
    kinds = table.get("kind", [])
    if isinstance(kinds, str):
        kinds = [kinds]
    if not isinstance(kinds, list) or not set(kinds) <= _KINDS:
        raise PatternError(at("kind"), f"match.kind must be among {', '.join(sorted(_KINDS))}")
    fields: dict[str, Any] = {"kind": frozenset(kinds)}
    for key in sorted(_MATCH_KEYS - {"kind"}):
        if key in table:
            fields[key] = _compile(table[key], at, key, lazy=lazy)
    return MatchRule(**fields)


_FIX_KEYS = frozenset({"summary", "flags", "env", "steps", "alternatives", "builder"})


def _check_fix(fix: Any, at: _Locate, known_builders: Collection[str] | None) -> dict[str, Any]:
    if not isinstance(fix, dict):
        raise PatternError(at("[fix]"), "[fix] must be a table")
    if _names_builder(fix, at, known_builders):
        return fix  # a builder takes its own keys
    unknown = set(fix) - _FIX_KEYS
    if unknown:
        raise PatternError(at(sorted(unknown)[0]), f"unknown fix key(s): {', '.join(sorted(unknown))}")
    for option in (fix, *fix.get("alternatives", [])):
        if not isinstance(option, dict):
            raise PatternError(at("alternatives"), "fix.alternatives must be tables")
        if option is not fix and _names_builder(option, at, known_builders):
            continue  # an alternative may be built too (e.g. a computed --mem-fraction-static)
        for flag in option.get("flags", []):
            if not isinstance(flag, dict) or flag.get("op") not in _FLAG_OPS or not str(flag.get("flag", "")).startswith("-"):
                raise PatternError(at("flags"), f"fix.flags entries need op in {sorted(_FLAG_OPS)} and a --flag: {flag!r}")
        env = option.get("env", {})
        if not isinstance(env, dict):
            raise PatternError(at("env"), "fix.env must be a table of NAME = \"value\"")
        bad_names = [name for name in env if not ENV_NAME.fullmatch(name)]
        if bad_names:
            raise PatternError(at("env"), f"fix.env: {bad_names[0]!r} is not an environment variable name")
        steps = option.get("steps", [])
        if not isinstance(steps, list) or not all(isinstance(step, str) for step in steps):
            raise PatternError(at("steps"), "fix.steps must be a list of strings")
    return fix


def _names_builder(option: dict[str, Any], at: _Locate, known_builders: Collection[str] | None) -> bool:
    name = option.get("builder")
    if name is None:
        return False
    if not isinstance(name, str) or (known_builders is not None and name not in known_builders):
        raise PatternError(at("builder"), f"fix.builder {name!r} is not a known fix builder")
    return True


def _line_of(text: str, needle: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.lstrip()
        if stripped.startswith(needle) and (needle.startswith("[") or stripped[len(needle) :].lstrip().startswith("=")):
            return number
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith(needle):
            return number
    return 1


def parse_pattern(
    text: str,
    path: str,
    layer: str = BUILTIN_LAYER,
    *,
    data: dict[str, Any] | None = None,
    known_builders: Collection[str] | None = None,
) -> Pattern:
    """A pattern from its TOML text (`data`: that text already parsed, e.g. by the cache).  `known_builders`:
    the fix builders a `[fix] builder` may name (None: not checked here)."""
    if data is None:
        data = parse_toml(text, path)
    where = path

    def at(key: str) -> str:
        return f"{path}:{_line_of(text, key)}"

    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise PatternError(
            at(sorted(unknown)[0]), f"unknown key(s): {', '.join(sorted(unknown))} (known: {', '.join(sorted(_TOP_KEYS))})"
        )
    for key in ("id", "title", "category", "root_cause", "match"):
        if key not in data:
            raise PatternError(f"{path}:1", f"missing required key '{key}'")
    if not isinstance(data["id"], str) or not _ID.match(data["id"]):
        raise PatternError(at("id"), "id must be lowercase words joined by dashes, e.g. sglang-eagle-partial-spec-args")
    if data["category"] not in CATEGORIES:
        raise PatternError(
            at("category"), f"unknown category {data['category']!r} (known: {', '.join(sorted(CATEGORIES))})"
        )
    for key in ("title", "root_cause"):
        if not isinstance(data[key], str) or not data[key].strip():
            raise PatternError(at(key), f"{key} must be a non-empty string")
    raw_rules = data["match"] if isinstance(data["match"], list) else [data["match"]]
    rules = tuple(_parse_rule(rule, at, lazy=layer == BUILTIN_LAYER) for rule in raw_rules)
    priority = data.get("priority", 1000)
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise PatternError(at("priority"), "priority must be an integer (lower wins)")
    for key in ("versions", "references", "aliases"):
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise PatternError(at(key), f"{key} must be a list of strings")
    for entry in data.get("versions", []):
        if not all(versions.is_valid_constraint(c) for c in entry.split(",")):
            raise PatternError(at("versions"), f"versions: cannot read {entry!r} (use e.g. \"<0.5.23\" or \">=0.5,<0.6\")")
    fixed_in = data.get("fixed_in")
    if fixed_in is not None and (not isinstance(fixed_in, str) or versions.version_key(fixed_in) is None):
        raise PatternError(at("fixed_in"), f"fixed_in must be an engine version such as \"0.5.4.post2\", not {fixed_in!r}")
    for key in ("cascade", "own_words"):
        if not isinstance(data.get(key, False), bool):
            raise PatternError(at(key), f"{key} must be true or false")
    if data.get("own_words") and not isinstance(data.get("engine"), str):
        raise PatternError(at("own_words"), "own_words needs the pattern's engine")
    if "engine" in data and not isinstance(data["engine"], str):
        raise PatternError(at("engine"), "engine must be a string such as \"sglang\"")
    return Pattern(
        id=data["id"],
        title=str(data["title"]),
        category=data["category"],
        root_cause=str(data["root_cause"]).strip(),
        rules=rules,
        fix=_check_fix(data["fix"], at, known_builders) if data.get("fix") else {},
        priority=priority,
        engine=data.get("engine"),
        versions=tuple(data.get("versions", ())),
        cascade=bool(data.get("cascade", False)),
        own_words=bool(data.get("own_words", False)),
        references=tuple(data.get("references", ())),
        aliases=tuple(data.get("aliases", ())),
        fixed_in=fixed_in,
        path=where,
        layer=layer,
    )


def bundled_files() -> Iterator[tuple[str, str]]:
    """(path, text) of every bundled pattern file, failure and health patterns alike."""
    root = paths.bundled_patterns_dir()
    for engine_dir in sorted(root.iterdir(), key=lambda entry: entry.name):
        if not engine_dir.is_dir() or engine_dir.name.startswith(("_", ".")) or engine_dir.name == "catalogs":
            continue
        for entry in sorted(engine_dir.iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".toml"):
                yield f"patterns/{engine_dir.name}/{entry.name}", entry.read_text(encoding="utf-8")


MAX_PATTERN_FILE_BYTES = 1 << 20  # a pattern is a few KiB; anything bigger is not one


def _directory_files(directory: Path) -> Iterator[tuple[str, str | PatternError]]:
    """(path, text) for every `*.toml` below `directory`; an entry that cannot be a pattern file (a directory
    named `x.toml`, a FIFO or device, an unreadable or huge file) comes with the error that names it, so the
    rest of the directory still loads.  Special files are never opened: a FIFO or /dev/zero would hang."""
    for path in sorted(directory.rglob("*.toml")):
        try:
            info = path.stat()
        except OSError as exc:
            yield str(path), PatternError(str(path), f"cannot read: {exc.strerror or exc}")
            continue
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            yield str(path), PatternError(str(path), f"{kind}, not a pattern file")
            continue
        if info.st_size > MAX_PATTERN_FILE_BYTES:
            yield str(path), PatternError(str(path), f"{info.st_size} bytes: too big for a pattern file")
            continue
        try:
            with path.open("rb") as handle:
                data = handle.read(MAX_PATTERN_FILE_BYTES + 1)
        except OSError as exc:
            yield str(path), PatternError(str(path), f"cannot read: {exc.strerror or exc}")
            continue
        yield str(path), data.decode("utf-8", errors="replace")


def user_pattern_dir() -> Path:
    return paths.config_dir() / "patterns"


def _is_dir(path: Path) -> bool | OSError:
    """Path.is_dir() raises on a parent the user cannot search (an unreadable ~/.config): say so instead."""
    try:
        return path.is_dir()
    except OSError as exc:
        return exc


@dataclass
class PatternSet:
    """The patterns of every layer, in matching order, and the error line of each user file skipped."""

    patterns: list[Pattern]
    errors: list[str]
    _uncompiled: Iterator[LazyRegex] | None = field(default=None, repr=False, compare=False)

    def compile_next(self) -> bool:
        """Make one more lazy regex ready for matching; False when none is left.  For time spent waiting anyway
        (the SSH helper connecting): whatever this does, matching does not have to.  Since the prefilter, that is
        reading its literals (LazyRegex.prepare), not compiling it: most regexes are never compiled in a run."""
        if self._uncompiled is None:
            self._uncompiled = (
                expression
                for pattern in self.patterns
                for rule in pattern.rules
                for expression in rule.regexes()
                if isinstance(expression, LazyRegex)
            )
        for expression in self._uncompiled:
            expression.prepare()
            return True
        return False


# The bundled layer parsed once per process, for as long as its files are unchanged: a process that diagnoses
# many logs (the tests, a fleet) would otherwise read and parse every file for each, and lose the regexes and
# prefilter literals its patterns have prepared.  Keyed by each file's size and mtime, and the builders.
_PARSED_BUNDLED: dict[tuple[object, ...], tuple[Pattern, ...]] = {}


def _bundled_signature() -> tuple[tuple[str, int, int], ...]:
    root = paths.bundled_patterns_dir()
    signature = []
    for path in sorted(root.glob("*/*.toml")):
        info = path.stat()
        signature.append((str(path), info.st_mtime_ns, info.st_size))
    return tuple(signature)


def _bundled_patterns(known_builders: Collection[str] | None) -> list[Pattern]:
    key = (_bundled_signature(), None if known_builders is None else frozenset(known_builders))
    if key not in _PARSED_BUNDLED:
        if len(_PARSED_BUNDLED) >= 4:  # only ever a few: the builders given and the files as edited
            _PARSED_BUNDLED.clear()
        _PARSED_BUNDLED[key] = tuple(_parse_bundled(known_builders))
    return list(_PARSED_BUNDLED[key])


def _parse_bundled(known_builders: Collection[str] | None) -> list[Pattern]:
    """The bundled layer, parsed from the cache when it holds these files.  A cache that parses as JSON but
    not as patterns (written by another version, edited by hand) is ignored: the TOML is the truth."""
    bundled = list(bundled_files())
    try:
        return [
            parse_pattern(text, path, data=data, known_builders=known_builders)
            for (path, text), data in zip(bundled, cache.parsed_files(bundled), strict=True)
            if not is_health_pattern(data)
        ]
    except (PatternError, KeyError, TypeError, AttributeError, ValueError):
        # A broken bundled pattern is our bug (the tests parse every one strictly); this re-raises it then.
        return [
            parse_pattern(text, path, data=data, known_builders=known_builders)
            for (path, text), data in zip(bundled, cache.parsed_files(bundled, use_cache=False), strict=True)
            if not is_health_pattern(data)
        ]


HEALTH_KIND = "health"  # a pattern file with `kind = "health"` is a health pattern (logsleuth/health/library.py)


def is_health_pattern(data: dict[str, Any]) -> bool:
    return data.get("kind") == HEALTH_KIND


def layer_files(
    extra_dirs: Iterable[str | Path], include_user: bool, errors: list[str], *, health: bool, strict: bool = False
) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    """(layer, path, text, its TOML) of every user and `--patterns` file of one kind, failure or `health`, in
    layer order; files of the other kind are passed over.  A layer that cannot be read, and a file that cannot
    be read or is not TOML, is an error line in `errors` (raised with `strict`).  Both loaders share it."""
    layers: list[tuple[str, Path]] = []
    if include_user:
        found = _is_dir(user_pattern_dir())
        if isinstance(found, OSError):
            errors.append(f"{user_pattern_dir()}: cannot read user patterns: {found.strerror or found}")
        elif found:
            layers.append(("user", user_pattern_dir()))
    layers.extend(("--patterns", Path(d)) for d in extra_dirs)
    for layer, directory in layers:
        found = _is_dir(directory)
        if found is not True:
            why = f"cannot read patterns: {found.strerror or found}" if isinstance(found, OSError) else "pattern directory not found"
            errors.append(f"{directory}: {why}")
            continue
        try:
            files = list(_directory_files(directory))
        except OSError as exc:
            errors.append(f"{directory}: cannot read patterns: {exc.strerror or exc}")
            continue
        for path, text in files:
            try:
                if isinstance(text, PatternError):
                    raise text
                data = parse_toml(text, path)
            except PatternError as exc:
                if strict:
                    raise
                errors.append(f"{exc} (pattern skipped)")
                continue
            if is_health_pattern(data) == health:
                yield layer, path, text, data


def parse_toml(text: str, path: str) -> dict[str, Any]:
    """A pattern file's TOML, or PatternError naming its line."""
    import tomllib  # here, not at the top: bundled patterns usually come parsed from pattern_cache

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib says "(at line 3, column 7)"; keep it in the location.
        m = regex.search(r"at line (\d+)", str(exc))
        raise PatternError(f"{path}:{m.group(1) if m else 1}", f"invalid TOML: {exc}") from None


def load_patterns(
    extra_dirs: Iterable[str | Path] = (),
    *,
    include_user: bool = True,
    strict: bool = False,
    known_builders: Collection[str] | None = None,
) -> PatternSet:
    """Load all layers.  Bundled patterns must be valid (strict); user ones are skipped with an error line.
    A user pattern replaces the bundled one with the same id, or whose `aliases` (former ids) hold its id.
    Health patterns (`kind = "health"`) are not failure patterns: logsleuth/health/library.py loads them."""
    bundled = _bundled_patterns(known_builders)
    patterns: dict[str, Pattern] = {pattern.id: pattern for pattern in bundled}
    former_ids = {alias: pattern.id for pattern in bundled for alias in pattern.aliases}
    errors: list[str] = []
    for layer, path, text, data in layer_files(extra_dirs, include_user, errors, health=False, strict=strict):
        try:
            pattern = parse_pattern(text, path, layer, data=data, known_builders=known_builders)
        except PatternError as exc:
            if strict:
                raise
            errors.append(f"{exc} (pattern skipped)")
            continue
        patterns.pop(former_ids.get(pattern.id, ""), None)  # an earlier pattern renamed since (its alias)
        patterns[pattern.id] = pattern  # a later pattern with the same id replaces it
        former_ids.update((alias, pattern.id) for alias in pattern.aliases)
    return PatternSet(list(patterns.values()), errors)
