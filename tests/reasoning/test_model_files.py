"""Model paths and files (issue 28, class 7): a weights file given as the model, files missing from a checkpoint, a
hub repo that is not there.

The logs are our own text in the real wordings (facts/model_files.toml cites each raise site); the weights-file
message was reproduced with the oracle venvs' transformers (AutoConfig.from_pretrained on a *.safetensors file)."""

from __future__ import annotations

import dataclasses

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from tests.reasoning.diagnosed import app_traceback, category_of, first_diagnosis

SGLANG_WEIGHTS_FILE = """\
$ python3 -m sglang.launch_server --model-path /models/qwen/model.safetensors --port 30000 --tp-size 1
[2026-04-01 10:00:00] Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/utils/hf_transformers_utils.py", line 300, in get_config
    config = AutoConfig.from_pretrained(
  File "/usr/local/lib/python3.10/dist-packages/transformers/configuration_utils.py", line 760, in _get_config_dict
    raise OSError(f"It looks like the config file at '{resolved_config_file}' is not a valid JSON file.")
OSError: It looks like the config file at '/models/qwen/model.safetensors' is not a valid JSON file.
"""


def test_a_weights_file_given_as_the_model_asks_for_the_checkpoint_directory_naming_the_file_s_own() -> None:
    """The file's directory holds a checkpoint only when the file came from one: a corrected command pointing there
    would fail again on a file downloaded alone, so the model flag is asked for (needs_input), with no command."""
    diagnosis = first_diagnosis(SGLANG_WEIGHTS_FILE)
    assert diagnosis.basis == "rule" and diagnosis.category == "model-path"
    assert diagnosis.pattern == "rule-model-files-weights-file"
    fix = diagnosis.fix
    assert fix is not None and [(op.flag, op.value) for op in fix.flags] == [("--model-path", None)]
    assert fix.needs_input == ("--model-path",) and fix.command is None
    assert "/models/qwen if it holds config.json" in fix.summary
    assert any("config.json" in step for step in fix.steps)


def test_a_weights_file_without_the_launch_command_is_advice_in_words() -> None:
    log = SGLANG_WEIGHTS_FILE.split("\n", 1)[1]  # no command line
    diagnosis = first_diagnosis(log)
    assert diagnosis.category == "model-path" and diagnosis.fix is not None
    assert diagnosis.fix.command is None and not diagnosis.fix.flags
    assert "/models/qwen" in diagnosis.fix.summary


# transformers/utils/hub.py cached_files: the directory exists but lacks a file.
MISSING_TOKENIZER = """\
[2026-04-02 09:00:00] server_args=ServerArgs(model_path='/data/llama-ft', port=30000, ...)
[2026-04-02 09:00:03] Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/transformers/utils/hub.py", line 438, in cached_files
    raise OSError(
OSError: /data/llama-ft does not appear to have a file named tokenizer.model. Checkout 'https://huggingface.co//data/llama-ft/tree/main' for available files.
"""


def test_a_file_missing_from_the_model_directory_is_named_with_the_directory() -> None:
    diagnosis = first_diagnosis(MISSING_TOKENIZER)
    assert diagnosis.basis == "rule" and diagnosis.category == "model-path"
    assert diagnosis.fix is not None and "tokenizer.model" in diagnosis.fix.summary and "/data/llama-ft" in diagnosis.fix.summary


# A shard model.safetensors.index.json lists, not on disk (FileNotFoundError from the loader's open).
MISSING_SHARD = """\
INFO 05-02 10:00:00 [api_server.py:1] vLLM API server version 0.11.2
(EngineCore_DP0 pid=900) ERROR 05-02 10:01:00 [core.py:708] EngineCore failed to start.
(EngineCore_DP0 pid=900) ERROR 05-02 10:01:00 [core.py:708] Traceback (most recent call last):
(EngineCore_DP0 pid=900) ERROR 05-02 10:01:00 [core.py:708]   File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/model_loader/weight_utils.py", line 560, in safetensors_weights_iterator
(EngineCore_DP0 pid=900) ERROR 05-02 10:01:00 [core.py:708]     with safe_open(st_file, framework="pt") as f:
(EngineCore_DP0 pid=900) ERROR 05-02 10:01:00 [core.py:708] FileNotFoundError: [Errno 2] No such file or directory: '/models/qwen-72b/model-00003-of-00004.safetensors'
"""


def test_a_missing_shard_is_named() -> None:
    diagnosis = first_diagnosis(MISSING_SHARD)
    assert diagnosis.basis == "rule" and diagnosis.category == "model-path"
    assert diagnosis.pattern == "rule-model-files-missing-shard-local"
    assert diagnosis.fix is not None and "model-00003-of-00004.safetensors" in diagnosis.fix.summary


# huggingface_hub/utils/_http.py hf_raise_for_status: a 401 for a repo id (misspelled, or private without a token).
REPO_NOT_FOUND = """\
$ HF_TOKEN=hf_NotARealTokenButLooksLikeOne12345 python3 -m sglang.launch_server --model-path my-org/private-model --port 30000
[2026-04-03 11:00:01] Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/huggingface_hub/utils/_http.py", line 409, in hf_raise_for_status
    raise _format(RepositoryNotFoundError, message, response) from e
huggingface_hub.errors.RepositoryNotFoundError: 401 Client Error. (Request ID: Root=1-abc)

Repository Not Found for url: https://huggingface.co/api/models/my-org/private-model/revision/main.
Please make sure you specified the correct `repo_id` and `repo_type`.
"""


def test_a_repo_the_hub_does_not_show_says_set_hf_token_and_prints_no_token() -> None:
    diagnosis = first_diagnosis(REPO_NOT_FOUND)
    assert diagnosis.basis == "rule" and diagnosis.category == "model-path"
    assert diagnosis.fix is not None and "set HF_TOKEN" in diagnosis.fix.summary and "my-org/private-model" in diagnosis.fix.summary
    assert "hf_NotARealToken" not in repr(dataclasses.asdict(diagnosis))


def test_vllm_s_model_path_pattern_keeps_precedence() -> None:
    # vllm/transformers_utils/config.py get_config, reproduced with the vLLM 0.33.0 venv on a *.safetensors path
    log = (
        "INFO 05-02 10:00:00 [api_server.py:1] vLLM API server version 0.33.0\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/transformers_utils/config.py", line 923, in get_config\n'
        "    raise ValueError(error_message) from e\n"
        "ValueError: Invalid repository ID or local directory specified: '/models/qwen/model.safetensors'.\n"
    )
    diagnosis = diagnose_text(log, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern == "vllm-model-path-invalid"


@pytest.mark.parametrize(
    "final_line",
    [
        "FileNotFoundError: [Errno 2] No such file or directory: '/data/prompts.jsonl'",
        "NotADirectoryError: [Errno 20] Not a directory: '/data/out.txt/part-0'",
    ],
)
def test_a_missing_file_of_the_user_s_own_script_is_left_alone(final_line: str) -> None:
    assert category_of(app_traceback(final_line)) != "model-path"


def test_a_model_file_inside_a_weights_file_path_is_the_weights_file_case() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.10/dist-packages/transformers/utils/hub.py", line 400, in cached_files\n'
        "    open(resolved)\n"
        "NotADirectoryError: [Errno 20] Not a directory: '/models/m/model.safetensors/config.json'\n"
    )
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-model-files-weights-file" and diagnosis.fix is not None
    assert "/models/m" in diagnosis.fix.summary


def test_a_gguf_file_read_as_a_directory_is_never_told_to_pass_the_directory() -> None:
    """GGUF is one file by design: read as a config directory, the file is missing or the release predates the engine's
    GGUF support (not blind: split 13's "before" grading), never "give the directory"."""
    log = SGLANG_WEIGHTS_FILE.replace("/models/qwen/model.safetensors", "/models/qwen/qwen-7b-q4_k_m.gguf")
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-model-files-gguf-file" and diagnosis.category == "model-path"
    fix = diagnosis.fix
    assert fix is not None and not fix.flags and fix.command is None
    assert "directory" not in fix.summary and "GGUF" in fix.summary
