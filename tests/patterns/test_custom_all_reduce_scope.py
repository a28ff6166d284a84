"""sglang-custom-all-reduce-no-p2p is SGLang's alone (review of advice19): vLLM's CudaRTLibrary raises the same
'CUDART error: peer access is not supported' words, but vLLM's all-reduce opens IPC handles through it only in its P2P
test (can_actually_p2p), which catches the error and turns the custom all-reduce off.  A vLLM log with the line comes
from another caller (device_allocator/cumem.py, a KV offload), where --disable-custom-all-reduce is unproven."""

from __future__ import annotations

from tests.reasoning.diagnosed import first_diagnosis

PATTERN = "sglang-custom-all-reduce-no-p2p"
LINE = "RuntimeError: CUDART error: peer access is not supported between these two devices\n"


def test_a_vllm_log_with_cudarts_peer_access_error_gets_no_proven_fix() -> None:
    log = ("(APIServer pid=4021) INFO 03-14 09:20:02 [api_server.py:1880] vLLM API server version 0.25.0\n"
           f"(EngineCore_DP0 pid=4117) {LINE}")
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern != PATTERN and diagnosis.basis != "pattern", diagnosis  # no proven fix: general guidance


def test_sglangs_own_log_keeps_the_pattern_and_its_check_of_a_skipped_p2p_test() -> None:
    log = "[2026-03-14 09:20:01] sglang version 0.5.9\n[2026-03-14 09:20:05 TP1] Init torch distributed begin.\n" + LINE
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == PATTERN and diagnosis.fix is not None, diagnosis
    assert any("SGLANG_SKIP_P2P_CHECK" in step for step in diagnosis.fix.steps), diagnosis.fix
