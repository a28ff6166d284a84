"""Ports another process holds: ZMQ endpoints bound twice (a KV-event publisher per TP rank under Dynamo,
a message-queue socket at start-up), with the ranks that fail afterwards.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from pattern_fixtures.engine import Frame
from pattern_fixtures.mirror import MODEL_RUNNER, SCHEDULER, frame_at, to_model_runner

from .. import paste
from ..blocks import c_attr, crash, records
from ..corpus import IMAGE, Expect, Run, Weave, WildCase

ZMQ = (("zmq/__init__.py", ""), ("zmq/error.py", "class ZMQBaseError(Exception):\n    pass\n\n\nclass ZMQError(ZMQBaseError):\n    pass\n"))
PARALLEL_STATE = "sglang/srt/distributed/parallel_state.py"


def zmq_bind(line: int) -> Frame:
    """pyzmq's Socket.bind: the C extension fails with EADDRINUSE (no Python frame below this one)."""
    return frame_at("zmq/sugar/socket.py", "bind", "super().bind(addr)", line, env=(("super", f"lambda: {c_attr('bind')}"), ("addr", "None")))


# -- ai-dynamo/dynamo#4121: every TP rank binds the KV-event publisher's endpoint --------------------------------------------

KV_EVENTS_ADDR = "tcp://*:5557"
KV_EVENTS = crash((
    *to_model_runner("0.5.23")[:1],
    frame_at(SCHEDULER, "__init__", "self.init_kv_events(server_args.kv_events_config)", 611),
    frame_at(SCHEDULER, "init_kv_events", "self.kv_event_publisher = EventPublisherFactory.create(kv_events_config, self.attn_dp_rank)", 1108),
    frame_at("sglang/srt/disaggregation/kv_events.py", "create", "return publisher_cls(attn_dp_rank=attn_dp_rank, **config_dict)", 360, env=(("publisher_cls", "NEXT"), ("config_dict", "{}"))),
    frame_at("sglang/srt/disaggregation/kv_events.py", "__init__", "self._pub.bind(self._endpoint)", 172, env=(("self", "HOP:bind"),)),
    zmq_bind(311),
), ranks="TP1", before=("Capture cuda graph end. Time elapsed: 11.11 s. mem usage=4.69 GB. avail mem=20.31 GB.",
                        "max_total_num_tokens=9415616, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=4096, context_len=163840, available_gpu_mem=20.31 GB",
                        "Starting ZMQ publisher thread"),
   torch_error=("zmq.error.ZMQError", f"Address already in use (addr='{KV_EVENTS_ADDR}')"), extra_modules=ZMQ, stamp="2025-11-05 01:56:52")
TP0_FINE = records("Capture cuda graph end. Time elapsed: 12.80 s. mem usage=4.69 GB. avail mem=20.31 GB.",
                   "max_total_num_tokens=9415616, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=4096, context_len=163840, available_gpu_mem=20.31 GB",
                   "Starting ZMQ publisher thread", ranks="TP0", stamp="2025-11-05 01:56:52")

# -- sglang PR#29547: one rank's message queue cannot bind; the others lose the gloo all-reduce -----------------------------------

MQ_ADDR = "tcp://127.0.0.1:56623"
MQ_BIND = crash((
    *to_model_runner("0.5.23"),
    frame_at(MODEL_RUNNER, "initialize", "self.init_torch_distributed()", 716),
    frame_at(MODEL_RUNNER, "init_torch_distributed", "initialize_model_parallel(tensor_model_parallel_size=self.tp_size, pipeline_model_parallel_size=self.pp_size, expert_model_parallel_size=self.moe_ep_size, duplicate_tp_group=self.server_args.enable_pdmux, torch_compile=self.server_args.enable_piecewise_cuda_graph)", 860),
    frame_at(PARALLEL_STATE, "initialize_model_parallel", "_TP = init_model_parallel_group(group_ranks, get_world_group().local_rank, backend, use_message_queue_broadcaster=get_bool_env_var(\"SGLANG_USE_MESSAGE_QUEUE_BROADCASTER\", \"true\"), group_name=\"tp\", pynccl_use_current_stream=duplicate_tp_group, torch_compile=torch_compile)", 1560),
    frame_at(PARALLEL_STATE, "init_model_parallel_group", "return GroupCoordinator(group_ranks=group_ranks, local_rank=local_rank, torch_distributed_backend=backend, use_pynccl=not _is_npu, use_message_queue_broadcaster=use_message_queue_broadcaster, group_name=group_name, pynccl_use_current_stream=pynccl_use_current_stream, torch_compile=torch_compile)", 1402),
    frame_at(PARALLEL_STATE, "__init__", "self.mq_broadcaster = MessageQueue.create_from_process_group(self.cpu_group, 1 << 22, 6)", 318, env=(("MessageQueue", "HOP:create_from_process_group"),)),
    frame_at("sglang/srt/distributed/device_communicators/shm_broadcast.py", "create_from_process_group", "buffer_io = MessageQueue(n_reader=group_world_size - 1, n_local_reader=n_local_reader, local_reader_ranks=local_reader_ranks, max_chunk_bytes=max_chunk_bytes, max_chunks=max_chunks, connect_ip=connect_ip)", 467),
    frame_at("sglang/srt/distributed/device_communicators/shm_broadcast.py", "__init__", "self.local_socket.bind(socket_addr)", 236, env=(("self", "HOP:bind"), ("socket_addr", "None"))),
    zmq_bind(311),
), torch_error=("zmq.error.ZMQError", f"Address already in use (addr='{MQ_ADDR}')"), extra_modules=ZMQ, stamp="2026-06-02 14:20:31")
GLOO = "[../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [127.0.0.1]:24817"
GLOO_FAIL = crash((
    *to_model_runner("0.5.23")[:-1],
    frame_at(MODEL_RUNNER, "__init__", "min_per_gpu_memory = self.init_torch_distributed()", 498),
    frame_at(MODEL_RUNNER, "init_torch_distributed", "min_per_gpu_memory = get_available_gpu_memory(self.device, self.gpu_id, distributed=get_world_group().world_size > 1, cpu_group=get_world_group().cpu_group)", 872,
             env=(("get_world_group", "lambda: NS(world_size=4, cpu_group=None)"),)),
    frame_at("sglang/srt/utils/common.py", "get_available_gpu_memory", "torch.distributed.all_reduce(tensor, op=torch.distributed.ReduceOp.MIN, group=cpu_group)", 512, env=(("torch", "HOP:all_reduce"),)),
    frame_at("torch/distributed/c10d_logger.py", "wrapper", "return func(*args, **kwargs)", 81, env=(("func", "NEXT"), ("args", "()"), ("kwargs", "{}"))),
    frame_at("torch/distributed/distributed_c10d.py", "all_reduce", "work = group.allreduce([tensor], opts)", 2806, env=(("group", c_attr("allreduce")), ("tensor", "None"), ("opts", "None"))),
), torch_error=("RuntimeError", GLOO), stamp="2026-06-02 14:20:33")


def gloo_rank(rank: int) -> Run:
    case = replace(GLOO_FAIL, ranks=f"TP{rank}")
    return Run(case if rank == 3 else replace(case, after=()))


CASES = (
    WildCase(thread="https://github.com/ai-dynamo/dynamo/issues/4121", kind="zmq-port-in-use", style="dynamo-logger",
             parts=(Weave((Run(TP0_FINE), Run(KV_EVENTS, primary=True)), by="record"),), install=IMAGE, engine_version="0.5.4",
             expect=Expect("port-in-use", "zmq.error.ZMQError", f"Address already in use (addr='{KV_EVENTS_ADDR}')", frame="bind"),
             facts="Dynamo re-logging SGLang's records (ISO time, level, module.function, trailing spaces), both TP ranks' start-up records, the KV-event publisher starting, the ZMQError on the second rank; frames ours",
             resolution="Closed; with TP > 1 every rank bound the same kv-events endpoint (later Dynamo PRs give each rank its own).",
             paste=(paste.dynamo_logger, partial(paste.fenced, info="txt"))),
    WildCase(thread="https://github.com/sgl-project/sglang/pull/29547", kind="zmq-port-in-use", style="cause-then-cascade",
             parts=(Run(MQ_BIND, primary=True), Weave(tuple(gloo_rank(rank) for rank in (1, 2, 3)), by="record")), engine_version="0.5.23",
             expect=Expect("port-in-use", "zmq.error.ZMQError", f"Address already in use (addr='{MQ_ADDR}')", frame="bind", groups=2),
             facts="one rank's ZMQError in shm_broadcast's bind, every other rank's gloo 'Connection closed/reset by peer' in get_available_gpu_memory's all_reduce",
             resolution="The PR makes the start-up pick a free port for the message queue.", paste=(paste.fenced,)),
)
