"""GPU and native faults users hit while serving (issue 11): device-side asserts, kernel faults reported as
launch failures or C++ aborts, kernels missing for the GPU, FP8 on GPUs without it, segfaults and aborts
dumped by faulthandler, scheduler watchdog timeouts.

Patterns: sglang-device-assert, sglang-illegal-memory-access (the launch-failure and abort shapes; the
decode attention fault is in kernels.py), sglang-no-kernel-image (invalid device function),
sglang-deepgemm-unsupported-arch (the TVM-FFI shape), common-fp8-unsupported-gpu, common-native-crash,
common-native-signal, sglang-scheduler-watchdog-timeout.
"""

from __future__ import annotations

from ..engine import Case
from ..mirror import (
    CUDA_ASYNC_NOTE,
    DECODE,
    LOADER,
    MODEL_RUNNER,
    READY,
    SCHEDULER,
    SIGQUIT,
    TP_WORKER,
    cuda_error,
    decoder_to_mlp,
    device_asserts,
    failing_at,
    fatal_signal,
    forward_frames,
    frame_at,
    native_crash,
    printing_then,
    scheduler_crash,
    scheduler_entry,
    to_load_model,
    to_model_runner,
)
from .nccl import SERVING as TP_ALL_REDUCE
from .nccl import WATCHDOG as NCCL_COLLECTIVE_TIMEOUT

C_RAISER = "__import__('torch').C_RAISER"  # the case's torch_error, raised from C (no Python frame)
QWEN2 = "sglang/srt/models/qwen2.py"
QWEN3_MOE = "sglang/srt/models/qwen3_moe.py"
FP8 = "sglang/srt/layers/quantization/fp8.py"
FP8_UTILS = "sglang/srt/layers/quantization/fp8_utils.py"
FUSED_MOE = "sglang/srt/layers/moe/fused_moe_triton/fused_moe.py"
OUTPUT_PROCESSOR = "sglang/srt/managers/scheduler_output_processor_mixin.py"
STREAMS = "torch/cuda/streams.py"
PARALLEL_STATE = "sglang/srt/distributed/parallel_state.py"
OVERLAP_LOOP = scheduler_entry("scheduler.event_loop_overlap()", 3163, (("scheduler", "HOP:event_loop_overlap"),))

# -- device-side asserts -------------------------------------------------------------------------------------

# a token id past the embedding table: ATen's index kernel asserts on the device, torch reports it at the lookup
EMBEDDING_ASSERT = (
    *forward_frames("0.5.9"),
    frame_at(QWEN2, "forward", "hidden_states = self.model(input_ids, positions, forward_batch, input_embeds, pp_proxy_tensors=pp_proxy_tensors)", 470),
    frame_at(QWEN2, "forward", "hidden_states = self.embed_tokens(input_ids)", 300),
    printing_then("sglang/srt/layers/vocab_parallel_embedding.py", "forward",
                  device_asserts("../aten/src/ATen/native/cuda/Indexing.cu", 1236, "indexSelectSmallIndex", "srcIndex < srcSelectDimSize", range(64, 68)),
                  "output_parallel = self.quant_method.embedding(self, masked_input.long())", 490,
                  env=(("self", f"NS(quant_method=NS(embedding={C_RAISER}))"), ("masked_input", "NS(long=lambda: None)"))),
)

# sgl-deep-gemm 0.1.4's UE8M0 scale packing asserts on the device while the FP8 weights are post-processed;
# the host sees only CUDA's generic launch failure (719)
TVM_ERROR = (("tvm/__init__.py", ""), ("tvm/error.py", "class TVMError(RuntimeError):\n    pass\n\n\nclass InternalError(TVMError):\n    pass\n"))
UE8M0_PACKING = (
    *to_load_model("0.5.23"),
    frame_at(LOADER, "load_model", "self.load_weights_and_postprocess(model, self._get_all_weights(model_config, model), target_device)", 904),
    frame_at(LOADER, "load_weights_and_postprocess", "quant_method.process_weights_after_loading(module)", 1040),
    frame_at(FP8, "process_weights_after_loading", "self.process_weights_after_loading_block_quant(layer)", 640),
    frame_at(FP8, "process_weights_after_loading_block_quant", "requant_block_scale_ue8m0_for_deepgemm(layer, self.quant_config.weight_block_size)", 702),
    frame_at(FP8_UTILS, "requant_block_scale_ue8m0_for_deepgemm", "layer.weight.data, layer.weight_scale_inv.data = requant_weight_ue8m0(layer.weight.data, layer.weight_scale_inv.data, weight_block_size)", 1188),
    printing_then(FP8_UTILS, "requant_weight_ue8m0",
                  "Assertion failed: deep_gemm/include/deep_gemm/impls/smxx_layout.cuh:131, condition: (values[j] & 0x807fffffu) == 0\n" * 3,
                  "out_s = deep_gemm.get_mn_major_tma_aligned_packed_ue8m0_tensor(out_s)", 1150,
                  env=(("deep_gemm", f"NS(get_mn_major_tma_aligned_packed_ue8m0_tensor={C_RAISER})"), ("out_s", "None"))),
)
LAUNCH_FAILED_719 = ("tvm.error.InternalError", "CUDA driver error (jit_kernels/impls/smxx_layout.hpp:72): 719 (CUDA_ERROR_LAUNCH_FAILED)")
DEEPGEMM_DEVICE_ASSERT = scheduler_crash(
    "sglang-device-assert", "positive-0.5.23-deepgemm-launch-failure", UE8M0_PACKING, torch_error=LAUNCH_FAILED_719, extra_modules=TVM_ERROR,
    before=("DeepGemm is enabled but the scale_fmt of checkpoint is not ue8m0. This might cause accuracy degradation on Blackwell.",),
)

# DeepSeek-V4's hyper-connection GEMM, a DeepGEMM kernel with no sm_120 code, asserting while the kernels warm up
HYPER_CONNECTION_WARMUP = (
    *to_model_runner("0.5.23"),
    frame_at(MODEL_RUNNER, "initialize", "self.kernel_warmup()", 760),
    frame_at(MODEL_RUNNER, "kernel_warmup", "self._dummy_run(batch_size=self.req_to_token_pool.size)", 2590),
    frame_at(MODEL_RUNNER, "_dummy_run", "logits_output_or_pp_proxy_tensors = self.model.forward(forward_batch.input_ids, forward_batch.positions, forward_batch)", 2470),
    frame_at("sglang/srt/models/deepseek_v4.py", "forward", "mixed = self.hc_pre(hidden_states)", 1421),
    frame_at("sglang/srt/layers/hyper_connection.py", "forward", "deep_gemm.tf32_hc_prenorm_gemm(x, self.fn, out, sqrsum, self.num_split)", 96,
             env=(("deep_gemm", f"NS(tf32_hc_prenorm_gemm={C_RAISER})"),)),
)

# -- kernel faults that are not asserts: a launch failure seen at a stream sync, the NCCL watchdog's abort ----

# the overlap scheduler waiting for the previous batch's copy to the host
BATCH_RESULT_SYNC = (
    OVERLAP_LOOP,
    frame_at(SCHEDULER, "event_loop_overlap", "self.process_batch_result(tmp_batch, tmp_result)", 1135),
    frame_at(SCHEDULER, "process_batch_result", "self.process_batch_result_decode(batch, result)", 2468),
    frame_at(OUTPUT_PROCESSOR, "process_batch_result_decode", "result.copy_done.synchronize()", 262),
)
LAUNCH_FAILURE = scheduler_crash(
    "sglang-illegal-memory-access", "positive-0.5.9-unspecified-launch-failure",
    (*BATCH_RESULT_SYNC, frame_at(STREAMS, "synchronize", "super().synchronize()", 226, env=(("super", f"lambda: NS(synchronize={C_RAISER})"),))),
    before=(READY, DECODE), torch_error=cuda_error("unspecified launch failure"),
)

# torch's C++ abort when the NCCL watchdog thread finds the fault (libstdc++'s terminate notice, c10's what())
TORCH_LIB = "/opt/venv/lib/python3.11/site-packages/torch/lib"
WATCHDOG_ABORT = (
    "terminate called after throwing an instance of 'c10::DistBackendError'",
    "  what():  [PG ID 2 PG GUID 3 Rank 1] Process group watchdog thread terminated with exception: "
    "CUDA error: an illegal memory access was encountered" + CUDA_ASYNC_NOTE.rstrip("\n"),
    "",
    "Exception raised from c10_cuda_check_implementation at /pytorch/c10/cuda/CUDAException.cpp:43 (most recent call first):",
    f"frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 (0x7f8416d6c1b6 in {TORCH_LIB}/libc10.so)",
    f"frame #1: c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool) + 0x3c2 (0x7f8416e065a7 in {TORCH_LIB}/libc10_cuda.so)",
    f"frame #2: c10d::ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal() const + 0x50 (0x7f8416f3ad89 in {TORCH_LIB}/libtorch_cuda.so)",
    f"frame #3: c10d::ProcessGroupNCCL::watchdogHandler() + 0x213 (0x7f841706f56b in {TORCH_LIB}/libtorch_cuda.so)",
)

# -- kernels the GPU cannot run ------------------------------------------------------------------------------

# flashinfer's top-k renormalisation built without this GPU's architecture
TOP_K_RENORM = (
    *forward_frames("0.5.9")[:3],
    frame_at(TP_WORKER, "forward_batch_generation", "next_token_ids = self.model_runner.sample(logits_output, forward_batch)", 262),
    frame_at(MODEL_RUNNER, "sample", "next_token_ids = self.sampler(logits_output, forward_batch.sampling_info, forward_batch.return_logprob, forward_batch.top_logprobs_nums, forward_batch.token_ids_logprobs)", 2512),
    frame_at("sglang/srt/layers/sampler.py", "forward", "probs = top_k_renorm_prob(probs, sampling_info.top_ks)", 118),
    frame_at("flashinfer/sampling.py", "top_k_renorm_probs", "return get_sampling_module().top_k_renorm_probs(probs, *_to_tensor_scalar_tuple(top_k))", 1140,
             env=(("get_sampling_module", f"lambda: NS(top_k_renorm_probs={C_RAISER})"), ("_to_tensor_scalar_tuple", "lambda value: ()"))),
)

# an FP8 MoE layer compiling its Triton kernel on a GPU without FP8 (fp8e4nv needs sm_89+)
TRITON_ERRORS = (("triton/__init__.py", ""), ("triton/compiler/__init__.py", ""),
                 ("triton/compiler/errors.py", "class TritonError(Exception):\n    pass\n\n\nclass CompilationError(TritonError):\n    pass\n"))
MOE_KERNEL_COMPILE = (
    *forward_frames("0.5.9", "extend"),
    *decoder_to_mlp(QWEN3_MOE, (826, 690, 612), "hidden_states = self.mlp(hidden_states, forward_batch)"),
    frame_at(QWEN3_MOE, "forward", "return self.forward_normal(hidden_states)", 180),
    frame_at(QWEN3_MOE, "forward_normal", "final_hidden_states = self.experts(hidden_states, topk_output)", 213),
    frame_at("sglang/srt/layers/moe/fused_moe_triton/layer.py", "forward", "return self.quant_method.apply(layer=self, x=hidden_states, topk_output=topk_output)", 840),
    frame_at(FP8, "apply", "return fused_experts(x, layer.w13_weight, layer.w2_weight, topk_output=topk_output, use_fp8_w8a8=True)", 1120),
    frame_at(FUSED_MOE, "fused_experts_impl", "invoke_fused_moe_kernel(curr_hidden_states, w1, intermediate_cache1, a1_scale, w1_scale, curr_topk_weights, curr_topk_ids, sorted_token_ids, expert_ids, num_tokens_post_padded, False, topk_ids.shape[1], config, compute_type=compute_type, use_fp8_w8a8=use_fp8_w8a8)", 557),
    frame_at(FUSED_MOE, "invoke_fused_moe_kernel", "fused_moe_kernel[grid](A, B, C, A_scale, B_scale, topk_weights, sorted_token_ids, expert_ids, num_tokens_post_padded, B.shape[1], B.shape[2], sorted_token_ids.shape[0], topk_ids.numel())", 866),
    frame_at("triton/runtime/jit.py", "run", "kernel = self.compile(src, target=target, options=options.__dict__)", 591),
)
TRITON_COMPILER = "triton/compiler/compiler.py"
TRITON_CODEGEN = "triton/compiler/code_generator.py"
# Triton 3.0 and older: the type check asserts while lowering the kernel's fp8e4nv pointer argument
FP8_TYPE_ASSERT = (
    *MOE_KERNEL_COMPILE,
    frame_at(TRITON_COMPILER, "compile", "module = src.make_ir(options, codegen_fns, context)", 276),
    frame_at(TRITON_COMPILER, "make_ir", "return ast_to_ttir(self.fn, self, context=context, options=options, codegen_fns=codegen_fns)", 113),
    frame_at(TRITON_CODEGEN, "ast_to_ttir", "arg_types = list(map(str_to_ty, prototype.param_types))", 1296,
             env=(("str_to_ty", "NEXT"), ("prototype", "NS(param_types=['*fp8e4nv'])"))),
    frame_at(TRITON_CODEGEN, "str_to_ty", "return tl.pointer_type(ty.to_ir(builder))", 51, env=(("tl", "_Any()"), ("ty", "HOP:to_ir"))),
    failing_at("triton/language/core.py", "to_ir", """
        if self.name == 'fp8e4nv':
            assert builder.options.allow_fp8e4nv, "fp8e4nv data type is not supported on CUDA arch < 89"
        """, 460, env=(("self", "NS(name='fp8e4nv')"), ("builder", "NS(options=NS(allow_fp8e4nv=False))")), marker="assert"),
)
# Triton 3.1 and newer: code generation rejects the type and the compiler re-raises it as a CompilationError
FP8_TYPE_REJECTED = (
    *MOE_KERNEL_COMPILE,
    frame_at(TRITON_COMPILER, "compile", "module = src.make_ir(options, codegen_fns, module_map, context)", 278),
    failing_at(TRITON_COMPILER, "make_ir", """
        try:
            return ast_to_ttir(self.fn, self, context=context, options=options, codegen_fns=codegen_fns, module_map=module_map)
        except ValueError as e:
            raise CompilationError(f"at 1:0:\\ndef {self.fn.__name__}(\\n^\\n{e!r}") from None
        """, 81, marker="raise", env=(
            ("ast_to_ttir", "lambda *a, **k: (_ for _ in ()).throw(ValueError(\"type fp8e4nv not supported in this "
                            "architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\"))"),
            ("CompilationError", "__import__('triton.compiler.errors', fromlist=['x']).CompilationError"),
            ("self", "NS(fn=NS(__name__='fused_moe_kernel'))"), ("context", "None"), ("options", "None"),
            ("codegen_fns", "None"), ("module_map", "None"))),
)
# a near miss: an fp8 x bf16 dot, a kernel bug on any GPU (Triton's operand check in semantic.dot)
FP8_OPERAND_MISMATCH = (
    *MOE_KERNEL_COMPILE,
    frame_at(TRITON_COMPILER, "compile", "module = src.make_ir(options, codegen_fns, module_map, context)", 278),
    frame_at(TRITON_COMPILER, "make_ir", "return ast_to_ttir(self.fn, self, context=context, options=options, codegen_fns=codegen_fns, module_map=module_map)", 81),
    frame_at(TRITON_CODEGEN, "ast_to_ttir", "generator.visit(fn.parse())", 1482, env=(("generator", "HOP:visit"),)),
    failing_at("triton/language/semantic.py", "dot", """
        assert lhs.dtype in (tl.int8, tl.uint8, tl.float16, tl.bfloat16, tl.float32, tl.float64), f"Unsupported lhs dtype {lhs.dtype}"
        """, 1498, marker="assert", env=(("lhs", "NS(dtype='fp8e4nv')"),
                                         ("tl", "NS(int8='int8', uint8='uint8', float16='fp16', bfloat16='bf16', float32='fp32', float64='fp64')"))),
)

# -- native crashes: faulthandler's dump of the scheduler child -----------------------------------------------

# a tensor-parallel all-reduce crashing inside torch.distributed while serving
ALL_REDUCE_CRASH = (
    *forward_frames("0.5.9")[1:],  # native_crash's scheduler entry replaces the logging one
    *decoder_to_mlp(QWEN2, (470, 330, 250)),
    frame_at(QWEN2, "forward", "x, _ = self.down_proj(x)", 85),
    frame_at("sglang/srt/layers/linear.py", "forward", "output = tensor_model_parallel_all_reduce(output_parallel)", 1380),
    frame_at("sglang/srt/distributed/communication_op.py", "tensor_model_parallel_all_reduce", "return get_tp_group().all_reduce(input_)", 13),
    frame_at(PARALLEL_STATE, "all_reduce", "torch.distributed.all_reduce(input_, group=self.device_group)", 520),
    fatal_signal("torch/distributed/distributed_c10d.py", "all_reduce", 2806),
)
STREAM_SYNC_ABORT = (
    frame_at(SCHEDULER, "event_loop_overlap", "self.process_batch_result(tmp_batch, tmp_result)", 1135),
    frame_at(SCHEDULER, "process_batch_result", "self.process_batch_result_decode(batch, result)", 2468),
    frame_at(OUTPUT_PROCESSOR, "process_batch_result_decode", "result.copy_done.synchronize()", 262),
    fatal_signal(STREAMS, "synchronize", 226, "SIGABRT"),
)
# a near miss: CPython's own fatal error when a daemon thread holds stdout's lock at interpreter shutdown
SHUTDOWN_LOCK = (
    frame_at(SCHEDULER, "event_loop_overlap", "self.process_input_requests(recv_reqs)", 1118),
    failing_at(SCHEDULER, "process_input_requests", """
        ctypes.pythonapi.Py_FatalError(message)
        """, 1290, env=(("ctypes", "__import__('ctypes')"), ("message", repr(
            b"_enter_buffered_busy: could not acquire lock for <_io.BufferedWriter name='<stdout>'> at interpreter shutdown, "
            b"possibly due to daemon threads"))), marker="ctypes"),
)
OVERLAP_CALL = ("scheduler.event_loop_overlap()", 3163, (("scheduler", "HOP:event_loop_overlap"),))

# -- the scheduler watchdog ------------------------------------------------------------------------------------

BATCH_DUMP = ("self.cur_batch.batch_size()=3, self.cur_batch.reqs=[Req(rid=9c1f2e7a4b3d4c5e8f6a7b8c9d0e1f2a, input_ids=[151644, 872, 198], "
              "output_ids=[40, 1079])], self.token_to_kv_pool_allocator.available_size()=812544, self.tree_cache.evictable_size()=0, ")

CASES = (
    scheduler_crash("sglang-device-assert", "positive-0.5.9-embedding-index", EMBEDDING_ASSERT, before=(READY, DECODE),
                    torch_error=cuda_error("device-side assert triggered")),
    DEEPGEMM_DEVICE_ASSERT,
    LAUNCH_FAILURE.named("sglang-device-assert", "negative-launch-failure-without-assert"),

    LAUNCH_FAILURE,
    Case("sglang-illegal-memory-access", "positive-nccl-watchdog-abort", (), mode="lines", ranks="TP1", before=(DECODE,), raw_after=WATCHDOG_ABORT),
    DEEPGEMM_DEVICE_ASSERT.named("sglang-illegal-memory-access", "negative-deepgemm-device-assert"),

    scheduler_crash("sglang-deepgemm-unsupported-arch", "positive-0.5.23-tvm-hyper-connection", HYPER_CONNECTION_WARMUP, extra_modules=TVM_ERROR,
                    torch_error=("tvm.error.InternalError", "Assertion error (/deepgemm/csrc/apis/hyperconnection.hpp:56): Unsupported architecture")),

    scheduler_crash("sglang-no-kernel-image", "positive-0.5.9-invalid-device-function", TOP_K_RENORM, before=(READY, DECODE),
                    torch_error=("RuntimeError", "TopKRenormProb failed with error code invalid device function")),

    scheduler_crash("common-fp8-unsupported-gpu", "positive-triton-3.0-assert", FP8_TYPE_ASSERT, ranks="TP5", before=(READY,)),
    scheduler_crash("common-fp8-unsupported-gpu", "positive-triton-3.1-compilation-error", FP8_TYPE_REJECTED, before=(READY,), extra_modules=TRITON_ERRORS),
    scheduler_crash("common-fp8-unsupported-gpu", "negative-fp8-bf16-dot", FP8_OPERAND_MISMATCH, before=(READY,)),

    native_crash("common-native-crash", "positive-0.5.9-segfault-in-all-reduce", *OVERLAP_CALL, ALL_REDUCE_CRASH, before=(READY,)),
    native_crash("common-native-crash", "positive-0.5.9-abort-in-stream-sync", *OVERLAP_CALL, STREAM_SYNC_ABORT, before=(READY,)),
    native_crash("common-native-crash", "negative-shutdown-lock", *OVERLAP_CALL, SHUTDOWN_LOCK, before=(READY,)),

    # Native handlers' reports, printed without SGLang's record header (UCX's `Caught signal`, abseil's banner,
    # glog's FATAL check): NVIDIA/TensorRT-LLM#752, vllm-project/vllm#6783, apache/singa#805.
    Case("common-native-signal", "positive-ucx-caught-signal", (), mode="lines", ranks="TP0", before=(DECODE,), raw_after=(
        "[gpu-3:4242:0:4300] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x18)",
        "==== backtrace (tid:   4300) ====", " 0 0x0000000000042520 __sigaction()  ???:0",
        " 1 0x000000000001a2b3 ucp_worker_progress()  ucp_worker.c:2881", "=================================")),
    Case("common-native-signal", "positive-abseil-banner", (), mode="lines", ranks="TP0", before=(DECODE,), raw_after=(
        "*** SIGSEGV received at time=1773480415 on cpu 17 ***", "PC: @     0x7f3a10c0ffee  (unknown)  at::native::index_put_kernel()",
        "    @     0x7f3a2a042520       3744  (unknown)")),
    Case("common-native-signal", "positive-glog-check-failed", (), mode="lines", ranks="TP0", before=(DECODE,), raw_after=(
        "F0314 09:26:57.123456  4300 block_allocator.cc:88] Check failed: num_blocks > 0 (0 vs. 0) no free block",
        "*** Check failure stack trace: ***", "    @     0x7f3a10c0ffee  google::LogMessage::Fail()", "Aborted (core dumped)")),
    Case("common-native-signal", "negative-cpp-terminate", (), mode="lines", ranks="TP0", before=(DECODE,), raw_after=(
        "terminate called after throwing an instance of 'std::runtime_error'", "  what():  unexpected end of grammar",
        "Aborted (core dumped)")),

    Case("sglang-scheduler-watchdog-timeout", "positive-0.4.10-py-spy-missing", (), mode="lines", ranks="TP3", after=(SIGQUIT,), before=(
        DECODE, "Watchdog timeout (self.watchdog_timeout=300)", BATCH_DUMP, "Pyspy failed to dump PID 4242. Error: /bin/sh: py-spy: command not found")),
    Case("sglang-scheduler-watchdog-timeout", "positive-0.5.23-hard-watchdog", (), mode="lines", ranks="TP0", after=(SIGQUIT,), before=(
        DECODE, "Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)")),
    Case("sglang-scheduler-watchdog-timeout", "negative-soft-watchdog", (), mode="lines", ranks="TP0", before=(
        DECODE, "Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=True)", DECODE)),
    scheduler_crash("sglang-scheduler-watchdog-timeout", "negative-nccl-collective-timeout", TP_ALL_REDUCE, ranks="TP2", before=(DECODE,),
                    torch_error=NCCL_COLLECTIVE_TIMEOUT),
)
