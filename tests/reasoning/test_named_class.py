"""No "unclassified" where the evidence names a class, and the class the evidence names over a neighbour's words
(issue 28; facts/categories.toml, reasoning/general.py).

Each wording is our own text in the shape the code site raises it (the oracle venvs' installed sources, torch's
and CPython's); the traceback is CPython's own, raised at a file named like the site's.  The patterns are left out
(an empty library) so that what is tested is the category table and the reasoning, not a pattern."""

from __future__ import annotations

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.diagnosis.library import PatternSet
from logsleuth.models import Diagnosis
from tests.helpers import real_traceback

NO_PATTERNS = PatternSet(patterns=[], errors=[])
SGLANG = "[2026-03-02 10:00:00] sglang version 0.5.9\n[2026-03-02 10:00:00] server_args=ServerArgs(model_path='/m', tp_size=4)\n"
VLLM = "INFO 03-02 10:00:00 [api_server.py:1] vLLM API server version 0.11.2\n"


def _diagnosis(text: str) -> Diagnosis:
    report = diagnose_text(text, DiagnoseOptions(include_user_patterns=False), patterns=NO_PATTERNS)
    assert report.failures, "no failure found"
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None
    return diagnosis


def _raised(message_code: str, filename: str, call: str = "site()") -> str:
    return real_traceback(f"def site():\n    {message_code}\n\n{call}\n", filename)


# (expected category, log, the code site the wording and file come from)
CASES = [
    # A kernel's tile or group against a layer's size per GPU (Marlin), the launch's degree not shown: the checkpoint's
    # shape against the quantization kernel (it fails at degree 1 too: sgl-project/sglang#1396, vllm-project/vllm#9913);
    # a launch with a degree above 1 makes it parallelism arithmetic (test_a_tile_that_does_not_divide_a_size_on_one_gpu…).
    ("quantization",
     VLLM + _raised(
         'raise ValueError("Weight output_size_per_partition = 576 is not divisible by  min_thread_n = 64. '
         'Consider reducing tensor_parallel_size or running with --quantization gptq.")',
         "vllm/model_executor/layers/quantization/utils/marlin_utils.py"),
     "vllm-0.11.2 vllm/model_executor/layers/quantization/utils/marlin_utils.py verify_marlin_supports_shape"),
    ("quantization",
     VLLM + _raised(
         'raise ValueError("Weight input_size_per_partition = 1408 is not divisible by group_size = 128. '
         'Consider reducing tensor_parallel_size or running with --quantization gptq.")',
         "vllm/model_executor/layers/quantization/utils/marlin_utils.py"),
     "vllm-0.11.2 vllm/model_executor/layers/quantization/utils/marlin_utils.py verify_marlin_supports_shape"),
    # A keyword the release's argument class does not have: an argument error, not a bug of the engine.
    ("unknown-flag",
     VLLM + real_traceback(
         "class EngineArgs:\n    def __init__(self, model=None):\n        self.model = model\n\n"
         "def from_kwargs(**kwargs):\n    return EngineArgs(**kwargs)\n\nfrom_kwargs(model='m', max_num_batched_token=8192)\n",
         "vllm/engine/arg_utils.py"),
     "CPython's TypeError for a keyword the dataclass lacks: vllm-0.11.2 vllm/entrypoints/llm.py LLM.__init__ -> EngineArgs(**kwargs)"),
    # transformers' AutoConfig raises a bare KeyError for a model_type it does not know.
    ("unsupported-architecture",
     SGLANG + real_traceback(
         "CONFIG_MAPPING = {'llama': object}\n\ndef for_model(config_dict):\n"
         "    return CONFIG_MAPPING[config_dict['model_type']]\n\nfor_model({'model_type': 'qwen3_next'})\n",
         "transformers/models/auto/configuration_auto.py"),
     "transformers (sglang-0.5.9 venv) transformers/models/auto/configuration_auto.py from_pretrained: CONFIG_MAPPING[config_dict['model_type']]"),
    # The rendezvous store's timeout at init: the distributed layer, not a hang of the server.
    ("nccl",
     "torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 1/2 clients joined.\n",
     "torch torch/csrc/distributed/c10d/TCPStore.cpp (TCPStore waiting for its workers; DistStoreError)"),
    ("nccl",
     "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv "
     "operation to complete\n",
     "gloo gloo/transport/tcp/unbound_buffer.cc waitRecv (torch's CPU process groups)"),
    # An index error raised by the engine's own code, with a clean traceback: a bug of that release.
    ("engine-bug",
     SGLANG + _raised("return [0, 1][2]", "sglang/srt/managers/schedule_batch.py"),
     "CPython IndexError 'list index out of range' raised at the engine's own line"),
    ("engine-bug",
     SGLANG + _raised("return 7 // 0", "sglang/srt/model_executor/forward_batch_info.py"),
     "CPython ZeroDivisionError raised at the engine's own line"),
    # No wheel of a package for this platform: pip lists no version at all.
    ("gpu-arch-unsupported",
     "ERROR: Could not find a version that satisfies the requirement sgl-kernel==0.3.16 (from versions: none)\n"
     "ERROR: No matching distribution found for sgl-kernel==0.3.16\n",
     "pip src/pip/_internal/resolution/resolvelib/factory.py: '(from versions: none)' when no file of the package fits"),
]


@pytest.mark.parametrize(("category", "log", "site"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_the_class_the_evidence_names_is_the_category(category: str, log: str, site: str) -> None:
    diagnosis = _diagnosis(log)
    assert diagnosis.category == category, (site, diagnosis.category, diagnosis.root_cause)
    assert diagnosis.fix is not None and diagnosis.fix.steps


def test_an_unclassified_failure_after_an_error_line_naming_a_cause_is_that_cause() -> None:
    """The failure's own words name nothing, the error line just before it does (nccl's WARN line format,
    src/include/debug.h): the lines before a failure are evidence too."""
    log = (
        SGLANG
        + "node-a:338:1220 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.1.0.2<45321> failed : "
        "Connection refused\n"
        + _raised('raise RuntimeError("rank 0 gave up")', "my_launcher/run.py")
    )
    diagnosis = _diagnosis(log)
    assert diagnosis.category == "nccl", diagnosis
    assert diagnosis.basis == "general"


def test_a_keyword_error_in_the_users_own_call_is_still_no_engine_bug() -> None:
    """The argument error names the release's class; a TypeError about a keyword in any other call is left alone."""
    diagnosis = _diagnosis(VLLM + real_traceback(
        "def helper(a):\n    return a\n\nhelper(b=1)\n", "vllm/model_executor/models/llama.py"))
    assert diagnosis.category == "engine-bug", diagnosis


def test_a_tile_that_does_not_divide_a_size_on_one_gpu_is_no_parallel_degree() -> None:
    """The shape of vllm-project/vllm#9913: the same Marlin message on a launch with tensor parallelism 1 (the
    command sets none): nothing was split, so the kernel's tile against the full size is the quantization's
    limit, and no smaller tensor-parallel degree is advised."""
    command = "vllm serve /models/coder-lite-awq --dtype float16\n"
    marlin = _raised(
        'raise ValueError("Weight input_size_per_partition = 10944 is not divisible by min_thread_k = 128. '
        'Consider reducing tensor_parallel_size or running with --quantization gptq.")',
        "vllm/model_executor/layers/quantization/utils/marlin_utils.py")
    diagnosis = _diagnosis(VLLM + command + marlin)
    assert diagnosis.category == "quantization", diagnosis
    split = _diagnosis(VLLM + command.replace("--dtype", "--tensor-parallel-size 4 --dtype") + marlin)
    assert split.category == "parallel-config", split
