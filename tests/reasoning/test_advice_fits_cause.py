"""Advice that fits the cause (issue 28, stop 52): the classes split 15's after grading found misleading or buried.

- a GGUF repo's hub id read as an incomplete local checkpoint ("put config.json into it"): transformers'
  cached_files raises the same words for a repo id as for a directory (transformers/utils/hub.py); the path's shape
  and the GGUF name decide (vllm-project/vllm#8401; the file case vllm-project/vllm#7291);
- a trust-remote-code check for an architecture the engines implement natively (sgl-project/sglang#5441), or for a
  launch that gives the flag already;
- an invalid choice whose wanted value is listed under a suffixed name (sgl-project/sglang#10835: 'triton' and
  'triton_attn');
- the engine's own code calling its own tokenizer wrapper with a keyword it lacks (sgl-project/sglang#9625, fixed by
  its PR #9630): an engine regression, not tokenizer files;
- a local device-count assertion on a valid multi-node launch (vllm-project/vllm#28873, vllm/v1/worker/gpu_worker.py):
  the launch's arithmetic before smaller degrees;
- torch's out-of-memory figures showing the failing process's own allocations fill the GPU (sgl-project/sglang#8833);
- a LoRA adapter targeting modules the model does not serve LoRA on (modelscope/ms-swift#4974,
  thinking-machines-lab/tinker-cookbook#193; vllm/lora/models.py).

Tracebacks are real CPython's, from site-packages trees laid out as the engines' and transformers' own; the messages
are the engines' templates, rebuilt in our own code."""

from __future__ import annotations

import argparse
import contextlib
import io
from pathlib import Path

from logsleuth.models import Diagnosis
from tests.helpers import traceback_of_installed
from tests.reasoning.diagnosed import first_diagnosis

# transformers/utils/hub.py cached_files: the words it raises for a directory or a repo id lacking a file.
_HUB = '''
def cached_files(path_or_repo_id, filename="config.json", revision="main"):
    raise OSError(
        f"{path_or_repo_id} does not appear to have a file named {filename}. Checkout "
        f"'https://huggingface.co/{path_or_repo_id}/tree/{revision}' for available files."
    )
'''
_VLLM_CONFIG = '''
from transformers.utils.hub import cached_files


def get_config(model):
    return cached_files(model)
'''


def _hub_failure(tmp_path: Path, model: str) -> str:
    run = traceback_of_installed(
        tmp_path, {"transformers/utils/hub.py": _HUB, "vllm/transformers_utils/config.py": _VLLM_CONFIG},
        f"from vllm.transformers_utils.config import get_config\nget_config({model!r})\n")
    assert "OSError" in run.stderr
    return f"$ vllm serve {model} --port 8000\nINFO 09-12 10:00:00 api_server.py:1] vLLM API server version 0.6.1\n{run.stderr}"


def _text(diagnosis: Diagnosis) -> str:
    fix = diagnosis.fix
    fixed = (fix.summary, *fix.steps) if fix else ()
    return " ".join((diagnosis.title, diagnosis.root_cause, *fixed))


def test_a_gguf_repo_id_is_loaded_as_a_file_never_given_a_config(tmp_path: Path) -> None:
    diagnosis = first_diagnosis(_hub_failure(tmp_path, "someorg/Some-Model-12B-GGUF"))
    text = _text(diagnosis)
    assert diagnosis.pattern == "rule-model-files-gguf-repo" and diagnosis.category == "model-path"
    assert "Put config.json" not in text and "Do not add files to the hub repo" in text
    assert ".gguf file" in text and "--tokenizer set to the original" in text


def test_a_quantization_tag_marks_a_gguf_repo_too(tmp_path: Path) -> None:
    diagnosis = first_diagnosis(_hub_failure(tmp_path, "someorg/Some-Model-8B:Q4_K_M"))
    assert diagnosis.pattern == "rule-model-files-gguf-repo"


def test_another_hub_id_lacking_a_file_is_not_told_to_add_it(tmp_path: Path) -> None:
    diagnosis = first_diagnosis(_hub_failure(tmp_path, "someorg/some-lora-adapter"))
    text = _text(diagnosis)
    assert diagnosis.category == "model-path" and "Put config.json" not in text
    assert "repo id" in diagnosis.root_cause and "never add files to someone else's hub repo" in text


def test_a_local_directory_lacking_a_file_still_gets_it_named(tmp_path: Path) -> None:
    diagnosis = first_diagnosis(_hub_failure(tmp_path, "/data/models/llama-ft"))
    assert diagnosis.fix is not None and diagnosis.fix.summary.startswith("Put config.json into /data/models/llama-ft")


# The registries' refusal (sglang/srt/models/registry.py, vllm/model_executor/models/registry.py), pasted alone.
_REFUSED = ("ValueError: Model architectures ['{arch}'] are not supported for now. Supported architectures: "
            "dict_keys(['BaichuanForCausalLM', 'ChatGLMModel', 'LlamaForCausalLM'])\n")


def test_a_native_architecture_the_release_lacks_gets_no_remote_code_check() -> None:
    diagnosis = first_diagnosis(_REFUSED.format(arch="Glm4ForCausalLM"))
    assert diagnosis.category == "unsupported-architecture"
    assert "trust-remote-code" not in _text(diagnosis)


def test_an_architecture_no_engine_implements_keeps_the_remote_code_check() -> None:
    diagnosis = first_diagnosis(_REFUSED.format(arch="AcmeNovelForCausalLM"))
    assert "trust-remote-code" in _text(diagnosis)


def _argparse_line(prog: str, flag: str, choices: list[str], value: str) -> str:
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument(flag, choices=choices)
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.suppress(SystemExit):
        parser.parse_args([flag, value])
    return stderr.getvalue().strip().splitlines()[-1]


def test_an_invalid_choice_shows_the_listed_values_sharing_its_name() -> None:
    line = _argparse_line("launch_server.py", "--mm-attention-backend", ["sdpa", "fa3", "triton_attn", "ascend_attn"],
                          "triton")
    diagnosis = first_diagnosis(f"usage: launch_server.py [-h] [--mm-attention-backend ...]\n{line}\n")
    fix = diagnosis.fix
    assert fix is not None and "'triton_attn'" in fix.summary
    assert "nor any of them under another spelling" not in fix.summary
    assert not any(op.value for op in fix.flags)  # a candidate to check, never set for the user


def test_a_choice_sharing_no_name_is_still_said_to_match_none() -> None:
    line = _argparse_line("launch_server.py", "--mm-attention-backend", ["sdpa", "fa3", "triton_attn"], "xformers")
    diagnosis = first_diagnosis(f"usage: launch_server.py [-h] [--mm-attention-backend ...]\n{line}\n")
    assert diagnosis.fix is not None and "nor any of them under another spelling" in diagnosis.fix.summary


# SGLang's own tokenizer wrapper and its OpenAI chat endpoint calling it (sglang/srt/tokenizer/tiktoken_tokenizer.py,
# sglang/srt/entrypoints/openai/serving_chat.py _apply_jinja_template).
_TIKTOKEN = '''
class TiktokenTokenizer:
    def apply_chat_template(self, messages, tokenize, add_generation_prompt, tools=None):
        return []
'''
_SERVING_CHAT = '''
from sglang.srt.tokenizer.tiktoken_tokenizer import TiktokenTokenizer


def _apply_jinja_template(messages):
    tokenizer = TiktokenTokenizer()
    return tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True, reasoning_effort=None)
'''


def test_the_engine_calling_its_own_tokenizer_wrapper_wrongly_is_an_engine_regression(tmp_path: Path) -> None:
    run = traceback_of_installed(
        tmp_path, {"sglang/srt/tokenizer/tiktoken_tokenizer.py": _TIKTOKEN,
                   "sglang/srt/entrypoints/openai/serving_chat.py": _SERVING_CHAT},
        "from sglang.srt.entrypoints.openai.serving_chat import _apply_jinja_template\n_apply_jinja_template([])\n")
    assert "unexpected keyword argument 'reasoning_effort'" in run.stderr
    diagnosis = first_diagnosis(run.stderr)
    text = _text(diagnosis)
    assert diagnosis.pattern == "rule-engine-own-signature" and diagnosis.category == "engine-bug"
    assert diagnosis.engine == "sglang" and "TiktokenTokenizer.apply_chat_template()" in text
    assert "trust-remote-code" not in text and "tokenizer_config.json" not in text


# vLLM's v1 GPU worker checking the workers of this node against its devices (vllm/v1/worker/gpu_worker.py).
_GPU_WORKER = '''
class Worker:
    def __init__(self, local_world_size, visible_device_count):
        self.local_world_size = local_world_size
        self.visible_device_count = visible_device_count

    def init_device(self):
        assert self.local_world_size <= self.visible_device_count, (
            f"local_world_size ({self.local_world_size}) must be less than or equal to the number of visible "
            f"devices ({self.visible_device_count}).")
'''


def _device_check(tmp_path: Path, command: str) -> Diagnosis:
    run = traceback_of_installed(tmp_path, {"vllm/v1/worker/gpu_worker.py": _GPU_WORKER},
                                 "from vllm.v1.worker.gpu_worker import Worker\nWorker(16, 8).init_device()\n")
    assert "AssertionError: local_world_size (16)" in run.stderr
    return first_diagnosis(f"{command}\n{run.stderr}")


def test_a_multinode_launch_whose_sizes_fit_keeps_its_degrees(tmp_path: Path) -> None:
    diagnosis = _device_check(tmp_path, "$ vllm serve org/model --tensor-parallel-size 8 --pipeline-parallel-size 2 --nnodes 2")
    text = _text(diagnosis)
    assert diagnosis.pattern == "rule-local-devices" and "consistent" in diagnosis.root_cause
    assert "Keep the parallel sizes" in text and "smaller" not in diagnosis.fix.summary  # type: ignore[union-attr]


def test_a_device_check_with_no_launch_checks_the_arithmetic_before_smaller_degrees(tmp_path: Path) -> None:
    diagnosis = _device_check(tmp_path, "")
    text = _text(diagnosis)
    assert diagnosis.pattern == "rule-local-devices" and "16 is 2 nodes of 8 devices" in text
    assert "--tensor-parallel-size" not in text  # no flag the log does not give


def test_a_one_node_launch_asking_too_many_is_told_so(tmp_path: Path) -> None:
    diagnosis = _device_check(tmp_path, "$ vllm serve org/model --tensor-parallel-size 16 --nnodes 1")
    assert diagnosis.fix is not None and "at most 8 on one node" in diagnosis.fix.summary


# torch's out-of-memory message (c10/cuda/CUDACachingAllocator.cpp), in a container where NVML misses the process.
_OOM_OWN = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.98 GiB. GPU 1 has a total capacity of "
            "79.10 GiB of which 92.25 MiB is free. Including non-PyTorch memory, this process has 0 bytes memory in use. "
            "Of the allocated memory 76.93 GiB is allocated by PyTorch, and 46.14 MiB is reserved by PyTorch but "
            "unallocated.\n")


def test_an_oom_whose_figures_show_the_process_own_memory_says_so() -> None:
    text = _text(first_diagnosis(_OOM_OWN))
    assert "PyTorch in the failing process itself holds 76.98 GiB of the GPU's 79.10 GiB" in text
    assert "held by other processes" not in text


# vLLM's LoRA loader (vllm/lora/models.py LoRAModel.from_local_checkpoint).
_LORA_MODELS = '''
def from_local_checkpoint(lora_dir, expected_lora_modules, target_modules):
    unexpected_modules = [m for m in target_modules if m not in expected_lora_modules]
    if unexpected_modules:
        raise ValueError(
            f"While loading {lora_dir}, expected target modules in {expected_lora_modules} but received "
            f"{unexpected_modules}. Please verify that the loaded LoRA module is correct")
'''


def test_an_adapter_on_a_vision_tower_is_named_with_the_way_out(tmp_path: Path) -> None:
    run = traceback_of_installed(
        tmp_path, {"vllm/lora/models.py": _LORA_MODELS},
        "from vllm.lora.models import from_local_checkpoint\n"
        "from_local_checkpoint('/ckpt/lora-vl', ['q_proj', 'k_proj', 'v_proj', 'o_proj'], "
        "['q_proj', 'vision_model.encoder.qkv', 'vision_model.encoder.qkv'])\n")
    diagnosis = first_diagnosis(run.stderr)
    text = _text(diagnosis)
    assert diagnosis.pattern == "rule-lora-target-modules" and diagnosis.category == "lora-config"
    assert "'vision_model.encoder.qkv'" in text and "outside the language model" in text
    assert "merge the adapter" in text and "--max-lora-rank" not in text
