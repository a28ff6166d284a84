"""Blind split 17's advice that did not fit the root cause its category names (issue 28), in generic words:

- out of memory while the model is built or its weights read (a layer's constructor allocating its parameters),
  before the KV cache: the weights do not fit, and the KV-cache settings cannot help (vllm-project/vllm#636,
  #15182); an out of memory in a forward pass keeps the category's general checks.

Tracebacks are printed by the real interpreter from our own code (tests.helpers)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import diagnose_without_patterns, traceback_of_installed

_OOM = ("class OutOfMemoryError(RuntimeError):\n    pass\n\n"
        "def allocate(*args):\n"
        "    raise OutOfMemoryError('CUDA out of memory. Tried to allocate 160.00 MiB (GPU 0; 79.35 GiB total capacity; "
        "78.58 GiB already allocated; 145.19 MiB free; 78.58 GiB reserved in total by PyTorch)')\n")


def _checks(diagnosis) -> str:  # type: ignore[no-untyped-def]
    fix = diagnosis.fix
    return "\n".join([fix.summary, *fix.steps]) if fix else ""


def _oom_under(tmp_path: Path, files: dict[str, str], script: str) -> str:
    run = traceback_of_installed(tmp_path, {"torch/cuda/memory.py": _OOM, **files}, script)
    assert "OutOfMemoryError" in run.stderr
    return run.stderr


_LAYERS = {
    "vllm/model_executor/layers/linear.py": (
        "from torch.cuda.memory import allocate\n\n"
        "class ColumnParallelLinear:\n    def __init__(self, size):\n        self.weight = allocate(size)\n"),
    "vllm/model_executor/models/llama.py": (
        "from vllm.model_executor.layers.linear import ColumnParallelLinear\n\n"
        "class LlamaForCausalLM:\n    def __init__(self):\n"
        "        self.layers = [ColumnParallelLinear(8192) for _ in range(80)]\n\n"
        "    def forward(self):\n        from torch.cuda.memory import allocate\n        return allocate(1)\n"),
}


def test_out_of_memory_while_the_layers_are_built_says_the_weights_do_not_fit(tmp_path: Path) -> None:
    text = _oom_under(tmp_path, _LAYERS, "from vllm.model_executor.models.llama import LlamaForCausalLM\nLlamaForCausalLM()\n")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "gpu-oom"
    checks = _checks(diagnosis)
    assert "weights that do not fit" in diagnosis.title and "tensor-parallel degree" in checks and "quantized checkpoint" in checks
    # the KV cache's settings cannot help a model that does not fit: none is offered as a change
    assert "--gpu-memory-utilization" not in checks and "--max-model-len" not in checks and "--max-num-seqs" not in checks
    assert "static memory fraction" not in checks


def test_out_of_memory_in_a_forward_pass_keeps_the_general_checks(tmp_path: Path) -> None:
    files = {**_LAYERS, "vllm/worker/worker.py": (
        "from vllm.model_executor.models.llama import LlamaForCausalLM\n\n"
        "def profile_run(model):\n    return model.forward()\n")}
    script = ("from vllm.worker.worker import profile_run\nfrom vllm.model_executor.models import llama\n"
              "model = llama.LlamaForCausalLM.__new__(llama.LlamaForCausalLM)\nprofile_run(model)\n")
    diagnosis = diagnose_without_patterns(_oom_under(tmp_path, files, script))
    assert diagnosis.category == "gpu-oom"
    assert "weights that do not fit" not in diagnosis.title
    assert "--gpu-memory-utilization" in _checks(diagnosis)


def test_the_release_an_eggs_directory_names_is_the_installed_release(tmp_path: Path) -> None:
    """setuptools' egg directory (`vllm-0.1.2-py3.9-linux-x86_64.egg/vllm/…`, vllm-project/vllm#636) names the release;
    a development build's egg names none."""
    text = _oom_under(tmp_path, _LAYERS, "from vllm.model_executor.models.llama import LlamaForCausalLM\nLlamaForCausalLM()\n")
    egg = text.replace("/site-packages/vllm/", "/site-packages/vllm-0.1.2-py3.9-linux-x86_64.egg/vllm/")
    assert egg != text
    assert diagnose_without_patterns(egg).engine_version == "0.1.2"
    dev = text.replace("/site-packages/vllm/", "/site-packages/vllm-0.6.3.dev65+g7f60520d.cpu-py3.10-linux-x86_64.egg/vllm/")
    assert diagnose_without_patterns(dev).engine_version is None


# ---- a quantized kernel's shape check that blames the tensor-parallel size ---------------------------------------

_AWQ_CHECK = ("raise ValueError('The input size is not aligned with the quantized weight shape. "
              "This can be caused by too large tensor parallel size.')")


def _awq_failure(tmp_path: Path, launch: str) -> str:
    """sglang-0.5.9 sglang/srt/layers/quantization/awq.py:373 create_weights' check, under a launch command."""
    files = {"sglang/srt/layers/quantization/awq.py": f"def create_weights(*args):\n    {_AWQ_CHECK}\n"}
    run = traceback_of_installed(tmp_path, files, "from sglang.srt.layers.quantization.awq import create_weights\n"
                                                  "create_weights()\n")
    return launch + run.stderr


def test_a_kernel_shape_check_at_one_gpu_says_no_parallel_size_helps(tmp_path: Path) -> None:
    """sgl-project/sglang#1396 (the same error at any degree), vllm-project/vllm#9913 (one GPU): the checkpoint's shape."""
    diagnosis = diagnose_without_patterns(_awq_failure(
        tmp_path, "python -m sglang.launch_server --model-path /models/coder-v2-lite-awq --port 30000\n"))
    assert diagnosis.category == "quantization"
    checks = _checks(diagnosis)
    assert "tensor parallelism 1" in diagnosis.fix.steps[0] and "no tensor-parallel size helps" in diagnosis.fix.steps[0]
    assert "another checkpoint" in checks


def test_a_kernel_shape_check_with_the_degree_unknown_is_the_quantization_kernel(tmp_path: Path) -> None:
    diagnosis = diagnose_without_patterns(_awq_failure(tmp_path, ""))
    assert diagnosis.category == "quantization"
    checks = _checks(diagnosis)
    # both readings are explained, and no step claims the degree is 1
    assert "At tensor parallelism 1" in checks and "At a larger degree" in checks
    assert "The launch runs tensor parallelism 1" not in checks


def test_a_kernel_shape_check_at_a_larger_degree_is_the_degrees_arithmetic(tmp_path: Path) -> None:
    """QwenLM/Qwen3-VL#236, vllm-project/llm-compressor#57: a smaller degree divides the layer."""
    diagnosis = diagnose_without_patterns(_awq_failure(
        tmp_path, "python -m sglang.launch_server --model-path /models/m-awq --tp 8 --port 30000\n"))
    assert diagnosis.category == "parallel-config"
    assert "tensor parallelism 8" in diagnosis.root_cause


# ---- a hub id the hub's validator refuses ------------------------------------------------------------------------

_VALIDATOR = ("class HFValidationError(ValueError):\n    pass\n\n"
              "def validate_repo_id(repo_id):\n"
              "    raise HFValidationError(\"Repo id must use alphanumeric chars or '-', '_', '.', '--' and '..' are \"\n"
              "        \"forbidden, '-' and '.' cannot start or end the name, max length is 96: '\" + repo_id + \"'.\")\n")


def _refused_id(tmp_path: Path, launch: str, model: str) -> str:
    """huggingface_hub utils/_validators.py validate_repo_id's wording, raised for `model` under `launch`."""
    run = traceback_of_installed(tmp_path, {"huggingface_hub/utils/_validators.py": _VALIDATOR},
                                 f"from huggingface_hub.utils._validators import validate_repo_id\nvalidate_repo_id({model!r})\n")
    assert "HFValidationError" in run.stderr
    return launch + run.stderr


def test_a_branch_written_into_the_hub_id_is_named_with_the_releases_revision_flag(tmp_path: Path) -> None:
    """sgl-project/sglang#302: the `repo:branch` shorthand passed as the model path."""
    text = _refused_id(tmp_path, "python3 -m sglang.launch_server --model-path org/Model-7B-GPTQ:gptq-4bit-32g --port 30000\n",
                       "org/Model-7B-GPTQ:gptq-4bit-32g")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "model-path"
    checks = _checks(diagnosis)
    assert "':gptq-4bit-32g' after 'org/Model-7B-GPTQ'" in checks
    # SGLang's --revision exists from 0.4.0 on (the static catalogs): the range is said, and a local download beside it
    assert "--revision gptq-4bit-32g (SGLang 0.4.0 and later" in checks and "local directory" in checks


def test_a_release_without_a_revision_flag_gets_the_local_download_only(tmp_path: Path) -> None:
    text = _refused_id(tmp_path, "sglang 0.3.0\npython3 -m sglang.launch_server --model-path org/M-GPTQ:main-4bit\n",
                       "org/M-GPTQ:main-4bit")
    diagnosis = diagnose_without_patterns(text)
    checks = _checks(diagnosis)
    assert "SGLang 0.3.0 has no --revision" in checks and "--revision main-4bit" not in checks


def test_a_windows_path_read_as_a_hub_id_is_named_a_path(tmp_path: Path) -> None:
    """benjiyaya/HeartMuLa_ComfyUI#83: a local Windows directory the loader did not find."""
    diagnosis = diagnose_without_patterns(_refused_id(tmp_path, "", "C:\\models\\Model-7B"))
    checks = _checks(diagnosis)
    assert "is a Windows path" in checks and "--revision" not in checks


# ---- an adapter's module the server's LoRA does not hold ---------------------------------------------------------

def _lora_refusal(tmp_path: Path, weight: str, prepared: str, launch: str = "") -> str:
    """sglang-0.5.9 sglang/srt/lora/utils.py:151 get_target_module_name's wording."""
    body = ("def get_target_module_name(full_module_name, target_modules):\n"
            "    raise ValueError(f'Cannot find target module name for {full_module_name} in {target_modules}')\n")
    run = traceback_of_installed(tmp_path, {"sglang/srt/lora/utils.py": body},
                                 "from sglang.srt.lora.utils import get_target_module_name\n"
                                 f"get_target_module_name({weight!r}, {prepared})\n")
    return launch + run.stderr


def test_an_adapter_module_no_release_lora_targets_is_named_unsupported_without_the_flag(tmp_path: Path) -> None:
    """sgl-project/sglang#16550: a linear-attention projection, outside every choice of --lora-target-modules."""
    text = _lora_refusal(tmp_path, "base_model.model.model.layers.0.linear_attn.in_proj_xyz.lora_A.weight",
                         "{'qkv_proj'}")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "lora-config"
    steps = "\n".join(diagnosis.fix.steps)
    assert "'in_proj_xyz', which is not among the module kinds LoRA can target" in steps
    assert "no LoRA setting loads this adapter" in steps
    # the flag is named only as the source of the supported kinds, never as a change to make
    assert "including it" not in steps and "In SGLang: --lora-paths" not in steps


def test_an_adapter_module_the_release_targets_but_the_server_did_not_prepare_names_the_flag(tmp_path: Path) -> None:
    text = _lora_refusal(tmp_path, "base_model.model.model.layers.0.mlp.down_proj.lora_A.weight", "{'qkv_proj', 'o_proj'}",
                         "sglang 0.5.9\n")
    steps = "\n".join(diagnose_without_patterns(text).fix.steps)
    assert "'down_proj', a module kind SGLang 0.5.9 LoRA can target" in steps and "--lora-target-modules including it" in steps



# ---- a bare assertion on a server setting --------------------------------------------------------------------------

_BACKEND = ("class _Args:\n    disable_chunked_prefix_cache = True\n\n"
            "def get_global_server_args():\n    return _Args()\n\n"
            "def forward_extend():\n    assert not get_global_server_args().disable_chunked_prefix_cache\n")


def test_a_bare_assertion_on_a_server_setting_names_the_setting_and_what_changes_it(tmp_path: Path) -> None:
    """sglang-0.5.9 srt/layers/attention/flashattention_backend.py:943 (sgl-project/sglang#22780, #22682: a draft
    model's start-up adjustment turned the setting on for the whole process)."""
    run = traceback_of_installed(tmp_path, {"sglang/srt/layers/attention/flashattention_backend.py": _BACKEND},
                                 "from sglang.srt.layers.attention.flashattention_backend import forward_extend\n"
                                 "forward_extend()\n")
    diagnosis = diagnose_without_patterns(run.stderr)
    assert diagnosis.category == "engine-bug"
    steps = "\n".join(diagnosis.fix.steps)
    assert "reads the server setting disable_chunked_prefix_cache (the flag --disable-chunked-prefix-cache)" in steps
    assert "speculative-decoding draft model" in steps and "newer release" in steps


def test_an_assertion_on_a_local_value_is_not_read_as_a_setting(tmp_path: Path) -> None:
    body = "def forward_extend(chunk_idx=None):\n    assert chunk_idx is not None\n"
    run = traceback_of_installed(tmp_path, {"sglang/srt/layers/attention/flashattention_backend.py": body},
                                 "from sglang.srt.layers.attention.flashattention_backend import forward_extend\n"
                                 "forward_extend()\n")
    diagnosis = diagnose_without_patterns(run.stderr)
    assert "server setting" not in "\n".join(diagnosis.fix.steps)
