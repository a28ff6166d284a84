"""Dependency drift (issue 28, class 4): a third-party module that does not match what the engine release pins.

The shapes read (each from the code that raises it):
- `No module named 'X'` (CPython's import system: ModuleNotFoundError);
- `cannot import name 'N' from 'X' (path)` (CPython: ImportError);
- `module 'X' has no attribute 'N'` (CPython: AttributeError on a module);
- `path/X/....so: undefined symbol: S` (the dynamic loader, through ImportError or OSError);
- `Class.method() got an unexpected keyword argument 'k'` (CPython's signature check) raised at the engine's own call
  into a class a package the engine runs defines (flashinfer's `MultiLevelCascadeAttentionWrapper.plan()`): the
  engine's code was written against another release of that package (vllm-project/vllm#21822; the same mechanism
  as kvcache-ai/ktransformers#1278 and Infini-AI-Lab/MagicPIG#14, code written for another flashinfer release);
- version checks: transformers' `require_version` ("R is required for a normal functioning of this module,
  but found D==V", transformers/utils/versions.py), SGLang's `assert_pkg_version` ("D is installed with
  version V, which is less than the minimum required version M", "D with minimum required version M is not
  installed", sglang/srt/utils/common.py) and importlib.metadata's "No package metadata was found for D".

X is mapped to its distribution D by facts/imports.toml, and D's pin is read from the release's wheel
(facts/requires.json).  Nothing is said of the engine's own modules (`sglang.*`, `vllm.*`: an engine bug), of
a guessed engine version, or of a distribution no release declares."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace

from logsleuth import versions
from logsleuth.facts import requires
from logsleuth.facts.engine_classes import defined_by, distinctive, engines_defining
from logsleuth.facts.imports import distributions_of
from logsleuth.facts.package_sites import PACKAGES, package_of, versions_shown
from logsleuth.facts.torch_builds import lacks_the_gpu
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, ExceptionBlock, Fix
from logsleuth.reasoning.call_frames import innermost_own_frame
from logsleuth.reasoning.engine_api_calls import engine_of_frame
from logsleuth.reasoning.evidence import Evidence

RULE_ID = "rule-dependency-version"
CATEGORY = "dependency-version"
OWN_PACKAGES = {"sglang": ("sglang",), "vllm": ("vllm",)}
# Compiled extensions linked against torch's C++ ABI: an undefined symbol in one means it was built for
# another torch than the one installed.
# Each with the distribution pip installs it from (flash-attn's compiled module sits at the top level of site-packages).
TORCH_LINKED = {
    "sgl_kernel": "sgl-kernel", "flashinfer": "flashinfer-python", "flash_attn": "flash-attn",
    "flash_attn_2_cuda": "flash-attn", "vllm": "vllm", "vllm_flash_attn": "vllm-flash-attn", "xformers": "xformers",
}
# torch's C++ namespaces as the Itanium ABI mangles them (c10::, at::, torch::, caffe2::): a missing one of
# these is torch's library changing under the extension, not the extension's own code missing a piece.
_TORCH_SYMBOL = compile_lazily(r"^_ZN?K?(?:3c10|4c10d|2at|5torch|6caffe2)")
RUNS_SHOWN = 4  # pins of an unknown release: the newest runs of releases that agree

_NO_MODULE = compile_lazily(r"^No module named '(?P<module>[\w.]+)'")
_CANNOT_IMPORT = compile_lazily(r"^cannot import name '(?P<name>\w+)' from '(?P<module>[\w.]+)'")
_NO_ATTRIBUTE = compile_lazily(r"^module '(?P<module>[\w.]+)' has no attribute '(?P<name>\w+)'")
# Each pattern that opens with a run of name characters starts only where such a run starts (the lookbehinds):
# a search from every position inside a long run would cost time quadratic in its length.
_UNDEFINED = compile_lazily(r"(?<![^\s:'\"])(?P<path>[^\s:'\"]+\.so(?:\.[\w.]+)?): undefined symbol: (?P<symbol>\S+)")
_SITE = compile_lazily(r"(?:site|dist)-packages/(?P<inside>[^\s:'\"]+)$")
_REQUIRED = compile_lazily(
    r"(?<![\w.-])(?P<requirement>[\w.-]+\s*[<>=!~]=?\s*[\w.*]+(?:,\s*[<>=!~]=?\s*[\w.*]+)*) is required for a normal "
    r"functioning of this module, but found (?P<dist>[\w.-]+)==(?P<found>[\w.+]+?)\.?(?:\s|$)"
)
_BELOW_MINIMUM = compile_lazily(
    r"(?<![\w.-])(?P<dist>[\w.-]+) is installed with version (?P<found>\S+), which is less than the minimum required version"
)
_MINIMUM_MISSING = compile_lazily(r"(?<![\w.-])(?P<dist>[\w.-]+) with minimum required version \S+ is not installed")
_NO_METADATA = compile_lazily(r"No package metadata was found for (?P<dist>[\w.-]+)")
# CPython's refusal of a call's arguments, naming the callee (`Class.method()`).
_SIGNATURE = compile_lazily(
    r"^(?P<callee>[A-Za-z_]\w*(?:\.\w+)?)\(\) (?:got an unexpected keyword argument|got multiple values for argument"
    r"|missing \d+ required (?:positional|keyword-only) arguments?|takes (?:from )?\d+ (?:positional )?arguments?)"
)
_DISTRIBUTION_ONLY = compile_lazily(r"^(?P<dist>[A-Za-z0-9][\w.-]*)$")
# Two distributions of one project that must be the same release, checked when the package is imported:
# flashinfer's "flashinfer-cubin version (A) does not match flashinfer version (B)" (flashinfer/__init__.py,
# facts/raise_sites-flashinfer.zip; NVIDIA-NeMo/Export-Deploy#679).
_PAIR_MISMATCH = compile_lazily(
    r"(?<![\w.-])(?P<dist>[\w.-]+) version \((?P<found>[^()\s]+)\) does not match (?P<other>[\w.-]+) version "
    r"\((?P<other_found>[^()\s]+)\)"
)
# transformers' AutoConfig.register refusing a model type it now ships itself, which the engine registers at import
# (vLLM 0.9's 'aimv2'): transformers newer than the release was made for.
_REGISTERED_TWICE = compile_lazily(r"'(?P<name>[\w.-]+)' is already used by a Transformers config, pick another name")


@dataclass(frozen=True, slots=True)
class Drift:
    """What the failure says about one third-party module."""

    shape: str  # "missing", "missing-name", "missing-attribute", "undefined-symbol", "version-check", "pair-mismatch",
    # "signature"
    module: str  # as the message names it ("" when the message names the distribution only)
    distributions: tuple[str, ...]  # the distributions that install it
    said: str  # the failure's own line, "Type: message"
    name: str = ""  # the name or symbol it lacks
    library: str = ""  # the shared object the loader refused (its file name), for an undefined symbol
    found: tuple[str, ...] = ()  # the installed versions the message names, one per distribution (a pair mismatch)

    @property
    def torch_abi(self) -> bool:
        """A torch-linked extension that lacks one of torch's C++ symbols."""
        return (
            self.shape == "undefined-symbol"
            and self.module.split(".")[0] in TORCH_LINKED
            and _TORCH_SYMBOL.match(self.name) is not None
        )


def diagnose(evidence: Evidence) -> Diagnosis | None:
    """The rule (registry.RULES): a dependency-version diagnosis, or None when the failure is not one."""
    engine = evidence.launch.engine
    if engine is None:
        return _engine_not_named(evidence)
    if engine not in OWN_PACKAGES:
        return None
    for block in _final_and_its_causes(evidence.failure.exceptions):
        drift = _read(block, engine)
        if drift is not None:
            return _explain(drift, engine, evidence)
    return None


def with_release_pins(diagnosis: Diagnosis, evidence: Evidence) -> Diagnosis:
    """A pattern's dependency-version diagnosis, or the rule's when the release is known and its real pins answer:
    "X does not match what SGLang V pins (X==Y)" and that pin's pip command say more than a pattern written for
    every release, and never name a flag or an alternative the user's release lacks."""
    if diagnosis.category != "dependency-version" or evidence.launch.engine_version_source not in ("log", "user"):
        return diagnosis
    return diagnose(evidence) or diagnosis


def _final_and_its_causes(chain: tuple[ExceptionBlock, ...]) -> list[ExceptionBlock]:
    """The exception that ended the process, then those it was raised from (`raise … from`), newest first.  An
    import error that was only being handled ("During handling of the above exception") is not its cause."""
    blocks = [chain[-1]] if chain else []
    for earlier in reversed(chain[:-1]):
        if earlier.relation != "cause":
            break
        blocks.append(earlier)
    return blocks


def _read(block: ExceptionBlock, engine: str) -> Drift | None:
    message = block.message.strip()
    said = f"{block.type}: {message.splitlines()[0] if message else ''}"
    if (found := _UNDEFINED.search(message)) is not None:
        module = _module_of_path(found["path"])
        if module is None:
            return None
        library = found["path"].rsplit("/", 1)[-1]
        drift = Drift("undefined-symbol", module, _distributions(module, engine), said, found["symbol"], library)
        # The engine's own library missing its own symbol is a broken build of the engine, not drift.
        return None if _is_own(module, engine) and not drift.torch_abi else drift
    for shape, pattern in (("missing", _NO_MODULE), ("missing-name", _CANNOT_IMPORT), ("missing-attribute", _NO_ATTRIBUTE)):
        if (found := pattern.match(message)) is not None and block.type.split(".")[-1] in _TYPES[shape]:
            module = found["module"]
            if _is_own(module, engine):
                return None
            name = found.groupdict().get("name") or ""
            return Drift(shape, module, _distributions(module, engine), said, name)
    if (refused := _refused_call(block, engine, said)) is not None:
        return refused
    if (found := _PAIR_MISMATCH.search(message)) is not None:
        pair = tuple((distributions_of(d) or (requires.normalize(d),))[0] for d in (found["dist"], found["other"]))
        if any(d in OWN_PACKAGES or d == engine for d in pair):
            return None
        return Drift("pair-mismatch", "", pair, said, found=(found["found"], found["other_found"]))
    if (found := _REGISTERED_TWICE.search(message)) is not None:
        return Drift("registered-twice", "transformers", ("transformers",), said, found["name"])
    if block.type.split(".")[-1] == "PackageNotFoundError" and (found := _DISTRIBUTION_ONLY.match(message)) is not None:
        # importlib.metadata.version("D") raising for a distribution not installed under that name: its message is
        # the name alone (CPython's importlib/metadata; flashinfer-ai/flashinfer#794).
        distribution = requires.normalize(found["dist"])
        return None if distribution in OWN_PACKAGES or distribution == engine else Drift("missing", "", (distribution,), said)
    for pattern in (_REQUIRED, _BELOW_MINIMUM, _MINIMUM_MISSING, _NO_METADATA):
        if (found := pattern.search(message)) is not None:
            distribution = requires.normalize(found["dist"])
            if distribution in OWN_PACKAGES or distribution == engine:
                return None
            shape = "missing" if pattern in (_MINIMUM_MISSING, _NO_METADATA) else "version-check"
            return Drift(shape, "", (distribution,), said)
    return None


def _refused_call(block: ExceptionBlock, engine: str, said: str) -> Drift | None:
    """The engine's own code called a class of a package it runs with arguments the installed release of that package
    does not take: CPython's signature error names the callee (`MultiLevelCascadeAttentionWrapper.plan()`), a class
    only that package's indexed code defines, and the innermost frame outside torch and the standard library is the
    engine's own (the call is the engine's, not a wrapper's or a script's)."""
    found = _SIGNATURE.match(block.message.strip())
    if found is None or block.type.split(".")[-1] != "TypeError":
        return None
    owner = found["callee"].split(".")[0]
    if not distinctive(owner) or engines_defining(owner):
        return None
    packages = sorted(defined_by(owner) - set(OWN_PACKAGES))
    frame = innermost_own_frame(block.frames)
    own = engine_of_frame(frame.file) if frame is not None else None
    if len(packages) != 1 or own != engine:
        return None
    return Drift("signature", packages[0], _distributions(packages[0], engine), said, found["callee"])


_TYPES = {
    "missing": ("ModuleNotFoundError", "ImportError"),
    "missing-name": ("ImportError",),
    "missing-attribute": ("AttributeError",),
}


def _is_own(module: str, engine: str) -> bool:
    return module.split(".")[0] in OWN_PACKAGES[engine]


def _module_of_path(path: str) -> str | None:
    """`/x/site-packages/sgl_kernel/common_ops.abi3.so` -> `sgl_kernel.common_ops`; None outside a
    site-packages (a system library: not a Python distribution)."""
    found = _SITE.search(path)
    if found is None:
        return None
    parts = found["inside"].split("/")
    return ".".join([*parts[:-1], parts[-1].split(".", 1)[0]])


def _distributions(module: str, engine: str) -> tuple[str, ...]:
    """The distributions that install `module`: the table's, else the top-level name itself when a release of
    the engine declares a distribution of that name (`xgrammar`)."""
    found = distributions_of(module)
    if found:
        return found
    guess = requires.normalize(module.split(".")[0])
    return (guess,) if requires.declares(engine, guess) else ()


def _explain(drift: Drift, engine: str, evidence: Evidence) -> Diagnosis | None:
    launch = evidence.launch
    # A version guessed from the code layout may be wrong: its pins would be a wrong release's.
    version = launch.named_version
    name = ENGINE_NAMES[engine]
    if drift.shape == "registered-twice":
        # The release's own pin is no fix: its range may hold the newer transformers (a lower bound only).
        return _registered_twice(drift, engine, str(version)) if requires.is_known(engine, version) else None
    if requires.is_known(engine, version):
        pinned = [p for d in drift.distributions if (p := requires.pin(engine, version, d)) is not None]
        if drift.torch_abi:
            diagnosis = _torch_abi(drift, engine, str(version), pinned)
        elif not pinned:
            return None  # the release does not declare it: an optional import, not drift from its pins
        else:
            diagnosis = (_beyond_an_open_range(drift, engine, str(version), pinned[0], evidence)
                         or _against_release(drift, engine, str(version), pinned[0]))
        return _without_a_torch_the_gpu_cannot_run(diagnosis, engine, str(version), evidence)
    declared = [d for d in drift.distributions if requires.declares(engine, d)]
    if drift.torch_abi:
        declared = ["torch", *(d for d in declared if d not in ("torch", engine))]
    if not declared:
        return None
    return _unknown_release(drift, engine, version, declared, name)


def _what(drift: Drift) -> str:
    """The module and its distribution, as the title names them."""
    distribution = drift.distributions[0] if drift.distributions else "?"
    if not drift.module:
        return distribution
    return f"{drift.module} (distribution {distribution})"


def _facts(drift: Drift) -> list[str]:
    facts = [f"the failure: {drift.said}"]
    if drift.module and drift.distributions:
        facts.append(f"{drift.module} is installed by {', '.join(drift.distributions)} (logsleuth/facts/imports.toml)")
    return facts


def _shape_sentence(drift: Drift) -> str:
    """What the failure says, as a sentence (module names keep their case: no capitalizing)."""
    module = drift.module or (drift.distributions[0] if drift.distributions else "a dependency")
    return {
        "missing": f"The module {module} is not installed.",
        "missing-name": f"The installed {module} has no {drift.name}.",
        "missing-attribute": f"The installed {module} has no attribute {drift.name}.",
        "undefined-symbol": f"A compiled library of {module} needs the symbol {drift.name}, which the libraries loaded with it lack.",
        "version-check": f"A version check found another {module} than the one required.",
        "registered-twice": f"The installed transformers ships a config named '{drift.name}' itself, which the engine also registers when it is imported.",
        "pair-mismatch": _pair_sentence(drift),
        "signature": (f"The installed {module} refused the arguments of the engine's own call to {drift.name}(): the "
                      f"engine's code was written for another {module} release, one whose signature takes them."),
    }[drift.shape]


def _pair_sentence(drift: Drift) -> str:
    if drift.shape != "pair-mismatch" or len(drift.distributions) != 2 or len(drift.found) != 2:
        return ""
    (first, second), (first_found, second_found) = drift.distributions, drift.found
    return (f"The installed {first} {first_found} and {second} {second_found} are different releases, and {second} "
            f"refuses to load unless both are the same release.")


def _against_release(drift: Drift, engine: str, version: str, pin: requires.Pin) -> Diagnosis:
    name = ENGINE_NAMES[engine]
    declared = pin.requirement if pin.is_pinned else f"{pin.distribution} without a version"
    in_extra = f" in its extra {', '.join(pin.extras)}" if pin.extras else ""
    included = pin.included_by[:3]
    where = in_extra + (f" (which {', '.join(included)}{', …' if len(pin.included_by) > 3 else ''} include)" if included else "")
    evidence = [
        *_facts(drift),
        f"the log names {name} {version}",
        f"{name} {version} declares {declared}{where} (its wheel's Requires-Dist: logsleuth/facts/requires.json)",
        *(f"only where {marker}" for marker in pin.markers),
    ]
    install_pin = f"pip install {shlex.quote(pin.requirement)}"
    reinstall = f"pip install {shlex.quote(f'{engine}=={version}')}"
    if pin.extras:  # only an extra brings it: a plain reinstall of the release would not
        with_extra = f"pip install {shlex.quote(f'{engine}[{pin.extras[0]}]=={version}')}"
        steps = [with_extra, f"or only this distribution: {install_pin}"]
    elif pin.is_pinned or drift.shape == "missing":
        steps = [install_pin, f"or reinstall the release, so pip re-resolves every pin: {reinstall}"]
    else:
        steps = []  # declared without a version: the release names none to restore
    if pin.is_pinned:
        summary = f"Install the {pin.distribution} that {name} {version} pins ({pin.requirement})."
    else:
        summary = (
            f"{name} {version} declares {pin.distribution} without a version: install one that provides what the "
            f"failure names ({drift.name or drift.module})."
        )
    if drift.shape == "missing":
        title = f"{_what(drift)} is missing: {name} {version} declares {declared}{in_extra}"
        cause = "a plain install of the release does not bring it" if pin.extras else "it was not installed or was removed"
    else:
        title = f"{_what(drift)} does not match what {name} {version} pins ({declared})"
        cause = f"the installed {pin.distribution} is not that one (installed or upgraded after the engine, or by another package)"
    return Diagnosis(
        pattern=RULE_ID,
        title=title,
        category=CATEGORY,
        root_cause=f"{_shape_sentence(drift)} {name} {version} declares {declared}{where}: {cause}.",
        fix=Fix(summary=summary, steps=tuple(steps)),
        engine=engine,
        engine_version=version,
        basis="rule",
        evidence=tuple(evidence),
    )


# The shapes of a name the installed package no longer has (removed or renamed in a later release of it).
_RENAMED_SHAPES = ("missing-name", "missing-attribute")
# A lower bound in a specifier: ">=4.51.1" (the oldest release the engine declares it works with).
_LOWER_BOUND = compile_lazily(r"^\s*>=\s*(?P<version>\d[\w.]*)\s*$")


def _beyond_an_open_range(drift: Drift, engine: str, version: str, pin: requires.Pin, evidence: Evidence
                          ) -> Diagnosis | None:
    """A name the installed package lacks, where the release declares a range with no upper bound and the log shows
    an installed version inside it (pip list / pip freeze / collect_env): a reinstall of the release keeps that
    version, so the fix is the range's lower bound (the oldest release the engine declares, made before the rename)
    or a newer engine release; never "reinstall to re-resolve the pins" (vLLM's open transformers range before 0.11
    let transformers 5 in: vllm-project/vllm#30466, unslothai/unsloth#3908, nvidia-cosmos/cosmos-transfer1#174)."""
    package = package_of(pin.distribution)
    if drift.shape not in _RENAMED_SHAPES or package is None or PACKAGES[package].distribution != pin.distribution:
        return None
    parts = [part for part in pin.specifier.split(",") if part.strip()]
    lower = next((m["version"] for part in parts if (m := _LOWER_BOUND.match(part))), None)
    if lower is None or any("<" in part or "==" in part or "~=" in part for part in parts):
        return None  # bounded above or pinned: the release's own pin restores a version it was made for
    shown = versions_shown([*evidence.launch.package_lines, *evidence.failure.context], package)
    installed = shown[-1] if len(shown) == 1 else None
    if installed is None or installed == lower or not versions.matches((pin.specifier,), installed):
        return None  # not shown, several shown, or outside the range: the release's pin is the fix (_against_release)
    later = _next_lower_bound(engine, version, pin.distribution, lower)
    if later is None or not versions.matches((f">={later}",), installed):
        # Not yet as new as a later release of the engine asks for: the installed one may be too old for the name
        # (the release's range too loose), not too new; the release's own pin stays the advice.
        return None
    name = ENGINE_NAMES[engine]
    dist = pin.distribution
    return Diagnosis(
        pattern=RULE_ID,
        title=f"{dist} {installed} is newer than {name} {version} was made for (it declares {pin.requirement}, no upper bound)",
        category=CATEGORY,
        root_cause=(
            f"{_shape_sentence(drift)} The log shows {dist} {installed}, which is within what {name} {version} declares "
            f"({pin.requirement}): the range has no upper bound, so a reinstall of the release keeps {installed}. "
            f"A {dist} release after the ones {name} {version} was made for removed or renamed the name."
        ),
        fix=Fix(
            summary=(f"Install the oldest {dist} {name} {version} declares ({lower}), made before the rename; or a newer "
                     f"{name} release, written for {dist} {installed}."),
            steps=(f"pip install {shlex.quote(f'{dist}=={lower}')}",),
        ),
        engine=engine,
        engine_version=version,
        basis="rule",
        evidence=(*_facts(drift), f"the log names {name} {version}", f"the log shows {dist} {installed}",
                  f"{name} {version} declares {pin.requirement} (its wheel's Requires-Dist: logsleuth/facts/requires.json): "
                  "no upper bound, so pip keeps the installed release"),
    )


def _next_lower_bound(engine: str, version: str, distribution: str, lower: str) -> str | None:
    """The first lower bound above `lower` a later release of the engine declares for `distribution`: an installed
    version at or above it is from a later era than `version`'s."""
    later = [v for v in requires.known_releases(engine) if versions.matches((f">{version}",), v)]  # oldest first
    for release in later:
        pin = requires.pin(engine, release, distribution)
        bound = next((m["version"] for part in (pin.specifier if pin else "").split(",") if (m := _LOWER_BOUND.match(part))), None)
        if bound and versions.matches((f">{lower}",), bound):
            return bound
    return None


def _registered_twice(drift: Drift, engine: str, version: str) -> Diagnosis:
    """transformers newer than the release: the range the release declares as a fact, and no pip command (a range
    with no upper bound would keep the installed transformers)."""
    name = ENGINE_NAMES[engine]
    pin = requires.pin(engine, version, "transformers")
    declared = pin.requirement if pin is not None and pin.is_pinned else "transformers without a version"
    open_ended = pin is None or "<" not in pin.specifier
    facts = [
        f"the failure: {drift.said}",
        f"the log names {name} {version}",
        f"{name} {version} declares {declared} (its wheel's Requires-Dist: logsleuth/facts/requires.json)"
        + (": no upper bound, so pip keeps a newer transformers" if open_ended else ""),
    ]
    return Diagnosis(
        pattern=RULE_ID,
        title=f"transformers newer than {name} {version} was made for: both register the config '{drift.name}'",
        category=CATEGORY,
        root_cause=(f"{_shape_sentence(drift)} transformers refuses the second registration, so {name} cannot even be "
                    f"imported: the installed transformers is newer than {name} {version} was made for "
                    f"({name} {version} declares {declared})."),
        fix=Fix(
            summary=(f"Install a transformers older than the first release that ships '{drift.name}' (its release "
                     f"notes name it), within {declared}; or a newer {name} release, which no longer registers it."),
            steps=(f"Compare the installed transformers (pip show transformers) with what {name} {version} declares, {declared}"
                   + (", which a newer transformers also satisfies: a reinstall of the release does not change it."
                      if open_ended else "."),),
        ),
        engine=engine,
        engine_version=version,
        basis="rule",
        evidence=tuple(facts),
    )


def _torch_abi(drift: Drift, engine: str, version: str, pinned: list[requires.Pin]) -> Diagnosis | None:
    name = ENGINE_NAMES[engine]
    torch = requires.pin(engine, version, "torch")
    if torch is None or not torch.is_pinned:
        return None
    extension = next((p for p in pinned if p.is_pinned and p.distribution not in ("torch", engine)), None)
    installs = [torch.requirement] + ([extension.requirement] if extension is not None else [])
    # An extension the release does not pin (flash-attn beside vLLM): reinstalling the release's pins leaves it as it
    # was built, so the fix names it first (stop 39's blind split).
    unpinned = _unpinned_extension(drift, engine) if extension is None else None
    rebuild = (_rebuild_step(drift, unpinned, name),) if unpinned else ()
    facts = [
        *_facts(drift),
        *_abi_facts(drift),
        f"{drift.module.split('.')[0]} is a compiled extension linked against torch's C++ library",
        f"the log names {name} {version}",
        f"{name} {version} declares {', '.join(installs)} (its wheel's Requires-Dist: logsleuth/facts/requires.json)",
    ]
    return Diagnosis(
        pattern=RULE_ID,
        title=f"{drift.module} was built against another torch than {name} {version} pins ({torch.requirement})",
        category=CATEGORY,
        root_cause=(
            f"{_shape_sentence(drift)} The extension was compiled against another torch than the one installed. "
            f"{name} {version} pins {', '.join(installs)}."
        ),
        fix=Fix(
            summary=(f"Reinstall {unpinned} built for the installed torch, or install the torch {name} {version} pins "
                     f"({torch.requirement}) and a {unpinned} built for that one." if unpinned else
                     f"Install the torch {name} {version} pins ({torch.requirement}) and the extension built for it."),
            steps=(
                *rebuild,
                f"pip install {' '.join(shlex.quote(r) for r in installs)}",
                f"or reinstall the release, so pip re-resolves every pin: pip install {shlex.quote(f'{engine}=={version}')}",
            ),
        ),
        engine=engine,
        engine_version=version,
        basis="rule",
        evidence=tuple(facts),
    )


def _unpinned_extension(drift: Drift, engine: str) -> str | None:
    """The distribution of a torch-linked extension that no release of the engine pins (flash-attn), or None: the
    engine's own modules and what its releases pin come back with a reinstall of the release, flash-attn does not."""
    if not drift.torch_abi:
        return None
    distribution = TORCH_LINKED.get(drift.module.split(".")[0])
    if distribution is None or distribution == engine or requires.declares(engine, distribution):
        return None
    return distribution


def _rebuild_step(drift: Drift, distribution: str, name: str) -> str:
    """The extension named, with its shared object, rebuilt or reinstalled for the torch that is installed."""
    return (
        f"Reinstall or rebuild {distribution} against the installed torch: its compiled module {drift.library or drift.module} "
        f"was built for another torch. Install the {distribution} build made for the installed torch's version, CUDA "
        f"and C++ ABI (prebuilt wheels are built per torch version, CUDA version and cxx11abi TRUE/FALSE), or build it "
        f"from source in this environment; or remove it, if {name} runs without it."
    )


def _own_build_step(drift: Drift, declared: list[str]) -> tuple[str, ...]:
    """A torch-linked shared object the release itself installs: named, with the one case a reinstall from the
    index does not cover (a build from source, which must be rebuilt against the torch that is installed)."""
    if not drift.torch_abi:
        return ()
    owner = next((d for d in drift.distributions if d != "torch"), None) or next((d for d in declared if d != "torch"), None)
    if owner is None:
        return ()
    return (f"if {owner} was built from source here, rebuild it against the installed torch instead: its compiled "
            f"module {drift.library or drift.module} was built for another torch",)


def _abi_facts(drift: Drift) -> list[str]:
    """What the missing symbol's mangled name shows: std::__cxx11 types are the C++11 ABI's (torch's
    torch._C._GLIBCXX_USE_CXX11_ABI says which ABI the installed torch was built with)."""
    if "__cxx11" not in drift.name:
        return []
    return [
        "the missing symbol takes std::__cxx11 types: the extension was built with the C++11 ABI, so the installed "
        "torch differs from the one it was built against in its version or its ABI (torch._C._GLIBCXX_USE_CXX11_ABI)"
    ]


def _unpinned_extension_unknown_release(
    drift: Drift, engine: str, version: str | None, which: str, pins: list[str], distribution: str
) -> Diagnosis:
    """A torch-linked extension no release pins, the release unknown: the extension is what to rebuild; the
    release's torch pin is the other way, and reinstalling it leaves the extension as it was built."""
    name = ENGINE_NAMES[engine]
    what = drift.library or drift.module
    return Diagnosis(
        pattern=RULE_ID,
        title=f"{what} ({distribution}) was built against another torch than the one installed",
        category=CATEGORY,
        root_cause=(
            f"{_shape_sentence(drift)} The extension was compiled against another torch than the one installed "
            f"(another version, CUDA build or C++ ABI). {name} releases do not pin {distribution}, so reinstalling "
            f"{name} does not rebuild it."
        ),
        fix=Fix(
            summary=(f"Reinstall {distribution} built for the installed torch, or install the torch your {name} "
                     f"release pins and a {distribution} built for that one."),
            steps=(
                _rebuild_step(drift, distribution, name),
                f"pip show torch {distribution} (the versions to match)",
            ),
        ),
        engine=engine,
        engine_version=version,
        basis="rule",
        evidence=(
            *_facts(drift),
            f"{drift.module.split('.')[0]} is a compiled extension linked against torch's C++ library, installed by {distribution}",
            *_abi_facts(drift),
            which,
            *pins,
        ),
    )


def _without_a_torch_the_gpu_cannot_run(
    diagnosis: Diagnosis | None, engine: str, version: str, evidence: Evidence
) -> Diagnosis | None:
    """The diagnosis without its pip commands when the torch they pin (the release's own, which a reinstall of the
    release brings too) has no kernels for the GPU the log shows: following them leads into a second failure
    ("no kernel image is available").  What is known is said, and what is not is asked (`needs_input`)."""
    torch = requires.pin(engine, version, "torch")
    if diagnosis is None or diagnosis.fix is None or torch is None or not torch.is_pinned:
        return diagnosis
    lines = [*evidence.failure.context, *evidence.lines, *evidence.launch.gpu_lines]
    missing = lacks_the_gpu(torch.requirement, lines)
    if missing is None:
        return diagnosis
    name = ENGINE_NAMES[engine]
    fix = Fix(
        summary=(f"Do not simply reinstall {name} {version}'s pins: {missing.sentence()}. Match torch, its CUDA build "
                 "and the compiled extensions to this GPU instead."),
        needs_input=(
            f"which torch built for CUDA {missing.needs} or newer works with {name} {version} (or a newer {name} "
            "release whose pinned torch is), and the extensions built against it",
        ),
    )
    return replace(diagnosis, fix=fix, evidence=(*diagnosis.evidence, missing.sentence()))


def _pins_summary(engine: str, distribution: str) -> str:
    """`==4.54.1 (0.4.10.post1 to 0.4.10.post2), ==4.57.1 (0.5.9)`: the newest runs of releases that agree."""
    runs = requires.pins_across(engine, distribution)
    shown = [
        f"{spec or 'no version'} ({first}{'' if first == last else f' to {last}'})"
        for first, last, spec in runs[-RUNS_SHOWN:]
    ]
    hidden = runs[:-RUNS_SHOWN]
    older = f"; {len(hidden)} older pins, the first {hidden[0][2] or 'no version'} in {hidden[0][0]}" if hidden else ""
    return ", ".join(shown) + older


def _unknown_release(drift: Drift, engine: str, version: str | None, declared: list[str], name: str) -> Diagnosis:
    known = requires.known_releases(engine)
    which = (
        f"the log names {name} {version}, a release whose wheel logsleuth has not read"
        if version
        else f"the log does not name the {name} release (a version line, a version banner)"
    )
    pins = [f"{name} releases declare {d}: {_pins_summary(engine, d)}" for d in declared]
    subject = "the torch its extensions are built against" if drift.torch_abi else declared[0]
    # An extra's requirement comes only with that extra, and which extra varies by release (SGLang's vllm: srt,
    # then srt-hip only): name them, never pick one for a release we do not know.
    found = [p for v in known if (p := requires.pin(engine, v, declared[0])) is not None]
    extras = ", ".join(sorted({extra for p in found for extra in p.extras}))
    install = f'pip install "{engine}==<your version>"'
    only_extra = bool(found) and all(p.extras for p in found)
    if extras and not drift.torch_abi:
        only = only_extra
        pins.append(f"{'' if only else 'some '}{name} releases declare {declared[0]} only in an extra: {extras}")
        with_extra = f'pip install "{engine}[<extra>]==<your version>"'
        install = (
            f"{with_extra}, with the extra of your release that declares {declared[0]} ({extras})"
            if only
            else f"{install}, or where your release declares {declared[0]} only in an extra ({extras}): {with_extra}"
        )
    missing = drift.shape == "missing"
    unpinned = _unpinned_extension(drift, engine)
    if unpinned is not None:
        return _unpinned_extension_unknown_release(drift, engine, version, which, pins, unpinned)
    return Diagnosis(
        pattern=RULE_ID,
        title=(
            f"{_what(drift)} is missing: {name} releases declare {declared[0]}"
            if missing
            else f"{_what(drift)} does not match what the {name} release pins"
        ),
        category=CATEGORY,
        root_cause=(
            f"{_shape_sentence(drift)} {name} pins {subject} per release, and {which}, so the pin cannot be "
            f"named here. {pins[0]}."
        ),
        fix=Fix(
            summary=(_optional_path_summary(name, declared[0], extras) if missing and extras and only_extra
                     else f"Install the {declared[0]} your {name} release pins: reinstalling the release re-resolves "
                          "its pins."),
            steps=(
                f"pip show {engine} (its Version: line is your release)",
                install,
                *_own_build_step(drift, declared),
            ),
            needs_input=() if version else (release_needed(engine),),
        ),
        engine=engine,
        engine_version=version,
        basis="rule",
        evidence=(
            *_facts(drift),
            which,
            *pins,
            *([f"logsleuth knows the pins of {len(known)} {name} releases ({known[0]} to {known[-1]})"] if known else []),
        ),
    )


def release_needed(engine: str) -> str:
    """What to ask for when the log does not name the engine's release: the pins that answer a package's drift are
    that release's (facts/requires.json), and no guess stands in for it.  Both commands print the installed release
    (the distribution's metadata; the package's own `__version__`, sglang/version.py and vllm/version.py)."""
    name = ENGINE_NAMES.get(engine, engine)
    return (f"Your {name} release: `pip show {engine}` prints it (its Version: line), or "
            f"`python -c 'import {engine}; print({engine}.__version__)'`. Give it with --engine-version so that "
            "release's pins can be checked.")


def _optional_path_summary(name: str, distribution: str, extras: str) -> str:
    """A missing module that the releases logsleuth knows declare only in an extra: the engine imports it on an
    optional path (another platform, a host whose GPUs it cannot see, an optional feature), so which path the launch
    took comes before installing it; the user's release may declare it in no extra at all."""
    return (f"{distribution} is declared by the {name} releases logsleuth knows only in an extra ({extras}), so a "
            f"plain install does not bring it; an engine may also import such a module only on an optional path "
            f"(another platform, a host whose GPUs it cannot see, an optional feature). Check both: whether your "
            f"release declares it in an extra (install it with that extra if so), and that the launch takes the path "
            f"you meant (the GPUs visible to it).")


# Shapes read when the log names no engine.  A module that is simply missing (`No module named 'X'`) is left to
# the general guidance: a script of the user's own raises it as often as an engine does.
_WITHOUT_ENGINE_SHAPES = ("missing-name", "missing-attribute", "version-check", "pair-mismatch")


def _engine_not_named(evidence: Evidence) -> Diagnosis | None:
    """A third-party import error or version check, the log naming no engine (a bare line, a wrapper's paste): the
    pins of the engines whose releases declare the package, never a guess at which engine runs
    (sgl-project/sglang#2166, sgl-project/sglang#2550, flashinfer-ai/flashinfer#794)."""
    for block in _final_and_its_causes(evidence.failure.exceptions):
        read = [_read(block, engine) for engine in OWN_PACKAGES]  # None for either engine's own module
        if any(drift is None for drift in read):
            continue
        drift = read[0]
        assert drift is not None
        distributions = tuple(dict.fromkeys(d for found in read if found is not None for d in found.distributions))
        drift = replace(drift, distributions=distributions)
        version_check_missing = drift.shape == "missing" and not drift.module  # "D ... is not installed"
        if drift.shape not in _WITHOUT_ENGINE_SHAPES and not version_check_missing:
            return None
        declaring = {engine: [d for d in distributions if requires.declares(engine, d)] for engine in OWN_PACKAGES}
        if not any(declaring.values()):
            return None
        return _pins_of_both_engines(drift, declaring)
    return None


def _pins_of_both_engines(drift: Drift, declaring: dict[str, list[str]]) -> Diagnosis:
    subject = next(d for found in declaring.values() for d in found)
    names = [ENGINE_NAMES[engine] for engine, found in declaring.items() if found]
    pins = [f"{ENGINE_NAMES[engine]} releases declare {d}: {_pins_summary(engine, d)}"
            for engine, found in declaring.items() for d in found]
    missing = drift.shape == "missing"
    pair = drift.shape == "pair-mismatch"
    if pair:
        summary = (f"Install {' and '.join(drift.distributions)} of one release, the one your engine release pins: "
                   "reinstalling the release re-resolves both.")
    else:
        summary = f"Install the {subject} your engine release pins: reinstalling the release re-resolves its pins."
    return Diagnosis(
        pattern=RULE_ID,
        title=(f"{_what(drift)} is missing: {' and '.join(names)} releases declare {subject}" if missing
               else f"{' and '.join(drift.distributions)} do not match what the engine release pins" if pair
               else f"{_what(drift)} does not match what the engine release pins"),
        category=CATEGORY,
        root_cause=(f"{_shape_sentence(drift)} {' and '.join(names)} pin {subject} per release, and the log names "
                    f"neither the engine nor its release, so the pin cannot be named here. {pins[0]}."),
        fix=Fix(
            summary=summary,
            steps=(
                f"pip show {' '.join(OWN_PACKAGES)} (the one installed runs this server; its Version: line is your release)",
                'pip install "<engine>==<your version>" (the engine and release pip show named)',
                f"not an SGLang or vLLM launch (a training script, a notebook): the {subject} that program's own "
                "requirements name",
            ),
        ),
        basis="rule",
        evidence=(*_facts(drift), "the log names no engine (no program, path or command of SGLang or vLLM)", *pins),
    )
