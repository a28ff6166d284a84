"""More positive evidence of the engine (issue 28, item 4), from the shapes of the h-dev split
(scripts/wild_fixtures/cases/dev_detect.py): the program argparse names inside a sentence, the engine whose
requirements pip or uv resolve, a file of the engine's package that an import error names, a wrapper's module
for one engine (verl's `sglang_rollout`), SGLang's `check_env` listing.  Wordings are those of the threads the
split cites; the logs are our own.  A line that only *names* an engine stays no evidence."""

from __future__ import annotations

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text

OPTIONS = DiagnoseOptions(include_user_patterns=False)


def engine_of(log: str) -> str | None:
    return diagnose_text(log, OPTIONS).launch.engine


@pytest.mark.parametrize(
    ("log", "engine"),
    [
        # argparse's program quoted in a sentence (vllm-project/vllm#46325)
        ("Starting the server prints `vllm: error: unrecognized arguments: -language-model-only` and exits.\n", "vllm"),
        ('The launch fails with "launch_server.py: error: unrecognized arguments: --enable-reasoning".\n', "sglang"),
        # pip's and uv's resolvers: the engine whose requirements do not hold (PRIME-RL/SimpleVLA-RL#53, vllm#11283)
        ("ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. "
         "This behaviour is the source of the following dependency conflicts.\n"
         "vllm 0.6.3 requires torch==2.4.0, but you have torch 2.2.0 which is incompatible.\n", "vllm"),
        ("  × No solution found when resolving dependencies:\n"
         "  ╰─▶ Because vllm==0.6.5 depends on torch==2.5.1 and vllm-flash-attn>=2.6.1 depends on torch==2.4.0, we can\n"
         "      conclude that vllm==0.6.5 and vllm-flash-attn>=2.6.1 are incompatible.\n", "vllm"),
        ("ERROR: pip's dependency resolver does not currently take into account all the packages that are installed.\n"
         "sglang 0.4.1 requires vllm<=0.6.4.post1,>=0.6.3.post1, but you have vllm 0.7.0 which is incompatible.\n", "sglang"),
        # a file of SGLang's package in an import error (hiyouga/LlamaFactory#7458): vLLM never imports SGLang
        ("    from sglang.utils import launch_server_cmd\nImportError: cannot import name 'launch_server_cmd' from "
         "'sglang.utils' (/venv/lib/python3.10/site-packages/sglang/utils.py)\n", "sglang"),
        # SGLang's check_env listing (sgl-project/sglang#831): `sglang: <version>` first, vllm listed as a package
        ("RuntimeError: RMSNorm failed with error code no kernel image is available for execution on the device\n\n"
         "Python: 3.11.9\nCUDA available: True\nGPU 0: Tesla V100-SXM2-32GB\nPyTorch: 2.4.0+cu124\nsglang: 0.2.12\n"
         "flashinfer: 0.1.4+cu124torch2.4\nvllm: 0.5.4\n", "sglang"),
    ],
)
def test_the_log_shows_its_engine(log: str, engine: str) -> None:
    assert engine_of(log) == engine


def test_a_wrappers_module_for_one_engine_shows_that_engine() -> None:
    """verl runs the rollout module of the engine it was given (verl-project/verl#3719): its frames show it."""
    log = (
        "(TaskRunner pid=5726) Traceback (most recent call last):\n"
        '(TaskRunner pid=5726)   File "/opt/verl/verl/workers/rollout/base.py", line 101, in get_rollout_class\n'
        "(TaskRunner pid=5726)     rollout_module = importlib.import_module(module_name)\n"
        '(TaskRunner pid=5726)   File "/opt/verl/verl/workers/rollout/sglang_rollout/sglang_rollout.py", line 45, in <module>\n'
        "(TaskRunner pid=5726)     from sglang.srt.utils import get_ip\n"
        "(TaskRunner pid=5726) ImportError: cannot import name 'get_ip' from 'sglang.srt.utils' (unknown location)\n"
    )
    report = diagnose_text(log, OPTIONS)
    assert (report.launch.engine, report.launch.wrapper) == ("sglang", "verl")


@pytest.mark.parametrize(
    "log",
    [
        # an import error that names an engine's module without a file of it: SGLang asking for vLLM
        "ModuleNotFoundError: No module named 'vllm.model_executor.input_metadata'\n",
        # a file of vLLM's package in an import error (vllm-project/vllm#28199): SGLang imports vLLM's ops too
        "ImportError: /home/user/vllm/vllm/_C.abi3.so: undefined symbol: _Z20cutlass_moe_mm_sm100RN2at6TensorE\n",
        "ImportError: cannot import name 'X' from 'vllm.distributed' (/venv/lib/python3.10/site-packages/vllm/distributed/__init__.py)\n",
        # a path that is no package of the engine: a model directory, a script beside it
        "ImportError: cannot import name 'X' from 'helpers' (/models/vllm/helpers.py)\n",
        # pip installing an engine: an install, not a resolver's verdict about it
        "$ pip install vllm==0.6.3\nSuccessfully installed vllm-0.6.3\nValueError: something else broke\n",
    ],
)
def test_naming_an_engine_still_decides_nothing(log: str) -> None:
    assert engine_of(log) is None


def test_the_engines_own_frames_outweigh_a_file_of_the_other_named_in_a_message() -> None:
    """SGLang importing vLLM's compiled ops: the frames are SGLang's, the .so in the message vLLM's."""
    log = (
        "Traceback (most recent call last):\n"
        '  File "/venv/lib/python3.11/site-packages/sglang/srt/layers/quantization/awq.py", line 12, in <module>\n'
        "    from vllm import _custom_ops\n"
        "ImportError: /venv/lib/python3.11/site-packages/vllm/_C.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n"
    )
    assert engine_of(log) == "sglang"


@pytest.mark.parametrize(
    ("log", "engine"),
    [
        # sgl-kernel, SGLang's kernel package, failing to load or to install (sgl-project/sglang#13198, #5100)
        ("ImportError: \n[sgl_kernel] CRITICAL: Could not load any common_ops library!\nAttempted locations:\n", "sglang"),
        ("ImportError: /usr/local/lib/python3.11/dist-packages/sgl_kernel/common_ops.abi3.so: undefined symbol: _ZN5torch3jitE\n",
         "sglang"),
        ("Exception: sgl-kernel is installed with version 0.0.9.post2, which is less than the minimum required version 0.1.1.\n",
         "sglang"),
        ("ERROR: Could not find a version that satisfies the requirement sgl-kernel==9.9.9 (from versions: none)\n"
         "ERROR: No matching distribution found for sgl-kernel==9.9.9\n", "sglang"),
        ("ERROR: No matching distribution found for vllm==0.99.0\n", "vllm"),
        # the engine's container image (a pod's pull failure; docker run)
        ('[logsleuth: pod serving/x-0 container x: waiting, reason ImagePullBackOff, restarts 0, message: Back-off pulling image '
         '"lmsysorg/sglang:v0.5.99-cu129"]\n', "sglang"),
        ("$ docker run --gpus all vllm/vllm-openai:v0.11.0 --model /m\nValueError: something failed\n", "vllm"),
    ],
)
def test_the_engines_packages_and_images_show_it(log: str, engine: str) -> None:
    assert engine_of(log) == engine


def test_vllm_serves_own_usage_line_shows_vllm() -> None:
    """vLLM's serve subcommand sets its usage (`vllm serve [model_tag] [options]`, `<model_tag>` before 0.8):
    a paste cut after that line still shows the program (vllm-project/vllm#13150's usage)."""
    log = "usage: vllm serve [model_tag] [options]\nValueError: something after it\n"
    assert engine_of(log) == "vllm"
    assert engine_of("usage: vllm serve <model_tag> [options]\nValueError: something after it\n") == "vllm"
