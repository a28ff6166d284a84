"""Rule rule-lora-adapter-not-found (reasoning/lora_adapter.py): vLLM's LoRA loader finding no adapter files at the
path it was given.  Real CPython prints the traceback of a mirrored WorkerLoRAManager._load_adapter (vllm/lora/
worker_manager.py: a FileNotFoundError re-raised as "Loading lora {name} failed: No adapter found for {path}");
vllm-project/vllm#30690 is the thread (a training run's checkpoint directory served as an adapter)."""

from __future__ import annotations

from tests.helpers import real_traceback
from tests.reasoning.diagnosed import first_diagnosis

LOAD_ADAPTER = """
    def _load_adapter(name, path):
        try:
            open(path + "/adapter_config.json")
        except FileNotFoundError as e:
            raise ValueError(f"Loading lora {name} failed: No adapter found for {path}") from e

    _load_adapter("table_qc", "/data/train/output/qwen_lora_output/checkpoint-57")
"""


def test_no_adapter_at_the_path_asks_for_the_directory_not_for_a_flag() -> None:
    log = ("vllm serve Qwen/Qwen2.5-VL-7B-Instruct --enable-lora --lora-modules "
           "table_qc=/data/train/output/qwen_lora_output/checkpoint-57\n"
           + real_traceback(LOAD_ADAPTER, "vllm/lora/worker_manager.py"))
    diagnosis = first_diagnosis(log)
    assert (diagnosis.pattern, diagnosis.category, diagnosis.basis) == (
        "rule-lora-adapter-not-found", "lora-config", "rule")
    assert "/data/train/output/qwen_lora_output/checkpoint-57" in diagnosis.root_cause
    assert diagnosis.fix is not None and not diagnosis.fix.flags and diagnosis.fix.command is None
    assert any("adapter_config.json" in step for step in diagnosis.fix.steps)


def test_the_path_quoted_in_the_engine_s_list_ends_at_the_quote() -> None:
    log = ('ERROR 12-15 18:57:10 [core.py:918] ValueError: Loading lora ["table_qc failed: No adapter found for '
           '/data/ckpt/checkpoint-57"]\n')
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-lora-adapter-not-found"
    assert diagnosis.evidence == ("the path vLLM found no adapter at: /data/ckpt/checkpoint-57",)


def test_another_adapter_registry_s_wording_is_not_this_rule() -> None:
    log = real_traceback('raise ValueError("No adapter found for UI kit: shadcn")', "app.py")
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern != "rule-lora-adapter-not-found"
