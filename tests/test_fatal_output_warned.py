"""A failure the paste shows only as a warning (issue 28 item 1, stop 46, branch warnfound): a line of
facts/incapacity_warnings.toml, each row the code site's own words, is the failure of a paste that shows no other
while it is the paste's strongest evidence (tracebacks/warned_failures.py).

The rows' words, quoted as their code sites print them: torch's warnings for a GPU its build has no kernels for
(torch/cuda/__init__.py `_check_capability`, `_warn_unsupported_code`: vllm-project/vllm#21488, Hellod035/LeggedLab#26,
turboderp-org/exllamav2#786, pytorch/pytorch#182250), torch's CUDA initialization warning (c10/cuda/CUDAFunctions.cpp:
PromtEngineer/localGPT#678, RazgrizHsu/immich-deduper#126, pytorch/pytorch#159954), vLLM's V0 scheduler dropping a
prompt longer than its step (vllm/core/scheduler.py: vllm-project/vllm#13370, #10440).  Healthy pastes that print warnings stay "no failure": the
warnings of healthy starts (kserve/kserve#4470, vllm-project/vllm#44106), transformers' tokenizer-length warning
(netease-youdao/BCEmbedding#62), xformers' extension warning before a healthy start (Comfy-Org/ComfyUI-Manager#926)."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from logsleuth.facts.categories import table
from logsleuth.facts.incapacity_warnings import WINDOW, incapacity_warning, incapacity_warnings
from logsleuth.tracebacks.warned_failures import REACH
from tests.helpers import real_traceback
from tests.test_fatal_output_shapes import OPTIONS, primary

TORCH_SM = [
    "/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:287: UserWarning: ",
    "NVIDIA GeForce RTX 5070 Ti with CUDA capability sm_120 is not compatible with the current PyTorch installation.",
    "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.",
    "If you want to use the NVIDIA GeForce RTX 5070 Ti GPU with PyTorch, please check the instructions at "
    "https://pytorch.org/get-started/locally/",
    "",
    "  warnings.warn(",
]
TORCH_OLD_GPU = [
    "/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:262: UserWarning:",
    "    Found GPU0 NVIDIA GeForce GTX 1080 Ti which is of cuda capability 6.1.",
    "    PyTorch no longer supports this GPU because it is too old.",
    "    The minimum cuda capability supported by this library is 7.5.",
    "",
    "  warnings.warn(",
]
TORCH_CC = [
    "/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:371: UserWarning: Found GPU0 Tesla V100-PCIE-32GB which "
    "is of compute capability (CC) 7.0.",
    "The following list shows the CCs this version of PyTorch was built for and the hardware CCs it supports:",
    "- 7.5 which supports hardware CC >=7.5,<8.0",
    "- 8.0 which supports hardware CC >=8.0,<9.0 except {8.7}",
    "  _warn_unsupported_code(d, device_cc, code_ccs)",
]
TORCH_CUDA_INIT = [
    "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:129: UserWarning: CUDA initialization: The NVIDIA "
    "driver on your system is too old (found version 11040). Please update your GPU driver by downloading and "
    "installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: "
    "https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver. "
    "(Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)",
    "  return torch._C._cuda_getDeviceCount() > 0",
]
VLLM_PROMPT_IGNORED = [
    "INFO 02-13 07:19:11 async_llm_engine.py:211] Added request chatcmpl-59c4.",
    "WARNING 02-13 07:19:11 scheduler.py:949] Input prompt (32889 tokens) is too long and exceeds limit of 2048",
    "INFO 02-13 07:19:11 async_llm_engine.py:179] Finished request chatcmpl-59c4.",
]
# (lines, the failure's type, the start of its message, its category)
WARNED = {
    "torch-sm": (TORCH_SM, "UserWarning",
                 "NVIDIA GeForce RTX 5070 Ti with CUDA capability sm_120 is not compatible with the current PyTorch "
                 "installation. The current PyTorch install supports CUDA capabilities sm_50", "gpu-arch-unsupported"),
    "torch-old-gpu": (TORCH_OLD_GPU, "UserWarning",
                      "PyTorch no longer supports this GPU because it is too old. The minimum cuda capability supported "
                      "by this library is 7.5.", "gpu-arch-unsupported"),
    "torch-cc": (TORCH_CC, "UserWarning", "Found GPU0 Tesla V100-PCIE-32GB which is of compute capability (CC) 7.0.",
                 "gpu-arch-unsupported"),
    # a driver older than torch's CUDA: the driver/runtime mismatch row (stop 56), not the CUDA-call failure's
    "torch-cuda-init": (TORCH_CUDA_INIT, "UserWarning",
                        "CUDA initialization: The NVIDIA driver on your system is too old (found version 11040).",
                        "dependency-version"),
    "vllm-prompt-ignored": (VLLM_PROMPT_IGNORED, "request ignored",
                            "Input prompt (32889 tokens) is too long and exceeds limit of 2048", "context-length"),
}
SERVER_READY = "INFO:     Application startup complete."


def _log(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def _found(log: str) -> bool:
    return bool(diagnose_text(log, OPTIONS).failures)


@pytest.mark.parametrize("shown", sorted(WARNED))
def test_a_paste_whose_only_failure_is_the_warning_reports_it(shown: str) -> None:
    lines, type_name, message, category = WARNED[shown]
    found_type, found_message, found_category = primary(_log(lines))
    assert (found_type, found_category) == (type_name, category)
    assert found_message.startswith(message)


@pytest.mark.parametrize("shown", sorted(WARNED))
def test_the_warning_in_a_sentence_or_behind_a_container_prefix_is_read_too(shown: str) -> None:
    lines, type_name, _, _ = WARNED[shown]
    assert primary(_log([f"vllm-1  | {line}" for line in lines]))[0] == type_name
    warning = next(line for line in lines if incapacity_warning(line) is not None)
    assert primary(f"I get this when I start it: {warning.strip()}\n")[0] == type_name


@pytest.mark.parametrize("shown", sorted(WARNED))
def test_the_server_coming_up_after_it_means_it_was_survived(shown: str) -> None:
    lines = WARNED[shown][0]
    assert not _found(_log([*lines, SERVER_READY]))


@pytest.mark.parametrize("shown", sorted(WARNED))
def test_a_paste_that_goes_on_well_past_it_does_not_blame_it(shown: str) -> None:
    lines = WARNED[shown][0]
    later = [f"INFO 02-13 07:2{i % 10}:11 metrics.py:453] Avg prompt throughput: 0.0 tokens/s, Running: 1 reqs"
             for i in range(REACH + 1)]
    assert not _found(_log([*lines, *later]))
    assert _found(_log([*lines, *later[: REACH - len(lines)]]))


@pytest.mark.parametrize("shown", sorted(WARNED))
def test_a_traceback_in_the_paste_stays_the_failure(shown: str) -> None:
    printed = real_traceback("""
        def load_model():
            raise RuntimeError("CUDA error: no kernel image is available for execution on the device")

        load_model()
    """)
    log = _log(WARNED[shown][0]) + printed
    assert primary(log)[:2] == ("RuntimeError", "CUDA error: no kernel image is available for execution on the device")


def test_vllm_finding_no_platform_on_a_benchmark_client_is_no_failure() -> None:
    """vllm/platforms/__init__.py logs 'No platform detected' in any process that imports vLLM on a host without a GPU:
    a benchmark client's output after it is a healthy run (stop 46's review)."""
    log = _log([
        "INFO 04-01 18:01:58 [__init__.py:243] No platform detected, vLLM is running on UnspecifiedPlatform",
        "============ Serving Benchmark Result ============",
        "Successful requests:                     100",
        "Request throughput (req/s):              4.21",
        "==================================================",
    ])
    assert not _found(log)


@pytest.mark.parametrize("lines", [
    # transformers' tokenizer-length warning: the tokenizer's own limit, the run goes on
    ["Token indices sequence length is longer than the specified maximum sequence length for this model (781 > 512). "
     "Running this sequence through the model will result in indexing errors"],
    # xformers' extension warning: a healthy start prints it too; the feature falls back
    ["WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:",
     "    PyTorch 2.4.0+cu121 with CUDA 1201 (you have 2.3.1+cu121)",
     "  Memory-efficient attention, SwiGLU, sparse and more won't be available."],
    # torch's warning of a GPU newer than its build's range: PTX runs on it (no incapacity)
    ["Found GPU0 NVIDIA GB10 which is of cuda capability 12.1. Minimum and Maximum cuda capability supported by this "
     "version of PyTorch is (8.0) - (12.0)"],
    # vLLM's healthy start: a warning about sampling defaults
    ["WARNING 05-14 17:41:26 [config.py:1239] Default sampling parameters have been overridden by the model's Hugging "
     "Face generation config recommended from the model creator. If this is not intended, please relaunch vLLM "
     "instance with `--generation-config vllm`."],
])
def test_the_warnings_of_healthy_runs_stay_no_failure(lines: list[str]) -> None:
    assert not _found(_log(lines))


def test_each_row_names_its_code_site_and_a_category_the_table_knows() -> None:
    known = {row.category for row in table().rows}
    for row in incapacity_warnings():
        assert row.source and row.type and row.category in known, row.literal
        assert all(thread.rsplit("#", 1)[1].isdigit() and int(thread.rsplit("#", 1)[1]) % 2 == 0
                   for thread in row.threads), row.threads


def test_the_rows_read_a_64_kib_line() -> None:
    for row in incapacity_warnings():
        line = ("x" * 70 + row.literal) * (65536 // (70 + len(row.literal)))
        incapacity_warning(line)  # its time is the fuzz test's to judge (tests/test_fuzz.py): no duration here
    assert WINDOW < 4096


@pytest.mark.parametrize(("lines", "gpu", "arch"), [
    (TORCH_CC, "Tesla V100-PCIE-32GB", "sm_70"),
    (TORCH_OLD_GPU, "NVIDIA GeForce GTX 1080 Ti", "sm_61"),
])
def test_torchs_warnings_of_a_gpu_without_kernels_name_the_gpu_and_the_build_it_needs(
        lines: list[str], gpu: str, arch: str) -> None:
    # torch prints these only when its build has no kernels for the GPU (torch/cuda/__init__.py _check_capability):
    # the gpu-arch rule names the GPU from the warning's `Found GPU0 <name> which is of … capability X.Y`
    group = diagnose_text(_log(lines), OPTIONS).failures[0]
    assert group.diagnosis is not None and group.diagnosis.pattern == "rule-gpu-arch-unsupported"
    assert gpu in group.diagnosis.root_cause
    assert group.diagnosis.fix is not None and arch in group.diagnosis.fix.summary
