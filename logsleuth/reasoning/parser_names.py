"""A tool-call or reasoning parser name the engine's registry refused, or a parser left unset where the request needs
one (issue 28: these got only the general checks of invalid-flag-value, without the flag or the release's names).

The engines look the name up in their own registries (the raise site index):

- SGLang's FunctionCallParser.__init__ (sglang/srt/function_call/function_call_parser.py, earlier
  sglang/srt/function_call_parser.py): "Unsupported tool_call_parser: {}" (0.4.x to 0.5.23), "Tool Call Parser Not
  Given!" (0.4.x); the server passes its --tool-call-parser, None when the launch gave none and a request carries
  tools (sgl-project/sglang#9102: "Unsupported tool_call_parser: None");
- SGLang's ReasoningParser.__init__ (sglang/srt/parser/reasoning_parser.py, earlier sglang/srt/reasoning_parser.py):
  "Unsupported model type: {}" (the parser's name, not the model's: read only from that frame) and "Model type must
  be specified" (no --reasoning-parser);
- vLLM's ToolParserManager.get_tool_parser and ReasoningParserManager.get_reasoning_parser (vllm/…/tool_parsers/
  abstract_tool_parser.py, vllm/reasoning/abs_reasoning_parsers.py): "tool helper: '{}' not found in tool_parsers",
  "Tool parser '{}' not found.", "reasoning helper: '{}' not found in reasoning_parsers", "Reasoning parser '{}' not
  found. Available parsers: {}".

The two kinds share model-family names, and a name of one kind given to the other flag is a common slip: SGLang's
`qwen3` is a reasoning parser and no tool-call parser (THUDM/slime#2019: "Unsupported tool_call_parser: qwen3"; its
Qwen tool-call parsers are qwen25, qwen, qwen3_coder).  The kinds are read from the release catalogs' choices of
--tool-call-parser and --reasoning-parser (SGLang's registries' keys; vLLM's take registry names, not listed there).
The names offered are the named release's own list when the log names it, else the ones every release whose list
logsleuth knows has, beside which the user's `--help` lists its own.  A name's releases are said only as
rejected_flags.value_releases states them, "of the releases whose list logsleuth knows" (the lists are literal in some
releases only: vLLM's in 0.6.0-0.6.2 and 0.8.0-0.8.2, never its newest), with no family range (REVIEW5 H2, M4).
SGLang's native endpoints /parse_function_call and /separate_reasoning build the parser from the request's field
(http_server.py's parse_function_call_request, separate_reasoning_request): not the launch flag's, not read (M3).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import regex

from logsleuth import versions
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes import rejected_flags, static_catalogs
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import ENGINE_NAMES, Diagnosis, Fix, FlagOp
from logsleuth.reasoning.evidence import Evidence

RULE_ID = "rule-parser-name"
TOOL, REASONING = "--tool-call-parser", "--reasoning-parser"
_OTHER = {TOOL: REASONING, REASONING: TOOL}
_KIND = {TOOL: "tool-call parser", REASONING: "reasoning parser"}
# A registry name is one word; bounded for linear matching on a 64 KiB line.
_NAME = r"[\w.\-]{1,80}+"
# (engine, flag, pattern): the value group is absent (or None) when the launch gave no parser.
_REFUSALS: tuple[tuple[str, str, regex.Pattern[str]], ...] = (
    ("sglang", TOOL, compile_lazily_regex(rf"\bUnsupported tool_call_parser: (?P<value>{_NAME})")),
    ("sglang", TOOL, compile_lazily_regex(r"\bTool Call Parser Not Given!")),
    ("sglang", REASONING, compile_lazily_regex(r"\bModel type must be specified\b")),
    ("sglang", REASONING, compile_lazily_regex(rf"\bUnsupported model type: (?P<value>{_NAME})")),
    ("vllm", TOOL, compile_lazily_regex(rf"\btool helper: '(?P<value>{_NAME})' not found in tool_parsers"
                                        rf"|\bTool parser '(?P<value>{_NAME})' not found\.")),
    ("vllm", REASONING, compile_lazily_regex(
        rf"\breasoning helper: '(?P<value>{_NAME})' not found in reasoning_parsers"
        rf"|\bReasoning parser '(?P<value>{_NAME})' not found\.(?: Available parsers: (?P<listed>\[[^\]\n]{{0,4000}}\]))?")),
)
# SGLang's "Unsupported model type" is also the model config's words: read as the reasoning parser's only from there.
_REASONING_FRAME = compile_lazily_regex(r"(?:^|/)(?:parser/)?reasoning_parser\.py$")
SOURCES = (
    "sglang/srt/function_call/function_call_parser.py (earlier srt/function_call_parser.py): FunctionCallParser.__init__ "
    "'Unsupported tool_call_parser: {}', 'Tool Call Parser Not Given!' (the raise site index)",
    "sglang/srt/parser/reasoning_parser.py (earlier srt/reasoning_parser.py): ReasoningParser.__init__ 'Unsupported "
    "model type: {}', 'Model type must be specified' (the raise site index)",
    "vllm/tool_parsers/abstract_tool_parser.py, vllm/reasoning/abs_reasoning_parsers.py: the parser managers' "
    "'tool helper: … not found in tool_parsers', 'Reasoning parser … not found. Available parsers: …'",
    "THUDM/slime#2019 (SGLang's reasoning parser name qwen3 given as the tool-call parser), sgl-project/sglang#9102 "
    "(tools in a request to a server launched without --tool-call-parser)",
)


@dataclass(frozen=True)
class _Refusal:
    """A parser-name refusal as the engine's message states it: the engine, the flag and the name it refused."""

    engine: str
    flag: str
    value: str | None  # None: the launch gave no parser
    listed: tuple[str, ...]  # the names the message itself lists (the running release's)
    words: str


def parser_names(evidence: Evidence) -> Diagnosis | None:
    """A parser name the decided engine's registry refused, or none given: the flag, the kind the name is, and the
    names of the right kind the release has."""
    refusal = _refusal(evidence)
    if refusal is None:
        return None
    catalog = catalogs.load(refusal.engine, evidence.launch.engine_version)
    if catalog is None or catalog.find(refusal.flag) is None:
        return None  # a flag the release lacks is never offered
    names, where = _release_names(refusal, evidence.launch.named_version)
    help_note = "" if refusal.listed or evidence.launch.named_version else "; your release's `--help` lists all of its own"
    listing = f" ({where}: {', '.join(names)}{help_note})" if names else ""
    if refusal.value is None:
        title, category, cause, summary = _unset(refusal, listing)
    else:
        title, category, cause, summary = _named(refusal, listing + _family_note(refusal, evidence.launch.named_version),
                                                  evidence.launch.named_version)
    wanted = FlagOp("add", refusal.flag, None) if refusal.value is None else FlagOp("set", refusal.flag, None)
    fix = Fix(summary=summary, flags=(wanted,), needs_input=(refusal.flag,))  # the value is the user's pick
    return Diagnosis(pattern=RULE_ID, title=title, category=category, root_cause=cause, fix=fix, references=SOURCES,
                     engine=evidence.launch.engine, engine_version=evidence.launch.engine_version, basis="rule",
                     evidence=(f"the engine's registry: {refusal.words}",))


def _unset(refusal: _Refusal, listing: str) -> tuple[str, str, str, str]:
    """(title, category, cause, fix summary) for no parser given where the request needed one."""
    kind = _KIND[refusal.flag]
    needing = "tools in a chat request" if refusal.flag == TOOL else "reasoning to separate from the answer"
    return (f"no {refusal.flag} given", "missing-flag",
            f"The server was launched without {refusal.flag}, and the request needed a {kind} ({needing}): the engine "
            f"looked up an empty name.",
            f"Launch with {refusal.flag} set to the {kind} for your model's format{listing}; or send the request "
            f"without what needs it.")


def _named(refusal: _Refusal, listing: str, release: str | None) -> tuple[str, str, str, str]:
    """(title, category, cause, fix summary) for a name the registry refused: one of the other kind, else one this
    release does not register."""
    kind, other = _KIND[refusal.flag], _OTHER[refusal.flag]
    value = refusal.value or ""
    if release is not None and value in _release_list(refusal.engine, refusal.flag, release):
        # The named release lists it as this kind: the release read from the log is not the one that ran.
        return (f"{refusal.flag} names no {kind} of the release that ran", "invalid-flag-value",
                f"{refusal.flag} was given '{value}', which {ENGINE_NAMES[refusal.engine]} {release}'s list has as a "
                f"{kind}, yet the engine that ran does not register it: the release that ran is likely not {release} "
                f"(the version read from the log may be another process's), or a plugin's parser was not loaded.",
                f"Check the release that ran (`pip show {refusal.engine}` in its environment) and set {refusal.flag} to "
                f"a {kind} it lists (its `--help`).")
    # The other kind's releases as rejected_flags states them: of the releases whose list logsleuth knows only.
    other_kind = rejected_flags.value_releases(refusal.engine, None, other, value, open_lists=False)
    if other_kind and value not in refusal.listed:
        later = "" if _newest_lists(refusal.engine, other) else (
            "; its later releases take registry names logsleuth's catalogs do not list")
        return (f"a {_KIND[other]} name given to {refusal.flag}", "invalid-flag-value",
                f"{refusal.flag} was given '{value}', which is a {_KIND[other]} name ({other_kind}, of the releases "
                f"whose list logsleuth knows{later}), not a {kind} there: the engine looked the name up among its "
                f"{kind}s and found none.",
                f"Set {refusal.flag} to the {kind} for your model's format{listing}; '{value}' belongs to {other}, where "
                f"it can stay.")
    return (f"{refusal.flag} names no {kind} of this release", "invalid-flag-value",
            f"{refusal.flag} was given '{value}', which this {ENGINE_NAMES[refusal.engine]} does not register as a "
            f"{kind}: a misspelt name, a parser of another release, or a plugin's parser that was not loaded.",
            f"Set {refusal.flag} to the {kind} made for your model's format{listing}. A name spelt like another is no "
            f"evidence the other fits: the parser must match the model's family.")


def _refusal(evidence: Evidence) -> _Refusal | None:
    engine = evidence.launch.engine
    if _from_request(evidence):
        return None  # the request's own parser field, not the launch flag: not this rule's advice
    for owner, flag, pattern in _REFUSALS:
        if owner != engine:
            continue  # each message is read as its own engine's registry only
        found = evidence.first_match(pattern)
        if found is None:
            continue
        groups = found.groupdict()
        if "Unsupported model type" in found.group(0) and not _raised_in_reasoning_parser(evidence):
            continue
        value = groups.get("value")
        listed = tuple(regex.findall(r"'([^']*)'", groups.get("listed") or ""))
        return _Refusal(owner, flag, None if value in (None, "None", "") else value, listed, found.group(0))
    return None


# SGLang's native endpoints build the parser from the request body (http_server.py: /parse_function_call's
# FunctionCallParser(tools=obj.tools, tool_call_parser=obj.tool_call_parser), /separate_reasoning's
# ReasoningParser(model_type=obj.reasoning_parser), in 0.4.10.post2 and 0.5.9): there the name is the request's.
_REQUEST_PARSED = frozenset({"parse_function_call_request", "separate_reasoning_request"})


def _from_request(evidence: Evidence) -> bool:
    return any(frame.function in _REQUEST_PARSED and frame.file.endswith("http_server.py")
               for block in evidence.failure.exceptions for frame in block.frames)


def _raised_in_reasoning_parser(evidence: Evidence) -> bool:
    frames = [frame for block in evidence.failure.exceptions for frame in block.frames]
    return bool(frames) and any(_REASONING_FRAME.search(frame.file) for frame in frames[-2:])


def _release_names(refusal: _Refusal, release: str | None) -> tuple[tuple[str, ...], str]:
    """The names of the flag's kind to offer, and what they are: the message's own list, the named release's, or
    those every release with a known list has."""
    name = ENGINE_NAMES[refusal.engine]
    if refusal.listed:
        return refusal.listed, "the names this release lists"
    if release is not None:
        own = _release_list(refusal.engine, refusal.flag, release)
        return (own, f"{name} {release}'s {_KIND[refusal.flag]}s") if own else ((), "")
    lists = _known_lists(refusal.engine, refusal.flag)
    if not lists:
        return (), ""
    common = [choice for choice in lists[-1] if all(choice in known for known in lists)]
    return tuple(common), f"the {_KIND[refusal.flag]}s every {name} release whose list logsleuth knows has"


@lru_cache(maxsize=8)
def _known_lists(engine: str, flag: str) -> tuple[tuple[str, ...], ...]:
    """The flag's choices in every release whose catalog lists them literally (static and real-parser), oldest first."""
    found = []
    for release in static_catalogs.releases(engine):
        catalog = catalogs.load(engine, release)
        info = catalog.find(flag) if catalog is not None else None
        if info is not None and info.choices_known and info.choices:
            found.append(tuple(info.choices))
    return tuple(found)


def _release_list(engine: str, flag: str, release: str) -> tuple[str, ...]:
    """The flag's choices the named release's own catalog lists literally; () when it lists none."""
    catalog = catalogs.load(engine, release)
    if catalog is None or versions.version_key(catalog.version) != versions.version_key(release):
        return ()  # another release's list (the nearest catalog) is not the named release's
    info = catalog.find(flag)
    return tuple(info.choices) if info is not None and info.choices_known and info.choices else ()


def _newest_lists(engine: str, flag: str) -> bool:
    """Whether the engine's newest release with a catalog lists the flag's choices literally: else a name's releases
    end where the literal lists end, not where the name was removed (vLLM's later parsers are registry names)."""
    every = static_catalogs.releases(engine)
    return bool(every) and bool(_release_list(engine, flag, every[-1]))


# A model family's parser names start with the family's letters ("qwen3" -> qwen25, qwen, qwen3_coder).
_FAMILY = compile_lazily_regex(r"^[a-z]{3,20}+")


def _family_note(refusal: _Refusal, release: str | None) -> str:
    """The names of the flag's kind that share the refused name's family letters: the named release's own, else those
    every release whose list logsleuth knows has (no release range is stated: the lists are known for some releases
    only).  The pick is left to the user."""
    family = _FAMILY.match((refusal.value or "").lower())
    if family is None or refusal.listed or (release is None and not _newest_lists(refusal.engine, refusal.flag)):
        return ""  # no list of the newest releases: the old lists say nothing of what a release lacks now
    if release is not None:
        known, whose = _release_list(refusal.engine, refusal.flag, release), f"{ENGINE_NAMES[refusal.engine]} {release}'s"
    else:
        lists = _known_lists(refusal.engine, refusal.flag)
        known = tuple(name for name in (lists[-1] if lists else ()) if all(name in each for each in lists))
        whose = "every release's (of those whose list logsleuth knows)"
    alike = sorted(name for name in known if name.lower().startswith(family.group(0)) and name != refusal.value)
    return f"; {whose} {_KIND[refusal.flag]}s named like '{refusal.value}': {', '.join(alike)}" if alike else ""
