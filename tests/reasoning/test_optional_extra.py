"""A module that the engine's known releases declare only in an extra, missing, the release not named
(reasoning/dependencies.py _optional_path_summary): a plain install does not bring it, but an engine may also import
such a module only on an optional path (another platform, a host whose GPUs it cannot see); the fix says to check
both, never only "reinstall with the extra" (the user's release may declare it in no extra).  The traceback is real
CPython's, from a site-packages tree laid out as SGLang's (SGLang's releases declare vllm in the srt extras only)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import diagnose_without_patterns, traceback_of_installed


def test_a_module_only_an_extra_declares_is_not_simply_reinstalled(tmp_path: Path) -> None:
    files = {"sglang/srt/layers/activation.py": "from vllm._custom_ops import gelu_quick  # noqa: F401\n"}
    crash = traceback_of_installed(tmp_path, files, "import sglang.srt.layers.activation\n")
    assert "No module named 'vllm'" in crash.stderr
    found = diagnose_without_patterns("$ python -m sglang.launch_server --model-path /m/q\n" + crash.stderr)
    assert found.fix is not None and found.category == "dependency-version"
    assert "only in an extra" in found.fix.summary and "optional path" in found.fix.summary
    assert "Install the vllm your SGLang release pins" not in found.fix.summary
