"""Stop 44 (h-sgl), in generic words (issue 28): SGLang's own recent failures that sat between neighbouring
categories.

- DeepEP's per-rank dispatch limit (`num_max_dispatch_tokens_per_rank`): DeepEP's assertion in its low-latency
  dispatch, SGLang's own `<= 1024` assert on it, and both wrapped in SGLang's "Capture cuda graph failed: …" are a
  sizing of the expert-parallel exchange against the batch one rank dispatches (parallel-config), not unclassified
  and not the capture (NVIDIA/srt-slurm#44, #42; sgl-project/sglang#29942; PR#11168 for the 1024 bound).
- An engine feature built for some kinds of models only ("HiRadixCache only supports MHA, MLA, and NSA (DSA)
  models") is a feature the model cannot use (feature-conflict), not a bug of the cache code it is raised in
  (sgl-project/sglang#26690).
- A shape mismatch raised on the line that copies a checkpoint tensor (`expert_data.copy_(loaded_weight)`) is a
  checkpoint that does not fit the parameter the release built (weight-loading: sgl-project/sglang#33670,
  ROCm/ATOM#1078); the same words on a line of the release's own arithmetic stay a bug of the release.
Tracebacks are real CPython's, from a site-packages tree laid out as SGLang's and DeepEP's; the wordings are the
engines' own templates, rebuilt in our own code."""

from __future__ import annotations

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

DEEPEP_ASSERT = ("Failed: Assertion error /build/DeepEP/csrc/deep_ep.cpp:1233 'x.size(0) == topk_idx.size(0) and "
                 "x.size(0) <= num_max_dispatch_tokens_per_rank'")

# DeepEP's buffer: its C++ runtime's assert surfaces as a RuntimeError raised by the extension (codecs.strict_errors
# raises the exception it is given from C, so the raising line is the Python caller's, as with the real extension).
_DEEP_EP_BUFFER = '''
import codecs


class _Runtime:
    low_latency_dispatch = staticmethod(codecs.strict_errors)


class Buffer:
    runtime = _Runtime()

    def low_latency_dispatch(self, x, topk_idx):
        self.runtime.low_latency_dispatch(x)
'''

_SGLANG_DISPATCHER = '''
from deep_ep.buffer import Buffer


class _DeepEPDispatcherImplLowLatency:
    def __init__(self, limit):
        self.num_max_dispatch_tokens_per_rank = limit
        assert self.num_max_dispatch_tokens_per_rank <= 1024

    def _dispatch_core(self, error):
        buffer = Buffer()
        buffer.low_latency_dispatch(error, None)
'''


def _dispatch_traceback(tmp_path: Path, script: str) -> str:
    files = {"deep_ep/buffer.py": _DEEP_EP_BUFFER, "sglang/srt/layers/moe/token_dispatcher/deepep.py": _SGLANG_DISPATCHER}
    proc = traceback_of_installed(tmp_path, files, script)
    assert proc.returncode != 0 and "Traceback" in proc.stderr, proc.stderr
    return proc.stderr




@pytest.mark.usefixtures("no_rules")
def test_deepeps_per_rank_dispatch_assert_is_a_parallel_sizing(tmp_path: Path) -> None:
    script = (f"from sglang.srt.layers.moe.token_dispatcher.deepep import _DeepEPDispatcherImplLowLatency\n"
              f"_DeepEPDispatcherImplLowLatency(128)._dispatch_core(RuntimeError({DEEPEP_ASSERT!r}))\n")
    diagnosis = diagnose_without_patterns(_dispatch_traceback(tmp_path, script))
    assert diagnosis.category == "parallel-config", diagnosis.title
    assert "DeepEP" in diagnosis.title
    assert "num_max_dispatch_tokens_per_rank" in check_texts(diagnosis)


@pytest.mark.usefixtures("no_rules")
def test_sglangs_bound_on_the_per_rank_limit_read_from_its_assert_line(tmp_path: Path) -> None:
    # A bare AssertionError: only the raising line names the limit (sglang 0.5.2+ token_dispatcher/deepep.py).
    script = ("from sglang.srt.layers.moe.token_dispatcher.deepep import _DeepEPDispatcherImplLowLatency\n"
              "_DeepEPDispatcherImplLowLatency(2048)\n")
    traceback = _dispatch_traceback(tmp_path, script)
    assert traceback.rstrip().endswith("AssertionError")
    assert diagnose_without_patterns(traceback).category == "parallel-config"


def _capture_failed(inner: str) -> str:
    """SGLang's CUDA graph runner wrapping the error a capture ran into (cuda_graph_runner.py CudaGraphRunner)."""
    return _scheduler_traceback(f'''
def capture():
    raise RuntimeError({inner!r})

try:
    capture()
except RuntimeError as e:
    raise Exception(f"Capture cuda graph failed: {{e}}\\nPossible solutions:\\n"
                    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\\n"
                    "2. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)\\n")
''')


def _scheduler_traceback(code: str) -> str:
    """`code`'s real traceback as SGLang's scheduler logs it, raised from the CUDA graph runner's file."""
    return "[2026-08-12 09:41:31 DP3 TP3 EP3] Scheduler hit an exception: " + real_traceback(
        code, "sglang/srt/model_executor/cuda_graph_runner.py")


def test_a_cuda_graph_capture_that_hit_the_dispatch_limit_is_filed_under_the_limit() -> None:
    diagnosis = diagnose_with_patterns(_capture_failed(DEEPEP_ASSERT))
    assert diagnosis.category == "parallel-config", (diagnosis.pattern, diagnosis.title)
    assert "cascade" in diagnosis.root_cause


def test_a_capture_failing_on_a_call_it_does_not_allow_stays_the_capture_pattern() -> None:
    # The look-alike: the same wrapper around a capture's own failure keeps the pattern and its fix.
    diagnosis = diagnose_with_patterns(_capture_failed("CUDA error: operation not permitted when stream is capturing"))
    assert diagnosis.pattern == "sglang-cuda-graph-capture-failed"
    assert diagnosis.category == "cuda-graph-capture"


_HIRADIX = '''
class HiRadixCache:
    def __init__(self, attention_kind):
        if attention_kind not in ("MHA", "MLA", "NSA"):
            raise ValueError(
                "HiRadixCache only supports MHA, MLA, and NSA (DSA) models"
            )
'''


@pytest.mark.usefixtures("no_rules")
def test_a_cache_the_release_builds_for_some_models_only_is_a_feature_conflict(tmp_path: Path) -> None:
    proc = traceback_of_installed(tmp_path, {"sglang/srt/mem_cache/hiradix_cache.py": _HIRADIX},
                                  "from sglang.srt.mem_cache.hiradix_cache import HiRadixCache\nHiRadixCache('CSA')\n")
    diagnosis = diagnose_without_patterns(proc.stderr)
    assert diagnosis.category == "feature-conflict", diagnosis.title
    assert "--enable-hierarchical-cache" in check_texts(diagnosis)


@pytest.mark.usefixtures("no_rules")
def test_a_singular_model_part_is_not_the_feature_for_some_models_wording() -> None:
    # vLLM's LoRA refusal names a part of one model ("on the model backbone"): its own category's words decide.
    line = ("ValueError: LoRA adapter /a contains weights for classification head score, but token_classify only "
            "supports LoRA on the model backbone.\n")
    assert diagnose_without_patterns(line).category == "lora-config"


_FUSED_MOE_LAYER = '''
import codecs


class _Tensor:
    copy_ = staticmethod(codecs.strict_errors)  # torch's C++ copy_: the raising line is the caller's


def _load_w13(expert_data, loaded_weight):
    expert_data.copy_(loaded_weight)


def process_weights_after_loading(w13_input_scale, w13_weight_scale_2):
    w13_alpha = w13_input_scale * w13_weight_scale_2
    return w13_alpha
'''


def _weight_copy_traceback(tmp_path: Path, error: str) -> str:
    """CPython's traceback of the fused MoE layer's weight loader raising `error` (a RuntimeError) on its copy line."""
    script = ("from sglang.srt.layers.moe.fused_moe_triton.layer import _Tensor, _load_w13\n"
              f"_load_w13(_Tensor(), RuntimeError({error!r}))\n")
    return traceback_of_installed(tmp_path, {"sglang/srt/layers/moe/fused_moe_triton/layer.py": _FUSED_MOE_LAYER}, script).stderr


@pytest.mark.usefixtures("no_rules")
def test_a_shape_mismatch_copying_a_checkpoint_tensor_is_weight_loading(tmp_path: Path) -> None:
    mismatch = "The size of tensor a (6144) must match the size of tensor b (3072) at non-singleton dimension 1"
    printed = _weight_copy_traceback(tmp_path, mismatch)
    assert "expert_data.copy_(loaded_weight)" in printed
    assert diagnose_without_patterns(printed).category == "weight-loading"


@pytest.mark.usefixtures("no_rules")
def test_the_same_words_in_the_releases_own_arithmetic_stay_a_bug(tmp_path: Path) -> None:
    # The look-alike (sgl-project/sglang PR#21630): scales of different lengths multiplied after loading.
    class_source = _FUSED_MOE_LAYER + '''

class _Scale:
    def __mul__(self, other):
        raise RuntimeError("The size of tensor a (256) must match the size of tensor b (128) at non-singleton dimension 0")
'''
    script = ("from sglang.srt.layers.quantization.modelopt_quant import _Scale, process_weights_after_loading\n"
              "process_weights_after_loading(_Scale(), _Scale())\n")
    proc = traceback_of_installed(tmp_path, {"sglang/srt/layers/quantization/modelopt_quant.py": class_source}, script)
    assert "w13_alpha = w13_input_scale * w13_weight_scale_2" in proc.stderr
    assert diagnose_without_patterns(proc.stderr).category == "engine-bug"


_EAGLE_WORKER = '''
class Qwen2ForCausalLM:
    """An ordinary causal LM, loaded as the draft: it has none of an EAGLE draft head's hooks."""


class _Runner:
    model = Qwen2ForCausalLM()


class EAGLEWorker:
    def __init__(self):
        self.draft_model_runner = _Runner()

    def share_embedding(self, embed):
        self.draft_model_runner.model.set_embed(embed)

    def read_positions(self):
        return self.positions
'''


def _eagle_traceback(tmp_path: Path, call: str) -> str:
    script = f"from sglang.srt.speculative.eagle_worker import EAGLEWorker\nEAGLEWorker().{call}\n"
    return traceback_of_installed(tmp_path, {"sglang/srt/speculative/eagle_worker.py": _EAGLE_WORKER}, script).stderr


@pytest.mark.usefixtures("no_rules")
def test_a_draft_without_an_eagle_heads_hooks_is_a_speculative_model_misfit(tmp_path: Path) -> None:
    # sgl-project/sglang#36528: EAGLE3 with no draft path loads the target (an ordinary model) as its own draft.
    diagnosis = diagnose_without_patterns(_eagle_traceback(tmp_path, "share_embedding(None)"))
    assert diagnosis.category == "spec-decoding-args", diagnosis.title
    assert "draft" in diagnosis.title


@pytest.mark.usefixtures("no_rules")
def test_another_missing_attribute_of_the_speculative_worker_stays_a_bug(tmp_path: Path) -> None:
    # The look-alike: the worker's own attribute (vllm-project/vllm#34607's shape, in SGLang's file) names no model.
    assert diagnose_without_patterns(_eagle_traceback(tmp_path, "read_positions()")).category == "engine-bug"


@pytest.mark.usefixtures("no_rules")
def test_the_gpu_failing_on_a_weight_loaders_copy_is_the_hardware(tmp_path: Path) -> None:
    # The look-alike of the loaded_weight cue (sgl-project/sglang#3204): an ECC error raised on the same copy line.
    ecc = "CUDA error: uncorrectable ECC error encountered"
    assert diagnose_without_patterns(_weight_copy_traceback(tmp_path, ecc)).category == "cuda-error"
