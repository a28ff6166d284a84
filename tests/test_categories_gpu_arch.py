"""A kernel's check refusing the GPU it runs on is gpu-arch-unsupported, though its message says "architecture" as the
model registries' do (issue 28: a fresh split filed a kernel's "Unsupported architecture" assertion as a model the
release does not support).  What follows the word decides: the model's class name is the registry's."""

from __future__ import annotations

import pytest

from tests.helpers import real_traceback
from tests.test_categories_cat6 import _diagnosis, no_rules  # noqa: F401 (no_rules: the fixture, used by pytestmark)

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
    assert _diagnosis(text).category == WORDINGS[text]


def test_a_kernel_assertion_in_its_own_frames_is_gpu_arch_unsupported() -> None:
    printed = real_traceback("""
        def get_kernel(major):
            assert major in (9, 10), "Unsupported architecture"

        get_kernel(12)
        """, "site-packages/sgl_kernel/gemm.py")
    assert _diagnosis(printed).category == "gpu-arch-unsupported"


def test_a_model_class_after_the_short_word_is_no_gpu() -> None:
    assert _diagnosis("ValueError: Unsupported arch ['LlamaForCausalLM']\n").category != "gpu-arch-unsupported"
