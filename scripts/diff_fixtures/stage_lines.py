"""The lines a launch that passed its argument handling goes on to log, per SGLang version, from the engine's own
format strings (file and line of each in the comments; checked in the 0.5.9 and 0.5.23 wheels).  The figures are
those of a small model on one 80 GB GPU; the times come from the case."""

from __future__ import annotations

# (stage key from cases.STAGE_SECONDS, rank tag or "", the message)
_V059: tuple[tuple[str, str, str], ...] = (
    ("distributed", "TP0", "Init torch distributed begin."),  # model_executor/model_runner.py:731
    ("distributed", "TP0", "Init torch distributed ends. elapsed=0.52 s, mem usage=0.09 GB"),  # :850
    ("weights", "TP0", "Load weight begin. avail mem=78.50 GB"),  # :899
    ("weights-loaded", "TP0", "Load weight end. elapsed=41.20 s, type=LlamaForCausalLM, dtype=torch.bfloat16, "
     "avail mem=63.41 GB, mem usage=15.09 GB."),  # :1041
    ("kv-cache", "TP0", "KV Cache is allocated. #tokens: 412345, K size: 25.17 GB, V size: 25.17 GB"),  # mem_cache/memory_pool.py:652
    ("memory-pool", "TP0", "Memory pool end. avail mem=12.80 GB"),  # model_runner_kv_cache_mixin.py:745
    ("cuda-graph", "TP0", "Capture cuda graph begin. This can take up to several minutes. avail mem=12.60 GB"),  # model_runner.py:2147
    ("cuda-graph-done", "TP0", "Capture cuda graph end. Time elapsed: 25.31 s. mem usage=0.81 GB. avail mem=11.79 GB."),  # :2161
    ("scheduler", "TP0", "max_total_num_tokens=412345, chunked_prefill_size=8192, max_prefill_tokens=16384, "
     "max_running_requests={max_running_requests}, context_len=4096, available_gpu_mem=11.79 GB"),  # managers/scheduler.py:623
)
_V0523: tuple[tuple[str, str, str], ...] = (
    # 0.5.23 logs no "Init torch distributed" line.
    ("weights", "TP0", "Load weight begin. avail mem=78.50 GB"),  # model_executor/model_runner.py:1274
    ("weights-loaded", "TP0", "Load weight end. elapsed=41.20 s, type=LlamaForCausalLM, avail mem=63.41 GB, "
     "mem usage=15.09 GB."),  # :1373
    ("kv-cache", "TP0", "KV Cache is allocated. dtype: torch.bfloat16, #tokens: 412345, K size: 25.17 GB, "
     "V size: 25.17 GB"),  # mem_cache/memory_pool.py:2088
    ("memory-pool", "TP0", "Memory pool end. avail mem=12.80 GB"),  # mem_cache/kv_cache_configurator.py:499
    ("cuda-graph", "TP0", "Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, "
     "avail mem=12.60 GB"),  # model_executor/model_runner_components/cuda_graph_setup.py:759
    ("cuda-graph-done", "TP0", "Capture target decode CUDA graph end. bs=[1, 2, 4, 8, 16, 24, 32], elapsed=25.31 s, "
     "mem usage=0.81 GB, avail mem=11.79 GB."),  # :788
    ("scheduler", "TP0", "max_total_num_tokens=412345, chunked_prefill_size=8192, max_prefill_tokens=16384, "
     "max_running_requests={max_running_requests}, context_len=4096, available_gpu_mem=11.79 GB"),  # managers/scheduler.py:1272
)
# uvicorn's own lines, then entrypoints/http_server.py ("The server is fired up and ready to roll!").
_SERVING: tuple[tuple[str, str, str], ...] = (
    ("http", "", "INFO:     Started server process [{pid}]"),
    ("http", "", "INFO:     Waiting for application startup."),
    ("http", "", "INFO:     Application startup complete."),
    ("http", "", "INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)"),
    ("ready", "", "The server is fired up and ready to roll!"),
)

BY_VERSION = {"0.5.9": _V059 + _SERVING, "0.5.23": _V0523 + _SERVING}
