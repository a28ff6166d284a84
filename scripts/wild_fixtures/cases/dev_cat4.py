"""Stop 39's dev split of issue 28's category work (branch h-cat4): classes a second fresh blind split left
unclassified or filed under the wrong category.  transformers refusing a config name the engine registers at import
(dependency-version, not an unsupported model), NaN in the sampling probabilities after a kernel library's upgrade
(dependency-version with the numerics checks, not a device assert), and a wrapper's bare "Failed to load model"
over its own frames, the exception line cut (model loading, the wrapper named, not "a wrapper for another release").

Facts were mined from threads with even numbers (the message wording, the frames and records they showed, the
release, the resolution); what a thread did not show is ours, and each `facts` says which.
"""

from __future__ import annotations

from pattern_fixtures.mirror import failing_at, frame_at

from .. import paste
from ..blocks import c_attr, c_property, plain
from ..corpus import DOCKER, Expect, Run, Text, WildCase
from .dev_detect import top


def cut_before_last_frame(text: str) -> str:
    """The paste stops inside the traceback: its last frame and the exception line below it were not copied."""
    lines = text.rstrip("\n").splitlines()
    last = max(i for i, line in enumerate(lines) if line.lstrip().startswith('File "'))
    return "\n".join(lines[:last]) + "\n"


# -- vllm-project/vllm-ascend#2046: importing vLLM 0.9 under a transformers that ships 'aimv2' itself -----------------

# vLLM's configs package registers its own AIMv2 config at import (transformers_utils/configs/ovis.py); transformers'
# _LazyConfigMapping.register refuses a model type it already has.  The example script's import chain is shortened to
# the frames the thread showed last.
AIMV2_IMPORT = Run(plain((
    top("examples/offline_inference_npu.py", "main", "import_vllm()", 26, env=(("import_vllm", "NEXT"),)),
    frame_at("vllm/transformers_utils/configs/ovis.py", "import_vllm", 'AutoConfig.register("aimv2", AIMv2Config)', 75,
             env=(("AutoConfig", "HOP:register"), ("AIMv2Config", "None"))),
    frame_at("transformers/models/auto/configuration_auto.py", "register",
             "CONFIG_MAPPING.register(model_type, config, exist_ok=exist_ok)", 1306,
             env=(("CONFIG_MAPPING", "HOP:register"), ("model_type", "'aimv2'"), ("config", "None"), ("exist_ok", "False"))),
    failing_at("transformers/models/auto/configuration_auto.py", "register",
               """raise ValueError(f"'{key}' is already used by a Transformers config, pick another name.")\n""", 993,
               env=(("key", "'aimv2'"),)),
)), primary=True)

# -- sgl-project/sglang#282: NaN in the sampler's probabilities once flashinfer was upgraded past the pinned release ----

NAN_RECORD = Text("Exception in ModelRpcClient:\n")
NAN_SAMPLE = Run(plain((
    top("sglang/srt/managers/router/model_rpc.py", "exposed_step", "self.forward_step()", 184, env=(("self", "HOP:forward_step"),)),
    frame_at("sglang/srt/managers/router/model_rpc.py", "forward_step", "self.forward_decode_batch(self.running_batch)", 211,
             env=(("self", "NS(forward_decode_batch=_target('f2'), running_batch=None)"),)),
    frame_at("sglang/srt/managers/router/model_rpc.py", "forward_decode_batch", "next_token_ids, _ = batch.sample(logits)", 505,
             env=(("batch", "HOP:sample"), ("logits", "None"))),
    frame_at("sglang/srt/managers/router/infer_batch.py", "sample", "sampled_index = torch.multinomial(probs_sort, num_samples=1)", 476,
             env=(("torch", c_property("multinomial")), ("probs_sort", "None"))),
), torch_error=("RuntimeError", "probability tensor contains either `inf`, `nan` or element < 0")), primary=True)

# -- xorbitsai/inference#1260: Xinference's worker could not load a model; the paste stops at its actor pool's frames --

XINFERENCE_RECORD = Text(
    "2024-04-08 09:13:52,031 xinference.core.worker 50 INFO     Enter launch_builtin_model, args: (<xinference.core.worker."
    "WorkerActor object at 0x7f3b2c1d0e50>,), kwargs: model_uid=baichuan-2-1-0,model_name=baichuan-2,model_size_in_billions=13,"
    "model_format=pytorch,quantization=none,model_engine=vLLM,model_type=LLM,n_gpu=auto\n"
    "2024-04-08 09:14:07,212 xinference.core.worker 50 ERROR    Failed to load model baichuan-2-1-0\n")
XINFERENCE_LOAD = Run(plain((
    top("xinference/core/worker.py", "launch_builtin_model", "await_load(model_ref)", 549,
        env=(("await_load", "NEXT"), ("model_ref", "None"))),
    frame_at("xoscar/backends/context.py", "await_load", "return self._process_result_message(result)", 227,
             env=(("self", "HOP:_process_result_message"), ("result", "None"))),
    frame_at("xoscar/backends/context.py", "_process_result_message", "raise message.as_instanceof_cause()", 102,
             env=(("message", "HOP:as_instanceof_cause"),)),
    failing_at("xoscar/backends/pool.py", "as_instanceof_cause", "raise RuntimeError('the engine failed while loading')\n", 657),
)), primary=True)

# -- vllm-project/vllm#16102: Zamba2 on vLLM; the bundled flash-attention build refuses the model's head dimension ------

FA_HEADDIM = ("RuntimeError", "This flash attention build does not support headdim not being a multiple of 32.")
FA_FORWARD = Run(plain((
    top("vllm/attention/layer.py", "unified_attention_with_output", "self.impl.forward(self, query, key, value)", 374,
        env=(("self", "HOP:forward"), ("query", "None"), ("key", "None"), ("value", "None"))),
    frame_at("vllm/attention/backends/flash_attn.py", "forward", "flash_attn_varlen_func(q=query, k=key, v=value)", 803,
             env=(("flash_attn_varlen_func", "NEXT"), ("query", "None"), ("key", "None"), ("value", "None"))),
    frame_at("vllm/vllm_flash_attn/flash_attn_interface.py", "flash_attn_varlen_func",
             "out, softmax_lse = torch.ops._vllm_fa2_C.varlen_fwd(q, k, v)", 176,
             env=(("torch", f"NS(ops=NS(_vllm_fa2_C={c_attr('varlen_fwd')}))"), ("q", "None"), ("k", "None"), ("v", "None"))),
), torch_error=FA_HEADDIM), primary=True)

# -- vllm-project/vllm#13122: a pre-quantized bitsandbytes 70B checkpoint on eight RTX 4090s, tensor-parallel -------------

BNB_COMMAND = Text(
    "$ vllm serve unsloth/DeepSeek-R1-Distill-Llama-70B-bnb-4bit --quantization bitsandbytes --load-format bitsandbytes "
    "--tensor-parallel-size 8\n"
    "INFO 03-04 10:12:31 [api_server.py:912] vLLM API server version 0.7.3\n")
BNB_LOAD = Run(plain((
    top("vllm/worker/model_runner.py", "load_model", "self.model = get_model(vllm_config=self.vllm_config)", 1113,
        env=(("get_model", "NEXT"), ("self", "NS(vllm_config=None)"))),
    frame_at("vllm/model_executor/model_loader/__init__.py", "get_model", "return loader.load_model(vllm_config=vllm_config)", 14,
             env=(("loader", "HOP:load_model"), ("vllm_config", "None"))),
    frame_at("vllm/model_executor/model_loader/loader.py", "load_model", "self._load_weights(model_config, model)", 1154,
             env=(("self", "HOP:_load_weights"), ("model_config", "None"), ("model", "None"))),
    failing_at("vllm/model_executor/model_loader/loader.py", "_load_weights",
               'raise ValueError("Prequant BitsAndBytes models with tensor parallelism is not supported. "\n'
               '                 "Please try with pipeline parallelism.")\n', 1058),
)), primary=True)



CASES = (
    WildCase(thread="https://github.com/vllm-project/vllm-ascend/issues/2046", kind="dev-cat4-transformers-config-name",
             style="plain", parts=(AIMV2_IMPORT,), engine="vllm", engine_version="0.9.2",
             expect=Expect("dependency-version", "ValueError", "'aimv2' is already used by a Transformers config, pick another name.",
                           frame="register"),
             facts="a doctest importing vLLM (from vllm import LLM) fails in vllm/transformers_utils/configs/ovis.py's "
                   "AutoConfig.register of its AIMv2 config, transformers refusing it with \"'aimv2' is already used by a "
                   "Transformers config, pick another name.\" (also vllm-project/vllm#22178); the shortened frame chain, the "
                   "line numbers other than the two the thread showed and the release (0.9.2, of the thread's date) ours",
             resolution="transformers 4.54 ships aimv2 itself; vLLM 0.10 stopped registering it (nvidia-cosmos/cosmos-rl PR#180 "
                        "moved to it): a newer vLLM, or a transformers older than 4.54.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/sgl-project/sglang/pull/282", kind="dev-cat4-sampling-nan-after-kernel-upgrade",
             style="record", parts=(NAN_RECORD, NAN_SAMPLE),
             expect=Expect("dependency-version", "RuntimeError", "probability tensor contains either `inf`, `nan` or element < 0",
                           frame="sample"),
             facts="SGLang's model RPC loop (model_rpc.py exposed_step -> forward_step -> forward_decode_batch -> infer_batch.py "
                   "sample's torch.multinomial) failing with 'probability tensor contains either `inf`, `nan` or element < 0' once "
                   "flashinfer 0.0.3 was installed, in a loop; the frames and line numbers are the thread's, the single paste ours",
             resolution="flashinfer 0.0.3 against the SGLang of the time gave non-finite logits; fixed in flashinfer's next release "
                        "(0.0.4): the flashinfer release the engine pins.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/xorbitsai/inference/issues/1260", kind="dev-cat4-wrapper-failed-to-load", style="cut",
             parts=(XINFERENCE_RECORD, XINFERENCE_LOAD), engine="vllm",
             expect=Expect("unclassified"),  # the exception line is cut: no exception fields (README); the stage, not a category
             facts="Xinference's worker logging 'Failed to load model baichuan-2-1-0' (xinference.core.worker, ERROR) over its "
                   "launch_builtin_model frame and xoscar's actor-pool re-raise; the paste ends before the engine's exception. "
                   "The launch record (its kwargs in the key=value form of xorbitsai/inference#2334), the frame chain shortened, "
                   "the engine (vLLM), the time stamps and the cut's place ours",
             resolution="Not confirmed in what was read: the worker's record names only the stage; the engine's own error (in the "
                        "model worker's output) says why the model did not load.",
             paste=(cut_before_last_frame, paste.fenced)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/16102", kind="dev-cat4-attention-head-dim", style="docker",
             parts=(FA_FORWARD,), engine="vllm", engine_version="0.8.2", install=DOCKER,
             expect=Expect("feature-conflict", *FA_HEADDIM, frame="flash_attn_varlen_func"),
             facts="Zyphra/Zamba2-7B-Instruct on vLLM: unified_attention_with_output -> FlashAttentionImpl.forward -> "
                   "vllm_flash_attn's flash_attn_varlen_func -> torch.ops._vllm_fa2_C.varlen_fwd raising 'This flash attention "
                   "build does not support headdim not being a multiple of 32.'; the files, functions and line numbers are the "
                   "thread's, the one-line call statements, torch's own _ops.py frame left out, the install place and the "
                   "release (0.8.2, of the thread's date) ours",
             resolution="The model's head dimension is one the flash-attention kernels do not build: another attention backend "
                        "(the maintainer's answer: V0, whose other backends take it), not a flag of the model.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/13122", kind="dev-cat4-bnb-prequant-tensor-parallel",
             style="command", parts=(BNB_COMMAND, BNB_LOAD), engine="vllm", engine_version="0.7.3",
             expect=Expect("parallel-config", "ValueError",
                           "Prequant BitsAndBytes models with tensor parallelism is not supported. Please try with pipeline parallelism.",
                           frame="_load_weights"),
             facts="unsloth/DeepSeek-R1-Distill-Llama-70B-bnb-4bit with --quantization bitsandbytes --load-format bitsandbytes on "
                   "eight RTX 4090s, vLLM 0.7.3, failing with 'Prequant BitsAndBytes models with tensor parallelism is not "
                   "supported. Please try with pipeline parallelism.'; the frames (vLLM 0.7.3's loader), their line numbers, the "
                   "API server line and the tensor-parallel size written as a flag ours",
             resolution="vLLM 0.7.3 loads a pre-quantized bitsandbytes checkpoint only without tensor parallelism: pipeline "
                        "parallelism over the GPUs, as its message says, or another quantized format (the thread's answer: AWQ "
                        "or W4A16)."),
)
