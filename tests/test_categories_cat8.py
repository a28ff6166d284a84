"""Stop 41's fourth blind split, in generic words (issue 28): the classes it left unclassified or misfiled.

CPython's AttributeError on a built-in type ('NoneType' object has no attribute …) is engine-bug at the engine's own
line and dependency-version in an installed package the engine's code called; the why names the failing frame.

A traceback cut before its exception line: its category comes from the subsystem the innermost own frame that a row
places stopped in (the KV cache's sizing, the profiling run, the distributed set-up, the model loader), with the note
that the exception line is missing; an outer frame's subsystem is only the path the call took.  Tracebacks are
printed by the real interpreter (tests.helpers.real_traceback), then cut before their exception line as a paste
cuts them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from logsleuth.models import Diagnosis
from tests.helpers import diagnose_without_patterns, real_traceback
from tests.test_categories_cat6 import no_rules  # noqa: F401 (no_rules: the fixture, used by pytestmark)

pytestmark = pytest.mark.usefixtures("no_rules")
VLLM_BANNER = "INFO 10-23 19:55:16 [__init__.py:239] Automatically detected platform cuda.\n"


def _cut_before_exception_line(traceback: str) -> str:
    """The real traceback cut after the source line marked `# cut`, as a paste cut at the end shows it: the frames
    inside it and the exception line are lost."""
    lines = traceback.splitlines()
    last = next(i for i, line in enumerate(lines) if line.rstrip().endswith("# cut"))
    return "\n".join(lines[: last + 1]) + "\n"


CUT_SUBSYSTEMS = [
    # vLLM v1 vllm/v1/core/kv_cache_utils.py: get_kv_cache_config -> check_enough_kv_cache_memory
    ("kv-cache-memory", "vllm/v1/core/kv_cache_utils.py", """
        def check_enough_kv_cache_memory(config, spec, available_memory):
            raise ValueError("cut")

        def get_kv_cache_config(config, spec, available_memory):
            check_enough_kv_cache_memory(config, spec, available_memory)  # cut

        get_kv_cache_config(None, None, 0)
        """),
    # vLLM 0.6 vllm/engine/llm_engine.py: _initialize_kv_caches calling the profiling run
    ("gpu-oom", "vllm/engine/llm_engine.py", """
        class Executor:
            def determine_num_available_blocks(self):
                raise RuntimeError("cut")

        class LLMEngine:
            def __init__(self):
                self.model_executor = Executor()
                self._initialize_kv_caches()

            def _initialize_kv_caches(self):
                num_gpu_blocks, num_cpu_blocks = self.model_executor.determine_num_available_blocks()  # cut

        LLMEngine()
        """),
    # SGLang sglang/srt/model_executor/model_runner.py: ModelRunner.__init__ -> init_torch_distributed
    ("nccl", "sglang/srt/model_executor/model_runner.py", """
        def init_process_group_somehow():
            raise RuntimeError("cut")

        class ModelRunner:
            def __init__(self):
                min_per_gpu_memory = self.init_torch_distributed()

            def init_torch_distributed(self):
                return init_process_group_somehow()  # cut

        ModelRunner()
        """),
    # vLLM vllm/model_executor/models/*.py: a model's load_weights handing a checkpoint tensor to its parameter's
    # weight_loader (stop 42: only a frame that reads the weights is weight-loading, not the loader's whole stage)
    ("weight-loading", "vllm/model_executor/models/qwen2.py", """
        def default_weight_loader(param, loaded_weight):
            raise RuntimeError("cut")

        class Qwen2Model:
            def load_weights(self, weights):
                for name, loaded_weight in weights:
                    default_weight_loader(None, loaded_weight)  # cut

        Qwen2Model().load_weights([("w", 1)])
        """),
    # The innermost frame's subsystem, not the outer frame's (the model loader calling into a quantization method)
    ("quantization", "vllm/model_executor/layers/quantization/fp8.py", """
        def create_weights(layer):
            allocate(layer)  # cut

        def allocate(layer):
            raise RuntimeError("cut")

        def load_model(layers):
            for layer in layers:
                create_weights(layer)

        load_model([1])
        """),
]


@pytest.mark.parametrize(("category", "filename", "code"), CUT_SUBSYSTEMS, ids=[c[0] for c in CUT_SUBSYSTEMS])
def test_a_traceback_cut_before_its_exception_line_is_filed_by_its_innermost_subsystem(
        category: str, filename: str, code: str) -> None:
    diagnosis = diagnose_without_patterns(VLLM_BANNER + _cut_before_exception_line(real_traceback(code, filename)))
    assert diagnosis.category == category, diagnosis
    assert "exception line being missing from the paste" in diagnosis.root_cause


def test_the_same_frames_with_their_exception_line_are_read_from_its_words() -> None:
    """Whole, the traceback's own words and type are the evidence: a function name is no cue then."""
    code = CUT_SUBSYSTEMS[3][2]
    diagnosis = diagnose_without_patterns(VLLM_BANNER + real_traceback(code, CUT_SUBSYSTEMS[3][1]))
    assert diagnosis.category != "weight-loading", diagnosis


def test_a_cut_traceback_in_the_engines_busy_loop_is_a_labelled_serving_step_guess() -> None:
    """The engine's busy loop re-raising: where the process was names no subsystem, but the loop is the serving step
    (stop 56, facts/frame_shapes.toml serving-step: vllm/v1/engine/core.py EngineCore.run_busy_loop), read as a guess
    that says the exception line is missing."""
    traceback = real_traceback("""
        class EngineCore:
            def step(self):
                raise RuntimeError("cut")

            def run_busy_loop(self):
                while True:
                    self.step()  # cut

        EngineCore().run_busy_loop()
        """, "vllm/v1/engine/core.py")
    # as vLLM prints it: run_engine_core's logger.exception("EngineCore encountered a fatal error.") above the loop's
    # traceback, each line under the record's header (vllm/v1/engine/core.py, 0.8 on); the record names nothing
    # (review cut20 high 2), so the frames are read as without it
    printed = "EngineCore encountered a fatal error.\n" + _cut_before_exception_line(traceback)
    logged = "".join(f"ERROR 06-10 10:05:00 [core.py:710] {line}\n" for line in printed.splitlines())
    for paste in (_cut_before_exception_line(traceback), logged):
        diagnosis = diagnose_without_patterns(VLLM_BANNER + paste)
        assert diagnosis.category == "engine-bug", diagnosis
        assert "not a finding" in diagnosis.root_cause and "exception line being missing" in diagnosis.root_cause
        assert "--enforce-eager" in "\n".join(diagnosis.fix.steps)


# A transformers release too old for the model, in the raise sites' own words (transformers' configuration_auto.py,
# vLLM's transformers_utils/config.py), against the engine's own refusal of an architecture it lacks.
TRANSFORMERS_RELEASE_WORDINGS = [
    ("dependency-version", "ValueError: The checkpoint you are trying to load has model type `qwen3_moe` but "
     "Transformers does not recognize this architecture. This could be because of an issue with the checkpoint, or "
     "because your version of Transformers is out of date.\n"),
    ("dependency-version", "ValueError: Transformers version 4.57.1 is not supported for model /models/glm or model "
     "type glm4v_moe. Please upgrade transformers to >= 5.0.0.\n"),
    ("dependency-version", "ValueError: Gemma3 requires a newer version of transformers (>= 4.50.0).\n"),
    ("unsupported-architecture", "ValueError: Model architectures ['Qwen3ForCausalLM'] are not supported for now. "
     "Supported architectures: dict_keys(['LlamaForCausalLM', 'MistralForCausalLM'])\n"),
    ("unsupported-architecture", "ValueError: Model type gemma3n not recognized\n"),
]


@pytest.mark.parametrize(("category", "text"), TRANSFORMERS_RELEASE_WORDINGS,
                         ids=[f"{c}-{i}" for i, (c, _) in enumerate(TRANSFORMERS_RELEASE_WORDINGS)])
def test_a_transformers_release_too_old_for_the_model_is_a_dependency_version(category: str, text: str) -> None:
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == category, diagnosis


def _engine_calling_package(tmp_path: Path, package_module: str, package_body: str, engine_module: str = "vllm/worker.py"
                            ) -> str:
    """Real CPython's traceback of the engine's module (under site-packages) calling `fail(obj)` in an installed
    package's module whose body is `package_body`, with None as the object (a function's body: four spaces)."""
    root = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    for module, text in ((package_module, f"def fail(obj):\n    {package_body}\n"),
                         (engine_module, f"from {package_module.removesuffix('.py').replace('/', '.')} import fail\n\n"
                                         "def run():\n    return fail(None)\n")):
        source = root / module
        source.parent.mkdir(parents=True, exist_ok=True)
        for package in source.relative_to(root).parents:
            if package != Path("."):
                (root / package / "__init__.py").touch()
        source.write_text(text, encoding="utf-8")
    script = tmp_path / "app.py"
    dotted = engine_module.removesuffix(".py").replace("/", ".")
    script.write_text(f"import sys\nsys.path.insert(0, {str(root)!r})\nfrom {dotted} import run\nrun()\n", encoding="utf-8")
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert ran.returncode == 1 and f"site-packages/{package_module}" in ran.stderr, ran.stderr
    return ran.stderr


def test_a_builtin_types_attribute_error_in_a_package_the_engine_called_is_a_dependency_version(tmp_path: Path) -> None:
    """The package's line failed on the object the engine handed it: the why names both frames."""
    traceback = _engine_calling_package(tmp_path, "peft/tuners/lora.py", "return obj.merge_weights")
    assert "AttributeError: 'NoneType' object has no attribute 'merge_weights'" in traceback
    diagnosis = diagnose_without_patterns(VLLM_BANNER + traceback)
    assert diagnosis.category == "dependency-version", diagnosis
    assert "installed package (peft/tuners/lora.py:2)" in diagnosis.root_cause
    assert "vllm/worker.py:4" in diagnosis.root_cause


def test_the_same_error_at_the_engines_own_line_is_an_engine_bug_and_says_so(tmp_path: Path) -> None:
    traceback = _engine_calling_package(tmp_path, "vllm/model_executor/layers/lora.py", "return obj.merge_weights")
    diagnosis = diagnose_without_patterns(VLLM_BANNER + traceback)
    assert diagnosis.category == "engine-bug", diagnosis
    assert "the failing frame in the engine's own code (vllm/model_executor/layers/lora.py:2)" in diagnosis.root_cause


def test_a_packages_attribute_error_on_its_own_class_is_not_read_as_a_builtin_types(tmp_path: Path) -> None:
    """Look-alike: the package's own object ('LoraModel'), not a built-in type the engine passed: not this row."""
    traceback = _engine_calling_package(
        tmp_path, "peft/tuners/lora.py", "class LoraModel: pass\n    return LoraModel().merge_weights")
    diagnosis = diagnose_without_patterns(VLLM_BANNER + traceback)
    assert diagnosis.category != "dependency-version", diagnosis


# The engine's check of a reasoning or tool-call parser setting, placed by the raise site's path (the registries' and
# parsers' modules), whatever its words say: SGLang's "Unsupported model type" there names a parser, not a model.
PARSER_CHECKS = [
    ("vllm/reasoning/abs_reasoning_parsers.py", """
        def get_reasoning_parser(name):
            raise KeyError(f"reasoning helper: '{name}' not found in reasoning_parsers")
        get_reasoning_parser("qwen3-thinking")
        """),
    ("vllm/entrypoints/openai/tool_parsers/abstract_tool_parser.py", """
        def get_tool_parser(name):
            raise KeyError(f"tool helper: '{name}' not found in tool_parsers")
        get_tool_parser("hermes2")
        """),
    ("sglang/srt/parser/reasoning_parser.py", """
        class ReasoningParser:
            def __init__(self, model_type):
                raise ValueError(f"Unsupported model type: {model_type}")
        ReasoningParser("qwen3-thinking")
        """),
    ("sglang/srt/function_call/function_call_parser.py", """
        class FunctionCallParser:
            def __init__(self, tool_call_parser):
                raise ValueError(f"Unsupported tool_call_parser: {tool_call_parser}")
        FunctionCallParser("hermes2")
        """),
]


@pytest.mark.parametrize(("filename", "code"), PARSER_CHECKS, ids=[f for f, _ in PARSER_CHECKS])
def test_a_parser_setting_the_engine_rejects_is_an_invalid_flag_value(filename: str, code: str) -> None:
    diagnosis = diagnose_without_patterns(VLLM_BANNER + real_traceback(code, filename))
    assert (diagnosis.category, "the check that raised it, in" in diagnosis.root_cause) == ("invalid-flag-value", True)


def test_the_same_words_raised_by_the_model_config_are_no_parser_setting() -> None:
    """Look-alike: 'Unsupported model type' raised where the model's config is read is the model's."""
    sglang_parser_code = PARSER_CHECKS[2][1]
    diagnosis = diagnose_without_patterns(VLLM_BANNER + real_traceback(sglang_parser_code, "sglang/srt/configs/model_config.py"))
    assert diagnosis.category == "unsupported-architecture", diagnosis


# The engine's own module or compiled extension that cannot be imported: a broken, mixed or unbuilt install of the
# engine, with its advice (reinstall or build the engine), not a third-party package's version.  CPython's and the
# loader's words, pasted alone.
OWN_MODULE_IMPORTS = [
    "ModuleNotFoundError: No module named 'vllm._C'\n",
    "ModuleNotFoundError: No module named 'sglang.srt.layers.moe.fused_moe_triton.layer'\n",
    "ImportError: cannot import name 'get_open_port' from 'vllm.utils' "
    "(/usr/local/lib/python3.12/dist-packages/vllm/utils/__init__.py)\n",
    "ImportError: /usr/local/lib/python3.12/dist-packages/vllm/_C.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n",
]


@pytest.mark.parametrize("text", OWN_MODULE_IMPORTS, ids=range(len(OWN_MODULE_IMPORTS)))
def test_an_engines_own_module_that_cannot_be_imported_is_a_broken_install_of_the_engine(text: str) -> None:
    diagnosis = diagnose_without_patterns(text)
    assert (diagnosis.category, "install of the engine" in diagnosis.title) == ("dependency-version", True), diagnosis
    assert any("reinstall that release cleanly" in step for step in diagnosis.fix.steps)


@pytest.mark.parametrize("text", [
    "ModuleNotFoundError: No module named 'flash_attn'\n",
    "ModuleNotFoundError: No module named 'vllm'\n",  # the engine not installed at all: not a broken install of it
])
def test_a_third_party_module_or_the_missing_engine_is_no_broken_engine_install(text: str) -> None:
    diagnosis = diagnose_without_patterns(text)
    assert (diagnosis.category, "install of the engine" in diagnosis.title) == ("dependency-version", False), diagnosis


def test_the_engines_own_code_missing_its_compiled_extension_is_the_mixed_install_row(tmp_path: Path) -> None:
    """With the engine's importing frame shown (vllm/_custom_ops.py importing vllm._C): the mixed-install row."""
    root = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "vllm"
    root.mkdir(parents=True)
    (root / "__init__.py").touch()
    (root / "_custom_ops.py").write_text("import vllm._C\n", encoding="utf-8")
    script = tmp_path / "app.py"
    script.write_text(f"import sys\nsys.path.insert(0, {str(root.parent)!r})\nimport vllm._custom_ops\n", encoding="utf-8")
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert "ModuleNotFoundError: No module named 'vllm._C'" in ran.stderr and "vllm/_custom_ops.py" in ran.stderr
    diagnosis = diagnose_without_patterns(ran.stderr)
    assert (diagnosis.category, "mixed install of vLLM" in diagnosis.title) == ("dependency-version", True), diagnosis


CONFIG_FIELD_READ = """
    class {config_class}:
        pass

    def build(config):
        return config.rope_theta

    build({config_class}())
    """


def _config_field_missing(config_class: str) -> Diagnosis:
    code = CONFIG_FIELD_READ.format(config_class=config_class)
    return diagnose_without_patterns(VLLM_BANNER + real_traceback(code, "vllm/model_executor/models/qwen3.py"))


def test_a_field_the_models_config_lacks_also_asks_for_the_transformers_release_the_engine_pins() -> None:
    """The category stays the model's (rope_theta is a field transformers 5 moved: a transformers other than the pin
    drops it whatever config.json gives, deepspeedai/DeepSpeed PR#8341), and the check names that reading."""
    diagnosis = _config_field_missing("Qwen3Config")
    assert diagnosis.category == "unsupported-architecture", diagnosis
    assert any("transformers release other than the one vLLM pins" in step for step in diagnosis.fix.steps)


def test_an_engine_config_classs_missing_field_does_not_ask_for_transformers() -> None:
    """Look-alike: the engine's own settings object ('ModelConfig'), not the model's config: neither the model's
    category nor a check on transformers or the checkpoint's config.json."""
    diagnosis = _config_field_missing("ModelConfig")
    steps = "\n".join(diagnosis.fix.steps) if diagnosis.fix else ""
    assert diagnosis.category == "engine-bug" and "config field" not in diagnosis.title, diagnosis
    assert "pip show transformers" not in steps and "config.json" not in steps, steps
