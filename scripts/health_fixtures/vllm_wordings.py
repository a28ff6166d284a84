"""vLLM's steady-state and start-up wordings, per release, transcribed from its source.

Each renderer cites where vLLM builds the line ("vLLM vX path:function", paths under `site-packages/vllm/`,
read from the released wheels: 0.6.6.post1, 0.7.3, 0.8.5, 0.9.2, 0.10.2, 0.11.2, 0.33.0).  The numbers are
ours (vllm_run.py simulates them); only the wording is vLLM's.

Four releases stand for the wordings that differ:
- 0.6.6.post1: the V0 engine (its wording is the same through 0.10.2 where V0 still ships);
- 0.8.5: V1, `Engine 000:` first, no `Preemptions` item, and a mean acceptance length without the bonus token;
- 0.11.2: V1 with `Preemptions`, the 0.10 speculative wording, and `(APIServer pid=N)` prefixes in colour;
- 0.33.0: the newest, `Waiting` counting deferred requests, the process prefix in the log format.
"""

from __future__ import annotations

from dataclasses import dataclass

RELEASES = ("0.6.6.post1", "0.8.5", "0.11.2", "0.33.0")
V1 = ("0.8.5", "0.11.2", "0.33.0")
WITH_PREEMPTIONS = ("0.11.2", "0.33.0")  # V1 releases whose stats line counts preemptions (0.11 and later; not 0.10.2)

API_SERVER = "APIServer"
ENGINE_CORE = "EngineCore_DP0"
PORT = 8000


def is_v0(release: str) -> bool:
    return release == "0.6.6.post1"


def interval_seconds(release: str) -> float:
    """How often the stats line comes: vLLM v0.6.6.post1 engine/llm_engine.py `_LOCAL_LOGGING_INTERVAL_SEC = 5`;
    V1 vllm/envs.py `VLLM_LOG_STATS_INTERVAL` (10.0 by default; 0.8.5 v1/metrics/loggers.py: the same 10 s)."""
    return 5.0 if is_v0(release) else 10.0


# --- the record header ----------------------------------------------------------------------------------------

# (file, line) of each logging call, as `%(filename)s:%(lineno)d` prints them, per release.
_CALLS: dict[str, dict[str, tuple[str, int]]] = {
    "0.6.6.post1": {
        "stats": ("metrics.py", 467), "spec": ("metrics.py", 489), "preempted": ("scheduler.py", 1555),
        "version": ("api_server.py", 712), "engine": ("llm_engine.py", 234), "eager": ("", 0),
        "casting": ("config.py", 2276), "upcasting": ("config.py", 2268), "fp8_kv": ("config.py", 1019),
    },
    "0.8.5": {
        "stats": ("loggers.py", 111), "spec": ("metrics.py", 82), "version": ("api_server.py", 1043),
        "engine": ("core.py", 58), "eager": ("", 0),
    },
    "0.11.2": {
        "stats": ("loggers.py", 236), "spec": ("metrics.py", 100), "version": ("api_server.py", 1977),
        "engine": ("core.py", 93), "eager": ("vllm.py", 500), "dcp": ("vllm.py", 478),
        "casting": ("model.py", 1971), "fp8_kv": ("cache.py", 180), "kv_scale": ("kv_cache.py", 97),
    },
    "0.33.0": {
        "stats": ("loggers.py", 335), "spec": ("metrics.py", 120), "version": ("startup.py", 38),
        "engine": ("core.py", 139), "eager": ("vllm.py", 2005),
        "casting": ("model.py", 2516), "fp8_kv": ("cache.py", 484), "kv_scale": ("kv_cache.py", 165),
    },
}
# Which process prints each line (V1: the API server runs the stat logger; the engine core its config).
_PROCESS = {"engine": ENGINE_CORE, "kv_scale": ENGINE_CORE}  # the config checks (eager, DCP) run in the API server, at create_engine_config


def process_of(call: str) -> str:
    return _PROCESS.get(call, API_SERVER)


def header(release: str, call: str, level: str, clock: str, pid: int) -> str:
    """The record header before the message.

    vLLM v0.6.6.post1 and v0.7.3 logger.py `_FORMAT`: `%(levelname)s %(asctime)s %(filename)s:%(lineno)d] `;
    v0.8.5 and v0.9.2: the file in brackets; v0.11.2 `[%(fileinfo)s:%(lineno)d]` (the file's name unless
    VLLM_LOGGING_... asks for its path), and utils/system_utils.py:decorate_logs writes
    `\\x1b[1;36m(NAME pid=N)\\x1b[0;0m ` before each line of the API server and the engine core; v0.33.0
    logger.py `_FORMAT` holds `(%(vllm_process_name)s pid=%(process)d) ` itself, without colour.
    The date format is `%m-%d %H:%M:%S` in all of them."""
    file, line = _CALLS[release][call]
    if release == "0.6.6.post1":
        return f"{level} {clock} {file}:{line}] "
    text = f"{level} {clock} [{file}:{line}] "
    process = process_of(call)
    if release == "0.11.2":
        return f"\x1b[1;36m({process} pid={pid})\x1b[0;0m {text}"
    if release == "0.33.0":
        return f"({process} pid={pid}) {text}"
    return text


def has_call(release: str, call: str) -> bool:
    return bool(_CALLS[release].get(call, ("", 0))[0])


# --- the stats line ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Stats:
    prompt_throughput: float
    generation_throughput: float
    running: int
    waiting: int  # V1 `Waiting` (0.33: with the deferred ones); V0 `Pending`
    kv_usage: float  # 0..1
    swapped: int = 0  # V0 only
    preemptions: int = 0  # V1 0.11 and later: since the previous line
    deferred: int = 0  # 0.33: waiting requests the scheduler skipped (counted in `waiting` too)
    prefix_hit_rate: float = 0.0  # 0..1


def stats_line(release: str, stats: Stats, engine_index: int = 0) -> str:
    """vLLM v0.6.6.post1 engine/metrics.py:LoggingStatLogger.log (V0: `Swapped`, `Pending`, CPU KV cache, a
    final period); v0.8.5 v1/metrics/loggers.py:LoggingStatLogger.log (`Engine %03d: ` first; 0.7.3 printed
    the same items without it); v0.11.2 the same function (`Preemptions: %d` when any; v0.10.2 has none);
    v0.33.0 the same function (`Waiting` adds the skipped waiting requests, `Deferred: %d reqs` when any,
    `%s KV cache usage` with the device's name, the prefix cache hit rate only once it has been queried)."""
    if is_v0(release):
        return (f"Avg prompt throughput: {stats.prompt_throughput:.1f} tokens/s, "
                f"Avg generation throughput: {stats.generation_throughput:.1f} tokens/s, "
                f"Running: {stats.running} reqs, Swapped: {stats.swapped} reqs, Pending: {stats.waiting} reqs, "
                f"GPU KV cache usage: {stats.kv_usage * 100:.1f}%, CPU KV cache usage: 0.0%.")
    parts = [f"Avg prompt throughput: {stats.prompt_throughput:.1f} tokens/s",
             f"Avg generation throughput: {stats.generation_throughput:.1f} tokens/s",
             f"Running: {stats.running} reqs", f"Waiting: {stats.waiting} reqs"]
    if release == "0.33.0" and stats.deferred:
        parts.append(f"Deferred: {stats.deferred} reqs")
    if release in WITH_PREEMPTIONS and stats.preemptions:
        parts.append(f"Preemptions: {stats.preemptions}")
    parts.append(f"GPU KV cache usage: {stats.kv_usage * 100:.1f}%")
    parts.append(f"Prefix cache hit rate: {stats.prefix_hit_rate * 100:.1f}%")
    return f"Engine {engine_index:03d}: " + ", ".join(parts)


# --- speculative decoding ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Spec:
    """One interval of speculative decoding: `drafts` proposals of `k` tokens, `per_position` the share of
    drafts whose i-th token was accepted (so accepted tokens = drafts × sum(per_position))."""

    drafts: int
    k: int
    per_position: tuple[float, ...]
    seconds: float  # the interval's length

    @property
    def accepted(self) -> int:
        return round(self.drafts * sum(self.per_position))

    @property
    def drafted(self) -> int:
        return self.drafts * self.k


def spec_line(release: str, spec: Spec) -> str:
    """vLLM v0.8.5 v1/spec_decode/metrics.py:SpecDecodingLogging.log (`Draft acceptance rate` first; `Mean
    acceptance length` = accepted / drafts, the bonus token not counted); v0.9.2 the same wording but 1 +
    accepted / drafts; v0.10.2, v0.11.2 and v0.33.0 the same function (1 + accepted / drafts, throughputs,
    `Avg Draft acceptance rate` last)."""
    accepted, drafted = spec.accepted, spec.drafted
    rate = accepted / drafted * 100
    rates = ", ".join(f"{p:.3f}" for p in spec.per_position)
    if release == "0.8.5":
        return (f"SpecDecoding metrics: Draft acceptance rate: {rate:.1f}%, "
                f"Mean acceptance length: {accepted / spec.drafts:.2f}, Accepted: {accepted} tokens, "
                f"Drafted: {drafted} tokens, Per-position acceptance rate: {rates}")
    return (f"SpecDecoding metrics: Mean acceptance length: {1 + accepted / spec.drafts:.2f}, "
            f"Accepted throughput: {accepted / spec.seconds:.2f} tokens/s, "
            f"Drafted throughput: {drafted / spec.seconds:.2f} tokens/s, Accepted: {accepted} tokens, "
            f"Drafted: {drafted} tokens, Per-position acceptance rate: {rates}, "
            f"Avg Draft acceptance rate: {rate:.1f}%")


@dataclass(frozen=True, slots=True)
class SpecTotals:
    """V0's rejection sampler counts since the server started (spec_decode/metrics.py:AsyncMetricsCollector)."""

    k: int
    accepted: int
    drafted: int
    emitted: int


def spec_line_v0(totals: SpecTotals) -> str:
    """vLLM v0.6.6.post1 engine/metrics.py:LoggingStatLogger._format_spec_decode_metrics_str, with
    spec_decode/metrics.py:AsyncMetricsCollector._collect_rejsample_metrics (rate = accepted / draft tokens,
    efficiency = emitted / (draft tokens / k × (k + 1)); the counts are totals since start)."""
    rate = totals.accepted / totals.drafted
    efficiency = totals.emitted / (totals.drafted // totals.k * (totals.k + 1))
    return (f"Speculative metrics: Draft acceptance rate: {rate:.3f}, System efficiency: {efficiency:.3f}, "
            f"Number of speculative tokens: {totals.k}, Number of accepted tokens: {totals.accepted}, "
            f"Number of draft tokens: {totals.drafted}, Number of emitted tokens: {totals.emitted}.")


# --- preemption (V0) --------------------------------------------------------------------------------------------

PREEMPTION_WARNING_EVERY = 50  # vLLM v0.6.6.post1 core/scheduler.py:Scheduler._preempt: `% 50 == 0`


def preempted_line(request_id: str, cumulative: int, mode: str = "RECOMPUTE") -> str:
    """vLLM v0.6.6.post1 (and v0.8.5, v0.10.2) core/scheduler.py:Scheduler._preempt (logger.warning, the 1st,
    51st, 101st… preemption of the run; `%s` of the PreemptionMode enum)."""
    return (f"Sequence group {request_id} is preempted by PreemptionMode.{mode} mode because there is not "
            "enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization "
            f"or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption={cumulative}")


# --- start-up ---------------------------------------------------------------------------------------------------


def version_line(release: str, model: str) -> str:
    """vLLM v0.6.6.post1 … v0.11.2 entrypoints/openai/api_server.py:run_server (`vLLM API server version %s`);
    v0.33.0 entrypoints/common/startup.py:log_version_and_model (`vLLM server version %s, serving model %s`
    when the logo is off, VLLM_DISABLE_LOG_LOGO=1: the fixtures leave the logo out)."""
    if release == "0.33.0":
        return f"vLLM server version {release}, serving model {model}"
    return f"vLLM API server version {release}"


@dataclass(frozen=True, slots=True)
class EngineConfig:
    model: str
    speculative: str  # the SpeculativeConfig repr, or "None"
    tp: int = 1
    enforce_eager: bool = False
    max_model_len: int = 8192


def speculative_repr(release: str, method: str | None, draft: str | None, k: int) -> str:
    """vLLM v0.6.6.post1 config.py:SpeculativeConfig.__repr__ (`SpeculativeConfig(draft_model='…',
    num_spec_tokens=K)`); v0.11.2 and v0.33.0 config/speculative.py:SpeculativeConfig.__repr__
    (`SpeculativeConfig(method='…', model='…', num_spec_tokens=K)`; 0.8.5 config.py the same)."""
    if method is None:
        return "None"
    if is_v0(release):
        return f"SpeculativeConfig(draft_model={draft!r}, num_spec_tokens={k})"
    return f"SpeculativeConfig(method={method!r}, model={draft!r}, num_spec_tokens={k})"


def engine_line(release: str, config: EngineConfig) -> str:
    """vLLM v0.6.6.post1 engine/llm_engine.py:LLMEngine.__init__ (`Initializing an LLM engine (v%s) with
    config: %s, use_cached_outputs=%s, `); V1 v1/engine/core.py:EngineCore.__init__ (`Initializing a V1 LLM
    engine (v%s) with config: %s`).  The config is VllmConfig.__str__ (v0.6.6.post1 and v0.8.5 config.py,
    v0.11.2 and v0.33.0 config/vllm.py): its first fields in their order, cut after `kv_cache_dtype` (0.33.0:
    after `data_parallel_size`, before fields whose printed defaults were not checked); the fixtures leave out
    the long reprs that follow."""
    old = release in ("0.6.6.post1", "0.8.5")
    fields = [f"model={config.model!r}", f"speculative_config={config.speculative}",
              f"tokenizer={config.model!r}", "skip_tokenizer_init=False", "tokenizer_mode=auto", "revision=None"]
    if old:
        fields.append("override_neuron_config=None")
    fields += ["tokenizer_revision=None", "trust_remote_code=False", "dtype=torch.bfloat16",
               f"max_seq_len={config.max_model_len}", "download_dir=None", "load_format=auto",
               f"tensor_parallel_size={config.tp}", "pipeline_parallel_size=1"]
    if not old:
        fields.append("data_parallel_size=1")
    if release != "0.33.0":
        fields += ["disable_custom_all_reduce=False", "quantization=None", f"enforce_eager={config.enforce_eager}",
                   "kv_cache_dtype=auto"]
    body = ", ".join(fields)
    if is_v0(release):
        return f"Initializing an LLM engine (v{release}) with config: {body}"
    return f"Initializing a V1 LLM engine (v{release}) with config: {body}"


# vLLM v0.11.2 config/vllm.py:VllmConfig.__post_init__ (logger.info); v0.33.0 the same (logger.info_once).
EAGER_MODE = "Cudagraph is disabled under eager mode"
# vLLM v0.11.2 config/vllm.py:VllmConfig.__post_init__ (logger.warning_once): CUDA graphs stay on, piecewise.
DCP_PIECEWISE = ("Decode context parallel (DCP) is enabled, which is incompatible with full CUDA graphs. "
                 "Overriding cudagraph_mode to PIECEWISE.")


def casting(config_dtype: str, dtype: str) -> str:
    """vLLM v0.6.6.post1 config.py, v0.11.2 and v0.33.0 config/model.py:_get_and_verify_dtype (logger.warning
    between float16 and bfloat16; `Upcasting %s to %s.` at info to float32)."""
    return f"Casting torch.{config_dtype} to torch.{dtype}."


def upcasting(config_dtype: str, dtype: str) -> str:
    return f"Upcasting torch.{config_dtype} to torch.{dtype}."  # the same function, logger.info


def fp8_kv_cache(release: str) -> str:
    """vLLM v0.6.6.post1 config.py:CacheConfig._verify_cache_dtype and v0.11.2 config/cache.py:
    CacheConfig._validate_cache_dtype (logger.info, every fp8 KV cache; 0.6.6 without the final period);
    v0.33.0 the same function (`Using %s data type …`, no final period)."""
    text = ("Using fp8 data type to store kv cache. It reduces the GPU memory footprint and boosts the "
            "performance. Meanwhile, it may cause accuracy drop without a proper scaling factor")
    return text + "." if release == "0.11.2" else text


# vLLM v0.11.2 and v0.33.0 model_executor/layers/quantization/kv_cache.py:BaseKVCacheMethod.
# process_weights_after_loading (logger.warning_once, in the engine core or worker).
KV_SCALE_ONE = ("Using KV cache scaling factor 1.0 for fp8_e4m3. If this is unintended, verify that k/v_scale "
                "scaling factors are properly set in the checkpoint.")


def uvicorn_running(port: int = PORT) -> str:
    return f"INFO:     Uvicorn running on http://0.0.0.0:{port} (Press CTRL+C to quit)"


def access_line(client: str, port: int, path: str) -> str:
    return f'INFO:     {client}:{port} - "POST {path} HTTP/1.1" 200 OK'
