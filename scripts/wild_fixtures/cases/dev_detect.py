"""A dev split for issue 28's detection items (branch h-dev): pastes whose failure, exception or engine the
reader has to find from little.  argparse errors in each program spelling (`vllm`, `vllm serve`, `api_server.py`,
a bare `error:` from SystemExit), imports of a third-party module that fail (an undefined symbol in vLLM's or
flash-attn's compiled extension, names an installed sgl-kernel or SGLang lacks), pip and uv resolver conflicts,
kernels and dtypes the GPU is too old for, a proxy answering the server's own warm-up request, and pastes that
carry no engine frame at all (the last lines, an exception inline in a sentence, a py-spy dump).

Facts were mined from threads no other file of the project cites (the message wording, the paths and frames
they showed, the command, the release); frames the thread did not show are ours, and each `facts` says which.
`engine_version` is the release the thread names, else the one current at the thread's date (ours).
"""

from __future__ import annotations

from functools import partial

from pattern_fixtures.engine import Frame
from pattern_fixtures.mirror import LAUNCH_SERVER, MODEL_RUNNER, failing_at, frame_at, to_initialize

from .. import composed, paste
from ..blocks import C_RAISE, argparse_case, crash, failing_import, imports, launch, module_at, plain, records
from ..corpus import IMAGE, Expect, Install, Run, Text, WildCase

VLLM = "vllm"
UPGRADE = ((),)
NO_KERNEL = ("CUDA error: no kernel image is available for execution on the device\n"
             "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
             "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
             "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")


def vllm_record(level: str, stamp: str, where: str, message: str) -> str:
    """A vLLM log record header as releases since 0.8 print it: `INFO 07-19 13:20:10 [__init__.py:239] `."""
    return "".join(f"{level} {stamp} [{where}] {line}\n" for line in message.splitlines())


def prefixed(text: str, prefix: str) -> str:
    """Every line under one process prefix (vLLM's `(EngineCore_DP0 pid=N) `, Ray's `(TaskRunner pid=N) `)."""
    return "".join(f"{prefix}{line}\n" for line in text.splitlines())


def top(path: str, function: str, statement: str, line: int, env: tuple[tuple[str, str], ...] = ()) -> Frame:
    """The process's first frame, printing the traceback of what `statement` raised (as an uncaught exception
    prints it) so that the process itself exits cleanly."""
    body = f"try:\n    {statement}\nexcept BaseException:\n    __import__('traceback').print_exc()\n"
    return failing_at(path, function, body, line, env=env, marker=statement.split()[0])


def with_extra(frames: tuple[Frame, ...], module: str, message: str, **fields: object) -> Run:
    """A process whose last frame imports `module`, which fails to load with ImportError(`message`)."""
    first, helper = failing_import(frames[0], module, message)
    return Run(plain((first, *frames[1:]), extra_modules=(helper,), **fields), primary=True)  # type: ignore[arg-type]


# -- argparse in each spelling -----------------------------------------------------------------------------------------------

VLLM_TOP_PARSER = """
parser.prog = "vllm"
parser.add_argument("-v", "--version", action="version", version="0.15.0")
commands = parser.add_subparsers(required=True, dest="subparser")
serve = commands.add_parser("serve", usage="vllm serve [model_tag] [options]")
serve.add_argument("model_tag", nargs="?")
serve.add_argument("--port", type=int, default=8000)
serve.add_argument("--max-num-seqs", type=int, default=None)
serve.add_argument("--served-model-name", type=str, nargs="+", default=None)
serve.add_argument("--tensor-parallel-size", "-tp", type=int, default=1)
for name in ("chat", "complete", "bench", "collect-env", "run-batch"):
    commands.add_parser(name)
"""
VLLM_SERVE_REQUIRED_PARSER = """
parser.prog = "vllm"
commands = parser.add_subparsers(required=True, dest="subparser")
serve = commands.add_parser("serve", usage="vllm serve <model_tag> [options]")
serve.add_argument("model_tag")
serve.add_argument("--host", type=str, default=None)
serve.add_argument("--port", type=int, default=8000)
serve.add_argument("--trust-remote-code", action="store_true")
"""
VLLM_SINGLE_DASH_PARSER = """
parser.prog = "vllm"
commands = parser.add_subparsers(required=True, dest="subparser")
serve = commands.add_parser("serve", usage="vllm serve [model_tag] [options]")
serve.add_argument("model_tag", nargs="?")
serve.add_argument("--language-model-only", action="store_true")
serve.add_argument("--max-model-len", type=str, default=None)
"""
API_SERVER_PARSER = """
parser.prog = "api_server.py"
parser.add_argument("model_tag", nargs="?", default=None)
parser.add_argument("--host", type=str, default=None)
parser.add_argument("--port", type=int, default=8000)
parser.add_argument("--dtype", type=str, default="auto", choices=["auto", "half", "float16", "bfloat16", "float", "float32"])
parser.add_argument("--max-model-len", type=str, default=None)
"""

# -- vLLM's compiled extension with an undefined symbol -------------------------------------------------------------------


def vllm_import_chain(entry: Frame) -> tuple[Frame, ...]:
    """`import vllm` from `entry` down to the op registry that loads vllm._C (0.9-era module layout; lines ours)."""
    return entry, *imports(
        ("vllm/__init__.py", "from vllm.engine.arg_utils import AsyncEngineArgs, EngineArgs", 12),
        ("vllm/engine/arg_utils.py", "from vllm.config import CacheConfig, CompilationConfig, ConfigFormat", 15),
        ("vllm/config.py", "from vllm.model_executor.layers.quantization import QUANTIZATION_METHODS", 29),
        ("vllm/model_executor/__init__.py", "from vllm.model_executor.parameter import BasevLLMParameter", 3),
        ("vllm/model_executor/parameter.py", "from vllm.distributed import get_tensor_model_parallel_rank", 9),
        ("vllm/distributed/__init__.py", "from .communication_op import *", 3),
        ("vllm/distributed/communication_op.py", "from .parallel_state import get_tp_group", 8),
        ("vllm/distributed/parallel_state.py", "import vllm._C", 41),
    )


SOURCE_TREE = Install("/workspace/vllm")  # an editable checkout: frames under /workspace/vllm/vllm/
CONSTANT_STRING = "_ZN3c106ivalue14ConstantString6createENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
C_SO_21226 = f"/workspace/vllm/vllm/_C.abi3.so: undefined symbol: {CONSTANT_STRING}"
C_SO_21226_RUN = with_extra(vllm_import_chain(top("collect_env.py", "get_vllm_version", "from vllm import __version__, __version_tuple__", 273)), "vllm._C", C_SO_21226)
CUTLASS_SM100 = "_Z20cutlass_moe_mm_sm100RN2at6TensorERKS0_S3_S3_S3_S3_S3_S3_S3_S3_bb"
C_SO_28199 = f"/home/user/vllm/vllm/_C.abi3.so: undefined symbol: {CUTLASS_SM100}"
C_SO_28199_RUN = with_extra(vllm_import_chain(top("vllm/entrypoints/cli/main.py", "main", "import vllm.entrypoints.cli.serve", 40)), "vllm._C", C_SO_28199)

LIBRARY_SYMBOL = "_ZN5torch7LibraryC1ENS0_4KindESsSt8optionalIN3c1011DispatchKeyEEPKcj"
C_SO_5501 = f"/usr/local/lib/python3.8/dist-packages/vllm/_C.abi3.so: undefined symbol: {LIBRARY_SYMBOL}"
WARNING_5501 = (" import vllm\n" + vllm_record("WARNING", "06-13 11:42:20", "_custom_ops.py:11", f"Failed to import from vllm._C with ImportError('{C_SO_5501}')")
                .replace("[_custom_ops.py:11]", "_custom_ops.py:11]"))

# -- flash-attn's extension with an undefined symbol under vLLM -------------------------------------------------------------

FLASH_SYMBOL = "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
FLASH_13047 = f"/usr/local/lib/python3.12/dist-packages/flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so: undefined symbol: {FLASH_SYMBOL}"
FLASH_13047_RUN = with_extra((
    top("vllm/entrypoints/openai/api_server.py", "run_server", "from vllm.engine.arg_utils import AsyncEngineArgs", 31),
    *imports(("vllm/engine/arg_utils.py", "from vllm.executor.executor_base import ExecutorBase", 21),
    ("vllm/executor/executor_base.py", "from vllm.model_executor.layers.sampler import SamplerOutput", 14),
    ("vllm/model_executor/layers/sampler.py", "import flash_attn", 22),
    ("flash_attn/__init__.py", "from flash_attn.flash_attn_interface import flash_attn_func", 3),
    ("flash_attn/flash_attn_interface.py", "import flash_attn_2_cuda as flash_attn_gpu", 10)),
), "flash_attn_2_cuda", FLASH_13047)
FLASH_ASR = "/workspace/qwen-asr/.venv/lib/python3.12/site-packages/flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEab"
FLASH_ASR_RUN = with_extra((
    top("vllm/model_executor/layers/rotary_embedding/__init__.py", "get_rope", "rotary_emb = MRotaryEmbedding(head_size, rotary_dim, max_position, base, is_neox_style, dtype)", 108,
        env=(("MRotaryEmbedding", "NEXT"), ("head_size", "128"), ("rotary_dim", "128"), ("max_position", "65536"), ("base", "1000000"),
             ("is_neox_style", "True"), ("dtype", "None"))),
    frame_at("vllm/model_executor/layers/rotary_embedding/mrope.py", "__init__", "super().__init__(head_size, rotary_dim, max_position_embeddings, base, is_neox_style, dtype)", 237),
    frame_at("vllm/model_executor/layers/rotary_embedding/base.py", "__init__", "self.apply_rotary_emb = ApplyRotaryEmb(is_neox_style=self.is_neox_style)", 58,
             env=(("self", "NS(is_neox_style=True)"), ("ApplyRotaryEmb", "NEXT"))),
    frame_at("vllm/model_executor/layers/rotary_embedding/common.py", "__init__", "from flash_attn.ops.triton.rotary import apply_rotary", 138,
             env=(("is_neox_style", "True"),)),
    Frame("flash_attn/__init__.py", "<module>", "from flash_attn.flash_attn_interface import flash_attn_func", lineno=2),
    Frame("flash_attn/flash_attn_interface.py", "<module>", "import flash_attn_2_cuda as flash_attn_gpu", lineno=14),
), "flash_attn_2_cuda", FLASH_ASR)

# -- imports of names an installed package lacks -----------------------------------------------------------------------------

SGL_KERNEL_STUB = (("sgl_kernel/__init__.py", '"""sgl-kernel, an older build."""\n'),)
AWQ_5867 = Run(launch(imports(
    (LAUNCH_SERVER, "from sglang.srt.entrypoints.http_server import launch_server", 6),
    ("sglang/srt/entrypoints/http_server.py", "from sglang.srt.entrypoints.engine import _launch_subprocesses", 46),
    ("sglang/srt/entrypoints/engine.py", "from sglang.srt.managers.data_parallel_controller import run_data_parallel_controller_process", 42),
    ("sglang/srt/managers/data_parallel_controller.py", "from sglang.srt.managers.scheduler import run_scheduler_process", 30),
    ("sglang/srt/managers/scheduler.py", "from sglang.srt.model_executor.model_runner import ModelRunner", 84),
    ("sglang/srt/model_executor/model_runner.py", "from sglang.srt.layers.quantization import monkey_patch_isinstance_for_vllm_base_layer", 46),
    ("sglang/srt/layers/quantization/__init__.py", "from sglang.srt.layers.quantization.awq import AWQConfig", 52),
    ("sglang/srt/layers/quantization/awq.py", "from sgl_kernel import awq_dequantize", 12),
), extra_modules=SGL_KERNEL_STUB), primary=True)
LOCAL_SITE = Install("/home/user/.local/lib/python3.12/site-packages")
SGLANG_UTILS_STUB = (("sglang/__init__.py", ""), ("sglang/srt/__init__.py", ""), ("sglang/srt/utils/__init__.py", '"""SGLang\'s utilities, a newer release."""\n'))
GET_IP_3719 = Run(plain((
    top("verl/trainer/main_ppo.py", "run", "actor_rollout_cls, ray_worker_group_cls = self.add_actor_rollout_worker(config)", 112, env=(("self", "HOP:add_actor_rollout_worker"), ("config", "None"))),
    frame_at("verl/workers/fsdp_workers.py", "_build_rollout", "self.rollout = get_rollout_class(rollout_config.name, rollout_config.mode)(config=rollout_config, model_config=model_config, device_mesh=rollout_device_mesh)", 596,
             env=(("rollout_config", "NS(name='sglang', mode='async')"), ("get_rollout_class", "NEXT"), ("model_config", "None"), ("rollout_device_mesh", "None"))),
    frame_at("verl/workers/rollout/base.py", "get_rollout_class", "rollout_module = importlib.import_module(module_name)", 101,
             env=(("importlib", "__import__('importlib')"), ("module_name", "'verl.workers.rollout.sglang_rollout.sglang_rollout'"))),
    Frame("verl/workers/rollout/sglang_rollout/sglang_rollout.py", "<module>", "from sglang.srt.utils import get_ip, get_open_port", lineno=45),
), extra_modules=SGLANG_UTILS_STUB), primary=True)
LAUNCH_CMD_STUB = (("sglang/__init__.py", ""), ("sglang/utils.py", '"""SGLang\'s utils module, an older release."""\n'))
LAUNCH_CMD_7458 = Run(plain((
    top("llamafactory/chat/chat_model.py", "__init__", "from llamafactory.chat.sglang_engine import SGLangEngine", 56),
    Frame("llamafactory/chat/sglang_engine.py", "<module>", "from sglang.utils import launch_server_cmd, terminate_process, wait_for_server", lineno=30),
), extra_modules=LAUNCH_CMD_STUB), primary=True)
SGL_KERNEL_MISSING_3687 = Run(plain((
    top("generate/stage1.py", "main", "llm = sgl.Engine(model_path=model_path, tp_size=4, dp_size=2, context_length=128000)", 138,
             env=(("sgl", "HOP:Engine"), ("model_path", "'/models/Qwen2.5-7B-Instruct'"))),
    frame_at("sglang/api.py", "Engine", "from sglang.srt.entrypoints.engine import Engine", 41),
    Frame("sglang/srt/entrypoints/engine.py", "<module>", "from sglang.srt.managers.scheduler import run_scheduler_process", lineno=40),
    Frame("sglang/srt/managers/scheduler.py", "<module>", "from sglang.srt.layers.logits_processor import LogitsProcessorOutput", lineno=60),
    Frame("sglang/srt/layers/logits_processor.py", "<module>", "from sglang.srt.layers.vocab_parallel_embedding import VocabParallelEmbedding", lineno=30),
    Frame("sglang/srt/layers/vocab_parallel_embedding.py", "<module>", "import sgl_kernel", lineno=20),
)), primary=True)

# -- model configs SGLang's ModelConfig cannot read --------------------------------------------------------------------------

HIDDEN_SIZE = "self.hf_text_config.hidden_size // self.hf_text_config.num_attention_heads"
# transformers' PretrainedConfig.__getattribute__ (configuration_utils.py:210 in 4.46) and a remote-code config class
CONFIG_UTILS = "\n" * 205 + """class PretrainedConfig:
    attribute_map = {}

    def __getattribute__(self, key):
        return super().__getattribute__(key)


class InternVLChatConfig(PretrainedConfig):
    pass
"""
CONFIG_MODULES = (("transformers/__init__.py", ""), ("transformers/configuration_utils.py", CONFIG_UTILS))
INTERNVL_2520 = Run(launch((
    module_at(LAUNCH_SERVER, "launch_server(server_args)", 14, env=(("launch_server", "NEXT"), ("server_args", "None"))),
    frame_at("sglang/srt/server.py", "launch_server", "launch_engine(server_args=server_args)", 526, env=(("launch_engine", "NEXT"),)),
    frame_at("sglang/srt/server.py", "launch_engine", "tokenizer_manager = TokenizerManager(server_args, port_args)", 488,
             env=(("TokenizerManager", "NEXT"), ("port_args", "None"))),
    frame_at("sglang/srt/managers/tokenizer_manager.py", "__init__", "self.model_config = ModelConfig(server_args.model_path, trust_remote_code=server_args.trust_remote_code)", 109,
             env=(("ModelConfig", "NEXT"), ("server_args", "NS(model_path='/models/InternVL2-8B', trust_remote_code=True)"))),
    frame_at("sglang/srt/configs/model_config.py", "__init__", HIDDEN_SIZE, 93,
             env=(("self", "NS(hf_text_config=__import__('transformers.configuration_utils', fromlist=['x']).InternVLChatConfig())"),)),
), extra_modules=CONFIG_MODULES), primary=True)

# -- kernels and dtypes an older GPU lacks -----------------------------------------------------------------------------------

GEMMA_NORM = "GemmaRMSNorm failed with error code no kernel image is available for execution on the device"
GEMMA_NORM_24302 = Run(crash((
    *to_initialize("0.5.9", "self.init_device_graphs()", 560),
    frame_at(MODEL_RUNNER, "init_device_graphs", "self.graph_runner = CudaGraphRunner(self)", 2020, env=(("CudaGraphRunner", C_RAISE),)),
), ranks="TP0", stamp="2026-05-03 10:21:44",
    before=("Load weight end. type=Gemma3ForCausalLM, dtype=torch.float16, avail mem=5.12 GB, mem usage=2.01 GB.",
            "Capture cuda graph begin. This can take up to several minutes. avail mem=3.90 GB"),
    torch_error=("RuntimeError", GEMMA_NORM)), primary=True)
RMSNORM_831 = "RMSNorm failed with error code no kernel image is available for execution on the device"
CHECK_ENV_831 = """Python: 3.11.9
CUDA available: True
GPU 0: Tesla V100-SXM2-32GB
CUDA_HOME: /opt/packages/cuda/v12.4.0
PyTorch: 2.4.0+cu124
sglang: 0.2.12
flashinfer: 0.1.4+cu124torch2.4
transformers: 4.44.0
vllm: 0.5.4
"""
FP8E4NV = "type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')"
MINIMAX_COMMAND = ("python -m sglang.launch_server --model-path minimax/MiniMax-M2.5 --served-model-name minimax-m2.5 --port 10000 "
                   "--host 0.0.0.0 --tp-size 4 --mem-fraction-static 0.85 --context-length 196608 --trust-remote-code")
BF16_T4 = ("Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute capability 7.5. "
           "You can use float16 instead by explicitly setting the `dtype` flag in CLI, for example: --dtype=half.")
BF16_1157 = ("Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has compute capability 7.5.")
BF16_CHECK = "vllm/worker/worker.py"
BF16_RUN = Run(plain((
    top("vllm/engine/llm_engine.py", "_init_workers", "self._run_workers(\"init_model\")", 196, env=(("self", "HOP:_run_workers"),)),
    frame_at("vllm/engine/llm_engine.py", "_run_workers", "output = executor(*args, **kwargs)", 755, env=(("executor", "NEXT"), ("args", "()"), ("kwargs", "{}"))),
    frame_at(BF16_CHECK, "init_model", "_check_if_gpu_supports_dtype(self.model_config.dtype)", 81, env=(("_check_if_gpu_supports_dtype", "NEXT"), ("self", "NS(model_config=NS(dtype='bfloat16'))"))),
    failing_at(BF16_CHECK, "_check_if_gpu_supports_dtype", f"raise ValueError({BF16_1157!r})", 160),
)), primary=True)
NO_KERNEL_19185 = Run(plain((
    top("vllm/worker/model_runner.py", "load_model", "self.model = get_model(vllm_config=self.vllm_config)", 1174, env=(("get_model", "NEXT"), ("self", "NS(vllm_config=NS(model_config=None))"))),
    frame_at("vllm/model_executor/model_loader/__init__.py", "get_model", "return loader.load_model(vllm_config=vllm_config, model_config=vllm_config.model_config)", 59,
             env=(("loader", "HOP:load_model"), ("vllm_config", "NS(model_config=None)"))),
    frame_at("vllm/model_executor/model_loader/base_loader.py", "load_model", "model = initialize_model(vllm_config=vllm_config, model_config=model_config)", 38,
             env=(("initialize_model", "NEXT"), ("model_config", "None"))),
    frame_at("vllm/model_executor/model_loader/utils.py", "initialize_model", "return model_class(vllm_config=vllm_config, prefix=prefix)", 62,
             env=(("model_class", "NEXT"), ("prefix", "''"))),
    frame_at("vllm/model_executor/models/qwen3.py", "__init__", "self.model = Qwen3Model(vllm_config=vllm_config, prefix=maybe_prefix(prefix, \"model\"))", 271,
             env=(("Qwen3Model", "NEXT"), ("maybe_prefix", "lambda *a: ''"), ("self", "NS()"))),
    frame_at("vllm/compilation/decorators.py", "__init__", "old_init(self, vllm_config=vllm_config, prefix=prefix, **kwargs)", 152,
             env=(("old_init", "NEXT"), ("kwargs", "{}"))),
    frame_at("vllm/model_executor/models/qwen2.py", "__init__", "self.embed_tokens = VocabParallelEmbedding(config.vocab_size, config.hidden_size)", 328,
             env=(("VocabParallelEmbedding", C_RAISE), ("config", "NS(vocab_size=151936, hidden_size=4096)"), ("self", "NS()"))),
), torch_error=("RuntimeError", NO_KERNEL.rstrip("\n"))), primary=True)

# -- the server's warm-up request answered by an HTTP proxy ------------------------------------------------------------------

WARMUP_ASSERT = 'assert res.status_code == 200, f"{res=}, {res.text=}"'
RESPONSE_502 = "type('Response', (), {'status_code': 502, 'text': '', '__repr__': lambda self: '<Response [502]>'})()"
WARMUP_2468 = Run(plain((
    top("sglang/srt/server.py", "_wait_and_warmup", WARMUP_ASSERT, 621, env=(("res", RESPONSE_502),)),
)), primary=True)
WARMUP_RECORDS = records(
    "Load weight end. type=MistralForCausalLM, dtype=torch.bfloat16, avail mem=9.69 GB",
    "Memory pool end. avail mem=2.44 GB",
    "max_total_num_tokens=56524, max_prefill_tokens=16384, max_running_requests=2049, context_len=32768",
    ranks="TP0", stamp="2024-12-13 01:44:59")
UVICORN_2468 = ("[2024-12-13 01:45:02] INFO:     Started server process [3831493]\n"
                "[2024-12-13 01:45:02] INFO:     Waiting for application startup.\n"
                "[2024-12-13 01:45:02] INFO:     Application startup complete.\n"
                "[2024-12-13 01:45:02] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)\n"
                "[2024-12-13 01:47:34] Initialization failed. warmup error: ")

# -- pip and uv resolving against vLLM's pins --------------------------------------------------------------------------------

PIP_CONFLICTS_53 = """ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. This behaviour is the source of the following dependency conflicts.
tensordict 0.5.0 requires torch>=2.4.0, but you have torch 2.2.0 which is incompatible.
vllm 0.6.3 requires torch==2.4.0, but you have torch 2.2.0 which is incompatible.
vllm 0.6.3 requires torchvision==0.19, but you have torchvision 0.17.0 which is incompatible.
vllm 0.6.3 requires transformers>=4.45.0, but you have transformers 4.40.1 which is incompatible.
xformers 0.0.27.post2 requires torch==2.4.0, but you have torch 2.2.0 which is incompatible.
"""
UV_11283 = """$ uv pip install vllm==0.6.5 vllm-flash-attn
  × No solution found when resolving dependencies:
  ╰─▶ Because vllm==0.6.5 depends on torch{platform_machine != 'aarch64'}==2.5.1 and
      vllm-flash-attn>=2.6.1 depends on torch==2.4.0, we can conclude that vllm==0.6.5 and
      all of:
          vllm-flash-attn==2.6.1
          vllm-flash-attn==2.6.2
       are incompatible. (1)
"""

# -- a scheduler that hangs, shown only by py-spy -----------------------------------------------------------------------------

PYSPY_17941 = composed.pyspy_dump(88693, "sglang::scheduler_PP2_TP1", "v3.12.3 (/usr/bin/python3.12)", (
    (88693, "idle", "MainThread", ("0x7fa2d1487d71 (libc.so.6)", "pthread_cond_timedwait (libc.so.6)",
                                   "gloo::transport::tcp::UnboundBuffer::waitRecv (libtorch_cpu.so)",
                                   "c10d::ProcessGroupGloo::RecvWork::wait (libtorch_cpu.so)", "recv (torch/distributed/distributed_c10d.py:2455)",
                                   "recv_requests (managers/scheduler.py:1131)", "event_loop_pp (managers/scheduler_pp_mixin.py:82)",
                                   "run_scheduler_process (managers/scheduler.py:2977)")),
))
WATCHDOG_17941 = "[2026-01-29 13:12:37 PP1 TP1] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)\n\n\n[2026-01-29 13:12:37 PP2 TP1] Pyspy dump for PID 88693:\n"


CASES = (
    # argparse -----------------------------------------------------------------------------------------------------------------
    WildCase(thread="https://github.com/vllm-project/vllm/issues/22072", kind="vllm-argparse-unrecognized-argument", style="docker-compose",
             parts=(Run(argparse_case(API_SERVER_PARSER, ("serve", "HuggingFaceTB/SmolLM3-3B", "--dtype auto")), primary=True),),
             engine_version="0.10.0", engine=VLLM,
             expect=Expect("unknown-flag", "UsageError", "unrecognized arguments: HuggingFaceTB/SmolLM3-3B --dtype auto"),
             facts="vllm/vllm-openai:latest under docker compose, `command:` listing `serve`, the model and `--dtype auto` as one item; "
                   "'api_server.py: error: unrecognized arguments' in the container's log; the usage block and its options ours",
             resolution="The image's entrypoint is already the API server: drop `serve`, give the model with --model, one flag and value per item.",
             paste=(partial(paste.docker_compose, service="vllm"), paste.fenced)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/13150", kind="vllm-argparse-required", style="last-lines",
             parts=(Run(argparse_case(VLLM_SERVE_REQUIRED_PARSER, ("serve", "--port", "8000", "--trust-remote-code")), primary=True),),
             engine_version="0.7.2", engine=VLLM,
             expect=Expect("missing-flag", "UsageError", "the following arguments are required: model_tag"),
             facts="`vllm serve: error: the following arguments are required: model_tag` (the title); the flags given ours",
             resolution="Give the model as the first argument of `vllm serve`.",
             paste=(partial(paste.last_lines, count=2), paste.fenced)),
    WildCase(thread="https://github.com/vllm-project/vllm-omni/issues/1364", kind="vllm-argparse-unrecognized-argument", style="usage-shell",
             parts=(Run(argparse_case(VLLM_TOP_PARSER, ("serve", "/root/Qwen-Image-Edit-2509", "--omni", "--port", "8092", "--max-num-seqs", "10",
                                                        "--served-model-name", "Qwen-Image-Edit-2509", "--tensor-parallel-size", "2")), primary=True),),
             engine_version="0.15.0", engine=VLLM,
             expect=Expect("unknown-flag", "UsageError", "unrecognized arguments: --omni"),
             facts="vllm 0.15.0 with vllm-omni 0.14.0 installed; the command and `usage: vllm [-h] [-v] {chat,complete,serve,bench,collect-env,run-batch} ...` "
                   "then `vllm: error: unrecognized arguments: --omni`",
             resolution="vllm-omni 0.14 does not register --omni with vllm 0.15: install matching vllm and vllm-omni releases.",
             paste=(partial(paste.shell_prompt, prompt="root@host:~# ", command="vllm serve /root/Qwen-Image-Edit-2509 --omni --port 8092 --max-num-seqs 10 "
                            "--served-model-name Qwen-Image-Edit-2509 --tensor-parallel-size 2"), paste.fenced)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/46325", kind="vllm-argparse-unrecognized-argument", style="inline-in-sentence",
             parts=(Run(argparse_case(VLLM_SINGLE_DASH_PARSER, ("serve", "Qwen/Qwen3.5-27B", "-language-model-only")), primary=True),),
             engine_version="0.23.0", engine=VLLM,
             expect=Expect("unknown-flag", "UsageError", "unrecognized arguments: -language-model-only"),
             facts="vllm 0.23.0, a flag typed with one dash: 'unrecognized arguments: -language-model-only' (the title); the model ours; "
                   "paste style ours",
             resolution="The flag is --language-model-only (two dashes).",
             paste=(partial(paste.exception_only, marker="vllm: error:"), partial(paste.inline_in_sentence, lead="Starting the server prints ",
                                                                                   tail=" and exits."))),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/34226", kind="argparse-unrecognized-argument", style="bare-error",
             parts=(Text("error: unrecognized arguments: --served-model-name minimax-h3\n", primary=True),),
             engine_version="0.5.23",
             expect=Expect("unknown-flag"),
             facts="`sglang serve` of a diffusion model with --served-model-name: the diffusion ServerArgs raises SystemExit('error: unrecognized "
                   "arguments: ...') (python/sglang/multimodal_gen/runtime/server_args/server_args.py), no program name; the command above it",
             resolution="The diffusion server has no --served-model-name: drop it (fixed later by adding the field).",
             paste=(partial(paste.shell_prompt, prompt="$ ", command="sglang serve --model-path /data01/models/MiniMax-H3 --model-variant fl2va "
                            "--num-gpus 8 --ulysses-degree 8 --host 0.0.0.0 --port 30010 --served-model-name minimax-h3"), paste.fenced)),
    # dependency drift: compiled extensions with undefined symbols ---------------------------------------------------------------
    WildCase(thread="https://github.com/vllm-project/vllm/issues/21226", kind="vllm-undefined-symbol", style="source-tree",
             parts=(Text(vllm_record("INFO", "07-19 13:20:10", "__init__.py:239", "Automatically detected platform cuda.")), C_SO_21226_RUN),
             engine_version="0.9.2", engine=VLLM, install=SOURCE_TREE,
             expect=Expect("dependency-version", "ImportError", C_SO_21226),
             facts="a source checkout at /workspace/vllm; collect_env.py importing vllm: vllm/__init__.py -> engine/arg_utils.py -> config.py -> "
                   "model_executor -> parameter.py -> distributed, then vllm/_C.abi3.so with an undefined c10::ivalue::ConstantString symbol; "
                   "the lines below distributed/__init__.py ours",
             resolution="vllm/_C was built against another torch: rebuild vLLM against the installed torch or install the torch it pins.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/28199", kind="vllm-undefined-symbol", style="exception-only",
             parts=(C_SO_28199_RUN,), engine_version="0.11.1", engine=VLLM, install=Install("/home/user/vllm"),
             expect=Expect("dependency-version", "ImportError", C_SO_28199),
             facts="`vllm/vllm/_C.abi3.so: undefined symbol: _Z20cutlass_moe_mm_sm100...` (the title) after building from source; only the "
                   "exception line pasted; the checkout path ours",
             resolution="The build left out the SM100 kernels its op registry references: a clean rebuild for the GPU's arch, or a release wheel.",
             paste=(partial(paste.exception_only, marker="ImportError"), paste.fenced)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/5501", kind="vllm-undefined-symbol", style="warning-only",
             parts=(Text(WARNING_5501, primary=True),), engine_version="0.5.0", engine=VLLM,
             expect=Expect("dependency-version"),
             facts="`import vllm` and the 0.5-era warning of _custom_ops.py:11 (header without brackets): vllm._C failed to import with an "
                   "undefined torch::Library symbol under python3.8's dist-packages; nothing else pasted",
             resolution="The wheel was built against torch 2.3 (std::optional in the op registry): install the torch vLLM pins.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/13047", kind="flash-attn-undefined-symbol", style="shell-prompt",
             parts=(Text(vllm_record("INFO", "02-10 17:06:23", "__init__.py:190", "Automatically detected platform cuda.").replace("[__init__.py:190]", "__init__.py:190]")),
                    FLASH_13047_RUN),
             engine_version="0.7.3.dev57", engine=VLLM, install=Install("/usr/local/lib/python3.12/dist-packages"),
             expect=Expect("dependency-version", "ImportError", FLASH_13047),
             facts="nvcr.io/nvidia/pytorch:24.12 with vLLM installed editable (precompiled); `python -m vllm.entrypoints.openai.api_server --model "
                   "meta-llama/Llama-3.2-3B-Instruct ...`; the 0.7-era record header without brackets; flash_attn_2_cuda with an undefined c10::Error "
                   "symbol; the import chain inside vLLM ours",
             resolution="The container's flash-attn was built for the image's torch, not the one vLLM installed: remove it (vLLM ships its own).",
             paste=(partial(paste.shell_prompt, prompt="$ ", command="python -m vllm.entrypoints.openai.api_server --host 0.0.0.0 --port 8000 "
                            "--model meta-llama/Llama-3.2-3B-Instruct --seed 42 -tp 1 --max_model_len 2048"), paste.fenced)),
    WildCase(thread="https://github.com/QwenLM/Qwen3-ASR/issues/15", kind="flash-attn-undefined-symbol", style="engine-core-tail",
             parts=(FLASH_ASR_RUN,), engine_version="0.14.0", engine=VLLM, install=Install("/workspace/qwen-asr/.venv/lib/python3.12/site-packages"),
             expect=Expect("dependency-version", "ImportError", FLASH_ASR),
             facts="every line under `(EngineCore_DP0 pid=3359555) `: mrope.py:237 -> rotary_embedding/base.py:58 -> common.py:138 importing "
                   "flash_attn.ops.triton.rotary -> flash_attn/__init__.py -> flash_attn_interface.py `import flash_attn_2_cuda`; the symbol ours",
             resolution="flash-attn built for another torch: reinstall flash-attn for the installed torch, or uninstall it.",
             paste=(partial(paste.cut_at_start, marker="mrope.py"), partial(prefixed, prefix="(EngineCore_DP0 pid=3359555) "), paste.fenced)),
    # dependency drift: names the installed package lacks ----------------------------------------------------------------------
    WildCase(thread="https://github.com/sgl-project/sglang/issues/5867", kind="sgl-kernel-import-name", style="platform-line-first",
             parts=(Text(vllm_record("INFO", "04-29 00:30:19", "__init__.py:239", "Automatically detected platform cuda.")), AWQ_5867),
             engine_version="0.4.6", install=LOCAL_SITE,
             expect=Expect("dependency-version", "ImportError",
                           "cannot import name 'awq_dequantize' from 'sgl_kernel' (/home/user/.local/lib/python3.12/site-packages/sgl_kernel/__init__.py)"),
             facts="vLLM's 'Automatically detected platform cuda.' record first (SGLang imports vLLM), then launch_server.py -> http_server.py:46 -> "
                   "engine.py:42 -> data_parallel_controller -> ... -> `from sgl_kernel import awq_dequantize`; user site-packages; the middle of "
                   "the chain ours",
             resolution="sgl-kernel older than SGLang 0.4.6 needs: install the sgl-kernel release SGLang pins.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/verl-project/verl/issues/3719", kind="sglang-import-name", style="ray-taskrunner",
             parts=(GET_IP_3719,), engine_version="0.5.3", install=Install("/usr/local/python3.11.13/lib/python3.11/site-packages"),
             expect=Expect("dependency-version", "ImportError",
                           "cannot import name 'get_ip' from 'sglang.srt.utils' (/usr/local/python3.11.13/lib/python3.11/site-packages/sglang/srt/utils/__init__.py)"),
             facts="verl under Ray, lines under `(TaskRunner pid=5726) `: get_rollout_class in verl/workers/rollout/base.py:101 importing the "
                   "SGLang rollout, which imports get_ip from sglang.srt.utils; the frames above base.py ours",
             resolution="verl's SGLang rollout wants an SGLang release that has sglang.srt.utils.get_ip: install the SGLang verl pins.",
             paste=(partial(paste.ray, actor="TaskRunner", pid=5726), paste.fenced)),
    WildCase(thread="https://github.com/hiyouga/LlamaFactory/issues/7458", kind="sglang-import-name", style="two-lines",
             parts=(LAUNCH_CMD_7458,), engine_version="0.4.1", install=Install("/home/user/lama_factory/lib/python3.10/site-packages"),
             expect=Expect("dependency-version", "ImportError",
                           "cannot import name 'launch_server_cmd' from 'sglang.utils' (/home/user/lama_factory/lib/python3.10/site-packages/sglang/utils.py)"),
             facts="`llamafactory-cli train ...` importing LLaMA-Factory's SGLang engine; only the source line `from sglang.utils import "
                   "launch_server_cmd, terminate_process, wait_for_server` and the ImportError pasted",
             resolution="LLaMA-Factory's SGLang backend needs a newer SGLang (launch_server_cmd): upgrade sglang.",
             paste=(partial(paste.last_lines, count=2), partial(paste.prose, before="error:"))),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/3687", kind="sgl-kernel-missing", style="fenced",
             parts=(SGL_KERNEL_MISSING_3687,), engine_version="0.4.3",
             install=Install("/mnt/env/rjh/lib/python3.12/site-packages"),
             expect=Expect("dependency-version", "ModuleNotFoundError", "No module named 'sgl_kernel'"),
             facts="sgl.Engine(...) in the user's script after upgrading SGLang 0.4.1 -> 0.4.3; sglang/api.py then the engine's imports down to "
                   "`import sgl_kernel`; the modules between api.py and the import ours",
             resolution="SGLang 0.4.3 needs the sgl-kernel package: install it (pip install sgl-kernel, or sglang[all]).",
             paste=(paste.fenced,)),
    # model configs ----------------------------------------------------------------------------------------------------------------
    WildCase(thread="https://github.com/sgl-project/sglang/issues/2520", kind="model-config-attribute", style="fenced",
             parts=(INTERNVL_2520,), engine_version="0.4.0", install=IMAGE,
             expect=Expect("unsupported-architecture", "AttributeError", "'InternVLChatConfig' object has no attribute 'hidden_size'"),
             facts="the lmsysorg/sglang image; launch_server.py:14 -> server.py:526 launch_server -> :488 launch_engine -> tokenizer_manager.py:109 "
                   "-> model_config.py:93 reading hidden_size -> transformers' configuration_utils.py:210",
             resolution="InternVL's chat config was not supported by that SGLang release.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/QwenLM/Qwen3-VL/issues/1929", kind="model-config-attribute", style="prose",
             parts=(Text("AttributeError: 'TransformersForCasualLM' object has no attribute 'tp_size'\n", primary=True),),
             engine_version="0.5.5",
             expect=Expect("engine-bug", "AttributeError", "'TransformersForCasualLM' object has no attribute 'tp_size'"),
             facts="`python -m sglang.launch_server --model-path Qwen/Qwen3-VL-4B-Instruct --port 8890 --host 0.0.0.0`, then only the exception line "
                   "in the text",
             resolution="The installed SGLang fell back to its Transformers backend for Qwen3-VL: a release that supports Qwen3-VL natively.",
             paste=(partial(paste.prose, before="python -m sglang.launch_server --model-path Qwen/Qwen3-VL-4B-Instruct --port 8890 --host 0.0.0.0\n\n"
                            "i use above command to deploy Qwen3-VL-4B-Instruct with sglang, then get below error"),)),
    # hardware -----------------------------------------------------------------------------------------------------------------------
    WildCase(thread="https://github.com/sgl-project/sglang/issues/24302", kind="no-kernel-image", style="cloud-reversed",
             parts=(GEMMA_NORM_24302,), engine_version="0.5.10",
             expect=Expect("gpu-arch-unsupported", "RuntimeError", GEMMA_NORM),
             facts="RTX 2080 (sm75), float16 chosen by SGLang; the crash during CUDA graph capture with sgl-kernel's GemmaRMSNorm message; the "
                   "frames ours; paste style ours (a cloud log viewer, newest first)",
             resolution="sgl-kernel's gemma_rmsnorm is built for sm80+ only: an sm80+ GPU (or a build for sm75).",
             paste=(paste.cloud_log_viewer, paste.reverse_lines)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/831", kind="no-kernel-image", style="check-env",
             parts=(Text(f"RuntimeError: {RMSNORM_831}\n", primary=True),),
             engine_version="0.2.12",
             expect=Expect("gpu-arch-unsupported", "RuntimeError", RMSNORM_831),
             facts="a V100 with flashinfer disabled; the exception line, then SGLang's check_env listing (sglang 0.2.12, flashinfer 0.1.4, "
                   "vllm 0.5.4)",
             resolution="flashinfer's RMSNorm kernel is not built for sm70: SGLang needs an sm75+/sm80+ GPU there.",
             paste=(lambda text: f"```\n{text}```\n\nEnvironment:\n```\n{CHECK_ENV_831}```\n",)),
    WildCase(thread="https://github.com/MiniMax-AI/MiniMax-M2.5/issues/21", kind="fp8-on-ampere", style="repr-in-prose",
             parts=(Text(f'ValueError("{FP8E4NV}")', primary=True),),
             engine_version="0.5.9",
             expect=Expect("gpu-arch-unsupported"),
             facts="an A100 (sm80) running MiniMax-M2.5 (FP8 weights) with SGLang; the error quoted as `ValueError(\"...\")` in a sentence and the "
                   "launch command in a shell block",
             resolution="Triton's fp8e4nv needs sm89+: an FP8-capable GPU or a BF16 checkpoint.",
             paste=(lambda text: f"My gpu is an A100, and it prompts an incompatibility error during runtime: {text}\n\nThe cmd is:\n```shell\n{MINIMAX_COMMAND}\n```\n",)),
    WildCase(thread="https://github.com/xorbitsai/inference/issues/3486", kind="vllm-bf16-unsupported-gpu", style="xinference-inline",
             parts=(Text(f"ValueError: [address=0.0.0.0:34479, pid=610] {BF16_T4}\n", primary=True),),
             engine_version="0.8.5", engine=VLLM,
             expect=Expect("gpu-arch-unsupported", "ValueError", BF16_T4, shown_prefix="[address=0.0.0.0:34479, pid=610] ", fix=(("set --dtype",),)),
             facts="Xinference loading a model with its vLLM backend on a Tesla T4; the ValueError with xoscar's address prefix, quoted in a "
                   "comment's prose",
             resolution="A T4 has no bf16: load with dtype float16 (half).",
             paste=(partial(paste.prose, before="This time the GPU was rejected again:", after="All AWQ models load fine though."),)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/1157", kind="vllm-bf16-unsupported-gpu", style="exception-only",
             parts=(BF16_RUN,), engine_version="0.1.7", engine=VLLM,
             expect=Expect("gpu-arch-unsupported", "ValueError", BF16_1157, fix=(("set --dtype",),)),
             facts="Baichuan2-13B-Chat on a Tesla T4 with vLLM 0.1.x; only the exception line (the title); the frames ours",
             resolution="Use dtype half (float16) on a T4.",
             paste=(partial(paste.exception_only, marker="ValueError"),)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/19185", kind="vllm-no-kernel-image", style="cut-at-start",
             parts=(NO_KERNEL_19185,), engine_version="0.9.0", engine=VLLM, install=Install("/usr/local/lib/python3.12/dist-packages"),
             expect=Expect("gpu-arch-unsupported", "RuntimeError", NO_KERNEL.rstrip("\n")),
             facts="a V100 with vLLM 0.9: model_runner.py:1174 load_model -> model_loader/__init__.py:59 -> base_loader.py:38 -> utils.py:62 -> "
                   "qwen3.py:271 -> compilation/decorators.py:152 and the CUDA error; the innermost frame ours; the paste starts at load_model",
             resolution="The wheel's kernels are not built for sm70 at that release: a GPU of sm75+ or an older release that still built sm70.",
             paste=(partial(paste.cut_at_start, marker="load_model"), paste.fenced)),
    # network ------------------------------------------------------------------------------------------------------------------------
    WildCase(thread="https://github.com/sgl-project/sglang/issues/2468", kind="warmup-proxy", style="fenced",
             parts=(Run(WARMUP_RECORDS), Text(UVICORN_2468), WARMUP_2468, Text("\nKilled\n")),
             engine_version="0.4.0", install=Install("/home/sglang/python"),
             expect=Expect("network", "AssertionError", "res=<Response [502]>, res.text=''"),
             facts="`python -m sglang.launch_server --model-path mistralai/Mistral-7B-Instruct-v0.1 --port 30000 --host 0.0.0.0` from a source "
                   "checkout; the server starts, then 'Initialization failed. warmup error:' with server.py:621 _wait_and_warmup's assert and a "
                   "502 with an empty body, then `Killed`",
             resolution="An HTTP proxy in the environment answered the warm-up request: add the host to NO_PROXY (or unset the proxy).",
             paste=(partial(paste.shell_prompt, prompt="$ ", command="python -m sglang.launch_server --model-path mistralai/Mistral-7B-Instruct-v0.1 "
                            "--port 30000 --host 0.0.0.0"), paste.fenced)),
    # pip and uv ---------------------------------------------------------------------------------------------------------------------
    WildCase(thread="https://github.com/PRIME-RL/SimpleVLA-RL/issues/53", kind="pip-resolver-conflict", style="pip-output",
             parts=(Text(PIP_CONFLICTS_53, primary=True),), engine_version="0.6.3", engine=VLLM,
             expect=Expect("dependency-version"),
             facts="pip's dependency-resolver notice after installing a VLA project's requirements: vllm 0.6.3 requires torch==2.4.0, "
                   "torchvision==0.19, transformers>=4.45.0 against torch 2.2.0",
             resolution="Install the torch vLLM 0.6.3 pins (2.4.0) and its torchvision.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/11283", kind="pip-resolver-conflict", style="uv-output",
             parts=(Text(UV_11283, primary=True),), engine_version="0.6.5", engine=VLLM,
             expect=Expect("dependency-version"),
             facts="`uv pip install vllm==0.6.5 vllm-flash-attn`: no solution, vllm 0.6.5 depends on torch==2.5.1, vllm-flash-attn 2.6.x on torch==2.4.0",
             resolution="vllm-flash-attn is built into vLLM since #8245: do not install it separately.",
             paste=(paste.fenced,)),
    # hangs ---------------------------------------------------------------------------------------------------------------------------
    WildCase(thread="https://github.com/sgl-project/sglang/issues/17941", kind="scheduler-watchdog-timeout", style="pyspy-tail",
             parts=(Text(WATCHDOG_17941, primary=True), Text(PYSPY_17941)), engine_version="0.5.8",
             expect=Expect("hang-timeout", "Scheduler watchdog timeout", "self.watchdog_timeout=300, self.soft=False"),
             facts="DeepSeek-V3.2 with pipeline parallelism hanging; `Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)` on "
                   "PP1 TP1, then the py-spy dump of sglang::scheduler_PP2_TP1 waiting in gloo's recv; the frames above recv ours",
             resolution="Open: PP stages waiting on each other's gloo recv (a hang in that release).",
             paste=(paste.fenced,)),
)
