"""Memory: the request-slot and KV pools running out while serving (and the retraction notices that
are not a crash), the KV cache not fitting at start-up, CUDA OOM while allocating it or capturing
CUDA graphs, and host RAM refusing a new scheduler process.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from pattern_fixtures.engine import Frame
from pattern_fixtures.mirror import (
    CAPTURE_HINTS,
    MEMORY_POOL,
    MODEL_RUNNER,
    SCHEDULE_BATCH,
    SCHEDULER,
    TP_WORKER,
    alloc_req_slots,
    capture_failed_at,
    failing_at,
    frame_at,
    hybrid_prefill_oom,
    oom,
    paged_decode_oom,
    scheduler_entry,
)

from .. import paste
from ..blocks import c_attr, c_property, crash, cuda_oom, no_grad, plain, records
from ..corpus import DOCKER, IMAGE, Expect, Run, Weave, WildCase

OVERLAP_LOOP = ("scheduler.event_loop_overlap()", (("scheduler", "HOP:event_loop_overlap"),))


def serving(run_line: int, no_grad_line: int, loop_line: int, *below: Frame) -> tuple[Frame, ...]:
    """run_scheduler_process -> (no_grad) -> event_loop_overlap -> `below`."""
    call, wiring = OVERLAP_LOOP
    return (scheduler_entry(call, run_line, wiring), no_grad(no_grad_line),
            frame_at(SCHEDULER, "event_loop_overlap", "batch = self.get_next_batch_to_run()", loop_line), *below)


# -- sglang#10408: no request slot left (0.5.2, 4x L4) ----------------------------------------------------

SLOTS_DECODE = ("Decode batch. #running-req: 1, #token: 2264, token usage: 0.01, cuda graph: True, "
                "gen throughput (token/s): 41.73, #queue-req: 0, ")
SLOTS = crash(serving(
    2585, 120, 1015,
    frame_at(SCHEDULER, "get_next_batch_to_run", "new_batch = self.get_new_batch_prefill()", 1817),
    frame_at(SCHEDULER, "get_new_batch_prefill", "new_batch.prepare_for_extend()", 1990),
    frame_at(SCHEDULE_BATCH, "prepare_for_extend", "req_pool_indices = self.alloc_req_slots(bs, self.reqs)", 1183),
    alloc_req_slots(1056, available=1, num_reqs=2),
), before=(SLOTS_DECODE, SLOTS_DECODE.replace("2264", "2304").replace("41.73", "41.02")), stamp="2025-09-13 09:09:14")
SLOTS_MESSAGE = ("alloc_req_slots runs out of memory. Please set a smaller number for `--max-running-requests`. "
                 "self.req_to_token_pool.available_size()=1, num_reqs=2, ")
SLOTS_EXPECT = Expect("serving-memory", "RuntimeError", SLOTS_MESSAGE, frame="alloc_req_slots", fix=(("set --max-running-requests",),))
SLOTS_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/10408", kind="serving-oom-req-slots", engine_version="0.5.2",
    resolution="Not visible (closed). --max-running-requests 1 still failed the same way; --max-micro-batch-size 1 made decoding hang.",
)

# -- sglang#4602: decode out of KV slots with --page-size 64 (0.4.4, TP8) ----------------------------------

DECODE_OOM = crash(serving(
    1999, 116, 622,
    frame_at(SCHEDULER, "get_next_batch_to_run", "self.running_batch = self.update_running_batch(self.running_batch)", 1301),
    frame_at(SCHEDULER, "update_running_batch", "batch.prepare_for_decode()", 1398),
    frame_at(SCHEDULE_BATCH, "prepare_for_decode", "self.out_cache_loc = self.alloc_paged_token_slots_decode(self.seq_lens, last_loc)", 1392),
    paged_decode_oom(874, wanted=148, available=2048, evictable=0),
), stamp="2025-03-20 08:41:07")
DECODE_OOM_MESSAGE = ("Decode out of memory. Try to lower your batch size.\nTry to allocate 148 tokens.\nAvaliable tokens: 2048\n"
                      "self.token_to_kv_pool_allocator.available_size()=2048\nself.tree_cache.evictable_size()=0\n")
DECODE_OOM_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/4602", kind="serving-oom-decode", engine_version="0.4.4",
    resolution="Not visible (closed). The reporter: it only fails when --page-size is not 1 (page-granular accounting).",
)

# -- sglang#34676: prefill out of KV slots with a hybrid Mamba cache (0.5.16) --------------------------------

PREFILL_OOM_FRAMES = serving(
    3412, 120, 1390,
    frame_at(SCHEDULER, "get_next_batch_to_run", "new_batch = self.get_new_batch_prefill()", 2305),
    frame_at(SCHEDULER, "get_new_batch_prefill", "ret = self._get_new_batch_prefill_raw(prefill_delayer_single_pass=prefill_delayer_single_pass)", 2418),
    frame_at(SCHEDULER, "_get_new_batch_prefill_raw", "new_batch.prepare_for_extend()", 2610),
    frame_at(SCHEDULE_BATCH, "prepare_for_extend", "out_cache_loc, req_pool_indices_tensor, req_pool_indices = alloc_for_extend(self)", 1530),
    frame_at("sglang/srt/mem_cache/common.py", "alloc_for_extend", "out_cache_loc = alloc_paged_token_slots_extend(tree_cache=batch.tree_cache, prefix_lens=prefix_lens, seq_lens=seq_lens, last_loc=last_loc, extend_num_tokens=batch.extend_num_tokens)", 380),
    hybrid_prefill_oom(318, wanted=4128, full=(3040, 2976), mamba=(0, 0)),
)
PREFILL_OOM_MESSAGE = ("Prefill out of memory. Try to lower your batch size.\nTry to allocate 4128 tokens.\n"
                       "Available full tokens: 6016 (full_available_size=3040 + full_evictable_size_=2976)\n"
                       "Available mamba: 0 (available_size=0 + component_evictable_size_=0)\n")
PREFILL_OOM_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/34676", kind="serving-oom-prefill", engine_version="0.5.16",
    resolution="No fix confirmed; PRs that requeue or retract instead of crashing (#36473, #26266) were closed. Issue open.",
)


def prefill_oom_rank(rank: int) -> Run:
    case = crash(PREFILL_OOM_FRAMES, ranks=f"TP{rank}", stamp="2026-05-02 23:26:04")
    return Run(case if rank == 0 else replace(case, after=()), primary=rank == 0)


# -- sglang#4184: retraction notices on every rank, not a crash ------------------------------------------------

RETRACT = "Decode out of memory happened. #retracted_reqs: {n}, #new_token_ratio: 0.4000 -> {ratio}"


def retract_rank(rank: int, n: int, ratio: str) -> Run:
    line = RETRACT.format(n=n, ratio=ratio)
    decode = f"Decode batch. #running-req: {212 - n}, #token: 411032, token usage: 0.98, gen throughput (token/s): 1873.12, #queue-req: {n + 31}"
    return Run(records(line, decode, line, ranks=f"TP{rank}", stamp="2025-03-07 15:41:12"))


# -- sglang#4330: no room for the KV cache next to an EAGLE draft model (0.4.3.post2) -----------------------------

NOT_ENOUGH = crash((
    scheduler_entry("scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)", 1787, (("Scheduler", "NEXT"),)),
    frame_at(SCHEDULER, "__init__", "self.draft_worker = EAGLEWorker(gpu_id=gpu_id, tp_rank=tp_rank, server_args=server_args, nccl_port=port_args.nccl_port, target_worker=self.tp_worker, dp_rank=dp_rank)", 281),
    frame_at("sglang/srt/speculative/eagle_worker.py", "__init__", "super().__init__(gpu_id=gpu_id, tp_rank=tp_rank, server_args=server_args, nccl_port=nccl_port, dp_rank=dp_rank, is_draft_worker=True)", 48),
    frame_at(TP_WORKER, "__init__", "self.model_runner = ModelRunner(model_config=self.model_config, mem_fraction_static=server_args.mem_fraction_static, gpu_id=gpu_id, tp_rank=tp_rank, tp_size=server_args.tp_size, nccl_port=nccl_port, server_args=server_args, is_draft_worker=is_draft_worker)", 68),
    frame_at(MODEL_RUNNER, "__init__", "self.init_memory_pool(min_per_gpu_memory, server_args.max_running_requests, server_args.max_total_tokens)", 213),
    failing_at(MODEL_RUNNER, "init_memory_pool", """
        if self.max_total_num_tokens <= 0:
            raise RuntimeError(
                "Not enough memory. Please try to increase --mem-fraction-static."
            )
        """, 708, env=(("self", "NS(max_total_num_tokens=-1372)"),)),
), before=("Load weight end. type=LlamaForCausalLMEagle, dtype=torch.bfloat16, avail mem=6.91 GB, mem usage=0.57 GB.",), stamp="2025-03-12 10:14:55")
NOT_ENOUGH_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/4330", kind="startup-oom-kv-cache", engine_version="0.4.3.post2",
    resolution="Not visible (closed). A CUDA OOM at --mem-fraction-static 0.85, this error at 0.84: the target and draft models leave no room.",
)
NOT_ENOUGH_EXPECT = Expect("kv-cache-memory", "RuntimeError", "Not enough memory. Please try to increase --mem-fraction-static.",
                           fix=(("set --mem-fraction-static",),))

# -- sglang#12496: CUDA OOM allocating the KV buffers on a 24 GB card (docker compose, ~0.5.4) -------------------

KV_OOM = crash((
    scheduler_entry("scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank, dp_balance_meta=balance_meta)", 2680,
                    (("Scheduler", "NEXT"), ("balance_meta", "None"))),
    frame_at(SCHEDULER, "__init__", "self.tp_worker = TpWorkerClass(server_args=server_args, gpu_id=gpu_id, tp_rank=tp_rank, moe_ep_rank=moe_ep_rank, pp_rank=pp_rank, dp_rank=dp_rank, nccl_port=port_args.nccl_port)", 316),
    frame_at(TP_WORKER, "__init__", "self.model_runner = ModelRunner(model_config=self.model_config, mem_fraction_static=server_args.mem_fraction_static, gpu_id=gpu_id, tp_rank=tp_rank, tp_size=server_args.tp_size, moe_ep_rank=moe_ep_rank, moe_ep_size=server_args.ep_size, pp_rank=pp_rank, pp_size=server_args.pp_size, nccl_port=nccl_port, dp_rank=dp_rank, server_args=server_args, is_draft_worker=is_draft_worker, req_to_token_pool=req_to_token_pool, token_to_kv_pool_allocator=token_to_kv_pool_allocator)", 235),
    frame_at(MODEL_RUNNER, "__init__", "self.initialize(min_per_gpu_memory)", 312),
    frame_at(MODEL_RUNNER, "initialize", "self.init_memory_pool(min_per_gpu_memory, server_args.max_running_requests, server_args.max_total_tokens)", 457),
    frame_at(MODEL_RUNNER, "init_memory_pool", "self.token_to_kv_pool = MHATokenToKVPool(self.max_total_num_tokens, page_size=self.page_size, dtype=self.kv_cache_dtype, head_num=self.model_config.get_num_kv_heads(get_attention_tp_size()), head_dim=self.model_config.head_dim, layer_num=self.num_effective_layers, device=self.device, enable_memory_saver=self.server_args.enable_memory_saver, start_layer=self.start_layer, end_layer=self.end_layer)", 1740),
    frame_at(MEMORY_POOL, "__init__", "self._create_buffers()", 527),
    frame_at(MEMORY_POOL, "_create_buffers", "self.k_buffer = torch.zeros((self.size + self.page_size, self.head_num, self.head_dim), dtype=self.store_dtype, device=self.device)", 600,
             env=(("torch", c_property("zeros")),)),
), before=("Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=7.83 GB, mem usage=15.27 GB.",),
   torch_error=cuda_oom("32.00 MiB", 0, "23.52 GiB", "13.19 MiB", "23.49 GiB", "22.91 GiB", "131.45 MiB"), stamp="2025-11-03 07:52:31")
KV_OOM_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/12496", kind="startup-oom-kv-cache", engine_version="0.5.4",
    install=IMAGE, resolution="Not visible (closed as inactive). Usual remedy: a lower --mem-fraction-static or --context-length.",
)
KV_OOM_EXPECT = Expect("gpu-oom", *cuda_oom("32.00 MiB", 0, "23.52 GiB", "13.19 MiB", "23.49 GiB", "22.91 GiB", "131.45 MiB"), frame="_create_buffers")

# -- sglang#5285: CUDA OOM while capturing CUDA graphs with DeepEP low-latency (two 8xH20 nodes, ~0.4.5) -----------

GRAPH_RUNNER = "sglang/srt/model_executor/cuda_graph_runner.py"
DEEPSEEK_V2 = "sglang/srt/models/deepseek_v2.py"
GRAPH_OOM = oom("1.75 GiB", gpu=3, total="95.00 GiB", free="1.43 GiB", used="93.55 GiB")
GRAPH_OOM_CASE = crash((
    scheduler_entry("scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)", 2009, (("Scheduler", "NEXT"),)),
    frame_at(SCHEDULER, "__init__", "self.tp_worker = TpWorkerClass(server_args=server_args, gpu_id=gpu_id, tp_rank=tp_rank, dp_rank=dp_rank, nccl_port=port_args.nccl_port)", 259),
    frame_at("sglang/srt/managers/tp_worker_overlap_thread.py", "__init__", "self.worker = TpModelWorker(server_args, gpu_id, tp_rank, dp_rank, nccl_port)", 63),
    frame_at(TP_WORKER, "__init__", "self.model_runner = ModelRunner(model_config=self.model_config, mem_fraction_static=server_args.mem_fraction_static, gpu_id=gpu_id, tp_rank=tp_rank, tp_size=server_args.tp_size, nccl_port=nccl_port, server_args=server_args, is_draft_worker=is_draft_worker, req_to_token_pool=req_to_token_pool, token_to_kv_pool_allocator=token_to_kv_pool_allocator)", 74),
    frame_at(MODEL_RUNNER, "__init__", "self.initialize(min_per_gpu_memory)", 178),
    frame_at(MODEL_RUNNER, "initialize", "self.init_cuda_graphs()", 216),
    frame_at(MODEL_RUNNER, "init_cuda_graphs", "self.cuda_graph_runner = CudaGraphRunner(self)", 934),
    capture_failed_at(GRAPH_RUNNER, 269, "0.4.5"),
    frame_at(GRAPH_RUNNER, "capture", "graph, output_buffers = self.capture_one_batch_size(bs, forward)", 345),
    frame_at(GRAPH_RUNNER, "capture_one_batch_size", "run_once()", 433),
    frame_at(GRAPH_RUNNER, "run_once", "logits_output = forward(input_ids, forward_batch.positions, forward_batch)", 422, env=(("forward", "NEXT"),)),
    frame_at(DEEPSEEK_V2, "forward", "hidden_states = self.model(input_ids, positions, forward_batch, input_embeds)", 1456),
    frame_at(DEEPSEEK_V2, "forward", "hidden_states, residual = layer(positions, hidden_states, forward_batch, residual)", 1380, env=(("layer", "NEXT"),)),
    frame_at(DEEPSEEK_V2, "forward", "hidden_states = self.mlp(hidden_states, forward_batch.forward_mode)", 1290),
    frame_at(DEEPSEEK_V2, "forward", "return self.forward_deepep(hidden_states, forward_mode)", 282),
    frame_at(DEEPSEEK_V2, "forward_deepep", "hidden_states, topk_idx, topk_weights, reorder_topk_ids, seg_indptr, masked_m, expected_m = self.deepep_dispatcher.dispatch(hidden_states, topk_idx, topk_weights, forward_mode=forward_mode)", 331),
    frame_at("sglang/srt/layers/moe/ep_moe/token_dispatcher.py", "dispatch", "hidden_states, topk_idx, topk_weights, event = self.dispatch_a(hidden_states, topk_idx, topk_weights, forward_mode)", 584),
    frame_at("sglang/srt/layers/moe/ep_moe/token_dispatcher.py", "dispatch_a", "recv_hidden_states, recv_expert_count, handle, event, hook = self.buffer_low_latency.low_latency_dispatch(hidden_states, topk_idx, self.num_max_dispatch_tokens_per_rank, self.num_experts)", 512,
             env=(("self", c_attr("low_latency_dispatch")),)),
), ranks="TP3", before=("Capture cuda graph begin. This can take up to several minutes. avail mem=3.18 GB",), torch_error=GRAPH_OOM, stamp="2025-04-10 06:31:08")
GRAPH_OOM_MESSAGE = ("Capture cuda graph failed: " + GRAPH_OOM[1] + "\nPossible solutions:\n" + "\n".join(CAPTURE_HINTS["0.4.5"])
                     + "\nOpen an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \n")
GRAPH_OOM_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/5285", kind="startup-oom-cuda-graph", engine_version="0.4.5", install=IMAGE,
    resolution="Not visible (closed). The engine's own hints: lower --mem-fraction-static or --cuda-graph-max-bs, or --disable-cuda-graph.",
)
GRAPH_OOM_EXPECT = Expect("gpu-oom", "Exception", GRAPH_OOM_MESSAGE, frame="__init__",
                          fix=(("set --mem-fraction-static",), ("set --cuda-graph-max-bs",), ("add --disable-cuda-graph",)))

# -- sglang#5762 / #6418: the host cannot give a new scheduler process memory (TP8 H20) -----------------------------


def host_oom(line: int, ranks: tuple[int, ...]) -> Frame:
    """_launch_subprocesses starting the schedulers (real multiprocessing); each dies in
    faulthandler.enable(), the first statement that allocates, with ENOMEM."""
    return Frame("sglang/srt/entrypoints/engine.py", "_launch_subprocesses", body="""
        for tp_rank in range(tp_size):
            proc = mp.Process(target=run_scheduler_process, args=(server_args, port_args, gpu_id, tp_rank, None, writer))
            if tp_rank in started:
                proc.start()
                proc.join()
        """, env=(("mp", "__import__('multiprocessing')"), ("run_scheduler_process", "NEXT"), ("tp_size", "8"), ("started", repr(set(ranks))),
                  ("server_args", "None"), ("port_args", "None"), ("gpu_id", "0"), ("writer", "None")), lineno=640)


def enomem_scheduler(line: int) -> Frame:
    return failing_at(SCHEDULER, "run_scheduler_process", """
        setproctitle.setproctitle(f"sglang::scheduler{prefix.replace(' ', '_')}")
        faulthandler.enable()
        """, line, env=(("setproctitle", "NS(setproctitle=lambda title: None)"), ("prefix", "' TP0'"),
                        ("faulthandler", "NS(enable=__import__('_lsfx').c_raiser(OSError(12, 'Cannot allocate memory')))")),
        marker="faulthandler")


HOST_OOM = plain((host_oom(640, tuple(range(8))), enomem_scheduler(1984)))
HOST_OOM_EXPECT = Expect("host-memory", "OSError", "[Errno 12] Cannot allocate memory", frame="run_scheduler_process")
HOST_OOM_RESOLUTION = "None visible. Host RAM, container memory limits or cgroup pids are exhausted; not GPU memory."

CASES = (
    WildCase(**SLOTS_THREAD, style="inline-then-fenced", parts=(Run(SLOTS, primary=True),), expect=SLOTS_EXPECT,
             facts="message wording and values (available_size()=1, num_reqs=2), Decode batch records, paste style; frames: ours (0.5.2 call path to alloc_req_slots)",
             paste=(paste.lose_first_bracket, paste.fenced, partial(paste.also_inline, marker="RuntimeError: alloc_req_slots"))),
    WildCase(**SLOTS_THREAD, style="last-lines", parts=(Run(SLOTS, primary=True),), expect=SLOTS_EXPECT,
             facts="message wording and values; paste style ours (only the tail of the log)",
             paste=(partial(paste.last_lines, count=12), paste.fenced)),

    WildCase(**DECODE_OOM_THREAD, style="inline-span", parts=(Run(DECODE_OOM, primary=True),),
             expect=Expect("serving-memory", "RuntimeError", DECODE_OOM_MESSAGE),
             facts="message wording incl. the 'Avaliable' misspelling and values (148 wanted, 2048 available, evictable 0), paste style (the exception in one inline span)",
             paste=(partial(paste.exception_only, marker="RuntimeError:"), paste.inline_span,
                    partial(paste.prose, before="Launched with --page-size 64 and --tp-size 8; under load:"))),
    WildCase(**DECODE_OOM_THREAD, style="two-ranks-records",
             parts=(Weave((Run(replace(DECODE_OOM, ranks="TP3", after=())), Run(DECODE_OOM, primary=True)), by="record"),),
             expect=Expect("serving-memory", "RuntimeError", DECODE_OOM_MESSAGE, frame="alloc_paged_token_slots_decode", groups=1),
             facts="message wording and values; two ranks' records interleaved and frames: ours (0.4.4 decode path)",
             paste=(paste.fenced,)),

    WildCase(**PREFILL_OOM_THREAD, style="exception-only", parts=(prefill_oom_rank(0),),
             expect=Expect("serving-memory", "RuntimeError", PREFILL_OOM_MESSAGE),
             facts="message wording (hybrid full/mamba lines), paste style (```text block with the exception only)",
             paste=(partial(paste.exception_only, marker="RuntimeError:"), partial(paste.fenced, info="text"))),
    WildCase(**PREFILL_OOM_THREAD, style="docker-compose-every-rank",
             parts=(Weave(tuple(prefill_oom_rank(rank) for rank in (1, 0, 3)), by="record"),),
             expect=Expect("serving-memory", "RuntimeError", PREFILL_OOM_MESSAGE, frame="alloc_paged_token_slots_extend", groups=1),
             facts="message wording, the call path named in the fix PR (prepare_for_extend -> alloc_for_extend -> alloc_paged_token_slots_extend), 'every scheduler rank' dies; prefix ours",
             install=DOCKER, paste=(partial(paste.docker_compose, service="sglang-kimi-1"), paste.fenced)),

    WildCase(thread="https://github.com/sgl-project/sglang/issues/4184", kind="serving-retract-loop", style="every-rank",
             parts=(Weave((retract_rank(13, 3, "0.6571"), retract_rank(12, 3, "0.6571"), retract_rank(10, 4, "0.6820"),
                           retract_rank(9, 3, "0.6571"), retract_rank(11, 5, "0.7102")), by="record"),),
             expect=Expect("none", groups=0),
             facts="the info-level retraction wording of that era, ranks TP8-TP15 out of order; not a crash",
             resolution="Closed without a recorded fix. Retraction is normal when rare; frequent retraction calls for a higher --schedule-conservativeness.",
             paste=(paste.fenced,)),

    WildCase(**NOT_ENOUGH_THREAD, style="bold", parts=(Run(NOT_ENOUGH, primary=True),), expect=NOT_ENOUGH_EXPECT,
             facts="message wording, version, EAGLE draft worker; paste style (prose with bold, only the exception line); frames ours",
             paste=(partial(paste.exception_only, marker="RuntimeError:"), paste.bold,
                    partial(paste.prose, before="**Errors**\n\nWith --mem-fraction-static 0.84 the server stops at start-up:",
                            after="With 0.85 it runs out of CUDA memory instead."))),
    WildCase(**NOT_ENOUGH_THREAD, style="bare-line", parts=(Run(NOT_ENOUGH, primary=True),), expect=NOT_ENOUGH_EXPECT,
             facts="message wording; paste style: the exception line alone", paste=(partial(paste.exception_only, marker="RuntimeError:"),)),

    WildCase(**KV_OOM_THREAD, style="docker-compose", parts=(Run(KV_OOM, primary=True),), expect=KV_OOM_EXPECT,
             facts="frames and line numbers (tp_worker 235 -> model_runner 312/457/1740 -> memory_pool 527 -> _create_buffers 600), 23.52 GiB capacity and 32 MiB request, /sgl-workspace paths, paste style",
             paste=(paste.docker_compose, paste.fenced)),
    WildCase(**KV_OOM_THREAD, style="kubectl-timestamps", parts=(Run(KV_OOM, primary=True),), expect=KV_OOM_EXPECT,
             facts="frames and values as above; paste style ours (kubectl logs --timestamps, frames left out with '...')",
             paste=(partial(paste.elide, start="tp_worker.py", end="memory_pool.py"), paste.kubectl_timestamps, paste.fenced)),

    WildCase(**GRAPH_OOM_THREAD, style="raw-under-description", parts=(Run(GRAPH_OOM_CASE, primary=True),), expect=GRAPH_OOM_EXPECT,
             facts="outer frames and line numbers (scheduler 2009 -> ... -> cuda_graph_runner 269), the 'Possible solutions' text of that era, paste style; the DeepEP dispatch frames are ours",
             paste=(partial(paste.prose, before="### Describe the bug\n\nTwo nodes, DeepEP low-latency mode. Rank 3 fails:"),)),
    WildCase(**GRAPH_OOM_THREAD, style="hard-wrap-100", parts=(Run(GRAPH_OOM_CASE, primary=True),), expect=GRAPH_OOM_EXPECT,
             facts="frames and message as above; paste style ours (terminal hard wrap)",
             paste=(partial(paste.hard_wrap, width=100), paste.fenced)),

    WildCase(thread="https://github.com/sgl-project/sglang/issues/5762", kind="host-oom-startup", style="one-process",
             parts=(Run(HOST_OOM, primary=True),), expect=HOST_OOM_EXPECT, engine_version="0.4.5", install=DOCKER,
             facts="frames (multiprocessing _bootstrap 314 / run 108 -> scheduler.py 1984 faulthandler.enable()), message, only Process-6 shown, paste style",
             resolution=HOST_OOM_RESOLUTION,
             paste=(partial(paste.cut_at_start, marker="Process Process-6:"), partial(paste.first_lines, count=9),
                    partial(paste.prose, before="### Describe the bug\n\nDeepSeek-R1, --tp 8 --context-length 131072 on 8x H20:"))),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/6418", kind="host-oom-startup", style="interleaved-processes",
             parts=(Weave(tuple(Run(plain((host_oom(640, (rank,)), enomem_scheduler(2238))), primary=rank == 5) for rank in (2, 5, 7))),),
             expect=replace(HOST_OOM_EXPECT, groups=1), engine_version="0.4.6.post4", install=DOCKER,
             facts="scheduler.py line 2238 faulthandler.enable(), several Process-N tracebacks interleaved, the message",
             resolution=HOST_OOM_RESOLUTION, paste=(paste.fenced,)),
)
