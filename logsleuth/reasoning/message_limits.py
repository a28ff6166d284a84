"""A limit the failure's message states on a setting, with its figure (issue 28, stop 46: general guidance that sets the
knob the message names to the figure it gives, rather than listing the kind of setting).

An engine's limit check often says, in its own words, which setting is over (or under) which figure: vLLM's hybrid
models' `max_num_seqs (1024) exceeds available Mamba cache blocks (600). ... Please lower max_num_seqs to at most 600
or increase gpu_memory_utilization.` (vllm/v1/worker/gpu_model_runner.py since vllm-project/vllm#38270; the threads
vllm-project/vllm#38632, NVIDIA-NeMo/RL#2620, vllm-project/vllm#49064), a plugin's `X must be <= N`, a check's
`X (n) is greater than Y (m)`, a platform plugin's `do not support max_model_len greater than 32768 ... Set
--max_model_len to 32768 or lower` (tenstorrent/tt-inference-server#3120).  No pattern knows each such check, but its
words are enough: the setting (a snake_case or kebab-case name, or an engine's environment variable), the direction
(exceeds, greater than, must be at most, lower ... to, ... or lower: at most; smaller than, at least, increase ... to:
at least; with the figure first, `LoRA rank 64 is greater than max_lora_rank 16`, the other way round) and the
figure.

The setting is said as the flag the decided engine's releases have for it (`max_num_seqs` is `--max-num-seqs`: the
flag catalogs, fixes/static_catalogs.py; with the release named, that release's catalog), else by the message's own
name (a config key, a plugin's setting), never as a flag no release has.  The launch's current value is named when its
command sets it, else the one the message shows.  Where the words give no direction, no statement is made.
"""

from __future__ import annotations

from dataclasses import dataclass

from logsleuth.command_line import CommandLine
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes import static_catalogs
from logsleuth.fixes.release_flags import range_note
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Failure, LaunchInfo
from logsleuth.reasoning.message_settings import ENGINE_ENV_PREFIXES

# A setting's name: a flag (`--max-num-seqs`), or a name of two words or more joined by `_` (`max_num_seqs`,
# `VLLM_ALLOW_LONG_MAX_MODEL_LEN`): a single plain word names no setting for sure.  Anchored after a non-name character,
# and each `_word` part unambiguous, so a long line is scanned once.
_KNOB = r"(?<![\w-])(?P<knob>--[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)"
_NUMBER = r"\d[\d,]{0,15}(?:\.\d{1,6})?(?![\d.]\d)"
_CURRENT = rf"(?:\s?(?:\(\s?|=\s?|:\s)(?P<current>{_NUMBER})\s?\)?)?"
_OVER = r"exceeds|exceeded|is (?:greater|larger|more|bigger|higher) than|is above|is over"
_UNDER = r"is (?:smaller|less|lower|fewer) than|is below|is under"
# `X (1024) exceeds available Mamba cache blocks (600)`, `X=8 is greater than the maximum 4`: the figure is the first
# number after the comparison, within the clause.
_COMPARED = compile_lazily(
    rf"{_KNOB}{_CURRENT}\s(?P<relation>{_OVER}|{_UNDER})\b[^.;\d\n]{{0,80}}?\(?(?P<figure>{_NUMBER})")
# `X must be <= 8`, `X should be at most 8`, `X cannot exceed 8`, `X must be less than 8`.
_MUST = compile_lazily(
    rf"{_KNOB}{_CURRENT}\s(?:must|should|needs to|has to|cannot|can't|can not)\s(?:be\s)?"
    r"(?P<relation><=|>=|<|>|at most|at least|exceed|no (?:more|greater|larger|higher) than|"
    r"no (?:less|smaller|fewer|lower) than|(?:less|smaller|lower|fewer) than or equal to|"
    r"(?:greater|larger|higher|more) than or equal to|less than|smaller than|lower than|fewer than|greater than|"
    rf"larger than|higher than|more than)\s(?:the\s)?[^.;\d\n]{{0,40}}?\(?(?P<figure>{_NUMBER})")
# `Please lower max_num_seqs to at most 600`, `increase X to 4096`, `set X to at least 2`, `Set --x to 32768 or lower`.
_TOLD = compile_lazily(
    rf"\b(?P<verb>(?i:lower|decrease|reduce|increase|raise|set))\s(?:the\s)?{_KNOB}\sto\s"
    rf"(?P<relation>at most|at least|<=|>=|below|above|under|over)?\s?(?P<figure>{_NUMBER})"
    r"(?:\sor\s(?P<after>lower|less|smaller|below|fewer|higher|more|greater|larger|above))?")
# The figure first: `LoRA rank 64 is greater than max_lora_rank 16` (the setting must come up to it),
# `X (2048) is smaller than max_model_len (8192)` (max_model_len must come down to 2048).
_FIGURE_FIRST = compile_lazily(
    rf"(?<![\d.,])(?P<figure>{_NUMBER})\)?\s(?:is|are)\s(?P<relation>greater|larger|more|bigger|higher|smaller|less|lower|fewer)"
    rf"\sthan\s(?:the\s)?{_KNOB}{_CURRENT}")
# `do not support max_model_len greater than 32768`: a platform's own limit on a setting.
_UNSUPPORTED = compile_lazily(
    rf"\b(?:not|n't)\s(?:support|allow)s?\s(?:a\s)?{_KNOB}\s(?P<relation>greater|larger|higher|more|above|over|"
    rf"smaller|less|lower|fewer|below|under)(?:\sthan)?\s(?:the\s)?(?P<figure>{_NUMBER})")

AT_MOST, AT_LEAST, BELOW, ABOVE, EXACTLY = "at most", "at least", "below", "above", "exactly"
_RELATIONS = {
    "<=": AT_MOST, "at most": AT_MOST, "exceed": AT_MOST, ">=": AT_LEAST, "at least": AT_LEAST,
    "<": BELOW, "below": BELOW, "under": BELOW, ">": ABOVE, "above": ABOVE, "over": ABOVE,
}
_AFTER = {"lower": AT_MOST, "less": AT_MOST, "smaller": AT_MOST, "below": AT_MOST, "fewer": AT_MOST,
          "higher": AT_LEAST, "more": AT_LEAST, "greater": AT_LEAST, "larger": AT_LEAST, "above": AT_LEAST}
_VERBS = {"lower": AT_MOST, "decrease": AT_MOST, "reduce": AT_MOST, "increase": AT_LEAST, "raise": AT_LEAST}
_MAX_LIMITS = 2


@dataclass(frozen=True, slots=True)
class StatedLimit:
    """`knob` must be `relation` `figure`, as the message says; `current`: the value the message shows, if any."""

    knob: str
    relation: str
    figure: str
    current: str | None = None
    told: bool = False  # the message tells the user to change it ("lower X to ..."): a setting, whatever its name


def _relation_of(words: str) -> str:
    """The direction the comparison's words give to the setting that must change (the one the sentence is about)."""
    words = " ".join(words.lower().split())
    if words in _RELATIONS:
        return _RELATIONS[words]
    if "or equal" in words:
        return AT_MOST if words.startswith(("less", "smaller", "lower", "fewer")) else AT_LEAST
    if words.startswith(("no more", "no greater", "no larger", "no higher")):
        return AT_MOST
    if words.startswith(("no less", "no smaller", "no fewer", "no lower")):
        return AT_LEAST
    if words.startswith(("exceed", "is greater", "is larger", "is more", "is bigger", "is higher", "is above", "is over")):
        return AT_MOST  # over the figure now: it must come down to it
    if words.startswith(("is smaller", "is less", "is lower", "is fewer", "is below", "is under")):
        return AT_LEAST
    if words.startswith(("less", "smaller", "lower", "fewer")):
        return BELOW
    return ABOVE  # greater / larger / higher / more than


def stated_limits(failure: Failure) -> list[StatedLimit]:
    """The limits the failure's exception messages state on a named setting, first said first, one per setting."""
    found: dict[str, StatedLimit] = {}
    for block in failure.exceptions:
        message = block.message or ""
        for match in _TOLD.finditer(message):
            relation = (_RELATIONS.get(match["relation"] or "") or _AFTER.get(match["after"] or "")
                        or _VERBS.get(match["verb"].lower(), EXACTLY))
            found.setdefault(match["knob"], StatedLimit(match["knob"], relation, _figure(match["figure"]), told=True))
        for regex in (_COMPARED, _MUST, _FIGURE_FIRST, _UNSUPPORTED):
            for match in regex.finditer(message):
                words = match["relation"]
                # The figure first, or a platform's "does not support X greater than N": the words compare the figure
                # with the setting, so the setting's direction is the other way round.
                relation = (_relation_of(words) if regex in (_COMPARED, _MUST) else
                            _relation_of(f"is {words} than") if regex is _UNSUPPORTED else
                            _opposite(_relation_of(f"is {words} than")))
                current = match.groupdict().get("current")
                stated = StatedLimit(match["knob"], relation, _figure(match["figure"]), _figure(current) if current else None)
                known = found.get(match["knob"])
                if known is None:
                    found[match["knob"]] = stated
                elif known.current is None and stated.current and known.figure == stated.figure:
                    found[match["knob"]] = StatedLimit(known.knob, known.relation, known.figure, stated.current, told=True)
    return list(found.values())[:_MAX_LIMITS]


def _opposite(relation: str) -> str:
    """The figure is greater than the setting: the setting must come up to at least the figure (and the other way)."""
    return {AT_MOST: AT_LEAST, AT_LEAST: AT_MOST}.get(relation, relation)


def _figure(text: str) -> str:
    return text.rstrip(",")


def _flag_of(knob: str, engine: str | None, version: str | None) -> str | None:
    """The decided engine's flag for a setting the message names: the release's catalog when the log names the
    release, else any release's (limit_steps says which releases have it: release_flags.range_note); None when no
    release has it."""
    if engine not in ENGINE_NAMES:
        return None
    flag = "--" + knob.lstrip("-").lower().replace("_", "-")  # `--max_model_len` is vLLM's --max-model-len too
    if version:
        known = catalogs.load(engine, version)
        if known is not None:
            return flag if known.find(flag) else None
    return flag if flag in static_catalogs.all_flags(engine) else None


def _launch_value(name: str, launch: LaunchInfo, environment: bool) -> str | None:
    if launch.command is None:
        return None
    command = CommandLine.parse(launch.command)
    if environment:
        return command.environment.get(name)
    options = dict(command.options)
    return " ".join(options[name]) if name in options else None


_WITHIN = {AT_MOST: "to {figure} or less", AT_LEAST: "to {figure} or more", BELOW: "below {figure}",
           ABOVE: "above {figure}", EXACTLY: "to {figure}"}


def limit_steps(failure: Failure, launch: LaunchInfo, engine: str | None, version: str | None) -> tuple[str, ...]:
    """A step per limit the message states: set that setting within the figure, naming the launch's value."""
    steps = []
    for limit in stated_limits(failure):
        environment = limit.knob.startswith(ENGINE_ENV_PREFIXES) and limit.knob.isupper()
        flag = None if environment else _flag_of(limit.knob, engine, version)
        if not environment and flag is None and not limit.told:
            continue  # a name no release's flag has, that the message does not tell to change: maybe no setting at all
        setting = limit.knob if environment or flag is None else flag
        given = _launch_value(setting, launch, environment) if environment or flag else None
        if given is not None:
            now = f"your launch gives {setting}{'=' if environment else ' '}{given}"
        elif limit.current is not None:
            now = f"it is {limit.current} now, per the message"
            now += ", a value your launch's command does not set (a default or a wrapper's)" if launch.command else ""
        else:
            now = "the paste does not show its value now"
        # With no release named, the flag is one some release has: say which, unless the launch gives it (it ran).
        releases = range_note(engine, flag) if flag and engine and not version and given is None else None
        held = f" (a flag of {releases.split(': ', 1)[1]})" if releases else ""
        how = (f"set the environment variable {setting}" if environment else
               f"set {setting}{held}" if flag else f"set the setting {setting} (the message's name for it; how your "
               "launch or program sets it is not shown)")
        steps.append(
            f"General guidance: the message states the limit: {limit.knob} must be {limit.relation} {limit.figure} "
            f"({now}). {how[0].upper()}{how[1:]} {_WITHIN[limit.relation].format(figure=limit.figure)}, the figure the "
            "message gives; where it names another way (another setting to raise or lower), that works too.")
    return tuple(steps)
