"""The program without its command line: sources in, a `Report` out.

Imports neither typer nor rich.  The CLI, watch mode and the tests all go through
`diagnose()` / `diagnose_text()`, so they share one code path; only the source differs.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING

from logsleuth.command_line import flag_value
from logsleuth.diagnosis.grouping import (
    Grouper,
    fingerprint,
    is_cascade,
    is_shutdown_noise,
    names_no_cause,
    names_no_exception,
    signature,
)
from logsleuth.diagnosis.library import PatternSet, load_patterns
from logsleuth.diagnosis.match import engine_unknown_diagnosis, match_failure, other_program
from logsleuth.diagnosis.restated import fold_restatements, without_cut_outer_traceback
from logsleuth.diagnosis.schema import Pattern
from logsleuth.errors import SourceError, UsageError
from logsleuth.facts.raise_sites import RaiseSite
from logsleuth.fixes import static_catalogs
from logsleuth.fixes.build import NOT_ASSEMBLERS, build_fix
from logsleuth.fixes.builders import BUILDERS
from logsleuth.fixes.builders.arguments import refused_choice
from logsleuth.fixes.context import interpolate
from logsleuth.fixes.encoder_attention import for_encoder
from logsleuth.fixes.release_flags import with_release_flags
from logsleuth.fixes.server_args import command_from_server_args
from logsleuth.fixes.upgrade import with_upgrade
from logsleuth.ingest import engine_from_message
from logsleuth.ingest.launch import LaunchTracker
from logsleuth.ingest.startup_trail import StartupTrail, stall_guidance
from logsleuth.models import (
    ClockOffset,
    Diagnosis,
    Failure,
    FailureGroup,
    LaunchInfo,
    Report,
    SourceInfo,
    nothing_to_judge,
)
from logsleuth.reading.reader import DEFAULT_MAX_BYTES, read_all, read_latest
from logsleuth.reading.scan import ReadResult
from logsleuth.reasoning import dependencies
from logsleuth.reasoning.architecture_support import REGISTRY_PATTERNS, with_registry_releases
from logsleuth.reasoning.engine_words import checked, with_engine_words
from logsleuth.reasoning.evidence import exception_lines
from logsleuth.reasoning.guidance_text import launch_settings
from logsleuth.reasoning.hardware import third_party_kernel_gap
from logsleuth.reasoning.model_type_support import MODEL_TYPE_PATTERN, with_model_type_releases
from logsleuth.reasoning.nccl_last_error import with_nccl_last_error
from logsleuth.reasoning.package_site import package_site_of, with_package_site
from logsleuth.reasoning.platform import with_platform
from logsleuth.reasoning.platform_runtime import with_platform_runtime
from logsleuth.reasoning.raise_site import site_of, with_raise_site, with_version_from_frames
from logsleuth.reasoning.registry import Evidence, reason
from logsleuth.reasoning.relaxed_check import with_relaxed_check
from logsleuth.reasoning.remote_code_scope import without_remote_code
from logsleuth.reasoning.root_cause import earlier_failures, with_root_cause
from logsleuth.reasoning.shared_gpu import with_shared_gpu
from logsleuth.reasoning.shared_libraries import known_library_missing
from logsleuth.reasoning.startup_leads import startup_leads
from logsleuth.sources.base import Progress, ReportsProgress, Source
from logsleuth.sources.fanout import DEFAULT_PARALLEL, IdleWork, one_at_a_time
from logsleuth.sources.open import (
    is_remote,
    open_sources,
    read_concurrently,
    read_specs,
    with_workloads_expanded,
)
from logsleuth.sources.options import SSHOptions
from logsleuth.tracebacks.indexed_statement import with_type_from_index

if TYPE_CHECKING:  # health's modules are imported when `health` runs: a diagnose does not pay for them
    from logsleuth.health.model import HealthReport
    from logsleuth.health.run import HealthOptions


@dataclass(frozen=True)
class DiagnoseOptions:
    """What to read and how (the command line's options, without the output's)."""

    all_failures: bool = False  # every failure group in the file, not only the latest launch
    command: str | None = None  # the launch command, when the user gives it (--cmd)
    engine_version: str | None = None  # overrides what the log suggests
    engine: str | None = None  # the engine, when the caller knows it ("sglang", "vllm"): positive evidence
    pattern_dirs: tuple[str, ...] = ()
    include_user_patterns: bool = True
    max_bytes: int = DEFAULT_MAX_BYTES
    ssh: SSHOptions = field(default_factory=SSHOptions)
    parallel: int = DEFAULT_PARALLEL  # remote sources read at once (--parallel); 1: one after another
    host: str | None = None  # the name of this machine in the report (--host); None: its host name




def load_library(options: DiagnoseOptions) -> PatternSet:
    """The pattern layers the options name, checked against the fix builders this version has."""
    return load_patterns(options.pattern_dirs, include_user=options.include_user_patterns, known_builders=BUILDERS)


# on_source(name, state, detail): a source's progress for the CLI's per-host line.  `state` is "connecting"
# (a remote spec, by its spec), then for each source it names "reading" and "done" or "error" (by the source's
# name; detail: the one-line error).  A spec that cannot be opened goes from "connecting" to "error".
OnSource = Callable[[str, str, str | None], None]
# What reading one source gave: its description (name, host, size, error) and, when it could be read, what was read.
SourceResult = tuple[SourceInfo, ReadResult | None]


def diagnose(
    specs: Sequence[str],
    options: DiagnoseOptions | None = None,
    *,
    patterns: PatternSet | None = None,
    progress: Progress | None = None,
    on_source: OnSource | None = None,
) -> Report:
    """Diagnose one or more sources (`path`, `-`, `host:path`).  A source that cannot be read is recorded in
    `Report.sources` with its error; the others go on.  The report is the same whatever `options.parallel`.

    Remote specs are opened and read at once, `options.parallel` at a time, on worker threads: `on_source`,
    `progress` and the SSH options' callbacks are then called from those threads, and must be thread-safe.
    Local specs (and stdin) are read first, in the caller's thread: a large local file is searched by forked
    processes, and a fork is safest with no other thread running."""
    options = options or DiagnoseOptions()
    patterns = patterns or load_library(options)
    specs = with_workloads_expanded(specs)  # each pod of a Kubernetes workload is read as a source
    remote = [spec for spec in specs if read_concurrently(spec)]
    # While sources connect (in the SSH helper), compile pattern regexes: matching would do it later anyway.
    read = partial(
        _read_spec,
        options=options,
        progress=progress,
        on_source=on_source or _ignore,
        while_waiting=one_at_a_time(patterns.compile_next),
        # Several hosts: their failures are ordered by time, which needs their clocks (diagnosis/fleet.py).
        # One remote spec is one host: its clock would change nothing, so it costs nothing.
        with_clock=len(remote) > 1,
    )
    results = read_specs(specs, read, parallel=options.parallel)
    return build_report([result for per_spec in results for result in per_spec], options, patterns)


def _ignore(name: str, state: str, detail: str | None) -> None:
    pass


def _read_spec(
    spec: str,
    *,
    options: DiagnoseOptions,
    progress: Progress | None,
    on_source: OnSource,
    while_waiting: IdleWork,
    with_clock: bool,
) -> list[SourceResult]:
    """Open and read every source a spec names (a remote glob may name several)."""
    if read_concurrently(spec):
        on_source(spec, "connecting", None)
    try:
        sources = open_sources(spec, options.ssh, while_waiting=while_waiting)
    except SourceError as exc:
        on_source(spec, "error", str(exc))
        return [(SourceInfo(name=spec, bytes_read=0, size=None, error=str(exc), host=_host_named(spec)), None)]
    return [_read_source(source, options, progress, on_source, with_clock) for source in sources]


def _host_named(spec: str) -> str | None:
    """The host a remote spec names (for a source that could not even be opened), None for a local one."""
    from logsleuth.sources.spec import parse_remote_spec

    try:
        remote = parse_remote_spec(spec) if is_remote(spec) else None
    except UsageError:
        return None
    return remote.host if remote else None


def _read_source(
    source: Source, options: DiagnoseOptions, progress: Progress | None, on_source: OnSource, with_clock: bool
) -> SourceResult:
    """Read one source and close it; with `with_clock`, also measure its host's clock, over its connection
    while it is still open."""
    on_source(source.name, "reading", None)
    try:
        if progress is not None and isinstance(source, ReportsProgress):
            source.progress = progress
        source = in_written_order(source)
        result = _read(source, options)
        clock = _clock_of(source) if with_clock else None
    except SourceError as exc:
        on_source(source.name, "error", str(exc))
        return (SourceInfo(source.name, 0, None, error=str(exc), host=source.host), None)
    finally:
        source.close()
    if result.size == 0:  # nothing was written: not a clean log, and no failure may be inferred from it
        on_source(source.name, "error", nothing_to_judge(source.name))
        return (SourceInfo(source.name, 0, 0, error=nothing_to_judge(source.name), host=source.host), None)
    on_source(source.name, "done", None)
    note = getattr(source, "note", None)  # a runtime source's word on where its log came from
    info = SourceInfo(
        source.name, result.bytes_read, result.size, capped=result.capped, clock=clock, note=note, host=source.host
    )
    return (info, result)


def _read(source: Source, options: DiagnoseOptions) -> ReadResult:
    """The latest launch's failures (every failure with `--all`).  A runtime's log (`docker logs`) is fetched by
    a command a number of lines at a time: it is widened until the latest launch is complete, or to every
    line for `--all`."""
    from logsleuth.reading.reader import read_latest_widening
    from logsleuth.sources.runtime.command import CommandSource

    if isinstance(source, CommandSource):
        if options.all_failures:
            source.widen(to_all=True)
            return read_all(source)
        return read_latest_widening(source, max_bytes=options.max_bytes)
    return read_all(source) if options.all_failures else read_latest(source, max_bytes=options.max_bytes)


def _clock_of(source: Source) -> ClockOffset | None:
    from logsleuth.sources.ssh.clock import clock_of  # no paramiko: only the protocol and the measurement

    return clock_of(source)


def diagnose_text(text: str, options: DiagnoseOptions | None = None, *, patterns: PatternSet | None = None) -> Report:
    """Diagnose log text held in memory (tests, pasted snippets)."""
    from logsleuth.sources.memory import MemorySource

    options = options or DiagnoseOptions()
    patterns = patterns or load_library(options)
    source = in_written_order(MemorySource(text.encode("utf-8", errors="surrogateescape")))
    result = read_all(source) if options.all_failures else read_latest(source, max_bytes=options.max_bytes)
    info = SourceInfo(source.name, result.bytes_read, result.size, capped=result.capped, note=getattr(source, "note", None))
    return build_report([(info, result)], options, patterns)


def in_written_order(source: Source) -> Source:
    """A local log exported newest line first (a cloud console's export), as a source of its lines in the order
    they were written, with a note that says so; any other source as it is.  (Remote logs are never exported
    this way: no round trip is spent on them.)"""
    from logsleuth.ingest.order import REVERSIBLE_BYTES, newest_first, reversed_lines
    from logsleuth.sources.local import LocalFileSource
    from logsleuth.sources.memory import MemorySource

    if not isinstance(source, (LocalFileSource, MemorySource)) or getattr(source, "note", None) is not None:
        return source  # a remote or runtime log, or one already put in order
    size = source.size()
    if size > REVERSIBLE_BYTES or size == 0:
        return source
    head = b"".join(source.read_range(0, min(size, 64 << 10)))
    if not newest_first(head.decode("utf-8", errors="surrogateescape")):
        return source
    data = b"".join(source.read_range(0, size))
    source.close()
    ordered = MemorySource(reversed_lines(data), name=source.name)
    ordered.note = "its lines are newest first (a console's export): read in reverse, line numbers count from its last line"
    return ordered


def build_report(
    results: Iterable[SourceResult],
    options: DiagnoseOptions,
    patterns: PatternSet,
) -> Report:
    from logsleuth.diagnosis.fleet import build_fleet  # here, not at the top: this function's own import
    from logsleuth.machine import this_machine

    reporter = this_machine(options.host)
    grouper = Grouper()
    trackers: dict[str, LaunchTracker] = {}  # source name -> what its log says about its launches
    infos: list[SourceInfo] = []
    context_lines: list[str] = []
    for info, result in results:
        # A log read here is taken to be in this machine's time zone (a merge orders zone-less times by it).
        infos.append(replace(info, utc_offset=reporter.utc_offset) if info.host is None else info)
        if result is None:
            continue
        trackers[info.name] = result.tracker
        context_lines.extend(result.cascade_lines)
        if result.groups is not None:
            grouper.merge(result.groups)  # read the dense way: grouped while reading
        else:
            for failure in result.failures:
                grouper.add(failure, info.name, info.host)
    launch = _merge_launch(list(trackers.values()), options)
    launch = _with_release_from_choices(launch, grouper.groups())
    warnings = list(patterns.errors)
    disabled: set[str] = set()  # patterns whose regex timed out: skipped for the rest of this report
    groups: list[FailureGroup] = []
    # fingerprint -> the release its frames' line numbers point at (a fold rebuilds the group, its fingerprint stays)
    framed_versions: dict[str, str] = {}
    by_id = {p.id: p for p in patterns.patterns}
    # Failures that follow another (their pattern or text says so): still so once a root cause renames them.
    cascades: set[str] = set()
    in_order = grouper.groups()
    # The failure the same log printed next, as `Type: message` lines: what a wrapper's line reports may be printed
    # right below it.
    following = _following_lines(in_order)
    for position, group in enumerate(in_order):
        # The failures of the same log printed before this one: a crash's cause may be one of them.
        before = [g.failure for g in groups if set(g.sources) & set(group.sources)]
        own = _own_launch(group, launch, trackers, options)
        # A traceback cut before its exception line: the type of the indexed check at its last frame's line, inferred
        # (tracebacks/indexed_statement.py)
        if (typed := with_type_from_index(group.failure, own)) is not group.failure:
            group = replace(group, failure=typed)
        # a chain's outer traceback cut before its exception line, still untyped: the chain ends at its cause
        if (shortened := without_cut_outer_traceback(group.failure)) is not group.failure:
            group = replace(group, failure=shortened, signature=signature(shortened), fingerprint=fingerprint(shortened))
        # The engine's own check that raised it, looked up once in the raise site index (reasoning/raise_site.py):
        # shown with the diagnosis, and its line numbers correct a release guessed from the code layout.
        site = site_of(group.failure, own)
        own = with_version_from_frames(own, site)
        found = _diagnose_group(group, patterns.patterns, own, context_lines, warnings.append, disabled,
                                earlier=_earlier_lines(before), following=following[position])
        # A diagnosis that names a symptom (a native crash, a kill) gives way to the cause an error line names, or
        # a failure printed just before it.
        named = _named_cause(found, before, by_id, cascades)
        symptom_renamed = named.diagnosis is not found.diagnosis
        # Where the failure shown was raised stays evidence when its diagnosis gives way to a cause printed elsewhere.
        named = with_raise_site(named, site, own)
        if site is None:  # else a check of a package the engine runs (transformers, flashinfer...), if it raised
            named = with_package_site(named, package_site_of(group.failure, own, [*group.cascade, *context_lines]))
        if not symptom_renamed:
            # A later release that no longer makes that check for this launch: an upgrade past it, as an alternative
            # (not when the diagnosis names another failure's cause: an upgrade past the symptom's check fixes none).
            named = with_relaxed_check(named, site, own)
        found = named
        # Whatever gave the diagnosis (pattern, rule, general): the instructions of the engine's own message, checked.
        # And no flag its release lacks is offered (fixes/release_flags.py).
        # And an out-of-memory failure whose torch figures show memory held by other processes says so, with the
        # memory fraction that fits beside them (reasoning/shared_gpu.py).
        # And a graph capture broken inside ROCm's runtime points at that runtime (reasoning/platform_runtime.py).
        shared = with_platform_runtime(with_shared_gpu(found.diagnosis, found.failure, own.engine), found.failure)
        # And on a log that shows another accelerator than NVIDIA's, no NVIDIA-only check (reasoning/platform.py).
        shared = with_platform(shared, found.failure, own)
        # And a failure in a multimodal encoder's attention is never told to change the LLM's attention backend
        # (fixes/encoder_attention.py).
        shared = for_encoder(shared, found.failure, own)
        checked = with_release_flags(with_engine_words(shared, found.failure, own), own,
                                     _releases_holding(found, site, own))
        groups.append(replace(found, diagnosis=checked))
        if own.engine_version is not None and own.engine_version_source == "inferred":
            framed_versions.setdefault(groups[-1].fingerprint, own.engine_version)
    launch = _with_engine_from_words(launch, groups)
    # A failure the log only restates (re-raised, cut, a native record of it) is a line of its cascade.  Not with
    # --all: it asks for every failure group of the whole file, each launch's, counted as the grouping counts them.
    ordered = _order(groups, by_id, cascades)
    groups = ordered if options.all_failures else fold_restatements(ordered)
    if groups and groups[0].fingerprint in framed_versions and launch.engine_version_source == "inferred":
        # The header's guess agrees with what the root failure's frames show (issue 29: one version per report).
        launch = replace(launch, engine_version=framed_versions[groups[0].fingerprint], engine_version_source="inferred")
    fleet, groups = build_fleet(infos, groups, lambda group: group.fingerprint in cascades or _is_cascade(group, by_id))
    return Report(
        sources=tuple(infos),
        failures=tuple(groups),
        launch=launch,
        warnings=tuple(dict.fromkeys(warnings)),
        omitted_failures=grouper.omitted_failures,
        omitted_groups=grouper.omitted_distinct.value,
        omitted_groups_estimated=grouper.omitted_distinct.estimated,
        fleet=fleet,
        launches=_launches(groups, trackers),
        reporter=reporter,
    )


def _launches(groups: list[FailureGroup], trackers: dict[str, LaunchTracker]) -> int:
    """The most launches of one source that the failures come from: a launch command or `server_args=` line
    between one failure's end and the next failure is a relaunch."""
    failures: dict[str, list[tuple[int, int]]] = {}
    for group in groups:
        source = group.sources[0] if group.sources else None
        if source is not None and source in trackers:
            failures.setdefault(source, []).append((group.failure.offset, group.failure.end_offset))
    most = 1
    for source, spans in failures.items():
        lines = trackers[source].launch_lines
        spans.sort()
        relaunches = sum(1 for (_, end), (start, _) in zip(spans, spans[1:], strict=False)
                         if any(end <= line < start for line in lines))
        most = max(most, 1 + relaunches)
    return most


def _merge_launch(trackers: list[LaunchTracker], options: DiagnoseOptions) -> LaunchInfo:
    """The launch the report is about (its header and JSON `launch`): the first source to know wins."""
    merged = LaunchTracker()
    for tracker in trackers:  # one per source: hosts of the same launch, the first to know wins
        merged.absorb(tracker, later_command_wins=False)
    if options.command:
        merged.observe_user_command(options.command)
    launch = merged.info(options.command, options.engine_version)
    if len(trackers) == 1 and trackers[0].ended_in_startup():
        trail = trackers[0].startup
        stalled = trail.stalled()
        guidance = stall_guidance(trail.stage, wrapper=launch.wrapper is not None, platform=_platform(launch, trail),
                                  parallel=_parallel(launch, trail)) if stalled else ()
        launch = replace(launch, ended_in_startup=True, startup_stage=trail.stage, startup_stalled=stalled,
                         startup_guidance=guidance, startup_poll_seconds=trail.polls_seconds())
        launch = replace(launch, startup_leads=startup_leads(launch))
    if options.engine is not None:
        launch = replace(launch, engine=options.engine)
    if launch.engine_hints:  # the engine's recommending warnings, their flags checked for the release
        hints = tuple(checked(words, launch.engine, launch.named_version) for words in launch.engine_hints)
        launch = replace(launch, engine_hints=hints)
    return _with_rebuilt_command(launch)


def _platform(launch: LaunchInfo, trail: StartupTrail) -> str:
    """The platform the log shows the engine on: the one vLLM detected, else SGLang's `--device` when not CUDA's."""
    device = flag_value(launch, "--device") or ""
    return trail.platform or ("" if device in ("", "cuda", "auto") else device.lower())


def _parallel(launch: LaunchInfo, trail: StartupTrail) -> bool | None:
    """Whether the launch runs tensor or pipeline parallelism over several ranks (its command, its `server_args=`, a
    settings dump the trail read); None when the log does not say."""
    sizes = [flag_value(launch, flag) for flag in ("--tp-size", "--tensor-parallel-size", "--pp-size",
                                                   "--pipeline-parallel-size")]
    shown = [int(size) for size in sizes if size and size.isdigit()]
    return any(size > 1 for size in shown) if shown else trail.parallel


def _with_release_from_choices(launch: LaunchInfo, groups: list[FailureGroup]) -> LaunchInfo:
    """A release guessed from the program's name (`launch_server.py: error:` is any release before `sglang serve`)
    narrowed by what an argparse refusal printed: the newest release whose flag has exactly the choices it lists
    (fixes/static_catalogs.py).  Still a guess, marked "inferred"; a release the log or the user names stays."""
    if launch.engine is None or launch.engine_version_source != "inferred":
        return launch
    for group in groups:
        refused = refused_choice(group.failure.final.message) if group.failure.kind == "usage" else None
        if refused is not None:
            flag, _, choices = refused
            if matching := static_catalogs.releases_with_choices(launch.engine, flag, frozenset(choices)):
                return replace(launch, engine_version=matching[-1])
    return launch


def _with_engine_from_words(launch: LaunchInfo, groups: list[FailureGroup]) -> LaunchInfo:
    """A launch that shows no engine, whose failures are worded by one engine's code alone (`own_words`
    patterns): that engine.  Two engines' words: still unknown."""
    if launch.engine is not None:
        return launch
    engines = {group.diagnosis.engine for group in groups if group.diagnosis and group.diagnosis.engine}
    if len(engines) != 1:
        return launch
    # Not when another failure's own message is only the other engine's: a paste quoting one engine's error in prose
    # above the other's ("sglang kept failing with 'Not enough memory…', now vllm says …") names neither.
    raised = tuple(pair for group in groups for pair in engine_from_message.raised_by(group.failure))
    if engine_from_message.engines_raising_any(raised[:engine_from_message.MAX_MESSAGES]) - engines:
        return launch
    return replace(launch, engine=engines.pop())


def _own_launch(
    group: FailureGroup, report_launch: LaunchInfo, trackers: dict[str, LaunchTracker], options: DiagnoseOptions
) -> LaunchInfo:
    """The launch a failure belongs to, for its fix: the user's --cmd when given, otherwise the command that
    the same source logged for the same launch.  A failure from a source or launch that logged none gets no
    command (never another launch's or another host's)."""
    if options.command is not None:
        return report_launch
    tracker = trackers.get(group.sources[0]) if group.sources else None
    if tracker is None:
        return replace(report_launch, command=None, command_source=None, server_args=(), server_args_complete=False)
    own = tracker.info(None, options.engine_version, at=group.failure.offset)
    return _with_rebuilt_command(
        replace(
            own,
            engine=report_launch.engine,
            engine_version=report_launch.engine_version,
            engine_version_source=report_launch.engine_version_source,
        )
    )


def _with_rebuilt_command(launch: LaunchInfo) -> LaunchInfo:
    """No command line in the log, but a whole `server_args=` line: the command it describes, which is always
    `python -m sglang.launch_server`'s.  Not when the log shows the engine run through another program (a benchmark,
    Dynamo: LaunchInfo.other_entry_point; a trainer or server that assembles the engine's arguments: its wrapper):
    the rebuilt line would be a command the user never ran (split 14's harmful report, sgl-project/sglang#4599)."""
    if launch.other_entry_point is not None or (launch.wrapper is not None and launch.wrapper not in NOT_ASSEMBLERS):
        return launch
    if launch.command is None and launch.server_args_complete and (launch.engine or "sglang") == "sglang":
        rebuilt = command_from_server_args(launch.server_args, launch.engine_version)
        if rebuilt is not None:
            return replace(launch, command=rebuilt, command_source="server_args")
    return launch


# How many of the failures printed before a failure its reasoning reads (a dense log has thousands of groups).
EARLIER_FAILURES_READ = 8


def _following_lines(groups: Sequence[FailureGroup]) -> list[tuple[str, ...]]:
    """For each group, the `Type: message` lines of the next group in `groups` that shares a source with it (the
    failure its log printed next), or () for none.  One pass from the last group back, each group's lines read once:
    a scan ahead from every group, across the groups of other logs, was quadratic in groups."""
    next_from: dict[str, int] = {}  # source -> the position of the nearest later group read from it
    lines: dict[int, tuple[str, ...]] = {}
    following: list[tuple[str, ...]] = [()] * len(groups)
    for position in range(len(groups) - 1, -1, -1):
        sources = groups[position].sources
        after = min((next_from[source] for source in sources if source in next_from), default=None)
        if after is not None:
            if after not in lines:
                lines[after] = tuple(exception_lines(groups[after].failure))
            following[position] = lines[after]
        next_from.update(dict.fromkeys(sources, position))
    return following


def _earlier_lines(before: list[Failure]) -> tuple[str, ...]:
    """The last failures printed before one, as the reasoning reads them: their context lines and `Type: message`."""
    return tuple(line for failure in before[-EARLIER_FAILURES_READ:] for line in (*failure.context, *exception_lines(failure)))


def _diagnose_group(
    group: FailureGroup,
    patterns: list[Pattern],
    launch: LaunchInfo,
    log_lines: list[str],
    warn: Callable[[str], None],
    disabled: set[str],
    earlier: tuple[str, ...] = (),
    following: tuple[str, ...] = (),
) -> FailureGroup:
    lines = [*group.cascade, *log_lines]
    if program := other_program(group.failure, launch):
        # Another program's own parser refused the argument (a wrapper's CLI, a script): the engine's patterns and its
        # launch say nothing of it; the general reading names the program as the one that ran.
        patterns = [pattern for pattern in patterns if pattern.engine is None]
        launch = replace(launch, engine=None, engine_version=None, engine_version_source=None, command=None,
                         wrapper=launch.wrapper or program)
    found = match_failure(
        patterns,
        group.failure,
        lines,
        engine=launch.engine,
        engine_version=launch.engine_version,
        command=launch.command,
        on_error=warn,
        disabled=disabled,
    )
    if found is None and launch.engine_version_source == "inferred":
        # A guessed version must not keep a pattern out when no pattern of that version fits.
        found = match_failure(
            patterns, group.failure, lines, engine=launch.engine, command=launch.command, on_error=warn, disabled=disabled
        )
    if found is None:
        reasoned = reason(Evidence(group.failure, launch, lines, earlier, following))
        return replace(group, diagnosis=reasoned) if reasoned is not None else group
    pattern = found.pattern
    if pattern.category == "dependency-version":
        # A system library the loader names, one the facts know: what installs it, not a reinstall of the package.
        library = known_library_missing(Evidence(group.failure, launch, lines))
        if library is not None:
            return replace(group, diagnosis=library)
    if pattern.category == "gpu-arch-unsupported":
        # A third-party kernel library's build without this architecture (its path names it): that library, not
        # the engine's or torch's builds the pattern names.
        library_gap = third_party_kernel_gap(Evidence(group.failure, launch, lines))
        if library_gap is not None:
            return replace(group, diagnosis=library_gap)
    if launch.engine is None and pattern.engine is not None:
        if not pattern.own_words:
            # The pattern's fix names its engine's flags; a rule reasoning from facts may still say more.
            reasoned = reason(Evidence(group.failure, launch, lines))
            if reasoned is not None and reasoned.basis == "rule":
                return replace(group, diagnosis=reasoned)
            unknown = engine_unknown_diagnosis(
                pattern, lambda checks: without_remote_code(checks, group.failure, launch_settings(launch)),
                tuple(exception_lines(group.failure)))
            if pattern.category == "nccl":
                unknown = with_nccl_last_error(unknown, group.failure, lines)
            return replace(group, diagnosis=unknown)
        launch = replace(launch, engine=pattern.engine)  # its engine's own words: positive evidence
    fix = build_fix(pattern.fix, group.failure, found.captures, launch, lines=[*group.other_messages, *lines])
    if pattern.fixed_in:
        known = launch.named_version
        fix = with_upgrade(fix, pattern.fixed_in, launch.engine or pattern.engine, known)
    diagnosis = Diagnosis(
        pattern=pattern.id,
        title=pattern.title,
        category=pattern.category,
        root_cause=interpolate(pattern.root_cause, found.captures),
        fix=fix,
        references=pattern.references,
        engine=launch.engine,
        engine_version=launch.engine_version,
    )
    if pattern.category == "nccl":
        diagnosis = with_nccl_last_error(diagnosis, group.failure, lines)
    if pattern.id in REGISTRY_PATTERNS:
        diagnosis = with_registry_releases(diagnosis, Evidence(group.failure, launch, lines))
    if pattern.id == MODEL_TYPE_PATTERN:
        diagnosis = with_model_type_releases(diagnosis, found.captures.get("model_type"), launch)
    return replace(group, diagnosis=dependencies.with_release_pins(diagnosis, Evidence(group.failure, launch, lines)))


def _named_cause(
    group: FailureGroup, before: list[Failure], patterns: dict[str, Pattern], cascades: set[str]
) -> FailureGroup:
    """`group` with its symptom's diagnosis given way to the cause its own lines name, else to the cause a failure
    printed just before it names; adds to `cascades` the groups that follow another: by their pattern or text, or
    because a failure before them named their cause (that failure leads the report).  A cascade is not renamed by
    the failures before it: it already follows them."""
    if _is_cascade(group, patterns):
        cascades.add(group.fingerprint)
        return replace(group, diagnosis=with_root_cause(group.diagnosis, group.failure, group.cascade))
    own = with_root_cause(group.diagnosis, group.failure, group.cascade)
    if own is not group.diagnosis:
        return replace(group, diagnosis=own)
    earlier = with_root_cause(group.diagnosis, group.failure, earlier_failures(group.failure, before))
    if earlier is not group.diagnosis:
        cascades.add(group.fingerprint)
    return replace(group, diagnosis=earlier)


def _releases_holding(group: FailureGroup, site: RaiseSite | None, launch: LaunchInfo) -> tuple[str, ...]:
    """The indexed releases whose code holds `site`, the check that raised the failure: the releases that can have
    written the log when it names none, or () when the index does not place it."""
    if launch.engine_version_source in ("log", "user") or group.diagnosis is None or not group.diagnosis.raised_at:
        return ()
    return site.releases if site is not None else ()


def _order(
    groups: list[FailureGroup], patterns: dict[str, Pattern], cascades: Collection[str] = ()
) -> list[FailureGroup]:
    """Causes before cascades, cascades before the noise of a shutdown; a pattern can mark its failure as a
    cascade, and `cascades` names the fingerprints already known to be ones (a cascade pattern's failure renamed
    after its root cause)."""

    def tier(group: FailureGroup) -> int:
        if is_shutdown_noise(group.failure):
            return 2
        # a traceback cut before its exception line names no cause: it stands with the cascades, in log order
        return 1 if group.fingerprint in cascades or _is_cascade(group, patterns) or names_no_cause(group.failure) else 0

    tiers = [tier(group) for group in groups]
    first = min(tiers, default=0)
    # within a tier, an error record that names no exception comes after the failures that name one (its context)
    unnamed = [names_no_exception(group.failure) for group in groups]
    indexed = sorted(range(len(groups)), key=lambda index: (max(tiers[index], first), unnamed[index], index))
    return [groups[index] for index in indexed]


def _is_cascade(group: FailureGroup, patterns: dict[str, Pattern]) -> bool:
    """A failure that usually follows another: its pattern says so (`cascade = true`), or its text does."""
    pattern = patterns.get(group.diagnosis.pattern) if group.diagnosis else None
    return bool(pattern and pattern.cascade) or is_cascade(group.failure)


def merge_reports(paths: Sequence[str], options: DiagnoseOptions | None = None) -> Report | HealthReport:
    """`logsleuth merge`: the JSON reports of many nodes (files, or directories of `*.json`) as the one fleet report
    `diagnose` of their logs over SSH would give: causes before cascades and a cascade told by the same pattern
    library (`options`' layers).  Health reports only: one health report (logsleuth/merge/run.py)."""
    from logsleuth.machine import this_machine
    from logsleuth.merge.run import merge_files

    by_id = {pattern.id: pattern for pattern in load_library(options or DiagnoseOptions()).patterns}
    merged = merge_files(
        paths, order=lambda groups: _order(groups, by_id), is_cascade=lambda group: _is_cascade(group, by_id)
    )
    # The merging machine is the merged report's reporter; its sources all name their hosts, so a merge of merged
    # reports (a tree of merges, for tens of thousands of nodes) keeps every node's name.
    return replace(merged, reporter=this_machine())


def health(specs: Sequence[str], options: HealthOptions | None = None) -> HealthReport:
    """`logsleuth health`: what the steady-state lines of one or more servers say is wrong (health/run.py)."""
    from logsleuth.health.run import check_health

    return check_health(specs, options)
