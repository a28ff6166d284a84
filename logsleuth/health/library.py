"""Health patterns: what a running server's steady-state lines can say is wrong, as data.

A health pattern is a pattern file with `kind = "health"` in the same library and layers as the failure
patterns (bundled, `~/.config/logsleuth/patterns`, `--patterns DIR`).  Its `[[detect]]` tables say which
signal shows it and its thresholds; its `[[cause]]` tables list the likely causes in order, each with
conditions on the launch that make it likelier or rule it out.  See docs/health.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import regex

from logsleuth import toml_cache as cache
from logsleuth import versions
from logsleuth.diagnosis.library import bundled_files, is_health_pattern, layer_files
from logsleuth.diagnosis.schema import CATEGORIES, LazyRegex
from logsleuth.errors import PatternError
from logsleuth.lazyre import compile_lazily_regex

# Signals a [[detect]] table can name, and the keys each one takes (besides `signal`).
SIGNALS: dict[str, frozenset[str]] = {
    # a log line matching `line` (regex), at least `min_count` times (within `within_seconds`, when given);
    # `literal`: text every such line holds, searched for in the whole log (not only the lines read)
    "lines": frozenset({"line", "literal", "min_count", "within_seconds"}),
    # a batch metric at or below `at_most` over `min_batches` batches in a row
    "low": frozenset({"metric", "at_most", "min_batches", "batch"}),
    # a batch metric that climbs by `min_increase` over `min_batches` batches or more, never falling more than
    # `tolerance` (a fraction, default 0.05) below its highest value on the way
    "growth": frozenset({"metric", "min_batches", "min_increase", "tolerance", "batch"}),
    # a batch metric whose median over `window_batches` falls to `ratio` of its median over the run's first
    # `baseline_batches`, while the load (`load_metric`) stays at `load_ratio` of its own baseline or more
    "collapse": frozenset(
        {"metric", "baseline_batches", "window_batches", "ratio", "load_metric", "load_ratio", "batch"}
    ),
    # a boolean batch metric false in `min_fraction` of the batches, over `min_batches` batches or more
    # (`load_metric`: a batch whose load is above any seen with the metric true is left out)
    "false": frozenset({"metric", "min_fraction", "min_batches", "load_metric", "batch"}),
    # a count metric (vLLM's preemptions per stats line) adding up to `min_total` within `within_seconds`
    "total": frozenset({"metric", "min_total", "within_seconds", "batch"}),
}
METRICS = frozenset(
    {
        "running_requests", "queue_requests", "token_usage", "throughput", "accept_length", "accept_rate",
        "cuda_graph", "preemptions",
    }
)
_TOP_KEYS = frozenset(
    {
        "id", "kind", "title", "category", "engine", "versions", "root_cause", "references", "priority", "detect", "cause",
        "explained_by",
    }
)
_CAUSE_KEYS = frozenset({"id", "text", "fix", "when", "fixed_in"})
_WHEN_KEYS = frozenset({"versions", "flags", "absent_flags", "log_line", "after_healthy_start"})
_ID = compile_lazily_regex(r"^[a-z0-9]+(?:-[a-z0-9]+)+$")


@dataclass(frozen=True)
class Detect:
    """One `[[detect]]` signal of a health pattern, with its thresholds."""
    signal: str
    params: dict[str, Any]
    # `lines`: the line's regex; a line without the literal text every match holds is passed over uncompiled
    line: LazyRegex | None = None

    def number(self, key: str, default: float) -> float:
        return float(self.params.get(key, default))


@dataclass(frozen=True)
class Condition:
    """All of it must hold for the cause to be likely; any part the launch contradicts rules the cause out.
    `flags`: flag -> regex its value must match (a flag the launch does not show is unknown, not false)."""

    versions: tuple[str, ...] = ()
    flags: tuple[tuple[str, LazyRegex], ...] = ()
    absent_flags: tuple[str, ...] = ()  # flags the launch must not set
    log_line: LazyRegex | None = None  # a line the log read holds (absent: unknown, it may be unread)
    # true: the signal followed a healthy stretch of the same run (a drop mid-run); false: a drop rules it out
    after_healthy_start: bool | None = None


@dataclass(frozen=True)
class CauseRule:
    """One `[[cause]]` of a health pattern: its text, fix and conditions."""
    id: str
    text: str
    fix: str
    when: tuple[Condition, ...] = ()  # any of them: likely; all contradicted: ruled out; none: possible
    fixed_in: str | None = None  # the engine release that no longer has this cause


@dataclass(frozen=True)
class HealthPattern:
    """A health pattern file, read."""
    id: str
    title: str
    category: str
    root_cause: str
    detects: tuple[Detect, ...]  # any of them shows the finding
    causes: tuple[CauseRule, ...]
    engine: str | None = None
    versions: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    priority: int = 1000  # lower is shown first
    # Patterns whose finding explains this one (a collapse of throughput when speculation stopped working):
    # when one of them is found too, this one is told within it instead of as a finding of its own.
    explained_by: tuple[str, ...] = ()
    path: str = ""

    def literals(self) -> tuple[str, ...]:
        return tuple(d.params["literal"] for d in self.detects if d.signal == "lines" and "literal" in d.params)


@dataclass(frozen=True)
class HealthPatternSet:
    """Every health pattern loaded, and the files that could not be read."""
    patterns: tuple[HealthPattern, ...]
    errors: tuple[str, ...]


def _regex(value: Any, at: str, key: str, check: bool) -> LazyRegex:
    """A pattern file's regex, compiled on first use; `check`: compile it now, so that a broken one in a
    user's file is named at load (the bundled ones are compiled by tests/health)."""
    if not isinstance(value, str) or not value:
        raise PatternError(at, f"{key} must be a non-empty regular expression")
    if check:
        try:
            regex.compile(value)
        except regex.error as exc:
            raise PatternError(at, f"{key}: invalid regular expression: {exc}") from None
    return LazyRegex(value, 0)


def _detect(table: Any, at: str, check: bool) -> Detect:
    if not isinstance(table, dict) or table.get("signal") not in SIGNALS:
        raise PatternError(at, f"each [[detect]] needs signal = one of {', '.join(sorted(SIGNALS))}")
    signal = table["signal"]
    params = {key: value for key, value in table.items() if key != "signal"}
    unknown = set(params) - SIGNALS[signal]
    if unknown:
        raise PatternError(at, f"[[detect]] signal {signal!r} takes no {', '.join(sorted(unknown))}")
    for key, value in params.items():
        if key in ("line", "literal", "metric", "load_metric", "batch"):
            if not isinstance(value, str) or not value:
                raise PatternError(at, f"[[detect]] {key} must be a non-empty string")
        elif not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
            raise PatternError(at, f"[[detect]] {key} must be a number >= 0 (a threshold)")
    for key in ("metric", "load_metric"):
        if key in params and params[key] not in METRICS:
            raise PatternError(at, f"[[detect]] {key} must be one of {', '.join(sorted(METRICS))}")
    if params.get("batch", "decode") not in ("decode", "prefill"):
        raise PatternError(at, "[[detect]] batch must be \"decode\" or \"prefill\"")
    if signal == "lines":
        if "line" not in params:
            raise PatternError(at, "[[detect]] signal \"lines\" needs line = a regular expression")
        return Detect(signal, params, _regex(params["line"], at, "line", check))
    if "metric" not in params:
        raise PatternError(at, f"[[detect]] signal {signal!r} needs metric = one of {', '.join(sorted(METRICS))}")
    return Detect(signal, params)


def _condition(table: Any, at: str, check: bool) -> Condition:
    if not isinstance(table, dict) or set(table) - _WHEN_KEYS:
        raise PatternError(at, f"[[cause.when]] keys are {', '.join(sorted(_WHEN_KEYS))}")
    constraints = table.get("versions", [])
    if not isinstance(constraints, list) or not all(
        isinstance(c, str) and all(versions.is_valid_constraint(part) for part in c.split(",")) for c in constraints
    ):
        raise PatternError(at, "[[cause.when]] versions must be a list such as [\"<0.5.10\"]")
    flags = table.get("flags", {})
    if not isinstance(flags, dict) or not all(isinstance(k, str) and k.startswith("--") for k in flags):
        raise PatternError(at, "[[cause.when]] flags must map --flag names to regular expressions")
    after = table.get("after_healthy_start")
    if after is not None and not isinstance(after, bool):
        raise PatternError(at, "[[cause.when]] after_healthy_start must be true or false")
    absent = table.get("absent_flags", [])
    if not isinstance(absent, list) or not all(isinstance(f, str) and f.startswith("--") for f in absent):
        raise PatternError(at, "[[cause.when]] absent_flags must be a list of --flag names")
    return Condition(
        versions=tuple(constraints),
        flags=tuple((flag, _regex(value, at, f"flags.{flag}", check)) for flag, value in flags.items()),
        absent_flags=tuple(absent),
        log_line=_regex(table["log_line"], at, "log_line", check) if "log_line" in table else None,
        after_healthy_start=after,
    )


def _cause(table: Any, at: str, check: bool) -> CauseRule:
    if not isinstance(table, dict) or set(table) - _CAUSE_KEYS:
        raise PatternError(at, f"[[cause]] keys are {', '.join(sorted(_CAUSE_KEYS))}")
    for key in ("id", "text", "fix"):
        if not isinstance(table.get(key), str) or not table[key].strip():
            raise PatternError(at, f"[[cause]] needs {key} = a non-empty string")
    fixed_in = table.get("fixed_in")
    if fixed_in is not None and (not isinstance(fixed_in, str) or versions.version_key(fixed_in) is None):
        raise PatternError(at, f"[[cause]] fixed_in must be an engine version, not {fixed_in!r}")
    when = table.get("when", [])
    when = [when] if isinstance(when, dict) else when
    if not isinstance(when, list):
        raise PatternError(at, "[[cause.when]] must be tables")
    return CauseRule(
        id=table["id"],
        text=" ".join(table["text"].split()),
        fix=" ".join(table["fix"].split()),
        when=tuple(_condition(condition, at, check) for condition in when),
        fixed_in=fixed_in,
    )


def parse_health_pattern(data: dict[str, Any], path: str, *, check: bool = True) -> HealthPattern:
    """A health pattern from its parsed TOML; PatternError names the file for anything wrong in it.
    `check`: compile its regexes now (False for the bundled ones, which the tests compile)."""
    at = f"{path}:1"
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise PatternError(at, f"unknown key(s): {', '.join(sorted(unknown))} (known: {', '.join(sorted(_TOP_KEYS))})")
    for key in ("id", "title", "category", "root_cause", "detect", "cause"):
        if key not in data:
            raise PatternError(at, f"missing required key '{key}'")
    if not isinstance(data["id"], str) or not _ID.match(data["id"]):
        raise PatternError(at, "id must be lowercase words joined by dashes, e.g. sglang-health-queue-growth")
    if data["category"] not in CATEGORIES:
        raise PatternError(at, f"unknown category {data['category']!r} (known: {', '.join(sorted(CATEGORIES))})")
    for key in ("title", "root_cause"):
        if not isinstance(data[key], str) or not data[key].strip():
            raise PatternError(at, f"{key} must be a non-empty string")
    detects, causes = data["detect"], data["cause"]
    if not isinstance(detects, list) or not detects or not isinstance(causes, list) or not causes:
        raise PatternError(at, "a health pattern needs at least one [[detect]] and one [[cause]]")
    for key in ("versions", "references", "explained_by"):
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise PatternError(at, f"{key} must be a list of strings")
    priority = data.get("priority", 1000)
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise PatternError(at, "priority must be an integer (lower is shown first)")
    return HealthPattern(
        id=data["id"],
        title=data["title"].strip(),
        category=data["category"],
        root_cause=" ".join(data["root_cause"].split()),
        detects=tuple(_detect(table, at, check) for table in detects),
        causes=tuple(_cause(table, at, check) for table in causes),
        engine=data.get("engine"),
        versions=tuple(data.get("versions", ())),
        references=tuple(data.get("references", ())),
        priority=priority,
        explained_by=tuple(data.get("explained_by", ())),
        path=path,
    )


def load_health_patterns(extra_dirs: Iterable[str | Path] = (), *, include_user: bool = True) -> HealthPatternSet:
    """The health patterns of every layer; a broken user file is an error line, and the others still load.
    A later layer's pattern replaces an earlier one with the same id."""
    bundled = list(bundled_files())
    patterns: dict[str, HealthPattern] = {}
    for (path, _text), data in zip(bundled, cache.parsed_files(bundled), strict=True):
        if is_health_pattern(data):
            patterns[data["id"]] = parse_health_pattern(data, path, check=False)
    errors: list[str] = []
    for _layer, path, _text, data in layer_files(extra_dirs, include_user, errors, health=True):
        try:
            pattern = parse_health_pattern(data, path)
        except PatternError as exc:
            errors.append(f"{exc} (pattern skipped)")
            continue
        patterns[pattern.id] = pattern
    ordered = sorted(patterns.values(), key=lambda pattern: (pattern.priority, pattern.id))
    return HealthPatternSet(tuple(ordered), tuple(errors))

