"""Stop 50 (category14), in generic words (issue 28): classes split 13 filed under the wrong category or gave advice
that does not help, each now read from its own shape.

- Host memory refused to a weights file's mapping (torch's MapAllocator: `unable to mmap N bytes from file <path>:
  Cannot allocate memory (12)`) is host-memory, whatever words the file's path holds: a path quoted in a message
  names where the model is kept, and a quantization word in a directory's name must not decide the category.
- A program assigning to a configuration the installed release made read-only (CPython's frozen dataclasses,
  `FrozenInstanceError: cannot assign to field 'max_model_len'`; SGLang 0.5.23's resolved ServerArgs, `… assigned after
  resolution; server_args is read-only`) is a version mismatch (dependency-version) in either direction, not
  context-length by the field's name (huggingface/transformers#3540: a newer release was the fix; #25648: transformers
  4.32 froze TrainingArguments); the engine's own frame making the assignment is that release's bug.
- A request with more images than the server's per-prompt limit, in vLLM's chat front end's wording ("… may be provided
  in one request.", vllm/entrypoints/chat_utils.py), is the launch limit's value, with the flag the releases have.
- CUDA refused in a forked worker where no script of the user's made the call (a paste of the error line alone, the
  engine's or a wrapper's frames) is the engine release's worker start method (pytorch/pytorch#145170,
  vllm-project/vllm#12754), with vLLM's VLLM_WORKER_MULTIPROC_METHOD named; the user's own script keeps its own row.
- A script in a project's checkout that cannot import a submodule of that project's own package is the checkout
  (DataArcTech/SQL-R1#4), not an installed package's version; a package another module shadows ('… is not a package',
  1KE-JI/UPFT#4, or a stray transformers.py) is that module, whichever file it is, never the checkout.
- An object-storage model URI refused by the hub's name check (huggingface_hub validate_repo_id) is a loader handed
  the URI unresolved (vllm-project/vllm#23236, vllm-project/aibrix#766), not a missing local path.
- vLLM's "Failed to infer device type" names the Python NVML binding its platform detection calls, with the debug step.
Tracebacks are real CPython's, from our own code laid out as the engines' and the libraries' files; the engines'
messages are their own templates."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import (
    check_texts,
    diagnose_with_patterns,
    diagnose_without_patterns,
    real_traceback,
    traceback_of_installed,
)
from tests.test_categories_cat6 import no_rules  # noqa: F401 (no_rules: the fixture, used below)

# torch's MapAllocator message (aten/src/ATen/MapAllocator.cpp), with a quantized checkpoint's cache path in it.
_MMAP_REFUSED = ("unable to mmap 16933256392 bytes from file </root/.cache/huggingface/hub/models--Org--Model-30B-GPTQ-Int4/"
                 "snapshots/0123abcd/model.safetensors>: Cannot allocate memory (12)")


@pytest.mark.usefixtures("no_rules")
def test_a_weights_file_the_host_could_not_map_is_host_memory_not_its_paths_quantization() -> None:
    traceback = real_traceback(f'''
def safetensors_weights_iterator(files):
    for st_file in files:
        raise RuntimeError({_MMAP_REFUSED!r})

safetensors_weights_iterator(["model.safetensors"])
''', "vllm/model_executor/model_loader/weight_utils.py")
    diagnosis = diagnose_without_patterns(traceback)
    assert diagnosis.category == "host-memory", (diagnosis.category, diagnosis.root_cause)
    checks = check_texts(diagnosis)
    assert "not the GPU's" in checks and "overcommit" in checks
    assert "quantization_config" not in checks


@pytest.mark.usefixtures("no_rules")
def test_errno_12_while_the_weights_are_read_gets_the_mapping_check() -> None:
    # CPython's own OSError for ENOMEM, raised under the engine's weights iterator.
    traceback = real_traceback('''
import errno, os

def safetensors_weights_iterator(files):
    raise OSError(errno.ENOMEM, os.strerror(errno.ENOMEM))

safetensors_weights_iterator(["model-00001-of-00002.safetensors"])
''', "vllm/model_executor/model_loader/weight_utils.py")
    assert "OSError: [Errno 12] Cannot allocate memory" in traceback
    diagnosis = diagnose_without_patterns(traceback)
    assert diagnosis.category == "host-memory"
    assert "not the GPU's" in check_texts(diagnosis)


@pytest.mark.usefixtures("no_rules")
def test_a_quantization_word_outside_a_path_still_names_quantization() -> None:
    # The look-alike: the method named in the message's own words, not in a directory's name.
    traceback = real_traceback('''
raise ValueError("The quantization method gptq is not supported for the current GPU. Minimum capability: 60. "
                 "Current capability: 52.")
''', "vllm/model_executor/model_loader/loader.py")
    assert diagnose_without_patterns(traceback).category == "quantization"


def _frozen_field_assigned_in(tmp_path: Path, module: str) -> subprocess.CompletedProcess[str]:
    """The real traceback of `module` (a file path) assigning a field of vLLM's frozen ModelConfig dataclass."""
    files = {"vllm/config/model.py": ("from dataclasses import dataclass\n\n\n@dataclass(frozen=True)\nclass ModelConfig:\n"
                                      "    max_model_len: int = 4096\n"),
             module: ("from vllm.config.model import ModelConfig\n\n\ndef assign():\n"
                      "    config = ModelConfig()\n    config.max_model_len = 8192\n")}
    dotted = module.removesuffix(".py").replace("/", ".")
    return traceback_of_installed(tmp_path, files, f"from {dotted} import assign\nassign()\n")


@pytest.mark.usefixtures("no_rules")
def test_a_frozen_config_field_is_a_version_mismatch_not_its_fields_category(tmp_path: Path) -> None:
    # CPython's own frozen dataclass refusing the assignment a wrapper's code makes on an engine's config object.
    proc = _frozen_field_assigned_in(tmp_path, "somewrapper/engine.py")
    assert "FrozenInstanceError: cannot assign to field 'max_model_len'" in proc.stderr, proc.stderr
    diagnosis = diagnose_without_patterns(proc.stderr)
    assert diagnosis.category == "dependency-version", (diagnosis.category, diagnosis.title)
    assert "read-only" in diagnosis.title
    checks = check_texts(diagnosis)
    # Either side may be the newer one (transformers froze TrainingArguments in 4.32 and freed them later): no direction.
    assert "do not upgrade" not in checks and "either may be the newer one" in checks, checks


@pytest.mark.usefixtures("no_rules")
def test_a_frozen_config_field_assigned_by_the_engines_own_code_says_it_is_that_releases_bug(tmp_path: Path) -> None:
    proc = _frozen_field_assigned_in(tmp_path, "vllm/engine/arg_utils.py")
    assert "FrozenInstanceError" in proc.stderr, proc.stderr
    checks = check_texts(diagnose_without_patterns(proc.stderr))
    assert "do not upgrade" not in checks and "a bug of that engine release" in checks, checks


@pytest.mark.usefixtures("no_rules")
def test_sglangs_read_only_server_args_pasted_alone_is_a_version_mismatch_not_an_engine_bug() -> None:
    # sglang 0.5.23 srt/server_args.py ServerArgs.__setattr__'s own words, the paste's only line.
    text = ("This causes worker startup to fail with:\n"
            "AttributeError: server_args.some_metrics_id assigned after resolution; server_args is read-only -- use "
            "get_context().override(source, ...) to change resolved config; a value one runner owns travels as a "
            "constructor argument.\n")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "dependency-version", (diagnosis.category, diagnosis.title)
    assert "Try a newer release" not in check_texts(diagnosis)


@pytest.mark.usefixtures("no_rules")
def test_more_images_than_the_chat_front_end_allows_is_the_launch_limit() -> None:
    traceback = real_traceback('''
class BaseMultiModalItemTracker:
    def add(self, modality, current_count, allowed_count):
        if current_count > allowed_count:
            raise ValueError(
                f"At most {allowed_count} {modality}(s) may be provided in "
                "one request.")

BaseMultiModalItemTracker().add("image", 2, 1)
''', "vllm/entrypoints/chat_utils.py")
    diagnosis = diagnose_without_patterns(traceback)
    assert diagnosis.category == "invalid-flag-value", (diagnosis.category, diagnosis.title)
    checks = check_texts(diagnosis)
    assert "--limit-mm-per-prompt" in checks and "not by the request" in checks


_FORKED = ("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use "
           "the 'spawn' start method\n")


@pytest.mark.usefixtures("no_rules")
def test_cuda_refused_in_a_forked_worker_pasted_alone_is_the_engines_start_method() -> None:
    diagnosis = diagnose_without_patterns("详情：\n" + _FORKED + "4 GPUs\n")
    assert diagnosis.category == "dependency-version", (diagnosis.category, diagnosis.title)
    assert "VLLM_WORKER_MULTIPROC_METHOD" in check_texts(diagnosis)


def _forked_traceback(filename: str) -> str:
    """torch's refusal raised in a function of `filename` (real CPython's traceback)."""
    return real_traceback(f"""
def start_worker():
    raise RuntimeError({_FORKED.split(": ", 1)[1].strip()!r})

start_worker()
""", filename)


@pytest.mark.usefixtures("no_rules")
def test_cuda_refused_in_the_engines_own_worker_is_the_engines_start_method() -> None:
    # vLLM 0.5's worker process setting its device (pytorch/pytorch#145170: init_device under
    # multiproc_worker_utils.py), raised below the engine's own frame.
    diagnosis = diagnose_without_patterns(_forked_traceback("vllm/worker/worker.py"))
    assert diagnosis.category == "dependency-version", (diagnosis.category, diagnosis.title)


@pytest.mark.usefixtures("no_rules")
def test_cuda_refused_in_a_child_of_the_users_own_script_keeps_the_scripts_checks() -> None:
    # The look-alike: the user's own script forked the child that touched CUDA.
    diagnosis = diagnose_without_patterns(_forked_traceback("my_inference.py"))
    assert diagnosis.category == "cuda-error", (diagnosis.category, diagnosis.title)
    assert "set_start_method('spawn')" in check_texts(diagnosis)


def _checkout_traceback(tmp_path: Path, checkout: str, script_import: str) -> str:
    """A script at the root of a project's checkout `checkout` (holding its package `cosyvoice` without the submodule
    the script imports), run from there: CPython's own ModuleNotFoundError, its temporary root shown as /data."""
    root = tmp_path / checkout
    (root / "cosyvoice").mkdir(parents=True)
    (root / "cosyvoice" / "__init__.py").write_text("")
    (root / "example.py").write_text(f"{script_import}\n")
    proc = subprocess.run([sys.executable, str(root / "example.py")], capture_output=True, text=True, cwd=root,
                          timeout=60)
    assert "ModuleNotFoundError" in proc.stderr, proc.stderr
    return proc.stderr.replace(str(tmp_path), "/data")


@pytest.mark.usefixtures("no_rules")
def test_a_checkouts_script_missing_its_own_projects_submodule_is_the_checkout(tmp_path: Path) -> None:
    traceback = _checkout_traceback(tmp_path, "CosyVoice", "from cosyvoice.vllm.model import Model")
    diagnosis = diagnose_without_patterns(traceback)
    assert diagnosis.category == "dependency-version"
    assert "own project" in diagnosis.title, diagnosis.title
    assert "pip show <package>" not in check_texts(diagnosis)


@pytest.mark.usefixtures("no_rules")
def test_a_script_outside_the_projects_checkout_keeps_the_package_checks(tmp_path: Path) -> None:
    # The look-alike: the directory the script runs from is not named like the package it imports.
    traceback = _checkout_traceback(tmp_path, "work", "from cosyvoice.vllm.model import Model")
    diagnosis = diagnose_without_patterns(traceback)
    assert "own project" not in diagnosis.title, diagnosis.title


@pytest.mark.usefixtures("no_rules")
def test_a_script_in_a_directory_named_like_an_engines_dependency_keeps_the_package_checks(tmp_path: Path) -> None:
    # The look-alike: ~/transformers/run.py importing a submodule the installed transformers lacks, no checkout of it.
    root = tmp_path / "transformers"
    root.mkdir()
    (root / "run.py").write_text("import json.no_such_module\n")
    proc = subprocess.run([sys.executable, str(root / "run.py")], capture_output=True, text=True, cwd=root, timeout=60)
    traceback = proc.stderr.replace("json.no_such_module", "transformers.models.newmodel").replace(str(tmp_path), "/home/u")
    assert "No module named 'transformers.models.newmodel'" in traceback, traceback
    diagnosis = diagnose_without_patterns(traceback)
    assert "own project" not in diagnosis.title, diagnosis.title


@pytest.mark.usefixtures("no_rules")
def test_a_projects_package_shadowed_for_a_script_in_a_subdirectory_is_the_shadowing_module(tmp_path: Path) -> None:
    # A plain module beside the script takes the package's name (1KE-JI/UPFT#4): CPython's "… is not a package".
    scripts = tmp_path / "UPFT" / "inference"
    scripts.mkdir(parents=True)
    (scripts / "utils.py").write_text("")
    (scripts / "run.py").write_text("from utils.utils import load\n")
    proc = subprocess.run([sys.executable, str(scripts / "run.py")], capture_output=True, text=True, cwd=scripts,
                          timeout=60)
    assert "'utils' is not a package" in proc.stderr, proc.stderr
    diagnosis = diagnose_without_patterns(proc.stderr.replace(str(tmp_path), "/home/user/project"))
    assert "shadowing" in diagnosis.title, diagnosis.title
    assert "project's root first on PYTHONPATH" in check_texts(diagnosis)


@pytest.mark.usefixtures("no_rules")
def test_a_stray_file_shadowing_an_installed_package_is_not_the_checkout(tmp_path: Path) -> None:
    # The look-alike: a file named like an installed package beside the script, no checkout involved.
    scripts = tmp_path / "serve"
    scripts.mkdir()
    (scripts / "transformers.py").write_text("")
    (scripts / "run.py").write_text("from transformers.models.llama import LlamaConfig\n")
    proc = subprocess.run([sys.executable, str(scripts / "run.py")], capture_output=True, text=True, cwd=scripts,
                          timeout=60)
    assert "'transformers' is not a package" in proc.stderr, proc.stderr
    diagnosis = diagnose_without_patterns(proc.stderr.replace(str(tmp_path), "/home/user"))
    assert "own project" not in diagnosis.title, diagnosis.title
    checks = check_texts(diagnosis)
    assert "re-clone the checkout" not in checks and "rename or move it" in checks, checks


_HUB_REFUSAL = ("raise OSError(\"Repo id must be in the form 'repo_name' or 'namespace/repo_name': "
                "'{uri}'. Use `repo_type` argument if needed.\")")


def _processor_traceback(tmp_path: Path, uri: str) -> str:
    """SGLang's processor loader handing `uri` to a hub loader that refuses it (huggingface_hub's validate_repo_id)."""
    files = {"huggingface_hub/utils/_validators.py": f"def validate_repo_id(repo_id):\n    {_HUB_REFUSAL.format(uri=uri)}\n",
             "sglang/srt/utils/hf_transformers_utils.py": ("from huggingface_hub.utils._validators import validate_repo_id"
                                                           "\n\n\ndef get_processor(name):\n    validate_repo_id(name)\n")}
    proc = traceback_of_installed(tmp_path, files, f"from sglang.srt.utils.hf_transformers_utils import get_processor\n"
                                                   f"get_processor({uri!r})\n")
    assert "Repo id must be in the form" in proc.stderr, proc.stderr
    return proc.stderr


def test_an_object_storage_uri_refused_by_the_hub_check_is_a_loader_given_the_uri(tmp_path: Path) -> None:
    diagnosis = diagnose_with_patterns(_processor_traceback(tmp_path, "s3://bucket/models/Org/Model-0.8B"))
    assert diagnosis.category == "model-path"
    assert diagnosis.pattern != "sglang-model-path-not-found", diagnosis.pattern
    checks = check_texts(diagnosis)
    assert "object-storage URI" in checks and "General guidance" in checks
    # Whether the engine resolves the URI at all is not in the log: said as unknown, never as done for the weights.
    assert "resolved it for the weights" not in checks and "is not in the log" in checks, checks


def test_a_local_path_refused_by_the_hub_check_keeps_the_missing_path_pattern(tmp_path: Path) -> None:
    diagnosis = diagnose_with_patterns(_processor_traceback(tmp_path, "/models/Org/Model-0.8B"))
    assert diagnosis.pattern == "sglang-model-path-not-found", diagnosis.pattern


def test_vllms_device_type_not_inferred_names_the_nvml_binding() -> None:
    traceback = real_traceback('''
class DeviceConfig:
    def __init__(self, device="auto"):
        raise RuntimeError("Failed to infer device type")

DeviceConfig()
''', "vllm/config.py")
    checks = check_texts(diagnose_with_patterns(traceback))
    assert "nvidia-ml-py" in checks and "pynvml" in checks and "VLLM_LOGGING_LEVEL=DEBUG" in checks



# vLLM's own get_config refusal (vllm-0.11.2 vllm/transformers_utils/config.py:594, 0.33.0 :912), quoting the model as
# given: vllm-project/vllm#23236's shape, an s3:// model handed to vLLM's config loader.
_VLLM_GET_CONFIG_REFUSAL = ("Invalid repository ID or local directory specified: '{model}'.\\nPlease verify the "
                            "following requirements:\\n1. Provide a valid Hugging Face repository ID.\\n")


def test_vllms_own_config_refusal_of_an_object_storage_uri_is_a_loader_given_the_uri() -> None:
    traceback = real_traceback(f'''
def get_config(model):
    raise ValueError("{_VLLM_GET_CONFIG_REFUSAL.format(model="s3://bucket/models/Org/Model")}")

get_config("s3://bucket/models/Org/Model")
''', "vllm/transformers_utils/config.py")
    diagnosis = diagnose_with_patterns(traceback)
    assert diagnosis.category == "model-path", (diagnosis.category, diagnosis.title)
    assert "object-storage URI" in check_texts(diagnosis)


def test_vllms_own_config_refusal_of_a_local_path_keeps_the_missing_path_pattern() -> None:
    traceback = real_traceback(f'''
def get_config(model):
    raise ValueError("{_VLLM_GET_CONFIG_REFUSAL.format(model="/models/Org/Model")}")

get_config("/models/Org/Model")
''', "vllm/transformers_utils/config.py")
    assert diagnose_with_patterns(traceback).pattern == "vllm-model-path-invalid"


def test_transformers_not_a_valid_model_identifier_for_an_object_storage_uri_is_not_a_missing_path() -> None:
    # transformers utils/hub.py cached_files' OSError (sglang-0.5.23's transformers :570), raised under vLLM's loader.
    traceback = real_traceback('''
def get_config(model):
    raise OSError(f"{model} is not a local folder and is not a valid model identifier listed on "
                  "'https://huggingface.co/models'")

get_config("s3://bucket/models/Org/Model")
''', "vllm/transformers_utils/config.py")
    diagnosis = diagnose_with_patterns(traceback)
    assert diagnosis.pattern != "vllm-model-path-invalid", diagnosis.pattern
    assert diagnosis.category == "model-path", (diagnosis.category, diagnosis.title)
    assert "object-storage URI" in check_texts(diagnosis)
