"""CUDA kernels failing on the device while serving: no kernel image for the GPU, DeepGEMM on an
unsupported architecture, an illegal memory access.

Patterns: sglang-no-kernel-image, sglang-deepgemm-unsupported-arch, sglang-illegal-memory-access.
"""

from __future__ import annotations

from ..engine import Frame
from ..mirror import (
    DECODE,
    ILLEGAL_ACCESS,
    KV_LINE,
    LOAD_END,
    QWEN_FORWARD,
    attention_kernel_crash,
    cuda_error,
    forward_frames,
    scheduler_crash,
)

# an FP8 block-quantized linear layer calling DeepGEMM's kernel
DEEPGEMM = (
    *forward_frames("0.5.9"),
    QWEN_FORWARD,
    Frame("sglang/srt/layers/quantization/fp8.py", "apply", "return self.w8a8_block_fp8_linear(input=x, weight=layer.weight, block_size=self.quant_config.weight_block_size, weight_scale=layer.weight_scale_inv, input_scale=None, bias=bias)", lineno=610),
    Frame("sglang/srt/layers/quantization/fp8_utils.py", "deepgemm_w8a8_block_fp8_linear_with_fallback", "output = w8a8_block_fp8_matmul_deepgemm(q_input, weight, x_scale, weight_scale, block_size, output_dtype=output_dtype)", lineno=260),
    Frame("sglang/srt/layers/quantization/fp8_kernel.py", "w8a8_block_fp8_matmul_deepgemm", "deep_gemm.fp8_gemm_nt((A, As), (B, Bs), C)",
          env=(("deep_gemm", "__import__('torch').ops"),), lineno=980),
)


def deepgemm_assertion(where: str, condition: str) -> tuple[str, str]:
    return ("RuntimeError", f"Assertion error ({where}): {condition}")


CASES = (
    attention_kernel_crash("sglang-no-kernel-image", "positive-0.5.9-sm120", "0.5.9", cuda_error("no kernel image is available for execution on the device"),
                           before=(LOAD_END, KV_LINE)),
    attention_kernel_crash("sglang-no-kernel-image", "negative-illegal-memory-access", "0.5.9", ILLEGAL_ACCESS, before=(DECODE,)),

    scheduler_crash("sglang-deepgemm-unsupported-arch", "positive-0.5.9-sm120", DEEPGEMM, before=(LOAD_END,),
                    torch_error=deepgemm_assertion("/sgl-kernel/build/_deps/repo-deepgemm-src/csrc/apis/../jit_kernels/impls/../heuristics/sm90.hpp:34", "Unsupported architecture")),
    scheduler_crash("sglang-deepgemm-unsupported-arch", "negative-nvcc-failed", DEEPGEMM, before=(LOAD_END,),
                    torch_error=deepgemm_assertion("csrc/apis/../jit_kernels/impls/../../jit/compiler.hpp:176", 'false and "NVCC compilation failed"')),

    *(attention_kernel_crash("sglang-illegal-memory-access", f"positive-{version}-decode", version, ILLEGAL_ACCESS) for version in ("0.5.9", "0.5.23")),
    attention_kernel_crash("sglang-illegal-memory-access", "negative-misaligned", "0.5.9", cuda_error("misaligned address")),
)
