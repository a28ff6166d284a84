"""A program that builds the engine's settings in code, refused by the settings class (issue 28: read as a generic
dependency mismatch, or as the engine's bug).

RL trainers, fine-tuning tools and evaluation harnesses (verl, OpenRLHF, LLaMA-Factory, lm-evaluation-harness,
lighteval) build the engine's settings object themselves: `EngineArgs(**kwargs)` or `AsyncEngineArgs(**kwargs)`
(vLLM's vllm/engine/arg_utils.py, also reached through `LLM(**kwargs)` in vllm/entrypoints/llm.py), `ServerArgs(**kwargs)`
(SGLang's sglang/srt/server_args.py, reached through `Engine(**kwargs)` in sglang/srt/entrypoints/engine.py).  All
three are dataclasses, so CPython refuses the call by their fields:

- `EngineArgs.__init__() got an unexpected keyword argument 'worker_use_ray'`: the keyword is a field of other
  releases, one the installed release removed or has not yet (EleutherAI/lm-evaluation-harness#2706,
  huggingface/lighteval#532, OpenRLHF/OpenRLHF#702: vLLM 0.7 removed worker_use_ray; sgl-project/sglang#36478:
  SGLang folded disable_piecewise_cuda_graph into another setting).  A field's keyword is its command-line flag with
  dashes (the engines build both from the one dataclass), so the flag catalogs (fixes/catalogs, each flag's `dest`)
  say which releases take it; the program making the call targets those releases.
- `EngineArgs.__init__() got multiple values for keyword argument 'model'`: the caller passed one keyword twice (by
  name and again in its `**kwargs`).  CPython raises it at the call, before the class's fields are read, so no release
  of the engine takes it: the calling program's own code is at fault (CPython's ceval.c: "got multiple values for
  keyword argument").

The engine is the one whose settings class refused: its frames, the raising line's call of the class, or the
launch's engine when that engine defines the class; never a name in the message alone.  A call at the top level of
the user's own script or `python -c` is the user's own flag (unknown-flag, with the same releases); a keyword doubled
inside the engine's own entry point, a keyword the log's command sets, or one no release has stays with the readings
of reasoning/general.py (the user's flag, a misspelling).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from logsleuth.facts.categories import table
from logsleuth.facts.engine_drivers import drivers_shown
from logsleuth.facts.engine_modules import spans_of
from logsleuth.fixes import static_catalogs
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, Failure, Fix, Frame
from logsleuth.reasoning.engine_api_calls import (
    DISPATCHER,
    UnseenCaller,
    engine_of_frame,
    keyword_given_by_user,
    package_path,
)
from logsleuth.reasoning.evidence import Evidence
from logsleuth.reasoning.wrapper_pins import release_alignment, wrapper_pin

RULE_ID = "rule-settings-class-keyword"
# The engines' settings classes (dataclasses whose fields are the launch flags), and the engine defining each.
SETTINGS_CLASSES = {"ServerArgs": "sglang", "EngineArgs": "vllm", "AsyncEngineArgs": "vllm"}
_CLASS = r"(?P<cls>ServerArgs|AsyncEngineArgs|EngineArgs)"
# CPython's refusals of a call on a dataclass's __init__: 3.10+ names the class (`EngineArgs.__init__()`, or the class by
# its module for a keyword given twice: `vllm.engine.arg_utils.EngineArgs()`), 3.9 only `__init__()`, and the raising
# line then names the class it calls.
_REFUSAL = compile_lazily(
    rf"^(?:(?:\w+\.)*{_CLASS}(?:\.__init__)?|__init__)\(\) got (?:(?P<unexpected>an unexpected keyword argument)"
    r"|(?P<twice>multiple values for (?:keyword )?argument)) '(?P<keyword>[A-Za-z_]\w{0,80})'"
)


@dataclass(frozen=True)
class Refusal:
    """A settings class refusing a keyword of its caller: the class, its engine, the keyword and who called it."""

    settings_class: str
    engine: str
    keyword: str
    twice: bool  # "got multiple values": the caller passed the keyword twice
    caller: Frame | None  # the innermost frame outside the engine that made the call


def settings_keyword(evidence: Evidence) -> Diagnosis | None:
    refusal = _refusal(evidence)
    if refusal is None:
        return None
    if refusal.twice:
        # Only the caller's own call: a keyword doubled inside the engine's entry point (SGLang's Runtime setting
        # log_level itself and forwarding the caller's keywords, with a misspelt parameter: sgl-project/sglang#478) is
        # the engine's code, which a release change may fix.
        frames = evidence.failure.final.frames
        if not frames or _engine_code(frames[-1]) is not None or refusal.caller is not frames[-1]:
            return None
        return _passed_twice(evidence, refusal)
    return _keyword_of_other_releases(evidence, refusal)


def _refusal(evidence: Evidence) -> Refusal | None:
    failure = evidence.failure
    found = _REFUSAL.match(failure.final.message.strip())
    if found is None or not failure.final.type.endswith(("TypeError", "RuntimeError")):
        return None
    settings_class = found["cls"] or _class_the_raising_line_calls(failure, evidence.lines)
    if settings_class is None:
        return None
    engine = _engine_of_the_call(failure, settings_class, evidence.launch.engine)
    if engine is None:
        return None
    return Refusal(settings_class, engine, found["keyword"], bool(found["twice"]), _caller(failure))


# A call of a settings class on a line of source: `engine_args = AsyncEngineArgs(`.
_CALLS_CLASS = compile_lazily(rf"(?<![\w]){_CLASS}\(")


def _class_the_raising_line_calls(failure: Failure, lines: Sequence[str]) -> str | None:
    """The settings class the innermost frame's line calls (`AsyncEngineArgs(**engine_args)`), for CPython 3.9's
    message that names no class; a paste of that line alone (no `File` line above it) is read from the log's lines."""
    sources = [frame.source for frame in failure.final.frames if frame.source]
    if not failure.final.frames:
        sources = [line for line in [*failure.context, *lines] if "Args(" in line][-1:]
    for source in reversed(sources):
        if (called := _CALLS_CLASS.search(source or "")) is not None:
            return called["cls"]
    return None


def _engine_of_the_call(failure: Failure, settings_class: str, launch_engine: str | None) -> str | None:
    """The engine whose settings class refused, from positive evidence: its own frames, the raising line calling
    the class, or the launch's engine when that engine defines the class.  None when the frames show the other engine."""
    engine = SETTINGS_CLASSES[settings_class]
    shown = {code for frame in failure.final.frames if (code := _engine_code(frame))}
    if shown:
        return engine if engine in shown else None
    if launch_engine == engine or any(_CALLS_CLASS.search(frame.source or "") for frame in failure.final.frames):
        return engine
    return engine if not failure.final.frames and launch_engine is None and _named_on_a_line(failure) else None


# The engine's own package at the root of a frame's path (`vllm/entrypoints/llm.py` once site-packages is cut off), not
# a directory of another program named after it (lighteval's `lighteval/models/vllm/vllm_model.py`).
_ENGINE_ROOT = compile_lazily(r"^(?:python/)?(?P<engine>sglang|vllm)/")


def _engine_code(frame: Frame) -> str | None:
    """The engine whose own code the frame runs: its package at the root of an installed or relative path, or anywhere
    in an absolute checkout's path (`/home/u/vllm/vllm/entrypoints/llm.py`)."""
    path = package_path(frame.file)
    if path != frame.file or not path.startswith("/"):
        root = _ENGINE_ROOT.match(path)
        return root["engine"] if root else None
    return engine_of_frame(path)


def _named_on_a_line(failure: Failure) -> bool:
    return any(_CALLS_CLASS.search(line) for line in failure.context)


# Frames that never made the call: the standard library, Ray's task machinery, a `<frozen …>` import frame.
_NOT_A_CALLER = compile_lazily(r"^(python/)?ray/|_raylet|(^|/)(functools|contextlib|asyncio|threading|concurrent)(/|\.py$)|^<frozen")


def _caller(failure: Failure) -> Frame | None:
    """The frame that built the settings: the first one outside the engine below the engine's own frames (or the
    innermost, when the call raised in it; `<string>` for `python -c`).  None when that frame only dispatched the call
    or re-raised a remote error (Ray, xoscar: the caller ran in another process)."""
    for frame in reversed(failure.final.frames):
        if _engine_code(frame) is not None:
            continue
        path = package_path(frame.file)
        return None if _NOT_A_CALLER.search(path) or DISPATCHER.search(path) else frame
    return None


# The package a frame's path starts with, once site-packages is cut off.
_PACKAGE = compile_lazily(r"^(?P<package>[A-Za-z_][\w-]*)/")


def _program(frame: Frame | None, evidence: Evidence) -> str:
    """Who built the settings: the package of the calling frame, else the wrapper the launch names (not Ray, which
    only ran it), else a program the log lists beside the engine (a `pip list` holding unsloth:
    unslothai/unsloth#2002), named as likely."""
    if frame is not None and frame.file.startswith("<"):
        return "the user's own code"
    if frame is not None:
        path = package_path(frame.file)
        package = _PACKAGE.match(path)  # an installed package's path, or a relative path from a checkout's root
        return package["package"] if package else f"the code in {path.rsplit('/', 1)[-1]}"
    if evidence.launch.wrapper and evidence.launch.wrapper != "Ray":
        return evidence.launch.wrapper
    listed = drivers_shown([*evidence.launch.driver_lines, *evidence.failure.context, *evidence.lines])
    if listed:
        return f"likely {' or '.join(driver.named for driver in listed)} (listed in the log)"
    return "the calling program"


def _opening(text: str) -> str:
    """A sentence's first words: "The program ..." capitalised, a package's own name (lm_eval) kept as it is spelt."""
    return text[0].upper() + text[1:] if text.startswith(("the ", "likely ")) else text  # lm_eval stays lm_eval


def _where(frame: Frame | None) -> str:
    if frame is None:
        return "no frame of the caller shown"
    return f"{package_path(frame.file)}:{frame.line}" + (f" `{frame.source.strip()}`" if frame.source else "")


@lru_cache(maxsize=256)
def releases_taking(engine: str, keyword: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The catalogued releases of `engine` whose settings take `keyword` (a flag whose `dest` is the keyword), and
    those of them where that flag is marked deprecated; both oldest first."""
    taking: list[str] = []
    deprecated: list[str] = []
    for release in static_catalogs.releases(engine):
        mine = [record for record in static_catalogs.flag_records(engine, release) or () if record.get("dest") == keyword]
        if mine:
            taking.append(release)
            if all(record.get("deprecated") for record in mine):
                deprecated.append(release)
    return tuple(taking), tuple(deprecated)


@lru_cache(maxsize=256)
def field_moved(engine: str, keyword: str) -> tuple[str, tuple[str, ...]] | None:
    """The field the keyword's own flag sets in later releases, when it sets another one there (SGLang's
    --disable-piecewise-cuda-graph, kept as an alias of cuda_graph_backend_prefill: sgl-project/sglang#36478), with
    those releases; None when the flag always sets the keyword's field or is gone."""
    flag = "--" + keyword.replace("_", "-")
    moved: dict[str, list[str]] = {}
    for release in static_catalogs.releases(engine):
        for record in static_catalogs.flag_records(engine, release) or ():
            if record.get("name") == flag and record.get("dest") not in (None, keyword):
                moved.setdefault(str(record["dest"]), []).append(release)
    if len(moved) != 1:
        return None  # none, or several fields over time: no one place to point to
    field, releases = next(iter(moved.items()))
    return field, tuple(releases)


def spans(engine: str, having: tuple[str, ...]) -> str:
    """Contiguous runs of catalogued releases, as "0.6.0 to 0.6.6.post1, 0.8.0 and later"."""
    return spans_of(having, tuple(static_catalogs.releases(engine)), open_ended=True)


@dataclass(frozen=True)
class KeywordReleases:
    """What the catalogs say of a keyword: the releases whose settings take it, in words."""

    everywhere: str  # every catalogued release with a flag setting the field ("0.6.0 to 0.16.0")
    moved: str  # where the keyword's flag sets another field since ("cuda_graph_backend_prefill in 0.5.14 to 0.5.19")
    surely: str  # those where the flag is not marked deprecated, when there are some ("0.6.0 to 0.10.0")
    deprecated: str  # where it is marked deprecated ("" for none)
    from_first: bool  # the first catalogued release has it: an older release may too

    def described(self, name: str, keyword: str, flag: str, first: str) -> str:
        older = f" (the catalogs start at {first}: an older release may have it too)" if self.from_first else ""
        marked = f"; its flag is marked deprecated in {self.deprecated}" if self.deprecated else ""
        moved = f"; the flag sets the field {self.moved} (the setting moved there)" if self.moved else ""
        # The catalogs hold the whole server parser: a flag on every release's command line may be a front-end option
        # (vLLM's --port) that no settings class has, and then no release takes the keyword.
        parser = (f" (the catalogs hold the whole server's command line: if {flag} is a server or front-end option, "
                  "no release's settings class takes the keyword)") if self.from_first and not self.moved else ""
        return (f"Of the {name} releases logsleuth catalogs, the settings field {keyword} (the flag {flag}) is in "
                f"{self.everywhere}{older}{marked}{moved}{parser}")


def keyword_releases(engine: str, keyword: str) -> KeywordReleases | None:
    having, deprecated = releases_taking(engine, keyword)
    if not having:
        return None
    # A flag only marked deprecated may live on in the parser after the settings class dropped its field (vLLM kept
    # --disable-log-requests on the command line after AsyncEngineArgs lost disable_log_requests): the releases where
    # it is not yet deprecated are the ones sure to take the keyword.
    sure = tuple(release for release in having if release not in deprecated) or having
    moved = field_moved(engine, keyword)
    return KeywordReleases(spans(engine, having), f"{moved[0]} in {spans(engine, moved[1])}" if moved else "",
                           spans(engine, sure), spans(engine, deprecated), having[0] == static_catalogs.releases(engine)[0])


def _users_own_code(frame: Frame | None, evidence: Evidence) -> bool:
    """The call made at the top level of the user's own script (`run.py`'s `<module>`) or of `python -c`, not in a
    function of an installed package, of a checkout's module (`marc/inference/engine.py`, ekinakyurek/marc#8) or of a
    wrapper the log names: the keyword is the user's own, an unknown flag (the category table's tie)."""
    if frame is None or evidence.launch.wrapper or package_path(frame.file) != frame.file:
        return False
    if frame.file.startswith("<"):
        return True  # `python -c`, an interactive session: the user's own lines
    row = table().wrapper_call_row()
    if row is not None and any(part in frame.file for part in row.frames):
        return False
    return frame.function == "<module>"


def _keyword_of_other_releases(evidence: Evidence, refusal: Refusal) -> Diagnosis | None:
    launch = evidence.launch
    engine, keyword = refusal.engine, refusal.keyword
    lines = [*evidence.failure.context, *evidence.lines, *launch.driver_lines, *([launch.command] if launch.command else [])]
    if keyword_given_by_user(UnseenCaller(refusal.settings_class, keyword, frozenset({engine})), lines):
        return None  # the user's own flag in the command shown: reasoning/general.py's unknown-flag reading
    found = keyword_releases(engine, keyword)
    if found is None:
        return None  # no release has it: a misspelling or a fork's keyword, the general readings
    name = ENGINE_NAMES[engine]
    version = launch.engine_version if launch.engine == engine else None
    if _command_line_only(engine, keyword, version):
        return _not_a_field(evidence, refusal, version)
    if _users_own_code(refusal.caller, evidence):
        return _users_keyword(evidence, refusal, found, version)
    program = _program(refusal.caller, evidence)
    ranged = found.described(name, keyword, "--" + keyword.replace("_", "-"), static_catalogs.releases(engine)[0])
    summary, needs = _what_to_align(refusal, found, program, name, version)
    # pip's resolver report of the wrapper's own requirement, when the log shows it: the range to install, not a question.
    pin = wrapper_pin([*evidence.failure.context, *evidence.lines, *evidence.earlier], engine)
    pinned = release_alignment(pin, engine, version, launch.wrapper, ())[0] if pin is not None else ()
    needs = () if pinned else needs
    return Diagnosis(
        pattern=RULE_ID,
        title=f"{_opening(program)} passes {keyword} to {name}'s {refusal.settings_class}, a setting of {name} {found.surely}",
        category="dependency-version",
        root_cause=(
            f"{_opening(program)} builds {name}'s settings in code ({_where(refusal.caller)}) with the keyword "
            f"{keyword}, and the installed {name}'s {refusal.settings_class} has no such field. {ranged}: the program was "
            f"written for a release that takes it, or the keyword was dropped or renamed since."
        ),
        fix=Fix(
            summary=summary,
            steps=(*pinned,
                   f"pip show {engine} (the installed release)",
                   *((f"The flag {'--' + keyword.replace('_', '-')} sets the field {found.moved}: a program updated for "
                      f"those releases passes that field instead (its values are its own: the release's --help says "
                      f"which)",) if found.moved else ()),
                   f"the {name} release (or fork) {program} supports: its requirements (pip show of its package: "
                   "Requires:), its README or release notes"),
            needs_input=needs,
        ),
        references=(
            "CPython: '<Class>.__init__() got an unexpected keyword argument' for a dataclass's fields; "
            "sglang/srt/server_args.py ServerArgs, vllm/engine/arg_utils.py EngineArgs and AsyncEngineArgs are dataclasses",
            "fixes/catalogs: each release's flags and the settings field each sets (dest)",
        ),
        engine=engine,
        engine_version=version,
        basis="rule",
        evidence=(f"the failure: {evidence.failure.final.type}: {evidence.failure.final.message.strip().splitlines()[0]}",
                  f"the call: {_where(refusal.caller)}", ranged),
    )


def _command_line_only(engine: str, keyword: str, version: str | None) -> bool:
    """The command line of the installed release has a flag setting `keyword`, yet the settings class refused it: the catalogs hold the whole server parser, whose front-end options
    (vLLM's --port, --tool-call-parser) and AsyncEngineArgs-only fields are no field of EngineArgs, so the release is
    not what differs and no release change helps."""
    installed = static_catalogs.release_named(engine, version)
    return bool(installed) and installed in releases_taking(engine, keyword)[0]


def _not_a_field(evidence: Evidence, refusal: Refusal, version: str | None) -> Diagnosis:
    engine, keyword = refusal.engine, refusal.keyword
    name = ENGINE_NAMES[engine]
    flag = "--" + keyword.replace("_", "-")
    where = f"{name} {version}" if version else f"every catalogued {name} release"
    return Diagnosis(
        pattern=RULE_ID,
        title=f"{keyword} is an option of {name}'s command line, not a field of its {refusal.settings_class}",
        category="unknown-flag",
        root_cause=(f"The code ({_where(refusal.caller)}) passes the keyword {keyword} to {name}'s "
                    f"{refusal.settings_class}, which has no such field. The command line of {where} has {flag}, "
                    f"but it sets it elsewhere (a server or front-end option, a field of another settings class, or "
                    f"a flag kept after its field moved), so a release change does not make the call work."),
        fix=Fix(summary=(f"Leave {keyword} out of the {refusal.settings_class} call (give it where that option is "
                         f"taken: the server's command line or the class that has the field)."),
                steps=(f"pip show {engine} (the installed release)",)),
        references=("CPython: '<Class>.__init__() got an unexpected keyword argument' for a dataclass's fields",
                    "fixes/catalogs: each release's flags and the settings field each sets (dest), for the whole "
                    "server parser"),
        engine=engine,
        engine_version=version,
        basis="rule",
        evidence=(f"the failure: {evidence.failure.final.type}: {evidence.failure.final.message.strip().splitlines()[0]}",
                  f"the call: {_where(refusal.caller)}"),
    )


def _users_keyword(evidence: Evidence, refusal: Refusal, found: KeywordReleases, version: str | None) -> Diagnosis:
    """The user's own script (or `python -c`) passing a keyword the installed release's settings class lacks: the
    user's flag, an unknown flag (the category table's tie), answered with the releases that take it."""
    engine, keyword = refusal.engine, refusal.keyword
    name = ENGINE_NAMES[engine]
    flag = "--" + keyword.replace("_", "-")
    where = f"{name} {version}" if version else f"the installed {name}"
    moved = f" The flag {flag} sets the field {found.moved}: the setting moved there." if found.moved else ""
    ranged = found.described(name, keyword, flag, static_catalogs.releases(engine)[0])
    return Diagnosis(
        pattern=RULE_ID,
        title=f"{keyword} is not a setting of {where}'s {refusal.settings_class}: a setting of {name} {found.surely}",
        category="unknown-flag",
        root_cause=(f"Your code ({_where(refusal.caller)}) passes the keyword {keyword} to {name}'s "
                    f"{refusal.settings_class}, which {where} does not have. {ranged}."),
        fix=Fix(
            summary=(f"Leave {keyword} out of the call, or run the {name} release the code was written for (of the "
                     f"catalogued releases, {found.surely} take it; a fork or a source build may too).{moved}"),
            steps=(f"pip show {engine} (the installed release)",),
        ),
        references=("CPython: '<Class>.__init__() got an unexpected keyword argument' for a dataclass's fields",
                    "fixes/catalogs: each release's flags and the settings field each sets (dest)"),
        engine=engine,
        engine_version=version,
        basis="rule",
        evidence=(f"the failure: {evidence.failure.final.type}: {evidence.failure.final.message.strip().splitlines()[0]}",
                  f"the call: {_where(refusal.caller)}", ranged),
    )


def _what_to_align(refusal: Refusal, found: KeywordReleases, program: str, name: str,
                   version: str | None) -> tuple[str, tuple[str, ...]]:
    """The fix's summary and what the user is asked: the releases the program was written for against the installed
    one (a keyword the installed release's command line has is _not_a_field's)."""
    keyword = refusal.keyword
    where = f"{name} {version}" if version else f"the installed {name}"
    return ((f"{_opening(program)} passes {keyword}= to {name}'s {refusal.settings_class}, which {where} does not take: "
             f"it was written for a {name} that takes it ({found.surely}, of the catalogued releases). Install the "
             f"{name} release (or fork) its requirements name, or use a release of {program} made for the installed "
             f"{name} (one that drops or renames the keyword)."),
            (f"which release of {program} runs and which {name} release it requires (its requirements or release "
             f"notes), to pin one to the other",))


def _passed_twice(evidence: Evidence, refusal: Refusal) -> Diagnosis:
    launch = evidence.launch
    name = ENGINE_NAMES[refusal.engine]
    program = _program(refusal.caller, evidence)
    keyword = refusal.keyword
    version = launch.engine_version if launch.engine == refusal.engine else None
    where = _where(refusal.caller)
    return Diagnosis(
        pattern=RULE_ID,
        title=f"{_opening(program)} passes {keyword} twice to {name}'s {refusal.settings_class}",
        category="unclassified",
        root_cause=(
            f"CPython refused the call because {program} gives the keyword {keyword} twice ({where}): once by name and "
            f"again in the keywords it forwards. CPython checks this at the call, before {name}'s "
            f"{refusal.settings_class} reads any field, so it is the calling program's code, not a release of "
            f"{name} that lacks or changed the setting."
        ),
        fix=Fix(
            summary=(f"Give {keyword} once: leave it out of the keywords {program} forwards (its config or extra "
                     f"engine arguments) where {program} also sets it itself, or report it to {program}; changing the "
                     f"{name} release does not fix this call."),
            steps=(f"where {program} sets {keyword}: {where}",),
            needs_input=(f"the settings given to {program} for the engine (its config or extra engine arguments), to "
                         f"see which of them repeats {keyword}",),
        ),
        references=("CPython Python/ceval.c: \"got multiple values for keyword argument '{name}'\" when a call names a "
                    "keyword that its ** mapping also holds",),
        engine=refusal.engine,
        engine_version=version,
        basis="rule",
        evidence=(f"the failure: {evidence.failure.final.type}: {evidence.failure.final.message.strip().splitlines()[0]}",
                  f"the call: {where}"),
    )

