"""Stop 43's vLLM sweep (h-cat12), in generic words (issue 28): the KV cache's block size an attention backend does
not take is a setting's value (invalid-flag-value), not parallel arithmetic, though its words say "multiple of"; the
engine's own all-reduce kernel between the GPUs (custom all-reduce over P2P/IPC) failing a CUDA call is communication
between the GPUs (nccl), not a fault of one GPU, also when only the worker's death follows it.  Each with a look-alike
where it must not fire.

The wordings are the code sites': vllm v1/attention/backends/flash_attn.py get_kv_cache_shape ('Block size must be a
multiple of 16.'), the backend selector (' The selected backend, X, does not support block size N.'),
csrc/attention/paged_attention_v*.cu ('Unsupported block size: N'); vllm csrc/custom_all_reduce.cuh and sgl-kernel's
CUDACHECK ('Failed: Cuda error <file>:<line> '<error>'').  Tracebacks are printed by the real interpreter
(tests.helpers.real_traceback)."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose_without_patterns, real_traceback
from tests.test_categories_cat6 import no_rules  # noqa: F401 (no_rules: the fixture, used by pytestmark)

# The honest category alone: the reasoning rules set aside.
pytestmark = pytest.mark.usefixtures("no_rules")

BLOCK_TITLE = "KV-cache block size the attention backend does not take"
ALLREDUCE_TITLE = "custom all-reduce over P2P/IPC"


def _kv_cache_shape(message: str) -> str:
    """An attention backend refusing the cache's shape while the engine sizes the KV cache (vllm-project/vllm#15508's
    frames: the engine core's _initialize_kv_caches, the backend's get_kv_cache_shape)."""
    return real_traceback(f"""
        def get_kv_cache_shape(num_blocks, block_size):
            raise ValueError({message!r})

        def _initialize_kv_caches(config):
            return get_kv_cache_shape(1024, 8)

        _initialize_kv_caches(None)
        """, "vllm/v1/attention/backends/flash_attn.py")


@pytest.mark.parametrize("message", [
    "Block size must be a multiple of 16.",
    " The selected backend, FlashAttentionBackend, does not support block size 8.",
])
def test_a_block_size_the_attention_backend_refuses_is_the_settings_value(message: str) -> None:
    """vllm-project/vllm#15508 (a block size of 8 on V1's FlashAttention), vllm-project/vllm#42510 (--block-size 1
    or 8, listed among the flag's choices, crashing at the KV cache's initialisation)."""
    diagnosis = diagnose_without_patterns(_kv_cache_shape(message))
    assert diagnosis.category == "invalid-flag-value"
    assert BLOCK_TITLE in diagnosis.title


def test_the_paged_attention_kernels_unsupported_block_size_alone() -> None:
    """The kernel's TORCH_CHECK quoted alone (vllm-project/vllm#10938: '--block-size 128' on the paged kernel)."""
    diagnosis = diagnose_without_patterns("RuntimeError: Unsupported block size: 128\n")
    assert diagnosis.category == "invalid-flag-value"


def test_a_size_per_gpu_a_quantization_block_does_not_divide_stays_parallel_arithmetic() -> None:
    """The look-alike: the quantization block's divisibility of a size split by tensor parallelism
    (vllm-project/vime#186: 768 / TP8 = 96 against FP8's block_n 128) is parallel-config, block words or not."""
    diagnosis = diagnose_without_patterns("ValueError: The output_size of gate's and up's weight = 96 is not divisible by weight "
                           "quantization block_n = 128.\n")
    assert diagnosis.category == "parallel-config"
    assert BLOCK_TITLE not in diagnosis.title
    heads = diagnose_without_patterns("ValueError: Total number of attention heads (40) must be divisible by tensor parallel size "
                       "(3).\n")
    assert heads.category == "parallel-config"


CUSTOM_ALLREDUCE_DEATH = (
    "INFO 10-02 15:11:40 custom_all_reduce_utils.py:242] reading GPU P2P access cache from "
    "/root/.cache/vllm/gpu_p2p_access_cache_for_0,1,2,3.json\n"
    "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:{line} 'invalid argument'\n"
    "ERROR 10-02 15:11:41 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 652775 died, exit code: 1\n"
    "INFO 10-02 15:11:41 multiproc_worker_utils.py:124] Killing local vLLM worker processes\n"
)


@pytest.mark.parametrize("line", [164, 336])
def test_the_custom_all_reduce_failing_before_the_workers_death_is_communication(line: int) -> None:
    """vllm-project/vllm#56180 (after the FULL CUDA graph capture), vllm-project/vllm#9046 (TP=4): the kernel's
    CUDACHECK line, then the worker's death; CUDA's words on it name no fault of one GPU."""
    diagnosis = diagnose_without_patterns(CUSTOM_ALLREDUCE_DEATH.format(line=line))
    assert diagnosis.category == "nccl"
    assert ALLREDUCE_TITLE in diagnosis.title


def test_another_cuda_error_before_a_workers_death_stays_a_cuda_error() -> None:
    """The look-alike: CUDA's own error from another kernel before the death is still the CUDA runtime's."""
    paste = ("RuntimeError: CUDA error: an illegal instruction was encountered\n"
             "ERROR 10-02 15:11:41 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 652775 died, "
             "exit code: 1\n")
    diagnosis = diagnose_without_patterns(paste)
    assert ALLREDUCE_TITLE not in diagnosis.title
    assert diagnosis.category != "nccl"


ENCODER_TITLE = "larger than the server's encoder cache"


def test_a_multimodal_item_beyond_the_encoder_cache_is_a_request_beyond_the_budget() -> None:
    """vllm-project/vllm#34040: vLLM's per-request check, its 400 body relayed by a client's gateway (the error line
    alone, no frames)."""
    diagnosis = diagnose_without_patterns("BadRequestError: The decoder prompt contains a(n) image item with length 6042, which "
                           "exceeds the pre-allocated encoder cache size 4800. Please reduce the input size or increase "
                           "the encoder cache size by setting --limit-mm-per-prompt at startup.\n")
    assert diagnosis.category == "context-length"
    assert ENCODER_TITLE in diagnosis.title


def test_a_prompt_beyond_the_context_is_not_read_as_the_encoder_cache() -> None:
    """The look-alike: the prompt's own length against --max-model-len keeps the category's general reading, and an
    encoder cache miss (an engine's internal lookup) is no request beyond a budget."""
    prompt = diagnose_without_patterns("ValueError: The decoder prompt (length 9000) is longer than the maximum model length of "
                        "8192. Make sure that `max_model_len` is no smaller than the number of text tokens.\n")
    assert prompt.category == "context-length"
    assert ENCODER_TITLE not in prompt.title
    miss = diagnose_without_patterns(real_traceback("""
        def _gather_mm_embeddings(mm_hash):
            raise ValueError(f"Encoder cache miss for {mm_hash}.")

        _gather_mm_embeddings("3f2a")
        """, "vllm/v1/worker/gpu_model_runner.py"))
    assert ENCODER_TITLE not in miss.title


RAY_TITLE = "Ray cluster that cannot place the engine's GPU bundles"


# vllm-project/vllm#13388: the two lines quoted alone (TP16 over Ray in Kubernetes)
RAY_WAIT_THEN_AUTOSCALER = (
    "Waiting for creating a placement group of specs for 70 seconds... \n"
    "Error: No available node types can fulfill resource request {'node:10.61.0.27': 0.001, 'GPU': 1.0}\n")
# vllm-project/vllm#12670: the autoscaler's sentence in full, the node named by its hostname
RAY_AUTOSCALER_BY_HOSTNAME = (
    "Error: No available node types can fulfill resource request "
    "{'node:ec2-10-1-2-3.us-west-2.compute.amazonaws.com': 0.001, 'GPU': 1.0}. Add suitable node types to this "
    "cluster to resolve this issue.\n")


def test_rays_autoscaler_finding_no_node_for_a_bundle_is_the_cluster_placing() -> None:
    for paste in (RAY_WAIT_THEN_AUTOSCALER, RAY_AUTOSCALER_BY_HOSTNAME):
        diagnosis = diagnose_without_patterns(paste)
        assert (diagnosis.category, RAY_TITLE in diagnosis.title) == ("orchestration", True), paste


def test_a_ray_actor_that_died_is_not_a_bundle_the_cluster_could_not_place() -> None:
    """The look-alike: a Ray worker that died after it was placed (Ray's ActorDiedError) is no placement failure."""
    diagnosis = diagnose_without_patterns("ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
                           "\tclass_name: RayWorkerWrapper\n")
    assert RAY_TITLE not in diagnosis.title
