"""The install: sgl-kernel's compiled ops that do not load (C++ ABI, CUDA driver, missing CUDA
libraries), packages older than SGLang's launch-time check wants, and imports of names the installed
flashinfer, vLLM or sgl-kernel do not have.
"""

from __future__ import annotations

from functools import partial

from pattern_fixtures.engine import Frame
from pattern_fixtures.mirror import LAUNCH_SERVER, failing_at, frame_at, sgl_kernel_common_ops

from .. import composed, paste
from ..blocks import failing_import, imports, launch, module_at, package_check, plain, with_env
from ..corpus import DOCKER, IMAGE, Expect, Install, Run, Text, WildCase

UPGRADE = ((),)
ENGINE = "sglang/srt/entrypoints/engine.py"
CONDA = Install("/opt/conda/lib/python3.11/site-packages")


def load_failure(chain: tuple[Frame, ...], module: str, message: str, extra: tuple[tuple[str, str], ...] = (), **fields: object) -> Run:
    """A launch whose imports reach `module`, which fails to load with ImportError(`message`)."""
    first, helper = failing_import(chain[0], module, message)
    return Run(launch((first, *chain[1:]), extra_modules=(helper, *extra), **fields), primary=True)  # type: ignore[arg-type]


def to_schedule_batch(launch_line: int, lines: tuple[int, int, int, int, int]) -> tuple[Frame, ...]:
    """launch_server.py -> http_server -> engine -> data_parallel_controller -> io_struct -> schedule_batch, importing."""
    http, engine, dp, io, batch = lines
    return imports(
        (LAUNCH_SERVER, "from sglang.srt.entrypoints.http_server import launch_server", launch_line),
        ("sglang/srt/entrypoints/http_server.py", "from sglang.srt.entrypoints.engine import _launch_subprocesses", http),
        (ENGINE, "from sglang.srt.managers.data_parallel_controller import run_data_parallel_controller_process", engine),
        ("sglang/srt/managers/data_parallel_controller.py", "from sglang.srt.managers.io_struct import TokenizedEmbeddingReqInput, TokenizedGenerateReqInput", dp),
        ("sglang/srt/managers/io_struct.py", "from sglang.srt.managers.schedule_batch import BaseFinishReason", io),
        ("sglang/srt/managers/schedule_batch.py", "from sgl_kernel.kvcacheio import transfer_kv_all_layer, transfer_kv_per_layer", batch),
    )


def so(site: str, symbol: str) -> str:
    return f"{site}/sgl_kernel/common_ops.abi3.so: undefined symbol: {symbol}"


# -- sgl-kernel's common_ops with an undefined symbol ---------------------------------------------------------------------

GREEN_STREAM = so("/opt/conda/lib/python3.11/site-packages", "cuGreenCtxStreamCreate")
GREEN_STREAM_RUN = load_failure((*to_schedule_batch(6, (51, 41, 32, 26, 50)), sgl_kernel_common_ops(13)), "sgl_kernel.common_ops", GREEN_STREAM)
GREEN_DESTROY = so("/usr/local/lib/python3.11/dist-packages", "cuGreenCtxDestroy")
GREEN_DESTROY_RUN = load_failure((*to_schedule_batch(6, (51, 41, 32, 26, 50)), sgl_kernel_common_ops(13)), "sgl_kernel.common_ops", GREEN_DESTROY)
GREEN_DESTROY_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/8432", kind="sgl-kernel-undefined-symbol", engine_version="0.4.10.post2", install=IMAGE,
    fixed_in="sgl-kernel 0.3.6.post1 (runtime driver check, PR #9021; green context optional, PR #9231)",
    resolution="The NVIDIA driver (535) lacks the green-context API: a newer driver, or an sgl-kernel with PR #9021/#9231.",
)
PARSE_SCHEMA = so("/usr/local/lib/python3.11/dist-packages", "_ZN5torch3jit17parseSchemaOrNameERKSsb")
PARSE_SCHEMA_RUN = load_failure((*imports((LAUNCH_SERVER, "from sglang.srt.entrypoints.http_server import launch_server", 6),
                                          ("sglang/srt/entrypoints/http_server.py", "from sglang.srt.entrypoints.engine import _launch_subprocesses", 44),
                                          (ENGINE, "from sglang.srt.managers.scheduler import run_scheduler_process", 39),
                                          ("sglang/srt/managers/scheduler.py", "from sglang.srt.layers.quantization.fp8_kernel import sglang_per_token_group_quant_fp8", 60),
                                          ("sglang/srt/layers/quantization/fp8_kernel.py", "from sgl_kernel import sgl_per_token_group_quant_fp8", 31)),
                                  sgl_kernel_common_ops(12)),
                                 "sgl_kernel.common_ops", PARSE_SCHEMA)
PARSE_SCHEMA_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/5100", kind="sgl-kernel-undefined-symbol", engine_version="0.4.5", install=DOCKER,
    resolution="Make torch and sgl-kernel match (a commenter: torch 2.5 -> 2.6 with sgl-kernel 0.1.0 -> 0.1.1); confirmed in the thread.",
)

# -- sgl-kernel's multi-line loader failure (late 2025) ---------------------------------------------------------------------


def critical(site: str, variant: str, capability: int, found: str, inner: str) -> str:
    """sgl-kernel's load_utils message when no common_ops variant loads."""
    return (
        "\n[sgl_kernel] CRITICAL: Could not load any common_ops library!\n"
        "Attempted locations:\n"
        f"1. Architecture-specific pattern: {site}/sgl_kernel/{variant}/common_ops.* - found files: ['{site}/sgl_kernel/{variant}/common_ops.abi3.so']\n"
        f"2. Fallback pattern: {site}/sgl_kernel/common_ops.* - found files: []\n"
        "3. Standard Python import: common_ops - failed\n"
        "GPU Info:\n"
        f"- Compute capability: {capability}\n"
        f"- Expected variant: {found}\n"
        "Please ensure sgl_kernel is properly installed with:\n"
        "pip install --upgrade sgl_kernel\n"
        "Error details from previous import attempts:\n"
        f"- ImportError: {inner}\n"
        "- ModuleNotFoundError: No module named 'common_ops'"
    )


def critical_launch(message: str) -> Run:
    """schedule_batch importing sgl_kernel, whose loader finds no common_ops it can load."""
    return Run(launch((
        *to_schedule_batch(6, (51, 41, 32, 26, 50))[:-1],
        *imports(("sglang/srt/managers/schedule_batch.py", "import sgl_kernel", 48)),
        module_at("sgl_kernel/__init__.py", "common_ops = _load_architecture_specific_ops()", 18, env=(("_load_architecture_specific_ops", "NEXT"),)),
        failing_at("sgl_kernel/load_utils.py", "_load_architecture_specific_ops", """
            if loaded is None:
                raise ImportError(error_msg)
            """, 188, env=(("loaded", "None"), ("error_msg", repr(message)))),
    )), primary=True)


SM100_ON_SM86 = critical("/usr/local/lib/python3.11/dist-packages", "sm100", 86, "SM86 (precise math for compatibility)",
                         "/usr/local/lib/python3.11/dist-packages/sgl_kernel/sm100/common_ops.abi3.so: undefined symbol: _ZNK3c106SymInt6sym_neERKS0_")
NVRTC_ON_SM120 = critical("/home/dev/.venv/lib/python3.11/site-packages", "sm120", 120, "SM120 (precise math for compatibility)",
                          "libnvrtc.so.12: cannot open shared object file: No such file or directory")

# -- CUDA libraries the loader cannot find ------------------------------------------------------------------------------------

XOSCAR_PREFIX = "[address=0.0.0.0:39501, pid=13418] "
XINFERENCE = (
    failing_at("xinference/api/restful_api.py", "launch_model", """
        try:
            model_uid = supervisor_ref.launch_builtin_model(model_uid=model_uid, model_name=model_name, model_engine=model_engine)
        except Exception as e:
            e.msg = address + e.msg
            logger.error(str(e), exc_info=True)
        """, 1004, env=(("supervisor_ref", "HOP:launch_builtin_model"), ("model_uid", "None"), ("model_name", "'qwen2.5-instruct'"),
                        ("model_engine", "'SGLang'"), ("address", repr(XOSCAR_PREFIX)),
                        ("logger", "__import__('logging').getLogger('xinference.api.restful_api')")), marker="model_uid ="),
    frame_at("xoscar/backends/context.py", "send", "return self._process_result_message(result)", 231),
    frame_at("xoscar/backends/pool.py", "_run_coro", "return coro.send(None)", 656),
    frame_at("xoscar/api.py", "__on_receive__", "return self._handle(message)", 384, env=(("self", "HOP:_handle"),)),
    frame_at("xinference/core/worker.py", "launch_builtin_model", "model.load()", 1031, env=(("model", "HOP:load"),)),
    frame_at("xinference/model/llm/sglang/core.py", "load", "import sglang as sgl", 164),
    *imports(
        ("sglang/__init__.py", "from sglang.api import Engine", 4),
        ("sglang/api.py", "from sglang.srt.managers.io_struct import GenerateReqInput", 12),
        ("sglang/srt/managers/io_struct.py", "from sglang.srt.managers.schedule_batch import BaseFinishReason", 24),
        ("sglang/srt/managers/schedule_batch.py", "from sglang.srt.configs.model_config import ModelConfig", 40),
        ("sglang/srt/configs/model_config.py", "from sglang.srt.layers.quantization import QUANTIZATION_METHODS", 24),
        ("sglang/srt/layers/quantization/__init__.py", "from sglang.srt.layers.quantization.fp8 import Fp8Config", 25),
        ("sglang/srt/layers/quantization/fp8.py", "from sglang.srt.layers.moe.fused_moe_triton.fused_moe import padding_size", 31),
        ("sglang/srt/layers/moe/fused_moe_triton/__init__.py", "import sglang.srt.layers.moe.fused_moe_triton.fused_moe", 4),
        ("sglang/srt/layers/moe/fused_moe_triton/fused_moe.py", "from sgl_kernel import moe_align_block_size as sgl_moe_align_block_size", 14),
    ),
)
LIBCUDART = "libcudart.so.12: cannot open shared object file: No such file or directory"
XINFERENCE_LOG = Text(f"2024-12-26 10:14:09,664 xinference.api.restful_api 4247 ERROR    {XOSCAR_PREFIX}{LIBCUDART}\n")


def xinference_libcudart() -> Run:
    first, helper = failing_import(XINFERENCE[0], "sgl_kernel", LIBCUDART)
    logging_setup = ("_log", "__import__('logging').basicConfig(format='%(message)s', stream=__import__('sys').stdout)")
    case = plain((with_env(first, logging_setup), *XINFERENCE[1:]), extra_modules=(helper,))
    return Run(case, primary=True)


# -- packages older than the launch's version check ------------------------------------------------------------------------------

INSTALL_HINT = "Please uninstall the old version and reinstall the latest version by following the instructions at https://docs.flashinfer.ai/installation.html."
KERNEL_HINT = "Please reinstall the latest version with `pip install sgl-kernel --force-reinstall`"


def version_check(pkg: str, minimum: str, hint: str, installed: str | None, check_line: int, raise_line: int) -> Run:
    """launch_server -> _launch_subprocesses -> _set_envs_and_config -> assert_pkg_version, failing."""
    return Run(launch((
        module_at(LAUNCH_SERVER, "launch_server(server_args)", 14, env=(("launch_server", "NEXT"), ("server_args", "None"))),
        frame_at("sglang/srt/entrypoints/http_server.py", "launch_server", "tokenizer_manager, scheduler_info = _launch_subprocesses(server_args=server_args)", 692),
        frame_at(ENGINE, "_launch_subprocesses", "_set_envs_and_config(server_args)", 517),
        frame_at(ENGINE, "_set_envs_and_config", f"assert_pkg_version({pkg!r}, {minimum!r}, {hint!r})", check_line, env=(("assert_pkg_version", "NEXT"),)),
        package_check("sglang/srt/utils.py", pkg, minimum, hint, installed, raise_line),
    )), primary=True)


def too_old_message(pkg: str, installed: str, minimum: str, hint: str) -> str:
    return f"{pkg} is installed with version {installed}, which is less than the minimum required version {minimum}. {hint}"


def missing_message(pkg: str, minimum: str, hint: str) -> str:
    return f"{pkg} with minimum required version {minimum} is not installed. {hint}"


# -- imports of names the installed package does not have ---------------------------------------------------------------------

STUB_FLASHINFER = (("flashinfer/__init__.py", "__version__ = '0.1.1'\n"), ("flashinfer/sampling.py", "def top_p_sampling_from_probs(*args):\n    pass\n"))
FLASHINFER_SAMPLING = Run(launch((
    *imports((LAUNCH_SERVER, "from sglang.srt.server import launch_server", 5),
             ("sglang/srt/server.py", "from sglang.srt.managers.controller.manager_multi import start_controller_process as start_controller_process_multi", 32),
             ("sglang/srt/managers/controller/manager_multi.py", "from sglang.srt.managers.controller.dp_worker import DataParallelWorkerThread, start_data_parallel_worker", 15),
             ("sglang/srt/managers/controller/dp_worker.py", "from sglang.srt.managers.controller.tp_worker import ModelTpClient", 11),
             ("sglang/srt/managers/controller/tp_worker.py", "from sglang.srt.model_executor.model_runner import ModelRunner", 33),
             ("sglang/srt/model_executor/model_runner.py", "from sglang.srt.layers.logits_processor import LogitProcessorOutput", 44),
             ("sglang/srt/layers/logits_processor.py", "from sglang.srt.managers.controller.infer_batch import ForwardMode, InputMetadata", 14),
             ("sglang/srt/managers/controller/infer_batch.py", "from flashinfer.sampling import top_k_top_p_sampling_from_probs", 10)),
), extra_modules=STUB_FLASHINFER), primary=True)

VLLM_STUB = (("vllm/__init__.py", ""), ("vllm/model_executor/__init__.py", ""), ("vllm/model_executor/model_loader/__init__.py", "def get_model(*args):\n    pass\n"))
VLLM_LOADER = Run(launch(imports(
    (LAUNCH_SERVER, "from sglang.srt.server import launch_server", 3),
    ("sglang/srt/server.py", "from sglang.srt.managers.router.manager import start_router_process", 56),
    ("sglang/srt/managers/router/manager.py", "from sglang.srt.managers.router.model_rpc import ModelRpcClient", 9),
    ("sglang/srt/managers/router/model_rpc.py", "from sglang.srt.managers.router.model_runner import ModelRunner", 24),
    ("sglang/srt/managers/router/model_runner.py", "from vllm.model_executor.model_loader import _set_default_torch_dtype", 15),
), extra_modules=VLLM_STUB), primary=True)

ROUTER = "sglang/srt/managers/router"
VLLM_METADATA = Run(plain((
    failing_at(f"{ROUTER}/manager.py", "start_router_process", """
        try:
            model_client = ModelRpcClient(server_args, port_args, model_overide_args)
        except Exception:
            pipe_writer.send(get_exception_traceback())
        """, 68, env=(("ModelRpcClient", "NEXT"), ("server_args", "None"), ("port_args", "None"), ("model_overide_args", "None"),
                      ("pipe_writer", "NS(send=lambda state: print(f'router init state: {state}', flush=True))")), marker="model_client"),
    frame_at(f"{ROUTER}/model_rpc.py", "__init__", "self.model_server = ModelRpcServer(0, server_args, port_args, model_overide_args)", 619),
    frame_at(f"{ROUTER}/model_rpc.py", "exposed_init_model", "self.model_runner = ModelRunner(model_config=self.model_config, mem_fraction_static=server_args.mem_fraction_static, tp_rank=tp_rank, tp_size=server_args.tp_size, nccl_port=port_args.nccl_port, server_args=server_args)", 70),
    frame_at(f"{ROUTER}/model_runner.py", "__init__", "self.load_model()", 287),
    frame_at(f"{ROUTER}/model_runner.py", "load_model", "model_class = get_model_cls_by_arch_name(architectures)", 296),
    frame_at(f"{ROUTER}/model_runner.py", "get_model_cls_by_arch_name", "model_arch_name_to_cls = import_model_classes()", 49),
    frame_at(f"{ROUTER}/model_runner.py", "import_model_classes", "module = importlib.import_module(f\"sglang.srt.models.{name}\")", 42,
             env=(("importlib", "__import__('importlib')"), ("name", "'llama2'"))),
    module_at("sglang/srt/models/llama2.py", "from vllm.model_executor.input_metadata import InputMetadata", 31),
), extra_modules=VLLM_STUB), primary=True)
INPUT_METADATA = "No module named 'vllm.model_executor.input_metadata'"
VLLM_04 = dict(engine_version="0.1.14", fixed_in="the next SGLang release after April 2024 (pinned vLLM)",
               resolution="Use the SGLang source (already adapted) or keep vllm at 0.3.3 until the next SGLang release.")

SGL_KERNEL_STUB = (("sgl_kernel/__init__.py", "from sgl_kernel.moe import moe_align_block_size, topk_softmax\n"),
                   ("sgl_kernel/moe.py", "def moe_align_block_size(*args):\n    pass\n\n\ndef topk_softmax(*args):\n    pass\n"))
MARLIN_MOE = Run(launch((
    *imports((LAUNCH_SERVER, "from sglang.srt.entrypoints.http_server import launch_server", 6),
             ("sglang/srt/entrypoints/http_server.py", "from sglang.srt.entrypoints.engine import _launch_subprocesses", 51),
             (ENGINE, "from sglang.srt.managers.scheduler import run_scheduler_process", 47),
             ("sglang/srt/managers/scheduler.py", "from sglang.srt.layers.moe import initialize_moe_config", 63),
             ("sglang/srt/layers/moe/__init__.py", "from sglang.srt.layers.moe.fused_moe_triton.fused_marlin_moe import fused_marlin_moe", 3),
             ("sglang/srt/layers/moe/fused_moe_triton/fused_marlin_moe.py", "from sgl_kernel import fused_marlin_moe", 12)),
), extra_modules=SGL_KERNEL_STUB), primary=True)
MARLIN_MESSAGE = "cannot import name 'fused_marlin_moe' from 'sgl_kernel' (/usr/local/lib/python3.11/dist-packages/sgl_kernel/__init__.py)"

LAUNCH_COMMAND = "python -m sglang.launch_server --model-path ./gpt-oss-20b --tp 4 --reasoning-parser qwen3 --host 0.0.0.0 --port 30000"

CASES = (
    WildCase(thread="https://github.com/sgl-project/sglang/issues/8131", kind="sgl-kernel-undefined-symbol", style="prompt-last-lines",
             parts=(GREEN_STREAM_RUN,), install=CONDA, engine_version="0.4.9.post2",
             expect=Expect("dependency-version", "ImportError", GREEN_STREAM, frame="<module>", fix=UPGRADE),
             facts="the symbol cuGreenCtxStreamCreate (a CUDA 12.4 stack), sgl_kernel/__init__.py line 13 `from sgl_kernel import common_ops`, /opt/conda paths, a shell prompt kept above; the launch chain is ours (the thread ran a test script)",
             fixed_in="sgl-kernel with PRs #8090/#8136 (green-context streams made backward compatible)",
             resolution="Engine-side: sgl-kernel PR #8090 / #8136 made green-context streams work on CUDA 12.4; upgrade sgl-kernel.",
             paste=(partial(paste.last_lines, count=3), partial(paste.shell_prompt, prompt="$", command="python -m sglang.launch_server --model-path /models/Qwen3-8B"), paste.fenced)),
    WildCase(**GREEN_DESTROY_THREAD, style="prompt-long-command", parts=(GREEN_DESTROY_RUN,),
             expect=Expect("dependency-version", "ImportError", GREEN_DESTROY, frame="<module>", fix=UPGRADE),
             facts="the chain launch_server 6 -> http_server 51 -> engine 41 -> data_parallel_controller 32 -> io_struct 26 -> schedule_batch 50 -> sgl_kernel/__init__ 13, cuGreenCtxDestroy, the shell prompt and one-line command",
             paste=(partial(paste.shell_prompt, prompt="root@gpu-a800-07:/workspace# ", command=LAUNCH_COMMAND), paste.fenced)),
    WildCase(**GREEN_DESTROY_THREAD, style="indentation-stripped", parts=(GREEN_DESTROY_RUN,),
             expect=Expect("dependency-version", "ImportError", GREEN_DESTROY, frame="<module>", fix=UPGRADE),
             facts="the same traceback as quoted in PR #8701, its lines without indentation", paste=(paste.strip_indent,)),
    WildCase(**PARSE_SCHEMA_THREAD, style="platform-line-fenced",
             parts=(Text(composed.vllm_platform("04-06 14:51:04", "[__init__.py:256]")), PARSE_SCHEMA_RUN),
             expect=Expect("dependency-version", "ImportError", PARSE_SCHEMA, frame="<module>", fix=UPGRADE),
             facts="the mangled symbol _ZN5torch3jit17parseSchemaOrNameERKSsb, launch_server.py line 6, the vLLM platform line first; the import chain below launch_server is ours",
             paste=(paste.fenced,)),
    WildCase(**PARSE_SCHEMA_THREAD, style="bare-line", parts=(PARSE_SCHEMA_RUN,),
             expect=Expect("dependency-version", "ImportError", PARSE_SCHEMA, fix=UPGRADE),
             facts="later comments pasted only the final ImportError line", paste=(partial(paste.exception_only, marker="ImportError"),)),
    WildCase(thread="https://github.com/sgl-project/sglang/pull/13948", kind="sgl-kernel-common-ops-load-failure", style="exception-only",
             parts=(critical_launch(SM100_ON_SM86),), install=DOCKER, engine_version="main (2025-11-26)",
             expect=Expect("dependency-version", "ImportError", SM100_ON_SM86),
             facts="the multi-line CRITICAL loader message (sm100 build on a compute capability 86 GPU, inner undefined symbol _ZNK3c106SymInt6sym_neERKS0_), 'ImportError: ' with the message on the next lines, only the exception pasted",
             resolution="The pinned sgl-kernel did not match the installed torch; the PR adjusting the pin was closed.",
             paste=(partial(paste.exception_only, marker="ImportError:"), paste.fenced)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/29646", kind="sgl-kernel-common-ops-load-failure", style="double-spaced",
             parts=(critical_launch(NVRTC_ON_SM120),), install=Install("/home/dev/.venv/lib/python3.11/site-packages"),
             expect=Expect("dependency-version", "ImportError", NVRTC_ON_SM120, fix=UPGRADE),
             facts="the same CRITICAL block with compute capability 120, expected variant SM120 and an inner libnvrtc.so.12 error (only CUDA 13 nvrtc installed), pasted with blank lines between lines",
             resolution="Install the CUDA 12 runtime libraries sgl-kernel was built for (or a CUDA 13 build of sgl-kernel).",
             paste=(partial(paste.exception_only, marker="ImportError:"), paste.double_space)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/2584", kind="cuda-runtime-lib-missing", style="xinference-bold-label",
             parts=(XINFERENCE_LOG, xinference_libcudart()), engine_version="0.4.1", install=Install("/root/miniconda3/envs/xinf/lib/python3.11/site-packages"),
             expect=Expect("dependency-version", "ImportError", LIBCUDART, frame="<module>", shown_prefix=XOSCAR_PREFIX),
             facts="Xinference's log line and outer frames (restful_api launch_model, xoscar context.send, pool._run_coro, api.__on_receive__), the import chain io_struct 24 -> schedule_batch 40 -> model_config 24 -> quantization 25 -> fp8 31 -> fused_moe_triton 4 -> fused_moe 14 (`from sgl_kernel import moe_...`), xoscar's [address=..., pid=...] prefix, the bold label",
             resolution="Not confirmed: sgl-kernel needs the CUDA 12 runtime, which the loader could not find in the Xinference environment.",
             paste=(partial(paste.prose, before="**error info:**"),)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/4778", kind="cuda-runtime-lib-missing", style="prose-fenced",
             parts=(load_failure((*to_schedule_batch(6, (51, 41, 32, 26, 50)), sgl_kernel_common_ops(12)), "sgl_kernel.common_ops",
                                 "libcuda.so.1: cannot open shared object file: No such file or directory"),), install=DOCKER,
             expect=Expect("dependency-version", "ImportError", "libcuda.so.1: cannot open shared object file: No such file or directory", frame="<module>", fix=UPGRADE),
             facts="libcuda.so.1 missing when sgl_kernel/__init__.py line 12 imports common_ops; the suggested fix (LD_LIBRARY_PATH)",
             resolution="Suggested: add the directory holding libcuda.so.1 (the driver library) to LD_LIBRARY_PATH.",
             paste=(partial(paste.last_lines, count=8), paste.fenced, partial(paste.prose, before="`import sgl_kernel` fails inside the container:"))),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/5002", kind="cuda-runtime-lib-missing", style="quote",
             parts=(load_failure((*to_schedule_batch(6, (51, 41, 32, 26, 50)), sgl_kernel_common_ops(12)), "sgl_kernel.common_ops",
                                 "libnvrtc.so.12: cannot open shared object file: No such file or directory"),), engine_version="0.4.4",
             expect=Expect("dependency-version", "ImportError", "libnvrtc.so.12: cannot open shared object file: No such file or directory", frame="<module>", fix=UPGRADE),
             facts="libnvrtc.so.12 not found when sgl_kernel loads common_ops (sglang 0.4.4 era); fixed by putting CUDA's bin/lib64 on PATH/LD_LIBRARY_PATH",
             resolution="The reporter exported CUDA's bin and lib64 directories to PATH and LD_LIBRARY_PATH.", paste=(paste.quote,)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/764", kind="flashinfer-import-error", style="command-error-label",
             parts=(FLASHINFER_SAMPLING,), install=DOCKER, engine_version="0.2.5",
             expect=Expect("dependency-version", "ImportError",
                           "cannot import name 'top_k_top_p_sampling_from_probs' from 'flashinfer.sampling' (/usr/local/lib/python3.11/dist-packages/flashinfer/sampling.py)",
                           frame="<module>"),
             facts="the import chain launch_server 5 -> server 32 -> controller/manager_multi 15 (the rest ours), the missing name in flashinfer.sampling, the command then an 'error:' label",
             resolution="Not confirmed; SGLang moved its flashinfer pin to 0.1.2 days later (PR #803/#806).",
             paste=(partial(paste.prose, before="python -m sglang.launch_server --model-path /ai/qwen2-7b --port 30000\n\nerror:"),)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/6160", kind="flashinfer-version-assert", style="quoted-in-prose",
             parts=(version_check("flashinfer_python", "0.2.5", INSTALL_HINT, None, 556, 578),), install=IMAGE, engine_version="0.4.6",
             expect=Expect("dependency-version", "Exception", missing_message("flashinfer_python", "0.2.5", INSTALL_HINT), fix=UPGRADE),
             facts="the message (flashinfer_python 0.2.5 not installed) carried in the title; assert_pkg_version's template for the hint",
             resolution="Maintainer: flashinfer is not in the Blackwell image; install flashinfer-python before launching (a user did it in the entrypoint).",
             paste=(partial(paste.exception_only, marker="Exception:"), partial(paste.quoted_in_prose, lead="The blackwell image refuses to start: "))),
    WildCase(thread="https://github.com/flashinfer-ai/flashinfer/issues/794", kind="flashinfer-version-assert", style="inline-in-sentence",
             parts=(version_check("flashinfer", "0.1.6", INSTALL_HINT, None, 470, 492),), engine_version="0.4.2",
             expect=Expect("dependency-version", "Exception", missing_message("flashinfer", "0.1.6", INSTALL_HINT), fix=UPGRADE),
             facts="the message (SGLang looks for the old distribution name 'flashinfer'), the PackageNotFoundError before it, quoted inline",
             resolution="Upgrade SGLang (newer releases check the flashinfer_python distribution); the reporter confirmed.",
             paste=(partial(paste.exception_only, marker="Exception:"), partial(paste.inline_in_sentence, lead="flashinfer-python 0.2.0 is installed, yet the server says "))),
    WildCase(thread="https://github.com/flashinfer-ai/flashinfer/issues/794", kind="flashinfer-version-assert", style="fenced",
             parts=(version_check("flashinfer", "0.1.6", INSTALL_HINT, None, 470, 492),), engine_version="0.4.2",
             expect=Expect("dependency-version", "Exception", missing_message("flashinfer", "0.1.6", INSTALL_HINT), frame="assert_pkg_version", fix=UPGRADE),
             facts="as above with the chained tracebacks (PackageNotFoundError, then the Exception); frames ours",
             resolution="Upgrade SGLang (newer releases check the flashinfer_python distribution); the reporter confirmed.", paste=(paste.fenced,)),
    WildCase(thread="https://github.com/verl-project/verl/pull/1832", kind="sgl-kernel-version-assert", style="quote",
             parts=(version_check("sgl-kernel", "0.1.1", KERNEL_HINT, "0.0.9.post2", 530, 512),), engine_version="0.4.6",
             expect=Expect("dependency-version", "Exception", too_old_message("sgl-kernel", "0.0.9.post2", "0.1.1", KERNEL_HINT), fix=UPGRADE),
             facts="the message (sgl-kernel 0.0.9.post2 < 0.1.1), quoted as one line in the PR description",
             resolution="The PR fixed the CI job's installed sgl-kernel version.",
             paste=(partial(paste.exception_only, marker="Exception:"), paste.quote)),
    WildCase(thread="https://github.com/verl-project/verl/pull/1832", kind="sgl-kernel-version-assert", style="ci-timestamps",
             parts=(version_check("sgl-kernel", "0.1.1", KERNEL_HINT, "0.0.9.post2", 530, 512),), engine_version="0.4.6", install=DOCKER,
             expect=Expect("dependency-version", "Exception", too_old_message("sgl-kernel", "0.0.9.post2", "0.1.1", KERNEL_HINT), frame="assert_pkg_version", fix=UPGRADE),
             facts="the message; the check's place (engine.py _set_envs_and_config -> assert_pkg_version); the CI log prefix is ours",
             resolution="The PR fixed the CI job's installed sgl-kernel version.", paste=(paste.ci_timestamps, paste.fenced)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/391", kind="vllm-module-removed", style="zsh-prompt",
             parts=(VLLM_LOADER,), install=Install("/home/dev/miniconda3/envs/sgl/lib/python3.11/site-packages"), engine_version="0.1.14",
             expect=Expect("dependency-version", "ImportError",
                           "cannot import name '_set_default_torch_dtype' from 'vllm.model_executor.model_loader' (/home/dev/miniconda3/envs/sgl/lib/python3.11/site-packages/vllm/model_executor/model_loader/__init__.py)",
                           frame="<module>"),
             facts="the chain launch_server 3 -> server 56 -> router/manager 9 -> router/model_rpc 24 -> router/model_runner 15, the missing private name in vLLM's model_loader package, the zsh prompt line",
             resolution="Not confirmed; SGLang later used vLLM's model-loader API (PR #459). Use the vLLM version the checkout expects.",
             paste=(partial(paste.shell_prompt, prompt="sgl ➜ ", command="export CUDA_VISIBLE_DEVICES=4; python -m sglang.launch_server --model-path meta-llama/Llama-2-7b-chat-hf --port 30000"), paste.fenced)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/362", kind="vllm-module-removed", style="inline-quote-lost",
             parts=(VLLM_METADATA,), expect=Expect("dependency-version", "ModuleNotFoundError", INPUT_METADATA, fix=UPGRADE), **VLLM_04,
             facts="only the last line pasted, inline, its closing quote lost; the router-era chain is from sibling #373",
             paste=(partial(paste.exception_only, marker="ModuleNotFoundError"), paste.lose_last_quote, partial(paste.inline_in_sentence, lead="After `pip install sglang[all]`: "))),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/373", kind="vllm-module-removed", style="router-init-state",
             parts=(VLLM_METADATA,), install=Install("/home/dev/sglang/.venv/lib/python3.11/site-packages"),
             expect=Expect("dependency-version", "ModuleNotFoundError", INPUT_METADATA, frame="<module>", fix=UPGRADE), **VLLM_04,
             facts="the chain manager.py 68 start_router_process -> model_rpc.py 619 / 70 -> model_runner.py 287/296/49/42 -> importlib import_module -> the model module, 'router init state: Traceback ...'",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/8654", kind="sgl-kernel-version-mismatch", style="unfenced-dunders-eaten",
             parts=(MARLIN_MOE,), install=DOCKER, engine_version="0.4.10",
             expect=Expect("dependency-version", "ImportError", MARLIN_MESSAGE, frame="<module>", fix=UPGRADE),
             facts="ImportError: cannot import name 'fused_marlin_moe' from 'sgl_kernel' pasted without a fence, Markdown eating the underscores of __init__; the chain is ours",
             resolution="Install matching versions, e.g. sglang[all]==0.4.10.post1 so the sgl-kernel it expects comes with it.",
             paste=(paste.dunders_eaten,)),
)
