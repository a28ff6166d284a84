"""A traceback CPython printed on Windows (drive-letter paths with backslashes): its engine frames name the engine as a
Linux frame does, and the general guidance leads with the platform, which neither engine supports natively."""

from __future__ import annotations

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.tracebacks.chain import windows_path_as_posix
from tests.helpers import real_traceback

OPTIONS = DiagnoseOptions(include_user_patterns=False)


def _on_windows(printed: str, tree: str) -> str:
    """The real traceback as CPython on Windows prints the same files: `C:\\…\\site-packages\\<tree>`."""
    return printed.replace("/srv/site-packages/", "C:\\Users\\me\\envs\\llm\\Lib\\site-packages\\").replace(
        tree, tree.replace("/", "\\"))


@pytest.mark.parametrize(("tree", "engine", "name"), [
    ("vllm/engine/arg_utils.py", "vllm", "vLLM"),
    ("sglang/srt/server_args.py", "sglang", "SGLang"),
])
def test_an_engine_frame_on_windows_names_the_engine_and_the_platform_leads(tree: str, engine: str, name: str) -> None:
    printed = _on_windows(real_traceback("import uvloop_missing_here\n", "site-packages/" + tree), tree)
    assert "C:\\Users" in printed and "/" not in printed.split('File "', 1)[1].split('"', 1)[0]
    report = diagnose_text(printed, OPTIONS)
    assert report.launch.engine == engine
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.fix is not None
    assert diagnosis.fix.steps[0].startswith(f"The frames' paths are Windows paths: {name} does not run natively")


def test_a_linux_traceback_gets_no_platform_step() -> None:
    printed = real_traceback("import uvloop_missing_here\n", "site-packages/vllm/engine/arg_utils.py")
    diagnosis = diagnose_text(printed, OPTIONS).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.fix is not None
    assert not any("Windows" in step for step in diagnosis.fix.steps)


@pytest.mark.parametrize(("path", "posix"), [
    ("C:\\Users\\me\\vllm\\config.py", "C:/Users/me/vllm/config.py"),
    ("/usr/lib/python3/vllm/config.py", "/usr/lib/python3/vllm/config.py"),
    ("<frozen runpy>", "<frozen runpy>"),
    ("a\\b.py", "a\\b.py"),  # not a drive path: kept as printed
])
def test_only_a_drive_path_is_rewritten(path: str, posix: str) -> None:
    assert windows_path_as_posix(path) == posix
