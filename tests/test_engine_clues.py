"""Positive evidence of the engine on short pastes that held none main could read (issue 28: the engine left unnamed
on a third of short pastes): a frame whose path the paste cut with an ellipsis but whose module path below the package
is one engine's alone (the engine module index), an exception raised as a class only one engine defines, and, for a
message both engines' code raises, the one engine the paste shows installed (`pip show`, pip list's row), the Triton
vLLM backend's own record, and a frame of a traceback rich drew in a box (typer's CLIs: huggingface/lighteval#504,
huggingface/open-r1#518), its path wrapped at the box's edge or not.  Each must
lose to the stronger evidence already ranked (a launch command, a header, full frames), and a paste showing both
engines keeps its decision.

Tracebacks are real CPython's, of modules laid out as the engines lay theirs out in a temporary site-packages, with the
directories up to the package cut to `.../`, as users hide theirs.  vLLM's `EngineDeadError` is vllm/v1/engine/
exceptions.py's; `No model architectures are specified` is raised by both engines' model config (SGLang copied the
check); pip's `show` prints `Name:` then `Version:`; the Triton record is the backend's `[vllm] ` prefix
(triton-inference-server/server#8578); rich's boxes are rendered here by rich itself."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from logsleuth.api import diagnose_text
from logsleuth.facts.engine_modules import engines_with_module_tail
from logsleuth.ingest.engine_from_message import engine_of_type
from tests.helpers import install_module, traceback_in_package

SHARED_MESSAGE = "ValueError: No model architectures are specified\n"
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n"


def _cut(traceback: str, package: str) -> str:
    """The traceback with every path's directories up to and including `package/` cut to `.../`, as a user hides
    their own directories."""
    lines = []
    for line in traceback.splitlines(keepends=True):
        head, found, tail = line.partition(f"/site-packages/{package}/")
        lines.append(f'  File ".../{tail}' if found else line)
    return "".join(lines)


def test_the_module_index_knows_which_engine_has_a_module_tail() -> None:
    assert engines_with_module_tail("srt/managers/scheduler.py") == {"sglang"}
    assert engines_with_module_tail("model_executor/layers/quantization/fp8.py") == {"vllm"}
    assert engines_with_module_tail("v1/engine/core.py") == {"vllm"}
    # Too short to name a module, in both trees, or in neither.
    assert engines_with_module_tail("managers/scheduler.py") == frozenset()
    assert engines_with_module_tail("distributed/device_communicators/pynccl.py") == {"vllm", "sglang"}
    assert engines_with_module_tail("src/models/llama.py") == frozenset()


def test_a_frame_cut_above_the_engines_module_path_names_the_engine(tmp_path: Path) -> None:
    vllm = traceback_in_package(tmp_path / "v", "vllm/model_executor/layers/quantization/fp8.py",
                                "raise ValueError('weight scale is missing')")
    paste = _cut(vllm, "vllm")
    assert "/vllm/" not in paste and ".../model_executor/layers/quantization/fp8.py" in paste
    assert diagnose_text(paste).launch.engine == "vllm"
    sglang = traceback_in_package(tmp_path / "s", "sglang/srt/managers/scheduler.py", "raise RuntimeError('no room')")
    assert diagnose_text(_cut(sglang, "sglang")).launch.engine == "sglang"


def test_look_alike_a_cut_frame_in_both_trees_or_too_short_names_nothing(tmp_path: Path) -> None:
    both = traceback_in_package(tmp_path / "b", "vllm/layers/quantization/fp8.py", "raise ValueError('weight scale is missing')")
    assert diagnose_text(_cut(both, "vllm")).launch.engine is None  # `layers/quantization/fp8.py`: both engines'
    short = traceback_in_package(tmp_path / "s", "pkg/layers/linear.py", "raise ValueError('weight scale is missing')")
    assert diagnose_text(_cut(short, "pkg")).launch.engine is None  # one directory: anyone's


def test_a_cut_frame_loses_to_stronger_evidence_and_to_both_engines(tmp_path: Path) -> None:
    """SGLang 0.3 to 0.5 ran vLLM's layers: a cut vLLM frame under SGLang's launch command or its rank-tagged header is
    SGLang's run."""
    cut = _cut(traceback_in_package(tmp_path, "vllm/model_executor/layers/quantization/fp8.py",
                                    "raise ValueError('weight scale is missing')"), "vllm")
    command = "python3 -m sglang.launch_server --model-path /models/m --quantization fp8\n"
    assert diagnose_text(command + cut).launch.engine == "sglang"
    header = "[2025-03-01 10:00:00 TP0] Load weight begin. avail mem=78.50 GB\n"
    assert diagnose_text(header + cut).launch.engine == "sglang"


def test_an_exception_class_only_one_engine_defines_names_it() -> None:
    assert engine_of_type("EngineDeadError") == "vllm"
    assert engine_of_type("vllm.v1.engine.exceptions.EngineDeadError") == "vllm"
    assert diagnose_text("EngineDeadError: the engine went away while serving a request\n").launch.engine == "vllm"


def test_look_alike_an_exception_class_of_another_package_or_too_plain_names_nothing() -> None:
    assert engine_of_type("lmdeploy.serve.exceptions.EngineDeadError") is None  # another package's class of that name
    assert engine_of_type("BadRequestError") is None  # the openai client's too: a carrier of the engine's answer
    assert engine_of_type("InternalError") is None  # two words: any program's
    assert diagnose_text("openai.BadRequestError: Error code: 400 - {'detail': 'bad'}\n").launch.engine is None


def test_an_engines_exception_class_loses_to_the_other_engines_header() -> None:
    paste = ("[2025-03-01 10:00:00 TP0] Scheduler hit an exception.\n"
             "EngineDeadError: the engine went away while serving a request\n")
    assert diagnose_text(paste).launch.engine == "sglang"


def test_a_message_both_engines_raise_names_the_one_engine_the_paste_shows_installed() -> None:
    pip_show = "$ pip show vllm\nName: vllm\nVersion: 0.8.5\nSummary: an inference engine\n"
    report = diagnose_text(pip_show + SHARED_MESSAGE)
    assert report.launch.engine == "vllm" and report.launch.engine_version == "0.8.5"
    assert diagnose_text("sglang                            0.4.6.post1\n" + SHARED_MESSAGE).launch.engine == "sglang"


def test_the_one_engine_listed_names_it_beside_any_words_and_both_listed_name_nothing() -> None:
    """A listing of what is installed that holds one engine's distribution names it beside torch's words too (stop 53's
    brief: the last blind split left pastes with only a listing and torch's error unnamed); both engines listed
    name nothing."""
    pip_show = "$ pip show vllm\nName: vllm\nVersion: 0.8.5\n"
    assert diagnose_text(pip_show + OOM).launch.engine == "vllm"
    assert diagnose_text("vllm 0.8.5\nsglang 0.4.6.post1\n" + SHARED_MESSAGE).launch.engine is None
    assert diagnose_text("vllm 0.8.5\nsglang 0.4.6.post1\n" + OOM).launch.engine is None
    assert diagnose_text(SHARED_MESSAGE).launch.engine is None


def test_a_listing_names_no_engine_beside_a_failure_whose_frames_show_other_code(tmp_path: Path) -> None:
    """Installed is not ran when the failure shows where it ran: a training library's traceback (real CPython, frames
    in trl's package) beside `pip show vllm` is the trainer's failure, not vLLM's; without frames the listing decides."""
    trainer = traceback_in_package(tmp_path, "trl/trainer/grpo_trainer.py",
                                   "raise RuntimeError('CUDA out of memory. Tried to allocate 2.00 GiB')")
    pip_show = "$ pip show vllm\nName: vllm\nVersion: 0.8.5\n"
    assert diagnose_text(pip_show + trainer).launch.engine is None
    assert diagnose_text(pip_show + trainer.splitlines()[-1] + "\n").launch.engine == "vllm"


def test_a_vllm_release_a_sglang_release_pins_is_no_evidence_for_a_message_both_raise() -> None:
    """Guards review M3 of stop 48: SGLang 0.4.4.post2 to 0.4.9.post2 pin vllm==0.6.7.dev2 and earlier releases other
    vLLM versions (facts/requires.json), so a SGLang user's `pip show vllm` beside SGLang's copy of vLLM's check
    shows vLLM installed, not ran; a vLLM version no SGLang release pins still decides."""
    for version in ("0.6.7.dev2", "0.5.5", "0.7.2", "0.6.3.post1"):
        pip_show = f"$ pip show vllm\nName: vllm\nVersion: {version}\n"
        assert diagnose_text(pip_show + SHARED_MESSAGE).launch.engine is None, version
    assert diagnose_text("$ pip show vllm\nName: vllm\nVersion: 0.9.2\n" + SHARED_MESSAGE).launch.engine == "vllm"


def test_a_message_only_one_engine_raises_outranks_what_is_installed() -> None:
    """SGLang 0.3 to 0.4 required vLLM, so a paste may list vLLM beside SGLang's own error."""
    only_sglang = "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n"
    assert diagnose_text("$ pip show vllm\nName: vllm\nVersion: 0.6.3\n" + only_sglang).launch.engine == "sglang"


def test_the_triton_vllm_backends_record_names_vllm() -> None:
    record = 'E1216 02:12:49.624646 179 model.py:248] "[vllm] Failed to start engine: NoneType: None\\n"\n'
    assert diagnose_text(record).launch.engine == "vllm"
    # The same words as the user's sentence are no record.
    assert diagnose_text("the [vllm] backend said: Failed to start engine\nRuntimeError: boom\n").launch.engine is None


def _rich_traceback(tmp_path: Path, module: str, width: int) -> str:
    """rich's own rendering of a traceback through `module` (installed under a site-packages tree in `tmp_path`) at a
    console `width` wide: a typer CLI's error as users paste it."""
    root, dotted = install_module(tmp_path, module, "def run():\n    return {}['missing']\n")
    script = tmp_path / "app.py"
    script.write_text(f"import sys\nsys.path.insert(0, {str(root)!r})\nfrom rich.console import Console\nfrom {dotted} import run\n"
                      f"try:\n    run()\nexcept Exception:\n    Console(width={width}, file=sys.stderr, color_system=None)"
                      ".print_exception()\n    sys.exit(1)\n", encoding="utf-8")
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=60).stderr


def test_a_frame_of_a_rich_traceback_names_the_engine_its_path_shows(tmp_path: Path) -> None:
    wide = _rich_traceback(tmp_path / "w", "lighteval/main_vllm.py", 200)
    assert "main_vllm.py:2 in run" in wide
    assert diagnose_text(wide).launch.engine == "vllm"
    narrow = _rich_traceback(tmp_path / "n", "lighteval/models/sglang/sglang_model.py", 60)
    assert "site-packages/lighteval/models/sglang/sglang_model.py" not in narrow  # rich wrapped the path at the box's edge
    assert diagnose_text(narrow).launch.engine == "sglang"


def test_look_alike_a_rich_traceback_of_other_code_names_nothing_and_loses_to_a_command(tmp_path: Path) -> None:
    assert diagnose_text(_rich_traceback(tmp_path / "a", "myapp/serving.py", 120)).launch.engine is None
    vllm_wrapper = _rich_traceback(tmp_path / "b", "lighteval/main_vllm.py", 120)
    command = "python3 -m sglang.launch_server --model-path /models/m --port 30000\n"
    assert diagnose_text(command + vllm_wrapper).launch.engine == "sglang"
