"""Two misfiles a fresh split showed (issue 28, stop 42), each a class read from its code site.

A kernel's check refusing the GPU it runs on is gpu-arch-unsupported, though its message says "architecture" as the
model registries' do: what follows the word decides (the model's class name is the registry's).  SGLang's router
answering 503 because none of its workers can take a request is the router's row, not network's."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose_without_patterns, real_traceback
from tests.test_categories_cat6 import no_rules  # noqa: F401 (no_rules: the fixture, used by pytestmark)

pytestmark = pytest.mark.usefixtures("no_rules")

GPU, MODEL = "gpu-arch-unsupported", "unsupported-architecture"
WORDINGS = {
    "AssertionError: Unsupported architecture\n": GPU,
    "RuntimeError: unsupported architecture sm_120\n": GPU,  # flashinfer's wording, the raise site index
    "ValueError: unsupported architecture 'gfx1201'\n": GPU,
    "RuntimeError: FlashMLA only supports sm90\n": GPU,
    "RuntimeError: This kernel does not support SM120; supported architectures are [90, 100].\n": GPU,
    # the engines' model registries: the model's class after the word (sglang and vllm, the raise site index)
    "ValueError: Unsupported architecture: Qwen3ForCausalLM\n": MODEL,
    "ValueError: Model architectures ['FooForCausalLM'] are not supported for now. Supported architectures: [...]\n": MODEL,
}


@pytest.mark.parametrize("text", sorted(WORDINGS))
def test_what_follows_the_word_architecture_decides_gpu_or_model(text: str) -> None:
    assert diagnose_without_patterns(text).category == WORDINGS[text]


def test_a_kernel_assertion_in_its_own_frames_is_gpu_arch_unsupported() -> None:
    printed = real_traceback("""
        def get_kernel(major):
            assert major in (9, 10), "Unsupported architecture"

        get_kernel(12)
        """, "site-packages/sgl_kernel/gemm.py")
    assert diagnose_without_patterns(printed).category == "gpu-arch-unsupported"


def test_a_model_class_after_the_short_word_is_no_gpu() -> None:
    assert diagnose_without_patterns("ValueError: Unsupported arch ['LlamaForCausalLM']\n").category != "gpu-arch-unsupported"


# SGLang's router answering 503 with no worker it can use (sgl-router / sgl-model-gateway's own wording and error
# code; THUDM/slime#1328): the workers failed, not the network; a proxy's 503 stays network.
ROUTER_503 = ('{"error":{"type":"Service Unavailable","code":"no_available_workers","message":"No available workers '
              '(all circuits open or unhealthy)"}}')


@pytest.mark.parametrize("text", [
    f"requests.exceptions.HTTPError: 503 Server Error: Service Unavailable for url: http://10.0.0.7:30000/generate {ROUTER_503}\n",
    "RuntimeError: No available prefill workers (all circuits open or unhealthy)\n",
])
def test_a_router_with_no_healthy_worker_is_the_routers(text: str) -> None:
    assert diagnose_without_patterns(text).category == "router"


def test_a_503_with_no_routers_words_is_not_the_routers() -> None:
    assert diagnose_without_patterns("RuntimeError: No available workers for reserve creation\n").category != "router"
