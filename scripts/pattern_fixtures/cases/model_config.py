"""The model's configuration: a model path transformers cannot load a config from, and a context
length longer than the model's.

Patterns: sglang-model-path-not-found, sglang-context-length-too-long.
"""

from __future__ import annotations

from ..engine import Frame
from ..mirror import (
    SCHEDULER,
    SCHEDULER_TOP,
    SERVER_ARGS,
    VERSIONS,
    forward_frames,
    launch_crash,
    raise_frame,
    scheduler_crash,
    to_server_args,
)

MODEL_CONFIG = "sglang/srt/configs/model_config.py"
CONFIGURATION_UTILS = "transformers/configuration_utils.py"

# ServerArgs.__post_init__ (0.5.9) reading the model's config through transformers
TO_HF_CONFIG = (
    *to_server_args("0.5.9"),
    Frame(SERVER_ARGS, "__post_init__", "self._handle_gpu_memory_settings(gpu_mem)", lineno=742),
    Frame(SERVER_ARGS, "_handle_gpu_memory_settings", "model_config = self.get_model_config()", lineno=1010),
    Frame(SERVER_ARGS, "get_model_config", "self.model_config = ModelConfig.from_server_args(self)", lineno=5200),
    Frame(MODEL_CONFIG, "from_server_args", "return ModelConfig(model_path=model_path or server_args.model_path, trust_remote_code=server_args.trust_remote_code)", lineno=230),
    Frame(MODEL_CONFIG, "__init__", "self.hf_config = get_config(self.model_path, trust_remote_code=trust_remote_code, revision=revision, model_override_args=self.model_override_args)", lineno=110),
    Frame("sglang/srt/utils/hf_transformers_utils.py", "get_config", "config = AutoConfig.from_pretrained(model, trust_remote_code=trust_remote_code, revision=revision, **kwargs)", lineno=250),
    Frame("transformers/models/auto/configuration_auto.py", "from_pretrained", "config_dict, unused_kwargs = PretrainedConfig.get_config_dict(pretrained_model_name_or_path, **kwargs)", lineno=1300),
    Frame(CONFIGURATION_UTILS, "get_config_dict", "config_dict, kwargs = cls._get_config_dict(pretrained_model_name_or_path, **kwargs)", lineno=662),
)
CONFIG_NOT_FOUND = raise_frame(CONFIGURATION_UTILS, "_get_config_dict", """
    raise OSError(
        f"Can't load the configuration of '{pretrained_model_name_or_path}'. If you were trying to load it"
        " from 'https://huggingface.co/models', make sure you don't have a local directory with the same"
        f" name. Otherwise, make sure '{pretrained_model_name_or_path}' is the correct path to a directory"
        f" containing a {configuration_file} file"
    )
    """, env=(("pretrained_model_name_or_path", "'/models/Qwen2.5-7B-Instruct'"), ("configuration_file", "'config.json'")), lineno=721)
CONFIG_UNREADABLE = raise_frame(CONFIGURATION_UTILS, "_get_config_dict", "with open(config_file, encoding='utf-8') as reader:\n    pass",
                                env=(("config_file", "'/proc/1/mem'"),), lineno=740)

_CONTEXT_LENGTH_0_5 = """
    if context_length > derived_context_len:
        reason = "Target model's" if is_draft_model else "User-specified"
        msg = (
            f"Warning: {reason} context_length ({context_length}) is greater than the derived context_length ({derived_context_len}). "
            f"This may lead to incorrect model outputs or CUDA errors. Note that the derived context_length may differ from max_position_embeddings in the model's config."
        )
        if envs.SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN.get() or is_in_ci():
            self.context_len = context_length
        else:
            raise ValueError(
                f"{msg} To allow overriding this maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"
            )
    """
CONTEXT_LENGTH_CHECK = {
    "0.4.10.post2": """
    if context_length > derived_context_len:
        if get_bool_env_var("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"):
            self.context_len = context_length
        else:
            raise ValueError(
                f"User-specified context_length ({context_length}) is greater than the derived context_length ({derived_context_len}). "
                f"This may lead to incorrect model outputs or CUDA errors. Note that the derived context_length may differ from max_position_embeddings in the model's config. "
                f"To allow overriding this maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"
            )
    """,
    "0.5.9": _CONTEXT_LENGTH_0_5,
    "0.5.23": _CONTEXT_LENGTH_0_5,
}
CONTEXT_LENGTH_ENV = (
    ("context_length", "131072"), ("derived_context_len", "32768"), ("is_draft_model", "False"),
    ("get_bool_env_var", "lambda name: False"), ("is_in_ci", "lambda: False"),
    ("envs", "NS(SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=NS(get=lambda: False))"), ("self", "NS()"),
)


def context_length_too_long(version: str) -> tuple[Frame, ...]:
    """The Scheduler building its ModelConfig; 0.4.10.post2 checks in __init__, later versions in
    _derive_context_length."""
    chain: tuple[Frame, ...] = (
        SCHEDULER_TOP[version],
        Frame(SCHEDULER, "__init__", "self.model_config = ModelConfig.from_server_args(server_args)", lineno=320),
        Frame(MODEL_CONFIG, "from_server_args", "return ModelConfig(model_path=model_path or server_args.model_path, context_length=server_args.context_length, is_draft_model=is_draft_model)", lineno=230),
    )
    check = "__init__"
    if version != "0.4.10.post2":
        check = "_derive_context_length"
        chain = (*chain, Frame(MODEL_CONFIG, "__init__", "self._derive_context_length(context_length)", lineno=200))
    return (*chain, raise_frame(MODEL_CONFIG, check, CONTEXT_LENGTH_CHECK[version], env=CONTEXT_LENGTH_ENV, lineno=360))


# a request longer than the context: rejected while serving, not at start-up
PROMPT_TOO_LONG = (*forward_frames("0.5.9")[:3], raise_frame(SCHEDULER, "handle_generate_request", """
    if len(req.origin_input_ids) >= self.max_req_input_len:
        raise ValueError(
            f"Input length ({len(req.origin_input_ids)} tokens) exceeds the maximum allowed length "
            f"({self.max_req_input_len} tokens). Use a shorter input or enable --allow-auto-truncate."
        )
    """, env=(("req", "NS(origin_input_ids=[0] * 40000)"), ("self", "NS(max_req_input_len=32762)")), lineno=1500))

CASES = (
    launch_crash("sglang-model-path-not-found", "positive-0.5.9", (*TO_HF_CONFIG, CONFIG_NOT_FOUND)),
    launch_crash("sglang-model-path-not-found", "negative-permission-denied", (*TO_HF_CONFIG, CONFIG_UNREADABLE)),

    *(scheduler_crash("sglang-context-length-too-long", f"positive-{version}", context_length_too_long(version)) for version in VERSIONS),
    scheduler_crash("sglang-context-length-too-long", "negative-prompt-too-long", PROMPT_TOO_LONG),
)
