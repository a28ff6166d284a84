"""The grammar of the text logsleuth reads: every line regex, and the kind of each line.

CPython's traceback formats (frames, carets, chain separators, exception groups, faulthandler dumps), the
exception lines, argparse usage errors, kill notices and the log-record starts that end a message.  The
scanner (scanner.py) and the chain parser (chain.py) share these; nothing else defines a line regex, but for the
shapes of CPython's own traceback lines, which the first stage needs too (ingest/line_shapes.py, re-exported here).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum, auto
from functools import lru_cache

from logsleuth.ingest.line_shapes import (  # noqa: F401 - re-exported: the grammar's frame and chain lines
    CARET_LINE,
    CAUSE_SEPARATOR,
    CONTEXT_SEPARATOR,
    FAULT_FRAME_LINE,
    FRAME_LINE,
    TRACEBACK_HEADER,
)
from logsleuth.lazyre import compile_lazily
from logsleuth.models import FACT_PREFIX, LOGGED_LINE_TYPE, FailureKind
from logsleuth.tracebacks.cpp_names import demangled
from logsleuth.tracebacks.device_errors import DEVICE_ERROR_WORDS
from logsleuth.tracebacks.native_asserts import native_report
from logsleuth.tracebacks.native_errors import COMPANION_WORDS
from logsleuth.tracebacks.typeless_errors import http_status_before, typeless_error

REPEATED_LINE = compile_lazily(r"^\s*\[Previous line repeated (?P<n>\d+) more times?\]\s*$")
# The final line of an exception: `pkg.mod.TypeName: message` or a bare `TypeName`.
# Possessive quantifiers: a 64 KiB line like `a.a.a.…` must not backtrack quadratically.
# A type may carry its cause's name in parentheses: Ray re-raises a task's error as a class it names
# `RayTaskError(<cause>)` (ray/exceptions.py, RayTaskError.as_instanceof_cause), printed as
# `ray.exceptions.RayTaskError(ActorDiedError): ray::TaskRunner.run() …`.
# The cause is a class name and a message always follows (`self.initialize(min_per_gpu_memory)`, a source line whose
# indentation a paste lost, is no exception line).  Nor is an annotated assignment to an attribute of `self` or `cls`
# with its indentation lost: both engines' NCCL wrapper opens every communicator with
# `self.comm: ncclComm_t = self.nccl.ncclCommInitRank(` (pynccl.py), which reads like `Type: message`; no module is
# named `self`, so no class CPython prints is.
CAUSE_SUFFIX = r"(?:\((?:[A-Za-z_]\w*+\.)*+[A-Z]\w*+\)(?=: ))?+"
EXCEPTION_LINE = compile_lazily(
    r"^(?!(?:self|cls)\.)(?P<type>[A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)*+" + CAUSE_SUFFIX + r")(?::(?: (?P<msg>.*)|$)|$)"
)
# A logging record's level alone on a line, what is left of a record prefix when a paste cuts the line right after it
# (vLLM's `ERROR 03-02 22:42:58 [engine.py:409]` cut to `ERROR`, vllm-project/vllm-ascend#218): never an exception line,
# as no exception class CPython prints is named so.
LOG_LEVEL_WORDS = frozenset({"ERROR", "WARNING", "WARN", "INFO", "DEBUG", "CRITICAL"})


def names_an_exception(text: str) -> bool:
    """The line has an exception line's shape and is not a record's level word left alone by a cut (`ERROR`): the
    one test of "an exception line" (classify, chain.is_exception_line)."""
    return EXCEPTION_LINE.match(text) is not None and text.strip() not in LOG_LEVEL_WORDS
GROUP_HEADER = compile_lazily(r"^(?P<indent>\s*)\+ Exception Group Traceback \(most recent call last\):\s*$")
FATAL_HEADER = compile_lazily(r"^Fatal Python error: (?P<msg>.*)$")
THREAD_HEADER = compile_lazily(r"^(?P<current>Current thread|Thread) 0x[0-9a-fA-F]+ .*\(most recent call first\):\s*$")
MORE_EXCEPTIONS = compile_lazily(r"^and (?P<n>\d+) more exceptions?$")
# Written by the scanner in place of the middle of a runaway traceback (parser.MAX_FAILURE_LINES).
ELIDED_TEMPLATE = "  [logsleuth: {n} lines elided]"
ELIDED_LINE = compile_lazily(r"^  \[logsleuth: (?P<n>\d+) lines elided\]$")
# What a reader writes in place of lines left out of a paste.
ELISIONS = frozenset({"...", "\u2026", "[...]", "(...)", "[\u2026]", "<...>"})
ELISION_LENGTH = 16  # longer lines are no elision
MEMBER_SEPARATOR = compile_lazily(r"^\+-+ (?:\d+|\.\.\.) -+$")
GROUP_END = compile_lazily(r"^\+-{10,}$")
MEMBERS_START = compile_lazily(r"^\+-\+-+ (?:\d+|\.\.\.) -+$")

# A bare exception line outside a traceback must look like an exception *type*:
# `ValueError: …`, `torch.OutOfMemoryError: …`, `AssertionError`, `ExceptionGroup: … (2 sub-exceptions)`.
# CPython prints a class outside builtins by its module's dotted name, whatever the class is called
# (`huggingface_hub.errors.OfflineModeIsEnabled: Cannot reach …`): lower-case modules, then a CamelCase class of two
# words or more, with a message.  A logger's `%(name)s: ` is a module path, lower case to its end.
STRICT_EXCEPTION_LINE = compile_lazily(
    r"^(?P<type>(?:[A-Za-z_]\w*\.)*"
    r"(?:[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Fault|Failure|Timeout)|(?:Base)?ExceptionGroup)" + CAUSE_SUFFIX
    + r"|(?:[a-z_][a-z0-9_]*\.)+[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*(?=: \S)"
    # a compiled extension's class named with a lower-case prefix (pybind11 py::register_exception under the name
    # given: NIXL's `nixl._bindings.nixlBackendError: NIXL_ERR_BACKEND`), printed by its dotted module
    + r"|(?:[a-z_][a-z0-9_]*\.)+[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*(?:Error|Exception)(?=: \S))"
    r"(?::(?: (?P<msg>.*)|$)|$)"
)
NOT_BARE_TYPES = frozenset({"Error", "Exception", "Failure", "Timeout", "Fault"})
# `Exception: …` (what `raise Exception(…)` prints): a bare line of it could be any program's print.
GENERIC_EXCEPTION_LINE = compile_lazily(r"^(?P<type>Exception|Error): (?P<msg>\S.*)$")
# An exception or argparse error a sentence quotes: in backticks, in bold, in italics (`*…*`, or `_…_` around a
# `Type: …` of at most 400 characters: `_ValueError: …_`, never an identifier's underscores, and a bounded
# scan from each start), in straight or curly quotes.
# Each span stops at its closing mark (no mark inside it), so a long line is read once.
EMBEDDED = compile_lazily(
    r'`(?P<code>[^`]{3,})`|\*\*(?P<bold>[^*]{3,})\*\*|(?<![*\w])\*(?P<italic>[^*\s][^*]{2,})\*(?![*\w])'
    r'|(?<![\w])_(?P<underscored>(?:[A-Za-z]\w*\.)*[A-Z]\w*:[^\n]{1,400}?)_(?!\w)|["\u201c](?P<quoted>[^"\u201c\u201d]{3,})["\u201d]'
)
# An exception a sentence quotes without marks: "When I start it I get ValueError: … and it stops."  A sentence
# may say anything, so such a line is the failure only of a paste that has no other (a fallback).
# Prose in Chinese, Japanese or Korean puts no space before it (`启动就报错RuntimeError: …，怎么办`, `报错：ValueError: …`), nor
# do French guillemets (`«ValueError: …»`): after such a character the type starts too (its name is ASCII, so a long
# run of those characters is scanned once), and the sentence's own punctuation after the message ends it.
_WIDE_PROSE = "\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff01-\uff60\u00ab"
# A typographic quote a sentence opens the exception with, as a word processor or an input method types it, its
# direction not always the right one (`then it fails with：”ValueError: …“ and stops`, the retired blind split 13): the
# message ends at the next such quote (CPython's own messages quote with ASCII marks only).
_TYPOGRAPHIC_QUOTES = {"\u201c": "\u201c\u201d", "\u201d": "\u201c\u201d", "\u2018": "\u2018\u2019", "\u2019": "\u2018\u2019"}
INLINE_EXCEPTION = compile_lazily(
    rf"(?:^|\s|(?<=[{_WIDE_PROSE}\u2018\u2019\u201c\u201d]))(?P<failure>(?:[A-Za-z_][A-Za-z0-9_]*+\.)*+[A-Z][A-Za-z0-9_]*?(?:Error|Exception): \S.*)$"
)
WIDE_PROSE_CHAR = compile_lazily(rf"[{_WIDE_PROSE}]")
# (no white space before the mark in the pattern: the callers strip what they cut, for `\s*` searched from every
# place in a long run of spaces with no mark after it is quadratic)
WIDE_SENTENCE_END = compile_lazily(r"[\uff0c\u3002\uff1f\uff01\uff1b\u300d\u300f\u3011\uff09\u00bb]")
# An exception line a reader retyped in lower case (`valueerror: loading … requires you to execute …`,
# `runtimeerror: cuda error: out of memory`): CPython never prints a type so, so the type is restored from the
# classes it can name (`known_exception_type`), and the line is a fallback like INLINE_EXCEPTION.
RETYPED_EXCEPTION = compile_lazily(r"(?:^|\s)(?P<type>(?:[a-z_]\w*+\.)*+[a-z]\w*?(?:error|exception)): (?P<msg>\S.*)$")
# A GitHub issue title from a bug template, quoting the exception without marks (vllm#3676:
# `[Bug]: CohereForAI/c4ai-command-r-v01 : ValueError: User-specified max_model_len …`).
ISSUE_TITLE = compile_lazily(
    r"^\[(?:Bug|Usage|Installation|Performance|Feature|Misc|Doc)\]:? .*?(?<![\w.])"
    r"(?P<failure>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception): \S.*)$"
)
# A shell prompt that came back after the crash and was copied with it: `(venv) user@host:~/dir$ `.
SHELL_PROMPT = compile_lazily(r"^(?:\([\w.-]+\) )?[\w.-]+@[\w.-]+:[^\s$#]*[$#](?: |$)")
# A quoted name whose closing quote the copy lost at the end of the span: `No module named 'vllm.x`.
UNCLOSED_NAME = compile_lazily(r"(?:^|\s)'[\w.\-/]++$")
# A wrapper's tag before the message it re-raises (Xinference: `[address=0.0.0.0:39501, pid=13418] `): not
# part of the engine's message.
WRAPPER_TAG = compile_lazily(r"^\[address=[^\]\s]{1,200}, pid=\d+\] ")
# The second paragraph a library prints after a blank line in its own exception message: transformers'
# unknown model type (`…is out of date.` + blank line + `You can update Transformers with the command …`), and
# torch.compile's (torch/_dynamo/exc.py format_error_msg: `from user code:` and the user's frames it quotes,
# `Set TORCH_LOGS="+dynamo" and TORCHDYNAMO_VERBOSE=1 for more information`; later releases `Set TORCHDYNAMO_VERBOSE=1
# for the internal stack trace …`, vllm-project/vllm#23714).
MESSAGE_SECOND_PARAGRAPH = compile_lazily(r"You can update Transformers with the command |from user code:\s*$|Set TORCH_LOGS=|Set TORCHDYNAMO_VERBOSE=")
# The heading after which torch.compile's message quotes the user's frames (CPython's format, indented by one more
# space): they are its message, not a traceback of their own.
QUOTED_FRAMES_HEADING = "from user code:"
# argparse: `launch_server.py: error: unrecognized arguments: …`, `sglang serve: error: …`; without a program name
# only in argparse's own wordings (a SystemExit that copies them: SGLang's diffusion server raises
# `error: unrecognized arguments: …`, python/sglang/multimodal_gen/runtime/server_args/server_args.py; sgl-project/sglang#34226)
# The compiler drivers print `clang: error: …` too: their diagnostics are read as a compiler's (typeless_errors.py).
# Slurm's programs say `srun: error: …` of the job, never of the engine's arguments: not argparse's.
# vLLM's benchmarks are a subcommand's subcommand, `vllm bench latency: error: …` (argparse's nested subparsers' prog,
# vllm/entrypoints/cli/benchmark/main.py, 0.11.2 and 0.33.0): the program is all three words.
# The program's name is ASCII, as a script's name on a command line is: Chinese words before it with no space are
# the user's sentence (`启动时显示vllm: error: …`), read by PROSE_USAGE_ERROR.
USAGE_ERROR = compile_lazily(
    r"^(?:(?!(?:clang|amdclang|hipcc|nvcc|gcc|g\+\+|c\+\+|ld(?:\.lld)?|srun|sbatch|salloc|slurmstepd)(?:\+\+)?: )(?P<prog>vllm bench [\w\-]+|[A-Za-z0-9_./\-]+(?: [A-Za-z0-9_\-]+)?): |(?=error: (?:unrecognized arguments: |the following arguments are required: "
    r"|argument -{1,2}[\w\-]+(?:/-{1,2}[\w\-]+)*: |ambiguous option: )))error: (?P<msg>.+)$"
)
# Another program's own `error:` line has argparse's shape too: jq's `jq: error: writing output failed: Stale file
# handle` (jq's main.c), git's `git: error: …`, a wrapper script's tools run before the engine (the retired blind split
# 15's H-04: VectorInstitute/vector-inference#195, the Slurm script's jq line in front of vLLM's healthy start).  A
# `PROG: error: MSG` line is argparse's when argparse's own wording opens MSG (Lib/argparse.py: `unrecognized arguments:`,
# `the following arguments are required:`, `argument X: …`, `ambiguous option:`, `one of the arguments … is required`), when PROG is a name argparse gives a
# Python program (its script's file name, `sys.argv[0]`'s basename: `launch_server.py`; the engines' CLIs `vllm serve`,
# `sglang serve`, whose own `parser.error` messages are free text: vllm/entrypoints/openai/cli_args.py `Invalid JSON
# format for --lora-modules: …`), or when argparse's `usage: PROG …` line came before it (ArgumentParser.error prints
# the usage first, then `%(prog)s: error: %(message)s`).
ARGPARSE_OWN_WORDING = compile_lazily(
    r"(?:unrecognized arguments: |the following arguments are required: |argument [\w\-]+(?:/-{1,2}[\w\-]+)*: "
    # a required mutually exclusive group (`one of the arguments %s is required`), and a subcommand argparse names by its
    # choices (_get_action_name: `'{' + ','.join(choices) + '}'`, `argument {serve,bench}: invalid choice: …`)
    r"|ambiguous option: |one of the arguments |argument \{[\w,\-]{1,500}\}: )"
)
ARGPARSE_PROGRAM = compile_lazily(r"(?:[\w.\-/]+\.py|(?:vllm|sglang)(?: [\w\-]+){0,2}|python[\d.]*)$")
USAGE_LINE = compile_lazily(r"^\s*usage: (?P<prog>\S.*)$")


def argparse_error(usage: re.Match[str], usages_above: Iterable[str] = ()) -> bool:
    """Whether a line USAGE_ERROR matched (`usage`) is argparse's own error, not another program's `error:` line (see
    ARGPARSE_OWN_WORDING); `usages_above`: the text after `usage: ` of the usage lines the log printed before it."""
    prog = usage["prog"]
    if prog is None or ARGPARSE_OWN_WORDING.match(usage["msg"]) or ARGPARSE_PROGRAM.match(prog):
        return True
    return any(shown == prog or shown.startswith(prog + " ") for shown in usages_above)


# argparse's error message cut where a terminal or a paste wrapped it (`launch_server.py: error: the following arguments
# are` + `required: --model-path` on the next line): its own wordings (CPython Lib/argparse.py: "the following arguments
# are required: %s", "unrecognized arguments: %s", "argument %s: invalid choice: %r (choose from %s)", "ambiguous option:
# %s could match %s") stop short, at a colon or a comma, or inside the choices' parenthesis.  The next line is its rest.
_USAGE_WORDINGS = ("the following arguments are required:", "unrecognized arguments:", "ambiguous option:")
USAGE_MESSAGE_CUT = compile_lazily(r"(?:[:,]|\(choose from[^)]{0,4000})$")
MAX_USAGE_MESSAGE = 4096  # characters of a wrapped usage message joined: argparse's choices lists are shorter


def usage_message_cut(message: str) -> bool:
    """Whether an argparse error's message stops where the line was wrapped, its rest on the next line."""
    message = message.rstrip()
    if not message or len(message) > MAX_USAGE_MESSAGE:
        return False
    if any(wording.startswith(message) and wording != message for wording in _USAGE_WORDINGS):
        return True  # a wording cut in its middle (`the following arguments are`)
    return USAGE_MESSAGE_CUT.search(message[-4000:]) is not None


# argparse's error line after words of the user's on the same line (`报错日志：vllm serve: error: argument
# --tool-call-parser: invalid choice: …`, zai-org/GLM-4.5#58; `I got: launch_server.py: error: unrecognized arguments: …`):
# only argparse's own wordings after the program's name, which starts after white space or a colon (ASCII or
# full-width), or right after a word of Chinese, Japanese or Korean prose, which puts no space before it
# (`运行后显示launch_server.py: error: unrecognized arguments: …`, the retired blind split 13; the script's name is
# ASCII, as a file name on a command line is).  A fallback: the failure only of a paste that shows no other.
PROSE_USAGE_ERROR = compile_lazily(
    rf"(?<=[\s:\uff1a{_WIDE_PROSE}])"
    r"(?P<usage>(?:vllm bench [\w\-]+|[A-Za-z0-9_./\-]+(?: [A-Za-z0-9_\-]+)?): error: (?:unrecognized arguments: |the following arguments are "
    r"required: |argument -{1,2}[\w\-]+(?:/-{1,2}[\w\-]+)*: |ambiguous option: ).+)$"
)
# The same line retyped by hand inside prose, its spacing lost or changed and typographic quotes around it
# (`2.报错：“vllm:error:unrecognized arguments:--enable-reason”`, datawhalechina/self-llm#459, the retired blind split
# 14's D-09): read against argparse's template (Lib/argparse.py ArgumentParser.error prints `%(prog)s: error: %(message)s`,
# its messages `unrecognized arguments: %s`, `the following arguments are required: %s`, `argument %s: …`, `ambiguous
# option: %s …`), any white space around its colons; the message ends at the quote that closes it.
RETYPED_USAGE_ERROR = compile_lazily(
    rf"(?:^|(?<=[\s:\uff1a{_WIDE_PROSE}\u2018\u2019\u201c\u201d\"'`]))"
    r"(?P<prog>[A-Za-z0-9_./\-]+) *: *error *: *(?P<wording>unrecognized arguments|the following arguments are required"
    r"|argument -{1,2}[\w\-]+(?:/-{1,2}[\w\-]+)*|ambiguous option) *: *(?P<rest>[^\s\u2018\u2019\u201c\u201d\"`][^\u2018\u2019\u201c\u201d\"`]*)"
)
# An exception a sentence quotes as its repr: `… at runtime: ValueError("type fp8e4nv not supported …")`
# (MiniMax-AI/MiniMax-M2.5#21, noonghunna/club-3090#122).  Not code that raises it (`raise ValueError("…")`).
# A fallback, like INLINE_EXCEPTION: warnings quote survived errors the same way (repr_failure).
REPR_EXCEPTION = compile_lazily(
    r"(?<![\w.])(?<!raise )(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception))\((?P<q>[\"'])(?P<msg>\S.*?)(?P=q)\)"
)
# Lines that only report the cascade after a process died.  vLLM's parent processes log the death of a child
# without its cause (`Worker proc VllmWorker-2 died unexpectedly, shutting down executor.`, v1/executor/
# multiproc_executor.py, intel/llm-scaler#154; `Engine core proc EngineCore_DP0 died unexpectedly, shutting down
# client.`, v1/engine/core_client.py, vllm-project/vllm#27549; 0.8's `MulitprocExecutor got fatal signal from worker
# processes, shutting down.`, v1/executor/multiproc_executor.py, vllm-project/vllm#14452): a cascade of the child's
# own error when the paste shows it, else the one failure (a child killed from outside).  Slurm's job step says
# the same of a task it ran (`srun: error: NODE: task 0: Exited with exit code 1`, `…: tasks 0-3: Killed`: srun's
# step launch reporting how its tasks ended, `_task_finish` in src/plugins/launch/slurm/launch_slurm.c of SchedMD/slurm,
# src/srun/launch.c in later releases): a trailer, not a cause.
KILL_LINE = compile_lazily(
    r"(?:Received sigquit from a child proc(?:ess|es)?\b.*"
    r"|^srun: error: \S+: tasks? [\d,\-]+: (?:Exited with exit code \d+|Killed|Terminated)\b.*"
    r"|^(?:.*\s)?Killed(?:\s+.*)?$"
    r"|exit(?:ed with)? code:? -9\b.*"
    r"|died, exit code: -?\d+.*"
    r"|\b(?:Worker|Engine core) proc(?:ess)? \S+ died unexpectedly\b.*"
    r"|\bgot fatal signal from worker processes\b.*)"
)
KILL_LINE_WORDS = ("Killed", "sigquit", "exit", "died unexpectedly", "fatal signal from worker")  # one is in every KILL_LINE
# Ray's report of a worker process that died under a task or an actor (its raylet's `A worker died or was killed while
# executing a task by an unexpected system error. …`, python/ray/exceptions.py ActorDiedError's `The actor is dead because
# its worker process has died. Worker exit type: SYSTEM_ERROR …`): a kill notice when it stands alone
# (Unakar/Logic-RL#18, verl-project/verl#472, #2398); inside a RayActorError's message it stays that message's
# (the scanner reads it only on a line no failure took).
RAY_WORKER_DIED = compile_lazily(
    r"\b(?:A worker died or was killed while executing a task by an unexpected system error"
    r"|The actor is dead because its (?:worker process|owner) has died)\b"
)
RAY_WORKER_DIED_WORDS = ("died or was killed while", "actor is dead because")
# The raylet's sentence is a log line of its own, never the continuation of an exception's message (ActorDiedError's
# `The actor is dead because …` is one: it stays its message's).
RAYLET_WORKER_DIED = "A worker died or was killed while executing a task"
# Ray's list of what may have killed a worker, after its report (`There are some potential root causes. (1) The process is
# killed by SIGKILL by OOM killer …`, newer Ray `Some common causes include: …`): guesses, not this death's cause.
RAY_CAUSE_GUESSES = ("There are some potential root causes.", "Some common causes include")


def without_ray_cause_guesses(text: str) -> str:
    """Ray's report of a dead worker without the list of causes it guesses at."""
    cut = min((at for guess in RAY_CAUSE_GUESSES if (at := text.find(guess)) > 0), default=len(text))
    return text[:cut].rstrip()
# What a runtime source (sources/runtime/: docker inspect, kubectl get pod, systemctl show) knows and the log
# does not, appended after the log as marked lines starting with models.FACT_PREFIX.
FACT_LINE = compile_lazily(r"^\[logsleuth: (?P<subject>[^:\]]+): (?P<facts>.+)\]\s*$")
# A Kubernetes event of the pod: `Warning FailedScheduling (x1, last …): message`.
FACT_EVENT = compile_lazily(r"^(?P<level>Warning|Normal) (?P<reason>\w+)(?: \([^)]*\))?: (?P<message>.*)$")
FACT_REASON = compile_lazily(r"(?:^|, )reason (?P<reason>\w+)")
FACT_EXIT = compile_lazily(r"(?:^|, )(?:exit code|exit status) (?P<code>\d+)")
FACT_SIGNAL = compile_lazily(r"\(SIG\w+\)|killed by (?:SIG\w+|signal \d+)|\(Result=(?:signal|core-dump)\)")
FACT_SYSTEMD_RESULT = compile_lazily(r"\(Result=(?P<result>[\w-]+)\)")
FACT_UNSCHEDULABLE = compile_lazily(r"phase Pending, PodScheduled False \((?P<reason>\w+)\)")
# kubelet's image-pull reasons (pkg/kubelet/images/types.go): a container waiting on them never started.
IMAGE_PULL_REASONS = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"})
# A container that ended with one of these only says how it ended: its cause is in the log, or unknown.
ENDED_REASONS = frozenset({"Error", "Completed", "CrashLoopBackOff", "ContainerStatusUnknown"})
CASCADE_CONTEXT_LINE = compile_lazily(r"kill_process_tree called|Dumping requests before crash|Dumped \d+ finished")
PY_WARNING = compile_lazily(r"^\S+:\d+: \w*Warning: ")
# A line that opens a log record of its own: `INFO:     …` (uvicorn), `WARNING 03-25 …` (vLLM without
# its process prefix), `2025-04-23 21:31:45,123 - …` (logging's default asctime), `[2025-… ]`.
# multiprocessing's BaseProcess._bootstrap prints "Process <name>:" before the traceback of a child process that
# died (vLLM's `Process EngineCore_DP0:`, `Process SpawnProcess-1:`): it starts another failure, so it never
# continues the message of the one before it.
PROCESS_DIED_HEADER = compile_lazily(r"^Process [^\s:]+:$")
LOG_RECORD_START = compile_lazily(
    r"^(?:(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)(?::\s| \d\d-\d\d )"
    r"|\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}"
    r"|\d{2}-\d{2} \d{2}:\d{2}:\d{2} )"
)
# A group header sharing its line with log text (SGLang logs `f"Scheduler hit an exception: {tb}"`).
GROUP_AFTER_TEXT = compile_lazily(r"^(?:(?P<head>.*\S) )?(?P<group> *\+ Exception Group Traceback \(most recent call last\):)\s*$")
GROUP_CLOSE = compile_lazily(r"^\s*\+-+$")
# A C++ exception that reached std::terminate (NCCL watchdog aborts): no Python traceback,
# the type on this line and the message on the `what():` line after it.
CPP_TERMINATE = compile_lazily(r"^terminate called after throwing an instance of '(?P<type>[^']+)'")
# After `what():`, the C++ exception's message ends where its backtrace starts.
CPP_BACKTRACE = compile_lazily(r"^\s*(?:Exception raised from |frame #\d+:)")
# Native fatal output that is no Python exception (scanned like a C++ abort: the header line, then the lines
# that belong to it).  Each row: (regex, type).  The `msg` group is the message's first line, `type` the
# type when the row gives None.  A row is tried only on a line that holds its literal (native_header).
# Wordings: the C runtime's and UCX's signal handlers (`Caught signal 11 (Segmentation fault: …)` then
# `==== backtrace`, NVIDIA/TensorRT-LLM#752), abseil's and glog's failure signal handler as Ray and
# gRPC print it (`*** SIGSEGV received at time=… on cpu N ***`, vllm-project/vllm#6783, #3053, #17242),
# glog's FATAL record (`F1006 09:50:58.620735 13380 common.cc:34] Check failed: …`, apache/singa#805,
# chipsalliance/verible#452), Rust's panic message before and after Rust 1.73 (rust-lang/rust#54900,
# ishiko732/fsrs-online-training#13; the sgl-router is written in Rust, sgl-project/sglang#6491) and pip's
# resolver (`ERROR: Cannot install …`, vllm-project/vllm#9092, waybarrios/vllm-mlx#19; `ERROR: pip's
# dependency resolver …`, vllm-project/vllm#6200, vllm-project/vllm-ascend#8286).
RAY_TERMINATE = "Unhandled exception: "  # Ray's terminate handler (NATIVE_HEADERS)
RAY_FATAL = " C "  # the level letter of Ray's FATAL record between its time and pid (NATIVE_HEADERS)
FILE_ROW_BANNER = "Segfault encountered"  # the one native dump whose frames are rows of CPython's frame format
# Such a dump's row (`  File "<unknown>", line 0, in cuMemcpyBatchAsync`): CPython never prints line 0 of an unknown file.
# Rows of it above any banner are the tail of a dump printed before (vllm-project/vllm#44780): no failure of their own
# when the paste shows another.
NATIVE_FILE_ROW = compile_lazily(r'^\s*File "<unknown>", line 0, in \S')
NATIVE_HEADERS: tuple[tuple[str, re.Pattern[str], str | None], ...] = (
    # (the literal a line needs before the regex is tried ("" = a glog record's `F`), regex, type)
    ("Caught signal", compile_lazily(r"^(?:\[[^\]]{1,200}\]\s*)?Caught signal (?P<signal>\d{1,2}) \((?P<msg>[^)]*)\)"), None),
    ("*** SIG", compile_lazily(r"^(?:.{0,300}\s)?\*\*\* (?P<msg>(?P<type>SIG[A-Z]{2,8}) [^*]*?)\s*\*\*\*"), None),
    # the banner of a fatal-signal handler loaded into the process (`!!!!!!! Segfault encountered !!!!!!!`), its backtrace after
    # it in CPython's frame format, innermost first (`  File "misc/cudawrap.cc", line 92, in ncclCuMemHostEnable()`,
    # vllm-project/vllm#27868); the same banner ends SGLang's schedulers and TensorRT-LLM runs
    (FILE_ROW_BANNER, compile_lazily(r"^(?:.{0,300}\s)?!{3,} ?(?P<msg>Segfault encountered) ?!{3,}\s*$"), "SIGSEGV"),
    # Ray's terminate handler, the C++ exception that ended a Ray process (src/ray/util/logging.cc: `logging.cc:97:
    # Unhandled exception: <the type's mangled name>. what(): <its message>`, then `Stack trace:` and its frames):
    # vllm-project/vllm#878, #13354, hiyouga/EasyR1#52, ray-project/ray#44296, #59626
    (RAY_TERMINATE, compile_lazily(
        r"^(?:.{0,300}\s)?logging\.cc:\d+: Unhandled exception: (?P<type>[^\s.]+)\. what\(\): (?P<msg>\S.*)$"), None),
    ("panicked at", compile_lazily(r"^(?:.{0,300}\s)?thread '(?P<thread>[^']*)'(?: \(\d+\))? panicked at (?P<msg>.*)$"),
     "Rust panic"),
    ("", compile_lazily(r"^\[?F\d{3,4} \d\d:\d\d:\d\d\.\d+\s+(?:\d+\s+)?[^\]\s]+\] ?(?P<msg>\S.*)$"), "FATAL"),
    # Ray's own FATAL record (src/ray/util/logging.cc: the text format `[%Y-%m-%d %H:%M:%S,%e %L %P %t] %v`, spdlog's level
    # letter `C` for critical, RAY_LOG(FATAL) and a failed RAY_CHECK; the record is `<file>:<line>: <text>`, then
    # `*** StackTrace Information ***` and the frames, then abort()): `(TaskRunner pid=…) [2025-07-06 07:14:27,052 C 2915798
    # 2915798] task_receiver.cc:219:  Check failed: objects_valid` (verl-project/verl#2380), the raylet's
    # `experimental_mutable_object_provider.cc:153: … Check failed: object_manager_->WriteAcquire(…)`.  Its E record is an
    # error Ray survives (its terminate handler's `logging.cc:97: Unhandled exception` is read above).
    (RAY_FATAL, compile_lazily(r"^(?:.{0,300}\s)?\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} C \d+ \d+\] (?P<msg>\S.*)$"), "FATAL"),
    ("ERROR: Cannot install",
     compile_lazily(r"^ERROR: (?P<msg>Cannot install .* because these package versions have conflicting dependencies\.)"),
     "ResolutionImpossible"),
    ("ERROR: pip's", compile_lazily(r"^ERROR: (?P<msg>pip's dependency resolver does not currently take into account .*)"),
     "pip dependency conflict"),
    ("ERROR: No matching", compile_lazily(r"^ERROR: (?P<msg>No matching distribution found for .*)$"), "pip: no matching distribution"),
    # uv's resolver (`  × No solution found when resolving dependencies:` then its `╰─▶ Because …` derivation,
    # vllm-project/vllm#11283)
    ("No solution found", compile_lazily(r"^\s*(?:×|x) (?P<msg>No solution found when resolving dependencies\b.*)$"), "ResolutionImpossible"),
)
# What the shell prints when the program died of a signal (bash's wordings; localized ones are left out), and the
# signal each names.
SHELL_NOTICE_SIGNALS = {"Segmentation fault": "SIGSEGV", "Illegal instruction": "SIGILL", "Bus error": "SIGBUS",
                        "Aborted": "SIGABRT"}
_SHELL_NOTICE_NAMES = "|".join(SHELL_NOTICE_SIGNALS)
SHELL_NOTICE = compile_lazily(rf"^(?:{_SHELL_NOTICE_NAMES})(?: \(core dumped\))?\s*$")
# The same notice as a shell running a script prints it (bash jobs.c, non-interactive: `serve.sh: line 12:  4242
# Segmentation fault      (core dumped) python3 -m …`, the status padded to a column, then the command).
SCRIPT_SHELL_NOTICE = compile_lazily(
    rf"^\S+: line \d+: +\d+ (?P<name>{_SHELL_NOTICE_NAMES})(?P<core> +\(core dumped\))?(?: +\S.*)?$"
)
# A frame of a native signal handler's backtrace, in the handlers' own formats: UCX's rows (` 1 0x… SaveProxy()
# /…/nccl/src/proxy.cc:518`, ucs/debug/debug.c; sgl-project/sglang#3837, NVIDIA/TensorRT-LLM#752), glibc's
# backtrace_symbols (`/usr/lib/libnccl.so.2(+0xbd72c)[0x7d1d…]`, Open MPI's with `[host:pid] [ 4] ` before it,
# NVIDIA/nccl#2380), gdb's (`#0  0x… in ncclProxyService () from …/libnccl.so.2`, sgl-project/sglang#2803) and
# abseil's as Ray prints it (`PC: @     0x7f32…  (unknown)  ncclLaunchPrepare()`, vllm-project/vllm#15098).
# `first` marks a backtrace's innermost row: a new dump starts there.
NATIVE_FRAME = compile_lazily(
    r"^\s*(?:\[[^\]]{1,200}\]\s*)?(?:"
    r"(?P<ucx>\d{1,3}) 0x[0-9a-f]{6,16} \S"
    r"|\[ ?(?P<glibc>\d{1,3})\] \S+\([^)\s]*\)\s*\[0x[0-9a-f]+\]|\S+\([^)\s]*\+0x[0-9a-f]+\)\s*\[0x[0-9a-f]+\]"
    r"|#(?P<gdb>\d{1,3})\s+(?:0x[0-9a-f]+ in \S|\S+ \(.*\) at \S+:\d+)"
    r"|(?P<pc>PC: )?@\s+0x[0-9a-f]+\s)"
)
# The handler's own frames at the top of a dump (the signal's delivery, abort(), the handler and the logger that
# prints it) and the C library's (a fault in memcpy is its caller's): they say nothing of where the crash was.
HANDLER_FRAME = compile_lazily(
    r"(?<![\w:])(?:__sigaction|__restore_rt|(?:__GI_)?raise|(?:__GI_)?abort|gsignal|__pthread_kill\w*|pthread_kill"
    r"|killpg|ucs_\w+|__libc_\w*sig\w*|libc_sigaction|backtrace\w*)\b|\b(?:absl|google)::|\(unknown\)\s*\(unknown\)\s*$|\?\?\?\(\)"
    r"|/lib(?:c|pthread)\.so"
)
NATIVE_FRAMES_KEPT = 3  # innermost frames of a dump kept as the failure's evidence


def native_frame(text: str) -> bool | None:
    """None when the line is no native backtrace frame; else whether it is its dump's innermost row."""
    if "0x" not in text:
        return None
    m = NATIVE_FRAME.match(text)
    if m is None:
        return None
    number = m["ucx"] or m["glibc"] or m["gdb"]
    return number == "0" if number is not None else m["pc"] is not None


def native_dump_evidence(lines: list[str]) -> tuple[str, ...]:
    """What a native dump says of its crash (its lines after the banner): the innermost frames that are not the
    handler's own, and the error or warning lines another thread wrote into it (`NCCL WARN …`)."""
    frames: list[str] = []
    said: list[str] = []
    for text in lines:
        if native_frame(text) is not None or (text.lstrip().startswith("File ") and FRAME_LINE.match(text)):
            if len(frames) < NATIVE_FRAMES_KEPT and not HANDLER_FRAME.search(text):
                frames.append(text.strip())
        elif any(word in text.lower() for word in CONTEXT_WORDS) and CONTEXT_HINT.search(text):
            said.append(text.strip())
    return (*said, *frames)
# Where a native failure's message ends and its backtrace or a hint begins.
NATIVE_MESSAGE_END = compile_lazily(
    r"^\s*(?:stack backtrace:|note: |\d+: |==== backtrace|\*\*\* Check failure stack trace|\*\*\* StackTrace Information|@ |PC: @|"
    r"To fix this you could try|ERROR: ResolutionImpossible|Successfully installed )"
)
# A glog ERROR record (`E1203 12:00:00.000000  1234 file.cc:12] …`): a logged error, which a server may
# survive, so it is the failure only of a paste that shows no other (a fallback).
# torch's c10 logging writes the same record in brackets and without the thread id
# (`[rank3]:[E1016 03:31:38.919469923 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation
# timeout: …`, sgl-project/sglang#1693, sgl-project/sglang#3368); torch before 2.4 wrote it with neither date nor time
# (`[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: …`,
# vllm-project/vllm#6042; c10/util/Logging.cpp's prefix of those releases).
GLOG_ERROR = compile_lazily(
    r"^\[?(?:E\d{3,4} \d\d:\d\d:\d\d\.\d+\s+(?:\d+\s+)?[^\]\s]+|(?<=\[)E [\w.\-]+\.(?:cpp|cc|cu|h):\d+)\] ?(?P<msg>\S.*)$"
)


# The exception torch's NCCL watchdog builds from the text it logs on a collective's timeout
# (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp, 2.1 and later: `LOG(ERROR) << exceptionMsg`, then
# `C10_BUILD_ERROR(DistBackendError, exceptionMsg)`, which the watchdog rethrows and terminates the process with:
# `terminate called after throwing an instance of 'c10::DistBackendError'`, OpenRLHF/OpenRLHF#1126,
# vllm-project/vllm#6042).  The record names that exception, not the log level.
# The watchdog's own exit record says the same: `Process group watchdog thread terminated with exception: <the
# timeout's text>` is the what() of the DistBackendError it terminates with.
WATCHDOG_TIMEOUT = "Watchdog caught collective operation timeout"
WATCHDOG_EXCEPTION = "c10::DistBackendError"
_WATCHDOG_EXCEPTION_TEXTS = (WATCHDOG_TIMEOUT, "Process group watchdog thread terminated with exception: ")
# torch before 2.2 worded the watchdog's exit `[Rank N] NCCL watchdog thread terminated with exception: <what()>` and
# terminated with a std::runtime_error of that text (ProcessGroupNCCL.cpp ncclCommWatchdog)
OLD_WATCHDOG_EXIT = "] NCCL watchdog thread terminated with exception: "
OLD_WATCHDOG_EXCEPTION = "std::runtime_error"


def glog_record_type(message: str) -> str:
    """The type of a glog or c10 E record's failure: the exception the program builds from this very text when the
    record is one (the NCCL watchdog's timeout), else `ERROR`, the record's level (it names no exception)."""
    if OLD_WATCHDOG_EXIT in message:
        return OLD_WATCHDOG_EXCEPTION
    return WATCHDOG_EXCEPTION if any(text in message for text in _WATCHDOG_EXCEPTION_TEXTS) else LOGGED_LINE_TYPE


def glog_record(text: str, severity: str) -> bool:
    """Whether a line may be a glog or c10 record of `severity` ("E", "F"): the cheap test before the regex."""
    start = 1 if text[:1] == "[" else 0
    if text[start : start + 1] != severity:
        return False
    return text[start + 1 : start + 4].isdigit() or (start == 1 and severity == "E" and text[2:3] == " ")  # torch < 2.4


def shell_notice(text: str) -> tuple[str, str] | None:
    """(signal name, the shell's words) of the shell's notice that a child died of a signal, else None."""
    if not any(name in text for name in SHELL_NOTICE_SIGNALS):
        return None
    m = SCRIPT_SHELL_NOTICE.match(text)
    if m is not None:
        return SHELL_NOTICE_SIGNALS[m["name"]], m["name"] + (" (core dumped)" if m["core"] else "")
    if SHELL_NOTICE.match(text):
        words = text.strip()
        return SHELL_NOTICE_SIGNALS[words.removesuffix(" (core dumped)")], words
    return None


def native_header(text: str) -> tuple[str, str] | None:
    """(type, first message line) of a line that starts native fatal output, else None."""
    if (reported := native_report(text)) is not None:
        return reported  # a failed C/C++ assert, LLVM's fatal error (native_asserts.py)
    for literal, pattern, fixed_type in NATIVE_HEADERS:
        if not (literal in text if literal else glog_record(text, "F")):
            continue
        m = pattern.match(text)
        if m is None:
            continue
        if "signal" in m.groupdict():
            return _signal_name(int(m["signal"])), m["msg"].strip()
        message = m["msg"].strip()
        if fixed_type == "Rust panic":
            message = message.removesuffix(":") if message.endswith(":") and "'" not in message else message
        if fixed_type is None and literal == RAY_TERMINATE:
            return demangled(m["type"]), message  # typeid's mangled name (`St12system_error`): std::system_error
        return fixed_type or m["type"], message
    return None


def _signal_name(number: int) -> str:
    import signal

    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


# A fatal error printed as one log line, not as a Python exception: (regex, type).  The regex's `msg` group
# is the message, its `type` group the type when the second item is None.  Tried only on lines that hold
# one of FATAL_LINE_WORDS.
# vLLM's engine logs its start-up error's text before raising it (V0 run_mp_engine, V1 run_engine_core), and
# pastes often keep only that record.  Such a line is a failure only when the log has no other
# (`is_typeless_engine_line`): with the traceback present, the traceback is the failure.
ENGINE_PROCESS_FAILED = "Engine process failed"  # the type of a vLLM process's fatal record without its traceback
ROUTER_WORKER_FAILED = "sgl-router: worker failed"  # SGLang's router (sgl-router) giving up on a worker (its WARN/ERROR record)
TYPELESS_ENGINE_LINES: tuple[tuple[re.Pattern[str], str], ...] = (
    # the KV cache check: V0 worker.raise_if_cache_size_invalid, V1 kv_cache_utils (a ValueError in both)
    (compile_lazily(r"^(?!\s*[\w.]+(?:Error|Exception): )(?:.*?\s)?(?P<msg>The model's max seq len \(\d+\) is larger "
                    r"than the maximum number of tokens that can be stored in KV cache \(\d+\)\..*)$"), "ValueError"),
    (compile_lazily(r"^(?!\s*[\w.]+(?:Error|Exception): )(?:.*?\s)?(?P<msg>To serve at least one request with the "
                    r"models?'s max seq len \(\d+\), \([\d.]+ GiB KV cache is needed.*)$"), "ValueError"),
    # Ray: vLLM waits for its placement group with growing waits (ray_utils.py: 10, 30, 70, 150, 310 … s) and
    # raises only after 1800 s; a paste that ends after a wait of 150 s or more shows a launch stuck there.
    (compile_lazily(r"^(?:.*?\s)?(?P<msg>Waiting for creating a placement group of specs for "
                    r"(?:1[5-9]\d|[2-9]\d\d|\d{4,}) seconds\..*)$"), "Waiting for a Ray placement group"),
    # a compiled extension that did not load, quoted in a warning the import survived (vLLM's _custom_ops:
    # `Failed to import from vllm._C with ImportError('/…/vllm/_C.abi3.so: undefined symbol: …')`,
    # vllm-project/vllm#5501): the broken install is the failure of a paste that shows nothing else
    (compile_lazily(r"^(?!\s*[\w.]+(?:Error|Exception): )(?:.*?[\s'\"(])?(?P<msg>/[^\s'\"]+\.(?:abi3|cpython-[\w\-]+)\.so: "
                    r"undefined symbol: [\w.@$]+)"), "ImportError"),
    # the record a vLLM process logs before the traceback of its own fatal error (logger.exception): the engine core
    # (v1/engine/core.py run_engine_core: `EngineCore failed to start.`, `EngineCore encountered a fatal error.`) and a
    # multiproc worker (v1/executor/multiproc_executor.py: `WorkerProc failed to start.`, `WorkerProc hit an
    # exception.`), 0.8 to 0.33.  A paste cut right after it still shows which process died, and when
    # (vllm-project/vllm#17276, #23176, #15469)
    (compile_lazily(r"^(?P<msg>(?:EngineCore failed to start|EngineCore encountered a fatal error|WorkerProc failed to start"
                    r"|WorkerProc hit an exception)\.)\s*$"), ENGINE_PROCESS_FAILED),
    # the model hub refusing a gated model, its exception's type line lost (a paste of the message alone, a wrapper
    # logging str(exc)): huggingface_hub's hf_raise_for_status raises GatedRepoError with `Cannot access gated repo
    # for url <url>.` and `Access to model <id> is restricted…` (huggingface_hub/utils/_http.py); transformers
    # re-raises it as OSError `You are trying to access a gated repo.` (transformers/utils/hub.py cached_files)
    (compile_lazily(r"^(?!\s*[\w.]+(?:Error|Exception): )(?:.*?\s)?(?P<msg>Cannot access gated repo for url \S+.*)$"),
     "GatedRepoError"),
    (compile_lazily(r"^(?!\s*[\w.]+(?:Error|Exception): )(?:.*?\s)?(?P<msg>Access to model \S+ is restricted\b.*)$"),
     "GatedRepoError"),
    (compile_lazily(r"^(?!\s*[\w.]+(?:Error|Exception): )(?:.*?\s)?(?P<msg>You are trying to access a gated repo\..*)$"),
     "OSError"),
    # Triton's kernel launch asking for more on-chip memory than the GPU has (triton/runtime/errors.py OutOfResources:
    # "out of resource: {name}, Required: {required}, Hardware limit: {limit}"), its type lost: a sentence quoting
    # it, or a paste that put it above frames whose own exception line it lost (repair.py then joins them)
    (compile_lazily(r"^(?:.*?\s)?(?P<msg>out of resource: [\w ]+, Required: \d+, "
                    r"Hardware limit: \d+.*)$"), "OutOfResources"),
    # the advice paragraph of transformers' unknown model type (transformers/models/auto/configuration_auto.py raises
    # ValueError: "The checkpoint you are trying to load has model type `x` but Transformers does not recognize this
    # architecture. …" + blank line + "You can update Transformers with the command `pip install --upgrade
    # transformers`. If this does not work, and the checkpoint is very new, …"), pasted without the error's first line:
    # the failure of a paste that shows no other (after its first line it is that message's, MESSAGE_SECOND_PARAGRAPH)
    (compile_lazily(r"^(?!\s*[\w.]+(?:Error|Exception): )\W{0,4}(?P<msg>(?:You can update Transformers with the command "
                    r"`pip install --upgrade transformers`|If this does not work, and the checkpoint is very new, then there may "
                    r"not be a release version that supports this model yet).*)$"), "ValueError"),
    # vLLM's engine core caught an exception in a step and dumps the step's input before it dies (v1/engine/core.py
    # _process_engine_step -> logging_utils/dump_input.py dump_engine_exception: `Dumping input data for V1 LLM engine
    # (vX) with config: …`, then the scheduler output); the error follows it.  A paste cut there still shows that the
    # engine core died (vllm-project/vllm#28714, #27904)
    (compile_lazily(r"^(?:.*?\s)?(?P<msg>Dumping input data for V1 LLM engine \(v[^)\s]{1,80}\))"), ENGINE_PROCESS_FAILED),
    # SGLang's disaggregation logs a request whose KV cache handover failed and goes on serving (srt/disaggregation/
    # decode.py, prefill.py: `Decode transfer failed for request rank=… with exception KVTransferError(bootstrap_room=…):
    # <why>`, `Prefill bootstrap failed for request …`): that request failed (sgl-project/sglang#10560, #11648, #9266).
    # Not `Aborted by AbortReq`: the request was cancelled upstream (a client or the router gave up, #12688)
    (compile_lazily(r"^(?:.*?\s)?(?P<msg>(?:Decode|Prefill) (?:transfer|bootstrap|handshake) failed for request [^\n]{0,600}? "
                    r"with exception KVTransferError\([^()]{0,200}\): (?!Aborted by AbortReq)\S.*)$"), "KVTransferError"),
    # SGLang's router (sgl-router, Rust) giving up on a worker: after its retries it removes the worker
    # (`Removing failed worker: <url>`, sgl-project/sglang#4562), its health checker cannot reach one (`health check
    # failed for <url>: <error>`, #12630), a PD stream from the decode server broke (`Stream error from decode server
    # <url>: <error>`, routers/http/pd_router.rs, #9266).  Not `health check is pending` (INFO while the workers start,
    # #4208) nor `Retrying request`.  Only the router's own records: its `[Router (Rust)]` prefix or its Rust target
    (compile_lazily(r"^(?=.{0,300}?(?:\[Router \(Rust\)\]|\bsglang_router_rs::|\bsgl_model_gateway::))(?:.*?\s)?"
                    r"(?P<msg>(?:Removing failed worker: |(?:HTTP |gRPC )?[Hh]ealth check failed for |"
                    r"Stream error from decode server )\S.*)$"), ROUTER_WORKER_FAILED),
    # Ascend CANN's runtime reporting a device-side error of a kernel (an AI vector or AI core unit's exception: an
    # invalid address, an out-of-range DDR access) in its EZ9999 record: `EZ9999: [PID: N] <time> The error from
    # device(chipId:7, dieId:0), serial number is 2, there is an exception of aivec error, core id is 9, …`
    # (sgl-project/sglang#12464, vllm-project/vllm-ascend#1972): the NPU counterpart of a CUDA kernel's illegal
    # access.  A fallback: torch_npu's RuntimeError after it, when pasted, is the failure
    (compile_lazily(r"^(?:.*?\s)?EZ9999: \[PID: \d+\] \S+ (?P<msg>The error from device\([^()]{0,60}\), serial number is "
                    r"\d+, there is an? [^,]{1,80}?(?:exception|error)[^,]{0,40})"), "EZ9999"),
)
FATAL_LINE_WORDS = ("rror", "atchdog", "undefined symbol", "max seq len", "placement group of specs", "failed to start",
                    "hit an exception", "gated repo", "is restricted", "out of resource", "Transformers with the command",
                    "the checkpoint is very new", '"detail"', "OCI runtime", "fatal ", ": No module named ",
                    "not found", "Dumping input data", "failed for request", "Removing failed worker",
                    "ealth check failed", "The error from device", "tool choice requires", "The model does not support",
                    "Assertion `", "Assertion '", "ncclCommWatchdog()", "CrashLoopBackOff", "Back-off restarting", "Crashed container",
                    "Connection error", "non-zero status: ", "ailed to start ", "ailed to launch ", "ailed to load ",
                    "UNAVAILABLE: ", "Memory access fault by GPU", "HSA_STATUS_ERROR", ") ERR", *COMPANION_WORDS,
                    *DEVICE_ERROR_WORDS)
FATAL_LINES: tuple[tuple[re.Pattern[str], str | None], ...] = (
    # a kernel or library (flashinfer, sgl-kernel): `CUDA Error: <text> (700) <file>: line N at function F`
    (compile_lazily(r"^\s*(?P<type>CUDA [Ee]rror): (?P<msg>\S.*?\(\d+\).*)$"), None),
    # SGLang's scheduler watchdog: `Watchdog timeout (self.watchdog_timeout=300)`, newer releases
    # `Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)`; a paste hard-wrapped at 80
    # columns cuts it before its closing parenthesis, which is then on the next line
    (compile_lazily(r"^(?P<type>(?:\w+ )?[Ww]atchdog timeout) \((?P<msg>self\.watchdog_timeout=[^)]*)(?:\)|$)"), None),
    # uvicorn cannot bind the HTTP port (it logs the OSError instead of raising it)
    (compile_lazily(r"^ERROR:\s+(?P<msg>\[Errno \d+\] error while attempting to bind on address .*)$"), "OSError"),
    # the dynamic loader's text of a Python extension module that cannot load, its `ImportError: ` lost (a
    # web UI showing str(exc), a wrapper's tag before it): only an import raises this text for such a module
    (compile_lazily(r"^(?!\s*[\w.]+(?:Error|Exception): )(?:.*?\s)?(?P<msg>/\S+\.(?:abi3|cpython-[\w\-]+)\.so: undefined symbol: \S+)\s*$"), "ImportError"),
    # CPython run as `python -m MODULE` (runpy._get_module_details) with the module not importable: the interpreter's
    # path, then `No module named sglang`, or `Error while finding module specification for 'vllm.entrypoints…'
    # (ModuleNotFoundError: No module named 'vllm')`; the server never started
    (compile_lazily(r"^\S*python[\d.]*: (?P<msg>No module named [\w.']+)\s*$"), "ModuleNotFoundError"),
    (compile_lazily(r"^\S*python[\d.]*: Error while finding module specification for '[\w.]+' \((?P<type>\w+Error): (?P<msg>.*)\)\s*$"), None),
    *TYPELESS_ENGINE_LINES,
)


def is_typeless_engine_line(text: str) -> bool:
    """A fatal line that is an engine's logged error text, or another program's survivable one (typeless_errors):
    reported only when nothing else failed."""
    if any(pattern.match(text) for pattern, _ in TYPELESS_ENGINE_LINES):
        return True
    found = typeless_error(text)
    return found is not None and found[2]


def is_elision(text: str) -> bool:
    """`...` or `…` alone on a line: lines were left out there.  (Callers on hot paths test
    `len(text) < ELISION_LENGTH` first.)"""
    return len(text) < ELISION_LENGTH and text.strip() in ELISIONS


def embedded_failure(text: str) -> str | None:
    """The exception or argparse line a sentence quotes, else None: "I get `KeyError: 'x'` when …"."""
    if text.startswith("[") and (title := ISSUE_TITLE.match(text)) and STRICT_EXCEPTION_LINE.match(title["failure"]):
        failure = title["failure"].rstrip()
        opener = text[title.start("failure") - 1]
        if opener in "`\"'*" and failure.endswith(opener):
            # the title quotes it (`[Bug] … failed with \`RuntimeError: CUDA error: invalid device ordinal\``,
            # sgl-project/sglang#3470): the closing mark is no part of the message
            failure = failure.rstrip(opener).rstrip()
        return failure
    if "`" not in text and '"' not in text and "*" not in text and "\u201c" not in text and " _" not in text \
            and not text.startswith("_"):
        return None  # most lines quote nothing: plain substring tests before any regex
    ambiguous_code = text.count("`") % 2 == 1  # a backtick inside the span: its end is unknown
    for m in EMBEDDED.finditer(text):
        if m["code"] is not None and ambiguous_code:
            continue
        quoted = m["code"] or m["bold"] or m["italic"] or m["underscored"] or m["quoted"]
        if len(quoted) > 2 and quoted[0] in "*_" and quoted[-1] == quoted[0]:
            quoted = quoted[1:-1]  # bold and italic at once: `**_ValueError: …_**`
        if m["code"] is not None and quoted[-1].isspace() and (last := text.rfind("`")) >= m.end():
            # `… Use `repo_type` argument if needed.`: a backtick after a space opens a span inside the quote
            # rather than closing it, so the quote runs to the line's last backtick.
            quoted = text[m.start("code") : last]
        quoted = quoted.strip()
        if STRICT_EXCEPTION_LINE.match(quoted) or GENERIC_EXCEPTION_LINE.match(quoted) or USAGE_ERROR.match(quoted):
            if quoted.count("'") % 2 and UNCLOSED_NAME.search(quoted):
                quoted += "'"
            return quoted
    return None


def prose_usage_error(text: str) -> str | None:
    """argparse's error line that words of the user's precede on its line, from the program's name on, else None."""
    if ": error: " not in text:
        return None
    m = PROSE_USAGE_ERROR.search(text)
    if m is None:
        return None
    usage = m["usage"].rstrip()
    if WIDE_PROSE_CHAR.match(text, m.start("usage") - 1) and (end := WIDE_SENTENCE_END.search(usage)) is not None:
        usage = usage[:end.start()].rstrip()  # the sentence in wide script goes on after it: its punctuation ends the message
    return usage if USAGE_ERROR.match(usage) else None


def retyped_usage_error(text: str) -> str | None:
    """argparse's error line a person retyped inside a sentence, its spacing changed (RETYPED_USAGE_ERROR), as argparse
    prints it, else None."""
    if "error" not in text or (m := RETYPED_USAGE_ERROR.search(text)) is None:
        return None
    rest = m["rest"].rstrip()
    if (end := WIDE_SENTENCE_END.search(rest)) is not None:
        rest = rest[:end.start()].rstrip()  # the sentence in wide script goes on after it: its punctuation ends it
    usage = f"{m['prog']}: error: {m['wording']}: {rest}"
    if usage in text:
        return None  # as argparse printed it: not retyped (the readers above take it)
    return usage if rest and USAGE_ERROR.match(usage) else None


def repr_failure(text: str) -> str | None:
    """`Type: message` of an exception a sentence quotes as its repr (`ValueError("…")`), else None.  A warning
    says the same of an error it survived (vLLM's `Failed to import from vllm._C: ModuleNotFoundError("…")`), so
    such a line is the failure only of a paste that has no other (a fallback)."""
    if "rror(" not in text and "xception(" not in text:
        return None
    m = REPR_EXCEPTION.search(text)
    return f"{m['type']}: {m['msg']}" if m else None


# A record whose whole text is an exception's repr: vLLM's multiprocessing engine logs `logger.exception(repr(e))`
# above the traceback (vllm/engine/multiprocessing/engine.py MQLLMEngine.start, client.py _set_errored, 0.6.x;
# vllm-project/vllm#9532: `RuntimeError('CUDA error: an illegal memory access …\nCUDA kernel errors …')`).  Only a
# class named as an exception is (exception_class_name: `OutOfMemoryError(…)`, `torch.AcceleratorError(…)`,
# triton's `OutOfResources(…)`): any object's repr looks the same (`PosixPath('/models/x')`, `Token('<s>')`); its
# message's escapes are the repr's, undone.
WHOLE_RECORD_REPR = compile_lazily(
    r"^(?P<type>(?:[A-Za-z_]\w*+\.)*+[A-Z]\w*+)\((?P<q>[\"'])(?P<msg>.*)(?P=q)\)\s*$"
)


def record_repr(text: str) -> tuple[str, str] | None:
    """(type, message) of a record that is only an exception's repr (WHOLE_RECORD_REPR), its message's repr escapes
    undone and its first line kept whole with the rest; None for any other text."""
    if (m := WHOLE_RECORD_REPR.match(text.strip())) is None or not exception_class_name(m["type"]):
        return None
    quote, body = m["q"], m["msg"]
    if body.count(quote) != body.count("\\" + quote):
        return None  # a quote inside that the repr did not escape: two arguments, or not a repr
    import ast  # only for such a record

    try:
        message = ast.literal_eval(quote + body + quote)
    except (ValueError, SyntaxError):
        message = body.replace("\\n", "\n")
    message = message.strip() if isinstance(message, str) else body
    return (m["type"], message) if message else None


# An exception a sentence names by its type and then quotes its message: "it raises an AssertionError saying
# "…"", "fails with ValueError with message '…'", "dies with an assertion error "…"" (an assert's message, the type
# written as words).  A fallback like INLINE_EXCEPTION.
SAID_EXCEPTION = compile_lazily(
    r"(?<![\w.])(?:(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*?(?:Error|Exception))|(?P<assertion>[Aa]ssertion ?[Ee]rror))"
    r",?\s+(?:saying|with (?:the )?(?:message|error)|that says|stating|of)?\s*:?\s*"
    r"(?:[\"\u201c](?P<msg>[^\"\u201c\u201d]{3,400})[\"\u201d]|'(?P<single>[^']{3,400})'(?!\w))"
)


def said_failure(text: str) -> str | None:
    """`Type: message` of an exception a sentence names and then quotes the message of, else None."""
    if (m := SAID_EXCEPTION.search(text)) is None:
        return None
    named_type = m["type"] or "AssertionError"  # "assertion error" in words is the assert's exception
    return f"{named_type}: {(m['msg'] or m['single']).strip()}"


def inline_failure(text: str) -> str | None:
    """The exception a sentence names without quoting it, else None (the caller's prefilter: `rror: ` or
    `xception: ` is in the line)."""
    m = INLINE_EXCEPTION.search(text)
    if m is None or m.start("failure") == 0:
        return None  # at the line's start it is an exception line, which the grammar reads as such
    failure = m["failure"].rstrip()
    if (closers := _TYPOGRAPHIC_QUOTES.get(text[m.start("failure") - 1])) is not None:
        # opened by a typographic quote: the quote's end is the message's
        failure = _in_typographic_quotes(failure, closers)
    elif WIDE_PROSE_CHAR.search(text, 0, m.start("failure")) is not None:
        # a sentence in wide script (or guillemets) around it: its punctuation after the message is the sentence's
        end = WIDE_SENTENCE_END.search(failure)
        failure = failure[:end.start()].rstrip() if end is not None else failure
    return failure if STRICT_EXCEPTION_LINE.match(failure) else None


# The quotes a word processor or an input method curls inside a message whose outer quotes it curled (CPython's own
# messages quote with ASCII marks only): read back as the ASCII marks they were.
_CURLED_INNER_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _in_typographic_quotes(failure: str, closers: str) -> str:
    """The exception line a typographic quote opened, up to the quote that closes it: the first closer of the pair
    that ends a word (white space, punctuation, a CJK character or the line's end after it, not a letter or another
    closer), else the last one; the quotes the editor curled inside it read back as ASCII (`‘ModuleNotFoundError: No
    module named ‘vllm’’`, review 1 of stop 50: the first closer cut the module's name off)."""
    closing = [at for at, char in enumerate(failure) if char in closers]
    if not closing:
        return failure
    end = next((at for at in closing if at + 1 == len(failure) or not _continues_quoted_word(failure[at + 1], closers)),
               closing[-1])
    return failure[:end].rstrip().translate(_CURLED_INNER_QUOTES)


def _continues_quoted_word(char: str, closers: str) -> bool:
    """Whether a character right after a closing quote shows the quote was inside the message: an ASCII letter, digit
    or underscore (`‘vllm’s`), or another closer of the pair (the outer one, right after the inner)."""
    return char in closers or char.isascii() and (char.isalnum() or char == "_")


def retyped_failure(text: str) -> str | None:
    """`Type: message` of an exception line retyped in lower case, its type restored (`valueerror` is ValueError,
    `torch.outofmemoryerror` torch.OutOfMemoryError), else None: only a type logsleuth knows is restored, so a
    lower-case word that merely ends in "error" is no failure.  The message is kept as typed."""
    m = RETYPED_EXCEPTION.search(text)
    if m is None:
        return None
    *modules, short = m["type"].split(".")
    restored = known_exception_type(short)
    return None if restored is None else ".".join((*modules, restored)) + f": {m['msg'].rstrip()}"


@lru_cache(maxsize=1)
def _known_exception_types() -> dict[str, str]:
    """Lower-cased name -> the class name: Python's built-in exceptions and the types facts/categories.toml names
    (torch's OutOfMemoryError, huggingface_hub's GatedRepoError, …)."""
    import builtins

    from logsleuth.facts.categories import table

    names = {name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)}
    names.update(name for row in table().rows for name in row.types)
    names.update(name for guidance in table().by_type for name in guidance.types)
    return {name.rsplit(".", 1)[-1].lower(): name.rsplit(".", 1)[-1] for name in names
            if name.endswith(("Error", "Exception")) and name not in NOT_BARE_TYPES}


def known_exception_type(lowered: str) -> str | None:
    return _known_exception_types().get(lowered)


@lru_cache(maxsize=1)
def _exception_classes() -> frozenset[str]:
    """The short names of Python's built-in exceptions and of the exception types facts/categories.toml names, whatever
    they end in (triton's `OutOfResources`, torch's `BackendCompilerFailed`)."""
    import builtins

    from logsleuth.facts.categories import table

    names = {name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)}
    names.update(name.rsplit(".", 1)[-1] for row in table().rows for name in row.types)
    names.update(name.rsplit(".", 1)[-1] for guidance in table().by_type for name in guidance.types)
    return frozenset(name for name in names if name.isidentifier())


def exception_class_name(type_name: str) -> bool:
    """Whether a class name is an exception's: named as one (STRICT_EXCEPTION_LINE's suffixes), a built-in exception,
    or an exception type the categories table names.  `PosixPath`, `Block`, `Token` are not."""
    return (STRICT_EXCEPTION_LINE.match(f"{type_name}: x") is not None
            or type_name.rsplit(".", 1)[-1] in _exception_classes())


@dataclass(frozen=True, slots=True)
class RuntimeFact:
    """What one fact line says went wrong.  `kind` is "line" for a fact that names a cause (an OOM kill, a probe
    kill, an event) and "killed" for one that only says how the process ended (an exit code, a signal), which
    is a cascade of whatever the log shows before it.  Of several fact lines, the one of highest `rank` is the
    failure; the others are its context."""

    kind: FailureKind
    type: str
    message: str
    rank: int


def runtime_fact(text: str) -> RuntimeFact | None:
    """The failure a runtime fact line states; None for any other line, and for a fact line that states nothing
    wrong (a running container, restarts only, a readiness probe failing while the server loads)."""
    if not text.startswith(FACT_PREFIX) or (m := FACT_LINE.match(text)) is None:
        return None
    subject, facts = m["subject"], m["facts"]
    message = f"{subject}: {facts}"
    if subject.endswith(" event"):
        return _event_fact(facts, message)
    if "OOMKilled" in facts or "(Result=oom-kill)" in facts:
        return RuntimeFact("line", "OOMKilled", message, 60)
    reason = FACT_REASON.search(facts)
    if reason is not None and reason["reason"] in IMAGE_PULL_REASONS:
        return RuntimeFact("line", reason["reason"], message, 40)
    if reason is not None and reason["reason"] not in ENDED_REASONS:
        return RuntimeFact("line", reason["reason"], message, 20)  # ContainerCannotRun, CreateContainerConfigError, …
    if (unschedulable := FACT_UNSCHEDULABLE.search(facts)) is not None:
        return RuntimeFact("line", unschedulable["reason"], message, 30)  # its FailedScheduling event says why
    result = FACT_SYSTEMD_RESULT.search(facts)
    if ", error: " in facts or (result is not None and result["result"] not in ("signal", "core-dump", "exit-code")):
        return RuntimeFact("line", "RuntimeError" if result is None else f"Result={result['result']}", message, 20)
    exit_code = FACT_EXIT.search(facts)
    if FACT_SIGNAL.search(facts) or (reason is not None and reason["reason"] == "CrashLoopBackOff"):
        return RuntimeFact("killed", "Killed", message, 10)
    if (exit_code is not None and exit_code["code"] != "0") or facts.startswith("phase Failed"):
        return RuntimeFact("killed", "Exited", message, 10)
    return None


def _event_fact(facts: str, message: str) -> RuntimeFact | None:
    """A Kubernetes event: its reason is the type.  The kubelet's wordings: prober.go (`Liveness probe failed: …`),
    kuberuntime_manager.go (`Container X failed liveness probe, will be restarted`), images/image_manager.go
    (`Failed to pull image "…": …`, `Back-off pulling image "…"`)."""
    m = FACT_EVENT.match(facts)
    if m is None:
        return None
    reason, said = m["reason"], m["message"]
    if reason == "Killing":
        probe_kill = " failed liveness probe" in said or " failed startup probe" in said
        return RuntimeFact("line", reason, message, 50) if probe_kill else None  # else a deletion, a rollout
    if m["level"] != "Warning":
        return None
    if reason == "Unhealthy":
        # Readiness keeps traffic away until the server is ready: failing while weights load is its job.
        return None if said.startswith("Readiness probe") else RuntimeFact("line", reason, message, 45)
    if reason == "BackOff" and said.startswith("Back-off restarting failed container"):
        return RuntimeFact("killed", "Killed", message, 5)  # the consequence of a crash, not its cause
    if reason == "FailedScheduling" or "pull image" in said or "ImagePull" in said or "InvalidImageName" in said:
        return RuntimeFact("line", reason, message, 40)
    return RuntimeFact("line", reason, message, 20)


def fatal_line(text: str) -> tuple[str, str] | None:
    """(type, message) of a fatal error printed as a line of its own, else None."""
    if not any(word in text for word in FATAL_LINE_WORDS):
        return None
    for pattern, fixed_type in FATAL_LINES:
        m = pattern.match(text)
        if m is not None:
            return fixed_type or m["type"], m["msg"].strip()
    if (found := typeless_error(text)) is not None:
        return found[0], found[1]
    if "'message'" in text and STRICT_EXCEPTION_LINE.match(text.strip()):
        return None  # the openai client's own exception line (`openai.BadRequestError: Error code: 400 - {'object': …}`)
    return http_error_body(text) if any(key in text for key in _BODY_KEYS) else None


# The error body of an OpenAI-compatible server (SGLang and vLLM answer a failed request with it, HTTP 4xx or
# 5xx), pasted from the client's side: `{"object": "error", "message": "…", "type": "InternalServerError",
# "param": null, "code": 500}`, or the newer `{"error": {"message": "…", "type": "…", "code": 500}}`.  Clients
# also print it escaped: as bytes (`b'{"object":"error",…the model\'s…}'`), as a JSON string inside another body
# (`{\"object\":\"error\",…}`), or as the Python dict the openai client holds (`{'object': 'error', …}`).
HTTP_ERROR_BODY = compile_lazily(
    r"""\{\s*(?:\\?"|')(?:object(?:\\?"|')\s*:\s*(?:\\?"|')error(?:\\?"|')|error(?:\\?"|')\s*:\s*\{|detail(?:\\?"|')\s*:)"""
)
_BODY_KEYS = ('"message"', '"detail"', "'message'", '\\"message\\"')
_TYPE_NAME = compile_lazily(r"[A-Za-z_][\w.]*")


def _error_body_at(text: str, start: int) -> dict[str, object] | None:
    """The body that starts at `start`: JSON, JSON with its quotes escaped, or a Python dict's repr; None when cut
    off or none of them (nothing reliable to read)."""
    decoder = json.JSONDecoder()
    rest = text[start:]
    for candidate in (rest, rest.replace('\\"', '"').replace("\\'", "'")):
        try:
            body, _ = decoder.raw_decode(candidate)
        except ValueError:
            continue
        return body if isinstance(body, dict) else None
    if rest[1:].lstrip().startswith("'"):
        import ast  # only for a Python dict's repr: the grammar's start-up imports stay few

        end = rest.rfind("}") + 1
        while end > 0:  # the outermost closing brace first, then each one before it
            try:
                body = ast.literal_eval(rest[:end])
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                end = rest.rfind("}", 0, end - 1) + 1
                continue
            return body if isinstance(body, dict) else None
    return None


def http_error_body(text: str) -> tuple[str, str] | None:
    """(type, message) of a server's JSON error body in the line, else None.  The engine's error is in the
    body's message; its type is the server's (`InternalServerError`), or `HTTPError` when it names none."""
    for m in HTTP_ERROR_BODY.finditer(text):  # a body that carries another as a string: the inner one is read next
        body = _error_body_at(text, m.start())
        if body is None:
            continue
        inner = body.get("error")
        if isinstance(inner, dict):
            body = inner
        message, kind = body.get("message"), body.get("type")
        if message is None and isinstance(body.get("detail"), str) and http_status_before(text, m.start()) is not None:
            message = body["detail"]  # FastAPI's error body, after the status a client printed (`HTTP 400: {"detail": …}`)
        if isinstance(message, str) and message.strip():
            return (kind if isinstance(kind, str) and _TYPE_NAME.fullmatch(kind) else "HTTPError"), message.strip()
    return None


THREAD_INTRO = compile_lazily(r"^(?:Exception in thread .+:|Process [\w\-]+:|Error in atexit\._run_exitfuncs:)$")
# Lines kept as a failure's context: warnings and errors, and what names a process's or a GPU's death without those
# words (SGLang's "Rank 0 scheduler is dead", the driver's "NVRM: Xid …: 79, … GPU has fallen off the bus"), and the
# sentence a person wrote above a paste to say what failed, in their words ("I get errors related to the tokenizers",
# "can lead to an out-of-memory (OOM) issue as follows:", "SGLang will crash if …": sgl-project/sglang PR#6744,
# #3108, vllm-project/vllm#8994), which a traceback cut before its exception line leaves as the only words of it (not
# a flag's name: `[--crash-dump-folder CRASH_DUMP_FOLDER]` in a usage listing says nothing).
# A memory-budget line an engine logs at start-up with no room left for the KV cache: not a warning, but the line that
# says why the start-up then fails (kept as context; facts/categories.toml's kv-cache-memory row reads it as its strong
# words, over any warning printed earlier).  vLLM V1's `Available KV cache memory: -2.14 GiB` (vllm/v1/worker/
# gpu_worker.py determine_available_memory, 0.8-0.11), V0's `… the rest of the memory reserved for KV Cache is
# -1.2GiB.` (vllm/worker/worker.py determine_num_available_blocks, 0.6), and the block count of older releases,
# `# GPU blocks: 0` (vllm/engine/llm_engine.py _init_cache, 0.2-0.5); SGLang raises its own (model_runner.py
# init_memory_pool: `Not enough memory. Please try to increase --mem-fraction-static.`), an error line already.
BUDGET_WORDS = ("KV cache memory", "KV Cache is", "GPU blocks")
BUDGET_LINE = compile_lazily(
    r"(?:Available KV cache memory:|memory reserved for KV Cache is)\s*(?:-\s*\d[\d.]*|0(?:\.0+)?)\s*Gi?B"
    r"|# GPU blocks: 0\b"
)
# Any such budget line, whatever room it reports: a later one of the same process replaces the earlier (a relaunch
# with a shorter --max-model-len that now fits).
BUDGET_REPORT = compile_lazily(r"Available KV cache memory:|memory reserved for KV Cache is|# GPU blocks: \d")
# The lines that end the start-up a budget line belongs to: a new launch (its command, the engine's version line or
# engine banner) or the server up and serving (vllm/entrypoints/openai/api_server.py 'Starting vLLM API server',
# uvicorn's 'Application startup complete', SGLang's 'ready to roll', vLLM's throughput log lines).  A budget line
# before one is no evidence of what fails after it.
STARTUP_BOUNDARY_WORDS = ("serve", "server", "launch_server", "ready to roll", "startup complete", "throughput",
                          "Initializing")
STARTUP_BOUNDARY = compile_lazily(
    r"\b(?:vllm|sglang)\s+serve\b|sglang\.launch_server|vllm\.entrypoints\.openai\.api_server|vLLM API server version"
    r"|Starting vLLM API server|ready to roll|Application startup complete|Avg prompt throughput"
    r"|Initializing an? (?:V1 )?LLM engine"
)
# (the dynamic loader's "<library>: cannot open shared object file", printed alone before the error of what failed to
# load it: torch's "Failed to load the backend extension" under a device plugin, vllm-project/vllm-ascend#1440)
# SGLang's scheduler refusing a flush with requests running (managers/scheduler.py flush_cache), and its records that the
# requests went on being served or the cache was flushed after all (scheduler.py's batch log lines, flush_cache's
# success): after one of those the refusal is no longer context of a later failure (reasoning/cut_context.py).
REFUSED_FLUSH = compile_lazily(r"\bCache not flushed because there are pending requests\b")
SERVED_AFTER_FLUSH = compile_lazily(r"\b(?:Decode batch|Prefill batch|Cache flushed successfully)\b")
CONTEXT_WORDS = ("warn", "error", "fail", "not enough", "out of memory", "out-of-memory", "oom", "crash", "is dead",
                 "xid", "fallen off the bus", "cannot open shared object", "exit code", "exitcode", "terminated with",
                 "exit status", "cannot find option named", "unknown command line argument", "not flushed because")
CONTEXT_HINT = compile_lazily(
    r"(?i)\b(?:warn(?:ing)?|errors?|fail(?:s|ed|ures?|ing)?|not enough|out[- ]of[- ]memory|(?:oom|crash(?:es|ed|ing)?)(?![-_])"
    r"|is dead|xid|fallen off the bus|cannot open shared object"
    # LLVM's command-line errors (CANN's bishengir-compile refusing the NPU chip's name as its --target, no "error"
    # word on the line: the gpu-arch-unsupported NPU row's cause of a kill under it, sgl-project/sglang#16360, #14783)
    r"|cannot find option named|unknown command line argument"
    # SGLang's scheduler refusing a flush with requests running (managers/scheduler.py flush_cache), a record without a
    # level word: reasoning/cut_context.pending_flush_shape reads it above a cut traceback
    r"|not flushed because"
    # how a child process ended, logged on a record of its own (SGLang's engine.py `Exit code: -9` after `Rank 0
    # scheduler is dead`, its watchdog's `… terminated with -9`, torchrun's `exitcode  : -9`): read by
    # reasoning/child_death.py
    r"|exit ?code\s*:?\s*-?\d+|exitcode\s*:\s*-?\d+|terminated with -?\d+|exit status -?\d+)\b"
)

# A line that reads as an error, whatever its level (one before a traceback cut before its exception line is shown as
# the failure's only then: a warning of another matter, a rate-limit notice or a file watcher's reload, was read as
# "the lines that hold the error", blind split 17's A-02 and D-05): an error's or a crash's words, an exception type's
# name, a signal's, a budget below zero.  An ERROR or CRITICAL record reads as one by its level (`reads_as_error`).
ERROR_HINT = compile_lazily(
    r"\b(?i:errors?|exceptions?|traceback|fail(?:s|ed|ures?|ing)?|fatal|critical|abort(?:ed)?|killed|refus\w*|"
    r"invalid|cannot|can't|unable|not (?:supported|enough|found|available)|unsupported|out[- ]of[- ]memory|oom|"
    r"insufficient|denied|crash\w*|illegal|mismatch\w*|no available|xid|fallen off the bus|is dead|died|"
    r"segmentation fault|core dumped)\b|\b[A-Z]\w*(?:Error|Exception)\b|\bSIG[A-Z]{2,}\b"
    r"|(?<![\w-])-\d+(?:\.\d+)?\s*[KMG]i?B\b"
)
ERROR_LEVELS = frozenset({"ERROR", "CRITICAL", "FATAL"})


def reads_as_error(text: str, level: str | None = None) -> bool:
    """The line states an error: by its record's level, its words, or a budget that leaves no room (BUDGET_LINE)."""
    return level in ERROR_LEVELS or ERROR_HINT.search(text) is not None or BUDGET_LINE.search(text) is not None


class LineKind(Enum):
    HEADER = auto()
    GROUP = auto()
    SEPARATOR = auto()
    FRAME = auto()
    FAULT_FRAME = auto()
    FATAL = auto()
    THREAD = auto()
    REPEATED = auto()
    CARET = auto()
    MARGIN = auto()
    SOURCE = auto()
    EXCEPTION = auto()
    BLANK = auto()
    OTHER = auto()


# A frame line a paste cut after its file's closing quote (`  File "/…/sglang/srt/speculative/eagle_worker_v2.py", lin`,
# the paste's or the excerpt's last line: sgl-project/sglang#23490, #6580): the file is the innermost frame the error
# came through, its line and function lost.
CUT_FRAME_LINE = compile_lazily(r'^\s*File "(?P<file>[^"]*\.py)"(?:, ?(?:l|li|lin|line)?)?\s*$')


def classify(text: str) -> LineKind:
    stripped = text.strip()
    if not stripped:
        return LineKind.BLANK
    if stripped[0] in "+|" and text[0] in " \t":
        # Exception-group margins first: `  | Traceback (most recent call last):` is a member's
        # line, and the group header itself ends like a plain traceback header.
        return LineKind.GROUP if GROUP_HEADER.match(text) else LineKind.MARGIN
    if stripped.endswith(TRACEBACK_HEADER):
        # `Scheduler hit an exception:   + Exception Group Traceback (…):` opens a group.
        return LineKind.GROUP if GROUP_AFTER_TEXT.match(text) else LineKind.HEADER
    if stripped in (CAUSE_SEPARATOR, CONTEXT_SEPARATOR):
        return LineKind.SEPARATOR
    first = text[0]
    if first == " " or first == "\t":
        if stripped.startswith("File "):
            if FRAME_LINE.match(text) or CUT_FRAME_LINE.match(text):
                return LineKind.FRAME
            if FAULT_FRAME_LINE.match(text):
                return LineKind.FAULT_FRAME
        if stripped[0] in "+|":
            return LineKind.GROUP if GROUP_HEADER.match(text) else LineKind.MARGIN
        if stripped.startswith("[Previous line repeated") and REPEATED_LINE.match(text):
            return LineKind.REPEATED
        if CARET_LINE.match(text):
            return LineKind.CARET
        return LineKind.SOURCE
    if stripped.startswith("File ") and FRAME_LINE.match(text):
        return LineKind.FRAME  # pasted without indentation
    if first in "^~" and CARET_LINE.match(text):
        return LineKind.CARET  # pasted without indentation
    if first == "[" and stripped.startswith("[Previous line repeated") and REPEATED_LINE.match(text):
        return LineKind.REPEATED  # pasted without indentation
    if stripped.startswith("Fatal Python error: "):
        return LineKind.FATAL
    if THREAD_HEADER.match(stripped):
        return LineKind.THREAD
    if names_an_exception(text):
        return LineKind.EXCEPTION
    return LineKind.OTHER
