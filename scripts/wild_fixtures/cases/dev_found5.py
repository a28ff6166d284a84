"""Stop 39's dev sweep (branch h-found5): shapes a fresh sweep of pastes showed unread.  Ray's re-raise of a remote
task's error (`ray.exceptions.RayTaskError(ActorDiedError): ray::TaskRunner.run() (pid=…)` + the task's own frames and
its cause's line), a wrapper's logger re-logging a container's output (`<time> - INFO - [container] (APIServer pid=N) `)
around a traceback whose header the paste cut, an error stated in a wrapper's ERROR record above a traceback cut before
its exception line, the engines' error body's tail after the engine's message (its head cut), torch's rank prefix after
Ray's actor prefix, a CI log viewer's `  | ` margin, and healthy pastes of the same formats that must stay no failure.

Facts were mined from even-numbered threads (the formats, the wordings, the releases); what a thread did not show is
ours, and each `facts` says which."""

from __future__ import annotations

from functools import partial

from pattern_fixtures.mirror import frame_at

from .. import composed, paste
from ..blocks import plain
from ..corpus import Expect, Install, Run, Text, WildCase
from ..vllm_blocks import colour_dropped, engine_startup_failed
from .dev_detect import top
from .vllm import CASCADE_EXPECT, VLLM

# -- Ray: a remote task's error re-raised by ray.get ------------------------------------------------------------------
# ray/exceptions.py: RayTaskError.as_instanceof_cause() builds a class named f"RayTaskError({cause.__name__})" that
# derives from both, so CPython prints `ray.exceptions.RayTaskError(ActorDiedError): ` and then the error's str(): the
# task's name and place (`ray::TaskRunner.run() (pid=…, ip=…, actor_id=…, repr=…)`), the task's own traceback as Ray
# captured it, and its cause's line.  A mirror of that module, so that the real interpreter prints it.
RAY_EXCEPTIONS = (("ray/__init__.py", ""), ("ray/exceptions.py", '''
class RayError(Exception):
    pass


class ActorDiedError(RayError):
    pass


class RayTaskError(RayError):
    def __init__(self, function_name, traceback_str, cause):
        self.function_name = function_name
        self.traceback_str = traceback_str
        self.cause = cause
        super().__init__(traceback_str)

    def __str__(self):
        return self.traceback_str

    def as_instanceof_cause(self):
        cause_cls = self.cause.__class__
        cls = type(f"RayTaskError({cause_cls.__name__})", (RayTaskError, cause_cls), {})
        return cls(self.function_name, self.traceback_str, self.cause)
'''))
ACTOR_DIED = "The actor died unexpectedly before finishing this task."
ACTOR_DETAIL = ("\tclass_name: create_colocated_worker_cls.<locals>.WorkerDict\n\tactor_id: 5f1e0a47c26d3b9e88aa210401000000\n"
                "\tpid: 20174\n\tname: k3XwQpWorkerDict_0:1\n\tnamespace: 7c1d9e2a-51f0-4b7e-9a0e-3d2c4f6b8e11\n\tip: 10.0.3.17\n"
                "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker "
                "unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. (1) The "
                "process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. (3) The worker "
                "is crashed unexpectedly due to SIGSEGV or other unexpected errors.")


def _remote_traceback(task: str, frames: tuple[tuple[str, int, str, str], ...]) -> str:
    """The text Ray captured of the task's own traceback (ray/exceptions.py RayTaskError: the task, then its frames
    in CPython's format, then the cause's line), as the message the re-raised error prints."""
    lines = [f"ray::{task} (pid=3369646, ip=10.0.3.17, actor_id=0b280a78e9337f3e9dce5e8001000000, repr=<main_ppo.TaskRunner "
             "object at 0x7fdaa9b567b0>)"]
    for path, line, function, source in frames:
        lines += [f'  File "{path}", line {line}, in {function}', f"    {source}"]
    return "\n".join([*lines, f"ray.exceptions.ActorDiedError: {ACTOR_DIED}\n{ACTOR_DETAIL}"])


VERL_TASK = _remote_traceback("TaskRunner.run()", (
    ("/workspace/verl/verl/trainer/main_ppo.py", 367, "run", "trainer.fit()"),
    ("/workspace/verl/verl/trainer/ppo/ray_trainer.py", 1439, "fit",
     "gen_batch_output = self.actor_rollout_wg.generate_sequences(gen_batch)"),
    ("/workspace/verl/verl/single_controller/ray/base.py", 51, "__call__", "output = ray.get(output)"),
))
RAY_GET_4082 = Run(plain((
    top("verl/trainer/main_ppo.py", "run_ppo", "ray.get(runner.run.remote(config))", 222,
        env=(("ray", "HOP:get"), ("runner", "NS(run=NS(remote=lambda config: None))"), ("config", "None"))),
    frame_at("ray/_private/auto_init_hook.py", "auto_init_wrapper", "return fn(*args, **kwargs)", 22,
             env=(("args", "()"), ("kwargs", "{}"))),
    frame_at("ray/_private/client_mode_hook.py", "wrapper", "return func(*args, **kwargs)", 104,
             env=(("args", "()"), ("kwargs", "{}"))),
    frame_at("ray/_private/worker.py", "get", "values, debugger_breakpoint = worker.get_objects(object_refs, timeout=timeout)", 2882),
    frame_at("ray/_private/worker.py", "get_objects", "raise value.as_instanceof_cause()", 968,
             env=(("value", "__import__('ray.exceptions', fromlist=['x']).RayTaskError('run', "
                            f"{VERL_TASK!r}, __import__('ray.exceptions', fromlist=['x']).ActorDiedError())"),)),
), extra_modules=RAY_EXCEPTIONS), primary=True)

# -- a wrapper's logger re-logging a container's lines, the traceback's header cut ------------------------------------
# vllm-project/vllm PR#43410 showed vLLM's API server traceback re-logged line by line by a launcher's Python logger:
# `2026-05-29 09:14:45,594 - INFO - [container] (APIServer pid=557) ` before every line, the paste starting mid-traceback.


def container_logger(text: str, start: str = "2026-05-29 09:14:45") -> str:
    """A launcher's Python logger re-logging a container's output: `<time,ms> - INFO - [container] ` before every line."""
    return "".join(f"{start},{594 + index % 3} - INFO - [container] {line}\n" for index, line in enumerate(text.splitlines()))


# -- an error stated in a wrapper's ERROR record, above a traceback cut before its exception line -------------------
# xorbitsai/inference#2486: Xinference's restful API logs str(exc) with its actor pool's tag, then the traceback; the
# paste stops inside the traceback.  The error is torch's TCPStore server giving up on a rank that never joined (c10d
# TCPStore: "Timed out after {timeout} seconds waiting for clients. {joined}/{world} clients joined.").
CLIENTS = "Timed out after 601 seconds waiting for clients. 1/2 clients joined."
RECORD_2486 = Text(f"2024-10-25 12:21:14,974 xinference.api.restful_api 37502 ERROR    [address=172.22.149.188:45585, "
                   f"pid=43525] {CLIENTS}\n")
LAUNCH_2486 = Run(plain((
    top("xinference/api/restful_api.py", "launch_model", "model_uid = supervisor.launch_builtin_model(model_uid=None)", 977,
        env=(("supervisor", "HOP:launch_builtin_model"),)),
    frame_at("xoscar/backends/context.py", "send", "return self._process_result_message(result)", 227,
             env=(("result", "None"),)),
    frame_at("xoscar/backends/context.py", "_process_result_message", "raise message.as_instanceof_cause()", 102,
             env=(("message", f"NS(as_instanceof_cause=lambda: RuntimeError({CLIENTS!r}))"),)),
)), primary=True)


def cut_before_exception(text: str) -> str:
    """The paste stops inside the traceback: everything from its exception line on is missing."""
    lines = text.splitlines()
    last = max(index for index, line in enumerate(lines) if line.startswith(("RuntimeError", "ray.")) or "Error: " in line[:40])
    return "".join(line + "\n" for line in lines[:last])


# -- the engines' error body's tail after the engine's message, its head cut -------------------------------------------
# elotl/GenAI-infra-stack#62 quoted only the end of the openai client's print of vLLM's 400 answer: the message, then
# the error body's last fields (vLLM's ErrorResponse: object, message, type, param, code).
BODY_TAIL_62 = Text(
    "This model's maximum context length is 4096 tokens. However, you requested 6379 tokens (6029 in the messages, 350 in "
    "the completion). Please reduce the length of the messages or completion.\", 'type': 'BadRequestError', 'param': None, "
    "'code': 400}\n", primary=True)


# -- torch's per-rank prefix after Ray's actor prefix ------------------------------------------------------------------
# Ray's log monitor puts the actor before each line a worker prints, torch's logger the rank before its C++ records:
# `(ActorModelRayActor pid=744, ip=10.1.59.27) [rank9]:[E416 … ProcessGroupNCCL.cpp:616] … Watchdog caught collective
# operation timeout …` (OpenRLHF/OpenRLHF#970, the records run together in its copy).
WORK = "last enqueued NCCL work: 876319, last completed NCCL work: 876318."
WATCHDOG_970 = Text(
    composed.glog(9, "E", "416 13:21:26.967375581", "ProcessGroupNCCL.cpp:616",
                  composed.collective_timeout(1, 876319, "BROADCAST", (8, 8), 600089))
    + composed.glog(9, "E", "416 13:21:26.967555843", "ProcessGroupNCCL.cpp:1785",
                    f"[PG ID 1 PG GUID 2 Rank 1] Exception (either an error or timeout) detected by watchdog at work: 876319, {WORK}")
    + composed.glog(9, "E", "416 13:21:26.967565300", "ProcessGroupNCCL.cpp:1834",
                    f"[PG ID 1 PG GUID 2 Rank 1] Timeout at NCCL work: 876319, {WORK}"),
    primary=True)


# -- a CI log viewer's margin ----------------------------------------------------------------------------------------
# vllm-project/vllm#6042 and #14574 copied vLLM's CI logs from Buildkite's web view: `  | ` before each line.


def ci_margin(text: str) -> str:
    """Buildkite's web log copied with its margin: `  | ` before every line (vllm-project/vllm#6042, #14574)."""
    return "".join(f"  | {line}\n" for line in text.splitlines())


WATCHDOG_6042 = Text(
    "INFO 07-01 13:44:41 custom_all_reduce_utils.py:232] reading GPU P2P access cache from /root/.config/vllm/gpu_p2p_access_cache.json\n"
    "INFO 07-01 13:44:43 model_runner.py:160] Loading model weights took 0.2389 GB\n"
    + composed.nccl_timeout_abort(0, "701 13:54:43.104512039", "PG ID 2 PG GUID 3", 2, "ALLREDUCE", (134217728, 134217728), 600059),
    primary=True)


# -- healthy pastes in the same formats -------------------------------------------------------------------------------
# verl's and the launcher's loggers around a healthy start: WARNING records that quote a handled error, and a container's
# lines with the launcher's prefix (no traceback anywhere).
HEALTHY_CONTAINER = Text(
    "(APIServer pid=557) INFO 05-29 09:13:02 [api_server.py:1805] vLLM API server version 0.11.0\n"
    "(APIServer pid=557) INFO 05-29 09:13:10 [__init__.py:1750] Using max model len 32768\n"
    "(EngineCore_DP0 pid=610) INFO 05-29 09:13:31 [gpu_model_runner.py:2653] Model loading took 14.25 GiB and 19.1 seconds\n"
    "(EngineCore_DP0 pid=610) INFO 05-29 09:13:52 [core.py:218] init engine (profile, create kv cache, warmup model) took 21.3 s\n"
    "(APIServer pid=557) INFO 05-29 09:13:53 [api_server.py:1887] Starting vLLM API server 0 on http://0.0.0.0:8000\n"
    "(APIServer pid=557) INFO:     Application startup complete.\n"
    "(APIServer pid=557) INFO:     10.0.3.9:51220 - \"POST /v1/chat/completions HTTP/1.1\" 400 Bad Request\n"
    "(APIServer pid=557) INFO:     10.0.3.9:51224 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n")
HEALTHY_VERL_WARNINGS = Text(
    "[2026-03-12 11:02:10][verl][WARNING] The tokenizer has no chat template (KeyError: 'chat_template'), using the model's "
    "default template\n"
    "[2026-03-12 11:02:11][verl][INFO] Using rollout backend: sglang\n"
    "[2026-03-12 11:02:38 TP0] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=61.94 GB, mem usage=14.46 GB.\n"
    "[2026-03-12 11:02:40][verl][WARNING] Retrying the rollout server health check after ConnectionError: "
    "HTTPConnectionPool(host='127.0.0.1', port=30000): Max retries exceeded with url: /health\n"
    "[2026-03-12 11:02:52][verl][INFO] Rollout server ready at http://127.0.0.1:30000\n"
    "[2026-03-12 11:03:30][verl][INFO] step:1 - actor/pg_loss:0.012 - critic/score/mean:0.41 - timing_s/gen:31.2\n")

CASES = (
    WildCase(thread="https://github.com/verl-project/verl/issues/4082", kind="dev-ray-task-error", style="remote-frames",
             parts=(RAY_GET_4082,), install=Install("/home/user/.conda/envs/verl/lib/python3.11/site-packages"),
             engine_version="0.5.2",
             expect=Expect("host-memory", "ray.exceptions.ActorDiedError", f"{ACTOR_DIED}\n{ACTOR_DETAIL}", groups=1),
             facts="verl's TaskRunner under Ray (ray.get in main_ppo, ray/_private/worker.py get_objects raising "
                   "value.as_instanceof_cause() at line 968, the thread's frames), the re-raised RayTaskError(ActorDiedError) with the "
                   "task's own frames (main_ppo.run, ray_trainer.fit, single_controller/ray/base.py) and Ray's SYSTEM_ERROR exit "
                   "detail as Simple-Efficient/RL-Factory#8 shows it; the ids, the addresses, the paths, the line of ray_trainer's frame "
                   "and the SGLang release ours",
             resolution="A rollout worker process died (Ray's exit detail names the OOM killer first); the worker's own output "
                        "says why. Not resolved in what was read.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/vllm-project/vllm/pull/43410", kind="dev-container-logger-frames", style="cut-at-start",
             parts=(Run(engine_startup_failed("{}"), primary=True),), engine_version="0.13.0", engine=VLLM,
             install=Install("/usr/local/lib/python3.11/dist-packages"),
             expect=CASCADE_EXPECT,
             facts="vLLM's API server traceback re-logged by a launcher's Python logger, `<time,ms> - INFO - [container] "
                   "(APIServer pid=557) ` before every line, the paste starting mid-traceback at build_async_engine_client's frames "
                   "(the thread's format and frames); the exception line kept, the release and the failed-process dict ours "
                   "(the thread's copy stopped before it)",
             resolution="The API server's cascade: the engine core's own error is printed above, on its (EngineCore…) lines.",
             paste=(colour_dropped, partial(paste.cut_at_start, marker="core_client.py", occurrence=1), container_logger,
                    paste.fenced)),
    WildCase(thread="https://github.com/xorbitsai/inference/issues/2486", kind="dev-record-names-cut-traceback", style="record-above-cut",
             parts=(RECORD_2486, LAUNCH_2486), engine="vllm", engine_version="0.6.3",
             install=Install("/home/miniconda3/envs/xinference/lib/python3.11/site-packages"),
             expect=Expect("nccl"),  # the exception line is not in the paste (README: no exception fields)
             facts="Xinference 0.16 launching a model on two workers with vLLM; its restful_api ERROR record with the actor pool's "
                   "[address=…, pid=…] tag and torch's 'Timed out after 601 seconds waiting for clients. 1/2 clients joined.', then the "
                   "traceback through restful_api.launch_model and xoscar's context, cut before its exception line (the thread's "
                   "paste); the statements (synchronous here), the frames below context.py and the vLLM release ours",
             resolution="The second worker never joined the distributed rendezvous within the timeout: check that both nodes "
                        "reach each other on the master port (firewall, interface) and start together.",
             paste=(cut_before_exception, paste.fenced)),
    WildCase(thread="https://github.com/elotl/GenAI-infra-stack/issues/62", kind="dev-client-body-tail", style="inline-code",
             parts=(BODY_TAIL_62,), engine="vllm", engine_version="0.6.6",
             expect=Expect("context-length"),  # printed without its type (README: no exception fields)
             facts="vLLM's context-length refusal (4096 tokens, 6379 requested: 6029 in the messages, 350 in the completion) as the "
                   "client printed the 400 answer, only its message and the error body's last fields quoted in one inline-code span "
                   "(the thread's paste); the release (of the thread's date) ours",
             resolution="The request asks for more tokens than the served context: send fewer (the thread lowers the retrieval's "
                        "top-k) or serve a longer --max-model-len the model supports.",
             paste=(paste.inline_span,)),
    WildCase(thread="https://github.com/OpenRLHF/OpenRLHF/issues/970", kind="dev-ray-rank-records", style="ray-then-rank",
             parts=(WATCHDOG_970,), engine="vllm", engine_version="0.8.3",
             expect=Expect("nccl"),  # torch's E records, no Python exception (README: no exception fields)
             facts="OpenRLHF's actor under Ray on 10.1.59.27 (`(ActorModelRayActor pid=744, ip=10.1.59.27) `), torch's rank-9 records "
                   "of a BROADCAST timing out after 600089 ms at work 876319 (ProcessGroupNCCL.cpp:616, 1785, 1834, the thread's "
                   "wording and numbers); one record a line here (the thread's copy ran them together), the vLLM release ours",
             resolution="A collective timed out on a long-context step (the thread: host memory ran out, the OOM killer took a "
                        "worker, the others waited); find the rank that died first.",
             paste=(partial(paste.ray, actor="ActorModelRayActor", pid=744, ip="10.1.59.27"), paste.fenced)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/6042", kind="dev-ci-margin", style="buildkite-copy",
             parts=(WATCHDOG_6042,), engine="vllm", engine_version="0.5.0",
             expect=Expect("nccl", "c10::DistBackendError",
                           composed.watchdog_terminated("PG ID 2 PG GUID 3", 0, composed.collective_timeout(
                               0, 2, "ALLREDUCE", (134217728, 134217728), 600059))),
             facts="vLLM's CI log copied from Buildkite's web view with its `  | ` margin (the thread's and vllm-project/vllm#14574's "
                   "copies), rank 0's ALLREDUCE of 134217728 elements timing out after 600059 ms at work 2 (the thread's numbers); "
                   "the start-up records, torch's later record format and the C++ abort's frames ours (composed)",
             resolution="A collective hung until the watchdog's timeout took the process down; the thread asks for the stacks of "
                        "the hung ranks (py-spy) to find where they waited.",
             paste=(ci_margin, partial(paste.fenced, info="text"))),
    WildCase(thread="https://github.com/vllm-project/vllm/pull/43410", kind="dev-clean-container-logger", style="healthy-start",
             parts=(HEALTHY_CONTAINER,), engine="vllm", engine_version="0.11.0",
             expect=Expect("none", groups=0),
             facts="the launcher's `<time,ms> - INFO - [container] ` prefix before every line (the thread's format); a healthy "
                   "start, the access lines (one 400 with no text after it) and the release ours",
             resolution="No failure: the server started and answered.",
             paste=(container_logger, paste.fenced)),
    WildCase(thread="https://github.com/verl-project/verl/issues/4082", kind="dev-clean-wrapper-warnings", style="handled-errors",
             parts=(HEALTHY_VERL_WARNINGS,), engine_version="0.5.2",
             expect=Expect("none", groups=0),
             facts="a bracketed time and the wrapper's bracketed names and level before each record ([verl][WARNING]); the records "
                   "quoting errors that were handled (a missing chat template, a health check retried), SGLang's TP0 record, the "
                   "rollout's progress line and the release ours (paste style ours)",
             resolution="No failure: the warnings were survived and training ran.",
             paste=(paste.fenced,)),
)
