"""Native crashes: a scheduler process killed by SIGSEGV or SIGABRT, dumped by faulthandler (real
CPython dumps from a spawned child, see native.py), with or without an earlier CUDA error.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from pattern_fixtures.mirror import SCHEDULER, failing_at, frame_at

from .. import composed, paste
from ..blocks import c_attr, crash
from ..corpus import DOCKER, IMAGE, Expect, Run, Text, WildCase
from ..native import ABRT, INDUCTOR_READER, SEGV, TQDM_MONITOR, spawned, thread_module

PREFILL = "sglang/srt/disaggregation/prefill.py"
SEGFAULT = Expect("native-crash", "Fatal Python error", "Segmentation fault", frame="all_reduce")


def prefill_poll(*threads: tuple[str, str]) -> Run:
    """The PD prefill server's event loop polling its in-flight transfers with an all-reduce, which
    segfaults inside torch.distributed."""
    below = (
        frame_at(PREFILL, "event_loop_overlap_disagg_prefill", "self.process_disagg_prefill_inflight_queue()", 345),
        frame_at(PREFILL, "process_disagg_prefill_inflight_queue", "polls = poll_and_all_reduce([req.disagg_kv_sender for req in self.disagg_prefill_inflight_queue], self.attn_tp_cpu_group)", 490),
        frame_at("sglang/srt/disaggregation/utils.py", "poll_and_all_reduce", "dist.all_reduce(tensor_to_reduce, op=dist.ReduceOp.MIN, group=gloo_group)", 55),
        frame_at("torch/distributed/c10d_logger.py", "wrapper", "return func(*args, **kwargs)", 81, env=(("func", "NEXT"), ("args", "()"), ("kwargs", "{}"))),
        frame_at("torch/distributed/distributed_c10d.py", "all_reduce", "work = group.allreduce([tensor], opts)", 2931, env=(("group", f"NS(allreduce={SEGV})"),)),
    )
    return Run(spawned(2640, "scheduler.event_loop_overlap_disagg_prefill()", (("scheduler", "HOP:event_loop_overlap_disagg_prefill"),), below,
                       threads=threads), primary=True)


# sglang#10350: a queue reader of the disaggregation layer sits in get() at common/utils.py line 24
QUEUE_READER = thread_module("sglang/srt/disaggregation/common/utils.py", "get", 24)

# sglang#7338: the Mooncake transfer thread segfaults in transfer_sync after a mooncake upgrade
MOONCAKE_CONN = ("sglang/srt/disaggregation/mooncake/conn.py",
                 "import _thread\nfrom sglang.srt.disaggregation.mooncake.transfer_engine import transfer_sync\n"
                 + "#\n" * 255 + "def process_layer(*_args):\n    _ready.release(); status = transfer_sync(0, 0, 0, 0)\n\n\n"
                 "_ready = _thread.allocate_lock()\n_ready.acquire()\n\n\ndef start():\n    _thread.start_new_thread(process_layer, ())\n    _ready.acquire()\n")
MOONCAKE_ENGINE = ("sglang/srt/disaggregation/mooncake/transfer_engine.py",
                   "import time\n" + "#\n" * 72 + "def transfer_sync(*_args):\n"
                   f"    time.sleep(0.5); ret = {SEGV}(0, 0, 0, 0)\n")
MOONCAKE = Run(spawned(2640, "scheduler.event_loop_overlap_disagg_prefill()", (("scheduler", "HOP:event_loop_overlap_disagg_prefill"),), (
    frame_at(PREFILL, "event_loop_overlap_disagg_prefill", "self.process_prefill_chunk()", 345),
    frame_at(PREFILL, "process_prefill_chunk", "self.send_kv_chunk(self.chunked_req)", 612),
    failing_at(PREFILL, "send_kv_chunk", """
        req.disagg_kv_sender.send(page_indices)
        time.sleep(5)
        """, 688, env=(("req", "_Any()"), ("page_indices", "None"), ("time", "__import__('time')")), marker="time"),
), threads=(MOONCAKE_CONN,)), primary=True)
MOONCAKE_CASE = replace(MOONCAKE.case, extra_modules=(*MOONCAKE.case.extra_modules, MOONCAKE_ENGINE))

# -- verl#1691: unspecified launch failure in the overlap thread, then a C++ abort (Ray, quoted) -------------------------

STREAMS = "torch/cuda/streams.py"
LAUNCH_FAILURE = ("RuntimeError", composed.cuda_error("unspecified launch failure"))
OVERLAP_THREAD = crash((
    failing_at("sglang/srt/managers/tp_worker_overlap_thread.py", "forward_thread_func", """
        try:
            self.forward_thread_func_()
        except Exception:
            traceback = get_exception_traceback()
            logger.error(f"TpModelWorkerClient hit an exception: {traceback}")
            self.parent_process.send_signal(signal.SIGQUIT)
        """, 118, env=(("self", "HOP:forward_thread_func_"), ("logger", "__import__('logging').getLogger('sglang')")), marker="self.forward"),
    frame_at("sglang/srt/managers/tp_worker_overlap_thread.py", "forward_thread_func_", "copy_done.synchronize()", 176, env=(("copy_done", "HOP:synchronize"),)),
    frame_at(STREAMS, "synchronize", "super().synchronize()", 226, env=(("super", f"lambda: {c_attr('synchronize')}"),)),
), ranks="TP1", torch_error=LAUNCH_FAILURE, stamp="2025-05-27 09:41:17")
ABORT_DUMP = spawned(2421, "scheduler.event_loop_overlap()", (("scheduler", "HOP:event_loop_overlap"),), (
    frame_at(SCHEDULER, "event_loop_overlap", "self.process_batch_result(tmp_batch, tmp_result)", 684),
    frame_at(SCHEDULER, "process_batch_result", "self.process_batch_result_decode(batch, result)", 1610),
    frame_at("sglang/srt/managers/scheduler_output_processor_mixin.py", "process_batch_result_decode", "copy_done.synchronize()", 204, env=(("copy_done", "HOP:synchronize"),)),
    frame_at(STREAMS, "synchronize", "super().synchronize()", 226, env=(("super", f"lambda: NS(synchronize={ABRT})"),)),
), threads=(TQDM_MONITOR,))
ABORT_TEXT = Text(composed.cpp_abort("c10::Error", composed.cuda_error("unspecified launch failure"),
                                     "c10_cuda_check_implementation at /pytorch/c10/cuda/CUDAException.cpp:43", composed.python_stack("sglang::scheduler_TP1")))
VERL_ABORT_THREAD = dict(
    thread="https://github.com/verl-project/verl/issues/1691", kind="fatal-python-aborted", engine_version="0.4.6.post4", install=DOCKER,
    resolution="No fix confirmed (closed; the identical report verl#1695 stayed open).",
)
RAY_NODE = partial(paste.ray, pid=1216, ip="train-8e2c7a-worker-0", ansi=True)

CASES = (
    WildCase(thread="https://github.com/sgl-project/sglang/issues/9950", kind="segfault-faulthandler", style="fenced",
             parts=(prefill_poll(TQDM_MONITOR, INDUCTOR_READER),), expect=SEGFAULT, install=IMAGE,
             facts="the faulthandler dump's shape (tqdm monitor and inductor compile-worker threads before the crashing one), frames (prefill.py 345/490 -> disaggregation/utils.py 55 poll_and_all_reduce -> c10d_logger 81 -> distributed_c10d 2931 all_reduce), /sgl-workspace paths",
             resolution="No fix confirmed (open, filed by a maintainer).", paste=(paste.fenced,)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/10350", kind="segfault-faulthandler", style="double-spaced",
             parts=(prefill_poll(QUEUE_READER, TQDM_MONITOR),), expect=SEGFAULT, install=DOCKER,
             facts="a dump starting at 'Fatal Python error: Segmentation fault' with a blank line after every line, a thread in disaggregation/common/utils.py line 24 in get; the crashing thread's frames are the 9950 ones",
             resolution="Closed as inactive.", paste=(paste.double_space,)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/7338", kind="segfault-faulthandler", style="quote",
             parts=(replace(MOONCAKE, case=MOONCAKE_CASE),), install=IMAGE,
             expect=Expect("native-crash", "Fatal Python error", "Segmentation fault", frame="transfer_sync"),
             facts="the segfault on the transfer thread in mooncake/transfer_engine.py line 75 transfer_sync, called from mooncake/conn.py line 259 process_layer, after a mooncake upgrade to 0.3.6",
             resolution="Seen after upgrading mooncake to 0.3.6; not resolved in what was recorded.", paste=(paste.quote,)),

    WildCase(**VERL_ABORT_THREAD, style="quoted-ray", parts=(Run(OVERLAP_THREAD, primary=True), ABORT_TEXT, Run(ABORT_DUMP)),
             expect=Expect("illegal-memory-access", *LAUNCH_FAILURE, frame="synchronize"),
             facts="the overlap thread's 'unspecified launch failure' at torch/cuda/streams.py super().synchronize(), C++ frames under sglang::scheduler_TP1, then faulthandler's 'Fatal Python error: Aborted'; Ray prefix with ip, ANSI remains, autolinked libc.so, the whole log quoted",
             paste=(RAY_NODE, paste.autolinked, paste.quote)),
    WildCase(**VERL_ABORT_THREAD, style="cut-at-frames", parts=(Run(OVERLAP_THREAD), ABORT_TEXT, Run(ABORT_DUMP, primary=True)),
             expect=Expect("native-crash", "Fatal Python error", "Aborted", frame="synchronize"),
             facts="the excerpt as recorded: it begins at the C++ frames (Py_RunMain ... sglang::scheduler_TP1), then 'Fatal Python error: Aborted' and the thread dump; the CUDA error above it is not in the paste",
             paste=(partial(paste.cut_at_start, marker="Py_RunMain"), RAY_NODE, paste.autolinked, paste.quote)),
)
