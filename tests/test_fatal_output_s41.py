"""Stop 41: one-line failures that were not found.  Each line is the one real CPython prints:

- a class outside builtins is printed by its module's dotted name, whatever it is called
  (huggingface_hub.errors.OfflineModeIsEnabled, raised when HF_HUB_OFFLINE is set and a hub request is made);
- `python -m MODULE` with the module not importable (runpy): `<python>: No module named x`, or `<python>: Error while
  finding module specification for 'x.y' (ModuleNotFoundError: No module named 'x')`: the server never started.

A logger's `module.path: message` line (lower case to its end) stays no failure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from logsleuth.api import DiagnoseOptions, diagnose_text

OPTIONS = DiagnoseOptions(include_user_patterns=False)


def _last_stderr_line(args: list[str], cwd: Path) -> str:
    run = subprocess.run([sys.executable, "-B", *args], capture_output=True, text=True, cwd=cwd, timeout=60)
    return run.stderr.strip().splitlines()[-1]


def test_an_exception_printed_by_its_module_qualified_name_is_found(tmp_path: Path) -> None:
    (tmp_path / "hub_errors.py").write_text("class OfflineModeIsEnabled(ConnectionError):\n    pass\n", encoding="utf-8")
    (tmp_path / "run.py").write_text(
        "import hub_errors\nraise hub_errors.OfflineModeIsEnabled('Cannot reach https://huggingface.co/api/models/m:"
        " offline mode is enabled.')\n", encoding="utf-8")
    line = _last_stderr_line(["run.py"], tmp_path)
    assert line.startswith("hub_errors.OfflineModeIsEnabled: ")
    report = diagnose_text(line + "\n", OPTIONS)
    assert report.failures
    diagnosis = report.failures[0].diagnosis
    assert diagnosis.category == "model-path"
    assert any("HF_HUB_OFFLINE" in step for step in diagnosis.fix.steps)


def test_a_loggers_module_path_is_no_exception() -> None:
    for line in ("sglang.srt.managers.scheduler: scheduler started", "vllm.engine.arg_utils: using defaults",
                 "torch.distributed.elastic: waiting for workers"):
        assert not diagnose_text(line + "\n", OPTIONS).failures, line


def test_python_dash_m_of_a_missing_package_is_found_and_says_so(tmp_path: Path) -> None:
    missing = _last_stderr_line(["-m", "sglang_not_installed_here"], tmp_path)
    assert missing.endswith(": No module named sglang_not_installed_here")
    nested = _last_stderr_line(["-m", "vllm_not_installed_here.entrypoints.api_server"], tmp_path)
    assert "Error while finding module specification for 'vllm_not_installed_here.entrypoints.api_server'" in nested
    for line in (missing, nested):
        report = diagnose_text(line + "\n", OPTIONS)
        assert report.failures, line
        assert report.failures[0].failure.final.type == "ModuleNotFoundError"
    # the engine's own name: the check that it is not installed in the interpreter that ran
    engine_missing = missing.replace("sglang_not_installed_here", "sglang")
    steps = diagnose_text(engine_missing + "\n", OPTIONS).failures[0].diagnosis.fix.steps
    assert "not installed in the Python that ran" in steps[0]


def test_a_proxy_variable_the_http_library_cannot_use_is_the_network() -> None:
    """urllib3/contrib/socks.py raises `ValueError(f"Unable to determine SOCKS version from {proxy_url}")` for an
    all_proxy of `socks://…` (no version); requests/adapters.py InvalidProxyURL for one with no host."""
    for line in ("ValueError: Unable to determine SOCKS version from socks://127.0.0.1:7890/",
                 "requests.exceptions.InvalidProxyURL: Please check proxy URL. It is malformed and could be missing "
                 "the host."):
        diagnosis = diagnose_text(line + "\n", OPTIONS).failures[0].diagnosis
        assert diagnosis.category == "network", line
        assert "proxy variable" in diagnosis.fix.steps[0]
    # a plain ValueError about something else is no network failure
    assert diagnose_text("ValueError: Unable to determine the page size\n", OPTIONS).failures[0].diagnosis.category != "network"
