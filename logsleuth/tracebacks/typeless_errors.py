"""Fatal lines printed by the programs around an engine, with no Python exception type of their own (issue 28,
stop 38's blind split): what a person points at in such a paste, read from the printing program's format.

- pydantic's line for one failed validation (vLLM's config classes are pydantic dataclasses): the paste keeps
  `  Value error, <the engine's message> [type=value_error, input_value=…, input_type=…]` without the
  `pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig` header above it.  pydantic
  formats a validator's ValueError as "Value error, {error}" (pydantic-core's `value_error` message template) and
  appends `[type=…, input_value=…, input_type=…]` (pydantic-core's ValidationError display): the error is the
  ValidationError pydantic raised, its inner line (from "Value error, " on) its message, which carries the
  ValueError the engine's check raised (the retired blind split 13's H-08: the paste kept only that inner line).
- the openai client's error for an HTTP error answer, its class name cut off: openai-python formats
  `f"Error code: {status}"` + `f" - {body}"` (openai/_client.py `_make_status_error`, the body printed as a Python
  dict) and picks the class by the status (same place): 400 BadRequestError, 401 AuthenticationError, 403
  PermissionDeniedError, 404 NotFoundError, 409 ConflictError, 422 UnprocessableEntityError, 429 RateLimitError,
  500 and above InternalServerError.
- a client printing the status and the server's JSON body (`HTTP 400: {"detail": "…"}`, FastAPI's error body;
  `{"object": "error", "message": …}` the engines' own): grammar.http_error_body reads the body.
- the NVIDIA container toolkit refusing to start a GPU container (nvidia-container-cli's requirement check:
  `nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a newer
  version, or use an earlier cuda container`, libnvidia-container src/nvc_info.c / cli/common.c): the driver is
  older than the image's CUDA, the engine never started.  docker's `Error response from daemon: … OCI runtime create
  failed: …` around it is the failure only of a paste that shows no other (the toolkit's line says why), unless it
  carries the toolkit's refusal itself (the newer nvidia-container-runtime: `requirements not met: unsatisfied
  condition: cuda>=12.9 (cuda=12.6)`).
- a GPU compiler's error diagnostic (issue 28, stop 39's blind split): clang's and MLIR's `<file>:<line>:<col>: error:
  <text>` (hipcc and triton compile through LLVM: a kernel's stack frame over the target's limit,
  `<file>:L:C: error: stack frame size (N) exceeds limit (M) in function '…'`, ClangBuiltLinux/linux#1710), LLVM's
  backend reporting with the location after the level (`error: <unknown>:0:0: stack frame size (…) exceeds limit (…)`,
  iree-org/iree#19180, #21252), and the drivers' own lines (`nvcc fatal   : Unsupported gpu architecture 'compute_89'`,
  mlc-ai/mlc-llm#710; `ptxas fatal   : …`, `clang: error: unsupported …`).  A kernel that did not compile: the
  failure of a paste that shows no other (the Python exception the build raised next is the failure when it is
  there, the diagnostic its context).  A `warning:` is never one.
- the dynamic loader's `<library>.so[.N]: undefined symbol: <name>` (glibc's dlerror format "%s: undefined symbol:
  %s") quoted alone, in backticks or quotes, with a relative path or a bare library name: an ImportError of a
  compiled extension, the only Python path to that text.
- the Google Cloud SDK's error for a command that failed: gcloud prints every one as `ERROR: (gcloud.<command>)
  <message>` (`ERROR: (gcloud.beta.run.deploy) The user-provided container failed to start and listen on the port …`,
  googlecodelabs/feedback#1550, #1814: a Cloud Run deployment of the vLLM image): the deployment failed, the
  container's own log (the engine's error) says why, so it is the failure only of a paste that shows no other.
- Hydra's record for a job whose function raised: `Error executing job with overrides: [<overrides>]` (hydra/core/utils.py,
  `JobReturn.return_value` logs it before re-raising the job's exception; verl, OpenRLHF-style trainers and their
  sglang/vLLM rollouts run under Hydra: verl-project/verl#10, hkust-nlp/simpleRL-reason#80, qiancheng0/ToolRL#26).  The
  exception's traceback follows it when the paste kept it: the failure only of a paste that shows no other.
- Slurm's programs refusing or failing a job (`srun: error: Unable to allocate resources: Invalid partition name
  specified`, `sbatch: error: Batch job submission failed: …`: slurm's `error()` prefixes the program's name,
  src/common/log.c in SchedMD/slurm): the scheduler's word on the job, the failure only of a paste that shows no
  other.  Its report of a task's end (`srun: error: NODE: task 0: Exited with exit code 1`) is a kill line
  (grammar.KILL_LINE), not this.
- a shell that cannot find the engine's program (`bash: vllm: command not found`: bash's execute_cmd.c "%s: command not
  found", after the shell's name and, in a script, `line N`; zsh's `zsh: command not found: vllm` (Src/exec.c); dash's
  `sh: 1: vllm: not found` (src/exec.c, with the script's line number)): the engine is not installed in the
  environment that ran the command, the failure of a paste that shows no other.  Only the engines' programs and the
  Python that runs `python -m …`: another program not found (`nvidia-smi`) is no engine's install.
- the openai client's message for a request that never reached the server (APIConnectionError's default message
  "Connection error.", openai/_exceptions.py), printed by a program around it after its own words of an error, the
  type lost: `… | ERROR | app.llm:ask_tool:426 - OpenAI API error: Connection error.` (FoundationAgents/OpenManus#770),
  `I am facing "Error during VLLM generation: Connection error."` (datalab-to/chandra#34).  The engine's server was
  down, not yet up, or not at the address the client was given: the failure of a paste that shows no other.
- a launcher's word that the engine's server did not come up, the engine's own error left in its log or output:
  `vLLM failed to start.  Retry with --enable-serving-output to learn more about the failure.` (instructlab's serve
  backend, instructlab/instructlab#3466); the evaluation and benchmark scripts that start `vllm serve` and poll its
  /health print the same words (`ERROR: vLLM failed to start`, `❌ vLLM failed to start`, `vllm failed to start.`,
  `vLLM failed to start within 300s`).  The failure of a paste that shows no other.
- torch's NCCL watchdog timeout text outside the c10 record that logs it (a record's prefix the paste lost, a sentence
  or an issue's title quoting it): `[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1,
  OpType=ALLREDUCE, …, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.` (ProcessGroupNCCL.cpp, the
  text of the DistBackendError the watchdog terminates the process with: grammar.glog_record_type).  Only torch's whole
  text, `WorkNCCL(…)` and its duration: the failure of a paste that shows no other.
- Kubernetes, and the harnesses that deploy an engine on it, reporting a server container that crashed, without the
  container's own error (ORCHESTRATION_LINES): the kubelet's event for a container it restarts after each crash
  (`Warning  BackOff  33s (x70 over 15m)  kubelet  Back-off restarting failed container vllm in pod …`), kubectl's pod
  row in CrashLoopBackOff or Error (`vllm-…-kk7fs   0/1   CrashLoopBackOff   4 (73s ago)   2m49s`), llm-d-benchmark's
  check of the pods it stood up (`❌ Crashed container in pod: vllm-standalone-…`, llm-d/llm-d-benchmark#668).  The
  container's log says why: the failure only of a paste that shows no other.
- docker's daemon refusing a container's GPU request because no device driver it knows serves it (moby
  daemon/devices.go, incompatibleDeviceRequest: `could not select device driver "" with capabilities: [[gpu]]`; its
  NVIDIA driver registers only where the NVIDIA container toolkit's hook is installed, daemon/nvidia_linux.go): the
  container was never made.  The failure of a paste that shows no other.
- CPython's own message of a TypeError, AttributeError or ImportError printed without its type (a logger that printed
  `str(e)`, a wrapper's `Error: {e}`): the interpreter's templates name their type exactly (`typed_by_message`); so
  does requests' HTTPError message (`400 Client Error: Bad Request for url: http://…/v1/completions`).
"""

from __future__ import annotations

import re
from dataclasses import replace

from logsleuth.lazyre import compile_lazily
from logsleuth.models import Failure
from logsleuth.pydantic_display import without_pydantic_display
from logsleuth.tracebacks.device_errors import DEVICE_ERROR_WORDS, device_error_line
from logsleuth.tracebacks.native_asserts import NATIVE_ASSERT_TYPE, assertion_tail_alone
from logsleuth.tracebacks.native_errors import NATIVE_ERROR_WORDS, native_error_line

# Not a line the grammar reads as an exception line already (`openai.BadRequestError: Error code: 400 - …`).
_NOT_TYPED = r"(?!\s*[\w.]+(?:Error|Exception): )"

# xoscar (the actor framework Xinference runs its model workers on) sending back an exception it cannot pickle: it
# sends text instead, `Error cannot be pickled, error type: <class 'X'>, raw error:\n<str(exc)>` (xoscar's
# serialization/exception.py UnpickleableError), which Xinference's server answers as `Server error: 500 - [address=…,
# pid=…] …` (the retired blind split 12's H-03: vLLM's pydantic ValidationError).  The error is the class it names.
UNPICKLEABLE_ERROR_WORDS = "cannot be pickled, error type: <class '"
UNPICKLEABLE_ERROR = compile_lazily(
    r"Error cannot be pickled, error type: <class '(?P<type>[A-Za-z_][\w.]{0,200})'>, raw error:\s*(?P<msg>\S.*)$"
)
# The class CPython prints for pydantic's ValidationError (pydantic-core defines it in its compiled module), and the
# opening pydantic gives a validator's ValueError inside its message (pydantic-core's `value_error` template).
PYDANTIC_VALIDATION_ERROR = "pydantic_core._pydantic_core.ValidationError"
VALUE_ERROR_LINE = "Value error, "
PYDANTIC_VALUE_ERROR = compile_lazily(
    _NOT_TYPED + r"^(?:.*?\s)?Value error, (?P<msg>\S.*)$"
)
OPENAI_STATUS_ERROR = compile_lazily(
    _NOT_TYPED + r"^(?:.*?[\s'\"`(:])?(?P<msg>Error code: (?P<status>[45]\d\d)(?: - \{.*\})?)[`'\")]*\s*$"
)
NVIDIA_CONTAINER_CLI = compile_lazily(
    r"^(?:.*?[\s:])?(?P<type>nvidia-container-cli): (?P<msg>[\w ]*error: .*?)(?:\\+n.*|: unknown\.?)?\s*$"
)
OCI_REFUSAL = "OCI runtime create failed"
CREATE_TASK = "failed to create task "
UNDEFINED_SYMBOL = compile_lazily(
    _NOT_TYPED + r"^(?:.*?[\s'\"`(>])?(?P<msg>[\w./+\-]*[\w\-]\.so(?:\.\d+)*: undefined symbol:(?: [\w.@$]+| ?$))"
)  # (a paste hard-wrapped at the symbol keeps `….so: undefined symbol:` at its line's end, the symbol on the next)
# `<file>:<line>:<col>: error: <text>` (clang, MLIR/triton; `<file>` may be `<unknown>`), `error: <file>:L:C: <text>`
# (LLVM's backend), `nvcc fatal   : <text>`, `ptxas error   : <text>`, `clang: error: <text>`.
COMPILER_DIAGNOSTIC = compile_lazily(
    r"^\s*(?P<msg>(?:(?:[^\s:<>]+|<[\w ]+>):\d+:\d+: (?:fatal )?error: |error: (?:[^\s:<>]+|<[\w ]+>):\d+:\d+: )\S.*)$"
)
COMPILER_PROGRAM_ERROR = compile_lazily(
    r"^\s*(?P<msg>(?:nvcc|ptxas|clang(?:\+\+)?|amdclang(?:\+\+)?|hipcc|gcc|g\+\+|c\+\+|ld(?:\.lld)?)(?:\s+(?:fatal|error)\s*:|: (?:fatal )?error:)"
    r"\s*\S.*)$"
)
COMPILER_ERROR = "compiler error"  # the type of a compiler's diagnostic: no Python exception was raised yet
SLURM_ERROR = compile_lazily(r"^(?P<type>srun|sbatch|salloc): error: (?!\S+: tasks? [\d,\-]+: )(?P<msg>\S.*)$")
GCLOUD_ERROR = compile_lazily(r"^(?:.*?\s)?ERROR: \((?P<type>gcloud(?:\.[\w\-]+)+)\) (?P<msg>\S.*)$")
# (the message keeps the words, not the overrides: their config keys name no cause, `gpu_memory_utilization=0.4` no memory
# failure)
HYDRA_JOB_FAILED = compile_lazily(r"^(?:.*?\s)?(?P<msg>Error executing job with overrides): \[.*$")
HYDRA_JOB_ERROR = "Hydra job failed"  # its type: the job's own exception is in the traceback Hydra prints next
# A client's own print of the status before the server's JSON body: `HTTP 400: {…}`, `HTTP Error 500 - {…}`.
HTTP_STATUS_BEFORE_BODY = compile_lazily(r"\bHTTP(?: [Ee]rror)?:? (?P<status>[45]\d\d)\b[^{]{0,40}\{")

# (the shell's name as `$0` may be a path or a login shell's `-bash`; a script names itself and the line)
SHELL_NOT_FOUND = compile_lazily(
    r"^\s*(?P<msg>(?:-?[\w./\-]*(?:bash|zsh|sh|dash|ksh)|[\w./\-]+\.sh)(?:: line \d+|: \d+)?: (?:exec: )?"
    r"(?:vllm|sglang|python[\d.]*): (?:command )?not found|zsh: command not found: (?:vllm|sglang|python[\d.]*))\s*$"
)
COMMAND_NOT_FOUND = "command not found"  # its type: the shell's notice, no Python ran

# vLLM's OpenAI-compatible server refusing a request with an error response, not an exception (so the raise site index
# holds none of them): `create_error_response(message)`, whose ErrorResponse type defaults to BadRequestError (HTTP 400).
# serving_chat.py refuses tool_choice "auto" on a server started without tool calling; api_server.py answers a pooling
# endpoint the served model's task does not offer with `The model does not support <name> API` (Score, Rerank (Score),
# Embeddings, Pooling, Classification, Tokenization, Transcriptions).  Pasted alone, in a sentence or an issue's title
# (vllm-project/vllm#9986, QwenLM/Qwen-Agent#344, vllm-project/vllm#14693): the failure of a paste that shows no other.
# (Inside the JSON error body it is http_error_body's, typed by the body.)
ERROR_RESPONSE = compile_lazily(
    r'(?P<msg>"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
    r"|The model does not support (?:the )?[A-Z]\w{2,20}(?: \([A-Z]\w{2,20}\))? API)"
)
ERROR_RESPONSE_TYPE = "BadRequestError"  # the ErrorResponse's `type` create_error_response gives by default
# llguidance (vLLM's `guidance` structured-output backend) refusing a request's tokens: vLLM's backend_guidance.py logs the
# matcher's error at WARNING, `LLMatcher error: <llguidance's error>`, once per request, and that request's structured
# output stops there (the matcher stays in its error state).  A token the grammar does not take (`Parser Error: token
# " null" doesn't satisfy the grammar`, vllm-project/vllm#15554: ngram speculative decoding with structured output on
# 0.8.2) or a panic inside llguidance (`panic: lexer_stack=…`, guidance-ai/llguidance#174 on 0.8.5.post1): the failure
# of a paste that shows no other.
LLMATCHER_ERROR = "LLMatcher error: "
LLMATCHER_TYPE = "LLMatcher error"  # its type: a logged warning, no exception was raised
# torch's NCCL watchdog text (ProcessGroupNCCL.cpp) outside the c10 record that logs it: its `WorkNCCL(…)` (whose
# `Timeout(ms)=…` holds parentheses of its own) and its duration; or cut inside `WorkNCCL(…` where a paste hard-wrapped
# the line (its duration then on the next line: sgl-project/sglang#3836, glued after another process's output).
NCCL_WATCHDOG_WORDS = "Watchdog caught collective operation timeout: WorkNCCL("
NCCL_WATCHDOG_EXCEPTION = "c10::DistBackendError"  # as grammar.WATCHDOG_EXCEPTION (which imports this module)
# A frame of the NCCL watchdog thread's backtrace whose header (the exception's what()) the paste left out: torch's c10
# backtrace row (`frame #6: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10c (0x… in …/libtorch_cuda.so)`) or glibc's
# backtrace_symbols row as Ray prints it (`…/libtorch_cuda.so(+0xe321ca) [0x…] c10d::ProcessGroupNCCL::ncclCommWatchdog()`).
# The watchdog thread's entry function (ProcessGroupNCCL.cpp) is in every such backtrace, once: the watchdog ended the
# process on an exception it caught, whose text is not in the paste (vllm-project/vllm#9308, #7057).
WATCHDOG_THREAD_FRAME = "c10d::ProcessGroupNCCL::ncclCommWatchdog()"
WATCHDOG_FRAME_ROW = compile_lazily(r"(?:^|\s)(?:frame #\d{1,3}: |\S{1,400}\(\+0x[0-9a-f]{1,16}\) \[0x[0-9a-f]{1,16}\] )c10d::")
WATCHDOG_UNPASTED_TYPE = "NCCL watchdog exception"  # its type: torch's C++ exception, its what() not pasted
WATCHDOG_UNPASTED_MESSAGE = "the NCCL watchdog thread (c10d::ProcessGroupNCCL::ncclCommWatchdog) ended on an exception whose text is not in the paste"
NCCL_WATCHDOG_TIMEOUT = compile_lazily(
    r"^(?:.*?[\s\"'`:(])?(?P<msg>(?:\[Rank \d+\] )?Watchdog caught collective operation timeout: WorkNCCL\((?:[^()\n]|\([^()\n]{0,40}\)){0,600}"
    r"(?:\) ran for \d+ milliseconds before timing out\.?|\(?[^()\n]{0,40}$))"
)
ENGINE_DID_NOT_START_WORDS = "failed to start"
ENGINE_DID_NOT_START_TYPE = "launch failure"  # a launcher's report: the engine's own error is elsewhere
# The engine named right before the words, as a launcher names it (not vLLM's own `EngineCore failed to start.`, whose
# traceback follows it: grammar.TYPELESS_ENGINE_LINES); a question about it says nothing happened.
ENGINE_DID_NOT_START = compile_lazily(
    r"^(?:.*?[\s\"'`:])?(?P<msg>(?:vLLM|vllm|VLLM|SGLang|sglang|SGLANG)(?: (?:server|engine|process))? failed to start\b(?:[^?]*[^?\s])?)\s*$"
)
OPENAI_CONNECTION_WORDS = "Connection error"
OPENAI_CONNECTION_TYPE = "openai.APIConnectionError"
# The program's own words of an error right before the client's message (`OpenAI API error: `, `Error during VLLM
# generation: `, `API error: `): up to a few words around `error`/`Exception`, then `: ` or ` - `.  Matched on a bounded
# window ending where the message starts (connection_error): no scan of a long line.
_CONNECTION_ERROR_LEAD = compile_lazily(
    r"(?P<lead>(?:[A-Za-z][\w.]*\s){0,4}\w*(?:[Ee]rror|[Ee]xception)(?:\s[A-Za-z][\w.]*){0,4}(?::| -) )$"
)
_CONNECTION_LEAD_WINDOW = 160
_TYPE_NAME_BEFORE = compile_lazily(r"\b[A-Z]\w*(?:Error|Exception): ")


def connection_error(text: str) -> str | None:
    """A program's error words and the openai client's `Connection error.` after them, else None.  Not a line that
    names an exception class itself (`litellm.APIError: APIError: … - Connection error`: that line is its own type's)."""
    at = text.find(OPENAI_CONNECTION_WORDS)
    if at == -1 or len(text) > 4096:
        return None
    end = at + len(OPENAI_CONNECTION_WORDS)
    if end < len(text) and text[end] not in ".\"'`) \t":
        return None  # `Connection errors per minute`, `Connection error_count`
    window = text[max(0, at - _CONNECTION_LEAD_WINDOW):at]
    if (m := _CONNECTION_ERROR_LEAD.search(window)) is None or _TYPE_NAME_BEFORE.search(window):
        return None
    return f"{m['lead']}Connection error."


# A server container Kubernetes or a harness on it saw crash: (the literal a line needs before its regex is tried, the
# regex, the type; `type` in the regex names the type when the row gives None).  Sources:
# - the kubelet's event when it delays restarting a container that keeps exiting (reason BackOff, "Back-off restarting
#   failed container %s in pod %s", pkg/kubelet/kuberuntime/kuberuntime_container.go; `kubectl describe pod` and
#   `kubectl get events` print it; older kubelets end it at "container");
# - `kubectl get pods`' row, NAME READY STATUS RESTARTS AGE, whose STATUS is the container's waiting or terminated
#   reason (printPod, pkg/printers/internalversion/printers.go): CrashLoopBackOff (the restarts' back-off), Error (exited
#   non-zero), with an `Init:` before it for an init container (vllm-project/production-stack#454);
# - llm-d-benchmark's standup check of its pods, for a container whose terminated exit code is not 0
#   (`announce(f"ERROR: Crashed container in pod: {pod.metadata.name}, container: {container_status.name}")`, its setup
#   functions; later releases print `❌` for `ERROR:`, llm-d/llm-d-benchmark#668).
DEVICE_DRIVER_WORDS = "could not select device driver"
# Ray's autoscaler's own error event as a Ray driver prints it, `(autoscaler +<time since start>) Error: <event>`
# (ray/_private/worker.py prints the autoscaler's events to the driver under that prefix; the event
# `Error: No available node types can fulfill resource request {…}. Add suitable node types to this cluster to resolve
# this issue.` is ray/autoscaler/_private/resource_demand_scheduler.py's, added once per interval while a request stays
# unplaceable): the cluster cannot place what the engine's Ray executor asked for, and the engine waits on its
# placement group (vllm-project/vllm#14186, #13388, #12670).  Only that event: the autoscaler's other errors (a node
# launch the cloud refused, `Failed to launch N node(s) …`) are retried while the run goes on, and its `Warning: The
# following resource request cannot be scheduled right now` (a request that may yet fit) is no row either.  The scanner
# drops it when a later line shows the start went on (a later stage, the engine up): the request was placed.
RAY_AUTOSCALER_WORDS = ") Error: "
RAY_AUTOSCALER_ERROR = "Ray autoscaler error"  # its type: Ray's event, no exception was raised
DEVICE_REQUEST_REFUSED = "device request refused"  # docker's daemon: no device driver for the container's GPU request
CONTAINER_CRASHED = "container crashed"  # the type of a server container reported as exited with a non-zero code
_POD_ROW = compile_lazily(
    r"^\s*(?P<msg>[a-z0-9][a-z0-9.\-]{0,252}\s+\d+/\d+\s+(?:Init:)?(?P<type>CrashLoopBackOff|Error)\s+\d+\b(?:.*\S)?)\s*$"
)
ORCHESTRATION_LINES: tuple[tuple[str, re.Pattern[str], str | None], ...] = (
    ("Back-off restarting failed container",
     compile_lazily(r"^(?:.*?\s)?(?P<msg>Back-off restarting failed container\b(?:.*\S)?)\s*$"), "BackOff"),
    ("CrashLoopBackOff ", _POD_ROW, None),
    ("Error ", _POD_ROW, None),
    ("Crashed container in pod: ", compile_lazily(r"^(?:.*?\s)?(?P<msg>Crashed container in pod: \S(?:.*\S)?)\s*$"),
     CONTAINER_CRASHED),
    (RAY_AUTOSCALER_WORDS, compile_lazily(r"^(?:.*?\s)?\(autoscaler \+[\dhms.]{1,16}\) Error: "
                                          r"(?P<msg>No available node types can fulfill resource request \S(?:.{0,2000}\S)?)\s*$"),
     RAY_AUTOSCALER_ERROR),
    (DEVICE_DRIVER_WORDS, compile_lazily(r'^(?:.*?\s)?(?P<msg>could not select device driver "[^"\n]{0,80}" with capabilities: '
                                         r'\[(?:\[[\w, ]{0,80}\])*\])\.?'), DEVICE_REQUEST_REFUSED),
)
# kubectl's STATUS `Error` is a container that exited non-zero: a crash, like the harness's report (`Error` alone is no type).
POD_STATUS_TYPES = {"Error": CONTAINER_CRASHED}


def orchestration_line(text: str) -> tuple[str, str] | None:
    """(type, message) of a line in which Kubernetes or a harness on it says a server container crashed, else None."""
    for literal, pattern, fixed_type in ORCHESTRATION_LINES:
        if literal in text and len(text) <= 4096 and (m := pattern.match(text)) is not None:
            return fixed_type or POD_STATUS_TYPES.get(m["type"], m["type"]), m["msg"]
    return None


NOT_TYPED_LINE = compile_lazily(_NOT_TYPED)  # matches where the line is no exception line (`openai.BadRequestError: …`)

OPENAI_CLASSES = {400: "BadRequestError", 401: "AuthenticationError", 403: "PermissionDeniedError",
                  404: "NotFoundError", 409: "ConflictError", 422: "UnprocessableEntityError", 429: "RateLimitError"}

KERNEL_CUDA_WORDS = "CUDA error ("
KERNEL_CUDA_ERROR = "CUDA error"  # its type: a kernel's C++ check printed it and exited, no Python exception
WORDS = ("Value error, ", UNPICKLEABLE_ERROR_WORDS, "Error code: ", "nvidia-container-cli", "OCI runtime", "undefined symbol", "(gcloud.", "error: ",
         KERNEL_CUDA_WORDS, "Assertion `", "Assertion '", "CUDA error: ",
         "fatal ", "error ", "Error executing job", "not found", "tool choice requires", "The model does not support",
         LLMATCHER_ERROR, OPENAI_CONNECTION_WORDS, ENGINE_DID_NOT_START_WORDS, *NATIVE_ERROR_WORDS, *DEVICE_ERROR_WORDS, NCCL_WATCHDOG_WORDS, WATCHDOG_THREAD_FRAME, *(literal for literal, _, _ in ORCHESTRATION_LINES))


def openai_class(status: int) -> str:
    """The openai client's exception class for an HTTP status (openai/_client.py `_make_status_error`)."""
    if status >= 500:
        return "openai.InternalServerError"
    return f"openai.{OPENAI_CLASSES.get(status, 'APIStatusError')}"


def typeless_error(text: str) -> tuple[str, str, bool] | None:
    """(type, message, fallback) of a fatal line of the programs around an engine, else None.  `fallback`: the line
    is the failure only of a paste that shows no other (a survived client error, docker's summary of a refusal
    whose cause the toolkit's own line gives)."""
    if not any(word in text for word in WORDS):
        return None
    if (m := NVIDIA_CONTAINER_CLI.match(text)) is not None:
        return m["type"], m["msg"].strip(), False
    if (refusal := oci_runtime_message(text)) is not None:
        # the toolkit's newer runtime says its refusal inside docker's line (`… failed to create NVIDIA Container Runtime:
        # … requirements not met: unsatisfied condition: cuda>=12.9 (cuda=12.6): unknown`): then it is the failure itself
        return OCI_REFUSAL, refusal, "unsatisfied condition" not in text
    if UNPICKLEABLE_ERROR_WORDS in text and len(text) <= 65536 and (m := UNPICKLEABLE_ERROR.search(text)) is not None:
        return m["type"], without_pydantic_display(m["msg"]).strip(), True
    if (m := PYDANTIC_VALUE_ERROR.match(text)) is not None:
        # the exception raised is pydantic's ValidationError, the validator's ValueError only its inner line: named
        # so, with that line as its message (pydantic_display.validator_error reads the ValueError back from it)
        return PYDANTIC_VALIDATION_ERROR, VALUE_ERROR_LINE + without_pydantic_display(m["msg"]), True
    if (m := OPENAI_STATUS_ERROR.match(text)) is not None:
        return openai_class(int(m["status"])), m["msg"].strip(), True
    if (m := UNDEFINED_SYMBOL.match(text)) is not None:
        return "ImportError", m["msg"].strip(), True
    if (symbol := quoted_undefined_symbol(text)) is not None:
        return "ImportError", symbol, True
    if (checked := kernel_cuda_check(text)) is not None:
        return KERNEL_CUDA_ERROR, checked, True
    if "Assertion `" in text and (m := DEVICE_ASSERT.match(text)) is not None:
        return DEVICE_ASSERT_TYPE, m["msg"].rstrip(), True
    if (host_assert := assertion_tail_alone(text)) is not None:
        return NATIVE_ASSERT_TYPE, host_assert, True  # a C/C++ assert's tail, its place lost (native_asserts.py)
    if (said := torch_cuda_error(text)) is not None:
        return KERNEL_CUDA_ERROR, said, True
    if ("error: " in text and (m := COMPILER_DIAGNOSTIC.match(text)) is not None) or (
        (m := COMPILER_PROGRAM_ERROR.match(text)) is not None
    ):
        return COMPILER_ERROR, m["msg"].rstrip(), True
    if (m := GCLOUD_ERROR.match(text)) is not None:
        return m["type"], m["msg"].rstrip(), True
    if "Error executing job" in text and (m := HYDRA_JOB_FAILED.match(text)) is not None:
        return HYDRA_JOB_ERROR, m["msg"], True
    if (m := SLURM_ERROR.match(text)) is not None:
        return m["type"], m["msg"].rstrip(), True
    if "not found" in text and (m := SHELL_NOT_FOUND.match(text)) is not None:
        return COMMAND_NOT_FOUND, m["msg"].rstrip(), True
    if ("tool choice requires" in text or "The model does not support" in text) and len(text) <= 4096 and \
            NOT_TYPED_LINE.match(text) and (m := ERROR_RESPONSE.search(text)):
        return ERROR_RESPONSE_TYPE, m["msg"], True  # (an exception line quoting it keeps its own type)
    if (at := _at_word_start(text, LLMATCHER_ERROR)) != -1 and (said := text[at + len(LLMATCHER_ERROR):].strip()):
        return LLMATCHER_TYPE, said, True
    if (crashed := orchestration_line(text)) is not None:
        return (*crashed, True)
    if NCCL_WATCHDOG_WORDS in text and len(text) <= 4096 and (m := NCCL_WATCHDOG_TIMEOUT.match(text)) is not None \
            and "ERROR" not in text[:m.start("msg")]:
        # (a logger's ERROR record quoting it is read as that record: the context naming a crash's cause)
        return NCCL_WATCHDOG_EXCEPTION, m["msg"], True
    if ENGINE_DID_NOT_START_WORDS in text and len(text) <= 4096 and (m := ENGINE_DID_NOT_START.match(text)) is not None:
        return ENGINE_DID_NOT_START_TYPE, m["msg"].rstrip("`'\""), True
    if WATCHDOG_THREAD_FRAME in text and len(text) <= 4096 and WATCHDOG_FRAME_ROW.search(text) is not None:
        return WATCHDOG_UNPASTED_TYPE, WATCHDOG_UNPASTED_MESSAGE, True
    if (unreached := connection_error(text)) is not None:
        return OPENAI_CONNECTION_TYPE, unreached, True
    if (native := native_error_line(text)) is not None:
        return (*native, True)  # a native library's or a wrapper's error record (native_errors.py)
    if (device := device_error_line(text)) is not None:
        return (*device, True)  # an accelerator runtime's own error line (device_errors.py)
    return None


UNDEFINED_SYMBOL_WORDS = "undefined symbol: "
# A C++ symbol as the loader prints it (mangled, `_ZN3c10…`) or as c++filt and a person write it back (demangled,
# `c10::MessageLogger::MessageLogger(char const*, int, int, bool)`: names joined by `::`, an argument list).
CXX_SYMBOL = compile_lazily(r"_Z\w{4,}|[A-Za-z_~][\w<>~]*(?:::[A-Za-z_~][\w<>~, ]*)+(?:\([\w:<>,*& ]*\)(?: const)?)?")


def quoted_undefined_symbol(text: str) -> str | None:
    """The loader's `undefined symbol: <name>` quoted without the library before it (sgl-project/sglang#30562: "`import
    sgl_kernel` fails with `undefined symbol: c10::MessageLogger::MessageLogger(char const*, int, int, bool)`", the
    symbol demangled; a PyTorch C++ ABI the extension was not built against), else None.  Found with str.find and one
    anchored match: no scan of the line."""
    at = text.find(UNDEFINED_SYMBOL_WORDS)
    if at == -1 or len(text) > 4096 or not NOT_TYPED_LINE.match(text):
        return None
    m = CXX_SYMBOL.match(text, at + len(UNDEFINED_SYMBOL_WORDS))
    return f"{UNDEFINED_SYMBOL_WORDS}{m.group().rstrip(', ')}" if m is not None else None


# The rest of the CUDA check of flash-attention's C++ code (hopper/ and csrc/ `CHECK_CUDA`: `fprintf(stderr, "CUDA error
# (%s:%d): %s\n", __FILE__, __LINE__, cudaGetErrorString(status))`, then `exit(1)`), vendored by sgl-kernel and
# xformers: the kernel source and line, then the CUDA runtime's error string.
KERNEL_CUDA_PLACE = compile_lazily(r"[\w./\\:\-]{1,300}\.(?:h|hpp|cuh|cu|cpp):\d+\): (?P<said>[a-z][\w ,'\-]{2,120})")


# A CUDA kernel's assert as the device prints it (torch's CUDA_KERNEL_ASSERT, the device's __assert_fail): `<source>:<line>:
# <function>: block: [x,y,z], thread: [x,y,z] Assertion `<condition>` failed.`, or the part a paste kept (`Assertion
# `srcIndex < srcSelectDimSize` failed.`: princeton-nlp/MeZO#20 prints hundreds, one per
# thread, before torch's `CUDA error: device-side assert triggered`).  glibc's host assert closes the condition with a
# quote (`Assertion `x' failed.`), not a backtick: a C program's, not a kernel's.
# (The condition may hold backticks of its own, torch's multinomial check: `Assertion `probability tensor contains either
# `inf`, `nan` or element < 0` failed.`; a paste that wrapped the line keeps `block: …, thread: … Assertion …` on the
# second, sgl-project/sglang#13030.)
DEVICE_ASSERT = compile_lazily(
    r"^\s*(?P<msg>(?:(?:\S+:\d+: [^\s:]+: ?)?block: \[\d+,\d+,\d+\], thread: \[\d+,\d+,\d+\] )?"
    r"Assertion `[^\n]{1,300}?` failed\.?)\s*$"
)
DEVICE_ASSERT_TYPE = "device-side assert"  # its type: the kernel's print; torch raises its RuntimeError after it
# torch's message for a failed CUDA call (c10/cuda/CUDAException.cpp: "CUDA error: " + cudaGetErrorString), pasted alone
# without the exception's type (`CUDA error: device-side assert triggered`): the runtime's error string, lower case.
TORCH_CUDA_ERROR = compile_lazily(r"^\s*CUDA error: (?P<said>[a-z][\w ,'\-]{2,120}?)\.?\s*$")


def torch_cuda_error(text: str) -> str | None:
    """`CUDA error: <the CUDA runtime's error string>` alone on a line, else None."""
    if not text.lstrip().startswith("CUDA error: ") or len(text) > 200:
        return None
    m = TORCH_CUDA_ERROR.match(text)
    return text.strip() if m is not None else None


def kernel_cuda_check(text: str) -> str | None:
    """`CUDA error (<kernel source>:<line>): <CUDA's error string>`, the process's last line (sgl-project/sglang#38980:
    sgl-kernel's FA3 on an sm_89 GPU, `…/hopper/flash_fwd_launch_template.h:203): invalid argument`; Comfy-Org/ComfyUI#9116,
    xformers' build of the same code on a GPU it has no kernel for), else None.  Found with str.find, then one anchored
    match."""
    at = text.find(KERNEL_CUDA_WORDS)
    if at == -1 or len(text) > 4096 or (at and text[at - 1] not in " \t\"'`:"):
        return None
    m = KERNEL_CUDA_PLACE.match(text, at + len(KERNEL_CUDA_WORDS))
    return text[at + len(KERNEL_CUDA_WORDS) - 1:m.end()].rstrip() if m is not None else None  # `(<place>): <said>`


def oci_runtime_message(text: str) -> str | None:
    """docker's message for a container the runtime would not create, else None: from the words before
    `failed to create task …` back to the last colon (docker's `Error response from daemon:` and the like stay out),
    or from `OCI runtime create failed`, whichever starts first.  Found with str.find, not a regex: the regex this
    replaced backtracked quadratically on a long line of white space (CI's fuzz test, a 127 KB run of spaces)."""
    refusal = _at_word_start(text, OCI_REFUSAL)
    if refusal == -1:
        return None
    start = refusal
    task = text.find(CREATE_TASK)
    if -1 < task < refusal and (task == 0 or not (text[task - 1].isalnum() or text[task - 1] == "_")):
        words = text.rfind(":", 0, task) + 1  # the colon-free words before it belong to the message
        while words < task and not (words == 0 or text[words - 1].isspace()):
            words += 1
        start = min(start, words)
    return text[start:].strip()


def _at_word_start(text: str, words: str) -> int:
    """Where `words` first start the line or follow white space, else -1."""
    at = text.find(words)
    while at > 0 and not text[at - 1].isspace():
        at = text.find(words, at + 1)
    return at


def http_status_before(text: str, body_start: int) -> int | None:
    """The HTTP error status a client printed right before a JSON body starting at `body_start`, else None."""
    m = HTTP_STATUS_BEFORE_BODY.search(text, max(0, body_start - 60), body_start + 1)
    return int(m["status"]) if m is not None else None


# Messages whose words name their type: CPython's own, each raised by one type only (the interpreter's C source, 3.8 to 3.13):
_CALLABLE = r"[\w.<>]+\(\)"  # `LLM.__init__()`, `<lambda>()`; 3.10+ print the qualified name, older ones the bare name
TYPED_MESSAGES = (
    # Python/ceval.c: a call's arguments refused (3.13 adds `. Did you mean 'x'?` to the keyword's).  The keyword is
    # printed with %S, any string a `**kwargs` dict held: a wrapper passing a UI's dashed option name through
    # (`AsyncEngineArgs.__init__() got an unexpected keyword argument 'tool-call-parser'`, xorbitsai/inference#4196)
    (compile_lazily(rf"^{_CALLABLE} got an unexpected keyword argument '[^'\s]{{1,100}}'(?:\. Did you mean '\w+'\?)?$"),
     "TypeError"),
    (compile_lazily(rf"^{_CALLABLE} got multiple values for argument '\w+'$"), "TypeError"),
    (compile_lazily(rf"^{_CALLABLE} missing \d+ required (?:positional|keyword-only) arguments?: '\w+'"
                    r"(?:(?:, '\w+')*,? and '\w+')?$"), "TypeError"),
    (compile_lazily(rf"^{_CALLABLE} takes (?:from \d+ to )?\d+ (?:positional|keyword-only) arguments? but \d+ "
                    r"(?:positional arguments? \(and \d+ keyword-only arguments?\) )?(?:was|were) given$"), "TypeError"),
    # Objects/object.c (PyObject_GenericGetAttr), Objects/moduleobject.c (module_getattro), Objects/typeobject.c
    # (type_getattro): an attribute that is not there
    (compile_lazily(r"^'[\w.]+' object has no attribute '\w+'$"), "AttributeError"),
    (compile_lazily(r"^(?:partially initialized )?module '[\w.]+' has no attribute '\w+'"
                    r"(?: \(most likely due to a circular import\))?$"), "AttributeError"),
    (compile_lazily(r"^type object '[\w.]+' has no attribute '\w+'$"), "AttributeError"),
    # Objects/abstract.c (PyObject_GetItem, PyObject_GetIter, binop_type_error), Objects/call.c (_PyObject_MakeTpCall)
    (compile_lazily(r"^'[\w.]+' object is not (?:subscriptable|iterable|callable)$"), "TypeError"),
    (compile_lazily(r"^unsupported operand type\(s\) for [^:\s]{1,3}: '[\w.]+' and '[\w.]+'$"), "TypeError"),
    # Objects/listobject.c, Objects/tupleobject.c, Objects/unicodeobject.c: an index past a sequence's end (a wrapper
    # logging `str(e)` after its own words: vllm-omni's `ERROR:vllm_omni.entrypoints.omni_llm:Stage 0 error on request
    # …: list index out of range`, vllm-project/vllm-omni#352; LMCache's `LMCache ERROR: … init failed: list index out
    # of range`, LMCache/LMCache#2854, is read first as LMCache's failed start: native_errors.COMPANION_TOOLS)
    (compile_lazily(r"^(?:list|tuple|string) index out of range$|^list assignment index out of range$"), "IndexError"),
    # Python/ceval.c (import_from): a name the module does not define
    (compile_lazily(r"^cannot import name '\w+' from '[\w.]+'(?: \([^()]*\))?$"), "ImportError"),
    # not CPython's, as exact: requests' HTTPError for an error status (requests/models.py raise_for_status: f"{status}
    # Client Error: {reason} for url: {url}", "Server Error" for 5xx), a client's call to the engine's API refused
    (compile_lazily(r"^[45]\d\d (?:Client|Server) Error: [^\n]{0,120} for url: \S+$"), "requests.exceptions.HTTPError"),
    # a distribution a program requires that is not installed (a wrapper's check of the engine, LLaMA-Factory's
    # `require_version("vllm>=…")`): transformers' require_version (transformers/utils/versions.py: "The '{requirement}'
    # distribution was not found and is required by this application. {hint}", importlib.metadata's PackageNotFoundError,
    # whose str() puts "No package metadata was found for " first), setuptools' pkg_resources (DistributionNotFound's
    # template "The '{req}' distribution was not found and is required by {requirers}", requirers "the application"
    # when none)
    (compile_lazily(r"^(?:No package metadata was found for )?The '[^'\n]{1,120}' distribution was not found and is "
                    r"required by this application\.(?: [^\n]{0,300})?$"), "importlib.metadata.PackageNotFoundError"),
    (compile_lazily(r"^The '[^'\n]{1,120}' distribution was not found and is required by (?!this application\.)[^\n]{1,200}$"),
     "pkg_resources.DistributionNotFound"),
)
# The types a line prints before a message when it is not the exception's own: a wrapper's `Error: {e}`, a logger's
# `ERROR` record (the scanner types such a record `ERROR`), `Exception: {e}` of a re-raise that kept only the text.
_GENERIC_TYPES = frozenset({"Error", "error", "ERROR", "Exception", "exception"})


def type_named_by_message(message: str) -> str | None:
    """The type CPython raises with exactly this message (one of its own templates), else None.  A whole message
    only: a sentence that merely contains one says nothing happened."""
    if len(message) > 512:
        return None  # the templates are short: a long line is a dump or prose
    return next((type_name for pattern, type_name in TYPED_MESSAGES if pattern.match(message)), None)


def typed_by_message(failure: Failure) -> Failure:
    """A failure that printed one of CPython's own messages under a word of no type (`Error: 'NoneType' object has no
    attribute 'shape'`, an ERROR record of `str(e)`): the type the message names, marked inferred (`typed_from_message`)."""
    final = failure.final
    if final.type not in _GENERIC_TYPES or final.frames or (type_name := type_named_by_message(final.message.strip())) is None:
        return failure
    block = replace(final, type=type_name, message=final.message.strip(), typed_from_message=True)
    return replace(failure, exceptions=(*failure.exceptions[:-1], block))
