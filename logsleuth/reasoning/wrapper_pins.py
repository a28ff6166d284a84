"""Which engine release a wrapper supports, from what the paste says of it (issue 28: a wrapper calling an engine API
that changed).  When a wrapper's call does not fit the installed engine (reasoning/engine_api_calls.py, call_frames.py's
wrapper_call_into_engine), the fix is to run the two at releases made for each other.  The one fact a paste gives of
that is pip's resolver report, printed when an install left a conflict (pip's `src/pip/_internal/operations/check.py`
through `commands/install.py`: "{name} {version} requires {requirement}, but you have {dependency} {installed} which
is incompatible."): the wrapper's own release and the range of the engine it requires.  That range is quoted as pip
printed it, never widened or guessed; without it, which releases fit is asked (`needs_input`), since logsleuth has no
table of the wrappers' requirements.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from logsleuth.facts.engine_drivers import Driver
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES

_INCOMPATIBLE = "which is incompatible"
# pip's conflict line; the program's name starts at a word boundary (no other start is tried on a long word).
_PIP_CONFLICT = compile_lazily(
    r"(?<![\w.\-])(?P<program>[A-Za-z0-9][\w.\-]{0,80}) (?P<version>\d[\w.+!\-]{0,40}) requires "
    r"(?P<requirement>(?P<engine>vllm|sglang)(?:\[[\w,\-]{0,80}\])?[<>=!~][^\s,]{0,40}(?:,[<>=!~][^\s,]{0,40}){0,4}), "
    r"but you have (?P=engine) (?P<installed>\d[\w.+!\-]{0,40}) which is incompatible"
)


@dataclass(frozen=True)
class WrapperPin:
    """A program's requirement on the engine that the installed engine does not meet, as pip reported it."""

    program: str
    version: str
    requirement: str  # `vllm<=0.9.1`, as pip printed it
    engine: str
    installed: str

    def sentence(self) -> str:
        name = ENGINE_NAMES.get(self.engine, self.engine)
        return (f"pip reported that {self.program} {self.version} requires {self.requirement}, and {name} "
                f"{self.installed} is installed")


def wrapper_pin(lines: Iterable[str], engine: str | None) -> WrapperPin | None:
    """The last conflict pip reported between a program and the engine (`engine`, when decided) in `lines`."""
    found = None
    for line in lines:
        if _INCOMPATIBLE not in line or " requires " not in line:
            continue
        for m in _PIP_CONFLICT.finditer(line):
            if engine in (None, m["engine"]):
                found = WrapperPin(m["program"], m["version"], m["requirement"], m["engine"], m["installed"])
    return found


def release_alignment(pin: WrapperPin | None, engine: str | None, version: str | None, wrapper: str | None,
                      listed: tuple[Driver, ...] = ()) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The step that aligns the wrapper's and the engine's releases, and what is asked when the paste does not say
    which fit: (steps, needs_input).  `listed`: the packages that drive the engine which the log lists beside it
    (facts/engine_drivers.py), the likely callers when no frame shows the call."""
    name = ENGINE_NAMES.get(engine or "", "the engine")
    if pin is not None:
        return ((f"General guidance: {pin.sentence()}. Install a {name} release within {pin.requirement} (what "
                 f"{pin.program} {pin.version} supports), or a {pin.program} release made for {name} {pin.installed}.",),
                ())
    installed = f"{name} {version}" if version and engine else f"the installed {name}"
    if listed:
        names = ", ".join(driver.named for driver in listed)
        shows = ", ".join(f"pip show {driver.distribution}" for driver in listed if driver.distribution)
        return ((f"General guidance: the log lists {names} beside {installed}; no frame shows which made the call. "
                 f"Install the {name} release that program declares ({shows or 'its release notes'}: Requires:), or "
                 f"its release made for {installed}; a reinstall of {installed} alone changes nothing.",),
                (f"the traceback's frames above the error line (which program made the call), and the {name} releases "
                 "it supports",))
    program = wrapper or "the program that made the call"
    return ((), (f"which release of {program} runs, and which {name} releases it supports (its requirements or "
                 f"release notes), to pin one to the other ({installed} does not fit its call)",))


def serve_deployment_alignment(deployment: str | None, engine: str | None,
                               version: str | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A Ray Serve deployment calling the engine's API: the deployment is the user's own code (ray-project/ray#50275:
    a VLLMDeployment building vLLM's serving classes), and Ray's release pins no engine release, so neither a
    wrapper's release nor `pip show` of one helps: its calls and the engine's release are what to align."""
    name = ENGINE_NAMES.get(engine or "", "the engine")
    installed = f"{name} {version}" if version and engine else f"the installed {name}"
    which = f"the Ray Serve deployment {deployment}" if deployment else "the Ray Serve deployment"
    return ((f"General guidance: {which} is your program's code, and it calls {name}'s API (its serving classes or "
             f"engine) as another {name} release defined it; Ray's release does not pin {name}, so no Ray release "
             f"changes this. Adapt those calls to {installed}'s signatures (the class and the value the error line "
             f"names), or install the {name} release that code was written for.",),
            (f"which {name} release the deployment's code was written for",))
