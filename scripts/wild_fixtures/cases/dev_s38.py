"""Stop 38's dev split (branch h-shapes2): the shapes the last blind split missed.  An engine's error text that a
wrapper's logger carries in an ERROR record with no traceback (Xinference's `… xinference.api.restful_api <pid>
ERROR    [address=…, pid=…] <SGLang's message>`), and pastes without a failure whose lines the new readers look at:
a wrapper's dump of the launch settings that picks the engine (Xinference's `Enter launch_builtin_model, … kwargs:
model_engine=vLLM`), and a healthy start with a library's upgrade advice (pip's `[notice]` lines).  A paste that starts
in transformers' upgrade advice (the error's first line not pasted); torch.compile's BackendCompilerFailed with the
inner error on its next line.

Facts were mined from even-numbered threads no other file of the project cites (the record formats, the message
wording, the releases); what a thread did not show is ours, and each `facts` says which.
"""

from __future__ import annotations

from pattern_fixtures.mirror import frame_at

from .. import paste
from ..blocks import plain
from ..corpus import DOCKER, Expect, Install, Run, Text, WildCase
from .dev_detect import top

XINFERENCE_TAG = "[address=0.0.0.0:44547, pid=393543] "
# SGLang's Runtime (sglang/lang/backend/runtime_endpoint.py) raises it when its server process dies at start-up;
# Xinference's restful API logs str(exc) of the re-raised error under its own logger, with its actor pool's tag.
INITIALIZATION_FAILED = "Initialization failed. Please see the error messages above."
RECORD_3138 = Text(f"2025-03-28 08:30:52,932 xinference.api.restful_api 393044 ERROR    {XINFERENCE_TAG}{INITIALIZATION_FAILED}\n",
                   primary=True)

# Xinference's worker logs the launch it was asked for, its kwargs as key=value items (the format of
# xorbitsai/inference#2334); the engine named by model_engine then starts and serves.
HEALTHY_XINFERENCE_VLLM = Text(
    "2024-09-20 10:06:21,267 xinference.core.worker 336466 INFO     [request ee3a5cc8-76f4-11ef-ada4-878765a2943a] Enter "
    "launch_builtin_model, args: <xinference.core.worker.WorkerActor object at 0x7fc5ac9039c0>, kwargs: model_uid=qwen2.5-instruct-0,"
    "model_name=qwen2.5-instruct,model_size_in_billions=7,model_format=pytorch,quantization=none,model_engine=vLLM,model_type=LLM,"
    "n_gpu=auto,request_limits=None,peft_model_config=None,gpu_idx=None,download_hub=None,model_path=None\n"
    "2024-09-20 10:06:25,325 xinference.model.llm.llm_family 336466 INFO     Caching from Modelscope: qwen/Qwen2.5-7B-Instruct\n"
    "2024-09-20 10:06:25,625 xinference.model.llm.llm_family 336466 INFO     Cache /root/.xinference/cache/qwen2_5-instruct-pytorch-7b exists\n"
    "INFO 09-20 10:06:31 llm_engine.py:226] Initializing an LLM engine (v0.6.1.post2) with config: "
    "model='/root/.xinference/cache/qwen2_5-instruct-pytorch-7b', speculative_config=None, "
    "tokenizer='/root/.xinference/cache/qwen2_5-instruct-pytorch-7b', trust_remote_code=True, dtype=torch.bfloat16, max_seq_len=32768\n"
    "INFO 09-20 10:06:52 model_runner.py:1025] Loading model weights took 14.2487 GB\n"
    "INFO 09-20 10:06:55 gpu_executor.py:122] # GPU blocks: 11418, # CPU blocks: 4681\n"
    "INFO 09-20 10:07:12 model_runner.py:1456] Graph capturing finished in 17 secs.\n"
    "2024-09-20 10:07:12,904 xinference.core.worker 336466 INFO     [request ee3a5cc8-76f4-11ef-ada4-878765a2943a] Leave "
    "launch_builtin_model, elapsed time: 51 s\n")

# pip's own advice after an install (pip/_internal/self_outdated_check.py), before a healthy SGLang start.
PIP_NOTICE_THEN_START = Text(
    "Successfully installed sglang-0.4.4.post2 sgl-kernel-0.0.5\n"
    "\n"
    "[notice] A new release of pip is available: 24.0 -> 25.0.1\n"
    "[notice] To update, run: python -m pip install --upgrade pip\n"
    "$ python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --port 30000\n"
    "[2025-03-28 08:31:10 TP0] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=61.94 GB, mem usage=14.46 GB.\n"
    "[2025-03-28 08:31:11 TP0] KV Cache is allocated. #tokens: 858011, K size: 23.04 GB, V size: 23.04 GB\n"
    "[2025-03-28 08:31:20] INFO:     Started server process [393551]\n"
    "[2025-03-28 08:31:20] INFO:     Application startup complete.\n"
    "[2025-03-28 08:31:20] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)\n"
    "[2025-03-28 08:31:22] The server is fired up and ready to roll!\n")

# torch.compile's BackendCompilerFailed prints the inner error on the line after its own: torch/_dynamo/exc.py's class
# message, f"backend={name!r} raised:\n{type}: {inner}" (the paragraphs torch appends later left out: the thread's
# copy ends at the inner line).  A mirror of that module, so that the real interpreter prints it.
DYNAMO_EXC = (("torch/__init__.py", ""), ("torch/_dynamo/__init__.py", ""), ("torch/_dynamo/exc.py", '''
class TorchDynamoException(RuntimeError):
    pass


class BackendCompilerFailed(TorchDynamoException):
    def __init__(self, backend_name, inner_exception):
        self.backend_name = backend_name
        self.inner_exception = inner_exception
        super().__init__(f"backend={backend_name!r} raised:\\n{type(inner_exception).__name__}: {inner_exception}")
'''))
OUT_OPS = "out= ops aren't yet supported"
OUT_OPS_164041 = Run(plain((
    top("vllm/compilation/backends.py", "compile", "compiled_graph = self.compiler.compile(graph, example_inputs, compiler_config, runtime_shape)", 141,
        env=(("self", "NS(compiler=NS(compile=_target('f1')))"), ("graph", "None"), ("example_inputs", "[]"), ("compiler_config", "{}"),
             ("runtime_shape", "None"))),  # f1: the next frame
    frame_at("torch/_dynamo/output_graph.py", "_call_user_compiler", "raise BackendCompilerFailed(self.compiler_name, e)", 1871,
             env=(("BackendCompilerFailed", "__import__('torch._dynamo.exc', fromlist=['x']).BackendCompilerFailed"),
                  ("self", "NS(compiler_name='inductor')"), ("e", f"AssertionError({OUT_OPS!r})"))),
), extra_modules=DYNAMO_EXC), primary=True)

# transformers' unknown model type (transformers/models/auto/configuration_auto.py: ValueError "The checkpoint you are
# trying to load has model type `llava_mistral` but Transformers does not recognize this architecture. …" + blank line
# + its advice paragraph), pasted from the advice on: the error's first line is not in the paste, the lines after it
# are the start-up of a rank that was still coming up.
UPGRADE_ADVICE = ("You can update Transformers with the command `pip install --upgrade transformers`. If this does not work, and the "
                  "checkpoint is very new, then there may not be a release version that supports this model yet. In this case, you "
                  "can get the most up-to-date code by installing Transformers from source with the command "
                  "`pip install git+https://github.com/huggingface/transformers.git`")
ADVICE_THEN_STARTUP = Text(
    f"{UPGRADE_ADVICE}\n"
    "\n"
    "[2024-12-20 03:14:46 TP0] Init torch distributed begin.\n"
    "[2024-12-20 03:14:47 TP0] Load weight begin. avail mem=78.50 GB\n", primary=True)

CASES = (
    WildCase(thread="https://github.com/xorbitsai/inference/issues/3138", kind="dev-wrapper-error-record", style="record-only",
             parts=(RECORD_3138,), engine_version="0.4.4.post2", install=DOCKER,
             # printed without its exception type (README: no exception fields; the category is what is expected)
             expect=Expect("process-killed"),
             facts="SGLang enabled for a model from Xinference's web UI (pip show: sglang 0.4.4.post2, vllm 0.7.3, transformers 4.50.0); "
                   "the paste's error is Xinference's restful_api ERROR record with the actor pool's [address=0.0.0.0:44547, pid=393543] tag "
                   "and SGLang's 'Initialization failed. Please see the error messages above.'; the rest of the record's text ours "
                   "(the thread's copy was cut inside it)",
             resolution="Not confirmed in what was read (closed as stale). SGLang's server process died at start-up under Xinference; "
                        "its own error is printed above the record, which the paste left out.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/pytorch/pytorch/issues/164041", kind="dev-compile-inner-error", style="fenced", engine="vllm",
             parts=(OUT_OPS_164041,), install=Install("/home/user/vllm-src/.venv/lib/python3.12/site-packages"),
             expect=Expect("engine-bug", "torch._dynamo.exc.BackendCompilerFailed",
                           f"backend='inductor' raised:\nAssertionError: {OUT_OPS}", frame="_call_user_compiler", groups=1),
             facts="vLLM from source compiling a model with torch.compile: torch/_dynamo/output_graph.py 1871 _call_user_compiler "
                   "raising BackendCompilerFailed, whose message prints the inner \"AssertionError: out= ops aren't yet supported\" on its "
                   "next line; the vLLM frame above it and its line ours, the paragraphs torch appends to the message left out",
             resolution="An inductor pattern-matcher limitation hit by a vLLM custom op (labelled inductor_pattern_match): a bug of the "
                        "releases, not a launch setting; running without that compilation pass (or eager) avoids it.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/2532", kind="dev-upgrade-advice-cut", style="from-the-advice",
             parts=(ADVICE_THEN_STARTUP,),
             # the error's first line is not in the paste (README: no exception fields; the category is what is expected)
             expect=Expect("dependency-version"),
             facts="`python3 -m sglang.launch_server --model-path liuhaotian/llava-v1.6-mistral-7b --port 30000` on 2024-12-20: transformers "
                   "does not know the checkpoint's model type (`llava_mistral`, the wording sgl-project/sglang#128 shows for the same model); "
                   "the advice paragraph is transformers' own text; the paste starting at it and the TP0 start-up records after it ours",
             resolution="transformers has no llava_mistral (a model type of the LLaVA authors' own code): the known workaround edits the "
                        "checkpoint's config.json to model_type llava, or serves a converted checkpoint (haotian-liu/LLaVA PR#1115).",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/xorbitsai/inference/issues/2334", kind="dev-clean-wrapper-settings", style="healthy-launch",
             parts=(HEALTHY_XINFERENCE_VLLM,), engine="vllm", engine_version="0.6.1.post2",
             expect=Expect("none", groups=0),
             facts="Xinference's worker records (Enter launch_builtin_model with its kwargs as key=value items, llm_family's caching lines) "
                   "in the format the thread showed; the thread launched with model_engine=Transformers and failed: the vLLM launch, its "
                   "start-up lines and the Leave record are ours (a healthy paste of the same format)",
             resolution="No failure: the model started (the wrapper's settings dump names vLLM as its engine).",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/xorbitsai/inference/issues/3138", kind="dev-clean-upgrade-advice", style="pip-notice-then-start",
             parts=(PIP_NOTICE_THEN_START,), engine_version="0.4.4.post2",
             expect=Expect("none", groups=0),
             facts="the releases the thread named (sglang 0.4.4.post2); pip's [notice] lines are pip's format, the install and the healthy "
                   "start are ours (paste style ours)",
             resolution="No failure: pip's upgrade advice is a notice, and the server came up.",
             paste=(paste.fenced,)),
)
