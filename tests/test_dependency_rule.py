"""Dependency drift (issue 28, class 4): a third-party import error against what the engine release pins,
read from its real wheel (logsleuth/facts/requires.json) and the import table (logsleuth/facts/imports.toml).

Every traceback here is printed by real CPython: a small program imports a stub package laid out as in a
site-packages directory (or a shared library built with gcc that needs a symbol nothing provides), so the
message and frames are CPython's and the dynamic loader's own.  The launch lines around them are our own text
in the engines' wording (cited at each)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.facts import imports, requires
from logsleuth.models import Diagnosis
from tests.helpers import real_traceback

ORACLES = Path.home() / ".cache/logsleuth/oracle"
ORACLE_RELEASES = ("sglang-0.4.10.post2", "sglang-0.5.9", "sglang-0.5.23", "vllm-0.11.2", "vllm-0.33.0")
OPTIONS = DiagnoseOptions(include_user_patterns=False)
# vllm/entrypoints/openai/api_server.py logs "vLLM API server version %s" at start (tests/test_engine_version.py).
VLLM_0112 = "(APIServer pid=41) INFO 11-20 09:00:00 [api_server.py:1839] vLLM API server version 0.11.2\n"
VLLM_SERVE = "$ vllm serve /models/m --port 8000\n"
SGLANG_LAUNCH = "$ python3 -m sglang.launch_server --model-path /models/m --port 30000\n"


def _real_traceback(tmp_path: Path, packages: dict[str, str], program: str) -> str:
    """What CPython prints when `program` runs with `packages` ({relative path: source}) in a directory named
    site-packages first on its path."""
    site = tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    for relative, source in packages.items():
        (site / relative).parent.mkdir(parents=True, exist_ok=True)
        (site / relative).write_text(source)
    script = tmp_path / "serve.py"
    script.write_text(program)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env={"PYTHONPATH": str(site)})
    assert done.returncode != 0 and "Traceback" in done.stderr, done.stderr
    return done.stderr


def _diagnosis(text: str, options: DiagnoseOptions = OPTIONS) -> Diagnosis | None:
    report = diagnose_text(text, options)
    assert report.failures, text
    return report.failures[0].diagnosis


def _rule(text: str, options: DiagnoseOptions = OPTIONS) -> Diagnosis:
    diagnosis = _diagnosis(text, options)
    assert diagnosis is not None and diagnosis.basis == "rule", diagnosis
    assert diagnosis.category == "dependency-version"
    return diagnosis


def test_cannot_import_name_from_a_third_party_module_names_the_release_pin(tmp_path: Path) -> None:
    """vLLM importing a transformers class the installed transformers lacks (the shape of sgl-project/sglang#3878
    and #38183, here on vLLM, where no pattern names it): vLLM 0.11.2's wheel declares transformers<5,>=4.56.0."""
    traceback = _real_traceback(
        tmp_path,
        {"transformers/__init__.py": "__version__ = '4.44.0'\n"},
        "from transformers import Qwen3VLConfig\n",
    )
    diagnosis = _rule(VLLM_0112 + traceback)
    assert diagnosis.title == "transformers (distribution transformers) does not match what vLLM 0.11.2 pins (transformers<5,>=4.56.0)"
    assert diagnosis.fix is not None and diagnosis.fix.steps[0] == "pip install 'transformers<5,>=4.56.0'"
    assert any("vLLM 0.11.2 declares transformers<5,>=4.56.0" in fact for fact in diagnosis.evidence)
    assert any("Qwen3VLConfig" in fact for fact in diagnosis.evidence)


def test_a_module_without_an_attribute_names_the_pin(tmp_path: Path) -> None:
    """`module 'xgrammar' has no attribute ...`: SGLang 0.5.9 pins xgrammar==0.1.27 (its wheel)."""
    traceback = _real_traceback(
        tmp_path,
        {"xgrammar/__init__.py": "VERSION = '0.1.10'\n"},
        "import xgrammar\nxgrammar.allocate_token_bitmask(1, 2)\n",
    )
    diagnosis = _rule(SGLANG_LAUNCH + traceback, DiagnoseOptions(include_user_patterns=False, engine_version="0.5.9"))
    assert diagnosis.title == "xgrammar (distribution xgrammar) does not match what SGLang 0.5.9 pins (xgrammar==0.1.27)"
    assert diagnosis.fix is not None and diagnosis.fix.steps[0] == "pip install xgrammar==0.1.27"
    assert diagnosis.fix.steps[1].endswith("pip install sglang==0.5.9")


def test_an_optional_module_names_the_extra_that_declares_it(tmp_path: Path) -> None:
    """vLLM's audio models import librosa, which only the `audio` extra installs (vllm-project/vllm#13912,
    #23232: "Please install vllm[audio]"); vLLM 0.11.2's wheel declares librosa under extra == "audio"."""
    traceback = _real_traceback(tmp_path, {}, "import librosa\n")
    diagnosis = _rule(VLLM_0112 + traceback)
    assert diagnosis.title == "librosa (distribution librosa) is missing: vLLM 0.11.2 declares librosa without a version in its extra audio"
    assert "The module librosa is not installed." in diagnosis.root_cause
    assert diagnosis.fix is not None and diagnosis.fix.steps == (
        "pip install 'vllm[audio]==0.11.2'",
        "or only this distribution: pip install librosa",
    )


def _built_library(tmp_path: Path, relative: str, symbol: str) -> Path:
    """A shared library at site-packages/`relative` that needs `symbol`, which nothing loaded provides."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is needed to build a library with an undefined symbol")
    site = tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    target = site / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    source = tmp_path / "ext.c"
    source.write_text(f"extern void {symbol}(void);\nvoid *PyInit__C(void) {{ {symbol}(); return 0; }}\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(target), str(source)], check=True)
    return site


def _undefined_torch_symbol(tmp_path: Path) -> str:
    site = _built_library(tmp_path, "vllm/_C.abi3.so", "_ZN5torch3jit17parseSchemaOrNameERKSsb")
    (site / "vllm" / "__init__.py").write_text("")
    script = tmp_path / "serve.py"
    script.write_text("import vllm._C\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env={"PYTHONPATH": str(site)})
    assert "undefined symbol" in done.stderr, done.stderr
    return done.stderr


def test_an_undefined_torch_symbol_in_vllm_C_names_the_torch_the_release_pins(tmp_path: Path) -> None:
    """vllm-project/vllm#13608, #5501, #3528: `vllm/_C.abi3.so: undefined symbol: _ZN5torch…` after another torch
    was installed.  vLLM 0.11.2's wheel pins torch==2.9.0."""
    stderr = _undefined_torch_symbol(tmp_path)
    assert "undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSsb" in stderr, stderr
    diagnosis = _rule(VLLM_0112 + stderr)
    assert diagnosis.title == "vllm._C was built against another torch than vLLM 0.11.2 pins (torch==2.9.0)"
    assert diagnosis.fix is not None and diagnosis.fix.steps[0] == "pip install torch==2.9.0"


def test_an_undefined_torch_symbol_in_an_extension_the_release_does_not_pin_names_that_extension(tmp_path: Path) -> None:
    """Stop 39's blind split: flash-attn's `flash_attn_2_cuda…so: undefined symbol: _ZN3c10…` under vLLM, which does
    not pin flash-attn: reinstalling the release's torch pin leaves the extension as it was built, so the fix names
    flash-attn first."""
    site = _built_library(tmp_path, "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so", "_ZN3c105ErrorC2ENS_14SourceLocationE")
    script = tmp_path / "serve.py"
    script.write_text("import flash_attn_2_cuda\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env={"PYTHONPATH": str(site)})
    assert "undefined symbol" in done.stderr, done.stderr
    diagnosis = _rule(VLLM_0112 + done.stderr)
    assert diagnosis.fix is not None and "flash-attn" in diagnosis.fix.summary
    assert diagnosis.fix.steps[0].startswith("Reinstall or rebuild flash-attn against the installed torch")
    assert "pip install torch==2.9.0" in diagnosis.fix.steps


def test_flash_attn_built_for_another_torch_leads_with_flash_attn_when_the_release_is_unknown(tmp_path: Path) -> None:
    """Stop 40 (issue 28, class 1): the same flash-attn failure with no version in the log.  The release's torch pin
    is unknown, and no SGLang release pins flash-attn: reinstalling SGLang leaves the extension as it was built, so
    the fix rebuilds flash-attn and names its shared object; a std::__cxx11 symbol is read as version or ABI."""
    symbol = "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
    site = _built_library(tmp_path, "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so", symbol)
    script = tmp_path / "serve.py"
    script.write_text("import flash_attn_2_cuda\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env={"PYTHONPATH": str(site)})
    assert f"undefined symbol: {symbol}" in done.stderr, done.stderr
    diagnosis = _rule(SGLANG_LAUNCH + done.stderr)
    assert diagnosis.engine_version is None
    assert diagnosis.title.startswith("flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so (flash-attn) was built against")
    assert diagnosis.fix is not None and diagnosis.fix.summary.startswith("Reinstall flash-attn built for the installed torch")
    assert "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so" in diagnosis.fix.steps[0]
    assert not any('pip install "sglang' in step for step in diagnosis.fix.steps)
    assert any("std::__cxx11" in fact for fact in diagnosis.evidence)


def test_an_undefined_torch_symbol_in_the_engines_own_extension_names_its_shared_object(tmp_path: Path) -> None:
    """The engine's own compiled module with the release unknown: reinstalling the release is the fix, and a
    build from source is named as the case it does not cover, with the shared object that failed."""
    diagnosis = _rule(VLLM_SERVE + _undefined_torch_symbol(tmp_path))
    assert diagnosis.fix is not None and 'pip install "vllm==<your version>"' in diagnosis.fix.steps
    assert diagnosis.fix.steps[-1].startswith("if vllm was built from source here, rebuild it")
    assert "_C.abi3.so" in diagnosis.fix.steps[-1]


def test_a_config_name_transformers_now_ships_is_transformers_newer_than_the_release(tmp_path: Path) -> None:
    """Stop 39's blind split (vllm-project/vllm-ascend#2046, vllm-project/vllm#22178): vLLM 0.9's import registers
    'aimv2', which transformers 4.54 ships itself.  vLLM 0.9.2 declares transformers>=4.51.1, a range the newer
    transformers satisfies: the fix names the range as a fact and offers no pip command that would keep it."""
    traceback = real_traceback("""
        class _LazyConfigMapping:
            def register(self, key):
                raise ValueError(f"'{key}' is already used by a Transformers config, pick another name.")

        _LazyConfigMapping().register("aimv2")
        """, "venv/lib/python3.11/site-packages/transformers/models/auto/configuration_auto.py")
    diagnosis = _rule("INFO 08-04 06:54:30 [api_server.py:1043] vLLM API server version 0.9.2\n" + traceback)
    assert diagnosis.title == "transformers newer than vLLM 0.9.2 was made for: both register the config 'aimv2'"
    assert diagnosis.fix is not None and not any(step.startswith("pip install") for step in diagnosis.fix.steps)
    assert "no upper bound" in " ".join(diagnosis.evidence)


# vLLM 0.8.5's wheel pins torch==2.6.0, whose PyPI wheel declares nvidia-cuda-runtime-cu12==12.4.127
# (facts/torch_builds.json); an RTX 5090 is sm_120, which CUDA 12.8 is the first toolkit to compile for.
VLLM_085_ON_5090 = (
    "INFO 05-02 10:00:00 [__init__.py:239] Automatically detected platform cuda.\n"
    "INFO 05-02 10:00:01 [api_server.py:1043] vLLM API server version 0.8.5\n"
    "INFO 05-02 10:00:02 [cuda.py:292] Using device NVIDIA GeForce RTX 5090\n"
)


def test_a_pinned_torch_without_kernels_for_the_logs_gpu_is_not_offered(tmp_path: Path) -> None:
    """The held-out split's harm class: the rule printed the release's torch pin where that torch's wheel has no
    kernels for the GPU in the same paste, which leads into a second failure ("no kernel image is available").
    The pip commands go; what is known is said; which build fits is asked."""
    diagnosis = _rule(VLLM_085_ON_5090 + _undefined_torch_symbol(tmp_path))
    assert diagnosis.fix is not None
    assert diagnosis.fix.steps == () and diagnosis.fix.command is None
    assert "torch==2.6.0" not in " ".join(diagnosis.fix.steps)
    assert "built with CUDA 12.4" in diagnosis.fix.summary and "sm_120" in diagnosis.fix.summary
    assert diagnosis.fix.needs_input and "CUDA 12.8 or newer" in diagnosis.fix.needs_input[0]


def test_the_same_pin_on_a_gpu_its_build_knows_is_offered(tmp_path: Path) -> None:
    text = VLLM_085_ON_5090.replace("RTX 5090", "RTX 4090") + _undefined_torch_symbol(tmp_path)
    diagnosis = _rule(text)
    assert diagnosis.fix is not None and diagnosis.fix.steps[0] == "pip install torch==2.6.0"


def test_an_undefined_symbol_of_the_engines_own_code_is_not_a_torch_mismatch(tmp_path: Path) -> None:
    """vllm-project/vllm#23925: a source build missing one of vLLM's own kernels (`_Z24silu_and_mul_nvfp4_quant…`),
    not torch's C++ library: nothing is said of torch."""
    site = _built_library(tmp_path, "vllm/_C.abi3.so", "_Z24silu_and_mul_nvfp4_quantRN2at6TensorES1_S1_S1_")
    (site / "vllm" / "__init__.py").write_text("")
    script = tmp_path / "serve.py"
    script.write_text("import vllm._C\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env={"PYTHONPATH": str(site)})
    diagnosis = _diagnosis(VLLM_0112 + done.stderr)
    assert diagnosis is None or diagnosis.pattern != "rule-dependency-version", diagnosis


def test_a_version_check_names_the_pin(tmp_path: Path) -> None:
    """transformers' require_version (transformers/utils/versions.py: "{requirement} is required for a normal
    functioning of this module, but found {pkg}=={got_ver}."), here on tokenizers; vLLM 0.11.2 pins
    tokenizers>=0.21.1."""
    program = (
        "raise ImportError('tokenizers>=0.21,<0.22 is required for a normal functioning of this module, but found "
        "tokenizers==0.20.3.')\n"
    )
    diagnosis = _rule(VLLM_0112 + _real_traceback(tmp_path, {}, program))
    assert diagnosis.title == "tokenizers does not match what vLLM 0.11.2 pins (tokenizers>=0.21.1)"
    assert diagnosis.fix is not None and diagnosis.fix.steps[0] == "pip install 'tokenizers>=0.21.1'"


def test_an_unknown_release_gets_the_known_pins_and_no_invented_version(tmp_path: Path) -> None:
    """The log shows vLLM but not its release: the pins the known releases declare, and the fix is the release's
    own pins (reinstall it), with no transformers version logsleuth would have to invent."""
    traceback = _real_traceback(
        tmp_path, {"transformers/__init__.py": ""}, "from transformers import Qwen3VLConfig\n"
    )
    diagnosis = _rule(VLLM_SERVE + traceback)
    assert diagnosis.title == "transformers (distribution transformers) does not match what the vLLM release pins"
    assert "vLLM releases declare transformers:" in diagnosis.root_cause
    newest_first, newest_last, newest_pin = requires.pins_across("vllm", "transformers")[-1]
    assert f"{newest_pin} ({newest_first}" in diagnosis.root_cause
    assert "older pins, the first" in diagnosis.root_cause
    assert diagnosis.fix is not None
    assert diagnosis.fix.steps[-1] == 'pip install "vllm==<your version>"'
    assert not any("transformers" in step for step in diagnosis.fix.steps)
    # the release is asked for, with the commands that print it (needs_input), never guessed
    assert len(diagnosis.fix.needs_input) == 1 and "`pip show vllm`" in diagnosis.fix.needs_input[0]
    assert "print(vllm.__version__)" in diagnosis.fix.needs_input[0]


def test_a_known_release_shows_its_pin_and_asks_for_no_release(tmp_path: Path) -> None:
    """The release the log names answers with its own pin line (vLLM 0.11.2's wheel: transformers<5,>=4.56.0); nothing
    is asked for."""
    traceback = _real_traceback(
        tmp_path, {"transformers/__init__.py": ""}, "from transformers import Qwen3VLConfig\n"
    )
    diagnosis = _rule(VLLM_0112 + traceback)
    assert diagnosis.fix is not None and diagnosis.fix.steps[0] == "pip install 'transformers<5,>=4.56.0'"
    assert diagnosis.fix.needs_input == ()


def test_general_guidance_on_a_package_asks_for_the_unnamed_release(tmp_path: Path) -> None:
    """vLLM registering a config name transformers now ships (vllm-project/vllm-ascend#2046), the release not in the
    log: the rule needs the release's range, so general guidance answers, and it asks for the release with the
    command that prints it rather than guessing which pins apply."""
    traceback = real_traceback("""
        class _LazyConfigMapping:
            def register(self, key):
                raise ValueError(f"'{key}' is already used by a Transformers config, pick another name.")

        _LazyConfigMapping().register("aimv2")
        """, "venv/lib/python3.11/site-packages/transformers/models/auto/configuration_auto.py")
    diagnosis = _diagnosis(VLLM_SERVE + traceback)
    assert diagnosis is not None and diagnosis.basis == "general" and diagnosis.category == "dependency-version"
    assert diagnosis.fix is not None
    asked = [line for line in diagnosis.fix.needs_input if "`pip show vllm`" in line]
    assert asked and asked[0] in diagnosis.fix.steps  # said in the report, and in the JSON's needs_input
    assert "--engine-version" in asked[0]


def test_a_guessed_version_is_treated_as_unknown(tmp_path: Path) -> None:
    """A version inferred from code layout may be wrong: its release's pins are not printed as the fix."""
    traceback = _real_traceback(tmp_path, {"xgrammar/__init__.py": ""}, "import xgrammar\nxgrammar.GrammarCompiler\n")
    guessed = traceback.replace('File "' + str(tmp_path / "serve.py"), 'File "/usr/lib/python3/dist-packages/sglang/srt/utils/common.py')
    report = diagnose_text(SGLANG_LAUNCH + guessed, OPTIONS)
    assert report.launch.engine_version_source == "inferred"
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern == "rule-dependency-version"
    assert diagnosis.title.endswith("does not match what the SGLang release pins")


def test_the_engines_own_module_is_not_dependency_drift(tmp_path: Path) -> None:
    """`No module named 'vllm.…'` on vLLM is its own code (an engine bug or a broken install), not a pin."""
    traceback = _real_traceback(tmp_path, {"vllm/__init__.py": ""}, "import vllm.model_executor.models.foo\n")
    diagnosis = _diagnosis(VLLM_0112 + traceback)
    assert diagnosis is None or diagnosis.pattern != "rule-dependency-version", diagnosis


def test_a_module_no_release_declares_is_left_to_the_honest_category(tmp_path: Path) -> None:
    traceback = _real_traceback(tmp_path, {}, "import some_private_helper\n")
    diagnosis = _diagnosis(VLLM_0112 + traceback)
    assert diagnosis is None or diagnosis.pattern != "rule-dependency-version", diagnosis


def test_pins_are_looked_up_for_the_exact_release_only() -> None:
    assert requires.pinned_requirement("sglang", "0.5.9", "transformers") == "transformers==4.57.1"
    assert requires.pinned_requirement("sglang", "0.5.9", "Flashinfer_Python") == "flashinfer-python==0.6.3"
    assert requires.pinned_requirement("sglang", "0.5.9.post99", "transformers") is None
    assert requires.pinned_requirement("sglang", None, "transformers") is None
    assert requires.pinned_requirement("vllm", "0.11.2", "no-such-dist") is None
    old = requires.pin("sglang", "0.4.10.post2", "transformers")  # only in an extra, which srt includes
    assert old is not None and old.requirement == "transformers==4.54.1"
    assert old.extras == ("runtime-common",) and "srt" in old.included_by
    for release in ORACLE_RELEASES:
        engine, version = release.split("-", 1)
        assert version in requires.known_releases(engine)


def test_modules_map_to_the_distributions_that_install_them() -> None:
    assert imports.distributions_of("google.protobuf.internal") == ("protobuf",)
    assert "opencv-python-headless" in imports.distributions_of("cv2")
    assert imports.distributions_of("sgl_kernel") == ("sgl-kernel", "sglang-kernel")  # renamed in 0.5.23's pins
    assert imports.distributions_of("flashinfer.jit") == ("flashinfer-python",)
    assert imports.distributions_of("no_such_module") == ()


@pytest.mark.parametrize("release", ORACLE_RELEASES)
def test_the_data_file_is_what_the_script_reads_from_the_installed_release(release: str) -> None:
    """requires.json against the METADATA of the oracle venvs' installed releases, read again by the script's own
    code: the data was read from the wheels, not typed."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from scripts.facts.requires_dist import metadata_requires, release_entry

    engine, version = release.split("-", 1)
    metadata = next(iter(ORACLES.glob(f"{release}/lib/python3*/site-packages/{release}.dist-info/METADATA")), None)
    if metadata is None:
        pytest.skip(f"no oracle venv {release}")
    expected = release_entry(metadata_requires(metadata.read_text()), engine)
    stored = requires._releases()[engine][version]
    assert {key: stored.get(key) for key in expected} == expected
    assert stored["file"].startswith(f"{engine}-{version}-")


def test_an_import_error_that_was_only_being_handled_is_not_the_cause(tmp_path: Path) -> None:
    """"During handling of the above exception, another exception occurred": the optional import failed and was
    handled; what ended the process is the later error, not the missing module."""
    program = "try:\n    import librosa\nexcept ImportError:\n    raise RuntimeError('the engine core died')\n"
    traceback = _real_traceback(tmp_path, {}, program)
    assert "During handling of the above exception" in traceback
    diagnosis = _diagnosis(VLLM_0112 + traceback)
    assert diagnosis is None or diagnosis.pattern != "rule-dependency-version", diagnosis


def test_an_unknown_release_names_the_extras_that_declare_a_missing_module(tmp_path: Path) -> None:
    """Without the release, the extra is not picked for it (it varies by release): the step names the extras the
    known releases declare the module in (vLLM's librosa: audio from 0.6; 0.5.5 needed it for a plain install)."""
    diagnosis = _rule(VLLM_SERVE + _real_traceback(tmp_path, {}, "import librosa\n"))
    assert diagnosis.title == "librosa (distribution librosa) is missing: vLLM releases declare librosa"
    assert diagnosis.fix is not None
    assert diagnosis.fix.steps[-1] == (
        'pip install "vllm==<your version>", or where your release declares librosa only in an extra (audio): '
        'pip install "vllm[<extra>]==<your version>"'
    )


# vLLM releases before 0.11 declare transformers with a lower bound only (vLLM 0.8.5's wheel: transformers>=4.51.1),
# so pip keeps a transformers 5 installed beside them (vllm-project/vllm#30466, unslothai/unsloth#3908,
# nvidia-cosmos/cosmos-transfer1#174).  collect_env's `[pip3] name==version` lines show what is installed.
VLLM_085_ENV = "[pip3] transformers==5.0.0\n[pip3] vllm==0.8.5\n"


def test_a_removed_name_under_an_open_range_names_its_lower_bound_not_a_reinstall(tmp_path: Path) -> None:
    traceback = _real_traceback(
        tmp_path, {"transformers/__init__.py": "__version__ = '5.0.0'\n"}, "from transformers import AutoModelForVision2Seq\n")
    diagnosis = _rule(VLLM_085_ENV + VLLM_SERVE + traceback)
    assert diagnosis.title == "transformers 5.0.0 is newer than vLLM 0.8.5 was made for (it declares transformers>=4.51.1, no upper bound)"
    assert diagnosis.fix is not None and diagnosis.fix.steps == ("pip install transformers==4.51.1",)
    assert "reinstall" not in " ".join(diagnosis.fix.steps)


@pytest.mark.parametrize("installed", ["4.44.0", "4.51.3"])
def test_an_installed_version_not_past_the_releases_era_keeps_the_release_pin(tmp_path: Path, installed: str) -> None:
    """transformers 4.44.0 is below vLLM 0.8.5's lower bound; 4.51.3 is inside it but older than the bound a later vLLM
    asks for (0.10.1.1: >=4.55.0), so it may be too old for the name rather than too new: the release's pin stays."""
    traceback = _real_traceback(
        tmp_path, {"transformers/__init__.py": f"__version__ = '{installed}'\n"}, "from transformers import Qwen3VLConfig\n")
    diagnosis = _rule(VLLM_085_ENV.replace("5.0.0", installed) + VLLM_SERVE + traceback)
    assert diagnosis.fix is not None and diagnosis.fix.steps[0] == "pip install 'transformers>=4.51.1'"


# When the log names no engine (reasoning/dependencies.py `_engine_not_named`): a bare import error or a package's
# own version check, pasted alone or from a wrapper, with no program, path or command of SGLang or vLLM.  The rule
# names the pins of every engine whose releases declare the package and never guesses the engine.


def _engine_free_diagnosis(text: str) -> Diagnosis:
    diagnosis = _diagnosis(text)
    assert diagnosis is not None
    return diagnosis


def _final_line(traceback: str) -> str:
    return traceback.strip().splitlines()[-1]


def test_a_name_the_installed_package_lacks_names_both_engines_pins_and_no_engine(tmp_path: Path) -> None:
    """A grammar package renamed a class (the shape of sgl-project/sglang#2166: xgrammar's CachedGrammarCompiler),
    pasted as its last line only."""
    traceback = _real_traceback(tmp_path, {"xgrammar/__init__.py": "class GrammarCompiler: pass\n"},
                                "from xgrammar import CachedGrammarCompiler\n")
    diagnosis = _engine_free_diagnosis(_final_line(traceback) + "\n")
    assert (diagnosis.pattern, diagnosis.category, diagnosis.basis) == ("rule-dependency-version", "dependency-version", "rule")
    assert diagnosis.engine is None and diagnosis.engine_version is None  # the engine is never guessed
    assert "CachedGrammarCompiler" in diagnosis.root_cause and "neither the engine nor its release" in diagnosis.root_cause
    assert any(fact.startswith("SGLang releases declare xgrammar: ") for fact in diagnosis.evidence)
    assert any(fact.startswith("vLLM releases declare xgrammar: ") for fact in diagnosis.evidence)
    assert diagnosis.fix is not None and "xgrammar your engine release pins" in diagnosis.fix.summary
    assert not diagnosis.fix.flags and diagnosis.fix.command is None


def test_a_submodule_name_is_read_through_its_distribution(tmp_path: Path) -> None:
    """outlines moved a function out of a submodule (the shape of sgl-project/sglang#2550), the whole traceback."""
    traceback = _real_traceback(tmp_path, {"outlines/__init__.py": "", "outlines/fsm/__init__.py": "",
                                           "outlines/fsm/json_schema.py": "def to_regex(schema): pass\n"},
                                "from outlines.fsm.json_schema import build_regex_from_schema\n")
    diagnosis = _engine_free_diagnosis(traceback)
    assert diagnosis.pattern == "rule-dependency-version" and diagnosis.engine is None
    assert "outlines.fsm.json_schema (distribution outlines)" in diagnosis.title  # the module as the message names it
    assert diagnosis.fix is not None and "outlines your engine release pins" in diagnosis.fix.summary


def test_a_pair_of_one_projects_packages_at_two_releases_names_both(tmp_path: Path) -> None:
    """flashinfer's import check of its cubin package (flashinfer/__init__.py raises it; NVIDIA-NeMo/Export-Deploy#679),
    rebuilt with our own versions."""
    source = ('__version__ = "0.6.10"\nflashinfer_cubin_version = "0.6.8.post1"\n'
              'if __version__ != flashinfer_cubin_version:\n'
              '    raise RuntimeError(f"flashinfer-cubin version ({flashinfer_cubin_version}) does not match "\n'
              '                       f"flashinfer version ({__version__}). Please install the same version of both packages.")\n')
    traceback = _real_traceback(tmp_path, {"flashinfer/__init__.py": source}, "import flashinfer\n")
    diagnosis = _engine_free_diagnosis(traceback)
    assert diagnosis.pattern == "rule-dependency-version" and diagnosis.engine is None
    assert "flashinfer-cubin 0.6.8.post1 and flashinfer-python 0.6.10 are different releases" in diagnosis.root_cause
    assert diagnosis.fix is not None and "flashinfer-cubin and flashinfer-python of one release" in diagnosis.fix.summary
    assert "FLASHINFER_DISABLE_VERSION_CHECK" not in diagnosis.fix.summary  # a bypass is no fix


def test_a_package_no_engine_release_declares_is_left_to_general_guidance(tmp_path: Path) -> None:
    """The look-alike: the same shape from a package neither engine declares is not drift from their pins."""
    traceback = _real_traceback(tmp_path, {"acmegrammar/__init__.py": "class GrammarCompiler: pass\n"},
                                "from acmegrammar import CachedGrammarCompiler\n")
    assert _engine_free_diagnosis(traceback).pattern != "rule-dependency-version"


def test_a_module_simply_missing_without_an_engine_is_left_to_general_guidance(tmp_path: Path) -> None:
    """`No module named 'X'` from a log naming no engine: a user's own script raises it as often as an engine."""
    traceback = _real_traceback(tmp_path, {}, "import xgrammar\n")
    assert _engine_free_diagnosis(traceback).pattern != "rule-dependency-version"
