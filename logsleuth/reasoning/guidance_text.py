"""The words of the general guidance (reasoning/general.py): a row's title and checks for the decided engine,
release and wrapper, checks that name a flag kept to the release's catalog, the settings the failing check reads, the
launch's settings the message speaks of, and the sentence that names a call between the engine's API and another
program's code."""

from __future__ import annotations

from collections.abc import Sequence

from logsleuth.command_line import CommandLine
from logsleuth.facts import requires
from logsleuth.facts.categories import CategoryRow, ConditionalCheck
from logsleuth.facts.compiled_ops import library_refused, namespace_named, owner_of, said_unloaded
from logsleuth.facts.engine_architectures import MULTIMODAL, implementing
from logsleuth.facts.imports import distributions_of
from logsleuth.facts.raise_sites import INSTALL_DIRS, engine_file, member_names
from logsleuth.fixes import catalog
from logsleuth.fixes.release_flags import in_every_known_release
from logsleuth.ingest.launch import compile_cache_in
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Failure, LaunchInfo
from logsleuth.reasoning.category_score import UNCLASSIFIED
from logsleuth.reasoning.engine_api_calls import MisfitCall, package_path
from logsleuth.reasoning.evidence import Evidence, exception_lines
from logsleuth.reasoning.message_settings import settings_the_message_names
from logsleuth.reasoning.raise_site import given_settings, site_of
from logsleuth.reasoning.setting_paths import settings_on_the_path
from logsleuth.tracebacks.chain import on_a_drive

_FLAG = compile_lazily(r"(?<![\w-])--[a-z][a-z0-9-]*")
# The categories where a failing check of the engine's code that reads a setting the launch gives is likely that
# setting's combination with the others (a quantized KV cache with one attention backend), a path of the engine
# other releases fixed or broke: the general checks name the settings, a run without them tells.
SETTING_COMBINATION_CATEGORIES = frozenset({"quantization", "engine-bug", "illegal-memory-access", "device-assert",
                                            "cuda-error", "cuda-graph-capture", "parallel-config", "nccl",
                                            "gpu-arch-unsupported", "native-crash", UNCLASSIFIED})


def flags_hold(text: str, engine: str, version: str | None) -> bool:
    """Every flag `text` names is one of the engine release's catalog; with the version unknown, one every
    shipped release of that engine has."""
    flags = _FLAG.findall(text)
    if not flags:
        return True
    if version:
        known = catalog.load(engine, version)
        return known is not None and all(known.find(flag) for flag in flags)
    releases = [v for e, v in catalog.available() if e == engine]
    return bool(releases) and all(set(catalog.versions_with(engine, flag)) == set(releases) for flag in flags)


def render_words(text: str, engine: str | None, version: str | None, wrapper: str | None = None) -> str:
    """`{release}`, `{engine}` and `{wrapper}` in a title or check: the engine's name, "<engine> <version>" and
    the program that ran the engine (LaunchInfo.wrapper)."""
    if not engine:  # "another {engine} release" reads "another release of the engine", not "another the engine release"
        text = text.replace("another {engine} release", "another release of the engine").replace("the {engine} release", "the engine release")
        text = text.replace("installed {engine}", "installed engine")
    name = ENGINE_NAMES.get(engine or "", engine or "the engine")
    release = f"{name} {version}" if version else name
    text = text.replace("{wrapper}", wrapper or "a wrapper")
    return text.replace("{release}", release).replace("{engine}", name)


def row_checks(row: CategoryRow, engine: str | None, version: str | None, wrapper: str | None = None,
               texts: tuple[str, ...] = (), given: frozenset[str] | None = None,
               multimodal_model: bool = False) -> tuple[str, ...]:
    """Those of the row's conditional checks whose words are in `texts` (the failure's own lines) first, then its
    neutral checks, then the decided engine's own; a check naming a flag only when the flag holds for the release.
    A conditional check is written for this failure's own shape (an NCCL timeout, an `undefined symbol`): in the
    threads it is the one that resolves that shape more often than the row's general first check, so it leads.
    `given`: the settings the launch gives (launch_settings), None when the paste shows none: a check about a setting
    (its `given`) is for a launch that gives it, and with the launch unseen it is said as a question ("if the launch
    gives …"); a flag the launch gives is the user's release's own, so it holds.  `multimodal_model`: the log's
    architecture is registered as multimodal in some indexed release (multimodal_architecture)."""
    kept = _kept_checks(row, engine, version, texts, given, multimodal_model)
    own = row.engine_checks.get(engine, ()) if engine else ()
    # (a check about a launch setting alone, with no words of the failure's, follows the row's own checks)
    worded = [c.check for c in kept if c.words.pattern]
    about_settings = [c.check for c in kept if not c.words.pattern]
    ordered = (*worded, *row.checks, *about_settings, *(c for c in own if _holds(c, engine, version)))
    return tuple(with_flag_releases(render_words(check, engine, version, wrapper), engine, version) for check in ordered)


def _holds(check: str, engine: str | None, version: str | None) -> bool:
    """A check's flags exist in the release (any check, with no engine decided)."""
    return not engine or flags_hold(check, engine, version)


def _kept_checks(row: CategoryRow, engine: str | None, version: str | None, texts: tuple[str, ...],
                 given: frozenset[str] | None, multimodal_model: bool) -> list[ConditionalCheck]:
    """The row's conditional checks shown for this failure: its words in `texts`, for this engine, about a setting
    the launch gives (or an unseen launch), for a multimodal model where marked so, and naming flags that hold for the
    release (a flag the launch gives holds)."""
    def holds_given(check: ConditionalCheck) -> bool:
        return ((bool(check.given) and given is not None and not given.isdisjoint(check.given))
                or _holds(check.check, engine, version))

    return [c for c in row.checks_when
            if (c.engine is None or c.engine == engine) and any(c.words.search(text) for text in texts)
            and (not c.given or given is None or not given.isdisjoint(c.given))
            and (multimodal_model or not c.multimodal_model) and holds_given(c)]


def checks_for_the_message(row: CategoryRow, engine: str | None, version: str | None, texts: tuple[str, ...],
                           given: frozenset[str] | None, multimodal_model: bool = False) -> tuple[str, ...]:
    """The row's checks written for this failure's words that row_checks shows (a conditional check whose words the
    failure holds and that is kept for this launch and release), as written: a setting one of them names is the
    check's own subject, so the general line about the settings the message speaks of is not added beside it.  A
    check not shown (its setting not given, its flag not in the release) suppresses nothing."""
    return tuple(c.check for c in _kept_checks(row, engine, version, texts, given, multimodal_model)
                 if c.words.pattern)


def multimodal_architecture(launch: LaunchInfo) -> bool:
    """Whether the log's architecture (vLLM's "Resolved architecture: X") is one some indexed release registers as
    multimodal (its class implements SupportsMultiModal: facts/engine_architectures.json.gz): a model known to take
    images or audio, which a release that reads it as text-only predates."""
    if not launch.architecture:
        return False
    return any(presence is not None and bool(presence.having)
               for presence in (implementing(engine, MULTIMODAL, launch.architecture) for engine in ENGINE_NAMES))


_OFF_VALUES = frozenset({"false", "none", "null", "0", "''", '""'})


def launch_settings(launch: LaunchInfo) -> frozenset[str] | None:
    """The settings the launch gives, as its flags and the names the engine's settings dump gives them (the command's
    flags, a `server_args=` dump's names set to something other than off, the switches a dump shows on); None when the
    paste shows neither a command nor a settings dump."""
    if not (launch.command or launch.server_args or launch.switches_on):
        return None
    flags = {flag for flag, _ in CommandLine.parse(launch.command).options} if launch.command else set()
    dumped = {name for name, value in launch.server_args if value.strip().lower() not in _OFF_VALUES}
    return frozenset(flags | dumped | set(launch.switches_on))


# A check about vLLM's torch.compile cache says `{compile_cache}`: the directory the log names (ingest/launch.py
# compile_cache_in: its "Using cache directory" line, or the frames of the Inductor modules that run from inside it),
# else where vLLM keeps it by default.
COMPILE_CACHE_DEFAULT = ("vLLM's compile cache (the directory its 'Using cache directory: …' line names; by default "
                         "~/.cache/vllm/torch_compile_cache, under VLLM_CACHE_ROOT when that is set)")


def with_compile_cache(check: str, failure: Failure, launch: LaunchInfo) -> str:
    """`{compile_cache}` in a check: the cache directory the log names, else where vLLM keeps it by default."""
    if "{compile_cache}" not in check:
        return check
    named = launch.compile_cache or next(
        (found for text in (*(frame.file for frame in failure.final.frames), *exception_lines(failure))
         if (found := compile_cache_in(text))), None)
    return check.replace("{compile_cache}", f"the cache directory the log names ({named})" if named else COMPILE_CACHE_DEFAULT)


def with_flag_releases(check: str, engine: str | None, version: str | None) -> str:
    """A check naming a flag that every release logsleuth knows has, with the release unknown, says how far back that
    is: the static catalogs reach back only so far (SGLang 0.3.0, vLLM 0.6.0) and a user on an older release would
    meet a second failure ("unrecognized arguments") by following it.  A flag only some known releases have is left to
    the shared mechanism, which notes its range on the fix's summary for every diagnosis (fixes/release_flags.py,
    range_note)."""
    if version or engine not in ENGINE_NAMES:
        return check
    name = ENGINE_NAMES[engine]
    notes = [f"{flag} is in {name} from {oldest} on (every release logsleuth knows)"
             for flag in dict.fromkeys(_FLAG.findall(check)) if (oldest := in_every_known_release(engine, flag))]
    if not notes:
        return check
    return (f"{check} (The log does not name your {name} release: {'; '.join(notes)}; an older release may lack it, "
            "check its --help.)")


def failure_texts(failure: Failure) -> tuple[str, ...]:
    """What a conditional check's words are searched in: the failure's exception lines, its native dump's frames
    and the lines printed just before it; of an earlier exception of the chain, the function that raised it (the
    cause's own failing call: an op's `forward_native`)."""
    raised_before = (block.frames[-1].function or "" for block in failure.exceptions[:-1] if block.frames)
    return (*exception_lines(failure), *(frame.function or "" for frame in failure.final.frames), *raised_before,
            *failure.context)


def settings_the_check_reads(evidence: Evidence, category: str, engine: str | None, version: str | None,
                             named: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """A check naming the settings the launch gives that the engine's failing check reads (the raise site index),
    when the category is one a setting's combination with the others can cause: leave them out to tell, and a newer
    release may have fixed the combination.  Only flags the release's catalog holds (every shipped release's with the
    version unknown), and not those a step before names already (`named`: the feature step's, reasoning/feature_code.py)."""
    if category not in SETTING_COMBINATION_CATEGORIES or engine is None:
        return ()
    site = site_of(evidence.failure, evidence.launch)
    given = ([(flag, value) for flag, value in given_settings(site, evidence.launch)
              if flags_hold(flag, engine, version) and flag not in named]
             if site is not None and site.engine == engine else [])
    name = ENGINE_NAMES.get(engine, engine)
    if given:
        reads = f"the {name} check that raised this reads {joined([flag for flag, _ in given])}, which the launch sets"
    else:
        # No indexed check of the engine's reads one (the failure was raised in torch's collective or a kernel the
        # engine called): the frames' modules still name the feature a setting turned on (reasoning/setting_paths.py).
        given = [(flag, value) for flag, value in settings_on_the_path(evidence.failure, evidence.launch, engine, version)
                 if flags_hold(flag, engine, version) and flag not in named]
        if not given:
            return ()
        reads = f"the failure ran through the code of {joined([flag for flag, _ in given])}, which the launch sets"
    settings = joined([f"{flag} {value}".rstrip() for flag, value in given])
    which = "it" if len(given) == 1 else "them"
    return (
        f"General guidance: {reads} ({settings}). Try the launch without {which} (the default): if it then runs, that "
        f"setting's combination with the others the launch gives is what fails, and a newer {name} release may have "
        "fixed it (search its issues for the failure's first line).",
    )


# The categories whose failure is the argument parser's own (a flag it lacks, a value it refuses, one it needs): the
# message names the flag, and the category's checks are about that flag already.
PARSER_CATEGORIES = frozenset({"unknown-flag", "invalid-flag-value", "missing-flag"})


def settings_the_message_speaks_of(evidence: Evidence, category: str, already: tuple[str, ...] = ()) -> tuple[str, ...]:
    """A check naming the launch's own settings whose name or value the failure's message says
    (reasoning/message_settings.py), with the values given: which of the user's settings the general checks are about.
    `already`: steps that name settings already (the raising check's); a setting one of them names is not repeated."""
    if category in PARSER_CATEGORIES:
        return ()
    named = [setting for setting in settings_the_message_names(evidence.failure, evidence.launch)
             if not any(setting.name in step for step in already)]
    if not named:
        return ()
    listed = joined([f"{setting.shown()} ('{setting.said_as}'{', an environment variable' if setting.environment else ''})"
                     for setting in named])
    if len(named) == 1:
        return (
            f"General guidance: the message speaks of a setting your launch gives: {listed}. The check that failed is "
            "about it: compare it with what the message says, and try the launch with it changed or left out (its "
            "default).",
        )
    return (
        f"General guidance: the message speaks of settings your launch gives: {listed}. The check that failed is about "
        "them: compare each with what the message says of it, and try the launch with one of them at a time changed "
        "or left out (its default) to find the one it refuses.",
    )


_NO_MODULE = compile_lazily(r"\bNo module named '([A-Za-z_][\w.]*)'")


def module_no_release_requires(evidence: Evidence, category: str, engine: str | None, version: str | None
                               ) -> tuple[str, ...]:
    """For a module that cannot be found, a check saying that the engine's releases do not require it, when the wheels'
    Requires-Dist (facts/requires.json) say so: the release does not install it, and comparing its version with a pin
    there is none of leads nowhere.  A feature that imports it needs it installed on its own (vLLM's gpt-oss kernels
    import triton_kernels, vllm-project/vllm#22290).  Only for the decided engine, a module of another package (not the
    engine's own), and a distribution the import table names or the module's own name."""
    if category != "dependency-version" or engine not in ENGINE_NAMES:
        return ()
    found = next((m for line in exception_lines(evidence.failure) if (m := _NO_MODULE.search(line))), None)
    if found is None:
        return ()
    module = found[1]
    top = module.split(".")[0]
    if top == engine:
        return ()
    distributions = distributions_of(module) or (top,)
    name = ENGINE_NAMES[engine]
    if version and requires.is_known(engine, version):
        if any(requires.pin(engine, version, d) is not None for d in distributions):
            return ()
        which = f"{name} {version} requires no package that installs it (its wheel's Requires-Dist)"
    else:
        if any(requires.declares(engine, d) for d in distributions):
            return ()
        releases = requires.known_releases(engine)
        which = (f"no {name} release logsleuth has read ({releases[0]} to {releases[-1]}, their wheels' Requires-Dist) "
                 "requires a package that installs it")
    return (
        f"The module {module!r}: {which}, so installing or reinstalling {name} does not bring it. It is an optional "
        "package that a feature of the launch imports (the frames or the lines before the error say which one): "
        "install it on its own, in the version that feature's documentation gives.",
    )


def misfit_why(misfit: MisfitCall) -> str:
    where = f"{package_path(misfit.frame.file)}:{misfit.frame.line}"
    if misfit.engine_calls_override:
        return f"the engine's code ({where}) calling {misfit.callee}, a method of a class no indexed package defines, with arguments it does not take"
    return f"a call into the engine's API ({misfit.callee or 'a class of the engine'}) refused at the caller's own frame ({where})"


def misfit_steps(misfit: MisfitCall | None, engine: str | None, version: str | None) -> tuple[str, ...]:
    """The sentence that names the misfitting call from the frames: who called what, and whose release to align."""
    if misfit is None:
        return ()
    name = ENGINE_NAMES.get(engine or "", "the engine")
    release = f"{name} {version}" if version and engine else f"the installed {name}" if engine else "the installed engine"
    where = f"{package_path(misfit.frame.file)}, line {misfit.frame.line}"
    if misfit.engine_calls_override:
        return (
            f"General guidance: {release}'s own code ({where}) called {misfit.callee}() with an argument that "
            f"method does not take. No indexed package defines its class: it is the wrapper's or a plugin's override of "
            f"the engine's method, written for a release whose signature was older. Upgrade the program that supplies "
            f"it to a release made for {release} (its release notes name the fix), or install the {name} release it "
            "supports.",
        )
    callee = f"{misfit.callee}()" if misfit.callee else "a class of the engine"
    return (
        f"General guidance: the call that failed is made by {where}, not by {name}'s code: it calls {callee} with "
        f"arguments that do not fit the signature of {release} (the message names the keyword or argument). That code "
        f"was written for another {name} release, one whose signature had them: install the {name} release that "
        f"program supports, or a release of that program made for {release}; your own script: change the call to the "
        f"signature of {release}'s API.",
    )


def platform_steps(failure: Failure, engine: str | None) -> tuple[str, ...]:
    """A check that leads every category's when the engine ran on native Windows (a frame's path starts with a drive
    letter): neither engine supports it (vLLM's installation guide, every release: "OS: Linux", "vLLM does not support
    Windows natively", use WSL; SGLang's packages have no Windows builds: sgl-kernel has no win_amd64 wheel,
    opendatalab/MinerU#3115, and uvloop does not build there, sgl-project/sglang#152), so any failure there may be the
    platform's before it is the category's."""
    if engine not in ENGINE_NAMES or not any(on_a_drive(frame.file) for block in failure.exceptions for frame in block.frames):
        return ()
    name = ENGINE_NAMES[engine]
    return (f"The frames' paths are Windows paths: {name} does not run natively on Windows (its releases are built "
            f"for Linux). Run it under WSL2 or in a Linux container before looking further.",)


def compiled_op_steps(failure: Failure, engine: str | None, version: str | None, version_source: str | None = None,
                      checkout_paths: Sequence[str] = (), editable_checkouts: Sequence[tuple[str, str]] = ()
                      ) -> tuple[str, ...]:
    """The package to reinstall, and what it must match, when torch refused a call to a compiled extension's operator
    or the loader refused the extension's shared object: the operator's namespace or the library's path names the
    extension (facts/compiled_ops.toml: `_vllm_fa2_C` is vllm-flash-attn, built into the vLLM wheel; `sgl_kernel` is
    sgl-kernel).  A pip command only for the engine's own wheel with the release the log shows or the user gives
    (`version_source`, LaunchInfo.engine_version_source): any other version would be a guess.  Never for a source
    checkout (its frames, or `checkout_paths`: LaunchInfo's paths of the engine's files outside an install directory,
    or `editable_checkouts`: an editable install's location of this engine) nor a development build's number (`.dev`, `+g<sha>`): no release wheel holds
    what that build has."""
    lines = exception_lines(failure)
    namespace = namespace_named(lines) or ""
    owner = owner_of(namespace) if namespace else None
    if owner is not None:
        shown = namespace if len(namespace) <= 60 else namespace[:57] + "…"  # flashinfer names a module by its configuration
        what = f"The operator's namespace '{shown}' is"
    elif refused := library_refused(lines):
        library, owner = refused
        what = f"The library the loader refused, {library}, is"
    elif owner := said_unloaded(failure.context):
        what = "The extension that says above that it could not load is"
    else:
        return ()
    step = (f"{what} {owner.module}, installed by {owner.distribution}; it must come from the same build as "
            f"{owner.built_with}. {owner.reinstall}")
    # the engine's own wheel holds the extension: only then is the engine's build (checkout, release) what to change
    own = engine if engine in ENGINE_NAMES and owner.distribution == engine else None
    if own is not None and (checkout := _source_checkout(failure, own, checkout_paths, editable_checkouts)):
        # A source checkout's compiled files are its own build: the release wheel of the same number lacks what the
        # checkout's branch adds, a second failure (not blind: split 13's "before" grading).
        step += (f" The engine runs from a source checkout ({checkout}), not an installed wheel: rebuild its compiled "
                 "extension from that checkout as its build instructions say, with the torch it pins; a release "
                 "wheel of the same version number lacks what the checkout's branch adds.")
    elif own is not None and version and DEVELOPMENT_BUILD.search(version):
        step += (f" {ENGINE_NAMES[own]} {version} is a development build (a commit between releases: a source "
                 "build or a nightly wheel), not a release: no release wheel has that number. Rebuild its compiled "
                 "extension from the same commit as its Python files, or install a release whole.")
    elif own is not None and version:
        named = f"{ENGINE_NAMES[own]} {version}"
        shown = f"The release you gave, {named}" if version_source == "user" else f"The log shows {named}"
        step += (f" {shown}: `pip install --force-reinstall {own}=={version}` "
                 f"puts back that release's own compiled files with the torch it pins.")
    return (step,)


# A development build's version: `0.6.1.dev238+ge2c6e0a82` (setuptools-scm: commits after the tag, the commit).
DEVELOPMENT_BUILD = compile_lazily(r"\.dev\d*|\+g[0-9a-f]{7}")


def _source_checkout(failure: Failure, engine: str, checkout_paths: Sequence[str] = (),
                     editable_checkouts: Sequence[tuple[str, str]] = ()) -> str | None:
    """Where the engine runs from a source tree, not from site-/dist-packages: a frame, or a path printed elsewhere
    in the log (a warning's location: `checkout_paths`), that is one of the engine's own indexed source files
    (`/home/u/vllm/vllm/_custom_ops.py`) outside an install directory; or pip's editable location for this engine
    (`pip show sglang`'s location is no checkout of vLLM: review 3 M3 of stop 50).  Else None.  A script in a
    directory named after the engine (`/home/u/vllm/bench.py`) or a cache path is no checkout (review 3 M2 of
    stop 49)."""
    editable = next((location for shown, location in editable_checkouts if shown == engine), None)
    if editable is not None:
        return editable
    sources = set(member_names(engine))
    frames = [frame.file for block in failure.exceptions for frame in block.frames]
    for path in (*frames, *checkout_paths):
        path = path.replace("\\", "/")
        if any(marker in path for marker in INSTALL_DIRS):
            continue
        inside = engine_file(path, engine)
        if inside is not None and f"{inside}.json" in sources:
            return path[: len(path) - len(inside)].rstrip("/") or "/"
    return None


def joined(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
