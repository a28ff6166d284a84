"""Another program importing a name the installed engine does not have (issue 28: filed as a broken engine install,
with advice to reinstall the engine, which brings back the same release).

CPython's `ImportError: cannot import name 'N' from 'vllm.sequence' (…/site-packages/vllm/sequence.py)` (or
`No module named 'vllm.x.y'`) raised at a frame that is not the engine's: a wrapper (LLaMA-Factory's
`chat/sglang_engine.py` importing `sglang.utils.launch_server_cmd`), a plugin, a research repository's sampler.  The
engines move and drop their internal names between releases, so the program was written for another release than
the one installed: hiyouga/LlamaFactory#7458, hiyouga/LlamaFactory#7768, Tomorrowdawn/top_nsigma#2, OpenBMB/MiniCPM#236,
nvidia-cosmos/cosmos-rl#640.  The fix is the release that program was written for, or a release of the program made
for the installed engine; never a reinstall of the installed engine.

Who imported is read from the frames only (the innermost one outside the standard library): a bare line says nothing
about it.  A frame inside another copy of the engine (a source checkout beside the installed wheel) is the engine's
own mixed install, not another program: such a frame's file is one of the engine's own source files."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from logsleuth.facts.compiled_ops import owner_of
from logsleuth.facts.engine_drivers import drivers_shown
from logsleuth.facts.engine_modules import Presence, module_presence, name_presence, spans_of
from logsleuth.facts.raise_sites import engine_file, member_names
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, ExceptionBlock, Fix, Frame
from logsleuth.reasoning.engine_api_calls import package_path
from logsleuth.reasoning.evidence import Evidence
from logsleuth.reasoning.guidance_text import joined

RULE_ID = "rule-caller-imports-engine-name"
_CANNOT_IMPORT = compile_lazily(
    r"^cannot import name '(?P<name>\w+)' from '(?P<module>(?P<engine>sglang|vllm)(?:\.\w+)*)'(?: \((?P<path>[^()\n]+)\)?)?"
)
_NO_MODULE = compile_lazily(r"^No module named '(?P<module>(?P<engine>sglang|vllm)\.[\w.]+)'")
# CPython's refusal of an attribute of a module (`vllm.__version__`, `vllm.utils.get_ip`): the same question, asked
# of an attribute instead of an import.
_NO_ATTRIBUTE = compile_lazily(r"^module '(?P<module>(?P<engine>sglang|vllm)(?:\.\w+)*)' has no attribute '(?P<name>\w+)'")
# The engine's own console script (`/opt/conda/bin/vllm`): a frame there ran the engine's CLI, whose imports a
# paste cut; it shows no other program's import.
_ENGINE_SCRIPT = compile_lazily(r"(?:^|/)bin/(?:sglang|vllm)$")
# Frames that never did the import: the import machinery and the standard library's.
_LIBRARY_FRAME = compile_lazily(r"<frozen [\w.]+>|(^|/)(importlib|runpy|contextlib|functools)(/|\.py$)|/lib/python\d[\d.]*/[\w]+\.py$")
_INSTALLED = compile_lazily(r"(?:site|dist)-packages/(?P<package>[\w.-]+)/")
SOURCES = (
    "CPython Python/ceval.c import_from: \"cannot import name '{name}' from '{module}' ({file})\"; importlib: "
    "\"No module named '{module}'\"",
    "the engines' internal modules are not a stable API: names move between releases (vllm.sequence.SamplerOutput, "
    "vllm.utils.FlexibleArgumentParser; sglang.utils.launch_server_cmd added in a later release)",
    "facts/engine_modules.json.gz: the modules and names of each indexed SGLang and vLLM release, read from its "
    "wheel (scripts/engine_index/module_names.py)",
)


def caller_imports_engine_name(evidence: Evidence) -> Diagnosis | None:
    located = _failed_lookup(evidence.failure.exceptions)
    if located is None:
        return None
    block, found = located
    engine = found["engine"]
    importer = _importing_frame(block)
    if importer is not None and _ENGINE_SCRIPT.search(importer.file):
        importer = None  # the engine's CLI ran: the import the paste cut is still unknown
    frameless = importer is None and not any(
        b.frames and not all(_ENGINE_SCRIPT.search(f.file) for f in b.frames) for b in evidence.failure.exceptions)
    if frameless:
        return _frameless_beside_a_driver(evidence, found) or _frameless_read_against_releases(evidence, found)
    if importer is None or _is_engine_code(importer, engine):
        return None
    releases = _releases_reading(evidence, found)
    if releases is not None and releases.verdict != "some":
        return _not_a_release_skew(evidence, block, found, releases, f"the importing frame: {_where(importer)}")
    name = ENGINE_NAMES[engine]
    what = found.groupdict().get("name")
    missing = f"{what} from {found['module']}" if what else f"the module {found['module']}"
    program = evidence.launch.wrapper or _installed_package(importer)
    caller = program or f"the code in {package_path(importer.file).rsplit('/', 1)[-1]}"
    where = _where(importer)
    other_side = (f"a release of {program} made for the installed {ENGINE_NAMES[engine]}" if program else
                  f"that code updated to the installed {ENGINE_NAMES[engine]}'s names")
    return Diagnosis(
        pattern=RULE_ID,
        title=f"{caller[0].upper()}{caller[1:]} imports {missing}, which the installed {name} does not have",
        category="dependency-version",
        root_cause=(
            f"The import is made by {caller} ({where}), not by {name}'s own code: it was written for another {name} release, "
            f"one that has {missing}. {name} moves and drops the names of its internal modules between releases, so a "
            f"reinstall of the installed {name} brings the same files back.{_range_sentence(releases)}"
        ),
        fix=Fix(
            summary=(f"Install the {name} release {caller} was written for (its requirements or documentation name "
                     f"it{_among(releases)}), or {other_side}."),
            steps=(
                f"pip show {engine} (the installed release)",
                f"the {name} range {caller} supports: its requirements (pip show of its package: Requires:), its "
                "README or release notes",
            ),
        ),
        references=SOURCES,
        engine=evidence.launch.engine,
        engine_version=evidence.launch.engine_version,
        basis="rule",
        evidence=(f"the failure: {block.type}: {block.message.strip().splitlines()[0]}", f"the importing frame: {where}",
                  *_range_evidence(releases)),
    )


def _frameless_beside_a_driver(evidence: Evidence, found: re.Match[str]) -> Diagnosis | None:
    """The error line alone (no frame says who imported), and the log shows a package that drives or plugs into the
    engine (facts/engine_drivers.py: a package listing, vLLM's platform plugin line): that package, written for
    another release, is the likely importer (LMCache/LMCache#1840: lmcache 0.3.8 listed beside vLLM 0.11.0;
    flagos-ai/vllm-plugin-FL#196: the plugin's table row and its "Platform plugin fl is activated").  A module of the
    engine's compiled extensions (`vllm._C`) missing is its own broken build, whoever imports it."""
    module = found["module"]
    if any(part.startswith("_") for part in module.split(".")[1:]):
        return None
    failure = evidence.failure
    drivers = drivers_shown([*evidence.launch.driver_lines, *failure.context])
    if not drivers:
        return None
    engine = found["engine"]
    name = ENGINE_NAMES[engine]
    what = found.groupdict().get("name")
    missing = f"{what} from {module}" if what else f"the module {module}"
    beside = joined([f"{driver.named} ({driver.kind})" for driver in drivers])
    version = evidence.launch.engine_version if evidence.launch.engine in (None, engine) else None
    installed = f"{name} {version}" if version else f"the installed {name}"
    sentence = f"{name} {version}" if version else f"The installed {name}"
    first = drivers[0]
    requires = f"pip show {first.distribution}: Requires:, or its release notes" if first.distribution else "its release notes"
    block = failure.final
    releases = _releases_reading(evidence, found)
    return Diagnosis(
        pattern=RULE_ID,
        title=f"{sentence} lacks {missing}, likely imported by {first.named}, written for another {name} release",
        category="dependency-version",
        root_cause=(
            f"{sentence} does not have {missing}. The log shows {beside} installed beside "
            f"{name}: such a package imports {name}'s internal modules and is written for a range of {name} releases, "
            f"which move and drop those names between releases. The paste shows no frame of the import, so which "
            f"package made it is read from what the log lists, not proven. A reinstall of {installed} brings the "
            f"same files back.{_range_sentence(releases)}"
        ),
        fix=Fix(
            summary=(f"Install the {first.name} release made for {installed}, or the {name} release {first.named} "
                     f"declares ({requires})."),
            steps=(f"pip show {engine} (the installed release)",),
            needs_input=(f"the traceback's frames above the error line (whose file made the import: {first.name}'s, "
                         f"another package's, or {name}'s own, a mixed install)",),
        ),
        references=SOURCES,
        engine=evidence.launch.engine,
        engine_version=evidence.launch.engine_version,
        basis="rule",
        evidence=(f"the failure: {block.type}: {block.message.strip().splitlines()[0]}",
                  *(f"{driver.named} ({driver.kind}), shown by {driver.shown_by}" for driver in drivers),
                  *_range_evidence(releases)),
    )


@dataclass(frozen=True)
class ReleasesReading:
    """The missing name read against the indexed releases (facts/engine_modules.py)."""

    presence: Presence
    # some: some indexed releases have it (a release skew); every: all do, or the installed one does (the `vllm`
    # imported is not a whole installed release); none: no indexed release has it
    verdict: Literal["some", "every", "none"]
    installed: str | None  # the engine release the log or the user names


def _failed_lookup(chain: tuple[ExceptionBlock, ...]) -> tuple[ExceptionBlock, re.Match[str]] | None:
    """The exception of the chain that says an engine name is missing: the last one, or an earlier one that a
    package's own handler turned into its own error (lm-format-enforcer re-raising `No module named
    'vllm.transformers_utils.tokenizer'` as "vllm is not installed", vllm-project/vllm#52614)."""
    for block in reversed(chain):
        found = _missing_engine_name(block)
        if found is not None:
            return block, found
        if block is chain[-1] and block.type.split(".")[-1] not in ("ImportError", "ModuleNotFoundError"):
            return None  # only an import error may stand for the lookup it failed on
    return None


def _missing_engine_name(block: ExceptionBlock) -> re.Match[str] | None:
    """The engine module or name an import or an attribute lookup did not find, from CPython's own message."""
    kind = block.type.split(".")[-1]
    message = block.message.strip()
    if kind in ("ImportError", "ModuleNotFoundError"):
        return _CANNOT_IMPORT.match(message) or _NO_MODULE.match(message)
    return _NO_ATTRIBUTE.match(message) if kind == "AttributeError" else None


def _releases_reading(evidence: Evidence, found: re.Match[str]) -> ReleasesReading | None:
    engine, module = found["engine"], found["module"]
    if _compiled_extension(module, found.groupdict().get("name")):
        return None
    what = found.groupdict().get("name")
    presence = name_presence(engine, module, what) if what else module_presence(engine, module)
    if presence is None:
        return None
    installed = evidence.launch.named_version if evidence.launch.engine in (None, engine) else None
    if presence.in_every or (installed is not None and presence.has(installed)):
        return ReleasesReading(presence, "every", installed)
    return ReleasesReading(presence, "none" if presence.in_none else "some", installed)


def _compiled_extension(module: str, name: str | None) -> bool:
    """`vllm._C`, `vllm.vllm_flash_attn._vllm_fa2_C`: a compiled extension (facts/compiled_ops.toml names their
    operator namespaces), which the table of Python files never holds; its absence is the engine's own build."""
    parts = [*module.split(".")[1:], *([name] if name else [])]
    return any(part.startswith("_") and owner_of(part) is not None for part in parts)


def _range_sentence(releases: ReleasesReading | None) -> str:
    """Which indexed releases have the name (empty: no reading, or not a skew)."""
    if releases is None or releases.verdict != "some":
        return ""
    name = ENGINE_NAMES[releases.presence.engine]
    sentence = (f" Of the {name} releases logsleuth indexes, {releases.presence.what} is in {releases.presence.spans()} "
                f"and not in {releases.presence.lacking()}")
    if releases.presence.open_in:  # a module __getattr__ or an unresolved star import: the name may be served there
        sentence += (f" (in {spans_of(releases.presence.open_in, releases.presence.indexed)} the module hands out "
                     "names no statement shows, so those may have it)")
    if releases.installed is not None:
        known = releases.presence.has(releases.installed)
        sentence += (f"; the installed {releases.installed} is not indexed" if known is None else
                     f"; the installed {releases.installed} lacks it")
    return f"{sentence}: the program importing it targets the releases that have it."


def _among(releases: ReleasesReading | None) -> str:
    if releases is None or releases.verdict != "some":
        return ""
    return f"; of the indexed releases, {releases.presence.spans()} have it"


def _range_evidence(releases: ReleasesReading | None) -> tuple[str, ...]:
    if releases is None:
        return ()
    presence = releases.presence
    lacking = presence.lacking()
    return (f"{ENGINE_NAMES[presence.engine]} releases with {presence.what} (facts/engine_modules.json.gz): "
            f"{presence.spans() or 'none indexed'}" + (f"; without it: {lacking}" if lacking else ""),)


def _in_every_release(engine: str, presence: Presence, installed: str | None, message: str,
                      caller: str) -> tuple[str, str, str, tuple[str, ...]]:
    """Title, cause, fix and steps when every indexed release (or the installed one) has the missing name."""
    name = ENGINE_NAMES[engine]
    first, last = presence.indexed[0], presence.indexed[-1]
    # CPython names no file for a package that has none: a directory without __init__.py (a namespace package).
    no_file = " CPython says `(unknown location)`: the package it imported has no file." if "(unknown location)" in message else ""
    find = f"python -c 'import {engine}; print({engine}.__file__)', run from the same directory"
    shadow = (f"a directory named {engine} in the working directory or on PYTHONPATH shadowing the installed package, "
              "a source checkout without its build, or a package only partly imported")
    if installed is not None and presence.has(installed):
        return (f"The installed {name} {installed} has {presence.what}: the {engine} imported is not that release",
                f"CPython found no {presence.what}, yet {name} {installed} has it, so another release would not change "
                f"this: the `{engine}` imported is not the installed release's files ({shadow}; {caller}).{no_file}",
                f"Find which {engine} Python imports ({find}) and remove or rename what shadows the installed {name}.",
                (f"pip show {engine} (the installed release and its location)",))
    return (f"{presence.what} is in every indexed {name} release ({first} to {last}): an older or newer {name}, or not a whole install",
            f"CPython found no {presence.what}, yet every {name} release logsleuth indexes ({first} to {last}) has it. "
            f"So the `{engine}` imported is a release outside that range (older than {first} or newer than {last}), or "
            f"not a whole installed release: {shadow} ({caller}).{no_file}",
            f"Find which {engine} and which release Python imports ({find}): a release outside {first} to {last} "
            f"needs the one the importing program pins; a shadowing directory or partial install needs removing.",
            (f"pip show {engine} (the installed release and its location)",))


def _where(frame: Frame) -> str:
    return f"{frame.file}:{frame.line}" if frame.line else frame.file


def _frameless_read_against_releases(evidence: Evidence, found: re.Match[str]) -> Diagnosis | None:
    """The error line alone, with no package shown beside the engine: which releases have the name says whether the
    program that imported it targets other releases (vllm.sampling_params.GuidedDecodingParams, in vLLM until 0.11
    and gone since: davanstrien/uv-scripts-for-ai#14; vllm.model_executor.SamplingMetadata: deepseek-ai/DeepSeek-OCR#176)."""
    releases = _releases_reading(evidence, found)
    if releases is None:
        return None
    if releases.verdict != "some":
        return _not_a_release_skew(evidence, evidence.failure.final, found, releases,
                                   "no frame shows which code made the import")
    engine = found["engine"]
    name = ENGINE_NAMES[engine]
    presence = releases.presence
    installed = f"the installed {name} {releases.installed}" if releases.installed else f"the installed {name}"
    return Diagnosis(
        pattern=RULE_ID,
        title=f"{presence.what} is in {name} {presence.spans()} only: the code importing it targets those releases",
        category="dependency-version",
        root_cause=(
            f"{installed[0].upper()}{installed[1:]} lacks {presence.what}, a name of {name}'s internal modules, which "
            f"move and vanish between releases.{_range_sentence(releases)} The paste shows no frame of the import, so "
            "which program made it (a trainer, a plugin, a script) is not known."
        ),
        fix=Fix(
            summary=(f"Install the {name} release the program that imports {presence.what} pins or declares (of the "
                     f"indexed releases, {presence.spans()} have it), or a release of that program made for "
                     f"{installed}."),
            steps=(f"pip show {engine} (the installed release)",
                   f"the {name} release the program supports: its requirements, README or release notes"),
            needs_input=("the traceback's frames above the error line (which program's file made the import)",),
        ),
        references=SOURCES,
        engine=evidence.launch.engine,
        engine_version=evidence.launch.engine_version,
        basis="rule",
        evidence=(f"the failure: {evidence.failure.final.type}: {evidence.failure.final.message.strip().splitlines()[0]}",
                  *_range_evidence(releases)),
    )


def _not_a_release_skew(evidence: Evidence, block: ExceptionBlock, found: re.Match[str], releases: ReleasesReading,
                        caller: str) -> Diagnosis:
    """Every indexed release has the name (or the installed one does): another release would not help, the module
    imported is not a whole release's (a directory named after the engine shadowing it, a partial install: CPython
    says `(unknown location)` for a package with no file).  No indexed release has it: a fork, a development build,
    or a name a plugin adds at run time (snowflakedb/ArcticInference#156: `_SP`, set by the plugin once loaded)."""
    engine = found["engine"]
    name = ENGINE_NAMES[engine]
    presence = releases.presence
    first, last = presence.indexed[0], presence.indexed[-1]
    if releases.verdict == "every":
        title, cause, summary, steps = _in_every_release(engine, presence, releases.installed, block.message, caller)
    else:
        # The index reads some releases, not every one: a name none of them has may be in a release between two
        # indexed ones as well as in a newer or older one, so no direction is said (split 13: a wrapper's import
        # read as "a release newer than the newest or older than the oldest" while its fix was a release inside).
        count = len(presence.indexed)
        title = (f"No indexed {name} release has {presence.what}: check the {name} release the importing code pins")
        cause = (f"No {name} release logsleuth indexes has {presence.what} (it reads {count} releases from {first} to "
                 f"{last}, not every release published). Which release the code importing it ({caller}) was written "
                 f"for is not known from the log: a {name} release the index does not read, a name a plugin adds to "
                 f"{name} at run time (loaded before the import), a fork, or a development build.")
        summary = (f"Check which {name} the importing program pins or declares (its requirements, README or install "
                   "script) and install that release, or load the plugin or fork it names.")
        steps = (f"pip show {engine} (the installed release)",)
    return Diagnosis(
        pattern=RULE_ID,
        title=title,
        category="dependency-version",
        root_cause=cause,
        fix=Fix(summary=summary, steps=steps),
        references=SOURCES,
        engine=evidence.launch.engine,
        engine_version=evidence.launch.engine_version,
        basis="rule",
        evidence=(f"the failure: {block.type}: {block.message.strip().splitlines()[0]}", *_range_evidence(releases)),
    )


def _importing_frame(block: ExceptionBlock) -> Frame | None:
    """The innermost frame outside the import machinery and the standard library: the code that did the import."""
    own = [frame for frame in block.frames if not _LIBRARY_FRAME.search(frame.file)]
    return own[-1] if own else None


def _is_engine_code(frame: Frame, engine: str) -> bool:
    """A frame in the engine (installed, or a copy of it: a checkout beside the wheel is the engine's mixed install).
    A directory that only happens to be named after the engine (`top_nsigma/src/vllm/sampler.py`) is not: its file
    is none of the engine's own source files."""
    inside = engine_file(frame.file, engine)
    if inside is None:
        return any(engine_file(frame.file, other) is not None for other in ENGINE_NAMES if other != engine)
    if _INSTALLED.search(frame.file):
        return True
    return f"{inside}.json" in _engine_sources(engine) or inside.count("/") >= 2


@lru_cache(maxsize=len(ENGINE_NAMES))
def _engine_sources(engine: str) -> frozenset[str]:
    """The engine's indexed source files (raise_sites-<engine>.zip members: `vllm/sequence.py.json`)."""
    return frozenset(member_names(engine))


def _installed_package(frame: Frame) -> str | None:
    """The installed package the importing frame belongs to (None: a checkout or a script of the user's own)."""
    installed = _INSTALLED.search(frame.file)
    return installed["package"] if installed is not None else None
