"""The optional feature whose code failed, when the launch turned it on (issue 28, stop 46).

A check that fails in the code of a feature the user turned on (speculative decoding, LoRA, SGLang's hierarchical KV
cache, DP attention, prefill-decode disaggregation, a KV connector, an environment switch such as VLLM_USE_DEEP_GEMM=1)
is first a question of that feature: a launch without it tells whether the feature is at fault, and a release that
lifts the feature's limit is the fix when it is.  The general checks of the category (a quantization method, the GPU's
architecture, the network) come after.  The feature is read from facts: the failure's frames' module paths, or, when
the paste shows no frame of the engine, the module the engine's code raises its message from (the raise site index,
facts/engine_messages.py raising_modules); the table facts/feature_code.toml maps those modules to the settings that
turn the feature on, each row with the engine's code that gates it.  Only settings the launch itself shows on: its
command's flags (not a `--no-…`), its settings dump's switches, the engine's environment variables set before the
command or exported in the log.
"""

from __future__ import annotations

from dataclasses import dataclass

from logsleuth.command_line import CommandLine
from logsleuth.facts.engine_messages import raising_modules
from logsleuth.facts.feature_code import Feature, features
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes import static_catalogs
from logsleuth.fixes.release_flags import range_note
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Failure, LaunchInfo
from logsleuth.reasoning.frame_shapes import raised_while_importing
from logsleuth.redact import secret_by_name

_OFF = frozenset({"0", "false", "no", "off", ""})
# `export VLLM_USE_DEEP_GEMM=1` or `VLLM_USE_DEEP_GEMM=1` alone on a line of the log (a script, an env dump).
_ENV_LINE = compile_lazily(r"^\s{0,8}(?:export\s)?(?P<name>(?:VLLM|SGLANG|SGL)_[A-Z0-9_]{1,60})=(?P<value>[\w.\-]{0,40})\s*$")


@dataclass(frozen=True, slots=True)
class FeatureAtFault:
    """An optional feature the failing code belongs to, and the settings of the launch that turn it on."""

    feature: Feature
    settings: tuple[str, ...]  # as the launch gives them: `--enable-lora`, `--speculative-algorithm EAGLE`, `X=1`
    innermost: bool  # no frame of the engine's code lies inside the feature's: the failure came out of its code
    module: str  # the feature's module the failure ran in (package path)
    raised_there: bool = False  # read from the raise site index, no frame shown
    # The feature's frame is the last one: its own statement raised (not a package it called).
    raised_in_frame: bool = False
    # The paste shows no launch, but the feature's own code raised: it runs only when one of its flags turns it on.
    implied: bool = False


def _package_path(file: str) -> str:
    return file.replace("\\", "/").rsplit("-packages/", 1)[-1]


def _in_feature(path: str, feature: Feature) -> bool:
    return any(fragment in path for fragment in feature.paths)


def _where(failure: Failure, engine: str) -> tuple[list[list[str]], bool]:
    """The module paths each exception of the failure ran in, innermost last, and whether they come from the raise site
    index (no frame of the engine's code shown: the module that raises the message stands in for it)."""
    blocks = [[_package_path(frame.file) for frame in block.frames] for block in failure.exceptions]
    if any(_engine_path(path, engine) for paths in blocks for path in paths):
        return blocks, False
    final = failure.final
    if not final.message.strip():
        return [], False
    raised = raising_modules(final.type or None, final.message, (engine,)).get(engine, set())
    return ([[file] for file in sorted({file for file, _ in raised})], True) if raised else ([], False)


def _engine_path(path: str, engine: str) -> bool:
    return path.startswith(f"{engine}/") or f"/{engine}/" in path


def _env_given(launch: LaunchInfo, lines: list[str]) -> dict[str, str]:
    given: dict[str, str] = {}
    for line in lines:
        if (found := _ENV_LINE.match(line)) is not None:
            given[found["name"]] = found["value"]
    if launch.command is not None:
        given.update(CommandLine.parse(launch.command).environment)
    return given


def _settings_on(feature: Feature, launch: LaunchInfo, options: dict[str, list[str]], env: dict[str, str]
                 ) -> tuple[str, ...]:
    on = []
    for flag in feature.flags:
        if flag in options and not secret_by_name(flag, " ".join(options[flag])):
            value = " ".join(options[flag])
            if value.lower() not in ("false", "none", "null", "0") or not value:
                on.append(f"{flag} {value}".rstrip())
    if not on:
        on += [f"{switch} (the launch's settings show it on)" for switch in feature.switches
               if switch in launch.switches_on]
    on += [f"{name}={env[name]}" for name in feature.env if name in env and env[name].lower() not in _OFF]
    return tuple(on)


def feature_at_fault(failure: Failure, launch: LaunchInfo, engine: str | None, lines: list[str]) -> FeatureAtFault | None:
    """The feature of the table whose code the failure ran in, the innermost such frame's first, when the launch turns
    it on; None otherwise."""
    if engine not in ENGINE_NAMES or raised_while_importing(failure):
        # Raised while modules were being imported: an import runs whatever the flags, so no feature's flag is at fault.
        return None
    blocks, raised_there = _where(failure, engine)
    if not blocks:
        return None
    options = {flag: list(values) for flag, values in CommandLine.parse(launch.command).options} if launch.command else {}
    env = _env_given(launch, lines)
    rows = [row for row in features() if row.engine == engine]
    for paths in blocks:
        for index in range(len(paths) - 1, -1, -1):
            row = next((row for row in rows if _in_feature(paths[index], row)), None)
            settings = _settings_on(row, launch, options, env) if row is not None else ()
            if row is None:
                continue
            # The failing check is the feature's own when no frame of the engine's code lies inside this one.
            innermost = raised_there or not any(_engine_path(path, engine) for path in paths[index + 1:])
            last = raised_there or index == len(paths) - 1
            if settings:
                return FeatureAtFault(row, settings, innermost, _engine_module(paths[index], engine), raised_there,
                                      raised_in_frame=last)
            if innermost and row.flags and not _launch_shown(launch) and (gates := _gate_flags(row, engine, launch)):
                # No launch in the paste, but the feature's own code raised, and that code runs only when one of its
                # flags turns it on (the row's gate): the launch turned it on, with which flag and value is not shown.
                return FeatureAtFault(row, gates, innermost, _engine_module(paths[index], engine),
                                      raised_there, implied=True, raised_in_frame=last)
    return None


def _gate_flags(row: Feature, engine: str, launch: LaunchInfo) -> tuple[str, ...]:
    """The row's flags that can be the ones this launch gave: the named release's own (its catalog), else every one
    some release has, each said with the releases that have it (feature_steps)."""
    version = launch.named_version
    catalog = catalogs.load(engine, version) if version else None
    if version:
        return tuple(flag for flag in row.flags if catalog is not None and catalog.find(flag))
    known = static_catalogs.all_flags(engine)
    return tuple(flag for flag in row.flags if flag in known)


def _launch_shown(launch: LaunchInfo) -> bool:
    return launch.command is not None or launch.server_args_complete or bool(launch.switches_on)


def _engine_module(path: str, engine: str) -> str:
    """`…/site-packages/sglang/srt/lora/x.py` as `sglang/srt/lora/x.py`, a checkout's path likewise."""
    at = path.rfind(f"/{engine}/")  # a checkout's `sglang/python/sglang/srt/…`: the package is the last one
    return path[at + 1:] if at >= 0 and not path.startswith(f"{engine}/") else path


def feature_steps(failure: Failure, launch: LaunchInfo, engine: str | None, lines: list[str]) -> tuple[str, ...]:
    """The step that leads the general checks when the failure ran in a feature the launch turned on."""
    found = feature_at_fault(failure, launch, engine, lines)
    if found is None:
        return ()
    name = ENGINE_NAMES.get(engine or "", "the engine")
    where = ("the check that failed is in" if found.raised_in_frame else
             "the failure came out of" if found.innermost else "the failure ran through")
    through = ", through a package it calls" if found.innermost and not found.raised_in_frame else ""
    source = " (the module that raises this message, per the engine's code)" if found.raised_there else ""
    if found.implied:  # the gate's flags, with the releases that have each when the log names none
        notes = {flag: (range_note(engine, flag) if engine and not launch.named_version else None) for flag in found.settings}
        gates = " or ".join(f"`{flag}`" + (f" ({note.split(': ', 1)[1]})" if note else "") for flag, note in notes.items())
        turned_on = f"which runs only when the launch turns it on with {gates} (the paste does not show the launch)"
    else:
        turned_on = "which your launch turns on with " + " and ".join(f"`{setting}`" for setting in found.settings)
    env_only = all("=" in setting and not setting.startswith("--") for setting in found.settings)
    without = ("with it unset or set to 0" if env_only else
               "without it (its default)" if len(found.settings) == 1 else "without them (their defaults)")
    return (
        f"General guidance: {where} the code of {found.feature.feature} ({found.module}{source}{through}), {turned_on}. "
        f"Launching {without} tells whether the feature is at fault: if the launch then runs, it is "
        f"that feature (or its combination with the rest of the launch), and a newer {name} release may have lifted "
        "its limit (search its issues for the failure's first line) before the checks below.",
    )


def flags_named(step: str) -> frozenset[str]:
    """The flags a feature step names, so that another step does not name them again."""
    return frozenset(word.strip("`,.()") for word in step.split() if word.strip("`,.()").startswith("--"))
