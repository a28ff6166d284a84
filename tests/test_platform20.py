"""Stop 56 (platform20), in generic words (issue 28): a failure on an accelerator other than NVIDIA's gets its own
platform's advice and category, decided from positive evidence (facts/platforms.toml, reasoning/platform.py).

- NVIDIA-only checks (nvidia-smi, NVML, CUDA_VISIBLE_DEVICES, CUDA_LAUNCH_BLOCKING, nvcc, compute capability) never
  shown where the log shows another platform and nothing NVIDIA's: the counterpart named (npu-smi, amd-smi,
  HIP_VISIBLE_DEVICES) or the check left out, and one general step that says so; an NVIDIA log unchanged.
- A TPU's XLA compiler out of memory at compile time (vllm-project/vllm#8318, tensorflow/tensor2tensor#1382): gpu-oom
  with the compile-time checks, no nvidia-smi.
- The Ascend stack failing to initialise (CANN's platform info, GE, the op compiler: vllm-project/vllm-ascend#692,
  sgl-project/sglang#9226): dependency-version, its versions to match; an operator's failure stays the runtime's.
- triton-ascend's bishengir refusing the SoC target (sgl-project/sglang#16360, #14783, vllm-project/vllm-ascend#7423):
  gpu-arch-unsupported with the NPU stack's release, not NVIDIA's Triton advice.
- vLLM's CPU backend casting float16 to bfloat16 before a GPTQ checkpoint refuses it (vllm-project/vllm#12794).
- "Failed to infer device type" with nothing else: NVIDIA's causes said as NVIDIA's, a plugin's device package named.
Messages are the programs' own words, the logs our own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from logsleuth.facts.platforms import platforms
from logsleuth.models import Fix
from logsleuth.reasoning import platform_dtype
from logsleuth.reasoning.platform import _fix_for
from tests.helpers import check_texts, diagnose_with_patterns, traceback_of_installed

_NVIDIA_ONLY = ("nvidia-smi", "NVML", "CUDA_VISIBLE_DEVICES", "CUDA_LAUNCH_BLOCKING", "compute capability", "Blackwell")


def _nvidia_named(text: str) -> list[str]:
    return [word for word in _NVIDIA_ONLY if word in text]


def _advice(found) -> str:  # type: ignore[no-untyped-def]
    return "\n".join((found.root_cause, found.fix.summary, check_texts(found)))


def _raised(tmp_path: Path, module: str, message: str, exception: str = "RuntimeError") -> str:
    """A real CPython traceback through an installed module that raises `exception(message)`."""
    files = {module: f"def run():\n    raise {exception}({message!r})\n"}
    name = module.removesuffix(".py").replace("/", ".")
    run = traceback_of_installed(tmp_path, files, f"import {name}\n{name}.run()\n")
    assert run.returncode == 1, run.stderr
    return run.stderr


# ---- the platform decision and the NVIDIA-only checks ---------------------------------------------------------------

HIP_OOM = ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 3.50 GiB. GPU 0 has a total capacity of "
           "191.98 GiB of which 1.20 GiB is free. Of the allocated memory 180.02 GiB is allocated by PyTorch.\n")
CUDA_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB. GPU 0 has a total capacity of "
            "79.19 GiB of which 1.20 GiB is free. Of the allocated memory 70.02 GiB is allocated by PyTorch.\n")


def test_an_amd_gpu_out_of_memory_names_amd_tools_not_nvidia_smi() -> None:
    found = diagnose_with_patterns("INFO Automatically detected platform rocm.\n" + HIP_OOM)
    assert found.category == "gpu-oom"
    advice = _advice(found)
    assert set(_nvidia_named(advice)) <= {"CUDA_VISIBLE_DEVICES"}  # HIP reads it too (platforms.toml honours)
    assert "amd-smi" in advice and "AMD GPU (ROCm)" in advice


def test_cudas_own_words_decide_nvidia_beside_another_platforms_package() -> None:
    # torch's CUDA out-of-memory wording beside a ROCm build's version line: the CUDA words decide, nothing changes
    found = diagnose_with_patterns("torch                     2.5.1+rocm6.2\n" + CUDA_OOM)
    assert found.category == "gpu-oom"
    assert "nvidia-smi" in check_texts(found)
    assert "not an NVIDIA GPU" not in check_texts(found)
    assert "not an NVIDIA GPU" in check_texts(diagnose_with_patterns("torch                     2.5.1+rocm6.2\n" + HIP_OOM))


def test_evidence_of_two_other_platforms_decides_none() -> None:
    # torch_npu's frame and HIP's error, nothing of NVIDIA's: two platforms, so none is decided
    frame = '  File "/usr/local/lib/python3.10/site-packages/torch_npu/npu/utils.py", line 58, in synchronize\n'
    log = "Traceback (most recent call last):\n" + frame + "RuntimeError: HIP error: an illegal memory access was encountered\n"
    assert "not an NVIDIA GPU" not in check_texts(diagnose_with_patterns(log))
    one = "Traceback (most recent call last):\n" + frame + "RuntimeError: an illegal memory access was encountered\n"
    assert "Ascend NPU" in check_texts(diagnose_with_patterns(one))


# ---- a message that only names a platform, and NVIDIA's evidence -----------------------------------------------------

# vLLM 0.11.2 model_executor/layers/quantization/ptpc_fp8.py: raised under `if not current_platform.is_rocm()`, so on
# every platform but ROCm; vLLM's detected-platform line (vllm/platforms/__init__.py) and its warning on CUDA
# (config/model.py: override-attention-dtype without ROCm).
PTPC = "ValueError: ptpc_fp8 quantization is supported only on ROCm.\n"
FREE_MEMORY = ("ValueError: Free memory on device (20.5/79.1 GiB) on startup is less than desired GPU memory "
               "utilization (0.9, 71.2 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.\n")


def test_a_refusal_that_names_rocm_decides_no_platform() -> None:
    found = diagnose_with_patterns("INFO Automatically detected platform cuda.\n" + PTPC)
    assert "not an NVIDIA GPU" not in check_texts(found) and "amd-smi" not in check_texts(found)
    assert "not an NVIDIA GPU" not in check_texts(diagnose_with_patterns(PTPC))


def test_vllms_platform_line_decides_both_ways_over_a_warning_naming_rocm() -> None:
    warning = "WARNING 06-01 10:00:00 config.py:1] override-attention-dtype is set but not using ROCm platform\n"
    nvidia = diagnose_with_patterns("INFO 06-01 10:00:00 __init__.py:1] Automatically detected platform cuda.\n"
                                    + warning + FREE_MEMORY)
    assert "nvidia-smi" in check_texts(nvidia) and "amd-smi" not in check_texts(nvidia)
    rocm = diagnose_with_patterns("INFO 06-01 10:00:00 __init__.py:1] Automatically detected platform rocm.\n" + FREE_MEMORY)
    assert "nvidia-smi" not in check_texts(rocm) and "amd-smi" in check_texts(rocm)


@pytest.mark.parametrize("gpu", ["NVIDIA A10G", "NVIDIA L40S", "Tesla T4", "Tesla V100-SXM2-32GB", "Quadro RTX 8000"])
def test_any_nvidia_gpu_name_decides_no_other_platform(gpu: str) -> None:
    log = f"GPU 0: {gpu}\nINFO Automatically detected platform rocm.\n" + FREE_MEMORY
    assert "not an NVIDIA GPU" not in check_texts(diagnose_with_patterns(log))


# ---- the user's words kept, no command made up, the environment's switch ----------------------------------------------

def test_the_users_launch_is_quoted_as_it_was_on_rocm() -> None:
    # HIP reads CUDA_VISIBLE_DEVICES too (ROCm's HIP environment variables): the launch's own assignment stays
    log = ("$ CUDA_VISIBLE_DEVICES= vllm serve Qwen/Qwen2.5-7B-Instruct\nGPU 0: AMD Instinct MI300X (gfx942)\n"
           "RuntimeError: No HIP GPUs are available\n")
    found = diagnose_with_patterns(log)
    said = "\n".join((found.title, found.root_cause, found.fix.summary, check_texts(found)))
    assert "CUDA_VISIBLE_DEVICES" in found.root_cause
    assert "HIP_VISIBLE_DEVICES=" not in said and "leave HIP_VISIBLE_DEVICES" not in said


NVIDIA_STEPS = (
    "nvidia-smi --query-compute-apps=pid,used_memory --format=csv lists the processes holding GPU memory",
    "nvidia-smi -q -d ECC shows the memory errors",
    "nvidia-smi -L and nvidia-smi --query-gpu=index,name --format=csv list the GPUs",
    "nvidia-smi topo -m shows the links",
    "rerun once with CUDA_LAUNCH_BLOCKING set",
)


@pytest.mark.parametrize("key", [platform.key for platform in platforms() if not platform.fallback])
def test_a_step_with_nvidias_tool_and_its_arguments_is_left_out_never_renamed(key: str) -> None:
    platform = next(p for p in platforms() if p.key == key)
    fix, left_out = _fix_for(Fix(summary="Check the GPUs.", steps=(*NVIDIA_STEPS, "check the model's size")), platform)
    assert fix.steps == ("check the model's size",) and left_out
    assert not re.search(r"-smi(?: info)? (?:--query|-q|-L|topo)", " ".join(fix.steps))


@pytest.mark.parametrize(("key", "env"), [("rocm", (("AMD_SERIALIZE_KERNEL", "3"),)),
                                          ("ascend", (("ASCEND_LAUNCH_BLOCKING", "1"),)), ("tpu", None)])
def test_an_alternatives_cuda_launch_blocking_is_the_platforms_own_switch(key: str, env: tuple | None) -> None:
    platform = next(p for p in platforms() if p.key == key)
    rerun = Fix(summary="To find the kernel: rerun with synchronous launches (slow).", env=(("CUDA_LAUNCH_BLOCKING", "1"),))
    fix, _ = _fix_for(Fix(summary="Upgrade.", alternatives=(rerun,)), platform)
    assert [alternative.env for alternative in fix.alternatives] == ([env] if env else [])


def test_a_hip_illegal_memory_access_reruns_with_amds_switch() -> None:
    # torch on a HIP build (c10/hip): its own advice is AMD_SERIALIZE_KERNEL=3
    log = ("[2025-05-02 10:00:05] Scheduler hit an exception: Traceback (most recent call last):\n"
           '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2300, in run_scheduler_process\n'
           "RuntimeError: HIP error: an illegal memory access was encountered\n"
           "For debugging consider passing AMD_SERIALIZE_KERNEL=3\n")
    found = diagnose_with_patterns(log)
    envs = [pair for alternative in found.fix.alternatives for pair in alternative.env]
    assert ("AMD_SERIALIZE_KERNEL", "3") in envs and all(name != "CUDA_LAUNCH_BLOCKING" for name, _ in envs)


# ---- the quadratic-free refusal regex ----------------------------------------------------------------------------------

def _unbounded_repeats(pattern: str) -> list[object]:
    """The repeats of a regex with no upper bound (`+`, `*`, `{n,}`), from its parsed form."""
    parser = re._parser
    found: list[object] = []

    def walk(items: object) -> None:
        for op, arg in items:  # type: ignore[attr-defined]
            if op in (parser.MAX_REPEAT, parser.MIN_REPEAT):
                if arg[1] == parser.MAXREPEAT:
                    found.append(arg)
                walk(arg[2])
            elif op in (parser.SUBPATTERN,):
                walk(arg[-1])
            elif op == parser.BRANCH:
                for branch in arg[1]:
                    walk(branch)
    walk(parser.parse(pattern))
    return found


def test_the_platform_dtype_regexes_have_only_bounded_repeats() -> None:
    # an unbounded `\w+` before the literal was retried at each letter of a long word: quadratic (review platform20)
    for regex in (platform_dtype._REFUSED, platform_dtype._CAST):
        assert _unbounded_repeats(regex.pattern) == [], regex.pattern
    assert _unbounded_repeats(r"(?P<dtype>\w+) is not") != []


def test_every_platform_row_names_its_sources_and_counterparts_are_its_own() -> None:
    for platform in platforms():
        assert platform.sources, platform.key
        for tool in (platform.smi, platform.visible, platform.blocking):
            assert _nvidia_named(tool) == [], (platform.key, tool)


# ---- TPU: XLA's compile-time out-of-memory --------------------------------------------------------------------------

def test_a_tpu_compile_out_of_memory_is_gpu_oom_with_compile_time_checks(tmp_path: Path) -> None:
    message = ("Bad StatusOr access: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory "
               "space vmem. Used 20.50M of 16.00M vmem. Exceeded vmem capacity by 4.50M.")
    found = diagnose_with_patterns(_raised(tmp_path, "torch_xla/core/xla_model.py", message))
    assert found.category == "gpu-oom"
    assert "TPU" in found.title
    advice = _advice(found)
    assert _nvidia_named(advice) == []
    assert "maximum context length" in advice


def test_a_tpu_hbm_out_of_memory_from_jax_is_the_same_row() -> None:
    log = ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of "
           "memory in memory space hbm. Used 40.10G of 15.48G hbm. Exceeded hbm capacity by 24.62G.\n")
    found = diagnose_with_patterns(log)
    assert (found.category, "TPU" in found.title) == ("gpu-oom", True)


# ---- Ascend: the stack's initialisation, triton-ascend's target -----------------------------------------------------

NPU_INIT = (
    "RuntimeError: SetPrecisionMode:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:158 NPU function error: "
    "at_npu::native::AclSetCompileopt(aclCompileOpt::ACL_PRECISION_MODE, precision_mode), error code is 500001\n"
    "[ERROR] 2025-06-01-10:00:00 (PID:77, Device:0, RankID:-1) ERR00100 PTA call acl api failed\n"
    "EH9999: Inner Error!\n"
    "EH9999: [PID: 77] 2025-06-01-10:00:00.000.001 [Init][PlatformInfo]init runtime platform info failed, "
    "SocVersion = Ascend910B3[FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]\n"
    "        GEInitialize failed.[FUNC:GEInitialize][FILE:ge_api.cc][LINE:337]\n"
)
NPU_OPERATOR = (
    "RuntimeError: ACL stream synchronize failed, error code:507048\n"
    "[ERROR] 2025-06-01-10:00:00 (PID:77, Device:0, RankID:-1) ERR00100 PTA call acl api failed\n"
    "EZ9999: Inner Error!\n"
)


def test_an_ascend_operator_failure_stays_the_runtimes() -> None:
    assert diagnose_with_patterns(NPU_OPERATOR).category == "cuda-error"


TRITON_TARGET = (
    "triton.compiler.errors.MLIRCompilationError: \n"
    "///------------------[ERROR][Triton][BEG]------------------\n"
    "[ConvertLinalgRToBinary] encounters error:\n"
    "bishengir-compile: for the --target option: Cannot find option named 'Ascend310P1'!\n"
)


@pytest.mark.parametrize(("log", "category", "named"), [
    (NPU_INIT, "dependency-version", ("CANN", "npu-smi info")),  # the stack failing to initialise: its versions
    (TRITON_TARGET, "gpu-arch-unsupported", ("triton-ascend", "CANN")),  # the compiler not knowing the chip
])
def test_an_ascend_stack_failure_names_the_npu_stack_not_nvidias(log: str, category: str, named: tuple[str, ...]) -> None:
    found = diagnose_with_patterns(log)
    assert found.category == category
    advice = _advice(found)
    assert all(word in advice for word in named), advice
    assert _nvidia_named(advice) == []


def test_a_triton_compile_failure_on_nvidia_keeps_its_checks() -> None:
    log = ("GPU 0: NVIDIA GeForce RTX 5090 (sm_120)\n"
           "triton.compiler.errors.CompilationError: at 12:4: PassManager::run failed\n")
    found = diagnose_with_patterns(log)
    assert found.category == "gpu-arch-unsupported"
    assert "compute capability" in check_texts(found)


# ---- vLLM's CPU backend's cast ----------------------------------------------------------------------------------------

CPU_CAST = "WARNING 03-01 10:00:00 cpu_executor.py:327] float16 is not supported on CPU, casting to bfloat16.\n"
GPTQ_REFUSED = "ValueError: torch.bfloat16 is not supported for quantization method gptq. Supported dtypes: [torch.float16]\n"


def test_the_cpu_backends_cast_refused_by_gptq_is_the_platforms_dtype() -> None:
    found = diagnose_with_patterns(CPU_CAST + GPTQ_REFUSED)
    assert found.pattern == "rule-platform-dtype"
    assert found.category == "quantization"
    assert "CPU backend" in found.root_cause and "float16" in found.root_cause


def test_a_dtype_refused_without_a_platform_cast_is_not_that_rule() -> None:
    assert diagnose_with_patterns(GPTQ_REFUSED).pattern != "rule-platform-dtype"


# ---- vLLM finding no platform -----------------------------------------------------------------------------------------

NO_PLATFORM = 'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\nRuntimeError: Failed to infer device type\n'


@pytest.mark.parametrize("message", ["Failed to infer device type", "No CUDA GPUs are available",
                                     "Found no NVIDIA driver on your system"])
def test_no_device_on_nvidia_names_no_plugin(message: str) -> None:
    # the plugin's device-package step only where the log shows the plugin or its platform
    log = ('Traceback (most recent call last):\n  File "/usr/lib/python3.12/site-packages/vllm/worker/worker.py", line '
           f'1, in init_device\nRuntimeError: {message}\n')
    found = diagnose_with_patterns(log)
    assert found.pattern == "vllm-cuda-not-available"
    assert "torch_npu" not in _advice(found) and "on an NVIDIA GPU" not in _advice(found)
    assert "nvidia-smi" in found.fix.summary


def test_no_platform_on_an_ascend_log_drops_nvidias_checks() -> None:
    log = "INFO Platform plugin ascend is loaded. quay.io/ascend/vllm-ascend:v0.7.1rc1\n" + NO_PLATFORM
    found = diagnose_with_patterns(log)
    steps = check_texts(found)
    assert _nvidia_named(steps) == [] and "pynvml" not in steps
    assert "Ascend NPU" in steps and "npu-smi info" in steps and "import torch, torch_npu" in steps
    assert _nvidia_named(found.fix.summary) == [] and "NVIDIA GPU, check" not in found.fix.summary


def test_vllms_cpu_platform_keeps_nvidias_checks() -> None:
    # vLLM picks its CPU platform when it finds no GPU: a GPU launch that fell back still needs NVIDIA's checks
    found = diagnose_with_patterns("INFO Automatically detected platform cpu.\n" + NO_PLATFORM)
    assert "nvidia-smi" in check_texts(found)


def test_the_stacks_versions_for_an_engine_bug_only_when_the_failure_is_in_its_runtime() -> None:
    # an AttributeError in the engine's own code on an MI300X: the GPU's line alone adds no ROCm-versions step
    bug = ('Traceback (most recent call last):\n  File "/sgl-workspace/sglang/python/sglang/srt/managers/'
           'schedule_batch.py", line 900, in prepare_for_decode\n'
           "AttributeError: 'NoneType' object has no attribute 'add_'\n")
    assert "Versions that must match" not in check_texts(diagnose_with_patterns("GPU 0: AMD Instinct MI300X (gfx942)\n" + bug))
    # Habana's lazy-mode runtime failing (the PT_LAZY module in the failure's own line): its stack's versions
    # (split 18 H-01's kind: Habana's vllm-fork on first-generation Gaudi)
    message = "[Rank:0] FATAL ERROR :: MODULE:PT_LAZY Error, ValidateSyncInputTensors tensor_data is empty."
    lazy = ("INFO 02-04 12:00:00 hpu_model_runner.py:700] Loading model weights took in total 15.05 GiB of device memory\n"
            f"ERROR 02-04 12:00:01 engine.py:387] {message}\n"
            "ERROR 02-04 12:00:01 engine.py:387] Traceback (most recent call last):\n"
            'ERROR 02-04 12:00:01 engine.py:387]   File "/opt/vllm-fork/vllm/engine/multiprocessing/engine.py", line 385, '
            "in run_mp_engine\n"
            "ERROR 02-04 12:00:01 engine.py:387]     engine = MQLLMEngine.from_engine_args(engine_args=engine_args,\n"
            f"ERROR 02-04 12:00:01 engine.py:387] RuntimeError: {message}\n")
    assert "Versions that must match" in check_texts(diagnose_with_patterns(lazy))
