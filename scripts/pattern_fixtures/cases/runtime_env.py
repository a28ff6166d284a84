"""The serving environment failing (issue 11): memory exhausted while serving, host memory, NCCL's own
wording, installs that do not match (sgl-kernel ABI, CUDA libraries, flashinfer, removed vLLM modules,
transformers), checkpoints the engine cannot load, features that cannot run together.

Patterns: sglang-serving-out-of-memory, common-host-out-of-memory, common-pynccl-error,
sglang-nccl-watchdog-timeout (a wrapped abort), sglang-sgl-kernel-abi, sglang-sgl-kernel-cuda-driver,
common-cuda-library-missing, sglang-sgl-kernel-load-failure, sglang-sgl-kernel-import-error,
sglang-vllm-module-removed, sglang-transformers-mismatch, sglang-transformers-rope-config,
common-transformers-unknown-model-type, sglang-model-import-failed, sglang-unsupported-architecture (the
0.3 wording), sglang-deepseek-ocr-lm-head, sglang-gemma-lm-head, sglang-weight-key-lm-head (near misses),
sglang-spec-decode-grammar, sglang-lora-cuda-graph-radix, sglang-lora-config (a near miss),
sglang-multi-layer-eagle-draft-tokens, sglang-flashinfer-version and sglang-sgl-kernel-version (the
package names they did not cover).
"""

from __future__ import annotations

from dataclasses import replace

from ..engine import Case, Frame
from ..mirror import (
    DECODE,
    ILLEGAL_ACCESS,
    LOAD_BEGIN,
    LOGITS_ALLOC,
    MODEL_RUNNER,
    QWEN2,
    QWEN_FORWARD,
    READY,
    SCHEDULE_BATCH,
    SCHEDULER,
    SCHEDULER_TOP,
    SERVER_ARGS,
    alloc_req_slots,
    attention_kernel_crash,
    failing_at,
    forward_frames,
    frame_at,
    from_launch_server,
    hybrid_prefill_oom,
    kv_alloc_frames,
    launch_crash,
    oom,
    paged_decode_oom,
    pynccl_init_rank,
    scheduler_crash,
    scheduler_entry,
    sgl_kernel_common_ops,
    to_load_model,
    to_model_runner,
    weight_key_error,
)
from .arguments import SPEC_TOPK_PAGE, lora_error, server_args_error
from .dependencies import (
    FLASHINFER_CHECK,
    PRETRAINED_CONFIG,
    SGL_KERNEL_CHECK,
    launch_import,
    too_old,
)
from .memory import cpu_oom, weight_copy
from .model_config import CONFIG_NOT_FOUND, TO_HF_CONFIG
from .nccl import COMMUNICATOR, TO_COMMUNICATOR, nccl_error
from .weights import UNSUPPORTED, to_model_registry


def c_raise(exception: str) -> str:
    """An env expression: a callable that raises `exception` (Python source) from C, adding no frame."""
    return f"__import__('_lsfx').c_raiser({exception})"


# -- serving: the request-slot and KV pools running out ----------------------------------------------------

OVERLAP_LOOP = (("scheduler", "HOP:event_loop_overlap"),)


def serving(*below: Frame, run_line: int = 3163, loop_line: int = 1102) -> tuple[Frame, ...]:
    """run_scheduler_process -> event_loop_overlap -> get_next_batch_to_run -> `below`."""
    return (
        scheduler_entry("scheduler.event_loop_overlap()", run_line, OVERLAP_LOOP),
        frame_at(SCHEDULER, "event_loop_overlap", "batch = self.get_next_batch_to_run()", loop_line),
        *below,
    )


REQ_SLOTS = serving(
    frame_at(SCHEDULER, "get_next_batch_to_run", "new_batch = self.get_new_batch_prefill()", 1890),
    frame_at(SCHEDULER, "get_new_batch_prefill", "new_batch.prepare_for_extend()", 2105),
    frame_at(SCHEDULE_BATCH, "prepare_for_extend", "req_pool_indices = self.alloc_req_slots(bs, self.reqs)", 1240),
    alloc_req_slots(1120, available=0, num_reqs=3),
)
DECODE_PAGED = serving(
    frame_at(SCHEDULER, "get_next_batch_to_run", "self.running_batch = self.update_running_batch(self.running_batch)", 1490),
    frame_at(SCHEDULER, "update_running_batch", "batch.prepare_for_decode()", 1602),
    frame_at(SCHEDULE_BATCH, "prepare_for_decode", "self.out_cache_loc = self.alloc_paged_token_slots_decode(self.seq_lens, last_loc)", 1410),
    paged_decode_oom(902, wanted=212, available=128, evictable=0),
    run_line=2563, loop_line=790,
)
PREFILL_HYBRID = serving(
    frame_at(SCHEDULER, "get_next_batch_to_run", "new_batch = self.get_new_batch_prefill()", 2305),
    frame_at(SCHEDULER, "get_new_batch_prefill", "new_batch.prepare_for_extend()", 2610),
    frame_at(SCHEDULE_BATCH, "prepare_for_extend", "out_cache_loc, req_pool_indices_tensor, req_pool_indices = alloc_for_extend(self)", 1530),
    frame_at("sglang/srt/mem_cache/common.py", "alloc_for_extend", "out_cache_loc = alloc_paged_token_slots_extend(tree_cache=batch.tree_cache, prefix_lens=prefix_lens, seq_lens=seq_lens, last_loc=last_loc, extend_num_tokens=batch.extend_num_tokens)", 380),
    hybrid_prefill_oom(318, wanted=8192, full=(2011, 1024), mamba=(0, 0)),
    run_line=3412, loop_line=1390,
)
# retracting requests to make room for decoding, down to the last one, which still does not fit
RETRACT_LAST = serving(
    frame_at(SCHEDULER, "get_next_batch_to_run", "self.running_batch = self.update_running_batch(self.running_batch)", 1490),
    frame_at(SCHEDULER, "update_running_batch", "retracted_reqs, new_token_ratio = batch.retract_decode(self.server_args)", 1585),
    failing_at(SCHEDULE_BATCH, "retract_decode", """
        if len(sorted_indices) == 1:
            assert (
                self.token_to_kv_pool_allocator.available_size() > 0
            ), "No space left for only one request"
        """, 1362, env=(("sorted_indices", "[0]"), ("self", "NS(token_to_kv_pool_allocator=NS(available_size=lambda: 0))")), marker="assert"),
    run_line=2563, loop_line=790,
)
# 0.5.9's wording of the same end (sglang/srt/managers/schedule_batch.py ScheduleBatch.retract_decode, line 1887): the
# last request left still does not fit the KV pool; later releases abort that request instead of raising.
RETRACT_LAST_059 = serving(
    frame_at(SCHEDULER, "get_next_batch_to_run", "self.running_batch = self.update_running_batch(self.running_batch)", 1900),
    frame_at(SCHEDULER, "update_running_batch", "retracted_reqs, new_token_ratio, reqs_to_abort = batch.retract_decode(self.server_args)", 2100),
    failing_at(SCHEDULE_BATCH, "retract_decode", """
        if len(sorted_indices) <= 1 and not self.check_decode_mem(selected_indices=sorted_indices):
            raise ValueError(
                "Out of memory even after retracting all other requests in the decode batch."
            )
        """, 1887, env=(("sorted_indices", "[0]"), ("self", "NS(check_decode_mem=lambda selected_indices: False)"))),
)
# 0.5.4 and later without paging (--page-size 1): sglang/srt/mem_cache/common.py alloc_token_slots says only "Out of
# memory", neither prefill nor decode (0.5.9 lines 201-229, called by alloc_for_decode at 437; the batch's
# prepare_for_decode at schedule_batch.py 1993, update_running_batch at scheduler.py 2266).
DECODE_TOKEN_SLOTS_059 = serving(
    frame_at(SCHEDULER, "get_next_batch_to_run", "self.running_batch = self.update_running_batch(self.running_batch)", 1941),
    frame_at(SCHEDULER, "update_running_batch", "batch.prepare_for_decode()", 2266),
    frame_at(SCHEDULE_BATCH, "prepare_for_decode", "self.out_cache_loc = alloc_for_decode(self, token_per_req=1)", 1993),
    frame_at("sglang/srt/mem_cache/common.py", "alloc_for_decode", "out_cache_loc = alloc_token_slots(batch.tree_cache, bs * token_per_req)", 437,
             env=(("alloc_token_slots", "NEXT"), ("batch", "NS(tree_cache=None)"), ("bs", "96"), ("token_per_req", "1"))),
    failing_at("sglang/srt/mem_cache/common.py", "alloc_token_slots", """
        out_cache_loc = allocator.alloc(num_tokens)

        if out_cache_loc is None:
            error_msg = (
                f"Out of memory. Try to lower your batch size.\\n"
                f"Try to allocate {num_tokens} tokens.\\n"
                f"{available_and_evictable_str(tree_cache)}"
            )
            raise RuntimeError(error_msg)
        """, 224, env=(("allocator", "NS(alloc=lambda n: None)"), ("num_tokens", "96"), ("tree_cache", "None"),
                       ("available_and_evictable_str", "lambda cache: "
                        "'Available tokens: 40 (available_size=40 + evictable_size=0)\\n'"))),
    run_line=3169, loop_line=1154,
)
RETRACT_NOTICE = "KV cache pool is full. Retract requests. #retracted_reqs: 3, #new_token_ratio: 0.4000 -> 0.6571"
CUDA_OOM_SERVING = scheduler_crash("sglang-gpu-oom-forward", "x", (*forward_frames("0.5.9"), QWEN_FORWARD, LOGITS_ALLOC), before=(READY, DECODE),
                                   torch_error=oom("4.64 GiB", free="3.98 GiB"))

SERVING_CASES = (
    scheduler_crash("sglang-serving-out-of-memory", "positive-0.5.9-req-slots", REQ_SLOTS, before=(READY, DECODE)),
    scheduler_crash("sglang-serving-out-of-memory", "positive-decode-paged", DECODE_PAGED, ranks="TP3", before=(READY, DECODE)),
    scheduler_crash("sglang-serving-out-of-memory", "positive-prefill-hybrid", PREFILL_HYBRID, before=(READY, DECODE)),
    scheduler_crash("sglang-serving-out-of-memory", "positive-retract-last-request", RETRACT_LAST, before=(READY, DECODE)),
    scheduler_crash("sglang-serving-out-of-memory", "positive-0.5.9-retract-decode", RETRACT_LAST_059, before=(READY, DECODE, RETRACT_NOTICE)),
    scheduler_crash("sglang-serving-out-of-memory", "positive-0.5.9-decode-token-slots", DECODE_TOKEN_SLOTS_059, before=(READY, DECODE)),
    CUDA_OOM_SERVING.named("sglang-serving-out-of-memory", "negative-cuda-oom-forward"),
    Case("sglang-serving-out-of-memory", "negative-retract-notice", (), mode="lines", before=(DECODE, RETRACT_NOTICE, DECODE)),
)

# -- host memory ------------------------------------------------------------------------------------------------

PROCESS = "stdlib:multiprocessing/process.py"
ENOMEM = c_raise("OSError(12, 'Cannot allocate memory')")
# a scheduler process dying before run_scheduler_process's own try: multiprocessing's _bootstrap prints
# "Process <name>:" and the traceback
ENOMEM_SCHEDULER = (
    failing_at(PROCESS, "_bootstrap", """
        try:
            self.run()
        except BaseException:
            sys.stderr.write(f"Process {name}:\\n")
            traceback.print_exc()
        """, 314, env=(("self", "HOP:run"), ("name", "'Process-3'"), ("traceback", "__import__('traceback')")), marker="self.run()"),
    frame_at(PROCESS, "run", "self._target(*self._args, **self._kwargs)", 108),
    failing_at(SCHEDULER, "run_scheduler_process", """
        setproctitle.setproctitle(f"sglang::scheduler{prefix.replace(' ', '_')}")
        faulthandler.enable()
        """, 2238, env=(("setproctitle", "NS(setproctitle=lambda title: None)"), ("prefix", "' TP2'"), ("faulthandler", f"NS(enable={ENOMEM})")),
        marker="faulthandler"),
)

HOST_CASES = (
    Case("common-host-out-of-memory", "positive-0.4.6-scheduler-enomem", ENOMEM_SCHEDULER, mode="plain", ranks=""),
    scheduler_crash("common-host-out-of-memory", "positive-0.5.9-cpu-allocator", weight_copy("0.5.9"), before=(LOAD_BEGIN,), torch_error=cpu_oom(7516192768)),
    scheduler_crash("common-host-out-of-memory", "negative-cuda-oom", kv_alloc_frames("0.5.9"), before=(LOAD_BEGIN,), torch_error=oom("1.75 GiB")),
)

# -- NCCL: pynccl's own wording, and a watchdog abort a terminal wrapped ----------------------------------------

PYNCCL_INIT = (
    *TO_COMMUNICATOR[:-1],
    frame_at("sglang/srt/distributed/device_communicators/pynccl.py", "__init__",
             "self.comm: ncclComm_t = self.nccl.ncclCommInitRank(self.world_size, self.unique_id, self.rank)", 108,
             env=(("self", "HOP:ncclCommInitRank"),)),
)
WATCHDOG_WHAT = (
    "[PG ID 2 PG GUID 3 Rank 2] Process group watchdog thread terminated with exception: [Rank 2] Watchdog caught "
    "collective operation timeout: WorkNCCL(SeqNum=77113, OpType=ALLREDUCE, NumelIn=14680064, NumelOut=14680064, "
    "Timeout(ms)=600000) ran for 600031 milliseconds before timing out."
)
WATCHDOG_WHAT_LINE = f"  what():  {WATCHDOG_WHAT}"
WATCHDOG_ABORT = (
    "terminate called after throwing an instance of 'c10::DistBackendError'",
    # the what() line as a terminal wrapped it, before "collective"
    WATCHDOG_WHAT_LINE[:WATCHDOG_WHAT_LINE.index("collective")],
    WATCHDOG_WHAT_LINE[WATCHDOG_WHAT_LINE.index("collective"):],
    "Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:618 (most recent call first):",
    "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 (0x7f3c2a5b9446 in /opt/venv/lib/python3.11/site-packages/torch/lib/libc10.so)",
    "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x282 (0x7f3bd8e2e772 in /opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so)",
)

NCCL_CASES = (
    scheduler_crash("common-pynccl-error", "positive-0.5.9-init-system-error", (*PYNCCL_INIT, *pynccl_init_rank(350, 329, result=2)), ranks="TP1",
                    before=("Init torch distributed begin.",)),
    scheduler_crash("common-pynccl-error", "positive-0.5.9-init-cuda-error", (*PYNCCL_INIT, *pynccl_init_rank(350, 329, result=1)), ranks="TP1"),
    scheduler_crash("common-pynccl-error", "negative-torch-nccl-error", COMMUNICATOR, ranks="TP1", torch_error=nccl_error("system")),
    Case("sglang-nccl-watchdog-timeout", "positive-abort-wrapped", (), mode="lines", ranks="TP2", before=(DECODE,), raw_after=WATCHDOG_ABORT),
)

# -- the install: sgl-kernel's compiled ops, CUDA libraries, packages that do not match ---------------------------

SITE = "/opt/venv/lib/python3.11/site-packages"
FP8_KERNEL_IMPORT = launch_import("sglang/srt/layers/quantization/fp8_kernel.py", "from sgl_kernel import sgl_per_token_group_quant_fp8")


def sgl_kernel_fails(message: str) -> tuple[Frame, ...]:
    """SGLang importing sgl_kernel, whose `from sgl_kernel import common_ops` fails to load the compiled
    library with ImportError(`message`), as the dynamic loader words it."""
    return (*FP8_KERNEL_IMPORT, replace(sgl_kernel_common_ops(13), env=(("__getattr__", c_raise(f"ImportError({message!r})")),)))


PACKAGE_NOT_FOUND = "__import__('importlib.metadata', fromlist=['x']).PackageNotFoundError"


def not_installed(check: Frame, package: str) -> tuple[Frame, ...]:
    """The launch's package-version `check` finding no distribution named `package` (importlib.metadata
    raises PackageNotFoundError, from C here so no wiring frame shows)."""
    *chain, assert_pkg_version = too_old(check, "None", PACKAGE_NOT_FOUND)
    env = tuple((name, c_raise(f"{PACKAGE_NOT_FOUND}({package!r})") if name == "version" else value) for name, value in assert_pkg_version.env)
    return (*chain, replace(assert_pkg_version, env=env))


# SGLang 0.4.2 checked the distribution under flashinfer's old name
OLD_FLASHINFER_CHECK = replace(FLASHINFER_CHECK, body=FLASHINFER_CHECK.body.replace('"flashinfer_python"', '"flashinfer"').replace('"0.6.3"', '"0.1.6"'))
SGL_KERNEL_IMPORT = (*launch_import("sglang/srt/managers/schedule_batch.py", "import sgl_kernel"),)


def sgl_kernel_load_failure(variant: str, capability: int, inner: str) -> tuple[Frame, ...]:
    """sgl-kernel's loader (late 2025) finding no common_ops it can load: `variant` is the build directory
    it tried for this compute capability, `inner` the error of that attempt ("" when it found no file)."""
    found = f"['{SITE}/sgl_kernel/{variant}/common_ops.abi3.so']" if inner else "[]"
    message = (
        "\n[sgl_kernel] CRITICAL: Could not load any common_ops library!\n"
        "Attempted locations:\n"
        f"1. Architecture-specific pattern: {SITE}/sgl_kernel/{variant}/common_ops.* - found files: {found}\n"
        f"2. Fallback pattern: {SITE}/sgl_kernel/common_ops.* - found files: []\n"
        "3. Standard Python import: common_ops - failed\n"
        "GPU Info:\n"
        f"- Compute capability: {capability}\n"
        f"- Expected variant: SM{capability} (precise math for compatibility)\n"
        "Please ensure sgl_kernel is properly installed with:\n"
        "pip install --upgrade sgl_kernel\n"
        "Error details from previous import attempts:\n"
        + (f"- ImportError: {inner}\n" if inner else "")
        + "- ModuleNotFoundError: No module named 'common_ops'"
    )
    return (
        *SGL_KERNEL_IMPORT,
        Frame("sgl_kernel/__init__.py", "<module>", "common_ops = _load_architecture_specific_ops()", env=(("_load_architecture_specific_ops", "NEXT"),), lineno=17),
        failing_at("sgl_kernel/load_utils.py", "_load_architecture_specific_ops", """
            if loaded is None:
                raise ImportError(error_msg)
            """, 188, env=(("loaded", "None"), ("error_msg", repr(message)))),
    )


TORCH_ABI = f"{SITE}/sgl_kernel/common_ops.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEa"
TORCH_ABI_CASE = launch_crash("sglang-sgl-kernel-abi", "positive-0.5.9-torch-abi", sgl_kernel_fails(TORCH_ABI))
GREEN_CONTEXT = f"{SITE}/sgl_kernel/common_ops.abi3.so: undefined symbol: cuGreenCtxDestroy"
GREEN_CONTEXT_CASE = launch_crash("sglang-sgl-kernel-cuda-driver", "positive-0.4.10.post2-green-context", sgl_kernel_fails(GREEN_CONTEXT))
CRITICAL_ABI = launch_crash("sglang-sgl-kernel-abi", "positive-loader-critical", sgl_kernel_load_failure(
    "sm90", 90, f"{SITE}/sgl_kernel/sm90/common_ops.abi3.so: undefined symbol: _ZNK3c106SymInt6sym_neERKS0_"))
CRITICAL_NO_BUILD = launch_crash("sglang-sgl-kernel-load-failure", "positive-loader-no-build", sgl_kernel_load_failure("sm75", 75, ""))
NVRTC = "libnvrtc.so.12: cannot open shared object file: No such file or directory"
NVRTC_CASE = launch_crash("common-cuda-library-missing", "positive-0.5.9-libnvrtc", sgl_kernel_fails(NVRTC))
# a library that is not CUDA's: OpenCV without libGL
LIBGL = (*launch_import("sglang/srt/utils/common.py", "import cv2"),
         Frame("cv2/__init__.py", "<module>", "from cv2 import cv2", env=(("__getattr__", c_raise("ImportError('libGL.so.1: cannot open shared object file: No such file or directory')")),)))
SGL_KERNEL_STUB = (("sgl_kernel/__init__.py", "def moe_align_block_size(*args):\n    pass\n"),)
MARLIN_IMPORT = launch_import("sglang/srt/layers/moe/fused_moe_triton/fused_marlin_moe.py", "from sgl_kernel import fused_marlin_moe")
VLLM_STUB = (("vllm/__init__.py", ""), ("vllm/model_executor/__init__.py", ""), ("vllm/model_executor/layers/__init__.py", ""),
             ("vllm/model_executor/layers/quantization/__init__.py", ""),
             ("vllm/model_executor/model_loader/__init__.py", "def get_model(*args):\n    pass\n"))

INSTALL_CASES = (
    TORCH_ABI_CASE,
    CRITICAL_ABI,
    GREEN_CONTEXT_CASE.named("sglang-sgl-kernel-abi", "negative-driver-symbol"),

    GREEN_CONTEXT_CASE,
    launch_crash("sglang-sgl-kernel-cuda-driver", "positive-0.5.9-green-stream", sgl_kernel_fails(f"{SITE}/sgl_kernel/common_ops.abi3.so: undefined symbol: cuGreenCtxStreamCreate")),
    TORCH_ABI_CASE.named("sglang-sgl-kernel-cuda-driver", "negative-torch-abi"),

    NVRTC_CASE,
    launch_crash("common-cuda-library-missing", "positive-0.4.10.post2-libcuda", sgl_kernel_fails("libcuda.so.1: cannot open shared object file: No such file or directory")),
    launch_crash("common-cuda-library-missing", "negative-libgl", LIBGL),

    CRITICAL_NO_BUILD,
    CRITICAL_ABI.named("sglang-sgl-kernel-load-failure", "negative-loader-undefined-symbol"),
    TORCH_ABI_CASE.named("sglang-sgl-kernel-load-failure", "negative-undefined-symbol"),

    launch_crash("sglang-sgl-kernel-import-error", "positive-0.4.10.post2-import-name", MARLIN_IMPORT, extra_modules=SGL_KERNEL_STUB),
    launch_crash("sglang-sgl-kernel-import-error", "positive-0.5.9-not-installed", launch_import("sglang/srt/layers/activation.py", "from sgl_kernel import silu_and_mul")),
    NVRTC_CASE.named("sglang-sgl-kernel-import-error", "negative-libnvrtc"),

    launch_crash("sglang-vllm-module-removed", "positive-0.4-module", launch_import(
        "sglang/srt/layers/quantization/__init__.py", "from vllm.model_executor.layers.quantization.aqlm import AQLMConfig"), extra_modules=VLLM_STUB),
    launch_crash("sglang-vllm-module-removed", "positive-0.1-import-name", launch_import(
        "sglang/srt/model_executor/model_runner.py", "from vllm.model_executor.model_loader import _set_default_torch_dtype"), extra_modules=VLLM_STUB),
    launch_crash("sglang-vllm-module-removed", "negative-vllm-not-installed", launch_import(
        "sglang/srt/layers/quantization/__init__.py", "from vllm.model_executor.layers.quantization.aqlm import AQLMConfig")),

    launch_crash("sglang-flashinfer-version", "positive-0.4.2-old-distribution-name",
                 not_installed(OLD_FLASHINFER_CHECK, "flashinfer"),
                 before=("server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', attention_backend='flashinfer')",)),
    launch_crash("sglang-sgl-kernel-version", "positive-0.5.9-not-installed", not_installed(SGL_KERNEL_CHECK, "sgl-kernel")),
    launch_crash("sglang-sgl-kernel-version", "positive-sglang-kernel-name",
                 too_old(replace(SGL_KERNEL_CHECK, body=SGL_KERNEL_CHECK.body.replace("sgl-kernel", "sglang-kernel").replace('"0.3.21"', '"0.4.7"')), "'0.4.6'")),
)

# -- transformers that does not match ------------------------------------------------------------------------------

AUTO = "transformers/models/auto"
CONFIGS = "sglang/srt/configs"
# SGLang's Qwen2.5-VL config registering its image processor with transformers 4.49, which has its own
REGISTRATION = (
    *launch_import("sglang/srt/utils/hf_transformers_utils.py", "from sglang.srt.configs.qwen2_5_vl_config import Qwen2_5_VLConfig"),
    Frame(f"{CONFIGS}/qwen2_5_vl_config.py", "<module>", body="""
        class Qwen2_5_VLConfig:
            model_type = "qwen2_5_vl"

        AutoImageProcessor.register(Qwen2_5_VLConfig, None, Qwen2_5_VLImageProcessor, None)
        """, env=(("AutoImageProcessor", "HOP:register"), ("Qwen2_5_VLImageProcessor", "None")), lineno=1000),
    frame_at(f"{AUTO}/image_processing_auto.py", "register",
             "IMAGE_PROCESSOR_MAPPING.register(config_class, (slow_image_processor_class, fast_image_processor_class), exist_ok=exist_ok)", 636,
             env=(("config_class", "_args[0]"), ("exist_ok", "False"))),
    failing_at(f"{AUTO}/auto_factory.py", "register", """
        if hasattr(key, "__name__") and key.__name__ in self._reverse_config_mapping:
            model_type = self._reverse_config_mapping[key.__name__]
            if model_type in self._model_mapping.keys() and not exist_ok:
                raise ValueError(f"'{key}' is already used by a Transformers model.")
        """, 833, env=(("key", "_args[0]"), ("exist_ok", "False"),
                       ("self", "NS(_reverse_config_mapping={'Qwen2_5_VLConfig': 'qwen2_5_vl'}, _model_mapping={'qwen2_5_vl': 'Qwen2VLImageProcessor'})"))),
)
# transformers 5 dropped AutoImageProcessor.register's `image_processor_class`, so SGLang's four positional
# arguments reach `exist_ok`
IMAGE_PROCESSOR_AUTO = (f"{AUTO}/image_processing_auto.py", """
class AutoImageProcessor:
    @staticmethod
    def register(config_class, slow_image_processor_class=None, fast_image_processor_class=None, exist_ok=False):
        pass
""")
EXIST_OK = (
    *launch_import("sglang/srt/utils/hf_transformers_utils.py", "from sglang.srt.configs.janus_pro import MultiModalityConfig"),
    Frame(f"{CONFIGS}/janus_pro.py", "<module>", "register_image_processor(MultiModalityConfig, VLMImageProcessor)", lineno=632),
    frame_at(f"{CONFIGS}/utils.py", "register_image_processor", "AutoImageProcessor.register(config, None, image_processor, None, exist_ok=True)", 18,
             env=(("AutoImageProcessor", "__import__('transformers.models.auto.image_processing_auto', fromlist=['x']).AutoImageProcessor"),)),
)
TRANSFORMERS_PACKAGES = (("transformers/__init__.py", ""), ("transformers/models/__init__.py", ""), (f"{AUTO}/__init__.py", ""))
QWEN3 = "sglang/srt/models/qwen3.py"


def qwen3_layer(statement: str, config: str) -> tuple[Frame, ...]:
    """The loader building Qwen3 (0.5.23) down to a decoder layer running `statement` on `config`."""
    return (
        *to_load_model("0.5.23"),
        frame_at("sglang/srt/model_loader/loader.py", "load_model", "model = _initialize_model(model_config, self.load_config)", 1017),
        frame_at("sglang/srt/model_loader/loader.py", "_initialize_model", "return model_class(config=hf_config, quant_config=quant_config, prefix=prefix)", 260,
                 env=(("model_class", "NEXT"),)),
        frame_at(QWEN3, "__init__", "self.model = Qwen3Model(config, quant_config=quant_config, prefix=add_prefix('model', prefix))", 452),
        frame_at(QWEN2, "__init__", "layer = decoder_layer_type(layer_id=0, config=config, quant_config=quant_config, prefix=prefix)", 312,
                 env=(("decoder_layer_type", "NEXT"),)),
        frame_at(QWEN3, "__init__", statement, 221, env=(("config", config),)),
    )


ROPE_PARAMETERS = "NS(rope_parameters={'rope_type': 'yarn', 'factor': 4.0, 'original_max_position_embeddings': 32768})"
CONFIGURATION_AUTO = f"{AUTO}/configuration_auto.py"
TO_AUTO_CONFIG = TO_HF_CONFIG[:-2]  # down to get_config calling AutoConfig.from_pretrained
# transformers up to 4.x: CONFIG_MAPPING[model_type] raising KeyError; the lookup calls the next frame (index)
UNKNOWN_MODEL_TYPE = (
    *TO_AUTO_CONFIG,
    frame_at(CONFIGURATION_AUTO, "from_pretrained", 'config_class = CONFIG_MAPPING[config_dict["model_type"]]', 1115,
             env=(("CONFIG_MAPPING", f"type('_LazyConfigMapping', (), {{'__getitem__': lambda self, key: _target('f{len(TO_AUTO_CONFIG) + 1}')(key)}})()"),
                  ("config_dict", "{'model_type': 'llava_qwen'}"))),
    failing_at(CONFIGURATION_AUTO, "__getitem__", """
        if key not in self._mapping:
            raise KeyError(key)
        """, 790, env=(("key", "_args[0]"), ("self", "NS(_mapping={'llama': None, 'qwen2': None})"))),
)
# newer transformers: the same lookup, re-raised as a ValueError that names the model type
UNRECOGNIZED_MODEL_TYPE = (
    *TO_AUTO_CONFIG,
    failing_at(CONFIGURATION_AUTO, "from_pretrained", """
        try:
            config_class = CONFIG_MAPPING[config_dict["model_type"]]
        except KeyError:
            raise ValueError(
                f"The checkpoint you are trying to load has model type `{config_dict['model_type']}` "
                "but Transformers does not recognize this architecture. This could be because of an "
                "issue with the checkpoint, or because your version of Transformers is out of date."
            )
        """, 1348, env=(("CONFIG_MAPPING", "{'llama': None}"), ("config_dict", "{'model_type': 'ministral3'}")), marker="raise"),
)



def key_error_line(key: str) -> Case:
    """Only the final line of a KeyError for `key`, as pasted alone (CPython formats it)."""
    return Case("", "", (failing_at(CONFIGURATION_AUTO, "from_pretrained", """
        try:
            config_class = CONFIG_MAPPING[model_type]
        except KeyError as error:
            print("".join(traceback.format_exception_only(error)), end="")
        """, 1115, env=(("CONFIG_MAPPING", "{}"), ("model_type", repr(key)), ("traceback", "__import__('traceback')")), marker="config_class"),),
        mode="plain", ranks="")


TRANSFORMERS_CASES = (
    launch_crash("sglang-transformers-mismatch", "positive-0.4.3-registration", REGISTRATION, extra_modules=TRANSFORMERS_PACKAGES),
    launch_crash("sglang-transformers-mismatch", "positive-0.5.8-exist-ok", EXIST_OK, extra_modules=(*TRANSFORMERS_PACKAGES, IMAGE_PROCESSOR_AUTO)),
    PRETRAINED_CONFIG.named("sglang-transformers-mismatch", "negative-import-name"),

    scheduler_crash("sglang-transformers-rope-config", "positive-0.5.23-rope-parameters",
                    qwen3_layer('rope_theta = config.rope_parameters["rope_theta"]', ROPE_PARAMETERS), before=(LOAD_BEGIN,)),
    scheduler_crash("sglang-transformers-rope-config", "positive-0.5.23-attribute",
                    qwen3_layer("rope_theta = config.rope_theta", "type('Qwen3Config', (), {})()"), before=(LOAD_BEGIN,)),
    scheduler_crash("sglang-transformers-rope-config", "negative-weight-key", weight_key_error(QWEN2, "model.layers.0.self_attn.rotary_emb.inv_freq"), before=(LOAD_BEGIN,)),

    launch_crash("common-transformers-unknown-model-type", "positive-0.5.9-keyerror", UNKNOWN_MODEL_TYPE),
    launch_crash("common-transformers-unknown-model-type", "positive-0.5.9-unrecognized", UNRECOGNIZED_MODEL_TYPE),
    launch_crash("common-transformers-unknown-model-type", "negative-model-path", (*TO_HF_CONFIG, CONFIG_NOT_FOUND)),
    key_error_line("qwen3_5_moe").named("common-transformers-unknown-model-type", "positive-exception-line-only"),
    key_error_line("flashinfer_mla").named("common-transformers-unknown-model-type", "negative-exception-line-other-key"),
)

# -- loading the model: architectures and weights -------------------------------------------------------------------

IMPORT_ERROR_LINE = "Ignore import error when loading sglang.srt.models.glm4v_moe. No module named 'transformers.models.glm4v_moe'"
UNSUPPORTED_CASE = scheduler_crash("sglang-unsupported-architecture", "x", (*to_model_registry("0.5.9"), UNSUPPORTED), before=(LOAD_BEGIN,))
IMPORT_FAILED_CASE = scheduler_crash("sglang-model-import-failed", "positive-0.5.9", (*to_model_registry("0.5.9"), UNSUPPORTED),
                                     before=(IMPORT_ERROR_LINE, LOAD_BEGIN))
# SGLang 0.3: the model class looked up by architecture name in sglang's own table
UNSUPPORTED_0_3 = (
    *to_model_runner("0.4.10.post2"),
    frame_at(MODEL_RUNNER, "initialize", "self.load_model()", 157),
    frame_at(MODEL_RUNNER, "load_model", "self.model = get_model(model_config=self.vllm_model_config, load_config=self.load_config, device_config=self.device_config)", 242),
    frame_at("vllm/model_executor/model_loader/loader.py", "_initialize_model", "model_class = get_model_architecture(model_config)[0]", 153,
             env=(("get_model_architecture", "NEXT"),)),
    frame_at("vllm/model_executor/model_loader/utils.py", "get_model_architecture", "return ModelRegistry.load_model_cls(architectures[0])", 35,
             env=(("ModelRegistry", "HOP:load_model_cls"), ("architectures", "['ChatGLMForConditionalGeneration']"))),
    failing_at(MODEL_RUNNER, "load_model_cls_srt", """
        model_arch_name_to_cls = import_model_classes()
        if model_arch not in model_arch_name_to_cls:
            raise ValueError(
                f"Unsupported architectures: {model_arch}. "
                f"Supported list: {list(model_arch_name_to_cls.keys())}"
            )
        """, 628, env=(("model_arch", "_args[0]"), ("import_model_classes", "lambda: {'ChatGLMForCausalLM': 1, 'LlamaForCausalLM': 1, 'Qwen2ForCausalLM': 1}"))),
)
LM_HEAD = weight_key_error(QWEN2, "lm_head.weight")
DEEPSEEK_OCR = scheduler_crash("sglang-deepseek-ocr-lm-head", "positive-0.5.9", weight_key_error("sglang/srt/models/deepseek_vl2.py", "lm_head.weight"),
                               before=(LOAD_BEGIN,))
GEMMA = scheduler_crash("sglang-gemma-lm-head", "positive-0.4.10.post2", weight_key_error("sglang/srt/models/gemma.py", "lm_head.weight", "0.4.10.post2"),
                        before=(LOAD_BEGIN,))

MODEL_CASES = (
    IMPORT_FAILED_CASE,
    UNSUPPORTED_CASE.named("sglang-model-import-failed", "negative-no-import-error"),
    IMPORT_FAILED_CASE.named("sglang-unsupported-architecture", "negative-import-error"),
    scheduler_crash("sglang-unsupported-architecture", "positive-0.3-wording", UNSUPPORTED_0_3, before=(LOAD_BEGIN,)),

    DEEPSEEK_OCR,
    scheduler_crash("sglang-deepseek-ocr-lm-head", "negative-qwen2", LM_HEAD, before=(LOAD_BEGIN,)),
    DEEPSEEK_OCR.named("sglang-weight-key-lm-head", "negative-deepseek-ocr"),
    GEMMA,
    scheduler_crash("sglang-gemma-lm-head", "negative-qwen2", LM_HEAD, before=(LOAD_BEGIN,)),
    GEMMA.named("sglang-weight-key-lm-head", "negative-gemma"),
)

# -- features that do not run together ------------------------------------------------------------------------------

SPEC_UTILS = "sglang/srt/speculative/spec_utils.py"
XGRAMMAR_BACKEND = "sglang/srt/constrained/xgrammar_backend.py"
STOP_TOKEN_CHECK = ("[10:21:07] /project/cpp/grammar_matcher.cc:556: Check failed: (!IsStopTokenAccepted()) is false: GrammarMatcher has "
                    "terminated after accepting the stop token, but is trying to find the next token mask")
NORMAL_LOOP = (("scheduler", "HOP:event_loop_normal"),)
# EAGLE verifying draft tokens: the draft tree walked through each request's grammar
SPEC_VERIFY = (
    scheduler_entry("scheduler.event_loop_normal()", 2679, NORMAL_LOOP),
    frame_at(SCHEDULER, "event_loop_normal", "result = self.run_batch(batch)", 980),
    frame_at(SCHEDULER, "run_batch", "batch_result = self.model_worker.forward_batch_generation(batch)", 2034),
    frame_at("sglang/srt/speculative/eagle_worker.py", "forward_batch_generation",
             "logits_output, verify_output, model_worker_batch, can_run_cuda_graph = self.verify(batch, spec_info)", 295),
    frame_at("sglang/srt/speculative/eagle_worker.py", "verify",
             "vocab_mask = generate_token_bitmask(batch.reqs, spec_info, retrieve_next_token_cpu, retrieve_next_sibling_cpu, draft_tokens_cpu, batch.sampling_info.vocab_size)", 701),
    frame_at(SPEC_UTILS, "generate_token_bitmask", "traverse_tree(retrieve_next_token_cpu[i], retrieve_next_sibling_cpu[i], draft_tokens_cpu[i], req.grammar, allocate_token_bitmask)", 654),
    frame_at(SPEC_UTILS, "traverse_tree", "dfs(0, -1, True)", 610),
    frame_at(SPEC_UTILS, "dfs", "grammar.fill_vocab_mask(allocate_token_bitmask, curr)", 580),
    frame_at(XGRAMMAR_BACKEND, "fill_vocab_mask", "self.matcher.fill_next_token_bitmask(vocab_mask, idx)", 100),
    frame_at("xgrammar/matcher.py", "fill_next_token_bitmask", "return self._handle.fill_next_token_bitmask(bitmask, index, debug_print)", 308,
             env=(("self", "NS(_handle=NS(fill_next_token_bitmask=__import__('torch').C_RAISER))"),)),
)
# a disaggregated decode server accepting a token the grammar refuses
TOKEN_REFUSED = (
    scheduler_entry("scheduler.event_loop_normal_disagg_decode()", 2700, (("scheduler", "HOP:event_loop_normal_disagg_decode"),)),
    frame_at("sglang/srt/disaggregation/decode.py", "event_loop_normal_disagg_decode", "self.process_batch_result(batch, result)", 790),
    frame_at(SCHEDULER, "process_batch_result", "self.process_batch_result_decode(batch, result)", 2410),
    frame_at("sglang/srt/managers/scheduler_output_processor_mixin.py", "process_batch_result_decode", "req.grammar.accept_token(next_token_id)", 380,
             env=(("req", "HOP:accept_token"), ("next_token_id", "151668"))),
    # 0.5.9's XGrammarGrammar.accept_token (xgrammar_backend.py:79, the raise site index): a three-line message.
    failing_at(XGRAMMAR_BACKEND, "accept_token", """
        if not self.is_terminated():
            self.current_token = token
            accepted = self.matcher.accept_token(token)
            if not accepted:
                raise ValueError(
                    f"Tokens not accepted: {token}\\n"
                    f"Accepted tokens: {self.accepted_tokens}\\n"
                    f"Key string: {self.key_string}"
                )
        """, 79, env=(("token", "_args[0]"), ("self", "NS(matcher=NS(accept_token=lambda token: False), is_terminated=lambda: False, "
                                               "accepted_tokens=[151667, 198], key_string='<think>\\\\n')"))),
)
# SGLang 0.3's check_server_args (server_args.py:745); the wild corpus raises it too.
LORA_0_3_CHECK = """
        assert (
            self.max_loras_per_batch > 0
            and (self.lora_paths is None or self.disable_cuda_graph)
            and (self.lora_paths is None or self.disable_radix_cache)
        ), "compatibility of lora and cuda graph and radix attention is in progress"
        """
LORA_0_3 = from_launch_server(
    frame_at("sglang/srt/server.py", "launch_server", "server_args.check_server_args()", 383, env=(("server_args", "HOP:check_server_args"),)),
    failing_at(SERVER_ARGS, "check_server_args", LORA_0_3_CHECK, 745,
               env=(("self", "NS(max_loras_per_batch=4, lora_paths=['sql=/adapters/sql-lora'], disable_cuda_graph=False, disable_radix_cache=False)"),),
               marker="assert"),
)
LORA_0_3_CASE = launch_crash("sglang-lora-cuda-graph-radix", "positive-0.3", LORA_0_3)
LORA_RADIX = lora_error("x", "0.5.9", """
    assert self.max_loras_per_batch > 0 and (
        self.disable_radix_cache
    ), "compatibility of lora and radix attention is in progress"
    """, "NS(max_loras_per_batch=8, disable_radix_cache=False)", 4960)
MULTI_LAYER_EAGLE = (
    SCHEDULER_TOP["0.5.23"],
    frame_at(SCHEDULER, "__init__", "self.init_model_worker()", 569),
    frame_at(SCHEDULER, "init_model_worker", "self.init_draft_worker()", 1133),
    frame_at(SCHEDULER, "init_draft_worker", "self.draft_worker = DraftWorkerClass(**draft_worker_kwargs)", 1080),
    failing_at("sglang/srt/speculative/multi_layer_eagle_worker_v2.py", "__init__", """
        self.speculative_num_steps = server_args.speculative_num_steps
        self.speculative_num_draft_tokens = server_args.speculative_num_draft_tokens
        assert self.speculative_num_draft_tokens == self.speculative_num_steps + 1, (
            "multi-layer EAGLE requires speculative_num_draft_tokens == "
            "speculative_num_steps + 1, "
            f"got {self.speculative_num_draft_tokens} and {self.speculative_num_steps}"
        )
        """, 131, env=(("self", "NS()"), ("server_args", "NS(speculative_num_steps=3, speculative_num_draft_tokens=8)")), marker="assert"),
)

FEATURE_CASES = (
    scheduler_crash("sglang-spec-decode-grammar", "positive-0.5.6-stop-token", SPEC_VERIFY, before=(READY, DECODE), torch_error=("RuntimeError", STOP_TOKEN_CHECK)),
    scheduler_crash("sglang-spec-decode-grammar", "positive-disagg-decode-token-refused", TOKEN_REFUSED, before=(DECODE,)),
    attention_kernel_crash("sglang-spec-decode-grammar", "negative-illegal-memory-access", "0.5.9", ILLEGAL_ACCESS),

    LORA_0_3_CASE,
    LORA_RADIX.named("sglang-lora-cuda-graph-radix", "negative-radix-only"),
    LORA_0_3_CASE.named("sglang-lora-config", "negative-0.3-cuda-graph-and-radix"),

    scheduler_crash("sglang-multi-layer-eagle-draft-tokens", "positive-0.5.23", MULTI_LAYER_EAGLE),
    server_args_error("sglang-multi-layer-eagle-draft-tokens", "negative-topk-page-size", "0.5.9", "_handle_speculative_decoding", SPEC_TOPK_PAGE,
                      "NS(speculative_eagle_topk=4, page_size=16, attention_backend='fa3')", 2460),
)

CASES: tuple[Case, ...] = (*SERVING_CASES, *HOST_CASES, *NCCL_CASES, *INSTALL_CASES, *TRANSFORMERS_CASES, *MODEL_CASES, *FEATURE_CASES)
