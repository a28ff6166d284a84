"""CUDA graph capture failing with torch.compile on: a kernel calling what a capturing stream forbids,
or a compiled region failing with an empty message.  (Capture OOM is in memory.py.)
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from pattern_fixtures.mirror import (
    CAPTURE_HINTS,
    MODEL_RUNNER,
    SCHEDULER,
    TP_WORKER,
    capture_failed_at,
    frame_at,
    scheduler_entry,
)

from .. import composed, paste
from ..blocks import c_attr, crash
from ..corpus import Expect, Install, Run, WildCase

GRAPH_RUNNER = "sglang/srt/model_executor/cuda_graph_runner.py"
DEEPSEEK_V2 = "sglang/srt/models/deepseek_v2.py"
TORCH_COMPILE_FIX = (("remove --enable-torch-compile",), ("add --disable-cuda-graph",))


def solutions(inner: str) -> str:
    return ("Capture cuda graph failed: " + inner + "\nPossible solutions:\n" + "\n".join(CAPTURE_HINTS["0.4.9"])
            + "\nOpen an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \n")


# -- sglang#7918: DeepSeek-V3 with --enable-torch-compile; sgl_kernel's moe_fused_gate while capturing (0.4.9.post1) ----

CAPTURING = composed.cuda_error("operation not permitted when stream is capturing")
MOE_GATE = crash((
    scheduler_entry("scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)", 2974, (("Scheduler", "NEXT"),)),
    frame_at(SCHEDULER, "__init__", "self.tp_worker = TpWorkerClass(server_args=server_args, gpu_id=gpu_id, tp_rank=tp_rank, moe_ep_rank=moe_ep_rank, pp_rank=pp_rank, dp_rank=dp_rank, nccl_port=port_args.nccl_port)", 315),
    frame_at("sglang/srt/managers/tp_worker_overlap_thread.py", "__init__", "self.worker = TpModelWorker(server_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank, nccl_port)", 66),
    frame_at(TP_WORKER, "__init__", "self.model_runner = ModelRunner(model_config=self.model_config, mem_fraction_static=server_args.mem_fraction_static, gpu_id=gpu_id, tp_rank=tp_rank, tp_size=server_args.tp_size, moe_ep_rank=moe_ep_rank, moe_ep_size=server_args.ep_size, pp_rank=pp_rank, pp_size=server_args.pp_size, nccl_port=nccl_port, server_args=server_args, is_draft_worker=is_draft_worker, req_to_token_pool=req_to_token_pool, token_to_kv_pool_allocator=token_to_kv_pool_allocator)", 81),
    frame_at(MODEL_RUNNER, "__init__", "self.initialize(min_per_gpu_memory)", 240),
    frame_at(MODEL_RUNNER, "initialize", "self.init_cuda_graphs()", 330),
    frame_at(MODEL_RUNNER, "init_cuda_graphs", "self.cuda_graph_runner = CudaGraphRunner(self)", 1460),
    capture_failed_at(GRAPH_RUNNER, 338, "0.4.9"),
    frame_at(GRAPH_RUNNER, "capture", "graph, output_buffers = self.capture_one_batch_size(bs, forward)", 436),
    frame_at(GRAPH_RUNNER, "capture_one_batch_size", "run_once()", 590),
    frame_at(GRAPH_RUNNER, "run_once", "logits_output_or_pp_proxy_tensors = forward(input_ids, forward_batch.positions, forward_batch, **kwargs)", 577,
             env=(("forward", "NEXT"), ("kwargs", "{}"))),
    frame_at(DEEPSEEK_V2, "forward", "hidden_states = self.model(input_ids, positions, forward_batch, input_embeds, pp_proxy_tensors)", 2110),
    frame_at(DEEPSEEK_V2, "forward", "hidden_states, residual = layer(positions, hidden_states, forward_batch, residual, zero_allocator)", 2021, env=(("layer", "NEXT"),)),
    frame_at(DEEPSEEK_V2, "forward", "hidden_states = self.mlp(hidden_states, forward_batch, can_fuse_mlp_allreduce)", 1873),
    frame_at(DEEPSEEK_V2, "forward", "return self.forward_normal(hidden_states, can_fuse_mlp_allreduce)", 334),
    frame_at(DEEPSEEK_V2, "forward_normal", "topk_output = self.topk(hidden_states, router_logits)", 379),
    frame_at("sglang/srt/layers/moe/topk.py", "forward", "return select_experts(hidden_states=hidden_states, router_logits=router_logits, topk_config=self.topk_config, num_token_non_padded=num_token_non_padded, expert_location_dispatch_info=expert_location_dispatch_info)", 117),
    frame_at("sglang/srt/layers/moe/topk.py", "select_experts", "topk_weights, topk_ids = biased_grouped_topk(hidden_states=hidden_states, gating_output=router_logits, correction_bias=correction_bias, topk=top_k, renormalize=renormalize, num_expert_group=num_expert_group, topk_group=topk_group, num_fused_shared_experts=num_fused_shared_experts, routed_scaling_factor=routed_scaling_factor, num_token_non_padded=num_token_non_padded, expert_location_dispatch_info=expert_location_dispatch_info)", 563),
    frame_at("sglang/srt/layers/moe/topk.py", "biased_grouped_topk_gpu", "topk_weights, topk_ids = moe_fused_gate(gating_output.to(dtype=torch.float32), correction_bias, num_expert_group, topk_group, topk, num_fused_shared_experts, routed_scaling_factor)", 322),
    frame_at("sgl_kernel/moe.py", "moe_fused_gate", "return torch.ops.sgl_kernel.moe_fused_gate.default(input_tensor, bias, num_expert_group, topk_group, topk, num_fused_shared_experts, routed_scaling_factor)", 58),
), before=("Capture cuda graph begin. This can take up to several minutes. avail mem=21.13 GB",), ranks="DP3 TP3", torch_error=("RuntimeError", CAPTURING),
   stamp="2025-07-10 08:13:52")
MOE_GATE_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/7918", kind="torch-compile-cuda-graph-capture", engine_version="0.4.9.post1",
    install=Install("/usr/local/lib/python3.11/dist-packages"),
    resolution="No fix confirmed (closed as inactive). The engine's hint: drop --enable-torch-compile, or --disable-cuda-graph.",
)
COMMAND = ("TORCHINDUCTOR_CACHE_DIR=/data/inductor PYTHONUNBUFFERED=1 SGL_ENABLE_JIT_DEEPGEMM=1 \\\n"
           "python3 -m sglang.launch_server --model-path DeepSeek-V3-0324 --host 0.0.0.0 --dtype auto \\\n"
           "  --mem-fraction-static 0.7 --tp-size 8 --dp-size 8 --enable-dp-attention --enable-torch-compile")

# -- sglang#11218: DeepSeek-V3.2-Exp in docker compose; the compiled indexer fails with an empty message -----------------

INDEXER = crash((
    scheduler_entry("scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank, dp_balance_meta=balance_meta)", 2699,
                    (("Scheduler", "NEXT"), ("balance_meta", "None"))),
    frame_at(SCHEDULER, "__init__", "self.tp_worker = TpWorkerClass(server_args=server_args, gpu_id=gpu_id, tp_rank=tp_rank, moe_ep_rank=moe_ep_rank, pp_rank=pp_rank, dp_rank=dp_rank, nccl_port=port_args.nccl_port)", 339),
    frame_at(TP_WORKER, "__init__", "self.model_runner = ModelRunner(model_config=self.model_config, mem_fraction_static=server_args.mem_fraction_static, gpu_id=gpu_id, tp_rank=tp_rank, tp_size=server_args.tp_size, moe_ep_rank=moe_ep_rank, moe_ep_size=server_args.ep_size, pp_rank=pp_rank, pp_size=server_args.pp_size, nccl_port=nccl_port, dp_rank=dp_rank, server_args=server_args, is_draft_worker=is_draft_worker, req_to_token_pool=req_to_token_pool, token_to_kv_pool_allocator=token_to_kv_pool_allocator)", 247),
    frame_at(MODEL_RUNNER, "__init__", "self.initialize(min_per_gpu_memory)", 322),
    frame_at(MODEL_RUNNER, "initialize", "self.init_device_graphs()", 431),
    frame_at(MODEL_RUNNER, "init_device_graphs", "self.graph_runner = graph_runners[self.device](self)", 1825),
    capture_failed_at(GRAPH_RUNNER, 393, "0.4.9"),
    frame_at(GRAPH_RUNNER, "capture", "graph, output_buffers = self.capture_one_batch_size(bs, forward)", 509),
    frame_at(GRAPH_RUNNER, "capture_one_batch_size", "run_once()", 690),
    frame_at(GRAPH_RUNNER, "run_once", "logits_output_or_pp_proxy_tensors = forward(input_ids, forward_batch.positions, forward_batch, **kwargs)", 677,
             env=(("forward", "NEXT"), ("kwargs", "{}"))),
    frame_at(DEEPSEEK_V2, "forward_absorb_prepare", "q = self.q_b_proj(q)[0].view(-1, self.num_local_heads, self.qk_head_dim)", 1485, env=(("self", "HOP:q_b_proj"),)),
    frame_at(DEEPSEEK_V2, "torch_dynamo_resume_in_forward_absorb_prepare_at_1485", "q_nope, q_pe = self.rotary_emb_prepare(q, latent_cache)", 1518, env=(("self", "HOP:rotary_emb_prepare"),)),
    frame_at(DEEPSEEK_V2, "torch_dynamo_resume_in_forward_absorb_prepare_at_1518", "topk_indices = self.indexer(x=hidden_states, q_lora=q_lora, positions=positions, forward_batch=forward_batch, layer_id=self.layer_id)", 1588,
             env=(("self", "HOP:indexer"),)),
    frame_at("torch/nn/modules/module.py", "_wrapped_call_impl", "return self._call_impl(*args, **kwargs)", 1773, env=(("self", "HOP:_call_impl"), ("args", "()"), ("kwargs", "{}"))),
    frame_at("torch/nn/modules/module.py", "_call_impl", "return forward_call(*args, **kwargs)", 1784, env=(("forward_call", "NEXT"), ("args", "()"), ("kwargs", "{}"))),
    frame_at("sglang/srt/layers/attention/nsa/nsa_indexer.py", "forward", "return self.forward_cuda(x, q_lora, positions, forward_batch, layer_id)", 662),
    frame_at("sglang/srt/layers/attention/nsa/nsa_indexer.py", "forward_cuda", "logits = deep_gemm.fp8_mqa_logits(q_fp8, kv_fp8, weights, ks, ke)", 598,
             env=(("deep_gemm", c_attr("fp8_mqa_logits")),)),
), torch_error=("RuntimeError", ""), stamp="2025-10-04 02:29:35")
PRIVATE = Install("/usr/local/lib/python3.11/dist-packages", sglang="/sgl-workspace/sglang-private/python")
INDEXER_EXPECT = Expect("cuda-graph-capture", "Exception", solutions(""), frame="__init__", fix=TORCH_COMPILE_FIX)


def indexer_rank(ranks: str, last: bool) -> Run:
    case = replace(INDEXER, ranks=ranks)
    return Run(case if last else replace(case, after=()), primary=ranks == "DP0 TP0")


INDEXER_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/11218", kind="torch-compile-cuda-graph-capture", engine_version="", install=PRIVATE,
    resolution="No fix confirmed; closed as inactive. Only fails with torch compile on.",
)

CASES = (
    WildCase(**MOE_GATE_THREAD, style="fenced-chained", parts=(Run(MOE_GATE, primary=True),),
             expect=Expect("cuda-graph-capture", "Exception", solutions(CAPTURING), frame="__init__", fix=TORCH_COMPILE_FIX),
             facts="frames (cuda_graph_runner 336 self.capture() -> 436 -> 590; topk.py 322 biased_grouped_topk_gpu -> sgl_kernel/moe.py 58 moe_fused_gate -> torch/_ops.py __call__), the inner error, the chained tracebacks, the env-prefixed multi-line start command",
             paste=(paste.fenced, partial(paste.prose, before=f"Start command:\n\n```bash\n{COMMAND}\n```\n\nError:"))),
    WildCase(**MOE_GATE_THREAD, style="fence-glued", parts=(Run(MOE_GATE, primary=True),),
             expect=Expect("cuda-graph-capture", "Exception", solutions(CAPTURING), frame="__init__", fix=TORCH_COMPILE_FIX),
             facts="as above; paste style ours (the closing fence glued to the last line)",
             paste=(partial(paste.cut_at_start, marker="During handling"), paste.fence_glued)),
    WildCase(**INDEXER_THREAD, style="docker-compose-two-ranks",
             parts=(indexer_rank("DP0 TP0", last=False), indexer_rank("DP7 TP7", last=True)), expect=replace(INDEXER_EXPECT, groups=1),
             facts="frames and line numbers (model_runner 431 -> 1825 -> cuda_graph_runner 391/393 -> 509; deepseek_v2 1485 forward_absorb_prepare -> torch_dynamo_resume_in_... at 1518 and 1588 -> module.py 1773/1784), the empty inner message, DP0 TP0 then DP7 TP7, the compose prefix and the sglang-private paths",
             paste=(partial(paste.docker_compose, service="deepseek-v32-exp"), paste.fenced)),
    WildCase(**INDEXER_THREAD, style="last-lines", parts=(indexer_rank("DP0 TP0", last=True),), expect=INDEXER_EXPECT,
             facts="the same failure; paste style ours (only the tail)",
             paste=(partial(paste.last_lines, count=24), paste.fenced)),
)
