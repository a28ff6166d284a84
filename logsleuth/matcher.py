"""The pattern library: one TOML file per known failure, loaded from layers.

Layers, later ones first in matching order: bundled (`logsleuth.patterns`, shipped
in the wheel), the user's `~/.config/logsleuth/patterns`, then each `--patterns DIR`.
A broken user file is reported (file and line) and skipped; one bad pattern never
breaks a run.  User regexes run with a timeout so a catastrophic one cannot hang us.
A pattern may be limited to engine `versions` (checked when `match_failure` is given
the engine version).  A `[fix] builder` must name a builder registered in
`logsleuth.fixes` (which also loads the runtime builders).
See docs/writing-patterns.md for the format.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, TypeAlias

import regex

from logsleuth import pattern_cache
from logsleuth.command import ENV_NAME
from logsleuth.errors import PatternError
from logsleuth.models import ExceptionBlock, Failure, Frame

CATEGORIES = frozenset(
    {  # keep in step with CATEGORY_HELP below
        "spec-decoding-args",
        "unknown-flag",
        "invalid-flag-value",
        "missing-flag",
        "parallel-config",
        "lora-config",
        "context-length",
        "model-path",
        "weight-loading",
        "unsupported-architecture",
        "gpu-oom",
        "kv-cache-memory",
        "cuda-graph-capture",
        "nccl",
        "gpu-arch-unsupported",
        "dependency-version",
        "illegal-memory-access",
        "port-in-use",
        "process-killed",
    }
)
# One line each: what a failure in the category means.  docs/writing-patterns.md and the
# generated docs/patterns pages use these; a new category needs a line here.
CATEGORY_HELP: dict[str, str] = {
    "spec-decoding-args": "speculative-decoding flags that do not fit together (EAGLE/EAGLE3 sizes, draft model)",
    "unknown-flag": "a flag this engine version does not have (typo, vLLM name, removed or renamed flag)",
    "invalid-flag-value": "a known flag with a value it does not accept (choice, type, switch given a value)",
    "missing-flag": "a flag the launch needs was not given (--model-path, ...)",
    "parallel-config": "tensor/pipeline/data/expert parallel sizes or node counts that do not divide or combine",
    "lora-config": "LoRA flags that contradict each other or are incomplete",
    "context-length": "--context-length beyond what the model supports",
    "model-path": "the model path or repo id cannot be found or read",
    "weight-loading": "checkpoint tensors do not match the model SGLang builds (names, quantization, tying)",
    "unsupported-architecture": "the model's architecture is not implemented in this engine version",
    "gpu-oom": "CUDA out of memory: loading weights, KV cache allocation, CUDA graph capture or serving",
    "kv-cache-memory": "too little memory left for the KV cache after the weights (not an allocation failure)",
    "cuda-graph-capture": "recording the CUDA graphs at startup failed for a reason other than memory",
    "nccl": "collective communication between GPUs or nodes failed, hung or lost its rendezvous",
    "gpu-arch-unsupported": "a kernel or library has no support for this GPU architecture (e.g. sm_120)",
    "dependency-version": "an installed package (transformers, flashinfer, sgl-kernel) does not match the engine",
    "illegal-memory-access": "a CUDA kernel accessed memory out of bounds",
    "port-in-use": "a port the server needs is held by another process",
    "process-killed": "a process died without a Python traceback (OOM killer, SIGKILL, a parent's cleanup)",
}
_ID = regex.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)+$")
_KINDS = frozenset({"traceback", "bare", "usage", "fatal", "killed"})
_FLAG_OPS = frozenset({"add", "remove", "set", "rename"})
_MATCH_KEYS = frozenset(
    {"kind", "exception_type", "message", "chain_message", "frame_file", "frame_function", "source", "log_line", "usage"}
)
_TOP_KEYS = frozenset(
    {"id", "title", "category", "priority", "engine", "versions", "cascade", "match", "root_cause", "fix", "references", "aliases"}
)
REGEX_TIMEOUT = 0.25  # seconds per search; user patterns are untrusted
BUILTIN_LAYER = "bundled"


class PatternTimeout(Exception):
    pass


class LazyRegex:
    """A bundled pattern's regular expression, compiled on first use.

    Compiling all ~140 bundled regexes costs ~40 ms of every run, yet for a given failure most patterns stop
    at their first condition (kind or exception type).  Bundled regexes are checked by the test suite
    (tests/patterns/test_loader.py compiles them all); user patterns are compiled at load, so that a broken
    one is reported with its file and line.
    """

    __slots__ = ("pattern", "flags", "_compiled")

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: regex.Pattern[str] | None = None

    def compiled(self) -> regex.Pattern[str]:
        if self._compiled is None:
            self._compiled = regex.compile(self.pattern, self.flags)
        return self._compiled

    def search(self, text: str, *, timeout: float | None = None) -> regex.Match[str] | None:
        return self.compiled().search(text, timeout=timeout)

    def fullmatch(self, text: str, *, timeout: float | None = None) -> regex.Match[str] | None:
        return self.compiled().fullmatch(text, timeout=timeout)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LazyRegex) and (self.pattern, self.flags) == (other.pattern, other.flags)

    def __hash__(self) -> int:
        return hash((self.pattern, self.flags))

    def __repr__(self) -> str:
        return f"LazyRegex({self.pattern!r})"


Regex: TypeAlias = regex.Pattern[str] | LazyRegex


@dataclass(frozen=True)
class MatchRule:
    """All given conditions must hold.  Frame conditions must hold on the same frame."""

    kind: frozenset[str] = frozenset()
    exception_type: Regex | None = None
    message: Regex | None = None
    chain_message: Regex | None = None
    frame_file: Regex | None = None
    frame_function: Regex | None = None
    source: Regex | None = None
    log_line: Regex | None = None
    usage: Regex | None = None

    def regexes(self) -> list[Regex]:
        fields = (self.exception_type, self.message, self.chain_message, self.frame_file, self.frame_function)
        return [r for r in (*fields, self.source, self.log_line, self.usage) if r is not None]


@dataclass(frozen=True)
class Pattern:
    id: str
    title: str
    category: str
    root_cause: str
    rules: tuple[MatchRule, ...]
    fix: dict[str, Any] = field(default_factory=dict)
    priority: int = 1000  # lower wins when two patterns match the same failure
    engine: str | None = None
    versions: tuple[str, ...] = ()
    cascade: bool = False
    references: tuple[str, ...] = ()
    path: str = ""
    layer: str = BUILTIN_LAYER


@dataclass(frozen=True)
class PatternMatch:
    pattern: Pattern
    captures: dict[str, str]


def _search(pattern: Regex, text: str) -> regex.Match[str] | None:
    try:
        return pattern.search(text, timeout=REGEX_TIMEOUT)
    except TimeoutError as exc:
        raise PatternTimeout(pattern.pattern) from exc


def _fullmatch(pattern: Regex, text: str) -> regex.Match[str] | None:
    try:
        return pattern.fullmatch(text, timeout=REGEX_TIMEOUT)
    except TimeoutError as exc:
        raise PatternTimeout(pattern.pattern) from exc


def _short_type(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _frame_matches(rule: MatchRule, frame: Frame, captures: dict[str, str]) -> bool:
    checks = ((rule.frame_file, frame.file), (rule.frame_function, frame.function or ""), (rule.source, frame.source or ""))
    found: dict[str, str] = {}
    for pattern, text in checks:
        if pattern is None:
            continue
        m = _search(pattern, text)
        if m is None:
            return False
        found.update({k: v for k, v in m.groupdict().items() if v is not None})
    captures.update(found)
    return True


def _rule_matches(rule: MatchRule, failure: Failure, log_lines: Iterable[str]) -> dict[str, str] | None:
    final: ExceptionBlock = failure.final
    captures: dict[str, str] = {}
    if rule.kind and failure.kind not in rule.kind:
        return None
    if rule.exception_type is not None:
        if not any(_fullmatch(rule.exception_type, name) for name in (final.type, _short_type(final.type))):
            return None
    if rule.usage is not None:
        if failure.kind != "usage":
            return None
        m = _search(rule.usage, final.message)
        if m is None:
            return None
        captures.update({k: v for k, v in m.groupdict().items() if v is not None})
    if rule.message is not None:
        m = _search(rule.message, final.message)
        if m is None:
            return None
        captures.update({k: v for k, v in m.groupdict().items() if v is not None})
    if rule.chain_message is not None:
        for block in failure.exceptions:
            m = _search(rule.chain_message, f"{block.type}: {block.message}")
            if m is not None:
                captures.update({k: v for k, v in m.groupdict().items() if v is not None})
                break
        else:
            return None
    if rule.frame_file or rule.frame_function or rule.source:
        if not any(_frame_matches(rule, frame, captures) for frame in reversed(final.frames)):
            return None
    if rule.log_line is not None:
        for text in (*failure.context, *log_lines):
            m = _search(rule.log_line, text)
            if m is not None:
                captures.update({k: v for k, v in m.groupdict().items() if v is not None})
                break
        else:
            return None
    return captures


_VERSION_PART = regex.compile(r"\d+|[a-z]+")
_CONSTRAINT = regex.compile(r"^\s*(?P<op><=|>=|==|!=|<|>)?\s*(?P<version>\d+(?:\.\d+)*(?:\.?(?:post|rc|dev)\d+)?)\s*$")
_PRE_RELEASE = {"dev": -3, "rc": -2}


def version_key(version: str) -> tuple[int, ...]:
    """`0.4.10.post2` -> (0, 4, 10, 0, 2); `0.5.0rc1` sorts before `0.5.0`."""
    key: list[int] = []
    for part in _VERSION_PART.findall(version.lower()):
        if part.isdigit():
            key.append(int(part))
        elif part == "post":
            key.append(0)
        else:
            key.append(_PRE_RELEASE.get(part, -1))
    while len(key) < 3:
        key.append(0)
    return tuple(key)


def _check_constraint(constraint: str, version: str) -> bool:
    m = _CONSTRAINT.match(constraint)
    if m is None:
        return False
    have, want = version_key(version), version_key(m["version"])
    width = max(len(have), len(want))
    have += (0,) * (width - len(have))
    want += (0,) * (width - len(want))
    op = m["op"] or "=="
    return {
        "<": have < want,
        "<=": have <= want,
        ">": have > want,
        ">=": have >= want,
        "==": have == want,
        "!=": have != want,
    }[op]


def version_matches(versions: tuple[str, ...], version: str | None) -> bool:
    """`versions` entries are ORed; within one, comma-separated constraints are ANDed:
    `["<0.5.23"]`, `[">=0.5,<0.5.23", "0.4.10.post2"]`.  An unknown version matches."""
    if not versions or not version:
        return True
    return any(all(_check_constraint(c, version) for c in entry.split(",")) for entry in versions)


def match_failure(
    patterns: Iterable[Pattern],
    failure: Failure,
    log_lines: Iterable[str] = (),
    *,
    engine: str | None = None,
    engine_version: str | None = None,
    on_error: Any = None,
    disabled: set[str] | None = None,
) -> PatternMatch | None:
    """The best pattern for a failure: lowest priority number, then the last layer loaded.

    A pattern with `versions` is skipped when the engine version is known and outside them.  A pattern whose
    regex times out is reported once through `on_error` and added to `disabled`, which later calls skip: one
    catastrophic user regex costs REGEX_TIMEOUT once per run, not once per failure."""
    best: PatternMatch | None = None
    lines = tuple(log_lines)
    for pattern in patterns:
        if disabled is not None and pattern.id in disabled:
            continue
        if engine and pattern.engine and pattern.engine != engine:
            continue
        if not version_matches(pattern.versions, engine_version):
            continue
        try:
            for rule in pattern.rules:
                captures = _rule_matches(rule, failure, lines)
                if captures is not None:
                    if best is None or pattern.priority <= best.pattern.priority:
                        best = PatternMatch(pattern, captures)
                    break
        except PatternTimeout as exc:
            if disabled is not None:
                disabled.add(pattern.id)
            if on_error is not None:
                on_error(
                    f"pattern {pattern.id} ({pattern.path}): regex timed out; the pattern is disabled for this run: {exc}"
                )
    return best


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


def _known_builder(name: str) -> bool:
    from logsleuth import fixes

    return fixes.has_builder(name)


_FIX_KEYS = frozenset({"summary", "flags", "env", "steps", "alternatives", "builder"})


def _check_fix(fix: Any, at: _Locate) -> dict[str, Any]:
    if not isinstance(fix, dict):
        raise PatternError(at("[fix]"), "[fix] must be a table")
    name = fix.get("builder")
    if name is not None:
        if not isinstance(name, str) or not _known_builder(name):
            raise PatternError(at("builder"), f"fix.builder {name!r} is not a known fix builder")
        return fix  # a builder takes its own keys
    unknown = set(fix) - _FIX_KEYS
    if unknown:
        raise PatternError(at(sorted(unknown)[0]), f"unknown fix key(s): {', '.join(sorted(unknown))}")
    for option in (fix, *fix.get("alternatives", [])):
        if not isinstance(option, dict):
            raise PatternError(at("alternatives"), "fix.alternatives must be tables")
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


def _line_of(text: str, needle: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.lstrip()
        if stripped.startswith(needle) and (needle.startswith("[") or stripped[len(needle) :].lstrip().startswith("=")):
            return number
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith(needle):
            return number
    return 1


def parse_pattern(text: str, path: str, layer: str = BUILTIN_LAYER, *, data: dict[str, Any] | None = None) -> Pattern:
    """A pattern from its TOML text (`data`: that text already parsed, e.g. by pattern_cache)."""
    if data is None:
        import tomllib  # here, not at the top: bundled patterns usually come parsed from pattern_cache

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            # tomllib says "(at line 3, column 7)"; keep it in the location.
            m = regex.search(r"at line (\d+)", str(exc))
            raise PatternError(f"{path}:{m.group(1) if m else 1}", f"invalid TOML: {exc}") from None
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
        if not all(_CONSTRAINT.match(c) for c in entry.split(",")):
            raise PatternError(at("versions"), f"versions: cannot read {entry!r} (use e.g. \"<0.5.23\" or \">=0.5,<0.6\")")
    if not isinstance(data.get("cascade", False), bool):
        raise PatternError(at("cascade"), "cascade must be true or false")
    if "engine" in data and not isinstance(data["engine"], str):
        raise PatternError(at("engine"), "engine must be a string such as \"sglang\"")
    return Pattern(
        id=data["id"],
        title=str(data["title"]),
        category=data["category"],
        root_cause=str(data["root_cause"]).strip(),
        rules=rules,
        fix=_check_fix(data["fix"], at) if data.get("fix") else {},
        priority=priority,
        engine=data.get("engine"),
        versions=tuple(data.get("versions", ())),
        cascade=bool(data.get("cascade", False)),
        references=tuple(data.get("references", ())),
        path=where,
        layer=layer,
    )


def _bundled_files() -> Iterator[tuple[str, str]]:
    root = resources.files("logsleuth.patterns")
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
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "logsleuth" / "patterns"


def _is_dir(path: Path) -> bool | OSError:
    """Path.is_dir() raises on a parent the user cannot search (an unreadable ~/.config): say so instead."""
    try:
        return path.is_dir()
    except OSError as exc:
        return exc


@dataclass
class PatternSet:
    patterns: list[Pattern]
    errors: list[str]
    _uncompiled: Iterator[LazyRegex] | None = field(default=None, repr=False, compare=False)

    def compile_next(self) -> bool:
        """Compile one more lazy regex; False when none is left.  For time spent waiting anyway (the SSH
        helper connecting): whatever this compiles, matching does not have to."""
        if self._uncompiled is None:
            self._uncompiled = (
                expression
                for pattern in self.patterns
                for rule in pattern.rules
                for expression in rule.regexes()
                if isinstance(expression, LazyRegex)
            )
        for expression in self._uncompiled:
            expression.compiled()
            return True
        return False


def _bundled_patterns() -> list[Pattern]:
    """The bundled layer, parsed from the cache when it holds these files.  A cache that parses as JSON but
    not as patterns (written by another version, edited by hand) is ignored: the TOML is the truth."""
    bundled = list(_bundled_files())
    try:
        return [
            parse_pattern(text, path, data=data)
            for (path, text), data in zip(bundled, pattern_cache.parsed_files(bundled), strict=True)
        ]
    except (PatternError, KeyError, TypeError, AttributeError, ValueError):
        # A broken bundled pattern is our bug (the tests parse every one strictly); this re-raises it then.
        return [
            parse_pattern(text, path, data=data)
            for (path, text), data in zip(bundled, pattern_cache.parsed_files(bundled, use_cache=False), strict=True)
        ]


def load_patterns(extra_dirs: Iterable[str | Path] = (), *, include_user: bool = True, strict: bool = False) -> PatternSet:
    """Load all layers.  Bundled patterns must be valid (strict); user ones are skipped with an error line."""
    patterns: dict[str, Pattern] = {pattern.id: pattern for pattern in _bundled_patterns()}
    errors: list[str] = []
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
            if isinstance(text, PatternError):
                if strict:
                    raise text
                errors.append(f"{text} (pattern skipped)")
                continue
            try:
                pattern = parse_pattern(text, path, layer)
            except PatternError as exc:
                if strict:
                    raise
                errors.append(f"{exc} (pattern skipped)")
                continue
            patterns[pattern.id] = pattern  # a user pattern with a bundled id replaces it
    return PatternSet(list(patterns.values()), errors)

