"""The shape of a cut traceback's frames (issue 28, stop 47, branch cutframes; reasoning/frame_shapes.py,
facts/frame_shapes.toml), on real CPython tracebacks from our own code, cut before their exception line the way the
threads' pastes were (sgl-project/sglang#14500: an import chain; flashinfer-ai/flashinfer#2252 and
vllm-project/vllm#17018: a JIT compile chain; vllm-project/vllm#14092: a layer's constructor under make_layers):

- an import chain is an import-time failure (dependency-version), whatever the flags; and no feature step says "the
  check that failed is in FEATURE's code" for a failure raised while importing, cut or not;
- a JIT compile chain (flashinfer's build_and_load) is the toolchain's, not the attention backend's subsystem;
- a layer's constructor under make_layers names both readings (memory, a config's size);
- the engine's argument validation (check_server_args) is invalid-flag-value;
- where no shape decides, the report asks for the line right after the last frame, and a category read from the
  innermost frame's subsystem alone is labelled a guess."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import diagnose_with_patterns, real_traceback, traceback_of_installed
from tests.test_cut_tracebacks import cut_after


def _argument_check_cut() -> str:
    """SGLang's ServerArgs.__post_init__ calling its check, cut right after the call: the argument check's shape."""
    printed = real_traceback('''
class ServerArgs:
    def __post_init__(self):
        self.check_server_args()

    def check_server_args(self):
        raise ValueError("the settings do not fit")


ServerArgs().__post_init__()
''', "sglang/srt/server_args.py")
    return cut_after(printed, "self.check_server_args()")


def _cut_before_the_raise(traceback_text: str) -> str:
    """`traceback_text` without its exception line and its last frame's source line (the raising statement, which
    would name the type): the paste cut right after the last frame's `File …` line."""
    lines = traceback_text.rstrip("\n").splitlines()
    last_frame = max(index for index, line in enumerate(lines) if line.lstrip().startswith("File "))
    return "\n".join(lines[: last_frame + 1]) + "\n"


# An engine's entry point importing its server, whose module body imports a module that fails at import.
IMPORT_FILES = {
    "sglang/launch_server.py": "from sglang.srt.entrypoints.http_server import launch_server\n",
    "sglang/srt/entrypoints/http_server.py": "from sglang.srt.entrypoints.engine import launch_subprocesses\n",
    "sglang/srt/entrypoints/engine.py": "from sglang.srt.lora.lora_manager import LoRAManager\n",
    "sglang/srt/lora/lora_manager.py": "raise RuntimeError('the kernel library could not be loaded')\n",
}


def test_an_import_chain_cut_before_its_exception_line_is_an_import_time_failure(tmp_path: Path) -> None:
    printed = traceback_of_installed(tmp_path, IMPORT_FILES, "import sglang.launch_server\n").stderr
    log = _cut_before_the_raise(printed)
    assert "RuntimeError" not in log and log.rstrip().endswith("in <module>")
    diagnosis = diagnose_with_patterns("python3 -m sglang.launch_server --model-path /models/m --quantization fp8\n" + log)
    assert diagnosis.category == "dependency-version", diagnosis.root_cause
    assert "the frames' shape, an import chain" in diagnosis.root_cause
    assert "quantization" not in diagnosis.root_cause


def test_no_feature_step_for_a_failure_raised_while_importing(tmp_path: Path) -> None:
    printed = traceback_of_installed(tmp_path, IMPORT_FILES, "import sglang.launch_server\n").stderr
    launch = "python3 -m sglang.launch_server --model-path /models/m --enable-lora --lora-paths a=/adapters/a\n"
    for log in (printed, _cut_before_the_raise(printed)):
        diagnosis = diagnose_with_patterns(launch + log)
        steps = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
        assert "which runs only when the feature is on" not in steps and "your launch turns on" not in steps, steps


def test_a_jit_compile_chain_is_the_toolchain_s_not_the_attention_backend_s(tmp_path: Path) -> None:
    files = {
        "vllm/v1/attention/backends/flashinfer.py": (
            "from flashinfer.prefill import get_batch_prefill_module\n\n\n"
            "def build():\n    return get_batch_prefill_module('fa2')\n"),
        "flashinfer/prefill.py": (
            "from flashinfer.jit.core import JitSpec\n\n\n"
            "def get_batch_prefill_module(backend):\n    return JitSpec(backend).build_and_load()\n"),
        "flashinfer/jit/core.py": (
            "class JitSpec:\n    def __init__(self, name):\n        self.name = name\n\n"
            "    def build_and_load(self):\n        raise RuntimeError('Ninja build failed.')\n"),
    }
    printed = traceback_of_installed(tmp_path, files, "from vllm.v1.attention.backends.flashinfer import build\nbuild()\n")
    log = cut_after(printed.stderr, "return JitSpec(backend).build_and_load()")
    diagnosis = diagnose_with_patterns("vllm serve /models/m\n" + log)
    assert diagnosis.category == "dependency-version", diagnosis.root_cause
    assert "a JIT compile chain" in diagnosis.root_cause


def test_a_layer_constructor_under_make_layers_names_both_readings() -> None:
    printed = real_traceback('''
def make_layers(count, layer_fn):
    return [layer_fn(prefix=str(index)) for index in range(count)]


class Attention:
    def __init__(self, prefix):
        raise ValueError("no room")


class Model:
    def __init__(self):
        self.layers = make_layers(2, lambda prefix: Attention(prefix=prefix))


Model()
''', "vllm/model_executor/models/llama.py")
    log = cut_after(printed, "return [layer_fn(prefix=str(index)) for index in range(count)]")
    diagnosis = diagnose_with_patterns(log)
    assert diagnosis.category == "gpu-oom", diagnosis.root_cause
    steps = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
    assert "CUDA out of memory" in steps and "config's sizes" in steps


def test_the_engine_s_argument_check_is_invalid_flag_value() -> None:
    diagnosis = diagnose_with_patterns(_argument_check_cut())
    assert diagnosis.category == "invalid-flag-value", diagnosis.root_cause
    assert "argument validation" in diagnosis.root_cause


def test_a_cut_no_shape_decides_asks_for_the_line_after_the_last_frame() -> None:
    printed = real_traceback('''
def run_chat():
    start()


def start():
    raise TypeError("nothing")


run_chat()
''', "llamafactory/chat/chat_model.py")
    diagnosis = diagnose_with_patterns(_cut_before_the_raise(printed))
    assert diagnosis.category == "unclassified", diagnosis.root_cause
    assert diagnosis.fix is not None and any("right after the last frame" in need for need in diagnosis.fix.needs_input)


def test_a_category_read_from_the_innermost_subsystem_alone_is_labelled_a_guess() -> None:
    from tests.test_cut_tracebacks import ENGINE_CORE

    diagnosis = diagnose_with_patterns(cut_after(ENGINE_CORE, "self._initialize_kv_caches(config)"))
    assert diagnosis.category == "kv-cache-memory"
    assert "That is a guess from where the process was, not a finding" in diagnosis.root_cause
    assert diagnosis.fix is not None and "(a guess from the innermost frame's subsystem)" in diagnosis.fix.summary


def test_a_shape_s_reading_is_no_guess() -> None:
    diagnosis = diagnose_with_patterns(_argument_check_cut())
    assert "a guess" not in diagnosis.root_cause


def test_a_check_cut_while_it_called_a_loader_is_not_the_argument_check() -> None:
    """`__post_init__` loading the model's HF config (get_config): the loader failed (a download, auth, an unknown
    model_type), not a check of the launch's settings."""
    printed = real_traceback('''
def get_config(model):
    raise OSError("cannot load the config")


class ModelConfig:
    def __post_init__(self):
        self.hf_config = get_config("m")


ModelConfig().__post_init__()
''', "vllm/config/__init__.py")
    diagnosis = diagnose_with_patterns(cut_after(printed, 'self.hf_config = get_config("m")'))
    assert "argument validation" not in diagnosis.root_cause
