"""What the machine or the installed libraries cannot give the engine: a heartbeat the API server stopped waiting
for, GPUs without peer access under the custom all-reduce, pinned memory (UVA) that vLLM leaves off, an Ascend
operator missing from the operator libraries.

Patterns: vllm-mq-engine-heartbeat-timeout, sglang-custom-all-reduce-no-p2p, vllm-uva-unavailable,
vllm-uva-unavailable-pre-v024, common-ascend-op-missing-from-op-library.

These logs are lines only (mode "lines"): the engines' own records and exception lines, each from the code site its
pattern's `references` cite (vLLM 0.6.3.post1's MQLLMEngineClient.run_heartbeat_loop and _send_get_data_rpc_request,
SGLang's CudaRTLibrary.CUDART_CHECK, vLLM's UvaBuffer and StagedWriteTensor checks, the EXEC_NPU_CMD lookup of
Ascend torch extensions), with our own models, times, pids and figures.  Nothing is copied from a user's log.
"""

from __future__ import annotations

from ..engine import Case

HEARTBEAT = "vllm-mq-engine-heartbeat-timeout"
NO_P2P = "sglang-custom-all-reduce-no-p2p"
UVA = "vllm-uva-unavailable"
UVA_PRE = "vllm-uva-unavailable-pre-v024"
ASCEND_OP = "common-ascend-op-missing-from-op-library"

# vLLM 0.6.x's V0 records: `LEVEL MM-DD HH:MM:SS file.py:line] message`
_V0_BANNER = "INFO 03-14 09:20:02 api_server.py:528] vLLM API server version 0.6.3.post1"
_V0_METRICS = ("INFO 03-14 09:26:41 metrics.py:351] Avg prompt throughput: 1843.0 tokens/s, Avg generation throughput: "
               "9.6 tokens/s, Running: 2 reqs, Swapped: 0 reqs, Pending: 1 reqs, GPU KV cache usage: 4.2%, CPU KV cache usage: 0.0%.")

# vLLM 0.2x's V1 records with the engine core's process prefix
_CORE = "(EngineCore_DP0 pid=4117)"
_V1_BANNER = "(APIServer pid=4021) INFO 03-14 09:20:02 [api_server.py:1880] vLLM API server version 0.25.0"


def _uva_failure(banner: str) -> tuple[str, ...]:
    """UvaBuffer's raise under WSL (buffer_utils.py, 0.14.0 to 0.34.0), after the server's banner."""
    return (
        "WARNING 03-14 09:20:01 [interface.py:729] Using 'pin_memory=False' as WSL is detected. This may slow down the performance.",
        banner,
        f"{_CORE} Traceback (most recent call last):",
        f'{_CORE}   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu/buffer_utils.py", line 47, in __init__',
        f'{_CORE}     raise RuntimeError("UVA is not available")',
        f"{_CORE} RuntimeError: UVA is not available",
    )


_V020_BANNER = _V1_BANNER.replace("0.25.0", "0.20.0")

CASES = (
    # The client's heartbeat loop logs the TimeoutError it sets (logger.exception(repr(e)) outside an except block,
    # hence `NoneType: None`), the launcher ends the server: vllm-project/vllm#9082.
    Case(HEARTBEAT, "positive-0.6.3-engine-busy-while-serving", (), mode="lines", ranks="", raw_after=(
        _V0_BANNER, _V0_METRICS,
        "ERROR 03-14 09:26:53 client.py:244] TimeoutError('No heartbeat received from MQLLMEngine')",
        "ERROR 03-14 09:26:53 client.py:244] NoneType: None",
        "CRITICAL 03-14 09:26:55 launcher.py:99] MQLLMEngine is already dead, terminating server process",
        'INFO:     10.1.4.20:51876 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error',
        "INFO:     Shutting down",
    )),
    # Another timeout of the same client, at start-up: the engine never answered the first RPC.  No heartbeat.
    Case(HEARTBEAT, "negative-0.6.3-startup-rpc-timeout", (), mode="lines", ranks="", raw_after=(
        _V0_BANNER,
        "TimeoutError: RPCServer didn't reply within 10000 ms",
    )),

    # The engines' CudaRTLibrary refusing to open another rank's IPC buffer for the custom all-reduce:
    # sgl-project/sglang#4814 (RTX 4090, tensor parallel 2).
    Case(NO_P2P, "positive-sglang-tp1-ipc-open", (), mode="lines", ranks="TP1", before=("Init torch distributed begin.",), raw_after=(
        "RuntimeError: CUDART error: peer access is not supported between these two devices",
    )),
    # NCCL's own P2P transport failing on the same kind of GPUs is NCCL's error, not the custom all-reduce's.
    Case(NO_P2P, "negative-nccl-transport", (), mode="lines", ranks="TP1", before=("Init torch distributed begin.",), raw_after=(
        "gpu-node:4242:4300 [1] transport/p2p.cc:275 NCCL WARN Cuda failure 'peer access is not supported between these two devices'",
        "RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
    )),

    # The V2 model runner's request state in UVA buffers, pinned memory left off under WSL2:
    # vllm-project/vllm#47292, #47387, #43381.
    Case(UVA, "positive-0.25-wsl2-pin-memory-off", (), mode="lines", ranks="", raw_after=_uva_failure(_V1_BANNER)),
    # vLLM 0.20.0 has no VLLM_WSL2_ENABLE_PIN_MEMORY (envs.py from 0.24.0): the older releases' pattern answers.
    Case(UVA, "negative-0.20-release-without-the-switch", (), mode="lines", ranks="", raw_after=_uva_failure(_V020_BANNER)),
    Case(UVA_PRE, "positive-0.20-v2-runner-opted-in", (), mode="lines", ranks="", raw_after=_uva_failure(_V020_BANNER)),
    Case(UVA_PRE, "negative-0.25-release-with-the-switch", (), mode="lines", ranks="", raw_after=_uva_failure(_V1_BANNER)),
    # The same file's other check: a dtype the staged buffer cannot hold, nothing about pinned memory.
    Case(UVA, "negative-0.25-staged-write-dtype", (), mode="lines", ranks="", raw_after=(
        _V1_BANNER,
        f"{_CORE} ValueError: Unsupported dtype torch.complex64: should be one of [torch.int32, torch.int64, torch.float32]",
    )),

    # An operator the Ascend plugin calls that neither its operator package nor CANN's libopapi.so exports:
    # vllm-project/vllm-ascend#5056, #7095.
    Case(ASCEND_OP, "positive-vllm-ascend-engine-core", (), mode="lines", ranks="", raw_after=(
        _V1_BANNER,
        f"{_CORE} ERROR 03-14 09:24:10 [core.py:845] RuntimeError: aclnnAddRmsNormBias or aclnnAddRmsNormBiasGetWorkspaceSize "
        "not in libopapi.so, or libopapi.sonot found.",
    )),
    # The operator was found and ran, and CANN refused its inputs: not a missing operator.
    Case(ASCEND_OP, "negative-operator-call-failed", (), mode="lines", ranks="", raw_after=(
        _V1_BANNER,
        f"{_CORE} ERROR 03-14 09:24:10 [core.py:845] RuntimeError: call aclnnAddRmsNormBias failed, detail:EZ1001: "
        "[PID: 4117] 2026-03-14-09:24:10.120.001 the dim of x should be at least 1.",
    )),
)
