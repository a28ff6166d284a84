"""Fatal lines printed by the programs around an engine, with no Python exception type of their own (issue 28,
stop 38's blind split): what a person points at in such a paste, read from the printing program's format.

- pydantic's line for one failed validation (vLLM's config classes are pydantic dataclasses): the paste keeps
  `  Value error, <the engine's message> [type=value_error, input_value=…, input_type=…]` without the
  `pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig` header above it.  pydantic
  formats a validator's ValueError as "Value error, {error}" (pydantic-core's `value_error` message template) and
  appends `[type=…, input_value=…, input_type=…]` (pydantic-core's ValidationError display): the error is the
  ValueError the engine's check raised, its message what follows "Value error, ".
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
"""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily

# Not a line the grammar reads as an exception line already (`openai.BadRequestError: Error code: 400 - …`).
_NOT_TYPED = r"(?!\s*[\w.]+(?:Error|Exception): )"

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
    _NOT_TYPED + r"^(?:.*?[\s'\"`(>])?(?P<msg>[\w./+\-]*[\w\-]\.so(?:\.\d+)*: undefined symbol: [\w.@$]+)"
)
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

OPENAI_CLASSES = {400: "BadRequestError", 401: "AuthenticationError", 403: "PermissionDeniedError",
                  404: "NotFoundError", 409: "ConflictError", 422: "UnprocessableEntityError", 429: "RateLimitError"}

WORDS = ("Value error, ", "Error code: ", "nvidia-container-cli", "OCI runtime", "undefined symbol", "(gcloud.", "error: ",
         "fatal ", "error ", "Error executing job")


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
    if (m := PYDANTIC_VALUE_ERROR.match(text)) is not None:
        return "ValueError", _without_pydantic_details(m["msg"]), True
    if (m := OPENAI_STATUS_ERROR.match(text)) is not None:
        return openai_class(int(m["status"])), m["msg"].strip(), True
    if (m := UNDEFINED_SYMBOL.match(text)) is not None:
        return "ImportError", m["msg"].strip(), True
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
    return None


def _without_pydantic_details(message: str) -> str:
    """The engine's message without pydantic's ` [type=value_error, input_value=…, input_type=…]` after it."""
    details = message.find("[type=value_error")
    while details > 0 and not message[details - 1].isspace():
        details = message.find("[type=value_error", details + 1)
    return (message[:details] if details > 0 else message).strip()


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
