"""Stop 43's SGLang sweep (h-cat11), in generic words (issue 28): DeepEP's all-to-all giving up its wait for the other
expert-parallel ranks is communication between the ranks (nccl), not the scheduler's watchdog; SGLang's
prefill-decode disaggregation failing to hand the KV cache from one instance to the other (the bootstrap handshake, the
transfer engine) is the path between the instances (network), not the tokenizer its request's frames pass through.
Each with a look-alike where it must not fire.

The wordings are the code sites': deepseek-ai/DeepEP csrc/deep_ep.cpp ('DeepEP error: timeout (dispatch CPU)',
'DeepEP error: CPU recv timeout'); sglang srt/disaggregation/prefill.py and decode.py ('Prefill bootstrap failed for
request rank=…', 'Decode handshake failed for request …', each '… with exception KVTransferError(…): …'),
common/conn.py ('Could not fetch prefill parallel info from bootstrap_addr'); Mooncake's transfer engine
(rdma_context.cpp).  Tracebacks are printed by the real interpreter (tests.helpers.real_traceback)."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose_without_patterns, real_traceback
from tests.test_categories_cat6 import no_rules  # noqa: F401 (no_rules: the fixture, used by pytestmark)

# The honest category alone: the reasoning rules set aside.
pytestmark = pytest.mark.usefixtures("no_rules")

DEEPEP_TITLE = "expert-parallel all-to-all (DeepEP)"
TRANSFER_TITLE = "KV-cache transfer between the prefill and the decode instances"


def _deepep_dispatch(message: str) -> str:
    """DeepEP's buffer raising from its C++ runtime, called by SGLang's token dispatcher (the frames of the threads)."""
    return real_traceback(f"""
        def intranode_dispatch(x):
            raise RuntimeError({message!r})

        def dispatch(x):
            return intranode_dispatch(x)

        def _dispatch_core(hidden_states):
            return dispatch(hidden_states)

        _dispatch_core(None)
        """, "sglang/srt/layers/moe/token_dispatcher/deepep.py")


@pytest.mark.parametrize("message", ["DeepEP error: timeout (dispatch CPU)", "DeepEP error: CPU recv timeout"])
def test_deepeps_wait_running_out_is_communication_between_the_ranks(message: str) -> None:
    """sgl-project/sglang#9582 (PD prefill with DeepEP on H20), sgl-project/sglang#15598 (during DeepGEMM warm-up)."""
    diagnosis = diagnose_without_patterns(_deepep_dispatch(message))
    assert diagnosis.category == "nccl"
    assert DEEPEP_TITLE in diagnosis.title


def test_deepeps_timeout_quoted_in_prose_above_a_cut_traceback() -> None:
    """sgl-project/sglang#15598's shape: the title names the error, the traceback stops before its last line."""
    paste = ("[Bug] TBO+deepep(normal) ==> DeepEP error: CPU recv timeout\n\n"
             "[2025-12-22 11:36:30 TP1 EP1] Scheduler hit an exception: Traceback (most recent call last):\n"
             '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2865, in run_scheduler_process\n'
             "    scheduler.event_loop_overlap()\n"
             '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2147, in run_batch\n')
    assert diagnose_without_patterns(paste).category == "nccl"


def test_another_deepep_error_is_not_read_as_its_timeout() -> None:
    """The look-alike: DeepEP refusing a size names no wait; and the scheduler's own watchdog stays a hang."""
    refused = diagnose_without_patterns(_deepep_dispatch("DeepEP error: num_experts must be divisible by num_ranks"))
    assert DEEPEP_TITLE not in refused.title
    watchdog = diagnose_without_patterns("RuntimeError: Scheduler watchdog timeout (self.watchdog_timeout=300, "
                          "self.soft_watchdog=False)\n")
    assert watchdog.category == "hang-timeout"


def _relayed_to_the_request(reason: str) -> str:
    """The scheduler's abort of a request whose KV handover failed, as the request's HTTP 500 raised in SGLang's
    tokenizer manager (sgl-project/sglang#10110's frames); `reason`: the KVTransferError's."""
    return real_traceback(f"""
        class HTTPException(Exception):
            pass

        def _wait_one_response(rid):
            raise HTTPException("500: Prefill bootstrap failed for request rank=2 req.rid='d3fd6575' "
                                "req.bootstrap_room=5975098084415727586 with exception "
                                "KVTransferError(bootstrap_room=5975098084415727586): {reason}")

        def generate_request(rid):
            _wait_one_response(rid)

        generate_request("d3fd6575")
        """, "sglang/srt/managers/tokenizer_manager.py")


def test_a_bootstrap_failure_relayed_to_the_request_is_the_transfer_path_not_the_tokenizer() -> None:
    """sgl-project/sglang#10110: the handshake timed out; the abort comes back through the tokenizer manager's
    frames, whose tokenizer_manager.py names no tokenizer problem."""
    traceback = _relayed_to_the_request("Request 5975098084415727586 timed out after 300.0s in KVPoll.Bootstrapping")
    diagnosis = diagnose_without_patterns(traceback)
    assert diagnosis.category == "network"
    assert TRANSFER_TITLE in diagnosis.title


@pytest.mark.parametrize("line", [
    # sgl-project/sglang#10001: the decode cannot reach the prefill's bootstrap server (multi-node)
    "Decode handshake failed for request rank=0 decode_req.req.rid='fb1c0466' decode_req.req.bootstrap_room=75751 "
    "with exception KVTransferError(bootstrap_room=75751): Could not fetch prefill parallel info from bootstrap_addr: "
    "10.160.1.22:8998\n",
    # sgl-project/sglang#8324: Mooncake's transfer engine over RDMA, its own glog lines (NIXL worked on the same hosts):
    # the work completion's status, then the device it gave up on
    "E0724 03:14:20.701 104002 worker_pool.cpp:245] Worker: Process failed for slice (opcode: 1, local_nic: mlx5_bond_2, "
    "peer_nic: 10.0.2.98:15992@mlx5_bond_1, retry_cnt: 0): local protection error\n"
    "W0724 03:14:20.702893 104002 worker_pool.cpp:303] Too many errors found in local RNIC 10.0.2.69:15858@mlx5_bond_2, "
    "mark it inactive\nE0724 03:14:20.707079 104002 rdma_context.cpp:261] Context is not active: mlx5_bond_2\n",
])
def test_the_kv_transfer_between_instances_failing_is_the_path_between_them(line: str) -> None:
    diagnosis = diagnose_without_patterns(line)
    assert diagnosis.category == "network"
    assert TRANSFER_TITLE in diagnosis.title


def test_a_disaggregation_setting_the_release_refuses_is_not_the_transfer_path() -> None:
    """The look-alike: SGLang's NIXL connector refusing prefill and decode of different TP sizes for a model
    (llm-d/llm-d's guide: prefill TP1, decode TP4) is a setting refused, not a transfer that failed."""
    traceback = real_traceback("""
        def maybe_send_extra(req):
            raise RuntimeError("PD Disaggregation does NOT support PD different TP sizes for non-MLA hybrid "
                               "models yet.")

        maybe_send_extra(None)
        """, "sglang/srt/disaggregation/nixl/conn.py")
    assert TRANSFER_TITLE not in diagnose_without_patterns(traceback).title


def test_a_request_aborted_upstream_is_not_a_transfer_that_failed() -> None:
    """The look-alike: the engine's same words with 'Aborted by AbortReq' are a request the client or the router gave
    up on (sgl-project/sglang#9266: the router's prefill client timing out), the transfer cancelled, not failed."""
    diagnosis = diagnose_without_patterns(_relayed_to_the_request("Aborted by AbortReq."))
    assert TRANSFER_TITLE not in diagnosis.title
    # nor a native crash: the word is the scheduler's reason for the cancelled request, no process aborted
    assert diagnosis.category != "native-crash"
    # nor the tokenizer: tokenizer_manager.py only relays the scheduler's abort to the request
    assert diagnosis.category != "tokenizer"
