"""Stop 40's advice dev split (branch h-advice6, issue 28): failures whose category was right but whose advice missed.
A GGUF file whose architecture transformers' GGUF support does not read (the advice blamed the engine release); a
compiled attention extension built for another torch, under a launcher that names no engine release (the advice
reinstalled the engine's torch pin, which leaves the extension as it was built); SGLang's KV pool running out while
serving in the wording of 0.5.x without paging (the advice lowered the memory fraction the launch had lowered).

Facts were mined from even-numbered threads (the wordings, the commands, the paste styles, the resolutions); what a
thread did not show is ours, and each `facts` says which.
"""

from __future__ import annotations

from functools import partial

from pattern_fixtures.mirror import failing_at, frame_at, scheduler_entry

from .. import paste
from ..blocks import crash, imports
from ..corpus import Expect, Install, Run, WildCase
from ..vllm_blocks import colour_dropped, uncaught
from .dev_detect import top, with_extra

VLLM = "vllm"

# -- transformers' GGUF support lacking the file's architecture, under vLLM -------------------------------------------

GPT_OSS_GGUF = "GGUF model with architecture gpt-oss is not supported yet."
GPT_OSS_PATH = "/workspace/models/gpt-oss-20b-GGUF/gpt-oss-20b-Q5_K_M.gguf"
CONFIG = "transformers/configuration_utils.py"
GGUF_43366_RUN = Run(uncaught((
    frame_at("vllm/entrypoints/cli/main.py", "main", "args.dispatch_function(args)", 73, env=(("args", "HOP:dispatch_function"),)),
    frame_at("vllm/entrypoints/cli/serve.py", "cmd", "uvloop.run(run_server(args))", 59,
             env=(("uvloop", "NS(run=lambda coroutine: coroutine)"), ("run_server", "NEXT"), ("args", "None"))),
    # run_server, the asyncio frames and the engine arguments' config building between are left out
    frame_at("vllm/transformers_utils/config.py", "get_config", "config_dict, _ = PretrainedConfig.get_config_dict(model, revision=revision, code_revision=code_revision, **kwargs)", 520,
             env=(("PretrainedConfig", "HOP:get_config_dict"), ("model", repr(GPT_OSS_PATH)), ("revision", "None"), ("code_revision", "None"), ("kwargs", "{}"))),
    frame_at(CONFIG, "get_config_dict", "config_dict, kwargs = cls._get_config_dict(pretrained_model_name_or_path, **kwargs)", 662,
             env=(("cls", "HOP:_get_config_dict"), ("pretrained_model_name_or_path", repr(GPT_OSS_PATH)), ("kwargs", "{}"))),
    frame_at(CONFIG, "_get_config_dict", "config_dict = load_gguf_checkpoint(resolved_config_file, return_tensors=False)[\"config\"]", 753,
             env=(("load_gguf_checkpoint", "NEXT"), ("resolved_config_file", repr(GPT_OSS_PATH)))),
    failing_at("transformers/modeling_gguf_pytorch_utils.py", "load_gguf_checkpoint", """
        if architecture not in GGUF_SUPPORTED_ARCHITECTURES and updated_architecture not in GGUF_SUPPORTED_ARCHITECTURES:
            raise ValueError(f"GGUF model with architecture {architecture} is not supported yet.")
        """, 431, env=(("architecture", "'gpt-oss'"), ("updated_architecture", "'gpt-oss'"), ("GGUF_SUPPORTED_ARCHITECTURES", "('llama', 'qwen2')"))),
), "v1", "APIServer", 3341827, "2026-01-20 10:14:03"), primary=True)

# -- flash-attn's extension built for another torch, vLLM started by LlamaFactory ---------------------------------------

SYMINT = "_ZNK3c106SymIntltEl"
FLASH_3648 = f"/usr/local/lib/python3.9/dist-packages/flash_attn_2_cuda.cpython-39-x86_64-linux-gnu.so: undefined symbol: {SYMINT}"
FLASH_3648_RUN = with_extra((
    top("llamafactory/chat/chat_model.py", "__init__", "from llamafactory.chat.vllm_engine import VllmEngine", 52),
    *imports(("llamafactory/chat/vllm_engine.py", "from vllm import AsyncEngineArgs, AsyncLLMEngine, RequestOutput, SamplingParams", 33),
             ("vllm/__init__.py", "from vllm.engine.arg_utils import AsyncEngineArgs, EngineArgs", 3),
             ("vllm/engine/arg_utils.py", "from vllm.config import CacheConfig, DecodingConfig, DeviceConfig", 7),
             ("vllm/config.py", "from vllm.model_executor.layers.quantization import QUANTIZATION_METHODS", 11),
             ("vllm/model_executor/layers/quantization/__init__.py", "from vllm.model_executor.layers.quantization.aqlm import AQLMConfig", 3),
             ("vllm/model_executor/layers/quantization/aqlm.py", "from vllm import _custom_ops as ops", 11),
             ("vllm/_custom_ops.py", "import flash_attn", 9),
             ("flash_attn/__init__.py", "from flash_attn.flash_attn_interface import flash_attn_func", 3),
             ("flash_attn/flash_attn_interface.py", "import flash_attn_2_cuda as flash_attn_cuda", 10)),
), "flash_attn_2_cuda", FLASH_3648)

# -- SGLang's KV pool exhausted while serving, speculative decoding on a lowered memory fraction ------------------------

OOM_SLOTS = "Out of memory. Try to lower your batch size."
SCHEDULER, COMMON = "sglang/srt/managers/scheduler.py", "sglang/srt/mem_cache/common.py"
# sglang 0.5.6: eagle's prepare_for_verify allocating its draft tokens' slots through alloc_token_slots (lines ours)
VERIFY_14942_RUN = Run(crash((
    scheduler_entry("scheduler.event_loop_normal()", 2702, (("scheduler", "HOP:event_loop_normal"),)),
    frame_at(SCHEDULER, "event_loop_normal", "result = self.run_batch(batch)", 993, env=(("self", "HOP:run_batch"), ("batch", "None"))),
    frame_at(SCHEDULER, "run_batch", "batch_result = self.model_worker.forward_batch_generation(batch)", 2050,
             env=(("self", "NS(model_worker=NS(forward_batch_generation=_target('f3')))"), ("batch", "None"))),
    frame_at("sglang/srt/speculative/eagle_worker.py", "forward_batch_generation", "self.verify(batch, spec_info)", 300,
             env=(("self", "HOP:verify"), ("batch", "None"), ("spec_info", "None"))),
    frame_at("sglang/srt/speculative/eagle_worker.py", "verify", "spec_info.prepare_for_verify(batch, self.page_size)", 672,
             env=(("spec_info", "HOP:prepare_for_verify"), ("batch", "None"), ("self", "NS(page_size=1)"))),
    frame_at("sglang/srt/speculative/eagle_info.py", "prepare_for_verify", "batch.out_cache_loc = alloc_token_slots(batch.tree_cache, len(batch.input_ids))", 111,
             env=(("alloc_token_slots", "NEXT"), ("batch", "NS(tree_cache=None, input_ids=[0] * 256)"))),
    failing_at(COMMON, "alloc_token_slots", """
        if out_cache_loc is None:
            error_msg = (
                f"Out of memory. Try to lower your batch size.\\n"
                f"Try to allocate {num_tokens} tokens.\\n"
                f"{available_and_evictable_str(tree_cache)}"
            )
            raise RuntimeError(error_msg)
        """, 222, env=(("out_cache_loc", "None"), ("num_tokens", "256"), ("tree_cache", "None"),
                       ("available_and_evictable_str", "lambda cache: 'Available tokens: 96 (available_size=96 + evictable_size=0)\\n'"))),
), ranks="TP0", stamp="2025-12-12 08:44:01"), primary=True)
LOWERED_FRACTION = ("python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --speculative-algorithm EAGLE "
                    "--speculative-draft-model-path lmsys/sglang-EAGLE-LLaMA3-Instruct-8B --speculative-num-steps 3 "
                    "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4 --mem-fraction-static 0.4 --port 30000")

CASES: tuple[WildCase, ...] = (
    WildCase(thread="https://github.com/huggingface/transformers/issues/43366", kind="gguf-architecture-unknown", style="apiserver-prefix",
             parts=(GGUF_43366_RUN,), engine=VLLM, install=Install("/workspace/venv/lib/python3.11/site-packages"),
             expect=Expect("unsupported-architecture", "ValueError", GPT_OSS_GGUF, frame="load_gguf_checkpoint"),
             facts="vllm serve on a GGUF file of gpt-oss-20b (Q5_K_M), transformers 4.57.5, the ValueError naming architecture gpt-oss "
                   "raised by transformers' load_gguf_checkpoint, the (APIServer pid=N) prefix; the frames between vLLM's CLI and "
                   "transformers, their lines and the paths are ours",
             resolution="transformers' GGUF support lacked the gpt-oss architecture; a transformers pull request that adds it (PR#45506, "
                        "merged) closed the issue: a transformers release that reads it, or the original checkpoint, not another vLLM.",
             paste=(colour_dropped, partial(paste.prose, before=f"$ vllm serve {GPT_OSS_PATH}"))),
    WildCase(thread="https://github.com/hiyouga/LlamaFactory/issues/3648", kind="flash-attn-torch-abi", style="launcher-cli",
             parts=(FLASH_3648_RUN,), engine=VLLM, install=Install("/usr/local/lib/python3.9/dist-packages"),
             expect=Expect("dependency-version", "ImportError", FLASH_3648),
             facts="llamafactory-cli api with a vLLM inference config on two GPUs, the ImportError of flash_attn_2_cuda (python3.9, "
                   "dist-packages) lacking _ZNK3c106SymIntltEl; no release of vLLM named; the import chain from LlamaFactory's vLLM "
                   "engine through vLLM to flash-attn and its lines are ours",
             resolution="Uninstalling flash-attn (the maintainer's answer): the extension was built for another torch than the one "
                        "installed; removing it, or reinstalling it built for that torch, lets vLLM start.",
             paste=(partial(paste.prose, before="CUDA_VISIBLE_DEVICES=0,1 API_PORT=8000 llamafactory-cli api examples/inference/llama3_vllm.yaml"),)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/14942", kind="serving-kv-pool-exhausted", style="lowered-fraction",
             parts=(VERIFY_14942_RUN,),
             expect=Expect("serving-memory", "RuntimeError", f"{OOM_SLOTS}\nTry to allocate 256 tokens.\nAvailable tokens: 96 "
                           "(available_size=96 + evictable_size=0)", frame="alloc_token_slots"),
             facts="EAGLE speculative decoding under load, the scheduler's event_loop_normal -> run_batch -> eagle_worker "
                   "forward_batch_generation -> verify -> eagle_info prepare_for_verify -> alloc_token_slots frames and their lines "
                   "300, 672, 111, 993, 2050; the release is not named; the lowered "
                   "--mem-fraction-static of the command and the token counts are ours",
             resolution="A retraction path that did not leave room for the draft tokens of speculative decoding (fixed in the "
                        "release after); fewer requests at once, and a memory fraction raised back rather than lowered, leave the "
                        "pool the headroom until then.",
             fixed_in="",
             paste=(partial(paste.prose, before=f"$ {LOWERED_FRACTION}"),)),
)
