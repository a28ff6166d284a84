"""SGLang's steady-state and startup wordings, per version, transcribed from its source.

Every renderer cites where SGLang builds the line ("SGLang vX path:function", paths under
`site-packages/sglang/`); the research notes with the surrounding facts are /work/notes/issue15/wordings.md.
The numbers are ours (run.py simulates them); only the wording is SGLang's.
"""

from __future__ import annotations

from dataclasses import dataclass

VERSIONS = ("0.4.10.post2", "0.5.9", "0.5.23")


def is_04(version: str) -> bool:
    return version.startswith("0.4.")


@dataclass(frozen=True, slots=True)
class DecodeStats:
    running: int
    tokens: int
    usage: float
    accept_length: float | None  # None: no speculative decoding, the items are not printed
    accept_rate: float | None
    cuda_graph: bool
    throughput: float
    queue: int


@dataclass(frozen=True, slots=True)
class PrefillStats:
    new_seqs: int
    new_tokens: int
    cached_tokens: int
    usage: float
    running: int
    queue: int
    throughput: float
    cuda_graph: bool


# --- the record header ----------------------------------------------------------------------------------------


def rank_tags(tp_size: int, tp_rank: int = 0) -> str:
    """The scheduler's logger prefix for a TP-only launch: ` TP{rank}` when tp_size > 1, else nothing.

    SGLang v0.4.10.post2 srt/managers/scheduler.py:run_scheduler_process (DP, TP, EP, PP order);
    SGLang v0.5.9 and v0.5.23 srt/managers/scheduler.py:run_scheduler_process (DP, PP, ATTN_CP, MOE_DP, TP, EP)."""
    return f" TP{tp_rank}" if tp_size > 1 else ""


def header(clock: str, tags: str) -> str:
    """`[%(asctime)s{prefix}] ` with datefmt `%Y-%m-%d %H:%M:%S` (no milliseconds unless SGLANG_LOG_MS).

    SGLang v0.4.10.post2 srt/utils.py:configure_logger; v0.5.9 and v0.5.23 srt/utils/common.py:configure_logger."""
    return f"[{clock}{tags}] "


# --- batch lines ----------------------------------------------------------------------------------------------


def decode_line(version: str, stats: DecodeStats) -> str:
    """SGLang v0.4.10.post2 srt/managers/scheduler_metrics_mixin.py:SchedulerMetricsMixin.log_decode_stats
    (`Decode batch.`, no accept rate, a trailing `, `);
    v0.5.9 srt/managers/scheduler_metrics_mixin.py:SchedulerMetricsMixin.log_decode_stats and
    v0.5.23 srt/managers/scheduler_components/metrics_reporter.py:SchedulerMetricsReporter.report_decode_stats
    (`Decode batch,`, `accept len` then `accept rate`; usage items from
    v0.5.23 srt/managers/scheduler_components/pool_stats_observer.py:PoolStats.get_decode_usage_msg_parts)."""
    old = is_04(version)
    text = f"Decode batch{'.' if old else ','} #running-req: {stats.running}, "
    text += f"#token: {stats.tokens}, token usage: {stats.usage:.2f}, "
    if stats.accept_length is not None:
        text += f"accept len: {stats.accept_length:.2f}, "
        if not old and stats.accept_rate is not None:
            text += f"accept rate: {stats.accept_rate:.2f}, "
    text += f"cuda graph: {stats.cuda_graph}, gen throughput (token/s): {stats.throughput:.2f}, "
    text += f"#queue-req: {stats.queue}"
    return text + ", " if old else text


def prefill_line(version: str, stats: PrefillStats) -> str:
    """SGLang v0.4.10.post2 srt/managers/scheduler_metrics_mixin.py:SchedulerMetricsMixin.log_prefill_stats
    (no throughput, no cuda graph, a trailing `, `); v0.5.9 the same file's log_prefill_stats
    (`input throughput` then `cuda graph`); v0.5.23
    srt/managers/scheduler_components/metrics_reporter.py:SchedulerMetricsReporter.report_prefill_stats
    (`#pending-token`, then `cuda graph` before `input throughput`)."""
    old = is_04(version)
    text = f"Prefill batch{'.' if old else ','} #new-seq: {stats.new_seqs}, #new-token: {stats.new_tokens}, "
    text += f"#cached-token: {stats.cached_tokens}, token usage: {stats.usage:.2f}, "
    text += f"#running-req: {stats.running}, #queue-req: {stats.queue}, "
    if old:
        return text
    if version == "0.5.9":
        return text + f"input throughput (token/s): {stats.throughput:.2f}, cuda graph: {stats.cuda_graph}"
    return text + f"#pending-token: 0, cuda graph: {stats.cuda_graph}, input throughput (token/s): {stats.throughput:.2f}"


def accept_rate(version: str, accept_length: float, num_draft_tokens: int) -> float | None:
    """What SGLang prints as `accept rate` for a mean accept length (None: the version prints none).

    SGLang v0.5.9 scheduler_metrics_mixin.py:log_decode_stats: accepted tokens / (steps × num_draft_tokens);
    v0.5.23 metrics_reporter.py:report_decode_stats: correct drafts / (steps × (num_draft_tokens − 1)), where
    correct drafts per step = accept length − 1 (the verified bonus token is not a draft)."""
    if is_04(version):
        return None
    if version == "0.5.9":
        return accept_length / num_draft_tokens
    return max(accept_length - 1.0, 0.0) / (num_draft_tokens - 1)


# --- retraction -------------------------------------------------------------------------------------------------


def retract_line(version: str, retracted: int, gained: int, old_ratio: float, new_ratio: float) -> str:
    """SGLang v0.4.10.post2 srt/managers/scheduler.py:Scheduler.update_running_batch (logger.info, no tokens
    gained); v0.5.9 and v0.5.23 srt/managers/scheduler.py:Scheduler.update_running_batch (logger.warning)."""
    text = f"KV cache pool is full. Retract requests. #retracted_reqs: {retracted}, "
    if not is_04(version):
        text += f"#new_tokens_gained: {gained}, "
    return text + f"#new_token_ratio: {old_ratio:.4f} -> {new_ratio:.4f}"


# --- warnings ---------------------------------------------------------------------------------------------------

# SGLang v0.4.10.post2 srt/server_args.py:ServerArgs.__post_init__; v0.5.9 srt/server_args.py:
# ServerArgs._handle_attention_backend_compatibility; v0.5.23 srt/arg_groups/attention_hook.py:
# handle_attention_backend_compatibility (the same words in all three).
CUDA_GRAPH_TORCH_NATIVE = "Cuda graph is disabled because of using torch native attention backend"

# SGLang v0.4.10.post2 and v0.5.9 srt/configs/model_config.py:_get_and_verify_dtype (logger.warning
# "Casting %s to %s."); v0.5.23 logs it at debug level, so it is not in a default log.
CASTING_BF16_TO_FP16 = "Casting torch.bfloat16 to torch.float16."


def upcasting(config_dtype: str, dtype: str) -> str:
    """SGLang v0.4.10.post2 and v0.5.9 srt/configs/model_config.py:_get_and_verify_dtype (logger.info, an
    upcast to float32 is lossless; debug level in v0.5.23)."""
    return f"Upcasting torch.{config_dtype} to torch.{dtype}."


def weights_not_used(path: str, model_class: str, names: list[str]) -> str:
    """transformers 4.57.1 modeling_utils.py:PreTrainedModel._load_pretrained_model, the first line of its
    unexpected-keys message (checkpoint tensors the class has no place for: often expected, e.g. a pooler)."""
    return (f"Some weights of the model checkpoint at {path} were not used when initializing {model_class}: "
            f"{names!r}")


def fp8_kv_without_scales(version: str) -> str:
    """SGLang v0.4.10.post2 and v0.5.9 srt/model_executor/model_runner.py:ModelRunner.load_model; v0.5.23
    srt/model_executor/model_runner_components/load_model_utils.py:load_kv_cache_scales (last sentence dropped)."""
    text = "Using FP8 KV cache but no scaling factors provided. Defaulting to scaling factors of 1.0."
    return text if version == "0.5.23" else text + " This may lead to less accurate results!"


def parameter_not_found(name: str) -> str:
    """SGLang v0.4.10.post2, v0.5.9 and v0.5.23 srt/models/llama.py:LlamaForCausalLM.load_weights and
    v0.4.10.post2, v0.5.9 srt/models/qwen2.py:Qwen2ForCausalLM.load_weights (logger.warning, one per name)."""
    return f"Parameter {name} not found in params_dict"


def weights_not_initialized(names: list[str]) -> str:
    """SGLang v0.4.10.post2, v0.5.9 and v0.5.23 srt/models/mllama4.py:Llama4ForConditionalGeneration.load_weights
    (`Some weights are not initialized from checkpoints {unloaded_params}`, a set, no colon)."""
    return "Some weights are not initialized from checkpoints {" + ", ".join(repr(n) for n in names) + "}"


# --- startup ----------------------------------------------------------------------------------------------------


def version_lines(version: str) -> list[str]:
    """What a launch script prints about the engine's version (SGLang itself prints none at server start).

    SGLang v0.5.9 and v0.5.23 sglang/cli/main.py:version (`sglang version: X`, `git revision: ...`, N/A outside
    a git checkout: sglang/cli/utils.py:get_git_commit_hash); 0.4.10.post2 has no CLI: `pip freeze`."""
    if is_04(version):
        return ["+ pip freeze | grep '^sglang=='", f"sglang=={version}"]
    return ["+ sglang version", f"sglang version: {version}", "git revision: N/A"]


def load_weight_begin(available_gb: float) -> str:
    """SGLang v0.4.10.post2, v0.5.9, v0.5.23 srt/model_executor/model_runner.py:ModelRunner.load_model."""
    return f"Load weight begin. avail mem={available_gb:.2f} GB"


def load_weight_end(version: str, model_class: str, dtype: str, elapsed: float, available_gb: float,
                    used_gb: float) -> str:
    """`type=` is the class the checkpoint's config.json `architectures` picked (the draft's too).

    SGLang v0.4.10.post2 ModelRunner.load_model (no elapsed); v0.5.9 (elapsed, dtype); v0.5.23
    srt/model_executor/model_runner.py:ModelRunner.load_model (elapsed, no dtype)."""
    text = "Load weight end. "
    if not is_04(version):
        text += f"elapsed={elapsed:.2f} s, "
    text += f"type={model_class}, "
    if version != "0.5.23":
        text += f"dtype={dtype}, "
    return text + f"avail mem={available_gb:.2f} GB, mem usage={used_gb:.2f} GB."


def kv_cache_allocated(tokens: int, k_gb: float) -> str:
    """SGLang v0.4.10.post2 srt/mem_cache/memory_pool.py:MHATokenToKVPool.__init__; v0.5.9 the same file's
    KVCache._finalize_allocation_log."""
    return f"KV Cache is allocated. #tokens: {tokens}, K size: {k_gb:.2f} GB, V size: {k_gb:.2f} GB"


def memory_pool_end(available_gb: float) -> str:
    """SGLang v0.4.10.post2 srt/model_executor/model_runner.py:ModelRunner.init_memory_pool; v0.5.9
    model_runner_kv_cache_mixin.py; v0.5.23 srt/mem_cache/kv_cache_configurator.py."""
    return f"Memory pool end. avail mem={available_gb:.2f} GB"


INIT_DISTRIBUTED = "Init torch distributed begin."  # SGLang v0.5.9 model_runner.py:ModelRunner.init_torch_distributed
READY = "The server is fired up and ready to roll!"  # SGLang v0.5.9 srt/entrypoints/http_server.py:_wait_and_warmup


def update_weights_begin(available_gb: float) -> str:
    """SGLang v0.5.9 srt/model_executor/model_runner.py:ModelRunner.update_weights_from_disk; v0.5.23
    srt/model_executor/model_runner_components/weight_updater.py."""
    return f"Update engine weights online from disk begin. avail mem={available_gb:.2f} GB"


UPDATE_WEIGHTS_END = "Update weights end."  # same functions as update_weights_begin


def uvicorn_running(port: int) -> str:
    return f"INFO:     Uvicorn running on http://0.0.0.0:{port} (Press CTRL+C to quit)"


def access_line(client: str, port: int, path: str) -> str:
    return f'INFO:     {client}:{port} - "POST {path} HTTP/1.1" 200 OK'
