"""Rule rule-device-package-import (reasoning/device_packages.py): a non-CUDA accelerator's device package that does
not import, read as that platform's package, not as the engine's version skew.

The tracebacks are real CPython's: an installed platform plugin (a package tree written under site-packages/) whose
import of the device package fails.  The plugin's own `Failed to import torch_npu.` line is the wording of vllm_ascend
(early 2025) and of SGLang's Ascend attention backend (`except ImportError: print(...)`), as vllm-project/vllm-ascend#166
shows it above a traceback the paste cut."""

from __future__ import annotations

import pytest

from logsleuth.facts.device_packages import device_package, device_packages
from tests.helpers import real_traceback
from tests.reasoning.diagnosed import first_diagnosis

PLUGIN_LINE = "INFO 03-01 10:00:00 [__init__.py:1] Platform plugin ascend is activated\n"


def _plugin_importing(module: str) -> str:
    """A platform plugin's module importing `module`, which this interpreter does not have."""
    code = f'''
        import os, sys
        os.makedirs("site-packages/acme_platform", exist_ok=True)
        with open("site-packages/acme_platform/__init__.py", "w") as f:
            f.write("import {module}\\n")
        sys.path.insert(0, "site-packages")
        import acme_platform
    '''
    return real_traceback(code)


@pytest.mark.parametrize(("module", "platform", "check"), [
    ("torch_npu", "Ascend NPU", "torch.npu.is_available()"),
    ("intel_extension_for_pytorch", "Intel GPU", "torch.xpu.is_available()"),
    ("habana_frameworks.torch.core", "Intel Gaudi", "hl-smi"),
    ("torch_xla", "TPU", "torch_xla.__version__"),
])
def test_a_missing_device_package_names_its_platform_and_check(module: str, platform: str, check: str) -> None:
    log = PLUGIN_LINE + _plugin_importing(module)
    assert f"No module named '{module.split('.')[0]}'" in log
    diagnosis = first_diagnosis(log)
    assert (diagnosis.pattern, diagnosis.category, diagnosis.basis) == (
        "rule-device-package-import", "dependency-version", "rule")
    assert platform in diagnosis.title
    assert diagnosis.fix is not None and any(check in step for step in diagnosis.fix.steps)
    assert "not the cause" in diagnosis.root_cause  # not the engine's pins


def test_the_plugins_own_words_above_a_cut_traceback_name_the_package() -> None:
    full = _plugin_importing("torch_npu")
    cut = full[: full.index("ModuleNotFoundError")]  # the paste stops inside the traceback
    log = PLUGIN_LINE + "Failed to import torch_npu.\n" + cut
    diagnosis = first_diagnosis(log)
    assert (diagnosis.pattern, diagnosis.category) == ("rule-device-package-import", "dependency-version")
    assert any("Failed to import torch_npu" in fact for fact in diagnosis.evidence)


def test_the_plugins_words_above_another_error_are_not_its_cause() -> None:
    log = PLUGIN_LINE + "Failed to import torch_npu.\n" + real_traceback("raise ValueError('max_model_len must be positive')")
    assert first_diagnosis(log).pattern != "rule-device-package-import"


def test_an_ordinary_missing_module_is_left_to_the_other_readings() -> None:
    assert first_diagnosis(PLUGIN_LINE + _plugin_importing("acme_widgets")).pattern != "rule-device-package-import"


def test_every_row_names_its_sources_check_and_install() -> None:
    for row in device_packages():
        assert row.sources and row.check and row.installs and row.runtime, row.module
    assert device_package("habana_frameworks.torch") is not None and device_package("torch") is None
