"""Dependencies: a package too old for SGLang's launch-time version check, and imports from
transformers or flashinfer that the installed version does not have.

Patterns: sglang-flashinfer-version, sglang-sgl-kernel-version, sglang-transformers-import-error,
sglang-flashinfer-import-error, common-pip-resolver-conflict (pip's resolver output, for either engine,
in the wording of pip's resolvelib factory: vllm-project/vllm#9092, waybarrios/vllm-mlx#19, vllm-project/vllm#6200,
vllm-project/vllm-ascend#8286).
"""

from __future__ import annotations

from ..engine import Case, Frame
from ..mirror import (
    HTTP_LAUNCH,
    LAUNCH_SERVER,
    READY,
    forward_frames,
    from_launch_server,
    launch_crash,
    raise_frame,
    scheduler_crash,
)

ENGINE = "sglang/srt/entrypoints/engine.py"


def launch_import(module: str, statement: str) -> tuple[Frame, ...]:
    """`python -m sglang.launch_server` importing its way down to `statement` in `module`."""
    return (
        Frame(LAUNCH_SERVER, "<module>", "from sglang.srt.entrypoints.http_server import launch_server", lineno=7),
        Frame("sglang/srt/entrypoints/http_server.py", "<module>", "from sglang.srt.entrypoints.engine import _launch_subprocesses", lineno=52),
        Frame(ENGINE, "<module>", "from sglang.srt.managers.scheduler import run_scheduler_process", lineno=48),
        Frame("sglang/srt/managers/scheduler.py", "<module>", f"from {module.removesuffix('.py').replace('/', '.')} import *", lineno=70),
        Frame(module, "<module>", statement, lineno=4),
    )


ASSERT_PKG_VERSION = """
    try:
        installed_version = version(pkg)
        if pkg_version.parse(installed_version) < pkg_version.parse(min_version):
            raise Exception(
                f"{pkg} is installed with version {installed_version}, which "
                f"is less than the minimum required version {min_version}. " + message
            )
    except PackageNotFoundError:
        raise Exception(
            f"{pkg} with minimum required version {min_version} is not installed. "
            + message
        )
    """
# _set_envs_and_config's checks: flashinfer for its attention backend, sgl-kernel on CUDA
FLASHINFER_CHECK = Frame(ENGINE, "_set_envs_and_config", body="""
    if not get_bool_env_var("SGLANG_SKIP_SGL_KERNEL_VERSION_CHECK"):
        if server_args.attention_backend == "flashinfer":
            assert_pkg_version(
                "flashinfer_python",
                "0.6.3",
                "Please uninstall the old version and "
                "reinstall the latest version by following the instructions "
                "at https://docs.flashinfer.ai/installation.html.",
            )
    """, env=(("get_bool_env_var", "lambda name: False"), ("server_args", "NS(attention_backend='flashinfer')"), ("assert_pkg_version", "NEXT")), lineno=846)
SGL_KERNEL_CHECK = Frame(ENGINE, "_set_envs_and_config", body="""
    if _is_cuda:
        assert_pkg_version(
            "sgl-kernel",
            "0.3.21",
            "Please reinstall the latest version with `pip install sgl-kernel --force-reinstall`",
        )
    """, env=(("_is_cuda", "True"), ("assert_pkg_version", "NEXT")), lineno=855)
METADATA_NOT_FOUND = "__import__('importlib.metadata', fromlist=['x']).PackageNotFoundError"


def too_old(check: Frame, installed: str, not_found: str = "LookupError") -> tuple[Frame, ...]:
    """The launch's package-version `check` failing in assert_pkg_version with `installed` (a Python literal)."""
    return from_launch_server(
        HTTP_LAUNCH,
        Frame(ENGINE, "_launch_subprocesses", "_set_envs_and_config(server_args)", lineno=1030),
        check,
        Frame("sglang/srt/utils/common.py", "assert_pkg_version", body=ASSERT_PKG_VERSION,
              env=(("pkg", "_args[0]"), ("min_version", "_args[1]"), ("message", "_args[2]"),
                   ("PackageNotFoundError", not_found), ("version", f"(lambda pkg: {installed})"),
                   ("pkg_version", "NS(parse=lambda v: tuple(int(p) for p in v.split('.')))")), lineno=1096),
    )


FLASHINFER_SERVER_ARGS = "server_args=ServerArgs(model_path='Qwen/Qwen2.5-7B-Instruct', attention_backend='flashinfer', port=30000)"
# One sgl-kernel failure: positive for its own pattern, negative for the flashinfer one.
SGL_KERNEL_TOO_OLD = launch_crash("sglang-sgl-kernel-version", "positive-0.5.9", too_old(SGL_KERNEL_CHECK, "'0.3.16'"))

TRANSFORMERS = (("transformers/__init__.py", "from transformers.configuration_utils import PretrainedConfig\n"),
                ("transformers/configuration_utils.py", "class PretrainedConfig:\n    pass\n"))
# 0.5.23 importing a class that transformers renamed (PretrainedConfig -> PreTrainedConfig)
PRETRAINED_CONFIG = launch_crash("sglang-transformers-import-error", "positive-0.5.23-import-name",
                                 launch_import("sglang/srt/configs/qwen3_5.py", "from transformers.configuration_utils import PreTrainedConfig"),
                                 extra_modules=TRANSFORMERS)
FLASHINFER_DECODE_CALL = raise_frame("sglang/srt/layers/attention/flashinfer_backend.py", "forward_decode",
                                     "o = flashinfer.decode.trtllm_batch_decode_with_kv_cache(q, k_cache, workspace_buffer)",
                                     env=(("flashinfer", "__import__('flashinfer')"), ("q", "None"), ("k_cache", "None"), ("workspace_buffer", "None")), lineno=870)

def pip_cannot_install(pattern: str, name: str, engine: str, pin: str, other: str, other_pin: str) -> Case:
    """`pip install <engine> <other>` whose pins of one package contradict each other."""
    return Case(pattern, name, (), mode="lines", ranks="", raw_after=(
        f"INFO: pip is looking at multiple versions of {other} to determine which version is compatible with other requirements. This could take a while.",
        f"ERROR: Cannot install {engine} and {other} because these package versions have conflicting dependencies.",
        "",
        "The conflict is caused by:",
        f"    {engine.replace('==', ' ')} depends on {pin}",
        f"    {other.replace('==', ' ')} depends on {other_pin}",
        "",
        "To fix this you could try to:",
        "1. loosen the range of package versions you've specified",
        "2. remove package versions to allow pip to attempt to solve the dependency conflict",
        "",
        "ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/#dealing-with-dependency-conflicts",
    ))


def pip_broke_a_pin(pattern: str, name: str, holder: str, pin: str, installed: str) -> Case:
    """An install that replaced a package another installed one pins (pip warns after the fact)."""
    package, wanted = pin.split("==")
    return Case(pattern, name, (), mode="lines", ranks="", raw_after=(
        f"Installing collected packages: {package}",
        f"  Attempting uninstall: {package}",
        f"    Found existing installation: {package} {wanted}",
        f"    Uninstalling {package}-{wanted}:",
        f"      Successfully uninstalled {package}-{wanted}",
        "ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. This behaviour is the source of the following dependency conflicts.",
        f"{holder} requires {pin}, but you have {package} {installed} which is incompatible.",
        f"Successfully installed {package}-{installed}",
    ))


def pip_no_distribution(pattern: str, name: str, requirement: str) -> Case:
    """A near miss: no such version at all, which is no conflict."""
    return Case(pattern, name, (), mode="lines", ranks="", raw_after=(
        f"ERROR: Could not find a version that satisfies the requirement {requirement} (from versions: none)",
        f"ERROR: No matching distribution found for {requirement}",
    ))


CASES = (
    *(launch_crash("sglang-flashinfer-version", name, too_old(FLASHINFER_CHECK, installed, METADATA_NOT_FOUND), before=(FLASHINFER_SERVER_ARGS,))
      for name, installed in (("positive-0.5.9-too-old", "'0.4.1'"), ("positive-0.5.9-old-wheel", "'0.2.14'"))),
    SGL_KERNEL_TOO_OLD.named("sglang-flashinfer-version", "negative-sgl-kernel"),

    SGL_KERNEL_TOO_OLD,
    launch_crash("sglang-sgl-kernel-version", "negative-flashinfer", too_old(FLASHINFER_CHECK, "'0.4.1'")),

    PRETRAINED_CONFIG,
    launch_crash("sglang-transformers-import-error", "positive-0.5.9-missing-model-module",
                 launch_import("sglang/srt/configs/glm4v_moe.py", "from transformers.models.glm4v_moe.configuration_glm4v_moe import Glm4vMoeConfig"),
                 extra_modules=(*TRANSFORMERS, ("transformers/models/__init__.py", ""))),
    launch_crash("sglang-transformers-import-error", "negative-sglang-import",
                 launch_import("sglang/srt/layers/quantization/__init__.py", "from sglang.srt.layers.quantization.fp8 import Fp8Config"),
                 extra_modules=(("sglang/srt/layers/quantization/fp8.py", "class Fp8LinearMethod:\n    pass\n"),)),

    launch_crash("sglang-flashinfer-import-error", "positive-0.4.10.post2-import-name",
                 launch_import("sglang/srt/layers/sampler.py", "from flashinfer.sampling import top_k_top_p_sampling_from_probs, min_p_sampling_from_probs"),
                 extra_modules=(("flashinfer/__init__.py", "__version__ = '0.2.5'\n"), ("flashinfer/sampling.py", "def top_p_sampling_from_probs():\n    pass\n"))),
    scheduler_crash("sglang-flashinfer-import-error", "positive-0.5.9-attribute", (*forward_frames("0.5.9"), FLASHINFER_DECODE_CALL), before=(READY,),
                    extra_modules=(("flashinfer/__init__.py", "from flashinfer import decode\n"), ("flashinfer/decode.py", "def single_decode_with_kv_cache():\n    pass\n"))),
    PRETRAINED_CONFIG.named("sglang-flashinfer-import-error", "negative-transformers"),
    pip_cannot_install("common-pip-resolver-conflict", "positive-cannot-install", "sglang==0.5.9", "torch==2.8.0",
                       "xformers==0.0.29", "torch==2.5.1"),
    pip_broke_a_pin("common-pip-resolver-conflict", "positive-installed-conflict", "sglang 0.5.9", "transformers==4.57.1", "4.46.0"),
    pip_no_distribution("common-pip-resolver-conflict", "negative-no-matching-distribution", "sgl-kernel==9.9.9"),
    pip_cannot_install("common-pip-resolver-conflict", "positive-vllm-cannot-install", "vllm==0.10.1", "torch==2.7.1",
                       "flash-attn==2.8.3", "torch==2.8.0"),
    pip_broke_a_pin("common-pip-resolver-conflict", "positive-vllm-installed-conflict", "vllm 0.10.1", "torch==2.7.1", "2.8.0"),
)
