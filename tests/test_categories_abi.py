"""Stop 45 (abi), in generic words (issue 28): a compiled extension that does not fit the Python code calling it.

torch's own checks refuse a call to a compiled extension's operator before any kernel runs: the argument list the
caller passes is not the one the operator's registered schema declares (torch/csrc/jit/python/pybind_utils.h
createStackForSchema: `<ns>::<op>() expected at most N argument(s) but received M argument(s)`, `… is missing value
for argument '…'`), or no operator of that name is registered (torch/_ops.py `'_OpNamespace' '<ns>' object has no
attribute '<op>'`, torch.library's `operator <ns>::<op> does not exist`).  That is a mixed or broken install
(dependency-version), whose checks name the package that ships the extension from the operator's namespace
(facts/compiled_ops.toml), not an engine bug nor unclassified: vllm-project/flash-attention#76 (`_vllm_fa2_C`),
flashinfer-ai/flashinfer#1720 (a flashinfer module's plan()), sgl-project/sglang#5668 (`sgl_kernel`),
vllm-project/vllm#5454 and #6478 (`_C`), #16810 and #23662 (`operator _C::… does not exist`), #7940 (torchvision).
The loader's `undefined symbol` of such an extension's shared object names the same package from its path
(vllm-project/vllm#3912: flash-attn's flash_attn_2_cuda; deepseek-ai/DeepGEMM#142: deep_gemm_cpp), and so does the
extension's own warning that it could not load, above a failure that names neither (vllm-project/vllm#13116: xformers).
Tracebacks are real CPython's, from a site-packages tree laid out as torch's and the engines'; torch's wordings are
its templates, rebuilt in our own code."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.facts.compiled_ops import (
    compiled_ops,
    library_refused,
    namespace_named,
    owner_of,
    said_unloaded,
)
from logsleuth.models import Diagnosis
from tests.helpers import diagnose_without_patterns, traceback_of_installed
from tests.stub_sources import TORCH_OPS, VLLM_CUSTOM_OPS
from tests.test_categories_cat6 import no_rules  # noqa: F401 (no_rules: the fixture, used below)

_VLLM_FA_INTERFACE = '''
from torch._ops import _OpNamespace

_vllm_fa2_C = _OpNamespace("_vllm_fa2_C", {"varlen_fwd": 21})


def flash_attn_varlen_func(*args):
    return _vllm_fa2_C.varlen_fwd(*args)
'''

_SGLANG_AWQ = '''
from torch._ops import _OpNamespace

sgl_kernel = _OpNamespace("sgl_kernel", {})


def awq_dequantize(qweight, scales, zeros):
    return sgl_kernel.awq_dequantize(qweight, scales, zeros)
'''


def _engine_traceback(tmp_path: Path, files: dict[str, str], script: str) -> str:
    proc = traceback_of_installed(tmp_path, {"torch/_ops.py": TORCH_OPS, **files}, script)
    assert proc.returncode != 0 and "Traceback" in proc.stderr, proc.stderr
    return proc.stderr


def _steps(diagnosis: Diagnosis) -> str:
    return "\n".join(diagnosis.fix.steps) if diagnosis.fix else ""


@pytest.mark.usefixtures("no_rules")
def test_an_unregistered_vllm_op_is_a_mixed_install_with_the_release_reinstall(tmp_path: Path) -> None:
    """vllm-project/vllm#6478: vLLM's `_C` lacks the op the Python code calls; the log names vLLM 0.5.2, so the
    reinstall of that release is the one command given."""
    trace = _engine_traceback(tmp_path, {"vllm/_custom_ops.py": VLLM_CUSTOM_OPS},
                              "from vllm._custom_ops import rms_norm\nrms_norm(None, None, None, 1e-6)\n")
    diagnosis = diagnose_without_patterns("INFO 07-17 00:14:05 api_server.py:212] vLLM API server version 0.5.2\n" + trace)
    assert diagnosis.category == "dependency-version", diagnosis
    steps = _steps(diagnosis)
    assert "namespace '_C' is vLLM's compiled kernels" in steps
    assert "`pip install --force-reinstall vllm==0.5.2`" in steps
    assert "bug" not in diagnosis.title.lower()


@pytest.mark.usefixtures("no_rules")
def test_a_schema_refusal_names_vllm_flash_attn_and_no_version(tmp_path: Path) -> None:
    """vllm-project/flash-attention#76: the wrapper passes one argument more than the built `_vllm_fa2_C` declares;
    with no release in the log no version is offered."""
    trace = _engine_traceback(tmp_path, {"vllm/vllm_flash_attn/flash_attn_interface.py": _VLLM_FA_INTERFACE},
                              "from vllm.vllm_flash_attn.flash_attn_interface import flash_attn_varlen_func\n"
                              "flash_attn_varlen_func(*range(22))\n")
    assert "expected at most 21 argument(s) but received 22 argument(s)" in trace
    diagnosis = diagnose_without_patterns(trace)
    assert diagnosis.category == "dependency-version", diagnosis
    steps = _steps(diagnosis)
    assert "'_vllm_fa2_C' is vllm-flash-attn" in steps
    assert "==" not in steps.split("'_vllm_fa2_C'", 1)[1].split("\n", 1)[0]


@pytest.mark.usefixtures("no_rules")
def test_a_missing_sgl_kernel_op_names_sgl_kernel_not_an_sglang_bug(tmp_path: Path) -> None:
    """sgl-project/sglang#5668: SGLang's code calls an op the installed sgl-kernel does not register."""
    trace = _engine_traceback(tmp_path, {"sglang/srt/layers/quantization/awq.py": _SGLANG_AWQ},
                              "from sglang.srt.layers.quantization.awq import awq_dequantize\n"
                              "awq_dequantize(None, None, None)\n")
    diagnosis = diagnose_without_patterns(trace)
    assert diagnosis.category == "dependency-version", diagnosis
    assert "installed by sgl-kernel" in _steps(diagnosis)


@pytest.mark.parametrize("line", [
    "RuntimeError: operator torchvision::nms does not exist\n",  # vllm-project/vllm#7940
    "RuntimeError: operator _C::machete_gemm does not exist\n",  # vllm-project/vllm#16810
    # flashinfer-ai/flashinfer#1720
    "RuntimeError: batch_prefill_with_kv_cache_dtype_q_bf16_head_dim_qk_128::plan() is missing value for argument "
    "'_15'. Declaration: batch_prefill_with_kv_cache_dtype_q_bf16_head_dim_qk_128::plan(Tensor _0, int _15) -> Tensor _0\n",
])
def test_frameless_operator_refusals_are_dependency_version(line: str) -> None:
    assert diagnose_without_patterns(line).category == "dependency-version"


def test_namespaces_name_their_package() -> None:
    assert namespace_named(["RuntimeError: _vllm_fa2_C::varlen_fwd() expected at most 21 argument(s) but received "
                            "22 argument(s)."]) == "_vllm_fa2_C"
    assert namespace_named(["AttributeError: '_OpNamespace' 'sgl_kernel' object has no attribute 'x'"]) == "sgl_kernel"
    assert namespace_named(["RuntimeError: operator torchvision::nms does not exist"]) == "torchvision"
    assert namespace_named(["RuntimeError: c10::Error happened"]) is None
    owners = {name: owner_of(name) for name in ("_C", "_vllm_fa2_C", "sgl_kernel", "torchvision", "xformers")}
    assert {name: row.distribution for name, row in owners.items() if row} == {
        "_C": "vllm", "_vllm_fa2_C": "vllm", "sgl_kernel": "sgl-kernel", "torchvision": "torchvision",
        "xformers": "xformers"}
    assert owner_of("my_private_ops") is None
    assert all(row.sources for row in compiled_ops())


def test_an_engine_attribute_error_stays_an_engine_bug(tmp_path: Path) -> None:
    """Only torch's operator namespace counts: the engine's own object lacking an attribute is still its bug."""
    code = "class Scheduler:\n    pass\n\n\ndef step():\n    return Scheduler().running_batch\n"
    proc = traceback_of_installed(tmp_path, {"vllm/core/scheduler.py": code},
                                  "from vllm.core.scheduler import step\nstep()\n")
    assert diagnose_without_patterns(proc.stderr).category == "engine-bug"


@pytest.mark.parametrize(("line", "package"), [
    ("ImportError: /opt/conda/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: "
     "undefined symbol: _ZN2at4_ops15sum_IntList_out4callERKNS_6TensorE\n", "installed by flash-attn"),
    ("ImportError: /opt/conda/lib/python3.10/site-packages/deep_gemm-2.0.0-py3.10-linux-x86_64.egg/"
     "deep_gemm_cpp.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c106detail14torchCheckFailEPKcS2_j\n",
     "installed by deep_gemm"),
])
def test_an_undefined_symbol_names_the_extension_from_its_library(line: str, package: str) -> None:
    diagnosis = diagnose_without_patterns(line)
    assert diagnosis.category == "dependency-version"
    assert package in _steps(diagnosis)


def test_a_library_path_finds_its_row() -> None:
    refused = library_refused(["ImportError: /x/vllm/vllm/_C.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEa"])
    assert refused is not None and refused[0] == "_C.abi3.so" and refused[1].distribution == "vllm"
    assert library_refused(["ImportError: /usr/lib/libfoo.so: undefined symbol: bar"]) is None


def test_the_extensions_own_warning_names_it_above_a_bare_undefined_symbol() -> None:
    """vllm-project/vllm#13116: xformers' warning that its build is for another torch, then the loader's line alone."""
    text = ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
            "    PyTorch 2.6.0+cu124 with CUDA 1204 (you have 2.5.1+cu121)\n"
            "undefined symbol: _ZN5torch8autograd12VariableInfoC1ERKN2at6TensorEb\n")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "dependency-version"
    assert "installed by xformers" in _steps(diagnosis)
    assert said_unloaded(["INFO 01-01 api_server.py:1] vLLM API server version 0.5.2"]) is None


@pytest.mark.usefixtures("no_rules")
def test_a_source_checkout_is_not_told_to_reinstall_the_release_wheel(tmp_path: Path) -> None:
    """The same refusal from a source checkout (not blind: split 13's "before" grading): its compiled files are its own
    build, and the release wheel of the same number lacks what the checkout's branch adds, a second failure."""
    trace = _engine_traceback(tmp_path, {"vllm/_custom_ops.py": VLLM_CUSTOM_OPS},
                              "from vllm._custom_ops import rms_norm\nrms_norm(None, None, None, 1e-6)\n")
    site = trace.split('File "', 2)[2].split("vllm/_custom_ops.py", 1)[0]  # the installed tree's directory
    checkout = trace.replace(site, "/home/dev/src/vllm/")
    assert "/home/dev/src/vllm/vllm/_custom_ops.py" in checkout
    diagnosis = diagnose_without_patterns("INFO 07-17 00:14:05 api_server.py:212] vLLM API server version 0.5.2\n" + checkout)
    steps = _steps(diagnosis)
    assert "namespace '_C' is vLLM's compiled kernels" in steps
    assert "--force-reinstall" not in steps and "source checkout (/home/dev/src/vllm)" in steps


@pytest.mark.usefixtures("no_rules")
@pytest.mark.parametrize("elsewhere", ["/home/dev/vllm/", "/root/.cache/vllm/torch_compile_cache/"])
def test_a_directory_merely_named_after_the_engine_is_no_checkout(tmp_path: Path, elsewhere: str) -> None:
    """A script in a directory named vllm, or vLLM's cache directory, is not the engine's source tree: the installed
    release's reinstall stays (review 3 M2 of stop 49)."""
    trace = _engine_traceback(tmp_path, {"vllm/_custom_ops.py": VLLM_CUSTOM_OPS},
                              "from vllm._custom_ops import rms_norm\nrms_norm(None, None, None, 1e-6)\n")
    script = trace.split('File "', 2)[1].split('"', 1)[0]  # the user's script, outside the engine
    moved = trace.replace(script, f"{elsewhere}bench.py")
    diagnosis = diagnose_without_patterns("INFO 07-17 00:14:05 api_server.py:212] vLLM API server version 0.5.2\n" + moved)
    steps = _steps(diagnosis)
    assert "`pip install --force-reinstall vllm==0.5.2`" in steps and "runs from a source checkout" not in steps


# Issue 28 stop 50 (split 13's harmful report, a Qwen2-VL branch of vLLM run from its checkout): the failure is the
# operator refusal alone, with no frame; the checkout shows only in the location CPython's warnings module prints for
# vLLM's own warning (vllm/version.py, imported from vllm/connections.py: "Failed to read commit hash", its
# generated commit_id module missing in an unbuilt tree).  The release wheel of the same number lacks the branch.
_REFUSAL = "AttributeError: '_OpNamespace' '_C' object has no attribute 'gelu_quick'\n"
_VERSION = "INFO 09-02 10:43:42 api_server.py:440] vLLM API server version 0.5.5\n"
_C_WARNING = ("WARNING 09-02 10:43:41 _custom_ops.py:18] Failed to import from vllm._C with "
              "ModuleNotFoundError(\"No module named 'vllm._C'\")\n")


def _warning_at(path: str) -> str:
    """CPython's own rendering of a warning raised at `path` (warnings.formatwarning, as the default hook prints it)."""
    import warnings
    return warnings.formatwarning("Failed to read commit hash:\nNo module named 'vllm.commit_id'", RuntimeWarning,
                                  path, 8, line="from vllm.version import __version__ as VLLM_VERSION")


@pytest.mark.usefixtures("no_rules")
def test_a_checkout_shown_only_by_a_warnings_location_is_told_to_rebuild() -> None:
    log = _REFUSAL + _C_WARNING + _warning_at("/data/src/vllm-feature/vllm/connections.py") + _VERSION
    steps = _steps(diagnose_without_patterns(log))
    assert "source checkout (/data/src/vllm-feature)" in steps
    assert "--force-reinstall" not in steps


@pytest.mark.usefixtures("no_rules")
def test_an_installed_warnings_location_keeps_the_release_reinstall() -> None:
    installed = "/usr/local/lib/python3.10/dist-packages/vllm/connections.py"
    steps = _steps(diagnose_without_patterns(_REFUSAL + _C_WARNING + _warning_at(installed) + _VERSION))
    assert "`pip install --force-reinstall vllm==0.5.5`" in steps and "runs from a source checkout" not in steps


@pytest.mark.usefixtures("no_rules")
def test_an_editable_install_is_told_to_rebuild() -> None:
    pip_show = "Name: vllm\nVersion: 0.5.5\nLocation: /data/src/vllm-feature\nEditable project location: /data/src/vllm-feature\n"
    steps = _steps(diagnose_without_patterns(pip_show + _REFUSAL + _C_WARNING + _VERSION))
    assert "source checkout (/data/src/vllm-feature)" in steps and "--force-reinstall" not in steps


@pytest.mark.usefixtures("no_rules")
def test_a_development_builds_number_is_no_release_to_reinstall() -> None:
    version = "INFO 09-02 10:43:42 api_server.py:440] vLLM API server version 0.6.1.dev238+ge2c6e0a82\n"
    steps = _steps(diagnose_without_patterns(_C_WARNING + _REFUSAL + version))
    assert "development build" in steps and "--force-reinstall" not in steps


# Review 3 of stop 50 (M2, M3, L3): what is no checkout of the engine that ran.  A link to the engine's source on
# GitHub is a URL, not where the engine runs (its `//` and `https:/` start no path); `pip show sglang`'s editable
# location is SGLang's checkout, not vLLM's; scripts in a directory named after the engine leave room for the
# checkout's own path.
_LINK = "The op is defined in https://github.com/vllm-project/vllm/blob/main/vllm/_custom_ops.py (see there)\n"
_OTHER_ENGINES_EDITABLE = ("Name: sglang\nVersion: 0.4.0\nLocation: /work/sglang/python\n"
                           "Editable project location: /work/sglang/python\n")


@pytest.mark.usefixtures("no_rules")
@pytest.mark.parametrize("above", [_LINK, _OTHER_ENGINES_EDITABLE], ids=["link", "other-engines-editable"])
def test_what_is_no_checkout_of_this_engine_keeps_the_release_reinstall(above: str) -> None:
    steps = _steps(diagnose_without_patterns(above + _VERSION + _REFUSAL))
    assert "`pip install --force-reinstall vllm==0.5.5`" in steps and "runs from a source checkout" not in steps


@pytest.mark.usefixtures("no_rules")
def test_scripts_beside_the_engine_leave_room_for_the_checkouts_path() -> None:
    scripts = "".join(_warning_at(f"/home/u/vllm/bench_{n}.py") for n in range(6))
    log = _REFUSAL + _C_WARNING + scripts + _warning_at("/data/src/vllm-feature/vllm/connections.py") + _VERSION
    steps = _steps(diagnose_without_patterns(log))
    assert "source checkout (/data/src/vllm-feature)" in steps and "--force-reinstall" not in steps
