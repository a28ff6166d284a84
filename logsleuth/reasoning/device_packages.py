"""A non-CUDA accelerator's device package that does not import (issue 28: a platform's plugin, not a version skew).

An engine runs on an Ascend NPU, an Intel GPU, Gaudi or a TPU through a vendor's extension of torch (torch_npu,
intel_extension_for_pytorch, habana_frameworks, torch_xla: facts/device_packages.toml) that its platform plugin
imports first.  When that import fails the package is missing from the environment (an image built without it:
vllm-project/vllm-ascend#166, fixed by vllm-project/vllm-ascend#201 installing torch-npu in the Dockerfile) or it does
not load (its runtime's libraries: flagos-ai/FlagCX#451, intel/intel-extension-for-pytorch#651).  Read from CPython's
`No module named '<module>'`, or from the plugin's own line `Failed to import <module>` (vllm_ascend and SGLang's Ascend
backend print it from `except ImportError`) above a traceback the paste cut or an import error.  The answer is the
platform's own check and install, not the engine's pins."""

from __future__ import annotations

from logsleuth.facts.device_packages import DevicePackage, device_package
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, Fix
from logsleuth.reasoning.evidence import Evidence

RULE_ID = "rule-device-package-import"
_NO_MODULE = compile_lazily(r"No module named '(?P<module>[A-Za-z_][\w.]*)'")
# The plugin's own words when its `import <module>` raised ImportError (vllm_ascend's, SGLang's Ascend backend's).
_FAILED_IMPORT = compile_lazily(r"\bFailed to import (?P<module>[A-Za-z_]\w*)\b")
_IMPORT_TYPES = ("ImportError", "ModuleNotFoundError")


def _missing_module(evidence: Evidence) -> tuple[DevicePackage, str] | None:
    for block in evidence.failure.exceptions:
        if block.type.endswith(_IMPORT_TYPES) and (found := _NO_MODULE.search(block.message)):
            row = device_package(found["module"])
            if row is not None:
                return row, f"{block.type}: {block.message.strip()}"
    return None


def _plugin_said_so(evidence: Evidence) -> tuple[DevicePackage, str] | None:
    """The plugin's `Failed to import <module>` on a line above a failure whose own exception does not contradict it:
    a traceback cut before its exception line, or an import error."""
    failure = evidence.failure
    last = failure.exceptions[-1] if failure.exceptions else None
    if last is not None and last.type and not last.type.endswith(_IMPORT_TYPES):
        return None
    for line in reversed(failure.context):
        if (found := _FAILED_IMPORT.search(line)) and (row := device_package(found["module"])) is not None:
            return row, line.strip()
    return None


def device_package_import(evidence: Evidence) -> Diagnosis | None:
    found = _missing_module(evidence) or _plugin_said_so(evidence)
    if found is None:
        return None
    row, said = found
    launch = evidence.launch
    root_cause = (f"The {row.platform}'s device package {row.module} ({row.distribution}) did not import: the engine's "
                  f"platform plugin needs it before anything else runs. Either it is not installed in this environment "
                  "(an image or virtual environment built without it) or it is installed but does not load (what it "
                  f"needs beside itself: {row.runtime}). The engine's own version is not the cause.")
    fix = Fix(
        summary=(f"Make {row.module} import in the environment that runs the engine: {row.installs}."),
        steps=(f"{row.check}: run where the engine runs; when it fails it prints the import's own error (a module not "
               "found, or a library the loader cannot open, whose driver or runtime is then what to fix)",
               f"pip show {row.distribution} torch lists the installed pair: the device package is built for one torch "
               "release"),
    )
    return Diagnosis(
        pattern=RULE_ID, title=f"The {row.platform}'s device package does not import: {row.module}",
        category="dependency-version", root_cause=root_cause, fix=fix, references=row.sources,
        engine=launch.engine, engine_version=launch.engine_version, basis="rule", evidence=(f"the log: {said}",))
