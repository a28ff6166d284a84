"""The GPU facts (issue 28, item 3): the table of compute capabilities, feature minimums and CUDA toolkits
(logsleuth/facts/gpus.toml, every row with its source), and the GPU a log shows (facts/gpus.py: gpus_in).

The dump lines below are our own text in the format the tools print (the tool is named beside each)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from logsleuth.facts import gpus

TABLE = Path(gpus.__file__).with_name("gpus.toml")


# ---- the table ----------------------------------------------------------------------------------------------


def test_every_row_of_the_gpu_table_names_a_source_it_defines() -> None:
    data = tomllib.loads(TABLE.read_text(encoding="utf-8"))
    sources = data["sources"]
    rows = [*data["gpu"], *data["feature"], *data["toolkit"]]
    assert len(rows) > 30
    for row in rows:
        assert row["source"] in sources, row
        if "note" in row:
            assert row["note_source"] in sources, row
        assert row.get("note_source_2", row["source"]) in sources, row
    names = [name.upper() for row in data["gpu"] for name in row["names"]]
    assert len(names) == len(set(names)), "a GPU name in two rows"
    assert all(("capability" in row) != ("gfx" in row) for row in data["gpu"])


def test_the_table_loads_with_the_capabilities_nvidia_lists() -> None:
    named = {name: gpus.gpu_named(name) for name in (
        "NVIDIA A100-SXM4-80GB", "NVIDIA A10", "Tesla V100-SXM2-32GB", "Tesla T4", "NVIDIA H100 80GB HBM3",
        "NVIDIA H200", "NVIDIA L40S", "NVIDIA L4", "NVIDIA GeForce RTX 4090", "NVIDIA RTX 6000 Ada Generation",
        "Quadro RTX 6000", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "NVIDIA GeForce RTX 5090",
        "NVIDIA B200", "NVIDIA GeForce GTX 1080 Ti", "Tesla P100-PCIE-16GB",
    )}
    capability = {name: gpu.capability if gpu else None for name, gpu in named.items()}
    assert capability == {
        "NVIDIA A100-SXM4-80GB": (8, 0), "NVIDIA A10": (8, 6), "Tesla V100-SXM2-32GB": (7, 0), "Tesla T4": (7, 5),
        "NVIDIA H100 80GB HBM3": (9, 0), "NVIDIA H200": (9, 0), "NVIDIA L40S": (8, 9), "NVIDIA L4": (8, 9),
        "NVIDIA GeForce RTX 4090": (8, 9), "NVIDIA RTX 6000 Ada Generation": (8, 9), "Quadro RTX 6000": (7, 5),
        "NVIDIA RTX PRO 6000 Blackwell Workstation Edition": (12, 0), "NVIDIA GeForce RTX 5090": (12, 0),
        "NVIDIA B200": (10, 0), "NVIDIA GeForce GTX 1080 Ti": (6, 1), "Tesla P100-PCIE-16GB": (6, 0),
    }
    mi300 = gpus.gpu_named("AMD Instinct MI300X")
    assert mi300 is not None and mi300.gfx == "gfx942"
    assert gpus.gpu_named("NVIDIA H20") is None  # not on NVIDIA's table: left out, not guessed


def test_features_and_toolkits_say_what_each_architecture_needs() -> None:
    bf16, fp8, fa3 = gpus.feature("bf16"), gpus.feature("fp8"), gpus.feature("fa3")
    assert bf16 and fp8 and fa3
    assert not bf16.runs_on((7, 5)) and bf16.runs_on((8, 0))
    assert not fp8.runs_on((8, 6)) and fp8.runs_on((8, 9)) and fp8.runs_on((12, 0))
    assert fa3.runs_on((9, 0)) and not fa3.runs_on((10, 0))
    cuda = {arch: row.cuda for arch in ((8, 9), (9, 0), (10, 0), (12, 0), (10, 3)) if (row := gpus.toolkit_for(arch))}
    assert cuda == {(8, 9): "11.8", (9, 0): "11.8", (10, 0): "12.8", (12, 0): "12.8", (10, 3): "12.9"}


# ---- the GPU a log shows -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        # torch.utils.collect_env (vLLM's issue template): nvidia-smi -L's names
        (["GPU models and configuration:", "GPU 0: NVIDIA A100-SXM4-80GB", "GPU 1: NVIDIA A100-SXM4-80GB"],
         [("NVIDIA A100-SXM4-80GB", (8, 0), None)]),
        # python -m sglang.check_env (sglang/check_env.py: "GPU {ids}" and "GPU {ids} Compute Capability")
        (["GPU 0,1,2,3,4,5,6,7: NVIDIA H100 80GB HBM3", "GPU 0,1,2,3,4,5,6,7 Compute Capability: 9.0"],
         [("NVIDIA H100 80GB HBM3", (9, 0), None)]),
        # nvidia-smi's table
        (["|   0  Tesla T4                       Off |   00000000:00:04.0 Off |                    0 |"],
         [("Tesla T4", (7, 5), None)]),
        # torch/cuda/__init__.py _check_capability's warning
        (["UserWarning: ", "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation."],
         [("NVIDIA GeForce RTX 5090", (12, 0), None)]),
        # vllm/platforms/cuda.py check_if_supports_dtype
        (["ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla V100-SXM2-16GB GPU has compute capability 7.0."],
         [("Tesla V100-SXM2-16GB", (7, 0), None)]),
        # vLLM's quantization check: the GPU's capability alone
        (["ValueError: The quantization method awq is not supported for the current GPU. Minimum capability: 75. Current capability: 70."],
         [("", (7, 0), None)]),
        # a GPU the table does not hold, its capability on the dump's next line (sglang.check_env)
        (["GPU 0,1: NVIDIA H20", "GPU 0,1 Compute Capability: 9.0"], [("NVIDIA H20", (9, 0), None)]),
        # nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader (the check the rule prints)
        (["NVIDIA A10G, 8.6"], [("NVIDIA A10G", (8, 6), None)]),
        # ROCm: a device name, or the gfx target rocminfo and torch print
        (["GPU 0: AMD Instinct MI300X"], [("AMD Instinct MI300X", None, "gfx942")]),
        (["  Name:                    gfx90a"], [("", None, "gfx90a")]),
    ],
)
def test_the_gpu_is_read_from_each_dump_style(lines: list[str], expected: list[tuple[str, object, object]]) -> None:
    assert [(gpu.name, gpu.capability, gpu.gfx) for gpu in gpus.gpus_in(lines)] == expected


@pytest.mark.parametrize(
    "line",
    [
        "Nvidia driver version: 535.104.05",
        "Bfloat16 is only supported on GPUs with compute capability of at least 8.0.",
        "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.",
        "NVIDIA H20 is installed",  # a name the table does not hold, with no capability stated
        "[2026-01-01 10:00:00] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=60.1 GB",
    ],
)
def test_lines_that_state_no_gpu_give_none(line: str) -> None:
    assert gpus.gpus_in([line]) == []
