"""Failures found but filed under the wrong category (split 20's misreads), in our own words, each with a look-alike:
a model config's field read by the engine's own code for that model, the engines' get_quantization check with its
message cut, and torch_npu's first compile option failing while the device is set up.  The tracebacks are real
CPython's, from installed trees of files written here."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from tests.helpers import diagnose_with_patterns, real_traceback, traceback_of_installed

# transformers' PretrainedConfig looks attributes up through its own __getattribute__, which is where CPython's
# AttributeError is raised from (transformers/configuration_utils.py).
_CONFIG_UTILS = """
class PretrainedConfig:
    attribute_map = {}

    def __getattribute__(self, key):
        return super().__getattribute__(key)
"""


def _config_field_read_in(tmp_path: Path, reader: str, statement: str) -> str:
    """A real traceback of `reader` (a module under site-packages) reading a config field the config lacks."""
    files = {
        "transformers/configuration_utils.py": _CONFIG_UTILS,
        reader: f"""
from transformers.configuration_utils import PretrainedConfig


class SolarVisionConfig(PretrainedConfig):
    pass


class SolarConfig(PretrainedConfig):
    def __init__(self):
        self.vision_config = SolarVisionConfig()


def read(config):
    {statement}
""",
    }
    module = reader.removesuffix(".py").replace("/", ".")
    proc = traceback_of_installed(tmp_path, files, f"import {module} as m\nm.read(m.SolarConfig())\n")
    assert "object has no attribute 'image_token_count'" in proc.stderr, proc.stderr
    return proc.stderr


def test_a_config_field_the_engines_model_code_reads_is_the_checkpoint_variant_against_the_release(tmp_path: Path) -> None:
    """vllm-project/vllm#44494 (gemma4_unified.py reading vision_config.num_soft_tokens, absent from a quantized
    re-upload's config), vllm-project/vllm PR#57818 (deepseek_v4's layers reading fields a config.json omits)."""
    log = _config_field_read_in(tmp_path, "vllm/model_executor/models/solar_vl.py",
                                "return config.vision_config.image_token_count")
    diagnosis = diagnose_with_patterns(log)
    assert diagnosis.category == "engine-bug", diagnosis
    steps = "\n".join(diagnosis.fix.steps) if diagnosis.fix else ""
    assert "original model's" in steps and "newer release" in steps
    # the transformers pin first: a transformers other than the pin drops fields whatever config.json gives
    assert steps.index("pip show transformers") < steps.index("original model's")


def test_the_same_field_read_by_the_engines_generic_config_reader_stays_an_unsupported_model(tmp_path: Path) -> None:
    """sgl-project/sglang#2520, vllm-project/vllm#2284: the engine's model config reading a field every model it
    supports has; the model's config lacks it."""
    log = _config_field_read_in(tmp_path, "vllm/config.py", "return config.vision_config.image_token_count")
    assert diagnose_with_patterns(log).category == "unsupported-architecture"


def test_the_transformers_backend_reading_it_is_not_the_models_own_code(tmp_path: Path) -> None:
    log = _config_field_read_in(tmp_path, "vllm/model_executor/models/transformers.py",
                                "return config.vision_config.image_token_count")
    assert diagnose_with_patterns(log).category == "unsupported-architecture"


def test_a_module_the_models_package_shares_reading_it_is_not_the_models_own_code(tmp_path: Path) -> None:
    """vllm/model_executor/models/utils.py (and interfaces, registry, config, adapters, vision) serve every model."""
    log = _config_field_read_in(tmp_path, "vllm/model_executor/models/utils.py",
                                "return config.vision_config.image_token_count")
    assert diagnose_with_patterns(log).category == "unsupported-architecture"


VLLM_BANNER = "INFO 05-01 10:00:00 [api_server.py:1043] vLLM API server version 0.9.1\n"
_SETTINGS_READ = """
    class {config_class}:
        pass

    def build(config):
        return config.{field}

    build({config_class}())
    """


@pytest.mark.parametrize(("config_class", "field"), [
    ("ParallelConfig", "enable_expert_parallel_size"),  # vllm/config: the engine's own settings dataclass
    ("ModelConfig", "scaling"),  # sgl-project/sglang#15784's class
    ("Fp8Config", "weight_block_size"),  # a quantization method's config (vllm quantization/fp8.py)
])
def test_an_engine_or_quantization_config_class_read_in_a_models_file_is_not_the_checkpoints_config(
        config_class: str, field: str) -> None:
    """Look-alike: the engine's own settings or a quantization method's config, not the model's config.json: no
    advice to edit the checkpoint's config or to compare transformers."""
    log = real_traceback(_SETTINGS_READ.format(config_class=config_class, field=field),
                         "vllm/model_executor/models/deepseek_v2.py")
    diagnosis = diagnose_with_patterns(VLLM_BANNER + log)
    steps = "\n".join(diagnosis.fix.steps) if diagnosis.fix else ""
    assert diagnosis.category == "engine-bug" and "config field" not in diagnosis.title, diagnosis
    assert "config.json" not in steps and "pip show transformers" not in steps, steps


@pytest.mark.parametrize("field", ["rope_theta", "rope_scaling", "vocab_size"])
def test_a_field_transformers_moved_read_in_a_models_file_is_the_transformers_reading(field: str) -> None:
    """deepspeedai/DeepSpeed PR#8341 (transformers 5: `LlamaConfig().rope_theta` raises though config.json has it),
    unslothai/unsloth PR#3651: not the checkpoint variant's missing field."""
    log = real_traceback(_SETTINGS_READ.format(config_class="Qwen3Config", field=field),
                         "vllm/model_executor/models/qwen3.py")
    diagnosis = diagnose_with_patterns(VLLM_BANNER + log)
    assert diagnosis.category == "unsupported-architecture", diagnosis
    assert any("pip show transformers" in step for step in diagnosis.fix.steps)


_WEIGHT_UTILS = """
def get_quant_config(model_config, load_config):
    raise ValueError(f"Cannot find the config file for {model_config}")


def download_weights_from_hf(model_name_or_path):
    raise ValueError(f"Cannot find any model weights with {model_name_or_path}")
"""
_ARG_UTILS = """
from vllm.model_executor.model_loader import weight_utils


def create_engine_config(call):
    return getattr(weight_utils, call)("gptq", None) if call == "get_quant_config" else getattr(weight_utils, call)("m")
"""


def _loader_failure(tmp_path: Path, call: str, cut_at: int | None = None) -> str:
    files = {"vllm/model_executor/model_loader/weight_utils.py": _WEIGHT_UTILS, "vllm/engine/arg_utils.py": _ARG_UTILS}
    proc = traceback_of_installed(tmp_path, files,
                                  f"from vllm.engine import arg_utils\narg_utils.create_engine_config({call!r})\n")
    text = proc.stderr.rstrip("\n")
    last = text.rsplit("\n", 1)[-1]
    assert last.startswith("ValueError: Cannot find"), text
    return text[: len(text) - len(last) + cut_at] + "\n" if cut_at else text + "\n"


def test_get_quant_configs_check_cut_mid_word_is_the_quantization_setting_against_the_checkpoint(tmp_path: Path) -> None:
    """vllm-project/vllm#13612: `-q gptq` on an unquantized checkpoint, the paste cut inside the message's first word;
    every check of get_quant_config (vLLM's and SGLang's weight_utils.py) reads the checkpoint's quantization config."""
    diagnosis = diagnose_with_patterns(_loader_failure(tmp_path, "get_quant_config", cut_at=len("ValueError: Cann")))
    assert diagnosis.category == "quantization", diagnosis
    steps = "\n".join(diagnosis.fix.steps) if diagnosis.fix else ""
    assert "leave the quantization setting out" in steps


def test_another_error_raised_in_get_quant_config_is_not_its_checks(tmp_path: Path) -> None:
    """Look-alike: opening the quantization config file fails (a PermissionError), not a ValueError of its checks."""
    files = {"vllm/model_executor/model_loader/weight_utils.py": """
def get_quant_config(model_config, load_config):
    raise PermissionError(13, "Permission denied", "/models/m-gptq/quantize_config.json")
"""}
    proc = traceback_of_installed(tmp_path, files, "from vllm.model_executor.model_loader import weight_utils\n"
                                                   "weight_utils.get_quant_config('gptq', None)\n")
    assert "PermissionError: [Errno 13] Permission denied" in proc.stderr, proc.stderr
    assert diagnose_with_patterns(proc.stderr).category != "quantization"


def test_another_check_of_the_same_module_is_not_read_as_quantization(tmp_path: Path) -> None:
    diagnosis = diagnose_with_patterns(_loader_failure(tmp_path, "download_weights_from_hf"))
    assert diagnosis.category != "quantization", diagnosis


_SET_DEVICE = """
def set_device(device):
    raise RuntimeError(
        "SetPrecisionMode:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:156 NPU function error: "
        "at_npu::native::AclSetCompileopt(aclCompileOpt::ACL_PRECISION_MODE, precision_mode), error code is 500001")
"""


def test_torch_npus_first_compile_option_failing_at_set_device_is_the_stacks_versions(tmp_path: Path) -> None:
    """vllm-project/vllm-ascend#2244 and #692: the paste cut before CANN's own dump of the failed initialisation."""
    proc = traceback_of_installed(tmp_path, {"torch_npu/npu/utils.py": _SET_DEVICE},
                                  "from torch_npu.npu import utils\nutils.set_device(0)\n")
    diagnosis = diagnose_with_patterns(proc.stderr)
    assert diagnosis.category == "dependency-version", diagnosis
    assert "CANN" in "\n".join(diagnosis.fix.steps if diagnosis.fix else ())


def test_an_operators_npu_function_error_stays_the_runtimes() -> None:
    log = "RuntimeError: call aclnnMatmul failed, NPU function error: c10_npu::acl::AclrtSynchronizeStreamWithTimeout, error code is 507048\n"
    assert diagnose_with_patterns(log).category == "cuda-error"


def _worker_failed_compiling(backend: str) -> str:
    """vLLM's engine core re-raising a worker's error: the Triton JIT's compile command that returned non-zero."""
    command = ["/usr/bin/clang++", "-x", "c++-header", "/root/.triton/cache/abc/precompiled.h", "-w",
               "-I/usr/local/lib/python3.11/site-packages/triton/backends/" + backend, "-o", "/tmp/x.gch"]
    return (f"(EngineCore_DP0 pid=90) RuntimeError: Worker failed with error 'Command '{command!r}' "
            "returned non-zero exit status 1.', please check the stack trace above for the root cause\n")


def test_the_npu_triton_backends_build_failing_is_the_release_and_images_toolchain() -> None:
    """vllm-project/vllm-ascend#6242 (fixed in a newer image), sgl-project/sglang#11546 (the same class, a newer release)."""
    diagnosis = diagnose_with_patterns(_worker_failed_compiling("ascend"))
    assert diagnosis.category == "engine-bug", diagnosis
    steps = "\n".join(diagnosis.fix.steps) if diagnosis.fix else ""
    assert "newer release of the engine or of the hardware plugin" in steps
    assert "Blackwell" not in steps


def test_nvidias_triton_backend_failing_the_same_way_is_not_the_npus() -> None:
    diagnosis = diagnose_with_patterns(_worker_failed_compiling("nvidia"))
    assert "triton-ascend" not in "\n".join(diagnosis.fix.steps if diagnosis.fix else ())


_COMPILER_CRASH = (
    "0.\tProgram arguments: /usr/local/Ascend/ascend-toolkit/latest/bin/bishengir-compile /tmp/tmpq1/kernel.ttadapter.mlir "
    "--enable-triton-kernel-compile=true -o /tmp/tmpq1/kernel\n"
    "///------------------[ERROR][Triton][END]------------------\n"
    "\n"
)


def test_a_kill_right_after_the_npu_compilers_crash_is_filed_under_the_crash_not_memory() -> None:
    """sgl-project/sglang#11546: bishengir-compile's crash report, then the shell's `Killed`."""
    diagnosis = diagnose_with_patterns(_COMPILER_CRASH + "Killed\n")
    assert diagnosis.category == "engine-bug", diagnosis
    steps = "\n".join(diagnosis.fix.steps) if diagnosis.fix else ""
    assert "OOM killer" in steps and "only if" not in steps  # a compiler can itself exhaust host memory


@pytest.mark.parametrize("between", [
    "INFO 05-01 10:00:00 [api_server.py:1000] Starting vLLM API server on http://0.0.0.0:8000\n"
    "INFO:     Application startup complete.\n"
    + 'INFO:     10.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n' * 20,
    "INFO 05-01 10:01:00 [loggers.py:100] Avg prompt throughput: 120.0 tokens/s, Running: 8 reqs\n" * 3,
])
def test_a_kill_after_the_server_came_up_and_served_is_no_compiler_crashs(between: str) -> None:
    """Look-alike: the server survived the compiler's crash; the kill long after it is unexplained (the OOM killer
    first), not the crash's."""
    diagnosis = diagnose_with_patterns(_COMPILER_CRASH + between + "Killed\n")
    assert diagnosis.category == "process-killed", diagnosis


def test_a_kill_under_the_compilers_unknown_chip_report_is_the_chips() -> None:
    """sgl-project/sglang#16360, #14783, vllm-project/vllm-ascend#7423: bishengir-compile refusing the chip's name, then
    a kill: the unknown chip (gpu-arch-unsupported), not the release's kernel."""
    log = ("///------------------[ERROR][Triton][BEG]------------------\n"
           "[ConvertLinalgRToBinary] encounters error:\n"
           "bishengir-compile: for the --target option: Cannot find option named 'Ascend310P1'!\n"
           "///------------------[ERROR][Triton][END]------------------\n\nKilled\n")
    assert diagnose_with_patterns(log).category == "gpu-arch-unsupported"


def test_a_kill_after_ordinary_lines_stays_a_kill() -> None:
    diagnosis = diagnose_with_patterns("INFO 01-01 00:00:00 Loading safetensors checkpoint shards: 50%\n\nKilled\n")
    assert diagnosis.category == "process-killed", diagnosis


def _backend_failed(inner: str) -> str:
    """torch's BackendCompilerFailed as CPython prints it: the backend's own error on its message's second line."""
    return real_traceback(f"""
        class BackendCompilerFailed(Exception):
            pass
        BackendCompilerFailed.__module__ = "torch._dynamo.exc"

        def call_user_compiler():
            raise BackendCompilerFailed("backend='inductor' raised:\\n" + {inner!r} + "\\n\\nSet TORCHDYNAMO_VERBOSE=1 for more")

        call_user_compiler()
        """, "torch/_dynamo/output_graph.py")


def test_a_compile_backends_inner_triton_image_error_decides_the_category() -> None:
    """vllm-project/vllm#18580: a +cu118 torch with Triton's CUDA 12 ptxas on an older driver."""
    diagnosis = diagnose_with_patterns(_backend_failed("RuntimeError: Triton Error [CUDA]: device kernel image is invalid"))
    assert diagnosis.category == "dependency-version", diagnosis
    assert "TRITON_PTXAS_PATH" in "\n".join(diagnosis.fix.steps if diagnosis.fix else ())


def test_the_same_wrapper_as_log_records_is_one_failure_read_by_its_inner_error() -> None:
    prefix = "ERROR 05-23 09:31:47 [core.py:396] "
    log = (f"{prefix}torch._dynamo.exc.BackendCompilerFailed: backend='<vllm.compilation.backends.VllmBackend object at "
           f"0x7f0000000000>' raised:\n{prefix}RuntimeError: Triton Error [CUDA]: device kernel image is invalid\n{prefix}\n")
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    assert len(report.failures) == 1
    assert report.failures[0].diagnosis is not None and report.failures[0].diagnosis.category == "dependency-version"


def test_any_inner_error_that_names_a_cause_decides_not_only_triton_images() -> None:
    """torch/_dynamo/exc.py puts any backend error on the second line: CUDA out of memory while Inductor compiled is
    the memory's, not torch.compile's bug."""
    diagnosis = diagnose_with_patterns(_backend_failed(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.55 GiB"
        " of which 1.02 GiB is free."))
    assert diagnosis.category == "gpu-oom", diagnosis


def test_another_ranks_error_line_is_not_the_wrappers_inner_error() -> None:
    """Two workers' records interleaved: rank 1's error right under rank 0's `raised:` is not rank 0's inner error."""
    log = ("(VllmWorker rank=0 pid=101) ERROR 05-23 09:31:47 [multiproc_executor.py:522] "
           "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
           "(VllmWorker rank=1 pid=102) ERROR 05-23 09:31:47 [multiproc_executor.py:522] "
           "RuntimeError: Triton Error [CUDA]: device kernel image is invalid\n")
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    assert len(report.failures) == 2, report.failures


def test_another_inner_error_of_the_wrapper_stays_torch_compiles() -> None:
    diagnosis = diagnose_with_patterns(_backend_failed("AssertionError: expected size 4==4, stride 1==2 at dim=1"))
    assert diagnosis.category == "engine-bug", diagnosis


def test_the_new_rows_leave_each_categorys_general_row_first() -> None:
    """table().row(category) is a category's general row (root_cause's and general.py's reading of engine-bug): a row
    written for one shape before it changed every engine-bug reading's reasons (the failing frame no longer named)."""
    from logsleuth.facts.categories import table

    general = table().row("engine-bug")
    assert general is not None and general.in_engine_code and not general.strong_words
