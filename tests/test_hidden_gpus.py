"""A launch whose environment prefix leaves no GPU visible (reasoning/hidden_gpus.py).

CUDA reads CUDA_VISIBLE_DEVICES before the first device call: an empty value or an invalid first index (`-1`) leaves
no device (the CUDA C Programming Guide, CUDA Environment Variables); the NVIDIA container toolkit mounts none for
NVIDIA_VISIBLE_DEVICES=void.  The engine then fails or takes its path for hosts without a GPU, where a module a GPU
host never imports can be missing: that is not a dependency the release failed to install, and advice to reinstall
the engine (with an extra) leads nowhere.  The tracebacks are real CPython's, from our own code: a module of an
installed engine importing a package that is not installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.reasoning.hidden_gpus import hiding_assignment
from tests.helpers import diagnose_with_patterns, traceback_of_installed

# An engine module whose import of an optional package fails: the shape of an import on a no-GPU code path.
_FILES = {"sglang/srt/layers/fallback_ops.py": "import optional_cpu_kernels  # noqa: F401\n"}
_SCRIPT = "import sglang.srt.layers.fallback_ops\n"


def _log(tmp_path: Path, launch: str) -> str:
    crash = traceback_of_installed(tmp_path, _FILES, _SCRIPT)
    assert "ModuleNotFoundError: No module named 'optional_cpu_kernels'" in crash.stderr
    return f"$ {launch}\n{crash.stderr}"


@pytest.mark.parametrize("prefix", ['CUDA_VISIBLE_DEVICES=""', "CUDA_VISIBLE_DEVICES=-1", "HIP_VISIBLE_DEVICES="])
def test_a_prefix_hiding_every_gpu_is_the_root_cause(tmp_path: Path, prefix: str) -> None:
    found = diagnose_with_patterns(_log(tmp_path, f"{prefix} python -m sglang.launch_server --model-path /m/q"))
    assert found.pattern == "rule-launch-hides-gpus" and found.category == "cuda-error"
    assert found.fix is not None and found.fix.command is None and found.fix.flags == ()
    assert "pip install" not in found.fix.summary + " ".join(found.fix.steps)
    assert prefix.split("=")[0] in found.root_cause


def test_visible_gpus_leave_the_failure_to_the_other_rules(tmp_path: Path) -> None:
    found = diagnose_with_patterns(_log(tmp_path, "CUDA_VISIBLE_DEVICES=0,1 python -m sglang.launch_server --model-path /m/q"))
    assert found.pattern != "rule-launch-hides-gpus"


@pytest.mark.parametrize(("command", "hidden"), [
    ("CUDA_VISIBLE_DEVICES= vllm serve m", ("CUDA_VISIBLE_DEVICES", "")),
    ("CUDA_VISIBLE_DEVICES=-1 vllm serve m", ("CUDA_VISIBLE_DEVICES", "-1")),
    ("HIP_VISIBLE_DEVICES=-1,0 vllm serve m", ("HIP_VISIBLE_DEVICES", "-1,0")),  # the first index invalid: none
    ("CUDA_VISIBLE_DEVICES=2,-1 vllm serve m", None),  # the devices before the invalid index stay visible
    ("CUDA_VISIBLE_DEVICES=GPU-8d3c1f2a vllm serve m", None),  # a UUID is a device
    ("NVIDIA_VISIBLE_DEVICES=all vllm serve m", None),
    ("NVIDIA_VISIBLE_DEVICES=void vllm serve m", None),  # a prefix: only a container's -e counts
    ("vllm serve m", None),
    (None, None),
])
def test_which_assignments_hide_every_gpu(command: str | None, hidden: tuple[str, str] | None) -> None:
    assert hiding_assignment(command) == hidden


@pytest.mark.parametrize("shell", [
    'export CUDA_VISIBLE_DEVICES=""',  # on its own line, before a command the tracker does not take for the launch
    "(venv) $ CUDA_VISIBLE_DEVICES= python serve_my_model.py",
    "docker run --gpus all -e CUDA_VISIBLE_DEVICES=-1 my-image python serve_my_model.py",
    "docker run -e NVIDIA_VISIBLE_DEVICES=void my-image python serve_my_model.py",  # the toolkit mounts no GPU
])
def test_the_pastes_shell_hiding_every_gpu_counts_too(tmp_path: Path, shell: str) -> None:
    found = diagnose_with_patterns(_log(tmp_path, "python serve_my_model.py").replace("$ python", f"{shell}\n$ python", 1))
    assert found.pattern == "rule-launch-hides-gpus" and found.fix is not None and found.fix.flags == ()


@pytest.mark.parametrize("line", [
    "CUDA_VISIBLE_DEVICES=",  # an environment dump's line: it sets nothing for the launch
    "$ NVIDIA_VISIBLE_DEVICES=void true",  # a prefix: the container toolkit reads it only when a container is made
    'export CUDA_VISIBLE_DEVICES=""\nexport CUDA_VISIBLE_DEVICES=0,1',  # the last value the shell gives decides
])
def test_a_dump_line_or_a_later_value_does_not(tmp_path: Path, line: str) -> None:
    found = diagnose_with_patterns(_log(tmp_path, "python serve_my_model.py").replace("$ python", f"{line}\n$ python", 1))
    assert found.pattern != "rule-launch-hides-gpus"


def test_a_failure_hidden_gpus_do_not_explain_keeps_its_own_reading(tmp_path: Path) -> None:
    """A shape mismatch is no consequence of a hidden GPU, and `--device cpu` asks for no GPU at all."""
    crash = traceback_of_installed(tmp_path, {"vllm/model_executor/layers/layernorm.py": (
        "def forward(x):\n    raise RuntimeError('The size of tensor a (4096) must match the size of tensor b (5120)')\n")},
        "from vllm.model_executor.layers.layernorm import forward\nforward(1)\n")
    for launch in ("CUDA_VISIBLE_DEVICES=-1 vllm serve /m/q", "CUDA_VISIBLE_DEVICES=-1 vllm serve /m/q --device cpu"):
        assert diagnose_with_patterns(f"$ {launch}\n{crash.stderr}").pattern != "rule-launch-hides-gpus"
    imported = _log(tmp_path / "cpu", "CUDA_VISIBLE_DEVICES=-1 vllm serve /m/q --device cpu")
    assert diagnose_with_patterns(imported).pattern != "rule-launch-hides-gpus"
