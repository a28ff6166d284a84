"""Write the tiny model directories the oracle runs use: a config.json each, no weights, no tokenizer; and a
LoRA adapter directory (``tiny-lora``: its adapter_config.json only, as PEFT writes it).

Argument validation only reads the HF config (architecture, context length, head counts), so this is all
SGLang needs to get through ``prepare_server_args`` and ``check_server_args`` offline.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

_LLAMA_COMMON: dict[str, Any] = {
    "model_type": "llama",
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "hidden_act": "silu",
    "max_position_embeddings": 4096,
    "rms_norm_eps": 1e-5,
    "rope_theta": 10000.0,
    "vocab_size": 256,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}

MODELS: dict[str, dict[str, Any]] = {
    "tiny-llama": {**_LLAMA_COMMON, "architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2},
    # An EAGLE-3 draft head as SpecForge/SGLang write it: one decoder layer and a reduced draft vocabulary.
    "tiny-eagle3": {
        **_LLAMA_COMMON,
        "architectures": ["LlamaForCausalLMEagle3"],
        "num_hidden_layers": 1,
        "draft_vocab_size": 128,
    },
}

# A LoRA adapter for tiny-llama, for the launches that name one with --lora-paths (the LoRA and radix cache
# check of SGLang 0.4.10.post2 refuses any adapter path; validation reads no weights).
ADAPTERS: dict[str, dict[str, Any]] = {
    "tiny-lora": {
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "base_model_name_or_path": "tiny-llama",
        "r": 8,
        "lora_alpha": 16,
        "lora_dropout": 0.0,
        "target_modules": ["q_proj", "v_proj"],
        "bias": "none",
    },
}


def write_models(root: Path) -> dict[str, Path]:
    """Create (or refresh) every model and adapter dir under ``root``; returns name -> directory."""
    out: dict[str, Path] = {}
    for files, filename in ((MODELS, "config.json"), (ADAPTERS, "adapter_config.json")):
        for name, config in files.items():
            model_dir = root / name
            model_dir.mkdir(parents=True, exist_ok=True)
            text = json.dumps(config, indent=2, sort_keys=True) + "\n"
            config_path = model_dir / filename
            if not config_path.exists() or config_path.read_text() != text:
                config_path.write_text(text)
            out[name] = model_dir
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_models.py MODELS_DIR")
    for name, path in write_models(Path(sys.argv[1])).items():
        print(f"{name}: {path}")
