"""NCCL and torch.distributed: communicator set-up and collectives failing, the watchdog timing out,
the c10d store dropping the connection.

Patterns: sglang-nccl-error, sglang-nccl-shm-exhausted, sglang-nccl-remote-error,
sglang-nccl-watchdog-timeout, sglang-tcpstore-connection-reset.
"""

from __future__ import annotations

from ..engine import Frame
from ..mirror import DECODE, QWEN_FORWARD, forward_frames, scheduler_crash, to_initialize

PARALLEL_STATE = "sglang/srt/distributed/parallel_state.py"
PYNCCL = "sglang/srt/distributed/device_communicators/pynccl.py"

ALL_REDUCE = Frame(
    "torch/distributed/distributed_c10d.py", "all_reduce", "work = group.allreduce([tensor], opts)",
    env=(("group", "NS(allreduce=__import__('torch').C_RAISER)"), ("tensor", "None"), ("opts", "None")), lineno=2806,
)
# start-up: the tensor-parallel group's PyNccl communicator warming up with an all-reduce
TO_COMMUNICATOR = (
    *to_initialize("0.5.9", "self.init_torch_distributed()", 440),
    Frame("sglang/srt/model_executor/model_runner.py", "init_torch_distributed", "initialize_model_parallel(tensor_model_parallel_size=self.tp_size, pipeline_model_parallel_size=self.pp_size)", lineno=770),
    Frame(PARALLEL_STATE, "initialize_model_parallel", "_TP = init_model_parallel_group(group_ranks, get_world_group().local_rank, backend, use_custom_allreduce=use_custom_allreduce, group_name='tp')", lineno=1450),
    Frame(PARALLEL_STATE, "init_model_parallel_group", "return GroupCoordinator(group_ranks=group_ranks, local_rank=local_rank, torch_distributed_backend=backend)", lineno=1290),
    Frame(PARALLEL_STATE, "__init__", "self.pynccl_comm = PyNcclCommunicator(group=self.cpu_group, device=self.device)", lineno=300),
    Frame(PYNCCL, "__init__", "self.all_reduce(data)", lineno=130),
)
COMMUNICATOR = (
    *TO_COMMUNICATOR,
    Frame(PYNCCL, "all_reduce", "dist.all_reduce(tensor, group=self.group)", lineno=150),
    ALL_REDUCE,
)
# ... and (as the fixture has it, from a second PyNcclCommunicator.__init__) fetching its unique id
# through the c10d store
RENDEZVOUS = (
    *TO_COMMUNICATOR,
    Frame(PYNCCL, "__init__", "self.unique_id = ncclGetUniqueIdFromStore(self.group)", lineno=110),
    Frame("torch/distributed/distributed_c10d.py", "broadcast_object_list", "broadcast(object_sizes_tensor, src=src, group=group)",
          env=(("broadcast", "__import__('torch').ops.broadcast"),), lineno=3479),
)
# serving: a tensor-parallel linear layer's all-reduce
SERVING = (
    *forward_frames("0.5.9"),
    QWEN_FORWARD,
    Frame("sglang/srt/layers/linear.py", "forward", "output = tensor_model_parallel_all_reduce(output_parallel)", lineno=1380),
    Frame("sglang/srt/distributed/communication_op.py", "tensor_model_parallel_all_reduce", "return get_tp_group().all_reduce(input_)", lineno=13),
    Frame(PARALLEL_STATE, "all_reduce", "torch.distributed.all_reduce(input_, group=self.device_group)", lineno=520),
    ALL_REDUCE,
)

# NCCL's result codes: (where ProcessGroupNCCL checks it, the text, ncclGetErrorString's explanation)
NCCL_RESULTS = {
    "cuda": ("ProcessGroupNCCL.cpp:3356", "unhandled cuda error (run with NCCL_DEBUG=INFO for details)", "ncclUnhandledCudaError: Call to CUDA function failed."),
    "system": ("NCCLUtils.cpp:77", "unhandled system error (run with NCCL_DEBUG=INFO for details)",
               "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. "),
    "remote": ("ProcessGroupNCCL.cpp:3356", "remote process exited or there was a network error",
               "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely."),
}


def nccl_error(result: str, last_error: str = "") -> tuple[str, str]:
    where, text, explanation = NCCL_RESULTS[result]
    message = f"NCCL error in: /pytorch/torch/csrc/distributed/c10d/{where}, {text}, NCCL version 2.27.3\n{explanation}"
    if last_error:
        message += f"\nLast error:\n{last_error}"
    return ("torch.distributed.DistBackendError", message)


PEER_ACCESS = nccl_error("cuda", "Cuda failure 'peer access is not supported between these two devices'")
PEER_CLOSED = nccl_error("remote", "socketProgress: Connection closed by remote peer 10-0-3-17.node.internal<46354>")
SHM_FULL = nccl_error("system", "Error while creating shared memory segment /dev/shm/nccl-Zq1v3b (size 9637888), error: No space left on device (28)")
WATCHDOG = (
    "torch.distributed.DistBackendError",
    "[PG ID 2 PG GUID 3 Rank 2] Process group watchdog thread terminated with exception: [Rank 2] Watchdog caught "
    "collective operation timeout: WorkNCCL(SeqNum=77113, OpType=ALLREDUCE, NumelIn=14680064, NumelOut=14680064, "
    "Timeout(ms)=600000) ran for 600031 milliseconds before timing out.",
)
STORE_RESET = (
    "torch.distributed.DistBackendError",
    "[5] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', "
    "but store->get('0') got error: Connection reset by peer\n"
    "Exception raised from recvBytes at /pytorch/torch/csrc/distributed/c10d/Utils.hpp:678 (most recent call first):",
)
STORE_TIMEOUT = ("torch.distributed.DistStoreError", "Timed out after 901 seconds waiting for clients. 2/4 clients joined.")

CASES = (
    scheduler_crash("sglang-nccl-error", "positive-0.5.9-unhandled-cuda-error", COMMUNICATOR, ranks="TP1", torch_error=PEER_ACCESS),
    scheduler_crash("sglang-nccl-error", "negative-remote-error", COMMUNICATOR, ranks="TP1", torch_error=PEER_CLOSED),

    scheduler_crash("sglang-nccl-shm-exhausted", "positive-0.5.9-unhandled-system-error", COMMUNICATOR, ranks="TP1",
                    before=("Init torch distributed begin.",), torch_error=SHM_FULL),
    scheduler_crash("sglang-nccl-shm-exhausted", "negative-unhandled-cuda-error", COMMUNICATOR, ranks="TP1", torch_error=PEER_ACCESS),

    scheduler_crash("sglang-nccl-remote-error", "positive-0.5.9-sibling-died", SERVING, ranks="TP3", before=(DECODE,), torch_error=PEER_CLOSED),
    scheduler_crash("sglang-nccl-remote-error", "negative-unhandled-cuda-error", SERVING, ranks="TP3", before=(DECODE,),
                    torch_error=nccl_error("cuda", "Cuda failure 'out of memory'")),

    scheduler_crash("sglang-nccl-watchdog-timeout", "positive-0.5.9-blocking-wait", SERVING, ranks="TP2", before=(DECODE,), torch_error=WATCHDOG),
    scheduler_crash("sglang-nccl-watchdog-timeout", "negative-store-timeout", COMMUNICATOR, ranks="TP2", torch_error=STORE_TIMEOUT),

    scheduler_crash("sglang-tcpstore-connection-reset", "positive-0.5.9-rendezvous", RENDEZVOUS, ranks="TP5", torch_error=STORE_RESET),
    scheduler_crash("sglang-tcpstore-connection-reset", "negative-nccl-system-error", COMMUNICATOR, ranks="TP5", torch_error=nccl_error("system")),
)
