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
from functools import lru_cache

from logsleuth.facts.engine_drivers import drivers_shown
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
# Frames that never did the import: the import machinery and the standard library's.
_LIBRARY_FRAME = compile_lazily(r"<frozen [\w.]+>|(^|/)(importlib|runpy|contextlib|functools)(/|\.py$)|/lib/python\d[\d.]*/[\w]+\.py$")
_INSTALLED = compile_lazily(r"(?:site|dist)-packages/(?P<package>[\w.-]+)/")
SOURCES = (
    "CPython Python/ceval.c import_from: \"cannot import name '{name}' from '{module}' ({file})\"; importlib: "
    "\"No module named '{module}'\"",
    "the engines' internal modules are not a stable API: names move between releases (vllm.sequence.SamplerOutput, "
    "vllm.utils.FlexibleArgumentParser; sglang.utils.launch_server_cmd added in a later release)",
)


def caller_imports_engine_name(evidence: Evidence) -> Diagnosis | None:
    block = evidence.failure.final
    if block.type.split(".")[-1] not in ("ImportError", "ModuleNotFoundError"):
        return None
    message = block.message.strip()
    found = _CANNOT_IMPORT.match(message) or _NO_MODULE.match(message)
    if found is None:
        return None
    engine = found["engine"]
    importer = _importing_frame(block)
    if importer is None and not any(b.frames for b in evidence.failure.exceptions):
        return _frameless_beside_a_driver(evidence, found)
    if importer is None or _is_engine_code(importer, engine):
        return None
    name = ENGINE_NAMES[engine]
    what = found.groupdict().get("name")
    missing = f"{what} from {found['module']}" if what else f"the module {found['module']}"
    program = evidence.launch.wrapper or _installed_package(importer)
    caller = program or f"the code in {package_path(importer.file).rsplit('/', 1)[-1]}"
    where = f"{importer.file}:{importer.line}" if importer.line else importer.file
    other_side = (f"a release of {program} made for the installed {ENGINE_NAMES[engine]}" if program else
                  f"that code updated to the installed {ENGINE_NAMES[engine]}'s names")
    return Diagnosis(
        pattern=RULE_ID,
        title=f"{caller[0].upper()}{caller[1:]} imports {missing}, which the installed {name} does not have",
        category="dependency-version",
        root_cause=(
            f"The import is made by {caller} ({where}), not by {name}'s own code: it was written for another {name} release, "
            f"one that has {missing}. {name} moves and drops the names of its internal modules between releases, so a "
            f"reinstall of the installed {name} brings the same files back."
        ),
        fix=Fix(
            summary=(f"Install the {name} release {caller} was written for (its requirements or documentation name "
                     f"it), or {other_side}."),
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
        evidence=(f"the failure: {block.type}: {message.splitlines()[0]}", f"the importing frame: {where}"),
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
    return Diagnosis(
        pattern=RULE_ID,
        title=f"{sentence} lacks {missing}, likely imported by {first.named}, written for another {name} release",
        category="dependency-version",
        root_cause=(
            f"{sentence} does not have {missing}. The log shows {beside} installed beside "
            f"{name}: such a package imports {name}'s internal modules and is written for a range of {name} releases, "
            f"which move and drop those names between releases. The paste shows no frame of the import, so which "
            f"package made it is read from what the log lists, not proven. A reinstall of {installed} brings the "
            "same files back."
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
                  *(f"{driver.named} ({driver.kind}), shown by {driver.shown_by}" for driver in drivers)),
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
