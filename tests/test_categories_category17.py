"""Blind split 17's honest categories (issue 28), in generic words: plain messages no pattern names that were filed
unclassified or under the wrong category.

- a kernel with no code for a dtype on its device (torch's AT_DISPATCH_SWITCH: `"<kernel>" not implemented for
  '<dtype>'`) is the platform's kernel table (gpu-arch-unsupported), not an engine bug; torch's own CUDA kernel
  (`…_cuda`) lacking a dtype is a torch release (dependency-version) (BlinkDL/ChatRWKV#7, chijames/KERPLE#5);
- a kernel library's chip table (`gfx1100 not supported`, `Not compiled for architecture sm_120`) is
  gpu-arch-unsupported's kernel row, naming the library's frames;
- a GPU feature the device or its machine does not provide (`CUDA error: operation not supported`,
  CUDA_ERROR_NOT_SUPPORTED) is cuda-error with the feature's checks (vllm-project/vllm#5328, dmlc/xgboost#12217);
- an empty assertion in the KV transfer connectors is that subsystem's (network), not NCCL's;
- a wrapper's own UnboundLocalError is a bug of that wrapper, named;
- incidental words: a person's directory in a frame's path, or a model's name in a message, decide no category.

Tracebacks are printed by the real interpreter from our own code (tests.helpers)."""

from __future__ import annotations

from pathlib import Path

from logsleuth.reasoning.engine_api_calls import code_path
from tests.helpers import diagnose_without_patterns, traceback_of_installed


def _checks(diagnosis) -> str:  # type: ignore[no-untyped-def]
    fix = diagnosis.fix
    return "\n".join([fix.summary, *fix.steps]) if fix else ""


def _raised_in(tmp_path: Path, module: str, function_body: str, call: str) -> str:
    """The traceback of `call` into `module` (a file under site-packages) whose function `run` runs `function_body`."""
    dotted = module.removesuffix(".py").replace("/", ".")
    files = {module: "def run(*args):\n" + "".join(f"    {line}\n" for line in function_body.splitlines())}
    run = traceback_of_installed(tmp_path, files, f"from {dotted} import run\nrun({call})\n")
    assert "Traceback" in run.stderr
    return run.stderr


def test_a_kernel_without_the_dtype_on_its_device_is_the_platform_not_an_engine_bug(tmp_path: Path) -> None:
    """vLLM's rotary kernel dispatching on a dtype this platform's build has no code for (Dispatch.h's wording)."""
    text = _raised_in(tmp_path, "vllm/model_executor/layers/rotary_embedding.py",
                      "raise RuntimeError('\"rotary_embedding\" not implemented for \\'BFloat16\\'')", "")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "gpu-arch-unsupported"
    assert "dtype the device's kernels do not implement" in diagnosis.title
    assert "--dtype" in _checks(diagnosis)


def test_torchs_own_cuda_kernel_without_the_dtype_is_a_torch_release(tmp_path: Path) -> None:
    """chijames/KERPLE#5: 'max_all_cuda' without BFloat16, gone with a newer torch."""
    text = _raised_in(tmp_path, "vllm/model_executor/layers/sampler.py",
                      "raise RuntimeError('\"max_all_cuda\" not implemented for \\'BFloat16\\'')", "")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "dependency-version"
    assert "torch release" in diagnosis.title


def test_a_kernel_librarys_chip_table_names_the_library(tmp_path: Path) -> None:
    """An AMD kernel library refusing the device's gfx target; a CUTLASS build without the GPU's architecture."""
    text = _raised_in(tmp_path, "aiter/fused_moe.py", "raise RuntimeError('gfx1100 not supported')", "")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "gpu-arch-unsupported"
    assert "kernel without support for this GPU's architecture" in diagnosis.title
    assert "aiter" in diagnosis.root_cause
    text = _raised_in(tmp_path / "b", "vllm/_custom_ops.py",
                      "raise RuntimeError('Error Internal: Not compiled for architecture sm_120')", "")
    assert "kernel without support" in diagnose_without_patterns(text).title


def test_a_gpu_feature_the_machine_does_not_provide_gets_the_features_checks(tmp_path: Path) -> None:
    """vllm-project/vllm#5328 (a virtual GPU), hiyouga/LlamaFactory#8085: CUDA's 'operation not supported'."""
    text = _raised_in(tmp_path, "vllm/distributed/device_communicators/custom_all_reduce.py",
                      "raise RuntimeError('CUDA error: operation not supported')", "")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "cuda-error"
    assert "GPU feature" in diagnosis.title
    checks = _checks(diagnosis)
    assert "NCCL_P2P_DISABLE=1" in checks and "vGPU" in checks


def test_an_empty_assertion_in_a_kv_connector_is_the_transfer_path_not_nccl(tmp_path: Path) -> None:
    """A bare assert comparing the remote's blocks with the local ones, in vLLM's NIXL connector."""
    text = _raised_in(tmp_path, "vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py",
                      "local, remote = args\nassert len(local) == len(remote)", "[1, 2], [1]")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "engine-bug"  # the engine's own check, not the host's network
    assert "KV-cache transfer or offload connector" in diagnosis.title


def test_a_wrappers_own_unbound_name_is_a_bug_of_that_wrapper(tmp_path: Path) -> None:
    """A rollout worker of verl reading a variable one branch never set."""
    text = _raised_in(tmp_path, "verl/workers/rollout/vllm_rollout/vllm_rollout_spmd.py",
                      "if args:\n    response = args[0]\nreturn response", "")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "engine-bug"
    assert "verl's own code" in diagnosis.title


def test_a_persons_directory_named_like_a_subsystem_decides_nothing(tmp_path: Path) -> None:
    """`/home/<user>/quantization/serve.py` raising a plain ValueError: no quantization failure."""
    script_dir = tmp_path / "quantization"
    script_dir.mkdir()
    files = {"helperpkg/__init__.py": ""}
    run = traceback_of_installed(script_dir, files, "def main():\n    raise ValueError('bad value for x')\nmain()\n")
    text = run.stderr.replace(str(script_dir), "/home/alice/quantization")
    assert "/home/alice/quantization/app.py" in text
    assert diagnose_without_patterns(text).category == "unclassified"


def test_a_models_name_in_a_message_decides_nothing(tmp_path: Path) -> None:
    """A server's own error naming the model it was asked for: GPTQ in the name is no quantization failure."""
    text = _raised_in(tmp_path, "vllm/entrypoints/openai/api_server.py",
                      "raise RuntimeError('Failed to start server for TheBloke/Llama-2-13B-chat-GPTQ')", "")
    assert diagnose_without_patterns(text).category == "unclassified"
    text = _raised_in(tmp_path / "b", "vllm/entrypoints/openai/serving_models.py",
                      "raise ValueError('The model Qwen2.5-7B-Instruct-AWQ does not exist.')", "")
    assert diagnose_without_patterns(text).category == "unclassified"


def test_the_quantization_words_of_the_failure_itself_still_count(tmp_path: Path) -> None:
    """The masking leaves the failure's own words: a method the message names outside a model's name still counts."""
    text = _raised_in(tmp_path, "vllm/model_executor/layers/quantization/awq.py",
                      "raise ValueError('The input size is not aligned with the quantized weight shape. "
                      "This can be caused by too large tensor parallel size.')", "")
    # vLLM's check in the quantized layers: with no launch shown, the checkpoint's shape against the quantization
    # kernel (the category's kernel-shape row; a launch's degree above 1 makes it parallel-config)
    assert diagnose_without_patterns(text).category == "quantization"


def test_code_path_keeps_code_and_drops_a_persons_directories() -> None:
    assert code_path("/usr/lib/python3.10/site-packages/vllm/lora/models.py") == "vllm/lora/models.py"
    assert code_path("/workspace/verl/verl/workers/fsdp_workers.py") == "verl/workers/fsdp_workers.py"
    assert code_path("/home/alice/lora/run.py") == "run.py"
    assert code_path("/usr/lib/python3.11/multiprocessing/connection.py") == "multiprocessing/connection.py"
    assert code_path("…/layers/quantization/fp8.py") == "…/layers/quantization/fp8.py"


def test_an_engine_class_a_guarded_import_left_unbound_stays_the_engine_release(tmp_path: Path) -> None:
    """lm-eval imports vLLM's LLM inside try/except (arcee-ai/mergekit#524, EvolvingLMMs-Lab/lmms-eval#726): the
    NameError names the engine's class, so the import failed earlier; not a bug of the wrapper's own variable."""
    text = _raised_in(tmp_path, "lm_eval/models/vllm_causallms.py", "return LLM(model='m')", "")
    assert "NameError: name 'LLM' is not defined" in text
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "dependency-version"
    assert diagnosis.title.startswith("Likely a program that runs the engine, written for another")
    assert "import failed" in _checks(diagnosis) or "import that failed" in _checks(diagnosis)


def _moved(text: str, tmp_path: Path, to: str) -> str:
    """`text` with the test's site-packages directory printed as `to` (a checkout, a person's directory)."""
    site = str(tmp_path / "venv" / "lib" / "python3.11" / "site-packages")
    assert site in text
    return text.replace(site, to)


def test_a_hardware_plugin_run_from_its_checkout_keeps_its_kernel_row(tmp_path: Path) -> None:
    """baidu/vLLM-Kunlun#477: the plugin's attention backend calling its operator library, run from the repository's
    checkout (`/workspace/vLLM-Kunlun/vllm_kunlun/…`, the editable install of vllm-project/vllm-ascend#2280)."""
    # the compiled kernel raises from C: a C function of CPython's (float) stands in for it, as in
    # tests/test_plugins_and_wrappers.py
    files = {"vllm_kunlun/kunlun_ops.py": "speculative_attention = float\n",
             "vllm_kunlun/v1/attention/backends/kunlun_attn.py":
                 "from vllm_kunlun import kunlun_ops\n\ndef forward(status):\n"
                 "    return kunlun_ops.speculative_attention(status)\n"}
    run = traceback_of_installed(tmp_path, files, "from vllm_kunlun.v1.attention.backends.kunlun_attn import forward\n"
                                 "forward('Check 0 == ret failed, speculative_attention failed')\n")
    text = _moved(run.stderr, tmp_path, "/workspace/vLLM-Kunlun")
    assert "/workspace/vLLM-Kunlun/vllm_kunlun/v1/" in text
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "engine-bug"
    assert diagnosis.title.startswith("Likely a kernel of the hardware plugin refusing the shapes")


def test_a_persons_directory_named_like_a_package_is_no_checkout(tmp_path: Path) -> None:
    """`/home/alice/vllm/quantization/app.py`: a directory named vllm above a person's own folders is no vLLM module."""
    text = _moved(_raised_in(tmp_path, "quantization/app.py", "raise ValueError('bad value for x')", ""), tmp_path,
                  "/home/alice/vllm")
    assert diagnose_without_patterns(text).category == "unclassified"
    assert code_path("/home/alice/torch/lora/app.py") == "app.py"
    assert code_path("/workspace/vLLM-Kunlun/vllm_kunlun/v1/ops.py") == "vllm_kunlun/v1/ops.py"
    assert code_path("/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py") == \
        "sglang/srt/managers/scheduler.py"
    assert code_path("/app/vllm/entrypoints/openai/api_server.py") == "vllm/entrypoints/openai/api_server.py"


def test_a_gpu_feature_on_rocm_gets_amds_tools_not_nvidia_smi(tmp_path: Path) -> None:
    """HIP's wording of the same refusal (hipErrorNotSupported): AMD's tools and allocator variable, no nvidia-smi."""
    text = _raised_in(tmp_path, "vllm/distributed/device_communicators/custom_all_reduce.py",
                      "raise RuntimeError('HIP error: operation not supported')", "")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "cuda-error"
    checks = _checks(diagnosis)
    assert "amd-smi topology" in checks and "PYTORCH_HIP_ALLOC_CONF" in checks
    assert "nvidia-smi" not in checks
    nvidia = _checks(diagnose_without_patterns(_raised_in(
        tmp_path / "b", "vllm/distributed/device_communicators/custom_all_reduce.py",
        "raise RuntimeError('CUDA error: operation not supported')", "")))
    assert "nvidia-smi topo -p2p r" in nvidia and "amd-smi" not in nvidia


def test_an_ipc_socket_not_supported_is_no_gpu_feature(tmp_path: Path) -> None:
    """ZeroMQ's ipc:// transport (vLLM's engine client binds one): "IPC" alone names no GPU feature."""
    text = _raised_in(tmp_path, "vllm/v1/engine/core_client.py",
                      "raise RuntimeError('IPC is not supported on this platform: ipc:///tmp/engine')", "")
    diagnosis = diagnose_without_patterns(text)
    assert "GPU feature" not in diagnosis.title and diagnosis.category != "cuda-error"


def test_a_kernel_table_named_on_the_error_line_above_still_counts(tmp_path: Path) -> None:
    """The kernel's own record names the architecture just above a traceback whose exception line says only that the
    launch failed: the kernel-architecture row's strong words count there, so its words_needed does too."""
    text = _raised_in(tmp_path, "vllm/model_executor/layers/fused_moe/fused_moe.py",
                      "raise RuntimeError('Kernel launch failed')", "")
    log = ("ERROR 05-10 10:00:01 fused_moe.py:10] The fused MoE kernel failed: unsupported architecture sm_120\n"
           + text)
    diagnosis = diagnose_without_patterns(log)
    assert diagnosis.category == "gpu-arch-unsupported"
    assert diagnosis.title == "Likely a kernel without support for this GPU's architecture"


def test_torchs_cpu_kernel_says_the_tensors_were_on_the_cpu(tmp_path: Path) -> None:
    """torch's CPU matmul kernel without Half: the tensors ran on the CPU, checked before any dtype advice; a kernel
    without a device in its name gets no such line."""
    text = _raised_in(tmp_path, "vllm/model_executor/layers/linear.py",
                      "raise RuntimeError('\"addmm_impl_cpu_\" not implemented for \\'Half\\'')", "")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "gpu-arch-unsupported"
    assert diagnosis.fix is not None and "torch's CPU kernel" in diagnosis.fix.steps[0]
    text = _raised_in(tmp_path / "b", "vllm/model_executor/layers/rotary_embedding.py",
                      "raise RuntimeError('\"rotary_embedding\" not implemented for \\'BFloat16\\'')", "")
    assert "torch's CPU kernel" not in _checks(diagnose_without_patterns(text))


def test_an_assertion_in_sglangs_cache_storage_connector_stays_the_cache_bookkeeping_row(tmp_path: Path) -> None:
    """SGLang's mem_cache/storage/ backends (LMCache, NIXL): the KV cache bookkeeping row is written first and wins
    its tie with the KV connector row (sgl-project/sglang#24972)."""
    text = _raised_in(tmp_path, "sglang/srt/mem_cache/storage/nixl/hicache_nixl.py",
                      "local, remote = args\nassert len(local) == len(remote)", "[1, 2], [1]")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "engine-bug"
    assert "KV cache bookkeeping" in diagnosis.title


def test_a_wrapper_known_only_from_its_frame_is_named(tmp_path: Path) -> None:
    """An installed program no table knows, reading a variable one branch never set: its package names it."""
    text = _raised_in(tmp_path, "mytool/runner.py", "if args:\n    response = args[0]\nreturn response", "")
    diagnosis = diagnose_without_patterns("INFO 05-10 10:00:01 api_server.py:100] vLLM API server version 0.8.5\n" + text)
    assert diagnosis.category == "engine-bug"
    assert "mytool's own code" in diagnosis.title and "a wrapper" not in _checks(diagnosis)
