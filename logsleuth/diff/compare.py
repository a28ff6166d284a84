"""Two launches to a `DiffReport`: what changed, section by section, with what does not matter folded away.

Folded away, on purpose:
- a flag given its release's default (on either side), and a flag both launches set to the same value;
- a fact only one side's log reports (0.5.23 prints no dtype on its "Load weight end" line, no "Init torch
  distributed" stage): a release that logs less has not changed anything;
- a stage that took about as long on both sides: a change is shown when the slower side took at least
  STAGE_CHANGE_RATIO times as long and at least STAGE_CHANGE_SECONDS more;
- memory within MEMORY_CHANGE_GB or MEMORY_CHANGE_RATIO of the other side.
"""

from __future__ import annotations

from datetime import datetime

from logsleuth.diff.extract import Launch
from logsleuth.diff.flags import MODEL_FIELDS, FlagValue, catalog_for, in_other_release, launch_flags
from logsleuth.diff.model import Change, ChangeKind, FailureSummary, Section
from logsleuth.ingest.launch import parse_server_args
from logsleuth.ingest.stages import STAGES
from logsleuth.redact import REDACTED, redact_secrets, secret_by_name
from logsleuth.render.safety import clean

STAGE_CHANGE_RATIO = 1.5  # the slower side took at least this many times as long ...
STAGE_CHANGE_SECONDS = 30.0  # ... and at least this many seconds more
MEMORY_CHANGE_GB = 2.0  # memory figures closer than this ...
MEMORY_CHANGE_RATIO = 0.10  # ... or within this fraction of the larger are the same
VALUE_CHARS = 200  # of one value shown

_STAGE_LABELS = {stage.key: stage.label for stage in STAGES}
_STAGE_ORDER = {stage.key: index for index, stage in enumerate(STAGES)}
# Facts of the model section read from server_args, as (field, label).
_MODEL_ARGS = (("model_path", "model path"), ("quantization", "quantization"), ("kv_cache_dtype", "KV cache dtype"))


def secret_free(name: str, value: str | None) -> str | None:
    """A value as shown: a secret's by its name is REDACTED whole (`OPENAI_API_KEY='two words'`); one that holds
    a secret by its look (a URL's password, a token) shows what is left of it."""
    if value is None:
        return None
    if secret_by_name(name, value):
        return REDACTED
    return clean(redact_secrets(value), VALUE_CHARS)


def _is_secret(name: str, value: str | None) -> bool:
    return value is not None and secret_free(name, value) != clean(value, VALUE_CHARS)


def _pair_change(section: Section, name: str, good: str | None, bad: str | None, **extra: str) -> Change | None:
    if good == bad:
        return None
    kind: ChangeKind = "added" if good is None else "removed" if bad is None else "changed"
    shown_good, shown_bad = secret_free(name, good), secret_free(name, bad)
    note = extra.pop("note", "")
    if _is_secret(name, good) or _is_secret(name, bad):
        note = note or "a secret: the values are not shown"
    return Change(section, kind, clean(name), shown_good, shown_bad, note=note, **extra)


# -- engine version ---------------------------------------------------------------------------------------


def version_of(launch: Launch) -> str | None:
    return launch.version or launch.version_hint


def version_changes(good: Launch, bad: Launch) -> list[Change]:
    old, new = version_of(good), version_of(bad)
    if old is None or new is None:
        return []
    change = _pair_change("version", "engine", f"{good.engine or 'sglang'} {old}", f"{bad.engine or 'sglang'} {new}")
    return [change] if change else []


# -- flags ------------------------------------------------------------------------------------------------


def flag_changes(good: Launch, bad: Launch) -> list[Change]:
    good_catalog, bad_catalog = catalog_for(version_of(good)), catalog_for(version_of(bad))
    good_flags = {in_other_release(flag, good_catalog, bad_catalog): value
                  for flag, value in launch_flags(good.command, good.server_args, good_catalog).items()}
    bad_flags = {in_other_release(flag, bad_catalog, bad_catalog): value
                 for flag, value in launch_flags(bad.command, bad.server_args, bad_catalog).items()}
    changes: list[Change] = []
    for key in [*good_flags, *(key for key in bad_flags if key not in good_flags)]:
        old, new = good_flags.get(key), bad_flags.get(key)
        field = (old or new).field  # type: ignore[union-attr]  # one of them is there: the key came from it
        if field is not None and field in MODEL_FIELDS:
            continue
        change = _flag_change(old, new)
        if change is not None:
            changes.append(change)
    return changes


def _flag_change(old: FlagValue | None, new: FlagValue | None) -> Change | None:
    if old is not None and new is not None and old.field and new.field and old.field != new.field:
        name = new.flag
        secret = _is_secret(name, old.value) or _is_secret(name, new.value)
        return Change("flags", "renamed", clean(old.flag), secret_free(name, old.value), secret_free(name, new.value),
                      new_name=clean(new.flag),
                      note=f"ServerArgs field {old.field} is {new.field} in the newer release"
                      + ("; the value changed too" if old.raw != new.raw else "")
                      + ("; a secret: the values are not shown" if secret else ""))
    if old is not None and new is not None and old.raw == new.raw:
        return None
    name = (new or old).flag  # type: ignore[union-attr]
    return _pair_change("flags", name, old.value if old else None, new.value if new else None)


# -- environment ------------------------------------------------------------------------------------------


def env_of(launch: Launch) -> dict[str, tuple[str, str]]:
    """The variables the log reveals: export and env lines, the engine's own, and those before the command."""
    from logsleuth.check.words import parse_command_text

    found = dict(launch.env)
    if launch.command is not None:
        for name, value in parse_command_text(launch.command).env:
            found[name] = (value, "on the command line")
    return found


def env_changes(good: Launch, bad: Launch) -> list[Change]:
    old, new = env_of(good), env_of(bad)
    changes = []
    for name in [*old, *(name for name in new if name not in old)]:
        before, after = old.get(name), new.get(name)
        change = _pair_change("env", name, before[0] if before else None, after[0] if after else None)
        if change is not None:
            changes.append(change)
    return changes


# -- the model --------------------------------------------------------------------------------------------


def model_facts(launch: Launch) -> dict[str, str]:
    facts: dict[str, str] = {}
    dump = dict(parse_server_args(launch.server_args)) if launch.server_args else {}
    for field, label in _MODEL_ARGS:
        if field in dump:
            value = dump[field].strip("'\"")
            if value not in ("None", "auto") or field == "model_path":
                facts[label] = value
    if "model path" not in facts and launch.command is not None:
        from logsleuth.check.words import parse_command_text

        args = list(parse_command_text(launch.command).args)
        for flag in ("--model-path", "--model"):
            if flag in args[:-1]:
                facts["model path"] = args[args.index(flag) + 1]
    facts.update(launch.model)
    return facts


def _both_report(good: dict[str, str], bad: dict[str, str]) -> list[str]:
    return [name for name in good if name in bad]


def model_changes(good: Launch, bad: Launch) -> list[Change]:
    old, new = model_facts(good), model_facts(bad)
    return [change for name in _both_report(old, new) if (change := _pair_change("model", name, old[name], new[name]))]


# -- GPUs and memory --------------------------------------------------------------------------------------


def _gpus(launch: Launch) -> dict[str, str]:
    facts: dict[str, str] = {}
    dump = dict(parse_server_args(launch.server_args)) if launch.server_args else {}
    for field, label in (("tp_size", "TP size"), ("pp_size", "PP size"), ("dp_size", "DP size")):
        if dump.get(field, "1") not in ("1", "None"):
            facts[label] = dump[field]
    if launch.ranks:
        facts["ranks logging"] = str(len(launch.ranks))
    return facts


def _gigabytes(text: str) -> float | None:
    try:
        return float(text.split()[0])
    except (ValueError, IndexError):
        return None


def _memory_differs(old: str, new: str) -> bool:
    before, after = _gigabytes(old), _gigabytes(new)
    if before is None or after is None:
        return old != new
    return abs(after - before) >= MEMORY_CHANGE_GB and abs(after - before) >= MEMORY_CHANGE_RATIO * max(before, after)


def gpu_changes(good: Launch, bad: Launch) -> list[Change]:
    old, new = _gpus(good), _gpus(bad)
    changes = []
    for name in [*old, *(name for name in new if name not in old)]:
        if name == "ranks logging" and not (name in old and name in new):
            continue  # a log without rank tags says nothing about how many GPUs wrote it
        change = _pair_change("gpu", name, old.get(name, "1"), new.get(name, "1"))
        if change is not None:
            changes.append(change)
    for name in _both_report(good.memory, bad.memory):
        if _memory_differs(good.memory[name], bad.memory[name]):
            changes.append(Change("gpu", "changed", f"memory: {name}", good.memory[name], bad.memory[name]))
    return changes


# -- stages -----------------------------------------------------------------------------------------------


def _spans(launch: Launch, keys: list[str]) -> dict[tuple[str, str], float]:
    """Seconds between consecutive stages among `keys` (the stages both launches logged)."""
    spans: dict[tuple[str, str], float] = {}
    for first, then in zip(keys, keys[1:], strict=False):
        start, end = launch.stage_times.get(first), launch.stage_times.get(then)
        if isinstance(start, datetime) and isinstance(end, datetime):
            spans[(first, then)] = (end - start).total_seconds()
    return spans


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value < 120 else f"{value / 60:.1f} min"


def stage_changes(good: Launch, bad: Launch) -> list[Change]:
    changes = []
    common = sorted(set(good.stages) & set(bad.stages), key=_STAGE_ORDER.__getitem__)
    old, new = _spans(good, common), _spans(bad, common)
    for span in old.keys() & new.keys():
        before, after = old[span], new[span]
        slower, faster = max(before, after), min(before, after)
        if slower - faster >= STAGE_CHANGE_SECONDS and slower >= STAGE_CHANGE_RATIO * max(faster, 1.0):
            name = f"{_STAGE_LABELS[span[0]]} → {_STAGE_LABELS[span[1]]}"
            changes.append(Change("stages", "slower" if after > before else "faster", name, _seconds(before),
                                  _seconds(after)))
    changes.sort(key=lambda change: _STAGE_ORDER[next(k for k, label in _STAGE_LABELS.items()
                                                       if change.name.startswith(label))])
    diverged = first_divergence(good, bad)
    return ([diverged] if diverged else []) + changes


def furthest(launch: Launch) -> str | None:
    return max(launch.stages, key=_STAGE_ORDER.__getitem__, default=None)


def first_divergence(good: Launch, bad: Launch) -> Change | None:
    """The first stage one launch reached beyond the furthest the other reached."""
    old, new = furthest(good), furthest(bad)
    if old == new:
        return None
    ahead, behind = (good, new) if _rank(old) > _rank(new) else (bad, old)
    beyond = [key for key in ahead.stages if _rank(key) > _rank(behind)]
    stage = min(beyond, key=_STAGE_ORDER.__getitem__)
    reached, stopped = "reached", f"stopped after {_STAGE_LABELS[behind]}" if behind else "logged no stage"
    good_text, bad_text = (reached, stopped) if ahead is good else (stopped, reached)
    return Change("stages", "diverged", _STAGE_LABELS[stage], good_text, bad_text,
                  note="the first stage only one launch reached")


def _rank(key: str | None) -> int:
    return -1 if key is None else _STAGE_ORDER[key]


# -- the failure ------------------------------------------------------------------------------------------


def failure_changes(good: FailureSummary | None, bad: FailureSummary | None) -> list[Change]:
    def named(failure: FailureSummary | None) -> str | None:
        if failure is None:
            return None
        return f"{failure.title} ({failure.pattern})" if failure.pattern else failure.title

    old, new = named(good), named(bad)
    if old == new:
        return []
    kind: ChangeKind = "added" if old is None else "removed" if new is None else "changed"
    cause = (bad or good).cause  # type: ignore[union-attr]
    return [Change("failure", kind, "failure", old, new, note=cause)]
