"""The data every pipeline stage hands to the next: frozen, plain-typed dataclasses.

Nothing here knows how it was built (parser) or how it is shown (renderers), so a
report serializes with `dataclasses.asdict` and tests can build values by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from logsleuth.lazyre import compile_lazily

# How exception i of a chain leads to exception i+1 (the newer one):
# "cause"   -> printed "The above exception was the direct cause of the following exception"
# "context" -> printed "During handling of the above exception, another exception occurred"
Relation = Literal["cause", "context"]

# traceback: a Python traceback chain; bare: an exception line without one; usage: an argparse error; fatal: a
# faulthandler dump (`Fatal Python error: …`); abort: a C++ exception that reached std::terminate; line: a
# fatal error printed as a log line (a kernel's `CUDA Error: …`, SGLang's watchdog, uvicorn's bind error);
# killed: a kill notice (`Killed`, exit code -9).
FailureKind = Literal["traceback", "bare", "usage", "fatal", "abort", "line", "killed"]


@dataclass(frozen=True, slots=True)
class LineMeta:
    """What the normalizer stripped off a line: who wrote it, and when."""

    timestamp: str | None = None
    host: str | None = None
    process: str | None = None
    pid: int | None = None
    # Rank tags in the order printed, e.g. (("DP", 0), ("TP", 2)).
    ranks: tuple[tuple[str, int], ...] = ()
    level: str | None = None
    # The logger header that started the line's record: "vllm" (`INFO 05-12 10:11:12 [core.py:123] `) or "sglang"
    # (`[2025-01-01 12:00:00 TP0] `); and the file a vLLM header names (`core.py`).  The engine is read from them
    # (ingest/engine_evidence.py).
    header: str | None = None
    logged_from: str | None = None

    @property
    def rank_label(self) -> str | None:
        """`DP0 TP2`, or the worker's rank (`rank=1`) when only that is known."""
        if not self.ranks:
            return None
        return " ".join(f"{name}{value}" for name, value in self.ranks)


class LogLine(NamedTuple):
    """One physical line of a log after normalization.

    A NamedTuple rather than a frozen dataclass: one is built for every line of a
    multi-GB log, and tuple construction is several times cheaper."""

    number: int  # 1-based line number in the source (relative to the window read when the start is unknown)
    offset: int  # byte offset of the line in the source
    text: str  # the line with ANSI, CR, quote markers and known prefixes removed
    meta: LineMeta
    # Lines with the same stream key were written by the same process; the parser
    # demultiplexes interleaved tracebacks by it. "" means "no prefix seen".
    stream: str = ""
    # True when the line carried its own record header (an SGLang `[ts TP0]` header or a
    # vLLM logger header), i.e. it starts a log record rather than continuing one.
    starts_record: bool = False
    # True when the line carried a logger header of its own, also one repeating the record's (vLLM repeats its header
    # on every line of a record; a line stamper writes SGLang's untagged `[date time] ` before every line).
    headed: bool = False


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame of a traceback, oldest call first."""

    file: str
    line: int | None
    function: str | None  # None for SyntaxError location lines (`File "x", line 1`)
    source: str | None = None
    repeated: int = 0  # "[Previous line repeated N more times]" after this frame
    in_app: bool = False

    @property
    def module_path(self) -> str:
        """The file as a module path: `/usr/lib/python3.11/dist-packages/sglang/srt/server_args.py` ->
        `sglang/srt/server_args.py`; elsewhere its last two path parts, three when the directory is a wrapper's
        subpackage named after an engine (`huggingfaceserver/vllm/utils.py`, not vLLM's own `vllm/utils.py`)."""
        for marker in ("site-packages/", "dist-packages/"):
            if marker in self.file:
                return self.file.rsplit(marker, 1)[1]
        parts = self.file.replace("\\", "/").split("/")
        return "/".join(parts[-3:] if engine_subpackage_host(self.file) and parts[-2] in ENGINE_NAMES else parts[-2:])


# The type the scanner gives a failure that names no exception, its record's level: an error line or record whose
# words are its message (`ERROR: <message>`, tracebacks/logged_errors: a line an engine's code logs as an error, pasted
# without its record's header, SGLang's `Piecewise CUDA Graph failed with error: …`; a wrapper's ERROR record; a
# record of CPython's own TypeError or AttributeError text) and a glog or c10 `E` record (grammar.glog_record_type).
# ingest/engine_from_message matches such a message whole against what the engines log, never as a raise's opening.
LOGGED_LINE_TYPE = "ERROR"


@dataclass(frozen=True, slots=True)
class ExceptionBlock:
    """One exception of a chain: its frames (oldest call first) and final line."""

    type: str  # as printed, e.g. "torch.OutOfMemoryError", "UsageError", "Fatal Python error"
    message: str  # without the "Type: " prefix; may span several lines
    frames: tuple[Frame, ...] = ()
    relation: Relation | None = None  # how this exception leads to the next one in the chain
    # Exception groups: each member is its own chain (oldest first).
    members: tuple[tuple[ExceptionBlock, ...], ...] = ()
    more_members: int = 0  # "and N more exceptions"
    # frames missing at the start (excerpt) or the end (cut-off log), or the message cut where the log ends
    # (tracebacks/cut_tail.py)
    truncated: bool = False
    # the type was read from the last frame's raising statement (`raise X(`, `assert`): the one pasted
    # (tracebacks/raising_statement.py) or the one the raise site index holds at that frame's line
    # (tracebacks/indexed_statement.py), the exception line not pasted: reports say it is inferred, never printed
    typed_from_statement: bool = False
    # the type was read from CPython's own message template (`'X' object has no attribute 'y'` is an AttributeError),
    # the line showing no type or a word of none (`Error: …`): reports say it is inferred (tracebacks/typeless_errors.py)
    typed_from_message: bool = False
    # read from a person's prose, no error line pasted: "stated", a sentence names the error's class in words (`… but
    # it OOMs`), the type (and the message, the engines' words for that class) inferred (tracebacks/stated_failures.py);
    # "retyped", an error line retyped by hand, its spacing and quotes changed, read as its template prints it
    # (argparse's line: tracebacks/grammar.retyped_usage_error; an engine's message a sentence quotes:
    # tracebacks/prose_failures.retyped_variants).  Reports say so, never show it as printed.
    read_from_prose: Literal["", "stated", "retyped"] = ""

    @property
    def is_group(self) -> bool:
        return bool(self.members) or self.more_members > 0


@dataclass(frozen=True, slots=True)
class Failure:
    """One failure as it appears in the log: a traceback chain, a bare exception line,
    an argparse usage error, a faulthandler dump or a kill notice."""

    kind: FailureKind
    exceptions: tuple[ExceptionBlock, ...]  # oldest first; exceptions[-1] ended the process
    line: int  # 1-based line number of its first line; 0 when unknown (read from mid-file)
    offset: int  # byte offset of its first line
    end_offset: int  # byte offset just past its last line
    meta: LineMeta = field(default_factory=LineMeta)
    header: str | None = None  # text before "Traceback" on its first line, e.g. "Scheduler hit an exception:"
    truncated: bool = False
    # Log lines just before the failure (warnings, errors) that help explain it.
    context: tuple[str, ...] = ()
    # Those of `context` that read as an error (tracebacks/grammar.reads_as_error, by the record's level too, which the
    # context's text has lost): the only ones shown before a traceback cut before its exception line.
    error_context: tuple[str, ...] = ()
    # The program argparse names on a usage error's line (`xinference-local: error: …`, `vllm serve: error: …`).
    program: str | None = None
    # An ERROR record the paste ends on, its traceback not pasted (scanner._read_last_error_record): the report says
    # the lines after it in the server's log are what to paste next.
    ends_paste: bool = False

    @property
    def final(self) -> ExceptionBlock:
        return self.exceptions[-1]


# What a name in Fix.env must look like: a shell variable name (anything else could only be log text).
ENV_NAME = compile_lazily(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class FlagOp:
    """One change to the launch command.  `flag` is as typed, dashes included."""

    op: Literal["add", "remove", "set", "rename"]
    flag: str
    value: str | None = None
    to: str | None = None  # the new name, for "rename"


@dataclass(frozen=True, slots=True)
class Fix:
    """What to change: flag operations, environment, steps, and the corrected command when it is known."""

    summary: str
    flags: tuple[FlagOp, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    steps: tuple[str, ...] = ()
    command: str | None = None  # the corrected launch command, when the original is known
    # Flags the fix adds whose value only the user knows (which model to serve): such a fix has no command.
    needs_input: tuple[str, ...] = ()
    # Other fixes that are equally valid (e.g. "or drop all three flags").
    alternatives: tuple[Fix, ...] = ()
    # Where the command `command` is built on came from (LaunchInfo.command_source): "server_args" means rebuilt
    # from the log's `server_args=`, which is not a command line the user ran, and is labelled so.
    command_origin: Literal["user", "log", "server_args"] | None = None


@dataclass(frozen=True, slots=True)
class EngineWords:
    """An instruction the engine's own message gives ("please install X==Y", "enable --some-flag"), quoted as it
    said it, and what logsleuth checked of it against the user's release (a flag's catalog row, a package's pin)."""

    text: str
    checks: tuple[str, ...] = ()  # e.g. "--enable-foo is not a flag of SGLang 0.4.6 (added in 0.4.9)"
    # Who printed it when the frames or the line show it is not the engine: the package whose code raised it
    # (`transformers`, `torch`) or the program that printed the line (`nvidia-container-cli`); None: the engine.
    speaker: str | None = None


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """A failure explained: its root cause and fix.

    `basis` says how far to trust it: "pattern" (a pattern of the library, proven on its fixtures), "rule" (a
    rule of logsleuth/reasoning/ that reasoned from facts: a GPU's compute capability, a release's pinned
    dependencies, parallelism arithmetic; its `evidence` lists those facts) or "general" (no pattern or rule
    fits: the likeliest category and its general checks, shown as "general guidance, not a proven fix")."""

    pattern: str
    title: str
    category: str
    root_cause: str
    fix: Fix | None = None
    references: tuple[str, ...] = ()
    engine: str | None = None
    engine_version: str | None = None
    basis: Literal["pattern", "rule", "general"] = "pattern"
    evidence: tuple[str, ...] = ()
    engine_says: tuple[EngineWords, ...] = ()
    # The check that raised the failure, in the engine's code or a package it runs (flashinfer, sgl-kernel, xgrammar,
    # transformers), from the raise site index (facts/raise_sites.py): where, under which condition, the flags it
    # reads, the releases that hold it.  For any basis.
    raised_at: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Occurrence:
    """Where and when a failure of a group first appeared in one source (a fleet report orders hosts by it)."""

    source: str
    host: str | None  # the host the line names, else the source's host; None for a local file
    timestamp: str | None  # as the log printed it (LineMeta.timestamp)
    line: int
    offset: int


@dataclass(frozen=True, slots=True)
class FailureGroup:
    """Identical failures (same fingerprint) seen once or many times, e.g. on every rank."""

    fingerprint: str
    failure: Failure  # the first occurrence
    count: int
    ranks: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    cascade: tuple[str, ...] = ()  # "Received sigquit…", "Killed" lines that followed it
    diagnosis: Diagnosis | None = None
    signature: str = ""  # normalized "Type: message" to search issue trackers with
    # Occurrences per host and per rank, in the order first seen (hosts and ranks list the same keys).
    host_counts: tuple[tuple[str, int], ...] = ()
    rank_counts: tuple[tuple[str, int], ...] = ()
    firsts: tuple[Occurrence, ...] = ()  # the first occurrence in each source, in the order the sources came
    # The fingerprint of the fleet's root failure when this group is its cascade on other hosts (fleet.py).
    cascade_of: str | None = None
    # The final messages of later occurrences worded otherwise than the first (each rank's own numbers or GPU).
    other_messages: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ClockOffset:
    """A remote host's clock against ours, measured over SSH (sources/ssh/clock.py)."""

    offset: float  # seconds the remote clock is ahead of ours (negative: behind)
    uncertainty: float  # ± seconds: half the query's round trip


# A runtime fact line (sources/runtime writes it after a container's, pod's or unit's log; tracebacks/grammar
# reads it): `[logsleuth: SUBJECT: FACT, FACT, …]`.  No server prints it.
FACT_PREFIX = "[logsleuth: "

# How each engine writes its own name, for what logsleuth says of it ("SGLang 0.5.9", "vLLM's --max-model-len").
ENGINE_NAMES = {"sglang": "SGLang", "vllm": "vLLM"}

# A directory named after an engine inside another package: a wrapper's own code for that engine (kserve's
# `huggingfaceserver/vllm/utils.py` calls vLLM's AsyncEngineArgs.add_cli_args, kserve/kserve#4076; verl's vendored
# `verl/third_party/vllm/` and `third_party/sglang/`), not the engine's package.  Below an install directory the
# package is the one installed there (`site-packages/huggingfaceserver/vllm/`).  In a checkout a repeated directory
# name alone is no evidence (a container's `/app/app/sglang/`, a vLLM checkout in `/data/data/vllm/vllm/`): only a
# wrapper package known to hold engine-named code, in the flat layout that repeats its name, at any depth below it
# (`kserve/python/huggingfaceserver/huggingfaceserver/vllm/`, `verl/verl/third_party/vllm/vllm_v_0_6_3/`).  The
# engines' own checkouts repeat theirs (`vllm/vllm/`), and SGLang's puts its package under `python/`.
_ENGINE_DIRECTORY = compile_lazily(r"(?:^|/)(?:sglang|vllm)/")
# The wrappers whose packages hold a directory named after an engine: kserve's huggingfaceserver (kserve/kserve#4076),
# verl (verl/third_party/vllm/, verl/third_party/sglang/).
_ENGINE_HOLDING_WRAPPERS = ("huggingfaceserver", "verl")
_FLAT_LAYOUT_HOST = compile_lazily(
    r"(?:^|/)(?P<host>" + "|".join(_ENGINE_HOLDING_WRAPPERS) + r")/(?P=host)/(?:[\w.-]{1,200}+/){0,20}?(?:sglang|vllm)/")


def engine_subpackage_host(path: str) -> str | None:
    """The package a frame's engine-named directory (`vllm/`, `sglang/`) is a subpackage of, else None: that
    directory is then a wrapper's code, not the engine's."""
    path = path.replace("\\", "/")
    install_end = max((path.rfind(mark) + len(mark) for mark in ("site-packages/", "dist-packages/") if mark in path),
                      default=-1)
    if install_end >= 0:
        below = path[install_end:]
        top = below.split("/", 1)[0]
        if top.endswith(".egg") and "/" in below:  # an egg's directory is a path entry of its own (`vllm-0.2.2-….egg/vllm/`)
            below = below.split("/", 1)[1]
            top = below.split("/", 1)[0]
        return top if top not in ENGINE_NAMES and "/" in below and _ENGINE_DIRECTORY.search(below) else None
    found = _FLAT_LAYOUT_HOST.search(path)
    return found["host"] if found and found["host"] not in ENGINE_NAMES else None


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """One source of a report: what was read of it, or why it could not be."""

    name: str
    # Distinct bytes of the log examined (read, searched for anchors, or grep'ed remotely), each
    # counted once however often it was re-read: never more than `size`.
    bytes_read: int
    size: int | None
    error: str | None = None  # the one-line error, naming the source once ("x.log: no such file")
    capped: bool = False  # the byte cap stopped the search before the failure was complete
    host: str | None = None  # the host a remote source lives on (None: local, or not known)
    clock: ClockOffset | None = None  # the host's clock, when it was measured (fleets of remote sources)
    # Where the log came from, when the report must say it: a restarted pod's previous container was read.
    note: str | None = None
    # Seconds east of UTC of the zone the log's times are in, when known: a log read on the machine that wrote it
    # is taken to be in that machine's zone (a fleet puts zone-less times of hosts in several zones in order).
    utc_offset: int | None = None

    @property
    def empty(self) -> bool:
        """The source held nothing to judge (its error is nothing_to_judge's)."""
        return self.error is not None and self.error.startswith(NOTHING_TO_JUDGE)


# A source that holds no byte (an empty file, empty stdin) or an empty name (`diagnose "$LOG"` with LOG unset): no
# log is not a clean log, so the readers record it as the source's error (exit 3), never as "no failure found".
NOTHING_TO_JUDGE = "nothing to judge: "
EMPTY_NAME = NOTHING_TO_JUDGE + "the source name is empty ('')"


def nothing_to_judge(name: str) -> str:
    return f"{NOTHING_TO_JUDGE}{'stdin' if name == '-' else name} is empty"


@dataclass(frozen=True, slots=True)
class LaunchInfo:
    """What the log says about the launch itself."""

    engine: str | None = None  # "sglang" | "vllm"
    engine_version: str | None = None
    # Where engine_version came from: "log" (the log names it), "inferred" (guessed from the code layout in
    # the frames or the wording of a message: may be wrong), "user" (--engine-version).
    engine_version_source: Literal["log", "inferred", "user"] | None = None
    # The release the engine's own image tag names (`vllm/vllm-openai:v0.20.1`): what the image was built from, which
    # the paste may not have run (a pull of one tag and a run of another, a cached or rebuilt image).
    image_version: str | None = None
    command: str | None = None  # the launch command, when the log or --cmd gives it
    # Where `command` came from: "user" (--cmd: printed back as written), "log" (a command line in the log:
    # untrusted, requoted) or "server_args" (rebuilt from a complete `server_args=` line).
    command_source: Literal["user", "log", "server_args"] | None = None
    # What the log shows running the engine's command, when it is not typed by itself: a container or job runner on
    # the same line ("docker run", "srun"), the lines above it (a `docker run …` continued over several lines), a YAML file (a
    # Kubernetes container's args).  A corrected command must keep it, or not be printed (fixes/build.py).
    command_wrapper: str | None = None
    # The wrapper's words are in `command`, in front of the engine's (`docker run … IMAGE python3 -m …`): kept as typed.
    command_wrapper_kept: bool = False
    server_args: tuple[tuple[str, str], ...] = ()  # name -> repr(value) from a server_args= line
    # The server_args= line was printed whole (a pasted one may be elided with `...`: no command from it).
    server_args_complete: bool = False
    # The program that ran the engine, when the log shows one (ingest/engine_evidence.WRAPPERS): "Ray", "verl",
    # "Xinference"...  The engine stays the engine (vLLM under Ray is vLLM).
    wrapper: str | None = None
    # Lines that show the GPU (an environment dump, nvidia-smi, a device name: facts/gpus.py), the first ones.
    gpu_lines: tuple[str, ...] = ()
    # Lines that show the version of a package the engine runs (transformers, flashinfer, xgrammar, sgl-kernel: an
    # environment dump, pip list; facts/package_sites.py), or the host driver's and torch's CUDA (nvidia-smi, torch's
    # collect_env: facts/torch_builds.py), the first ones.
    package_lines: tuple[str, ...] = ()
    # Lines that print a model size a parallel degree must divide (a config dump's `"num_attention_heads": 32`,
    # ingest/launch.py MODEL_SIZE_KEYS), the first ones: the sizes a divisibility check read when its message names none.
    model_size_lines: tuple[str, ...] = ()
    # Lines that show a package that drives or plugs into the engine (a wrapper, a KV connector, a platform plugin:
    # facts/engine_drivers.py) listed or loaded beside it, the first ones: the other side of a version skew.
    driver_lines: tuple[str, ...] = ()
    # Lines that name a plugin of vLLM otherwise (its package in a frame's path, its name on a version line, in an
    # image or as the program: facts/engine_drivers.py plugins_named), the first ones: a sign the plugin is in use.
    plugin_lines: tuple[str, ...] = ()
    # vLLM's own platform decision: its 'Automatically detected platform X.' or 'Platform plugin X is activated' line
    # (vllm/platforms/__init__.py), the first one seen (reasoning/platform.py decides from it both ways).
    platform_line: str | None = None
    # Paths the log prints of an engine's source files outside an install directory (a warning's location, a frame of
    # a traceback not kept), or pip's "Editable project location" of the engine: where a source checkout runs from.
    checkout_paths: tuple[str, ...] = ()
    # pip show's "Editable project location" with the engine whose `pip show` printed it: (engine, location).
    editable_checkouts: tuple[tuple[str, str], ...] = ()
    # The switches the engine's own dump of its settings shows on (`trust_remote_code=True` in a repr,
    # `'trust_remote_code': True` in a dict): given by the launch even where its command is not in the log.
    switches_on: tuple[str, ...] = ()
    # Every value of a GPU memory share (--mem-fraction-static, --gpu-memory-utilization) the log names, in a command,
    # a settings dump or the user's words, as (flag, value): beside the launch's own, the values a paste shows tried
    # and failed too, which a memory fix must not suggest again (fixes/builders/memory.py, tried_memory_shares).
    memory_shares_seen: tuple[tuple[str, float], ...] = ()
    # The model's architecture as the engine resolved it (vLLM's model config from 0.11 logs "Resolved architecture:
    # X"), the first one: what a check refusing the model's class for a capability was about (reasoning/
    # model_capabilities.py).
    architecture: str | None = None
    # The model vLLM's start-up banner names beside its logo (`model   Org/Name`, from 0.11), the first one: the model
    # the log names where its command and settings are not pasted.
    banner_model: str | None = None
    # vLLM's torch.compile cache directory, when the log names it ("Using cache directory: … for vLLM's torch.compile",
    # or a frame of an Inductor module that runs from inside it): where a check about a corrupted cache points.
    compile_cache: str | None = None
    # A program of the engine other than its server that the log shows running with the server's arguments (a
    # benchmark's `python -m sglang.bench_offline_throughput`, NVIDIA Dynamo's `python -m dynamo.sglang`:
    # facts/entry_points.py): a command rebuilt from `server_args=` would name the server instead (api.py).
    other_entry_point: str | None = None
    # The line after the launch line in the log is its tail, wrapped by a terminal or a paste (ingest/launch.py): the
    # command read from the first line alone is not what ran, so no corrected command is rebuilt from it.
    command_wrapped: bool = False
    # Each engine's version the log names, (engine, version), the first of each (a banner, a label, a package listing):
    # the release of an engine that a failure's own code names when the launch's engine is left undecided (a listing
    # beside a program that drives the engine: reasoning/general.py).
    versions_named: tuple[tuple[str, str], ...] = ()
    # The log (one source's) shows the launch and ends before any line saying the server came up: a paste that stops
    # during the start-up, whose failure, if any, is in lines it does not hold (render/view.py no_failure_lines).
    ended_in_startup: bool = False
    # Its last start-up stage, as ingest/startup_trail.py names it ("loading weights", "NCCL init", "downloading",
    # "waiting for the engine to signal ready"; "" when its lines show none), and whether it ends on a wait for the
    # engine, repeated or followed only by the user's words: a start-up that stalled there.
    startup_stage: str = ""
    startup_stalled: bool = False
    startup_guidance: tuple[str, ...] = ()  # for a stall: general guidance for that stage (startup_trail.stall_guidance)
    # For a log ending on fewer of vLLM's polls for its engine cores than a stall, the seconds they stand for.
    startup_poll_seconds: int = 0
    # For a log that ends during the start-up: the leads what it names supports (a GGUF file under SGLang's default load
    # format, a quantization on a MoE checkpoint: reasoning/startup_leads.py), each labelled a fact with its source or
    # general guidance.
    startup_leads: tuple[str, ...] = ()
    # Lines that start a container (`docker run …`, `podman run …`, `kubectl run …`), the first ones: the engine ran in
    # a container, whose devices and host mounts the command gives (a driver library missing inside it is the run's).
    container_lines: tuple[str, ...] = ()
    # The engine's own warnings that recommend a flag, printed after the server last came up (or with no sign it did),
    # the last ones (ingest/engine_hints.py), each checked against the release's catalog (api.py): the lead a clean
    # report of a paste that stops short names (render/view.py no_failure_lines).
    engine_hints: tuple[EngineWords, ...] = ()
    # vLLM's "<feature> is not supported by the V1 Engine. Falling back to V0." (engine/arg_utils.py
    # _raise_or_fallback, 0.8-0.10): the feature, and whether the engine recommends removing it (a setting) rather
    # than not (a GPU or platform limit).  With it, VLLM_USE_V1=1 raises "VLLM_USE_V1=1 is not supported with …".
    v0_fallback: tuple[str, bool] | None = None
    # A line before the failure this launch is read for (anywhere in the log, for the report's launch) said the server
    # came up or served (ingest/startup_trail.py): what that failure shows was not raised in the start-up.
    up_before: bool = False

    @property
    def named_version(self) -> str | None:
        """The engine's release when the log or the user names it; None for one guessed from the code's layout (it may
        be another release: no pin, catalog or command may rest on it)."""
        return self.engine_version if self.engine_version_source in ("log", "user") else None

    @property
    def version_from_image(self) -> bool:
        """The release is the one the engine's image tag names and nothing better named it: derived, so a later step
        that replaces engine_version (a release read from an argparse choices list or from the frames) leaves no
        stale claim that the tag named it."""
        return (self.engine_version_source == "inferred" and self.image_version is not None
                and self.engine_version == self.image_version)


# root: failed first; failed: a failure of its own after the root; cascade: a failure that follows another
# (NCCL timeout, sigquit, dead peer) after the root; no-failure: read, nothing found; unreadable: not read.
FleetOutcome = Literal["root", "failed", "cascade", "no-failure", "unreadable"]


@dataclass(frozen=True, slots=True)
class FleetMember:
    """One host (one source) of a fleet report."""

    name: str  # the host for a remote source, else the source's name
    source: str
    outcome: FleetOutcome
    error: str | None = None  # why it could not be read
    fingerprint: str | None = None  # of its first failure's group
    signature: str = ""  # its first failure, short
    timestamp: str | None = None  # its first failure's time, as the log printed it
    time_known: bool = False  # that time could be read (and compared with the others')


@dataclass(frozen=True, slots=True)
class Fleet:
    """Several sources read as one fleet: which host failed first, and what followed on the others."""

    members: tuple[FleetMember, ...]  # the root first, then failures in time order, then the rest
    root: str | None = None  # the member whose failure came first
    root_fingerprint: str | None = None
    # False when a failed member's first failure has no readable time: the root is then the report's first
    # failure by the usual ordering (causes before cascades), and the report says the order is unknown.
    order_known: bool = True
    clock_spread: float | None = None  # how far apart the measured clocks may be, in seconds
    first_gap: float | None = None  # seconds between the root's failure and the next host's first failure
    root_uncertain: bool = False  # clock_spread > first_gap: another host may have failed first


@dataclass(frozen=True, slots=True)
class Reporter:
    """The machine that wrote a report: its host name (or the one `--host` gave) and time zone.  A merge of
    reports made on many nodes (logsleuth/merge/) names each node's local logs after it."""

    host: str
    time_zone: str | None = None  # as the machine names it ("UTC", "CET")
    utc_offset: int | None = None  # seconds east of UTC, when the report was written


@dataclass(frozen=True, slots=True)
class Report:
    """What `diagnose` found: the sources, the failure groups (root first) and the launch."""

    sources: tuple[SourceInfo, ...]
    failures: tuple[FailureGroup, ...]  # failures[0] is the primary failure
    launch: LaunchInfo = field(default_factory=LaunchInfo)
    warnings: tuple[str, ...] = ()  # e.g. a user pattern file that could not be loaded
    # At most grouping.MAX_GROUPS groups are kept (the first ones).  Occurrences of the others:
    omitted_failures: int = 0
    # ... and how many distinct failures they are, by their fingerprint (a dense log's records left unparsed:
    # one parsed per shape, up to 8 MiB of them per log); exact up to 65,536, an estimate beyond
    # (omitted_groups_estimated).
    omitted_groups: int = 0
    omitted_groups_estimated: bool = False
    fleet: Fleet | None = None  # with more than one source
    # What the user's own model said of the primary failure (`--explain`): unverified, shown in its own section.
    explanation: Explanation | None = None
    # How many launches of one log the failures come from (the most of any source): above 1, a relaunch failed
    # on its own, so no failure is the root of another's (the report says so instead of naming a root).
    launches: int = 1
    reporter: Reporter | None = None  # who wrote it (JSON's `reporter`); None for a report built in memory

    @property
    def primary(self) -> FailureGroup | None:
        return self.failures[0] if self.failures else None


@dataclass(frozen=True)
class ProgressReading:
    """One reading of a progress bar that a launch prints (watch: ingest/stages.py reads it, the launch view draws it): `label` names the bar (the same label for every reading of it)."""

    label: str
    percent: int
    done: int
    total: int
    detail: str = ""  # e.g. "bs=160 avail_mem=10.50 GB" while capturing CUDA graphs


@dataclass(frozen=True, slots=True)
class FlagCheck:
    """A flag operation someone suggested, checked against the flag catalog of the log's engine version."""

    op: FlagOp
    ok: bool  # False: ✗ (unknown, removed, a bad choice, a known trap, rejected by the validation)
    reason: str  # why it is ✗, what was verified for ✓, or what was not
    # ✓ only when True: the change passes the version's validation and the known traps, not merely "the flag exists"
    verified: bool = False


@dataclass(frozen=True, slots=True)
class Explanation:
    """The answer of the user's own model to the case file (`--explain`, logsleuth/explain/).  Unverified: shown in
    a section of its own, labelled so, never in place of a pattern's diagnosis and never deciding the exit status."""

    model: str  # as the server named it
    endpoint: str  # where the case file went: scheme, host, port and path, without credentials or query
    root_cause: str
    category: str  # one of diagnosis.schema.CATEGORIES, or "other"
    flags: tuple[FlagOp, ...] = ()  # the fix, as flag operations
    upgrade: str | None = None  # upgrade advice, when the model gives any
    # Lines the model quotes from the case file as its evidence, each with whether the case file holds it.
    evidence: tuple[tuple[str, bool], ...] = ()
    checks: tuple[FlagCheck, ...] = ()  # `flags` checked against the catalog, in order; () when not checked
