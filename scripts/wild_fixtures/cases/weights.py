"""Loading the weights: checkpoint tensors the model has no parameter for (a tied lm_head, quantization
scales), and the shell's `Killed` after the launcher killed its own tree.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from pattern_fixtures.engine import Frame
from pattern_fixtures.mirror import (
    MODEL_RUNNER,
    SCHEDULER,
    TP_WORKER,
    failing_at,
    frame_at,
    scheduler_entry,
    to_load_weights,
)

from .. import composed, paste
from ..blocks import crash, plain, records
from ..corpus import IMAGE, Expect, Install, Run, Text, WildCase

LOADER = "sglang/srt/model_loader/loader.py"
UPGRADE = ((),)


def key_error(path: str, key: str, line: int) -> Frame:
    """`path`'s load_weights looking up a checkpoint tensor it has no parameter for."""
    return failing_at(path, "load_weights", """
        for name, loaded_weight in weights:
            param = params_dict[name]
        """, line, env=(("weights", f"[({key!r}, None)]"), ("params_dict", "{'model.embed_tokens.weight': None}")), marker="param")


def weights_error(key: str) -> Expect:
    return Expect("weight-loading", "KeyError", repr(key), frame="load_weights")


# -- sglang PR#577: GPTQ/AWQ Gemma checkpoints carry an lm_head.weight Gemma ties (router era, Jul 2024) -----------------

ROUTER = "sglang/srt/managers/router"
GEMMA = plain((
    failing_at(f"{ROUTER}/manager.py", "start_router_process", """
        try:
            model_client = ModelRpcClient(server_args, port_args, model_overide_args)
        except Exception:
            pipe_writer.send(get_exception_traceback())
        """, 71, env=(("ModelRpcClient", "NEXT"), ("server_args", "None"), ("port_args", "None"), ("model_overide_args", "None"),
                      ("pipe_writer", "NS(send=lambda state: print(f'Initialization failed. router_init_state: {state}', flush=True) or print('Initialization failed. detoken_init_state: init ok', flush=True))")),
        marker="model_client"),
    frame_at(f"{ROUTER}/model_rpc.py", "__init__", "self.model_server = ModelRpcServer(0, server_args, port_args, model_overide_args)", 686),
    frame_at(f"{ROUTER}/model_rpc.py", "__init__", "self.model_runner = ModelRunner(model_config=self.model_config, mem_fraction_static=server_args.mem_fraction_static, tp_rank=tp_rank, tp_size=server_args.tp_size, nccl_port=port_args.nccl_port, server_args=server_args)", 76),
    frame_at(f"{ROUTER}/model_runner.py", "__init__", "self.load_model()", 285),
    frame_at(f"{ROUTER}/model_runner.py", "load_model", "model.load_weights(self.model_config.path, cache_dir=None, load_format=self.load_format, revision=None)", 326, env=(("model", "HOP:load_weights"),)),
    key_error("sglang/srt/models/gemma.py", "lm_head.weight", 327),
))
GEMMA_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/pull/577", kind="weight-key-mismatch", engine_version="0.1.18",
    install=Install("/root/.local/lib/python3.11/site-packages"), fixed_in="https://github.com/sgl-project/sglang/pull/577",
    resolution="Engine bug: Gemma ties its embeddings, so load_weights skips lm_head.weight since PR #577 (as vLLM #3553 did).",
)

# -- sglang PR#12031: DeepSeek-OCR through DeepseekVL2 (0.5.4.post1), quoted from a CI log ------------------------------

OCR = crash((*to_load_weights("0.5.9"), key_error("sglang/srt/models/deepseek_vl2.py", "lm_head.weight", 252)),
            before=("Load weight begin. avail mem=77.61 GB",), stamp="2025-11-06 02:09:58")
OCR_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/pull/12031", kind="weight-key-mismatch", engine_version="0.5.4.post1", install=IMAGE,
    fixed_in="0.5.4.post2", resolution="Maintainer: use 0.5.4.post2, which has this PR (no more hard-coded repo name comparison for DeepSeek-OCR).",
)

# -- sglang#5095: a ModelOpt FP8 Llama-3.1 checkpoint's input_scale (~0.4.5 docker) -----------------------------------------

ENTRYPOINT = "python3 -m sglang.launch_server --model-path nvidia/Llama-3.1-70B-Instruct-FP8 --tp 4 --host 0.0.0.0 --port 30000"
KILLED_LINE = composed.bash_killed("./entrypoint.sh", 47, 28, ENTRYPOINT)
# the lines of run_scheduler_process, Scheduler.__init__, ModelRunner.__init__, initialize, load_model and the loader
LOAD_LINES = {"0.4.3": (218, 166, 176, 361, 362), "0.4.5": (249, 174, 200, 414, 382)}


def load_path(era: str, run_line: int, model: str, key: str, line: int) -> tuple[Frame, ...]:
    """0.4.2-0.4.5: scheduler -> overlap worker -> ModelRunner.load_model -> get_model -> loader ->
    `model`'s load_weights meeting `key` (at `line`)."""
    scheduler, runner, initialize, load_model, loader = LOAD_LINES[era]
    return (
        scheduler_entry("scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)", run_line, (("Scheduler", "NEXT"),)),
        frame_at(SCHEDULER, "__init__", "self.tp_worker = TpWorkerClass(server_args=server_args, gpu_id=gpu_id, tp_rank=tp_rank, dp_rank=dp_rank, nccl_port=port_args.nccl_port)", scheduler),
        frame_at("sglang/srt/managers/tp_worker_overlap_thread.py", "__init__", "self.worker = TpModelWorker(server_args, gpu_id, tp_rank, dp_rank, nccl_port)", 63),
        frame_at(TP_WORKER, "__init__", "self.model_runner = ModelRunner(model_config=self.model_config, mem_fraction_static=server_args.mem_fraction_static, gpu_id=gpu_id, tp_rank=tp_rank, tp_size=server_args.tp_size, nccl_port=nccl_port, server_args=server_args)", 74),
        frame_at(MODEL_RUNNER, "__init__", "self.initialize(min_per_gpu_memory)", runner),
        frame_at(MODEL_RUNNER, "initialize", "self.load_model()", initialize),
        frame_at(MODEL_RUNNER, "load_model", "self.model = get_model(model_config=self.model_config, load_config=self.load_config, device_config=DeviceConfig(self.device))", load_model),
        frame_at("sglang/srt/model_loader/__init__.py", "get_model", "return loader.load_model(model_config=model_config, device_config=device_config)", 22),
        frame_at(LOADER, "load_model", "model.load_weights(self._get_all_weights(model_config, model))", loader, env=(("model", "HOP:load_weights"),)),
        key_error(model, key, line),
    )


MODELOPT = crash(load_path("0.4.5", 1999, "sglang/srt/models/llama.py", "model.layers.78.mlp.gate_up_proj.input_scale", 486),
                 before=("Load weight begin. avail mem=78.51 GB",), raw_after=(KILLED_LINE.rstrip("\n"),), stamp="2025-04-04 06:24:48")
MODELOPT_SERVER_ARGS = ("server_args=ServerArgs(model_path='nvidia/Llama-3.1-8B-Instruct-FP8', tokenizer_path='nvidia/Llama-3.1-8B-Instruct-FP8', "
                        "quantization=None, tp_size=1, chunked_prefill_size=2048, mem_fraction_static=0.88, port=30000)")
MODELOPT_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/5095", kind="weight-key-mismatch", engine_version="0.4.5", install=IMAGE,
    resolution="None recorded (high priority, closed). The ModelOpt FP8 checkpoint's input_scale tensors have no parameter in Llama's params_dict.",
)


def modelopt_8b() -> tuple[Run, Run]:
    """The commenter's 8B launch: the server_args record, then the same failure on an 8B checkpoint."""
    case = replace(MODELOPT, frames=(*MODELOPT.frames[:-1], key_error("sglang/srt/models/llama.py", "model.layers.31.mlp.gate_up_proj.input_scale", 486)),
                   before=("Load weight begin. avail mem=22.91 GB",), raw_after=(), stamp="2025-04-15 05:30:14")
    return Run(records(MODELOPT_SERVER_ARGS, ranks="", stamp="2025-04-15 05:30:12")), Run(case, primary=True)


# -- sglang#4598 / #3604 / #2935: more quantized checkpoints the model cannot place --------------------------------------------


CASES = (
    WildCase(**GEMMA_THREAD, style="quote", parts=(Run(GEMMA, primary=True),), expect=replace(weights_error("lm_head.weight"), fix=UPGRADE),
             facts="frames and line numbers (router/manager.py 71 -> model_rpc.py 686/76 -> model_runner.py 285/326 -> gemma.py 327), 'Initialization failed. router_init_state:' and the detokenizer's 'init ok', /root/.local paths, the quoted paste",
             paste=(paste.quote,)),
    WildCase(**GEMMA_THREAD, style="hard-wrap-80", parts=(Run(GEMMA, primary=True),), expect=replace(weights_error("lm_head.weight"), fix=UPGRADE),
             facts="as above; paste style ours (an 80-column terminal)", paste=(partial(paste.hard_wrap, width=80), paste.fenced)),

    WildCase(**OCR_THREAD, style="quoted-ci-double-spaced", parts=(Run(OCR, primary=True),), expect=replace(weights_error("lm_head.weight"), fix=UPGRADE),
             facts="deepseek_vl2.py line 252 `param = params_dict[name]` with its ~~~^^^ marker, the CI viewer's ISO stamp before SGLang's own, the quote with a blank quoted line between lines",
             paste=(paste.ci_timestamps, paste.double_space, paste.quote)),
    WildCase(**OCR_THREAD, style="ci-timestamps-crlf", parts=(Run(OCR, primary=True),), expect=replace(weights_error("lm_head.weight"), fix=UPGRADE),
             facts="as above, without the quote; the CRLF line ends are ours", paste=(paste.ci_timestamps, paste.crlf)),

    WildCase(**MODELOPT_THREAD, style="cloud-viewer-reversed", parts=(Run(MODELOPT, primary=True),),
             expect=weights_error("model.layers.78.mlp.gate_up_proj.input_scale"),
             facts="the KeyError on an input_scale, the entrypoint.sh `Killed` and SIGQUIT lines, the log copied newest first from a cloud log viewer with its severity prefix and indentation stripped; frames ours (~0.4.5 load path)",
             paste=(paste.strip_indent, paste.cloud_log_viewer, paste.reverse_lines)),
    WildCase(**MODELOPT_THREAD, style="docker-desktop-quote", parts=modelopt_8b(), expect=weights_error("model.layers.31.mlp.gate_up_proj.input_scale"),
             facts="a commenter's 8B launch: server_args shows quantization=None, tp_size=1, chunked_prefill_size=2048; Docker Desktop's local time before SGLang's UTC stamp; quoted",
             paste=(paste.docker_desktop, paste.quote)),
    WildCase(**MODELOPT_THREAD, style="last-lines-killed", parts=(Run(replace(MODELOPT, raw_after=())), Text(KILLED_LINE, primary=True)),
             expect=Expect("process-killed", "Killed", KILLED_LINE.rstrip("\n")),
             facts="the tail only: SGLang's SIGQUIT notice and bash's Killed line for entrypoint.sh line 47 (the launcher kills its own tree); the KeyError above is not in this paste",
             paste=(partial(paste.last_lines, count=2), paste.fenced)),

    WildCase(thread="https://github.com/sgl-project/sglang/issues/4598", kind="weight-key-mismatch", style="journald",
             parts=(Run(crash(load_path("0.4.3", 1714, "sglang/srt/models/qwen2_moe.py", "model.layers.13.mlp.experts.w2_weight_scale", 412),
                              before=("Load weight begin. avail mem=74.92 GB",), stamp="2025-03-19 11:02:31"), primary=True),),
             expect=weights_error("model.layers.13.mlp.experts.w2_weight_scale"), engine_version="0.4.3",
             facts="the KeyError and the chain scheduler.py 1714 -> tp_worker_overlap_thread.py 63 -> tp_worker.py 74 -> model_runner.py 166/176/361 -> model_loader/__init__.py 22 -> loader.py; the MoE model file and the journald prefix are ours",
             resolution="Not recorded in the notes.",
             paste=(partial(paste.elide, start="tp_worker_overlap_thread.py", end="model_loader/__init__.py", mark="…"),
                    partial(paste.journald, unit="sglang", pid=3071, start="2025-03-19 11:02:30"), paste.fenced)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/3604", kind="weight-key-mismatch", style="torchrun",
             parts=(Run(crash(load_path("0.4.3", 1787, "sglang/srt/models/torch_native_llama.py", "model.layers.18.mlp.down_proj.weight_scale", 468),
                              stamp="2025-02-16 07:45:10"), primary=True),),
             expect=weights_error("model.layers.18.mlp.down_proj.weight_scale"), engine_version="0.4.3",
             facts="the KeyError on down_proj.weight_scale (llm-compressor FP8 dynamic) through TorchNativeLlamaForCausalLM, torch's '[rank0]: ' prefixes",
             resolution="Not recorded in the notes.", paste=(paste.torchrun, paste.fenced)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/2935", kind="weight-key-mismatch", style="inline-in-sentence",
             parts=(Run(crash(load_path("0.4.3", 1610, "sglang/srt/models/llama.py", "lm_head.weight", 460), stamp="2025-01-17 09:31:02"), primary=True),),
             expect=Expect("weight-loading", "KeyError", "'lm_head.weight'", fix=UPGRADE), engine_version="0.4.1",
             facts="KeyError 'lm_head.weight' for a quantized Llama 3.2 1B/3B checkpoint; the reporter's workaround",
             resolution="Workaround confirmed by the reporter: set \"tie_word_embeddings\": false in config.json; the engine fix followed in Feb 2025.",
             paste=(partial(paste.exception_only, marker="KeyError"), partial(paste.inline_in_sentence, lead="Loading the AWQ Llama-3.2-3B fails with ", tail="."))),
)
