"""Stop 40's dev sweep of fresh pastes (branch h-found7): shapes the sweep found misread.  One rank's named error
(`RuntimeError: NCCL error: …`, worded like a cascade) followed by the next rank's traceback cut before its exception
line: the named error leads, not the cut one.  Hydra's `Error executing job with overrides: […]` alone, the record a
trainer under Hydra (verl) prints before re-raising its job's exception: a failure.  An engine's message that its code
logs as an error (not one it raises), bare after the launch command.  And a look-alike that stays no failure: the
engine's informational lines, bare after the command.  And the error a sentence states above a traceback cut before
its exception line, a heading and a fence between them; an exception whose message alone the paste put in bold.

Facts were mined from even-numbered threads; what a thread did not show is ours, and each `facts` says which."""

from __future__ import annotations

import re
from functools import partial

from pattern_fixtures.mirror import failing_at, frame_at

from .. import paste
from ..blocks import plain
from ..corpus import IMAGE, Expect, Install, Run, Text, WildCase
from ..vllm_blocks import colour_dropped
from .dev_detect import top
from .vllm import HEADS_FIX, NCCL_MESSAGE, nccl_worker

VLLM = "vllm"
DIST_PACKAGES = Install("/usr/local/lib/python3.11/dist-packages")

# verl's trainer under Hydra: the driver's record, then Hydra's line for the job that raised (hydra/core/utils.py
# JobReturn.return_value logs it before re-raising); the paste kept nothing after it (verl-project/verl#10).
HYDRA_10 = Text(
    "(main_task pid=90508) Using LocalLogger is deprecated. The constructor API will change \n"
    "Error executing job with overrides: ['data.train_files=/data/gsm8k/train.parquet', 'data.val_files=/data/gsm8k/test.parquet', "
    "'data.train_batch_size=1024', 'actor_rollout_ref.rollout.tensor_model_parallel_size=4', 'actor_rollout_ref.rollout.name=vllm', "
    "'actor_rollout_ref.rollout.gpu_memory_utilization=0.4']\n", primary=True)

# The same line quoted in prose as a Markdown block quote, after the sentence that introduces it
# (hkust-nlp/simpleRL-reason#80: a single-node GRPO job failing after its first rollouts).
HYDRA_80 = Text(
    "After launching my single node job, everything seemed to be alright during generating rollouts. But after that, my job "
    "failed with following outputs:\n"
    "\n"
    "> Error executing job with overrides: ['algorithm.adv_estimator=grpo', 'data.train_batch_size=1024', "
    "'data.max_prompt_length=1024', 'data.max_response_length=2048', 'actor_rollout_ref.actor.ppo_mini_batch_size=256', "
    "'actor_rollout_ref.model.enable_gradient_checkpointing=True']\n", primary=True)

# SGLang's launcher logging that a scheduler died before it was ready (sglang/srt/entrypoints/engine.py
# `logger.error(f"Rank {i} scheduler is dead. Please check if there are relevant logs.")`, then its exit code, then
# the EOFError re-raised): gpustack/gpustack#3848 shows the two records after `sglang serve`; here only the first,
# its record header lost, right after the command (paste style ours).
SCHEDULER_DEAD_3848 = Text(
    "$ sglang serve --model-path /models/FLUX.1-dev --port 30000\n"
    "Rank 0 scheduler is dead. Please check if there are relevant logs.\n", primary=True)

# The same record with its header, ending the paste, records between it and the command (gpustack/gpustack#3848's
# records; the exit code record and the EOFError after it not pasted, and the prompt, ours).
SCHEDULER_DEAD_RECORD_3848 = Text(
    "$ sglang serve --model-path /models/FLUX.1-dev --port 30000\n"
    "[12-11 17:47:40] Loading FluxTransformer2DModel, default_dtype: torch.bfloat16\n"
    "[12-11 17:47:40] Using FlashAttention (FA3 for hopper, FA4 for blackwell) backend\n"
    "[12-11 17:52:52] Rank 0 scheduler is dead. Please check if there are relevant logs.\n", primary=True)

# SGLang's records of a healthy start, the last one its ready line: no failure (sgl-project/sglang#2468's records
# before its own failure; the ready line ours).
READY_RECORDS_2468 = Text(
    "[2024-12-13 01:44:59 TP0] Load weight end. type=MistralForCausalLM, dtype=torch.bfloat16, avail mem=9.69 GB\n"
    "[2024-12-13 01:45:01 TP0] Capture cuda graph end. Time elapsed: 2.19 s\n"
    "[2024-12-13 01:45:02] INFO:     Application startup complete.\n"
    "[2024-12-13 01:45:03] The server is fired up and ready to roll!\n")

# SGLang's informational start-up lines, their record headers lost, after the command: no failure (the lines and their
# order as sgl-project/sglang#2468 shows them before its own failure; the healthy end ours).
INFO_AFTER_COMMAND_2468 = Text(
    "$ python -m sglang.launch_server --model-path mistralai/Mistral-7B-Instruct-v0.1 --port 30000 --host 0.0.0.0\n"
    "Load weight end. type=MistralForCausalLM, dtype=torch.bfloat16, avail mem=9.69 GB\n"
    "Memory pool end. avail mem=2.44 GB\n"
    "Capture cuda graph begin. This can take up to several minutes.\n"
    "Capture cuda graph end. Time elapsed: 2.19 s\n")

# SGLang's custom all-reduce registering its CUDA graph buffers during capture (sglang/srt/model_executor/
# cuda_graph_runner.py -> distributed/device_communicators/custom_all_reduce.py register_graph_buffers, line 307 as
# sgl-project/sglang#9706 shows it), the kernel's `RuntimeError: invalid argument`: the paste cut after that frame's
# `File` line, the error stated in the sentence above it, a heading and a fence between.
CUSTOM_ALL_REDUCE = "sglang/srt/distributed/device_communicators/custom_all_reduce.py"
CUDA_GRAPH_RUNNER = "sglang/srt/model_executor/cuda_graph_runner.py"
GRAPH_BUFFERS_9706 = Run(plain((
    top(CUDA_GRAPH_RUNNER, "__init__", "self.capture()", 380, env=(("self", "HOP:capture"),)),
    frame_at(CUDA_GRAPH_RUNNER, "capture", "ca_comm.register_graph_buffers()", 470,
             env=(("ca_comm", "HOP:register_graph_buffers"),)),
    failing_at(CUSTOM_ALL_REDUCE, "register_graph_buffers", 'raise RuntimeError("invalid argument")', 307),
)), primary=True)
SENTENCE_9706 = ("SGLang fails to capture CUDA graph during initialization with a RuntimeError: invalid argument\n"
                 "It happens in the custom all-reduce kernel, even with conservative memory settings.\n\n"
                 "## Full Error Traceback")

# vLLM's weight loader refusing a parameter the model class lacks (vllm/model_executor/models/utils.py
# AutoWeightsLoader._load_module, line 250 as modelscope/ms-swift#4676 shows it): a sequence-classification head
# ('score') saved for Qwen2-VL, loaded by ms-swift's vLLM backend.
LOADER = "vllm/model_executor/models/utils.py"
SCORE_MESSAGE = "There is no module or parameter named 'score' in Qwen2VLForConditionalGeneration"
SCORE_4676 = Run(plain((
    top(LOADER, "load_weights", "autoloaded_weights = set(loader._load_module())", 261,
        env=(("loader", "HOP:_load_module"),)),
    failing_at(LOADER, "_load_module", "raise ValueError(msg)", 250, env=(("msg", repr(SCORE_MESSAGE)),)),
)), primary=True)

# vLLM's check of the attention heads against the tensor-parallel size (vllm/config.py verify_with_parallel_config;
# vllm-project/vllm#4232: Qwen1.5-32B's 40 heads on six GPUs), printed bare after the command, which the paste put in
# an inline-code span over several lines (ai-dynamo/dynamo#5048's paste style; here ours).
SPAN_COMMAND_4232 = Text(
    "`vllm serve /data/models/Qwen1.5-32B-Chat \\\n"
    "  --tensor-parallel-size 6 \\\n"
    "  --max-model-len 8192\n"
    " `\n"
    "Total number of attention heads (40) must be divisible by tensor parallel size (6).\n", primary=True)


def rank_prefixed(text: str) -> str:
    """torch's `[rank0]: ` before every line, its indentation kept (modelscope/ms-swift#4676's paste)."""
    return "".join(f"[rank0]: {line}\n" for line in text.splitlines())


def message_in_bold(text: str) -> str:
    """The exception's message put in bold by the paste, the type left plain (modelscope/ms-swift#4676)."""
    return re.sub(r"^(.*?ValueError: )(.+)$", r"\1**\2**", text, flags=re.M)


def fenced(**fields: object) -> WildCase:
    """A case pasted in a code fence after its own transforms (`cuts`)."""
    cuts = fields.pop("cuts", ())
    return WildCase(**fields, paste=(*cuts, paste.fenced))  # type: ignore[arg-type]


def hydra(**fields: object) -> WildCase:
    """A verl job's paste holding Hydra's line and no exception (README: no exception fields): vLLM rollouts of the
    thread's time, the release ours."""
    return fenced(kind="dev-hydra-job-failed", engine_version="0.6.3", engine=VLLM, expect=Expect("unclassified"), **fields)


CASES = (
    fenced(thread="https://github.com/gpustack/gpustack/issues/2680", kind="dev-named-error-before-cut-traceback",
           style="rank-after-nccl-error",
           parts=(Run(nccl_worker(0, 4662), primary=True), Run(nccl_worker(3, 4665))),
           engine_version="0.11.0", engine=VLLM, install=DIST_PACKAGES,
           cuts=(partial(paste.cut_at_start, marker="in NCCL_CHECK"), partial(paste.cut_after, marker="worker = WorkerProc("),
                 colour_dropped),
           expect=Expect("nccl", "RuntimeError", NCCL_MESSAGE, frame="NCCL_CHECK"),
           facts="vLLM's workers under GPUStack: rank 0's pynccl NCCL_CHECK raising 'NCCL error: unhandled system error (run with "
                 "NCCL_DEBUG=INFO for details)', the paste starting at that frame, then rank 3's 'WorkerProc failed to start.' and its "
                 "traceback cut after `worker = WorkerProc(*args, **kwargs)` (the thread's shape); the frames laid out as vLLM "
                 "0.11.0's, the `(Worker pid=N)` prefix instead of the thread's `(VllmWorker rank=N pid=N)` and the release ours",
           resolution="Not resolved in what was read. NCCL's 'unhandled system error' at ncclCommInitRank: the GPUs' interconnect "
                      "setup (shared memory in the container, peer-to-peer access, the network interface); NCCL_DEBUG=INFO says which."),
    hydra(thread="https://github.com/verl-project/verl/issues/10", style="overrides-line-only", parts=(HYDRA_10,),
          facts="verl's PPO trainer with vLLM rollouts under Hydra: the driver's LocalLogger record, then only Hydra's "
                "'Error executing job with overrides: [...]' (the thread's paste stops there); the overrides shortened and the "
                "paths ours, the release ours (vLLM of the thread's date)",
          resolution="Intermittent ActorDiedError in the thread (its traceback follows Hydra's line there); the job's own exception "
                     "below Hydra's line says why."),
    hydra(thread="https://github.com/hkust-nlp/simpleRL-reason/issues/80", style="quoted-in-prose", parts=(HYDRA_80,),
          facts="a verl GRPO job failing after its first rollouts, Hydra's 'Error executing job with overrides: [...]' quoted as a "
                "block quote after a sentence (the thread's style); the overrides shortened ours, the engine (vLLM, verl's rollout "
                "of the time) and its release ours",
          resolution="The actor died without a reason in the paste; the job's own exception (Ray's ActorDiedError in the thread) "
                     "names it."),
    fenced(thread="https://github.com/gpustack/gpustack/issues/3848", kind="dev-logged-message-after-command",
           style="scheduler-dead-bare", parts=(SCHEDULER_DEAD_3848,), engine_version="0.5.6.post1",
           expect=Expect("process-killed"),  # a logged error, no exception type (README: no exception fields)
           facts="`sglang serve` of FLUX.1-dev, then SGLang's 'Rank 0 scheduler is dead. Please check if there are relevant "
                 "logs.' (the thread's words); the record header lost, the exit code record and the EOFError after it not pasted, "
                 "the prompt ours (paste style ours)",
           resolution="Not confirmed in what was read. The scheduler died while the weights loaded (exit code -9 in the thread): "
                      "the host's or the container's memory limit."),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/9706", kind="dev-error-said-above-markdown",
             style="sentence-heading-fence", parts=(GRAPH_BUFFERS_9706,), engine_version="0.5.1", install=IMAGE,
             paste=(partial(paste.cut_after, marker="in register_graph_buffers"), paste.fenced,
                    partial(paste.prose, before=SENTENCE_9706)),
             expect=Expect("nccl", "RuntimeError", "invalid argument"),  # the custom all-reduce: collectives (as vllm#6042)
             facts="Llama-4-Scout on 8xH100 in lmsysorg/sglang:latest: CUDA graph capture failing with 'RuntimeError: invalid "
                   "argument' in the custom all-reduce's register_graph_buffers (custom_all_reduce.py line 307), the sentence "
                   "stating it above a heading and the fenced traceback cut at that frame (the thread's shape); the exception "
                   "unquoted (the thread quoted it in backticks), the frames above it and the release ours (paste style ours)",
             resolution="Not resolved in what was read; the custom all-reduce failing to register its graph buffers: "
                        "--disable-custom-all-reduce is the usual test."),
    WildCase(thread="https://github.com/modelscope/ms-swift/issues/4676", kind="dev-message-in-bold", style="rank-prefix-bold",
             parts=(SCORE_4676,), engine_version="0.8.5", engine=VLLM, install=Install("/usr/local/lib/python3.11/site-packages"),
             paste=(partial(paste.cut_at_start, marker="_load_module"), message_in_bold, rank_prefixed),
             expect=Expect("unclassified", "ValueError", SCORE_MESSAGE, frame="_load_module"),
             facts="ms-swift's `swift infer --infer_backend vllm` of a Qwen2-VL regression checkpoint: vLLM's loader raising "
                   "\"There is no module or parameter named 'score' in Qwen2VLForConditionalGeneration\" from "
                   "models/utils.py _load_module line 250, every line under torch's `[rank0]: `, the message in bold (the "
                   "thread's paste); the frame above it and the release ours",
             resolution="vLLM's Qwen2-VL class has no classification head: serve the checkpoint with the PyTorch backend, or "
                        "as a model class vLLM implements with one."),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/4232", kind="dev-engine-message-after-command",
             style="command-in-inline-span", parts=(SPAN_COMMAND_4232,), engine_version="0.4.1", engine=VLLM,
             expect=Expect("parallel-config", fix=HEADS_FIX),  # printed without its exception type (README: no exception fields)
             facts="Qwen1.5-32B (40 heads) on six GPUs, vLLM's check of the heads against the tensor-parallel size (the thread); "
                   "the serve command in an inline-code span over three lines and the message alone after its closing backtick "
                   "ours (the style of ai-dynamo/dynamo#5048's paste)",
             resolution="Maintainer: use a tensor-parallel size that divides 40 (2, 4, 8)."),
    fenced(thread="https://github.com/gpustack/gpustack/issues/3848", kind="dev-logged-message-after-command",
           style="scheduler-dead-record-ends-paste", parts=(SCHEDULER_DEAD_RECORD_3848,), engine_version="0.5.6.post1",
           expect=Expect("process-killed"),  # a logged error, no exception type (README: no exception fields)
           facts="`sglang serve` of FLUX.1-dev: its loading records, then SGLang's '[12-11 17:52:52] Rank 0 scheduler is dead. "
                 "Please check if there are relevant logs.' (the thread's records); the paste ending there, without the exit "
                 "code record and the EOFError after it, ours",
           resolution="Not confirmed in what was read. The scheduler died while the weights loaded (exit code -9 in the thread): "
                      "the host's or the container's memory limit."),
    fenced(thread="https://github.com/sgl-project/sglang/issues/2468", kind="dev-clean-info-after-command",
           style="records-then-ready", parts=(READY_RECORDS_2468,), engine_version="0.4.0.post1",
           expect=Expect("none", groups=0),
           facts="SGLang's start-up records as the thread shows them (weights, CUDA graph, Uvicorn's startup), the ready line "
                 "after them ours",
           resolution="No failure: a healthy start."),
    fenced(thread="https://github.com/sgl-project/sglang/issues/2468", kind="dev-clean-info-after-command",
           style="headers-lost", parts=(INFO_AFTER_COMMAND_2468,), engine_version="0.4.0.post1",
           expect=Expect("none", groups=0),
           facts="SGLang's start-up lines (weights loaded, memory pool, CUDA graph capture) as the thread shows them, their record "
                 "headers lost, right after the launch command; the healthy end ours",
           resolution="No failure: the server's informational start-up lines."),
)
