"""The process and its surroundings: killed from outside (no traceback at all), the resource
tracker's KeyError left behind by a kill, and a port another process holds.

Patterns: common-process-killed, common-resource-tracker-keyerror, sglang-port-in-use, sglang-internal-port-in-use.
"""

from __future__ import annotations

from ..engine import Case, Frame
from ..mirror import (
    DECODE,
    HTTP_LAUNCH,
    LOAD_BEGIN,
    LOAD_END,
    QWEN2,
    RESOURCE_TRACKER,
    SIGQUIT,
    from_launch_server,
    kv_alloc_frames,
    launch_crash,
    oom,
    raise_frame,
    scheduler_crash,
    to_initialize,
    weight_key_error,
)

HTTP_SERVER = "sglang/srt/entrypoints/http_server.py"

WAIT_PORT_AVAILABLE = """
    for i in range(timeout_s):
        if is_port_available(port):
            return True
        error_message = f"{port_name} is used by a process already. {process.name()=}' {process.cmdline()=} {process.status()=} {pid=}"
    if raise_exception:
        raise ValueError(
            f"{port_name} at {port} is not available in {timeout_s} seconds. {error_message}"
        )
    """
WAIT_PORT_ENV = (
    ("timeout_s", "30"), ("is_port_available", "lambda port: False"), ("port", "_args[0]"), ("port_name", "_args[1]"),
    ("process", "NS(name=lambda: 'python3', cmdline=lambda: ['python3', '-m', 'sglang.launch_server', '--port', '30000'], status=lambda: 'sleeping')"),
    ("pid", "48213"), ("raise_exception", "True"),
)


def port_busy(port: int, which: str) -> tuple[Frame, ...]:
    """PortArgs waiting in vain for `port` (its `which` port) to become free."""
    return from_launch_server(
        HTTP_LAUNCH,
        Frame("sglang/srt/entrypoints/engine.py", "_launch_subprocesses", "port_args = PortArgs.init_new(server_args)", lineno=1040),
        Frame("sglang/srt/server_args.py", "init_new", f"wait_port_available({port}, {which!r})", env=(("wait_port_available", "NEXT"),), lineno=5682),
        Frame("sglang/srt/utils/common.py", "wait_port_available", body=WAIT_PORT_AVAILABLE, env=WAIT_PORT_ENV, lineno=709),
    )


# the warm-up request finding nobody listening
CONNECTION_REFUSED = from_launch_server(
    Frame(HTTP_SERVER, "launch_server", "_wait_and_warmup(server_args)", lineno=1420),
    raise_frame(HTTP_SERVER, "_wait_and_warmup", """
    sock = socket.socket()
    sock.connect(("127.0.0.1", _free_port()))
    """, env=(("socket", "__import__('socket')"),), lineno=1500),
)

# pyzmq's bind failing (zmq/sugar/socket.py Socket.bind: the C call's error re-raised with the address it tried).
ZMQ_ERROR_MODULES = (
    ("zmq/__init__.py", ""),
    ("zmq/error.py", "class ZMQError(Exception):\n    pass\n"),
)


def zmq_bind(address: str) -> Frame:
    return raise_frame("zmq/sugar/socket.py", "bind", """
    raise ZMQError(f"Address already in use (addr={addr!r})")
    """, env=(("ZMQError", "__import__('zmq.error').error.ZMQError"), ("addr", repr(address))), lineno=311)


def message_queue_bind(version: str, address: str) -> tuple[Frame, ...]:
    """The TP group's shared-memory message queue binding its ZMQ socket at start-up (shm_broadcast.MessageQueue).
    A bind at a port found free earlier, as 0.5.9's shm_broadcast.py:217 does; 0.5.23 binds a random free port
    atomically there (bind_to_random_port), so the shape is 0.5.9's."""
    return (
        *to_initialize(version, "self.init_torch_distributed()", 716),
        Frame("sglang/srt/model_executor/model_runner.py", "init_torch_distributed", "initialize_model_parallel(tensor_model_parallel_size=self.tp_size)", env=(("initialize_model_parallel", "NEXT"),), lineno=860),
        Frame("sglang/srt/distributed/parallel_state.py", "initialize_model_parallel", "MessageQueue(n_reader=1, n_local_reader=1)", env=(("MessageQueue", "NEXT"),), lineno=1560),
        Frame("sglang/srt/distributed/device_communicators/shm_broadcast.py", "__init__", "self.local_socket.bind(socket_addr)", env=(("socket_addr", repr(address)),), lineno=215),
        zmq_bind(address),
    )


CASES = (
    Case("common-process-killed", "positive-sigquit-killed", (), mode="lines", ranks="", before=(LOAD_BEGIN,), after=(SIGQUIT,), raw_after=("Killed",)),
    scheduler_crash("common-process-killed", "negative-traceback-first", kv_alloc_frames("0.5.9"), before=(LOAD_END,), raw_after=("Killed",), torch_error=oom("1.75 GiB")),

    Case("common-resource-tracker-keyerror", "positive-after-kill", (RESOURCE_TRACKER,), mode="plain", ranks="", before=(DECODE,), raw_after=("Killed",)),
    scheduler_crash("common-resource-tracker-keyerror", "negative-weight-keyerror", weight_key_error(QWEN2, "model.layers.3.mlp.gate_up_proj.qweight"), before=(LOAD_BEGIN,)),

    *(launch_crash("sglang-port-in-use", f"positive-{version}-{which.replace('_', '-')}", port_busy(port, which))
      for version, which, port in (("0.5.9", "nccl_port", 30412), ("0.5.23", "detokenizer_port", 30001))),
    launch_crash("sglang-port-in-use", "negative-connection-refused", CONNECTION_REFUSED),
    scheduler_crash("sglang-internal-port-in-use", "positive-0.5.9-message-queue", message_queue_bind("0.5.9", "tcp://127.0.0.1:56623"),
                    extra_modules=ZMQ_ERROR_MODULES),
    # a socket on every address: a port a configuration gave (a KV-events endpoint), not one SGLang picked
    scheduler_crash("sglang-internal-port-in-use", "negative-configured-endpoint", message_queue_bind("0.5.9", "tcp://*:5557"),
                    extra_modules=ZMQ_ERROR_MODULES),
)
