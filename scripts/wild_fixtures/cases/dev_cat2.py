"""The second dev split of issue 28's category work (branch h-cat): failures whose right category is the root
cause a symptom hides, or a class the honest category used to leave unnamed.  A crash right after the C++ abort
of the NCCL watchdog, the parent's word that a scheduler died (`Rank 0 scheduler is dead`, `Exit code: -9`, the
pipe's EOFError), a GPU's uncorrectable ECC error, a field the model's config object lacks (a model the release
does not read, not an engine bug), and the engine's own config object lacking one (an engine bug).

Facts were mined from threads with even numbers that no other file of the project cites (the message wording,
the frames and records they showed, the release, the resolution); what a thread did not show is ours, and each
`facts` says which.
"""

from __future__ import annotations

from pattern_fixtures.mirror import SCHEDULER, frame_at, to_load_weights

from .. import composed, paste
from ..blocks import C_RAISE, crash, launch, plain
from ..corpus import DOCKER, IMAGE, Expect, Run, Text, WildCase
from ..native import ABRT, TQDM_MONITOR, spawned
from .dev_detect import top

CONNECTION = "stdlib:multiprocessing/connection.py"

# -- gpustack/gpustack#3848: `sglang serve` of FLUX.1-dev; the scheduler is killed (-9) while the weights load ----------

FLUX_RECORDS = Text(
    "[12-11 17:47:40] Loading model from 3 safetensors files: ['/models/FLUX.1-dev/transformer/diffusion_pytorch_model-00001-of-00003.safetensors', "
    "'/models/FLUX.1-dev/transformer/diffusion_pytorch_model-00002-of-00003.safetensors', "
    "'/models/FLUX.1-dev/transformer/diffusion_pytorch_model-00003-of-00003.safetensors']\n"
    "[12-11 17:47:40] Loading FluxTransformer2DModel, default_dtype: torch.bfloat16\n"
    "[12-11 17:47:40] Using FlashAttention (FA3 for hopper, FA4 for blackwell) backend\n"
    "[12-11 17:52:52] Rank 0 scheduler is dead. Please check if there are relevant logs.\n"
    "[12-11 17:52:54] Exit code: -9\n")
# The launcher's wait on its scheduler's pipe: the child was killed, so the pipe's read ends in the stdlib's bare
# EOFError (multiprocessing/connection.py, Python 3.11's line numbers), re-raised after the two records above.
SCHEDULER_PIPE = Run(plain((
    top("sglang/cli/main.py", "main", "args.func(args, extra_argv)", 26, env=(("args", "HOP:func"), ("extra_argv", "[]"))),
    frame_at("sglang/cli/serve.py", "serve", "execute_serve_cmd(parsed_args, remaining_argv)", 63,
             env=(("execute_serve_cmd", "NEXT"), ("parsed_args", "None"), ("remaining_argv", "[]"))),
    frame_at("sglang/multimodal_gen/runtime/entrypoints/cli/serve.py", "execute_serve_cmd", "launch_server(server_args)", 34,
             env=(("launch_server", "NEXT"), ("server_args", "None"))),
    frame_at("sglang/multimodal_gen/runtime/launch_server.py", "launch_server", "data = reader.recv()", 118, env=(("reader", "HOP:recv"),)),
    frame_at(CONNECTION, "recv", "buf = self._recv_bytes()", 250, env=(("self", "HOP:_recv_bytes"),)),
    frame_at(CONNECTION, "_recv_bytes", "buf = self._recv(4)", 430, env=(("self", "HOP:_recv"),)),
    frame_at(CONNECTION, "_recv", "raise EOFError", 399),
)), primary=True)

# -- sgl-project/sglang#10216: DeepSeek-V3 on two 8xH100 nodes; an all-reduce times out, the watchdog aborts ------------

P2P_CHANNELS = Text(composed.nccl_info("distributed-sglang-0", 205, 10694, 0, tuple(
    f"Channel {channel:02d}/0 : 0[0] -> 7[7] via P2P/IPC" for channel in range(2, 8))))
ALLREDUCE_TIMEOUT = Text(composed.nccl_timeout_abort(0, "909 08:45:30.115210759", "PG ID 0 PG GUID 0", 40231, "ALLREDUCE",
                                                     (17153024, 17153024), 600040), primary=True)
ALLREDUCE_MESSAGE = composed.watchdog_terminated(
    "PG ID 0 PG GUID 0", 0, composed.collective_timeout(0, 40231, "ALLREDUCE", (17153024, 17153024), 600040))
# faulthandler's dump of the same scheduler after the abort: its main thread waiting in the tensor-parallel broadcast
ABORT_IN_BROADCAST = Run(spawned(2560, "scheduler.event_loop_overlap()", (("scheduler", "HOP:event_loop_overlap"),), (
    frame_at(SCHEDULER, "event_loop_overlap", "recv_reqs = self.recv_requests()", 790),
    frame_at(SCHEDULER, "recv_requests", "recv_reqs = broadcast_pyobj(recv_reqs, self.tp_group.rank, self.tp_cpu_group)", 1104,
             env=(("broadcast_pyobj", "NEXT"), ("recv_reqs", "[]"), ("self", "NS(tp_group=NS(rank=0), tp_cpu_group=None)"))),
    frame_at("sglang/srt/utils.py", "broadcast_pyobj", "dist.broadcast(tensor_size, src, dist_group)", 1021,
             env=(("dist", f"NS(broadcast={ABRT})"), ("tensor_size", "0"), ("src", "0"), ("dist_group", "None"))),
), threads=(TQDM_MONITOR,)))

# -- sgl-project/sglang#3204: a GPU's uncorrectable ECC error while DeepSeek's weights load on 8 A100s -------------------

MOE_CONFIG = ("Using default MoE config. Performance might be sub-optimal! Config file not found at "
              "/usr/local/lib/python3.11/dist-packages/sglang/srt/layers/moe/fused_moe_triton/configs/E=160,N=192,device_name=NVIDIA_A100-SXM4-80GB.json")
ECC = ("RuntimeError", composed.cuda_error("uncorrectable ECC error encountered"))
ECC_LOAD = Run(crash((
    *to_load_weights("0.4.10.post2"),
    frame_at("sglang/srt/models/deepseek_v2.py", "load_weights", "weight_loader(param, loaded_weight)", 1190,
             env=(("weight_loader", C_RAISE), ("param", "None"), ("loaded_weight", "None"))),
), ranks="TP5", stamp="2025-01-29 08:52:51", before=(MOE_CONFIG,), torch_error=ECC), primary=True)

# -- model configs: a field the model's config lacks, and a field the engine's own config lacks -------------------------

# transformers' PretrainedConfig.__getattribute__ (configuration_utils.py) and the model's config class, padded so
# that its return lands on the line the thread showed
def config_utils(line: int, config_class: str) -> tuple[tuple[str, str], ...]:
    text = "\n" * (line - 5) + f"""class PretrainedConfig:
    attribute_map = {{}}

    def __getattribute__(self, key):
        return super().__getattribute__(key)


class {config_class}(PretrainedConfig):
    pass
"""
    return (("transformers/__init__.py", ""), ("transformers/configuration_utils.py", text))


def hf_config(config_class: str) -> str:
    return f"__import__('transformers.configuration_utils', fromlist=['x']).{config_class}()"


# vllm-project/vllm#2284: ChatGLM3-6B through the LLM class of vLLM 0.2.6; the parallel check reads num_hidden_layers
CHATGLM_2284 = Run(plain((
    top("vllm/entrypoints/llm.py", "__init__", "self.llm_engine = LLMEngine.from_engine_args(engine_args)", 66,
        env=(("LLMEngine", "HOP:from_engine_args"), ("engine_args", "None"), ("self", "NS()"))),
    frame_at("vllm/engine/llm_engine.py", "from_engine_args", "engine = cls(*engine_configs, placement_group)", 157,
             env=(("cls", "NEXT"), ("engine_configs", "()"), ("placement_group", "None"))),
    frame_at("vllm/engine/llm_engine.py", "__init__", "self._verify_args()", 79, env=(("self", "HOP:_verify_args"),)),
    frame_at("vllm/engine/llm_engine.py", "_verify_args", "self.model_config.verify_with_parallel_config(self.parallel_config)", 114,
             env=(("self", "NS(model_config=NS(verify_with_parallel_config=_target('f4')), parallel_config=None)"),)),  # f4: the next frame
    frame_at("vllm/config.py", "verify_with_parallel_config", "total_num_hidden_layers = self.hf_config.num_hidden_layers", 81,
             env=(("self", f"NS(hf_config={hf_config('ChatGLMConfig')})"), ("parallel_config", "None"))),
), extra_modules=config_utils(265, "ChatGLMConfig")), primary=True)

# sgl-project/sglang#4862: Qwen2.5-Omni-7B on SGLang 0.4.4.post2; ModelConfig reads hidden_size off the Omni config
OMNI_4862 = Run(launch((
    frame_at("sglang/launch_server.py", "<module>", "launch_server(server_args)", 14, env=(("launch_server", "NEXT"), ("server_args", "None"))),
    frame_at("sglang/srt/entrypoints/http_server.py", "launch_server", "tokenizer_manager, scheduler_info = _launch_subprocesses(server_args=server_args)", 627,
             env=(("_launch_subprocesses", "NEXT"),)),
    frame_at("sglang/srt/entrypoints/engine.py", "_launch_subprocesses", "tokenizer_manager = TokenizerManager(server_args, port_args)", 505,
             env=(("TokenizerManager", "NEXT"), ("port_args", "None"))),
    frame_at("sglang/srt/managers/tokenizer_manager.py", "__init__", "self.model_config = ModelConfig(server_args.model_path, trust_remote_code=server_args.trust_remote_code)", 161,
             env=(("ModelConfig", "NEXT"), ("server_args", "NS(model_path='Qwen/Qwen2.5-Omni-7B', trust_remote_code=False)"))),
    frame_at("sglang/srt/configs/model_config.py", "__init__", "self.hf_text_config.hidden_size // self.hf_text_config.num_attention_heads", 115,
             env=(("self", f"NS(hf_text_config={hf_config('Qwen2_5OmniConfig')})"),)),
), extra_modules=config_utils(210, "Qwen2_5OmniConfig")), primary=True)

# sgl-project/sglang#15784: Kimi-Linear on SGLang (Dec 2025): the model code reads `scaling` off SGLang's own ModelConfig
KIMI_COMMAND = Text(
    "CUDA_VISIBLE_DEVICES=4,5,6,7 python3 -m sglang.launch_server --model moonshotai/Kimi-Linear-48B-A3B-Instruct --tp 4 --trust-remote-code "
    "--enable-metrics --log-requests --log-requests-level=1 --mem-fraction-static 0.9\n"
    "[2025-12-24 20:07:14] WARNING server_args.py:1269: Disabling Radix Cache for KimiLinearForCausalLM as it is not yet supported.\n"
    "[2025-12-24 20:07:14] WARNING server_args.py:1527: Attention backend not specified. Use flashinfer backend by default.\n")
KIMI_SCALING = Text("AttributeError: 'ModelConfig' object has no attribute 'scaling'\n", primary=True)

CASES = (
    WildCase(thread="https://github.com/gpustack/gpustack/issues/3848", kind="dev-cat-scheduler-dead", style="killed-while-loading",
             parts=(FLUX_RECORDS, SCHEDULER_PIPE), engine_version="0.5.6.post1", install=DOCKER,
             expect=Expect("process-killed", "EOFError", ""),
             facts="`sglang serve` of FLUX.1-dev: the three safetensors files, 'Loading FluxTransformer2DModel, default_dtype: torch.bfloat16', "
                   "the FlashAttention line, five minutes later 'Rank 0 scheduler is dead. Please check if there are relevant logs.' and "
                   "'Exit code: -9', then the EOFError through sglang/cli/main.py 26, cli/serve.py 63, multimodal_gen/runtime/entrypoints/cli/serve.py 34; "
                   "the launcher's frame after that (cut in what was read), the stdlib's frames and the model path ours",
             resolution="Not confirmed in what was read. Exit code -9 is a SIGKILL of the scheduler while the weights loaded: the host's or "
                        "the container's memory limit (the OOM killer).",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/10216", kind="dev-cat-abort-after-nccl", style="nccl-info-then-dump",
             parts=(P2P_CHANNELS, ALLREDUCE_TIMEOUT, ABORT_IN_BROADCAST), install=IMAGE,
             expect=Expect("nccl", "c10::DistBackendError", ALLREDUCE_MESSAGE),
             facts="DeepSeek-V3 on two 8xH100 nodes (pods distributed-sglang-0/1); NCCL INFO 'Channel NN/0 : 0[0] -> 7[7] via P2P/IPC' lines of "
                   "pid 205, then rank 0's 'Watchdog caught collective operation timeout: WorkNCCL(SeqNum=40231, OpType=ALLREDUCE, "
                   "NumelIn=17153024, NumelOut=17153024, Timeout(ms)=600000) ran for 600040 milliseconds'; the abort block's other lines "
                   "and faulthandler's dump of the scheduler after it ours (SGLang's schedulers enable faulthandler)",
             resolution="Not confirmed in what was read (closed). A collective across the two nodes never completed: a rank that "
                        "stalled or the network between the nodes, not a launch flag.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/3204", kind="dev-cat-ecc-error", style="while-loading",
             parts=(Text("Loading safetensors checkpoint shards:   4% Completed | 1/23 [00:07<02:39,  7.23s/it]\n"), ECC_LOAD),
             engine_version="0.4.2", install=DOCKER,
             expect=Expect("cuda-error", *ECC, frame="load_weights"),
             facts="DeepSeek (E=160 experts) on 8 A100-SXM4-80GB: the 'Using default MoE config ... E=160,N=192,device_name=NVIDIA_A100-SXM4-80GB.json' "
                   "records of the TP ranks, the checkpoint 1/23 loaded, then 'CUDA error: uncorrectable ECC error encountered'; the loader's "
                   "frames ours (0.4.10.post2's layout)",
             resolution="Not confirmed in what was read (closed). An uncorrectable ECC error is the GPU's memory failing (CUDA's "
                        "cudaErrorECCUncorrectable): reset or replace that GPU, and leave it out meanwhile.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/2284", kind="dev-cat-config-field", style="llm-class", engine="vllm",
             parts=(CHATGLM_2284,), engine_version="0.2.6", install=DOCKER,
             expect=Expect("unsupported-architecture", "AttributeError", "'ChatGLMConfig' object has no attribute 'num_hidden_layers'"),
             facts="ChatGLM3-6B through `LLM(model=model_path, trust_remote_code=True)` in vLLM 0.2.6: llm.py 66 -> llm_engine.py 157 "
                   "from_engine_args -> 79 __init__ -> 114 _verify_args -> config.py 81 verify_with_parallel_config reading "
                   "hf_config.num_hidden_layers -> transformers' configuration_utils.py 265; the user's script frame left out",
             resolution="The ChatGLM config lacks the field vLLM 0.2.6 reads (its config names the layer count otherwise): a model "
                        "config that release does not read; a release supporting ChatGLM3 is needed.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/4862", kind="dev-cat-config-field", style="fenced",
             parts=(OMNI_4862,), engine_version="0.4.4.post2", install=DOCKER,
             expect=Expect("unsupported-architecture", "AttributeError", "'Qwen2_5OmniConfig' object has no attribute 'hidden_size'"),
             facts="Qwen2.5-Omni-7B on SGLang 0.4.4.post2, other Qwen models working: AttributeError 'Qwen2_5OmniConfig' object has no "
                   "attribute 'hidden_size' (the config nests it per part); the frames ours (ModelConfig reading hidden_size, as in that release)",
             resolution="Qwen2.5-Omni was not supported by SGLang 0.4.4.post2 (its config is read only by a later release).",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/15784", kind="dev-cat-engine-config-field", style="command-then-line",
             parts=(KIMI_COMMAND, KIMI_SCALING), install=DOCKER,
             expect=Expect("engine-bug", "AttributeError", "'ModelConfig' object has no attribute 'scaling'"),
             facts="the launch of moonshotai/Kimi-Linear-48B-A3B-Instruct with --tp 4 --trust-remote-code and metrics and request logging, "
                   "the two server_args warnings (radix cache disabled for KimiLinearForCausalLM, flashinfer by default), and the "
                   "AttributeError on SGLang's own ModelConfig; no frames in the paste",
             resolution="Closed as inactive: Kimi-Linear's code in that release read a field SGLang's ModelConfig did not have (a bug of the release).",
             paste=(paste.fenced,)),
)
