"""Stop 43's second round (h-cat13), in generic words (issue 28): which Ascend NPU errors are which category.

CANN's own codes say it (the aclnn return codes, hiascend.com 'aclnn Return Codes'; the runtime's device error dump):
- an AI vector core exception on an invalid address ('there is an exception of aivec error', '[vector core
  exception]', 'The MPU address access is invalid', 'The DDR address of the MTE instruction is out of range') is a
  kernel touching memory it does not own, the NPU's illegal memory access (sgl-project/sglang#12464,
  zai-org/GLM-OCR#232);
- an aclnn operator's parameter check (error code 161002 ACLNN_ERR_PARAM_INVALID, 'AclNN_Parameter_Error(EZ1001)')
  is the calling code handing the operator a tensor it does not take: the engine's or plugin's NPU path
  (sgl-project/sglang#14159, vllm-project/vllm-ascend#6636);
- anything else of the NPU runtime (an inner error 561xxx, a stream sync timeout 507048) stays the NPU runtime's own
  row (cuda-error): its checks ask for the versions of the stack.
Lines rebuilt in our own text from the formats (torch_npu's 'NPU function error: call {op} failed, error code is
{code}', CANN's dump records)."""

from __future__ import annotations

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from tests.helpers import diagnose_without_patterns, real_traceback
from tests.test_categories_cat6 import no_rules  # noqa: F401 (no_rules: the fixture, used by pytestmark)

pytestmark = pytest.mark.usefixtures("no_rules")

_DEVICE_DUMP = [
    "[rank1]:[W0304 10:02:11.512004871 compiler_depend.ts:57] Warning: EZ9999: Inner Error!",
    "EZ9999: [PID: 40211] 2026-03-04-10:02:10.880.412 The error from device(chipId:1, dieId:0), serial number is 3, "
    "there is an exception of aivec error, core id is 21, error code = 0, dump info: pc start: 0x124400120000, "
    "current: 0x1244001204a0.[FUNC:ProcessStarsCoreErrorInfo][FILE:device_error_core_proc.cc][LINE:303]",
    "        TraceBack (most recent call last):",
    "       The extend info: errcode:(0, 0x200, 0) errorStr: {error_str} fsmId:0, tslot:2, thread:0, ctxid:0, blk:0, "
    "sublk:0, subErrType:4.[FUNC:ProcessStarsCoreErrorInfo][FILE:device_error_core_proc.cc][LINE:322]",
    "       Kernel task happen error, retCode=0x31, [vector core exception].[FUNC:PreCheckTaskErr]"
    "[FILE:davinci_kernel_task.cc][LINE:1539]",
]


@pytest.mark.parametrize("error_str", [
    "The MPU address access is invalid.",  # sgl-project/sglang#12464
    "The DDR address of the MTE instruction is out of range.",  # zai-org/GLM-OCR#232
])
def test_an_npu_vector_core_fault_on_an_address_is_an_illegal_memory_access(error_str: str) -> None:
    log = "\n".join(_DEVICE_DUMP).replace("{error_str}", error_str) + "\n"
    diagnosis = diagnose_without_patterns(log)
    assert diagnosis.category == "illegal-memory-access", diagnosis.title
    assert "Ascend NPU kernel" in diagnosis.title


def _npu_op_error(op: str, code: int, detail: str) -> str:
    """What torch_npu raises when an aclnn operator fails (its RuntimeError, the CANN lines inside the message)."""
    message = (f"{op.lower()}_op_api:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:36 NPU function error: call "
               f"{op} failed, error code is {code}\\n[ERROR] 2026-02-09-17:11:34 (PID:465, Device:1, RankID:-1) "
               f"ERR00100 PTA call acl api failed.\\n{detail}")
    return real_traceback(f"""
        def forward():
            raise RuntimeError("{message}")

        forward()
        """, "vllm_ascend/worker/model_runner_v1.py")


@pytest.mark.parametrize(("op", "detail"), [
    # vllm-project/vllm-ascend#6636: a scale dtype outside the operator's support list
    ("aclnnQuantMatmulWeightNz", "[PID: 465] 2026-02-09-17:11:34.368.749 AclNN_Parameter_Error(EZ1001): Tensor scale "
     "not implemented for DT_FLOAT16, should be in dtype support list [DT_BFLOAT16,DT_FLOAT,]."),
    # sgl-project/sglang#14159: a tensor with more dimensions than the copy operator takes
    ("aclnnInplaceCopy", "[PID: 4346] 2025-11-30-05:12:25.730.116 AclNN_Parameter_Error(EZ1001): The self tensor "
     "cannot be larger than 8 dimensions."),
])
def test_an_aclnn_parameter_check_is_the_engines_npu_path(op: str, detail: str) -> None:
    diagnosis = diagnose_without_patterns(_npu_op_error(op, 161002, detail))
    assert diagnosis.category == "engine-bug", diagnosis.title
    assert "aclnn parameter check" in diagnosis.title


@pytest.mark.parametrize(("op", "code", "detail"), [
    # the look-alikes: an inner error (561103 ACLNN_ERR_INNER_NULLPTR) with a kernel config CANN could not parse
    # (vllm-project/vllm-ascend#3046, an image built for another SoC), and a stream that timed out (vllm-ascend#2800)
    ("aclnnArange", 561103, "EZ9999: Inner Error!\\nEZ9999: [PID: 5625] Parse dynamic kernel config fail."),
    ("aclrtSynchronizeStreamWithTimeout", 507048, "EZ9999: Inner Error!\\nEZ9999: [PID: 77] Stream synchronize timeout."),
])
def test_other_npu_runtime_errors_stay_the_npu_runtimes_row(op: str, code: int, detail: str) -> None:
    diagnosis = diagnose_without_patterns(_npu_op_error(op, code, detail))
    assert diagnosis.category == "cuda-error", diagnosis.title
    assert "Ascend NPU operator or runtime" in diagnosis.title


def test_an_npu_dump_with_no_address_fault_is_no_illegal_memory_access() -> None:
    # the look-alike: CANN's EZ9999 record of a kernel config it could not parse names no core exception
    log = ("EZ9999: Inner Error!\n"
           "EZ9999: [PID: 5625] 2025-09-19-14:34:08.166.059 Parse dynamic kernel config fail.\n")
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    assert all(group.diagnosis is None or group.diagnosis.category != "illegal-memory-access"
               for group in report.failures)


# -- the custom all-reduce failing while CUDA graphs are captured (THUDM/slime#1998, sgl-project/sglang#9706,
# vllm-project/vllm#56180): the all-reduce's call is what failed, the capture's failure its consequence.

_CAPTURE_WITH_CUSTOM_ALL_REDUCE = """
    class CustomAllReduce:
        def share_graph_inputs(self):
            raise RuntimeError("Runtime check failed at /sgl-workspace/sglang/python/sglang/jit_kernel/include/"
                               "sgl_kernel/distributed/custom_all_reduce.cuh:37: CUDA error: invalid argument")

    def capture():
        CustomAllReduce().share_graph_inputs()

    def init_device_graphs():
        try:
            capture()
        except RuntimeError as e:
            raise Exception(f"Capture cuda graph failed: {e}")

    init_device_graphs()
"""


def _nccl_steps_under_sglang(printed: str) -> str:
    """The checks of `printed`'s diagnosis with SGLang given as the engine, which must be nccl."""
    diagnosis = diagnose_text(printed, DiagnoseOptions(include_user_patterns=False, engine="sglang")).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "nccl", diagnosis
    return "\n".join(diagnosis.fix.steps if diagnosis.fix else ())


def test_a_custom_all_reduce_fault_during_the_capture_is_the_all_reduce_with_the_capture_named() -> None:
    printed = real_traceback(_CAPTURE_WITH_CUSTOM_ALL_REDUCE, "python/sglang/srt/model_executor/cuda_graph_runner.py")
    assert "Exception: Capture cuda graph failed: Runtime check failed" in printed
    steps = _nccl_steps_under_sglang(printed)
    assert "while CUDA graphs were being captured" in steps
    assert "--disable-custom-all-reduce" in steps


def test_a_custom_all_reduce_fault_while_serving_names_no_capture() -> None:
    # the look-alike: the same kernel's fault on a served request's all-reduce, no graph being captured
    printed = real_traceback("""
        def all_reduce():
            raise RuntimeError("Runtime check failed at /sgl-workspace/sglang/python/sglang/jit_kernel/include/"
                               "sgl_kernel/distributed/custom_all_reduce.cuh:52: CUDA error: invalid argument")

        def forward_batch():
            all_reduce()

        forward_batch()
    """, "python/sglang/srt/managers/scheduler.py")
    steps = _nccl_steps_under_sglang(printed)
    assert "while CUDA graphs were being captured" not in steps and "--disable-custom-all-reduce" in steps


def test_a_capture_failure_of_another_kernel_stays_the_capture() -> None:
    # the look-alike: no custom all-reduce in it, the capture itself refusing a call
    printed = real_traceback("""
        def capture():
            raise RuntimeError("CUDA error: operation not permitted when stream is capturing")

        def init_device_graphs():
            try:
                capture()
            except RuntimeError as e:
                raise Exception(f"Capture cuda graph failed: {e}")

        init_device_graphs()
    """, "python/sglang/srt/model_executor/cuda_graph_runner.py")
    assert diagnose_without_patterns(printed).category == "cuda-graph-capture"


# -- vLLM's engine core dumping a failed step's input (logging_utils/dump_input.py), the paste cut right after it
# (vllm-project/vllm#28714, #27904): the engine core died, its error is below the dump.

_VLLM_DUMP = (
    "(EngineCore_DP0 pid=5120) ERROR 06-13 11:20:07 [logging_utils/dump_input.py:72] Dumping input data for V1 LLM "
    "engine (v0.11.2) with config: model='/models/qwen3-4b', speculative_config=None, tokenizer='/models/qwen3-4b', "
    "dtype=torch.bfloat16, max_seq_len=8192, tensor_parallel_size=1, quantization=None, enforce_eager=False"
)


def test_a_paste_cut_at_vllms_input_dump_is_the_engine_core_dying_with_its_error_below() -> None:
    log = ('(APIServer pid=5002) INFO:     127.0.0.1:50356 - "POST /v1/completions HTTP/1.1" 200 OK\n'
           + _VLLM_DUMP + "\n")
    diagnosis = diagnose_without_patterns(log)
    assert diagnosis.category == "process-killed", diagnosis.title
    assert "input dump" in diagnosis.title
    steps = "\n".join(diagnosis.fix.steps if diagnosis.fix else ())
    assert "below the dump" in steps


def test_the_steps_own_error_below_the_dump_keeps_its_category() -> None:
    # the look-alike: the whole paste, the step's traceback after the dump, names its own cause
    printed = real_traceback("""
        def execute_model():
            raise RuntimeError("CUDA error: an illegal memory access was encountered")

        execute_model()
    """, "vllm/v1/engine/core.py")
    log = _VLLM_DUMP + "\n(EngineCore_DP0 pid=5120) ERROR 06-13 11:20:07 [core.py:710] EngineCore encountered a " \
        "fatal error.\n" + printed
    assert diagnose_without_patterns(log).category == "illegal-memory-access"


# -- an assertion of SGLang's own KV cache bookkeeping (srt/mem_cache/: sgl-project/sglang#24972's HiCache component,
# #24153's SWARadixCache lock count, #22592's HiMambaRadixCache eviction): the engine's bug, not the pool running out.

def _mem_cache_assert(statement: str) -> str:
    return real_traceback(f"""
        class Node:
            host_value = None
            value = None
            swa_lock_ref = 0

        def dec_lock_ref(node):
            {statement}

        def cache_finished_req():
            dec_lock_ref(Node())

        cache_finished_req()
    """, "python/sglang/srt/mem_cache/swa_radix_cache.py")


@pytest.mark.parametrize("statement", [
    "assert node.host_value is not None or node.value is not None",  # sgl-project/sglang#24972: a bare AssertionError
    'assert node.swa_lock_ref > 0, f"dec_lock_ref on node with {node.swa_lock_ref=}"',  # sgl-project/sglang#24153
])
def test_an_assertion_of_the_engines_kv_cache_bookkeeping_is_its_bug(statement: str) -> None:
    printed = _mem_cache_assert(statement)
    assert "AssertionError" in printed and "sglang/srt/mem_cache/swa_radix_cache.py" in printed
    diagnosis = diagnose_without_patterns(printed)
    assert diagnosis.category == "engine-bug", diagnosis.title
    assert "KV cache bookkeeping" in diagnosis.title


def test_the_pool_running_out_in_the_same_code_stays_serving_memory() -> None:
    # the look-alike: the same code's words that the KV pool ran out name serving-memory
    printed = _mem_cache_assert('assert False, "Prefill out of memory. Try to lower your batch size."')
    assert diagnose_without_patterns(printed).category == "serving-memory"


def test_an_assertion_outside_the_cache_code_is_no_cache_bug() -> None:
    # the look-alike: a bare assertion in the scheduler's own code names no cache bookkeeping
    printed = real_traceback("""
        def get_next_batch_to_run(batch):
            assert batch is not None

        get_next_batch_to_run(None)
    """, "python/sglang/srt/managers/scheduler.py")
    assert "KV cache bookkeeping" not in diagnose_without_patterns(printed).title


def test_a_flag_in_general_guidance_names_the_releases_that_have_it_when_the_log_names_none() -> None:
    # The shipped catalogs reach back only to SGLang 0.3.0: a user on an older release following a flag check would
    # meet "unrecognized arguments".  With the release unknown the check says from which release logsleuth knows the
    # flag; with the release known (the catalog decides) it says nothing more.
    printed = real_traceback(_CAPTURE_WITH_CUSTOM_ALL_REDUCE, "python/sglang/srt/model_executor/cuda_graph_runner.py")
    unknown = _nccl_steps_under_sglang(printed)
    assert "--disable-custom-all-reduce is in SGLang from 0.3.0 on (every release logsleuth knows)" in unknown
    assert "an older release may lack it" in unknown
    known = diagnose_text("sglang version: 0.5.9\n" + printed,
                          DiagnoseOptions(include_user_patterns=False, engine="sglang")).failures[0].diagnosis
    assert known is not None and known.fix is not None
    assert "--disable-custom-all-reduce" in "\n".join(known.fix.steps)
    assert "an older release may lack it" not in "\n".join(known.fix.steps)


def test_the_release_note_is_said_once_and_only_for_a_flag_every_known_release_has() -> None:
    # A flag only some known releases have gets its range from release_flags on the fix's summary, for every
    # diagnosis: the check does not repeat it.  A flag every known release has gets the check's note; a known
    # release gets none.
    from logsleuth.fixes.release_flags import range_note
    from logsleuth.reasoning.guidance_text import with_flag_releases

    partial = "In SGLang the backend is chosen with --attention-backend."
    assert range_note("sglang", "--attention-backend") == "--attention-backend: SGLang 0.3.1 and later"
    assert with_flag_releases(partial, "sglang", None) == partial
    every = "In SGLang --disable-custom-all-reduce makes NCCL do the all-reduce."
    assert range_note("sglang", "--disable-custom-all-reduce") is None
    assert "is in SGLang from 0.3.0 on (every release logsleuth knows)" in with_flag_releases(every, "sglang", None)
    assert with_flag_releases(every, "sglang", "0.5.9") == every
