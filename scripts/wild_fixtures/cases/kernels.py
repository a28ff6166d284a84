"""CUDA kernels failing on the device: illegal memory accesses (torch, Triton, flashinfer, the NCCL
watchdog's abort), device-side asserts (ATen, DeepGEMM), no kernel image for the GPU, DeepGEMM and
Triton FP8 refusing the architecture.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from pattern_fixtures.engine import Frame
from pattern_fixtures.mirror import (
    CAPTURE_HINTS,
    MODEL_RUNNER,
    SCHEDULE_BATCH,
    SCHEDULER,
    TP_WORKER,
    capture_failed_at,
    failing_at,
    frame_at,
    scheduler_entry,
    to_model_runner,
)

from .. import composed, paste
from ..blocks import C_RAISE, c_attr, c_property, crash, no_grad, records, time_only_records
from ..corpus import DOCKER, IMAGE, Expect, Install, Run, Text, Weave, WildCase

IMA = "an illegal memory access was encountered"
OVERLAP = ("scheduler.event_loop_overlap()", (("scheduler", "HOP:event_loop_overlap"),))
NORMAL = ("scheduler.event_loop_normal()", (("scheduler", "HOP:event_loop_normal"),))
UPGRADE = ((),)  # an engine or library upgrade: no flag change


def cuda(text: str, help_line: str = "") -> tuple[str, str]:
    return ("RuntimeError", composed.cuda_error(text, help_line))


# -- sglang#1467: DeepSeek-V2, 8 TP ranks, IMA in decode (0.3.x Triton decode attention) -----------------------------

V03_TP_WORKER = "sglang/srt/managers/tp_worker.py"


def v03_decode_crash(rank: int) -> Run:
    """0.3's ModelTpServer logging the failure, re-raising it, and run_tp_server logging it again."""
    frames = (
        failing_at(V03_TP_WORKER, "run_tp_server", """
            try:
                model_server.exposed_step(recv_reqs)
            except Exception:
                logger.error("Exception in run_tp_server:\\n" + get_exception_traceback())
            """, 917, env=(("model_server", "HOP:exposed_step"), ("recv_reqs", "[]"), ("logger", "__import__('logging').getLogger('sglang')")),
            marker="model_server"),
        failing_at(V03_TP_WORKER, "exposed_step", """
            try:
                self.forward_step()
            except Exception:
                logger.error("Exception in ModelTpServer:\\n" + get_exception_traceback())
                raise
            """, 230, env=(("self", "HOP:forward_step"), ("logger", "__import__('logging').getLogger('sglang')")), marker="self"),
        frame_at(V03_TP_WORKER, "forward_step", "self.forward_decode_batch(self.running_batch)", 262),
        frame_at(V03_TP_WORKER, "forward_decode_batch", "next_token_ids = next_token_ids.tolist()", 769,
                 env=(("next_token_ids", c_attr("tolist")),)),
    )
    before = ("Decode batch. #running-req: 1, #token: 43, token usage: 0.00, gen throughput (token/s): 0.53, #queue-req: 0",) if rank == 0 else ()
    return Run(crash(frames, ranks=f"TP{rank}", before=before, after=(), torch_error=cuda(IMA), stamp="2024-09-19 15:58:50"),
               primary=rank == 0, reformat=time_only_records)


STARTUP_0_3 = Run(records(
    "Load weight end. type=DeepseekV2ForCausalLM, dtype=torch.bfloat16, avail mem=20.91 GB",
    "Memory pool end. avail mem=18.48 GB", ranks="TP0", stamp="2024-09-19 17:43:26"), reformat=time_only_records)
NCCL_READY = Text(composed.nccl_info("train-7f3k2-master-0", 32478, 34896, 2, (
    "comm 0x55b978e00250 rank 2 nranks 8 cudaDev 2 nvmlDev 2 busId 30 commId 0x5d81e2a90c4f7b13 - Init COMPLETE",)))
SERVING_0_3 = Run(records(
    "Prefill batch. #new-seq: 1, #new-token: 9, #cached-token: 1, cache hit rate: 5.88%, #running-req: 0, #queue-req: 0",
    ranks="TP0", stamp="2024-09-19 15:58:38"), reformat=time_only_records)
READY_0_3 = Run(records("The server is fired up and ready to roll!", ranks="", stamp="2024-09-19 15:57:48"), reformat=time_only_records)
IMA_0_3 = Expect("illegal-memory-access", *cuda(IMA), frame="forward_decode_batch", fix=UPGRADE)
IMA_0_3_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/1467", kind="cuda-illegal-memory-access", engine_version="0.3.1",
    fixed_in="0.3.1.post3", resolution="Engine bug in the Triton decode-attention path; fixed by commit a68cb201, released in v0.3.1.post3.",
)

# -- sglang#8296: speculative decoding, CUDA graphs off; the NCCL watchdog thread aborts on the IMA ------------------

WATCHDOG_WHAT = composed.watchdog_terminated("PG ID 2 PG GUID 3", 1, composed.cuda_error(IMA))
CUDA_CHECK_AT = "c10_cuda_check_implementation at /pytorch/c10/cuda/CUDAException.cpp:43"
WATCHDOG_IMA = Text(
    composed.glog(1, "E", "722 04:17:52.930214455", "ProcessGroupNCCL.cpp:1595",
                  composed.what_text(WATCHDOG_WHAT, CUDA_CHECK_AT, composed.WATCHDOG_STACK).rstrip("\n"))
    + composed.cpp_abort("c10::DistBackendError", WATCHDOG_WHAT, CUDA_CHECK_AT, composed.WATCHDOG_STACK), primary=True)
OFFLINE_STDOUT = Text("Loaded 1319 questions, kept 1200 after filtering\n" + "".join(
    f"Loading safetensors checkpoint shards: {p:3d}% Completed | {n}/4 [00:{5 * n:02d}<00:{16 - 5 * n if n < 4 else 0:02d},  5.62s/it]\n"
    for n, p in ((0, 0), (1, 25), (2, 50), (3, 75), (4, 100))))
WATCHDOG_IMA_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/8296", kind="cuda-illegal-memory-access", engine_version="",
    resolution="No fix confirmed (open). The IMA surfaces on the NCCL watchdog thread, which aborts the process.",
)

# -- verl#1611: GRPO with SGLang async rollout; the IMA surfaces at seq_lens.cpu() in the scheduler (Ray) ------------

VERL_IMA_FRAMES = (
    scheduler_entry(*OVERLAP[:1], 2307, OVERLAP[1]), no_grad(116),
    frame_at(SCHEDULER, "event_loop_overlap", "result = self.run_batch(batch)", 662),
    frame_at(SCHEDULER, "run_batch", "model_worker_batch = batch.get_model_worker_batch()", 1496),
    frame_at(SCHEDULE_BATCH, "get_model_worker_batch", "seq_lens_cpu = self.seq_lens.cpu()", 1602, env=(("self", c_attr("cpu")),)),
)
VERL_IMA = Run(crash(VERL_IMA_FRAMES, ranks="TP1", torch_error=cuda(IMA), stamp="2025-05-23 18:02:40"), primary=True)
VERL_ABORT = composed.cpp_abort("c10::Error", composed.cuda_error(IMA), "c10_cuda_check_implementation at /pytorch/c10/cuda/CUDAException.cpp:43",
                                composed.python_stack("sglang::scheduler_TP1"))
CAPTURING = "Capturing batches (avail_mem=29.01 GB):  87%|████████▋ | 20/23 [00:07<00:00,  3.19it/s] [repeated 22x across cluster]\n"
VERL_IMA_EXPECT = Expect("illegal-memory-access", *cuda(IMA), frame="get_model_worker_batch", fix=UPGRADE)
VERL_IMA_THREAD = dict(
    thread="https://github.com/verl-project/verl/issues/1611", kind="cuda-illegal-memory-access", engine_version="0.4.6.post4",
    install=Install("/opt/ac2/lib/python3.11/site-packages"),
    resolution="Contributors: it no longer reproduces with the latest sglang + verl; raising the rollout gpu_memory_utilization also avoided it.",
)


def verl_rollout(ip: str = "") -> tuple[Weave | Run | Text, ...]:
    """Two rollout actors' output under Ray: rank 0 still capturing, rank 1's scheduler failing."""
    crash_part = replace(VERL_IMA, reformat=partial(paste.ray, pid=4181, ip=ip))
    other = Run(records("Cache flushed successfully!", ranks="", stamp="2025-05-23 18:02:42"), reformat=partial(paste.ray, pid=4180, ip=ip))
    return (Weave((Text(CAPTURING), crash_part), by="record"), other, Text(paste.ray(VERL_ABORT, pid=4181, ip=ip)))


# -- sglang#5491: EAGLE + flashinfer: two writers' CUDA Error 700 lines mixed, then the prefill failure --------------

FLASHINFER_INCLUDE = "/opt/conda/lib/python3.11/site-packages/flashinfer/data/include/flashinfer/attention/prefill.cuh"
LAUNCH = "cudaLaunchKernel((void*)kernel, nblks, nthrs, args, smem_size, stream)"
MIXED_700 = Text(composed.concurrent_writes(composed.flashinfer_fragments(IMA, 700, FLASHINFER_INCLUDE, 2349, LAUNCH), (3, 1, 1, 2, 3, 2, 1, 1, 2, 1, 3)))
EAGLE_PREFILL = crash((
    scheduler_entry(*NORMAL[:1], 2011, NORMAL[1]), no_grad(116),
    frame_at(SCHEDULER, "event_loop_normal", "result = self.run_batch(batch)", 619),
    frame_at(SCHEDULER, "run_batch", "logits_output, next_token_ids, bid, num_accepted_tokens, can_run_cuda_graph = self.draft_worker.forward_batch_speculative_generation(batch)", 1367),
    frame_at("sglang/srt/speculative/eagle_worker.py", "forward_batch_speculative_generation", "logits_output, verify_output, model_worker_batch, can_run_cuda_graph = self.verify(batch, spec_info)", 258),
    frame_at("sglang/srt/speculative/eagle_worker.py", "verify", "logits_output, _, can_run_cuda_graph = self.target_worker.forward_batch_generation(model_worker_batch, skip_sample=True)", 495),
    frame_at(TP_WORKER, "forward_batch_generation", "logits_output, can_run_cuda_graph = self.model_runner.forward(forward_batch, pp_proxy_tensors=pp_proxy_tensors)", 205),
    frame_at(MODEL_RUNNER, "forward", "return self.forward_extend(forward_batch, skip_attn_backend_init=skip_attn_backend_init, pp_proxy_tensors=pp_proxy_tensors)", 1106),
    frame_at(MODEL_RUNNER, "forward_extend", "return self.model.forward(forward_batch.input_ids, forward_batch.positions, forward_batch, **kwargs)", 1030),
    frame_at("sglang/srt/models/llama.py", "forward", "hidden_states = self.model(input_ids, positions, forward_batch, input_embeds, pp_proxy_tensors=pp_proxy_tensors)", 440),
    frame_at("sglang/srt/models/llama.py", "forward", "hidden_states, residual = layer(positions, hidden_states, forward_batch, residual)", 330, env=(("layer", "NEXT"),)),
    frame_at("sglang/srt/models/llama.py", "forward", "hidden_states = self.self_attn(positions=positions, hidden_states=hidden_states, forward_batch=forward_batch)", 258),
    frame_at("sglang/srt/models/llama.py", "forward", "attn_output = self.attn(q, k, v, forward_batch)", 191),
    frame_at("sglang/srt/layers/radix_attention.py", "forward", "return forward_batch.attn_backend.forward(q, k, v, self, forward_batch, save_kv_cache)", 100),
    frame_at("sglang/srt/layers/attention/base_attn_backend.py", "forward", "return self.forward_extend(q, k, v, layer, forward_batch, save_kv_cache=save_kv_cache)", 68),
    frame_at("sglang/srt/layers/attention/flashinfer_backend.py", "forward_extend", "o = prefill_wrapper_paged.forward(q.view(-1, layer.tp_q_head_num, layer.head_dim), forward_batch.token_to_kv_pool.get_kv_buffer(layer.layer_id), causal=not layer.is_cross_attention, sm_scale=layer.scaling, logits_soft_cap=logits_soft_cap)", 445),
    frame_at("flashinfer/prefill.py", "forward", "return self.run(q, paged_kv_cache, k_scale=k_scale, v_scale=v_scale)", 1475),
    frame_at("flashinfer/prefill.py", "run", "self._cached_module.paged_run(*run_args)", 1598, env=(("self", c_attr("paged_run")), ("run_args", "()"))),
), torch_error=("RuntimeError", f"BatchPrefillWithPagedKVCache failed with error {IMA}"), stamp="2025-04-22 15:12:45")
EAGLE_PREFILL_EXPECT = Expect("illegal-memory-access", "RuntimeError", f"BatchPrefillWithPagedKVCache failed with error {IMA}", frame="run")
EAGLE_PREFILL_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/5491", kind="flashinfer-cuda-error", engine_version="0.4.5",
    install=Install("/opt/conda/lib/python3.11/site-packages"),
    resolution="No fix confirmed; later commenters asked for a workaround other than switching the attention backend.",
)

# -- sglang#17274: Triton's launcher reports the IMA (Kubernetes, CRI log file) ---------------------------------------

TRITON_IMA = crash((
    scheduler_entry(*OVERLAP[:1], 3071, OVERLAP[1]), no_grad(120),
    frame_at(SCHEDULER, "event_loop_overlap", "batch_result = self.run_batch(batch)", 1120),
    frame_at(SCHEDULER, "run_batch", "batch_result = self.model_worker.forward_batch_generation(model_worker_batch)", 2310),
    frame_at(TP_WORKER, "forward_batch_generation", "logits_output, can_run_cuda_graph = self.model_runner.forward(forward_batch, pp_proxy_tensors=pp_proxy_tensors)", 240),
    frame_at(MODEL_RUNNER, "forward", "output = self._forward_raw(forward_batch, skip_attn_backend_init, pp_proxy_tensors)", 2390),
    frame_at(MODEL_RUNNER, "_forward_raw", "ret = self.forward_decode(forward_batch, skip_attn_backend_init=skip_attn_backend_init, pp_proxy_tensors=pp_proxy_tensors)", 2430),
    frame_at(MODEL_RUNNER, "forward_decode", "return self.model.forward(forward_batch.input_ids, forward_batch.positions, forward_batch, **kwargs)", 2290),
    frame_at("sglang/srt/models/qwen3.py", "forward", "hidden_states = self.model(input_ids, positions, forward_batch, input_embeds, pp_proxy_tensors=pp_proxy_tensors)", 402),
    frame_at("sglang/srt/layers/attention/triton_backend.py", "forward_decode", "self.decode_attention_fwd(q.view(-1, layer.tp_q_head_num, layer.qk_head_dim), forward_batch.token_to_kv_pool.get_key_buffer(layer.layer_id), forward_batch.token_to_kv_pool.get_value_buffer(layer.layer_id), o.view(-1, layer.tp_q_head_num, layer.v_head_dim), kv_indptr, kv_indices, self.forward_metadata.attn_logits, self.forward_metadata.attn_lse, self.forward_metadata.num_kv_splits, self.max_kv_splits, layer.scaling, logit_cap=logits_soft_cap, sinks=sinks)", 1010),
    frame_at("sglang/srt/layers/attention/triton_ops/decode_attention.py", "decode_attention_fwd", "decode_attention_fwd_grouped(q, k_buffer, v_buffer, o, kv_indptr, kv_indices, attn_logits, attn_lse, num_kv_splits, max_kv_splits, sm_scale, logit_cap=logit_cap, sinks=sinks)", 760),
    frame_at("sglang/srt/layers/attention/triton_ops/decode_attention.py", "decode_attention_fwd_grouped", "_decode_grouped_att_m_fwd(q, k_buffer, v_buffer, attn_logits, attn_lse, kv_indptr, kv_indices, num_kv_splits, max_kv_splits, sm_scale, logit_cap)", 705),
    frame_at("sglang/srt/layers/attention/triton_ops/decode_attention.py", "_decode_grouped_att_m_fwd", "_fwd_grouped_kernel_stage1[grid](q, k_buffer, v_buffer, sm_scale, kv_indptr, kv_indices, att_out, att_lse, num_kv_splits)", 535,
             env=(("grid", "(8, 4, 16)"),)),
    frame_at("triton/runtime/jit.py", "run", "kernel.run(grid_0, grid_1, grid_2, stream, kernel.function, kernel.packed_metadata, launch_metadata, self.CompiledKernel.launch_enter_hook, self.CompiledKernel.launch_exit_hook, *bound_args.values())", 757,
             env=(("kernel", c_attr("run")),)),
), torch_error=("RuntimeError", f"Triton Error [CUDA]: {IMA}"), stamp="2026-01-17 18:48:05")

# -- sglang#1279 / #1274: device-side asserts in the prefill forward (0.2.x) --------------------------------------------

DATABRICKS = Install("/local_disk0/.ephemeral_nfs/envs/pythonEnv-4c1e9a27-8d3f-4b52-a6e0-7f2d19c3b8e5/lib/python3.11/site-packages")
V02_TP_WORKER = "sglang/srt/managers/controller/tp_worker.py"


def v02_prefill_assert(rank: int, primary: bool = False) -> Run:
    frames = (
        failing_at(V02_TP_WORKER, "exposed_step", """
            try:
                self.forward_step()
            except Exception:
                logger.error("Exception in ModelTpServer:\\n" + get_exception_traceback())
            """, 213, env=(("self", "HOP:forward_step"), ("logger", "__import__('logging').getLogger('sglang')")), marker="self"),
        no_grad(116),
        frame_at(V02_TP_WORKER, "forward_step", "self.forward_prefill_batch(new_batch)", 250),
        frame_at(V02_TP_WORKER, "forward_prefill_batch", "output = self.model_runner.forward(batch, ForwardMode.EXTEND)", 489),
        frame_at("sglang/srt/model_executor/model_runner.py", "forward", "return self.forward_extend(batch)", 579),
        no_grad(116),
        frame_at("sglang/srt/model_executor/model_runner.py", "forward_extend", "return self.model.forward(batch.input_ids, input_metadata.positions, input_metadata)", 543),
        frame_at("sglang/srt/models/llama2.py", "forward", "return self.logits_processor(input_ids, hidden_states, self.lm_head.weight, input_metadata)", 326),
        frame_at("sglang/srt/layers/logits_processor.py", "forward", "torch.cat([pruned_input_ids[1:], torch.tensor([0], device=\"cuda\")])", 268,
                 env=(("torch", f"NS(cat={C_RAISE}, tensor=lambda *a, **k: None)"), ("pruned_input_ids", "[0, 1]"))),
    )
    asserts = composed.index_asserts("../aten/src/ATen/native/cuda/IndexKernel.cu", 92, '-sizes[i] <= index && index < sizes[i] && "index out of bounds"', range(rank, rank + 4))
    return Run(crash(frames, ranks=f"TP{rank}", after=(), torch_error=cuda("device-side assert triggered"), stamp="2024-08-30 17:28:55",
                     before=()), primary=primary, reformat=lambda text: asserts + text)


ASSERT_EXPECT = Expect("device-assert", *cuda("device-side assert triggered"), frame="forward")

# -- sglang#29993: DeepGEMM 0.1.4's UE8M0 device assert while loading GLM-5.2-FP8 on 8xB200 (CI) ----------------------

UE8M0_ASSERT = "Assertion failed: deep_gemm/include/deep_gemm/impls/smxx_layout.cuh:131, condition: (values[j] & 0x807fffffu) == 0\n"
TVM_ERROR = (("tvm/__init__.py", ""), ("tvm/error.py", "class TVMError(RuntimeError):\n    pass\n\n\nclass InternalError(TVMError):\n    pass\n"))
UE8M0_719 = ("tvm.error.InternalError", "CUDA driver error (jit_kernels/impls/smxx_layout.hpp:72): 719 (CUDA_ERROR_LAUNCH_FAILED)")
FP8_UTILS = "sglang/srt/layers/quantization/fp8_utils.py"
UE8M0 = crash((
    *to_model_runner("0.5.23"),
    frame_at(MODEL_RUNNER, "initialize", "self.load_model()", 714),
    frame_at(MODEL_RUNNER, "load_model", "self.model = self.loader.load_model(model_config=self.model_config, device_config=DeviceConfig(self.device, self.gpu_id))", 1300),
    frame_at("sglang/srt/model_loader/loader.py", "load_model", "self.load_weights_and_postprocess(model, self._get_all_weights(model_config, model), target_device)", 904),
    frame_at("sglang/srt/model_loader/loader.py", "load_weights_and_postprocess", "quant_method.process_weights_after_loading(module)", 1040),
    frame_at("sglang/srt/layers/quantization/fp8.py", "process_weights_after_loading", "self.process_weights_after_loading_block_quant(layer)", 640),
    frame_at("sglang/srt/layers/quantization/fp8.py", "process_weights_after_loading_block_quant", "requant_block_scale_ue8m0_for_deepgemm(layer, self.quant_config.weight_block_size)", 702),
    frame_at(FP8_UTILS, "requant_block_scale_ue8m0_for_deepgemm", "layer.weight.data, layer.weight_scale_inv.data = requant_weight_ue8m0(layer.weight.data, layer.weight_scale_inv.data, weight_block_size)", 1188),
    frame_at(FP8_UTILS, "requant_weight_ue8m0", "out_s = transform_scale_ue8m0(out_s, mn=out_w.shape[-2])", 1150),
    frame_at(FP8_UTILS, "transform_scale_ue8m0", "sf = deep_gemm.get_mn_major_tma_aligned_packed_ue8m0_tensor(sf)", 1102,
             env=(("deep_gemm", c_attr("get_mn_major_tma_aligned_packed_ue8m0_tensor")), ("sf", "None"))),
), before=("DeepGemm is enabled but the scale_fmt of checkpoint is not ue8m0. This might cause accuracy degradation on Blackwell.",),
   torch_error=UE8M0_719, extra_modules=TVM_ERROR, stamp="2026-06-18 02:41:07")
UE8M0_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/29993", kind="deepgemm-device-assert", engine_version="",
    resolution="Regression from the sgl-deep-gemm 0.1.3 -> 0.1.4 bump (PR #29554): 0.1.4 asserts power-of-two scales. Pinning 0.1.3 avoids it.",
)

# -- no kernel image for the GPU ------------------------------------------------------------------------------------------

SDIST = "/tmp/build-via-sdist-q3k8x2ma/flashinfer-0.1.4+cu121torch2.4/include/flashinfer/attention/handler.cuh"
NO_IMAGE = "no kernel image is available for execution on the device"
T4_FLASHINFER = Text(
    composed.flashinfer_cuda_error(NO_IMAGE, 209, SDIST, 169, "cudaOccupancyMaxActiveBlocksPerMultiprocessor(&num_blocks_per_sm, kernel, num_threads, smem_size)")
    + composed.flashinfer_cuda_error(NO_IMAGE, 209, SDIST, 324, "work_estimation_func(split_kv, max_grid_size, max_num_pages_per_batch, new_batch_size, batch_size, indptr_h, num_qo_heads, page_size, IsCUDAGraphEnabled(), stream_)")
    + "Process Process-1:\n", primary=True)

ROTARY = "sglang/srt/layers/rotary_embedding.py"
T4_TORCH = crash((
    *to_model_runner("0.5.23"),
    frame_at(MODEL_RUNNER, "initialize", "reserve_rope_cache_for_long_sequences(self.model, self.server_args, self.model_config, logger)", 742),
    frame_at("sglang/srt/utils/common.py", "reserve_rope_cache_for_long_sequences", "module._ensure_cos_sin_cache_length(reserve_len - 1)", 3970,
             env=(("module", "HOP:_ensure_cos_sin_cache_length"), ("reserve_len", "32769"))),
    frame_at(ROTARY, "_ensure_cos_sin_cache_length", "t_new = torch.arange(start, new_len, dtype=inv_freq.dtype, device=device)", 210,
             env=(("torch", c_property("arange")),)),
), torch_error=("torch.AcceleratorError", composed.cuda_error(NO_IMAGE, "cudaErrorNoKernelImageForDevice")), stamp="2026-05-04 11:20:37")
T4_TORCH_EXPECT = Expect("gpu-arch-unsupported", "torch.AcceleratorError", composed.cuda_error(NO_IMAGE, "cudaErrorNoKernelImageForDevice"),
                         frame="_ensure_cos_sin_cache_length", fix=UPGRADE)
T4_TORCH_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/24224", kind="no-kernel-image", engine_version="",
    resolution="No fix confirmed. A plain torch.arange fails on every rank: the installed torch has no sm_75 kernels, so backend flags cannot help.",
)


def t4_rank(rank: int) -> Run:
    case = replace(T4_TORCH, ranks=f"TP{rank}")
    return Run(case if rank == 0 else replace(case, after=()), primary=rank == 0)


RMSNORM = ("RuntimeError", f"RMSNorm failed with error code {NO_IMAGE}")
GRAPH_RUNNER = "sglang/srt/model_executor/cuda_graph_runner.py"
SM120_RMSNORM = crash((
    scheduler_entry("scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)", 2561, (("Scheduler", "NEXT"),)),
    frame_at(SCHEDULER, "__init__", "self.tp_worker = TpWorkerClass(server_args=server_args, gpu_id=gpu_id, tp_rank=tp_rank, moe_ep_rank=moe_ep_rank, pp_rank=pp_rank, dp_rank=dp_rank, nccl_port=port_args.nccl_port)", 323),
    frame_at("sglang/srt/managers/tp_worker_overlap_thread.py", "__init__", "self.worker = TpModelWorker(server_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank, nccl_port)", 67),
    frame_at(TP_WORKER, "__init__", "self.model_runner = ModelRunner(model_config=self.model_config, mem_fraction_static=server_args.mem_fraction_static, gpu_id=gpu_id, tp_rank=tp_rank, tp_size=server_args.tp_size, moe_ep_rank=moe_ep_rank, moe_ep_size=server_args.ep_size, pp_rank=pp_rank, pp_size=server_args.pp_size, nccl_port=nccl_port, server_args=server_args, is_draft_worker=is_draft_worker, req_to_token_pool=req_to_token_pool, token_to_kv_pool_allocator=token_to_kv_pool_allocator)", 84),
    frame_at(MODEL_RUNNER, "__init__", "self.initialize(min_per_gpu_memory)", 241),
    frame_at(MODEL_RUNNER, "initialize", "self.init_cuda_graphs()", 338),
    frame_at(MODEL_RUNNER, "init_cuda_graphs", "self.cuda_graph_runner = CudaGraphRunner(self)", 1496),
    capture_failed_at(GRAPH_RUNNER, 388, "0.4.9"),
    frame_at(GRAPH_RUNNER, "capture", "graph, output_buffers = self.capture_one_batch_size(bs, forward)", 492),
    frame_at(GRAPH_RUNNER, "capture_one_batch_size", "run_once()", 671),
    frame_at(GRAPH_RUNNER, "run_once", "logits_output_or_pp_proxy_tensors = forward(input_ids, forward_batch.positions, forward_batch, **kwargs)", 658,
             env=(("forward", "NEXT"), ("kwargs", "{}"))),
    frame_at("sglang/srt/models/qwen3.py", "forward", "hidden_states = self.model(input_ids, positions, forward_batch, input_embeds, pp_proxy_tensors=pp_proxy_tensors)", 402),
    frame_at("sglang/srt/models/qwen2.py", "forward", "hidden_states, residual = layer(positions, hidden_states, forward_batch, residual)", 330, env=(("layer", "NEXT"),)),
    frame_at("sglang/srt/models/qwen3.py", "forward", "hidden_states, residual = self.input_layernorm(hidden_states, residual)", 251),
    frame_at("sglang/srt/custom_op.py", "forward", "return self._forward_method(*args, **kwargs)", 23),
    frame_at("sglang/srt/layers/layernorm.py", "forward_cuda", "fused_add_rmsnorm(x, residual, self.weight.data, self.variance_epsilon)", 82),
    frame_at("sgl_kernel/elementwise.py", "fused_add_rmsnorm", "torch.ops.sgl_kernel.fused_add_rmsnorm.default(input, residual, weight, eps, enable_pdl)", 83),
), before=("Capture cuda graph begin. This can take up to several minutes. avail mem=4.17 GB",), torch_error=RMSNORM, stamp="2025-08-25 21:14:03")
SM120_MESSAGE = ("Capture cuda graph failed: " + RMSNORM[1] + "\nPossible solutions:\n" + "\n".join(CAPTURE_HINTS["0.4.9"])
                 + "\nOpen an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \n")

DEEPSEEK_V4 = "sglang/srt/models/deepseek_v4.py"
HC_ARCH = ("tvm.error.InternalError", "Assertion error (/deepgemm/csrc/apis/hyperconnection.hpp:56): Unsupported architecture")
SM120_DEEPGEMM = crash((
    *to_model_runner("0.5.23"),
    frame_at(MODEL_RUNNER, "initialize", "self.kernel_warmup()", 760),
    frame_at(MODEL_RUNNER, "kernel_warmup", "self._dummy_run(batch_size=self.req_to_token_pool.size)", 2590),
    frame_at(MODEL_RUNNER, "_dummy_run", "logits_output_or_pp_proxy_tensors = self.model.forward(forward_batch.input_ids, forward_batch.positions, forward_batch)", 2470),
    frame_at(DEEPSEEK_V4, "forward", "hidden_states = self.model(input_ids, positions, forward_batch, input_embeds, pp_proxy_tensors)", 1712),
    frame_at(DEEPSEEK_V4, "forward", "hidden_states = layer(positions, hidden_states, forward_batch)", 1630, env=(("layer", "NEXT"),)),
    frame_at(DEEPSEEK_V4, "forward", "mixed = self.hc_pre(hidden_states)", 1421),
    frame_at("sglang/srt/layers/hyper_connection.py", "forward", "deep_gemm.tf32_hc_prenorm_gemm(x, self.fn, out, sqrsum, self.num_split)", 96,
             env=(("deep_gemm", c_attr("tf32_hc_prenorm_gemm")),)),
), torch_error=HC_ARCH, extra_modules=TVM_ERROR, stamp="2026-04-29 08:02:51")

# -- FP8 on Ampere: Triton refuses fp8e4nv (skypilot#4723, sglang#12887) ----------------------------------------------

FUSED_MOE = "sglang/srt/layers/moe/fused_moe_triton/fused_moe.py"
TRITON_CORE = (("triton/__init__.py", ""), ("triton/language/__init__.py", ""))


def fused_moe_launch(kernel_line: int) -> tuple[Frame, ...]:
    return (
        frame_at(FUSED_MOE, "invoke_fused_moe_kernel", "fused_moe_kernel[grid](A, B, C, A_scale, B_scale, topk_weights, sorted_token_ids, expert_ids, num_tokens_post_padded, B.shape[1], B.shape[2], sorted_token_ids.shape[0], topk_ids.numel())", kernel_line,
                 env=(("grid", "(1024, 8)"),)),
    )


SKYPILOT_FP8 = crash((
    scheduler_entry("scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)", 1796, (("Scheduler", "NEXT"),)),
    frame_at(SCHEDULER, "__init__", "self.tp_worker = TpWorkerClass(server_args=server_args, gpu_id=gpu_id, tp_rank=tp_rank, dp_rank=dp_rank, nccl_port=port_args.nccl_port)", 249),
    frame_at(TP_WORKER, "__init__", "self.model_runner = ModelRunner(model_config=self.model_config, mem_fraction_static=server_args.mem_fraction_static, gpu_id=gpu_id, tp_rank=tp_rank, tp_size=server_args.tp_size, nccl_port=nccl_port, server_args=server_args)", 68),
    frame_at(MODEL_RUNNER, "__init__", "self.init_cuda_graphs()", 215),
    frame_at(MODEL_RUNNER, "init_cuda_graphs", "self.cuda_graph_runner = CudaGraphRunner(self)", 810),
    frame_at(GRAPH_RUNNER, "__init__", "self.capture()", 252),
    frame_at(GRAPH_RUNNER, "capture", "graph, output_buffers = self.capture_one_batch_size(bs, forward)", 310),
    frame_at(GRAPH_RUNNER, "capture_one_batch_size", "run_once()", 378),
    frame_at(GRAPH_RUNNER, "run_once", "logits_output = forward(input_ids, forward_batch.positions, forward_batch)", 371, env=(("forward", "NEXT"),)),
    frame_at("sglang/srt/models/deepseek_v2.py", "forward", "hidden_states = self.model(input_ids, positions, forward_batch)", 858),
    frame_at("sglang/srt/models/deepseek_v2.py", "forward", "hidden_states, residual = layer(positions, hidden_states, forward_batch, residual)", 819, env=(("layer", "NEXT"),)),
    frame_at("sglang/srt/models/deepseek_v2.py", "forward", "hidden_states = self.mlp(hidden_states)", 780),
    frame_at("sglang/srt/models/deepseek_v2.py", "forward", "self.experts(hidden_states=hidden_states, router_logits=router_logits)", 133),
    frame_at("sglang/srt/layers/moe/fused_moe_triton/layer.py", "forward", "final_hidden_states = self.quant_method.apply(layer=self, x=hidden_states, router_logits=router_logits, top_k=self.top_k, renormalize=self.renormalize, use_grouped_topk=self.use_grouped_topk)", 587),
    frame_at("sglang/srt/layers/quantization/fp8.py", "apply", "return fused_experts(x, layer.w13_weight, layer.w2_weight, topk_weights=topk_weights, topk_ids=topk_ids, inplace=True, use_fp8_w8a8=True)", 789),
    frame_at(FUSED_MOE, "fused_experts", "return fused_experts_impl(hidden_states, w1, w2, topk_weights, topk_ids, inplace, use_fp8_w8a8)", 672),
    frame_at(FUSED_MOE, "fused_experts_impl", "invoke_fused_moe_kernel(curr_hidden_states, w1, intermediate_cache1, a1_scale, w1_scale, curr_topk_weights, curr_topk_ids, sorted_token_ids, expert_ids, num_tokens_post_padded, False, topk_ids.shape[1], config, compute_type=compute_type, use_fp8_w8a8=use_fp8_w8a8)", 829),
    *fused_moe_launch(465),
    frame_at("triton/runtime/jit.py", "run", "kernel = self.compile(src, target=target, options=options.__dict__)", 662, env=(("self", "HOP:compile"),)),
    frame_at("triton/compiler/compiler.py", "compile", "module = src.make_ir(options, codegen_fns, context)", 276, env=(("src", "HOP:make_ir"),)),
    frame_at("triton/compiler/compiler.py", "make_ir", "return ast_to_ttir(self.fn, self, context=context, options=options, codegen_fns=codegen_fns)", 113),
    frame_at("triton/compiler/code_generator.py", "ast_to_ttir", "arg_types = list(map(str_to_ty, prototype.param_types))", 1296, env=(("str_to_ty", "NEXT"), ("prototype", "NS(param_types=['*fp8e4nv'])"))),
    frame_at("triton/compiler/code_generator.py", "str_to_ty", "return tl.pointer_type(ty.to_ir(builder))", 51, env=(("ty", "HOP:to_ir"),)),
    failing_at("triton/language/core.py", "to_ir", """
        if self.name == 'fp8e4nv':
            assert builder.options.allow_fp8e4nv, "fp8e4nv data type is not supported on CUDA arch < 89"
            return builder.get_fp8e4nv_ty()
        """, 460, env=(("self", "NS(name='fp8e4nv')"), ("builder", "NS(options=NS(allow_fp8e4nv=False))")), marker="assert"),
), ranks="TP5", extra_modules=TRITON_CORE, stamp="2025-02-15 12:25:07")
TRITON_WARN = Text("[rank5]:W0215 12:25:06.525000 14707 site-packages/torch/_higher_order_ops/triton_kernel_wrap.py:504] [12/0_1] "
                   "AssertionError: fp8e4nv data type is not supported on CUDA arch < 89\n")

COMPILATION_ERROR = (("triton/__init__.py", ""), ("triton/compiler/__init__.py", ""),
                     ("triton/compiler/errors.py", "class TritonError(Exception):\n    pass\n\n\nclass CompilationError(TritonError):\n    pass\n"))
FP8_NEWER = ("triton.compiler.errors.CompilationError",
             "at 1:0:\ndef fused_moe_kernel(\n^\nValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\")")
AMPERE_MOE = crash((
    scheduler_entry(*OVERLAP[:1], 2870, OVERLAP[1]), no_grad(120),
    frame_at(SCHEDULER, "event_loop_overlap", "batch_result = self.run_batch(batch)", 1012),
    frame_at(SCHEDULER, "run_batch", "batch_result = self.model_worker.forward_batch_generation(model_worker_batch)", 2042),
    frame_at(TP_WORKER, "forward_batch_generation", "logits_output, can_run_cuda_graph = self.model_runner.forward(forward_batch, pp_proxy_tensors=pp_proxy_tensors)", 371),
    frame_at(MODEL_RUNNER, "forward", "output = self._forward_raw(forward_batch, skip_attn_backend_init, pp_proxy_tensors, reinit_attn_backend, split_forward_count)", 2102),
    frame_at(MODEL_RUNNER, "_forward_raw", "ret = self.forward_extend(forward_batch, skip_attn_backend_init=skip_attn_backend_init, pp_proxy_tensors=pp_proxy_tensors)", 2159),
    frame_at(MODEL_RUNNER, "forward_extend", "return self.model.forward(forward_batch.input_ids, forward_batch.positions, forward_batch, **kwargs)", 2034),
    frame_at("sglang/srt/models/qwen3_moe.py", "forward", "hidden_states = self.model(input_ids, positions, forward_batch, input_embeds, pp_proxy_tensors=pp_proxy_tensors)", 826),
    frame_at("sglang/srt/models/qwen3_moe.py", "forward", "hidden_states, residual = layer(positions, hidden_states, forward_batch, residual)", 690, env=(("layer", "NEXT"),)),
    frame_at("sglang/srt/models/qwen3_moe.py", "forward", "hidden_states = self.mlp(hidden_states, forward_batch, should_allreduce_fusion, use_reduce_scatter)", 612),
    frame_at("sglang/srt/models/qwen3_moe.py", "forward", "return self.forward_normal(hidden_states, should_allreduce_fusion, use_reduce_scatter)", 180),
    frame_at("sglang/srt/models/qwen3_moe.py", "forward_normal", "final_hidden_states = self.experts(hidden_states, topk_output)", 213),
    frame_at("sglang/srt/layers/moe/fused_moe_triton/layer.py", "forward", "return self.forward_impl(hidden_states, topk_output)", 997),
    frame_at("sglang/srt/layers/moe/fused_moe_triton/layer.py", "forward_impl", "combine_input = self.run_moe_core(dispatch_output=dispatch_output)", 1016),
    frame_at("sglang/srt/layers/moe/fused_moe_triton/layer.py", "run_moe_core", "return self.quant_method.apply(layer=self, dispatch_output=dispatch_output)", 1037),
    frame_at("sglang/srt/layers/quantization/fp8.py", "apply", "return self.runner.run(dispatch_output, quant_info)", 1692),
    frame_at("sglang/srt/layers/moe/moe_runner/runner.py", "run", "runner_output = self.fused_func(dispatch_output, quant_info, self.config)", 96, env=(("self", "HOP:fused_func"),)),
    frame_at("sglang/srt/layers/moe/moe_runner/triton.py", "fused_experts_none_to_triton", "output = fused_experts(hidden_states=hidden_states, w1=quant_info.w13_weight, w2=quant_info.w2_weight, topk_output=topk_output, moe_runner_config=runner_config, use_fp8_w8a8=quant_info.use_fp8_w8a8, w1_scale=quant_info.w13_scale, w2_scale=quant_info.w2_scale, block_shape=quant_info.block_shape)", 384),
    frame_at(FUSED_MOE, "fused_experts", "fused_experts_impl(hidden_states, w1, w2, topk_weights, topk_ids, b1, b2, True, moe_runner_config.activation, moe_runner_config.apply_router_weight_on_input, use_fp8_w8a8)", 332),
    frame_at(FUSED_MOE, "fused_experts_impl", "invoke_fused_moe_kernel(curr_hidden_states, w1, b1, intermediate_cache1, a1_scale, w1_scale, w1_zp, curr_topk_weights, curr_topk_ids, sorted_token_ids, expert_ids, num_tokens_post_padded, apply_router_weight_on_input, topk_ids.shape[1], config, compute_type=compute_type, use_fp8_w8a8=use_fp8_w8a8)", 557),
    *fused_moe_launch(866),
    frame_at("triton/runtime/jit.py", "run", "kernel = self.compile(src, target=target, options=options.__dict__)", 591, env=(("self", "HOP:compile"),)),
    frame_at("triton/compiler/compiler.py", "compile", "module = src.make_ir(options, codegen_fns, module_map, context)", 278, env=(("src", "HOP:make_ir"),)),
    failing_at("triton/compiler/compiler.py", "make_ir", """
        try:
            return ast_to_ttir(self.fn, self, context=context, options=options, codegen_fns=codegen_fns, module_map=module_map)
        except Exception as e:
            raise CompilationError(self.fn.src, "at 1:0:\\ndef fused_moe_kernel(\\n^\\n" + repr(e)) from None
        """, 81, env=(("ast_to_ttir", "lambda *a, **k: (_ for _ in ()).throw(ValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\"))"),
                      ("CompilationError", "lambda src, message: __import__('triton.compiler.errors', fromlist=['x']).CompilationError(message)"),
                      ("self", "NS(fn=NS(src=''))"), ("context", "None"), ("options", "None"), ("codegen_fns", "None"), ("module_map", "None"))),
), extra_modules=COMPILATION_ERROR, stamp="2025-11-08 10:31:44")
FP8_FIX = "Hardware limit: Ampere (sm_80/86) has no FP8 (fp8e4nv); run the FP8 checkpoint on sm_89+ or use a BF16/INT4 checkpoint."

CASES = (
    WildCase(**IMA_0_3_THREAD, style="plain-nul-glyphs", parts=(STARTUP_0_3, NCCL_READY, READY_0_3, SERVING_0_3, v03_decode_crash(0)), expect=IMA_0_3,
             facts="0.3 record format [HH:MM:SS TPn], startup and serving records, NCCL INFO Init COMPLETE line, two runs in one paste, ^@ glyphs; the traceback (not in the stored excerpt) is ours: tp_worker forward_decode_batch",
             paste=(paste.caret_nuls, partial(paste.prose, before="Log:"))),
    WildCase(**IMA_0_3_THREAD, style="two-ranks-interleaved", parts=(Weave((v03_decode_crash(0), v03_decode_crash(5))),), expect=IMA_0_3,
             facts="0.3 record format, 8 ranks crash alike; two ranks' output interleaved line by line (ours)",
             paste=(paste.fenced,)),

    WildCase(**WATCHDOG_IMA_THREAD, style="four-backticks", parts=(OFFLINE_STDOUT, WATCHDOG_IMA),
             expect=Expect("illegal-memory-access", "c10::DistBackendError", WATCHDOG_WHAT),
             facts="the watchdog's what() wording ([PG ID 2 PG GUID 3 Rank 1] ... CUDA error: an illegal memory access was encountered), CUDAException.cpp:43 and the C++ frames, script stdout and shard-loading progress lines, four-backtick fence",
             paste=(partial(paste.fenced, ticks=4),)),
    WildCase(**WATCHDOG_IMA_THREAD, style="indented", parts=(OFFLINE_STDOUT, WATCHDOG_IMA),
             expect=Expect("illegal-memory-access", "c10::DistBackendError", WATCHDOG_WHAT),
             facts="the same abort; paste style ours (a Markdown indented block)", paste=(paste.indented,)),
    WildCase(**WATCHDOG_IMA_THREAD, style="torchrun", parts=(OFFLINE_STDOUT, WATCHDOG_IMA),
             expect=Expect("illegal-memory-access", "c10::DistBackendError", WATCHDOG_WHAT),
             facts="the same abort; paste style ours (the offline script under torchrun, torch's '[rank1]: ' on every line)",
             paste=(partial(paste.torchrun, rank=1), paste.fenced)),

    WildCase(**VERL_IMA_THREAD, style="ray-two-actors", parts=verl_rollout(), expect=VERL_IMA_EXPECT,
             facts="the IMA at get_model_worker_batch line 1602 (seq_lens.cpu()), sigquit and 'Cache flushed successfully!' records, C++ frames under the title sglang::scheduler_TP1, Ray prefixes and the '[repeated 22x across cluster]' suffix",
             paste=(paste.fenced,)),
    WildCase(**VERL_IMA_THREAD, style="ray-with-ip", parts=verl_rollout(ip="10.0.5.17"), expect=VERL_IMA_EXPECT,
             facts="as above, with the multi-node Ray prefix (pid and ip) seen in a later comment", paste=(paste.fenced,)),

    WildCase(**EAGLE_PREFILL_THREAD, style="mixed-writers", parts=(MIXED_700, Run(EAGLE_PREFILL, primary=True)), expect=EAGLE_PREFILL_EXPECT,
             facts="flashinfer's CUDA Error 700 print (prefill.cuh line 2349, cudaLaunchKernel) written by two writers at once, outer frames (scheduler 2011 -> _contextlib 116 -> event_loop_normal 619 -> run_batch 1367 -> eagle_worker 258), /opt/conda paths; the rest of the chain and the flashinfer RuntimeError are ours",
             paste=(paste.fenced,)),
    WildCase(**EAGLE_PREFILL_THREAD, style="indentation-stripped", parts=(MIXED_700, Run(EAGLE_PREFILL, primary=True)), expect=EAGLE_PREFILL_EXPECT,
             facts="as above, indentation stripped as in the copy on the flashinfer tracker", paste=(paste.strip_indent, paste.fenced)),

    WildCase(thread="https://github.com/sgl-project/sglang/issues/17274", kind="cuda-illegal-memory-access", style="cri",
             parts=(Run(TRITON_IMA, primary=True),), install=DOCKER,
             expect=Expect("illegal-memory-access", "RuntimeError", f"Triton Error [CUDA]: {IMA}", frame="run"),
             facts="Triton's wording for the IMA and the CRI log prefix; frames ours (decode attention launch)",
             resolution="Not recorded.", paste=(paste.cri, paste.fenced)),

    WildCase(thread="https://github.com/sgl-project/sglang/issues/1279", kind="cuda-device-side-assert", style="cut-at-start",
             parts=(v02_prefill_assert(0, primary=True),), install=DATABRICKS, engine_version="0.2.14", fixed_in="0.3.0",
             expect=replace(ASSERT_EXPECT, fix=UPGRADE),
             facts="frames (decorate_context 116 -> forward_step 250 -> forward_prefill_batch 489 -> model_runner.forward 579 -> decorate_context 116), the Databricks site-packages root, carets, cut at start; the innermost frames come from sibling #1274 (logits_processor.py 268)",
             resolution="Engine bug, fixed by 0.3.0 (the reporter upgraded and run_batch then worked).",
             paste=(partial(paste.cut_at_start, marker='File "', occurrence=2), paste.fenced)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/1274", kind="cuda-device-side-assert", style="ranks-intertwined",
             parts=(Weave((v02_prefill_assert(3, primary=True), v02_prefill_assert(1))),), engine_version="0.2.14",
             expect=ASSERT_EXPECT,
             facts="the assert at logits_processor.py line 268 (torch.cat of pruned_input_ids), the three continuation lines, the block repeated per GPU and intertwined; the ATen assert lines' wording from sglang#271",
             resolution="Not recorded in the notes.", paste=(paste.fenced,)),

    WildCase(**UE8M0_THREAD, style="two-lines", parts=(Text(UE8M0_ASSERT * 3), Run(UE8M0, primary=True)),
             expect=Expect("device-assert", *UE8M0_719, fix=UPGRADE),
             facts="the device assert wording (smxx_layout.cuh:131) and the TVM 719 error, the paste of only those two lines",
             paste=(partial(paste.grep, pattern=r"^(Assertion failed|tvm\.error)"), paste.fenced)),
    WildCase(**UE8M0_THREAD, style="ci-timestamps", parts=(Text(UE8M0_ASSERT * 12), Run(UE8M0, primary=True)),
             expect=Expect("device-assert", *UE8M0_719, frame="transform_scale_ue8m0", fix=UPGRADE),
             facts="the assert repeated across ranks, the DeepGemm scale_fmt warning, the load path (process_weights_after_loading_block_quant -> requant_block_scale_ue8m0_for_deepgemm -> requant_weight_ue8m0 -> transform_scale_ue8m0); CI prefix ours",
             install=DOCKER, paste=(paste.ci_timestamps, paste.fenced)),

    WildCase(thread="https://github.com/sgl-project/sglang/issues/1058", kind="no-kernel-image", style="flashinfer-lines",
             parts=(T4_FLASHINFER,), engine_version="0.2.10", fixed_in="https://github.com/flashinfer-ai/flashinfer/pull/449",
             expect=Expect("gpu-arch-unsupported", "CUDA Error",
                           f"{NO_IMAGE} (209) {SDIST}: line 169 at function cudaOccupancyMaxActiveBlocksPerMultiprocessor(&num_blocks_per_sm, kernel, num_threads, smem_size)",
                           fix=UPGRADE),
             facts="flashinfer's CUDA Error (209) prints (handler.cuh lines 169 and 324, the sdist build path of flashinfer 0.1.4), the paste stopping at the multiprocessing header",
             resolution="Fixed in flashinfer (PR #449, sm75 kernel configuration); the maintainer verified on a T4 with --dtype float16.",
             paste=(paste.fenced,)),
    WildCase(**T4_TORCH_THREAD, style="inline-reordered", parts=(Run(T4_TORCH, primary=True),), expect=T4_TORCH_EXPECT,
             facts="torch.AcceleratorError wording, the frame rotary_embedding.py line 210 (_ensure_cos_sin_cache_length, torch.arange) under reserve_rope_cache_for_long_sequences, the inline span with '...' and the exception shown before the frame",
             install=Install("/home/dev/.venv/lib/python3.11/site-packages"),
             paste=(partial(paste.grep, pattern=r"^(torch\.AcceleratorError|  File .*rotary_embedding|    t_new = )"), paste.move_last_line_first,
                    paste.gap_after_first, partial(paste.shorten_paths, prefix="/home/dev/.venv/lib/python3.11/site-packages"), paste.inline_span)),
    WildCase(**T4_TORCH_THREAD, style="four-ranks", parts=(Weave(tuple(t4_rank(rank) for rank in (2, 0, 3, 1)), by="record"),),
             expect=replace(T4_TORCH_EXPECT, groups=1), install=Install("/home/dev/.venv/lib/python3.11/site-packages"),
             facts="the same failure on all four TP ranks (stated in the thread); record interleaving ours", paste=(paste.fenced,)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/9600", kind="no-kernel-image", style="source-checkout",
             parts=(Run(SM120_RMSNORM, primary=True),), engine_version="0.4.10",
             install=Install("/home/dev/miniconda3/envs/sgl/lib/python3.11/site-packages", sglang="/home/dev/project/20250825/sglang/python"),
             expect=Expect("gpu-arch-unsupported", "Exception", SM120_MESSAGE, frame="__init__", fix=UPGRADE),
             facts="the RMSNorm wording, outer frames (scheduler 2561 -> __init__ 323 -> tp_worker_overlap_thread 67 -> tp_worker 84), the failure during CUDA graph capture (sibling #5338), source-checkout paths; Python 3.13's '...<6 lines>...' markers cannot come from our 3.11",
             resolution="Install the sgl-kernel wheel with sm_120 binaries from the sgl-project cu128 index; the reporter confirmed.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/25877", kind="deepgemm-unsupported-arch", style="quoted-in-prose",
             parts=(Run(SM120_DEEPGEMM, primary=True),), expect=Expect("gpu-arch-unsupported", *HC_ARCH),
             facts="the TVM-FFI assert wording (hyperconnection.hpp:56, tf32_hc_prenorm_gemm), quoted in prose",
             resolution="No SGLang fix (closed inactive); DeepSeek-V4's DeepGEMM kernels have no SM120 implementation (DeepGEMM#317).",
             paste=(partial(paste.exception_only, marker="tvm.error"), partial(paste.quoted_in_prose, lead="On the RTX PRO 6000 (sm_120) DeepSeek-V4 stops with ", tail=", and _setup_fp8_wo_a_scales asserts the same way at layout.hpp:59."))),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/25877", kind="deepgemm-unsupported-arch", style="fenced",
             parts=(Run(SM120_DEEPGEMM, primary=True),), expect=Expect("gpu-arch-unsupported", *HC_ARCH, frame="forward"), install=IMAGE,
             facts="the assert wording; the warm-up call path is ours",
             resolution="No SGLang fix (closed inactive); DeepSeek-V4's DeepGEMM kernels have no SM120 implementation (DeepGEMM#317).",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/skypilot-org/skypilot/issues/4723", kind="fp8-on-ampere", style="details-pre",
             parts=(TRITON_WARN, Run(SKYPILOT_FP8, primary=True)), resolution=FP8_FIX,
             expect=Expect("gpu-arch-unsupported", "AssertionError", "fp8e4nv data type is not supported on CUDA arch < 89", frame="to_ir", fix=UPGRADE),
             facts="Triton's fp8e4nv wording and torch's triton_kernel_wrap warning on rank5, the SkyPilot prefix, the raw <details><pre> block; the capture call path is ours",
             paste=(partial(paste.skypilot, pid=8292), paste.details_pre)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/12887", kind="fp8-on-ampere", style="image-paths",
             parts=(Run(AMPERE_MOE, primary=True),), install=IMAGE, resolution=FP8_FIX,
             expect=Expect("gpu-arch-unsupported", *FP8_NEWER, frame="make_ir"),
             facts="frames and line numbers (fused_moe_triton/layer.py 997/1016/1037 -> fp8.py apply 1692 -> moe_runner/runner.py 96 -> moe_runner/triton.py 384), /sgl-workspace paths; the final lines were cut in the excerpt, so the newer Triton wording (CompilationError with the fp8e4nv ValueError) is from the notes",
             paste=(paste.fenced,)),
)
