"""Stop 45's review, in generic words: advice states as fact only a release the log or the user names.

A release guessed from the code's layout (ingest/launch.py: `sglang/srt/utils/common.py` makes SGLang 0.5.9 the
guess, LaunchInfo.engine_version_source "inferred") may be another: neither "SGLang 0.5.9 requires no package that
installs it" (a module no release requires, vllm-project/vllm#22290's triton_kernels) nor a reinstall command
`pip install --force-reinstall vllm==…` for a compiled extension's refused operator (vllm-project/vllm#6478's `_C`)
may name it.  A release the user gives (--engine-version) is said as theirs, not as the log's.  And a switch's
negation and verb are no words of the setting it names (`--no-enable-prefix-caching` is no "enable").
Tracebacks are real CPython's, from a site-packages tree laid out as the engines'."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.models import LaunchInfo
from logsleuth.reasoning.evidence import Evidence
from logsleuth.reasoning.general import categorize
from logsleuth.reasoning.message_settings import settings_the_message_names
from logsleuth.reasoning.setting_paths import switch_key
from tests.helpers import check_texts, diagnose_without_patterns, traceback_of_installed
from tests.stub_sources import TORCH_OPS, VLLM_CUSTOM_OPS
from tests.test_categories_cat6 import no_rules  # noqa: F401 (no_rules: the fixture, used below)

_SGLANG_COMMON = "def load_kernels():\n    import flash_attn\n    return flash_attn\n"


def _missing_module_under_sglang(tmp_path: Path) -> str:
    proc = traceback_of_installed(tmp_path, {"sglang/srt/utils/common.py": _SGLANG_COMMON},
                                  "from sglang.srt.utils.common import load_kernels\nload_kernels()\n")
    assert "No module named 'flash_attn'" in proc.stderr, proc.stderr
    return proc.stderr


def _unregistered_vllm_op(tmp_path: Path) -> str:
    proc = traceback_of_installed(tmp_path, {"torch/_ops.py": TORCH_OPS, "vllm/_custom_ops.py": VLLM_CUSTOM_OPS},
                                  "from vllm._custom_ops import rms_norm\nrms_norm(None, None, None, 1e-6)\n")
    assert "'_OpNamespace' '_C' object has no attribute 'rms_norm'" in proc.stderr, proc.stderr
    return proc.stderr


@pytest.mark.usefixtures("no_rules")
def test_a_release_guessed_from_the_layout_is_not_said_to_require_nothing(tmp_path: Path) -> None:
    traceback = _missing_module_under_sglang(tmp_path)
    report = diagnose_text(traceback, DiagnoseOptions(include_user_patterns=False))
    assert (report.launch.engine_version, report.launch.engine_version_source) == ("0.5.9", "inferred")
    steps = check_texts(diagnose_without_patterns(traceback))
    assert "The module 'flash_attn': no SGLang release logsleuth has read" in steps
    assert "0.5.9" not in steps


@pytest.mark.usefixtures("no_rules")
def test_a_release_the_user_gives_is_the_one_said_to_require_nothing(tmp_path: Path) -> None:
    steps = check_texts(diagnose_without_patterns(_missing_module_under_sglang(tmp_path), engine_version="0.5.9"))
    assert "SGLang 0.5.9 requires no package that installs it" in steps


@pytest.mark.parametrize(("source", "said"), [
    ("inferred", None),
    ("log", "The log shows vLLM 0.5.2: `pip install --force-reinstall vllm==0.5.2`"),
    ("user", "The release you gave, vLLM 0.5.2: `pip install --force-reinstall vllm==0.5.2`"),
])
def test_the_reinstall_command_names_only_a_release_the_log_or_the_user_gives(
        tmp_path: Path, source: str, said: str | None) -> None:
    """Commit 5a3c161: the layout guesses no vLLM release today, so the launch is given as the guess would make it."""
    traceback = _unregistered_vllm_op(tmp_path)
    failure = diagnose_text(traceback, DiagnoseOptions(include_user_patterns=False)).failures[0].failure
    launch = LaunchInfo(engine="vllm", engine_version="0.5.2", engine_version_source=source)  # type: ignore[arg-type]
    steps = check_texts(categorize(Evidence(failure=failure, launch=launch)))
    assert "namespace '_C' is vLLM's compiled kernels" in steps
    if said is None:
        assert "==" not in steps and "0.5.2" not in steps
    else:
        assert said in steps


@pytest.mark.usefixtures("no_rules")
def test_the_release_given_with_engine_version_is_said_as_the_users(tmp_path: Path) -> None:
    steps = check_texts(diagnose_without_patterns(_unregistered_vllm_op(tmp_path), engine_version="0.5.2"))
    assert "The release you gave, vLLM 0.5.2: `pip install --force-reinstall vllm==0.5.2`" in steps
    assert "The log shows" not in steps


def test_a_negated_switch_is_read_without_its_negation_and_verb() -> None:
    assert switch_key("--no-enable-prefix-caching") == switch_key("--enable-prefix-caching") == "prefix-caching"
    log = ("vllm serve /models/m --no-enable-prefix-caching\n"
           "ValueError: Cannot enable this quantization method on the current device\n")
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    assert report.launch.command and "--no-enable-prefix-caching" in report.launch.command
    assert settings_the_message_names(report.failures[0].failure, report.launch) == []
