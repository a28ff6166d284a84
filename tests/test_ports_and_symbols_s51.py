"""Stop 51 (wrapper15): a port SGLang chose itself, and a vendor runtime's symbol under sgl-kernel.

A ZMQ socket of SGLang's on 127.0.0.1 binds a port the engine picked (sglang/srt/server_args.py PortArgs.init_new:
DP attention's ZMQ ports at --port + 233 and up; sglang/srt/distributed/device_communicators/shm_broadcast.py: the
message queue at a port get_open_port() found free).  Released code handed such a port out twice:
sgl-project/sglang#4599 (DP attention, bench_offline_throughput; fixed by #4648) and sgl-project/sglang#29547 (the
message queue's port).  The report leads with the engine's own allocation and keeps "another process" second.

sgl-kernel's compiled library missing a symbol of another library's C++ namespace (Ascend ATB's `_ZN3atb…`,
vllm-project/vllm-ascend#117) is not "built for another torch": only torch's namespaces (c10::, at::, torch::) are
(sgl-project/sglang#5100 for the torch case).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import traceback_of_installed
from tests.reasoning.diagnosed import first_diagnosis

ZMQ_FILES = {
    "zmq/error.py": "class ZMQError(Exception):\n    pass\n",
    "zmq/sugar/socket.py": (
        "from zmq.error import ZMQError\n\n\n"
        "def bind(addr):\n"
        "    raise ZMQError(f\"Address already in use (addr={addr!r})\")\n"
    ),
    "sglang/srt/distributed/device_communicators/shm_broadcast.py": (
        "from zmq.sugar import socket\n\n\n"
        "class MessageQueue:\n"
        "    def __init__(self, socket_addr):\n"
        "        socket.bind(socket_addr)\n"
    ),
}


def _zmq_bind_failure(tmp_path: Path, address: str, command: str) -> str:
    run = traceback_of_installed(
        tmp_path, ZMQ_FILES,
        "from sglang.srt.distributed.device_communicators.shm_broadcast import MessageQueue\n"
        f"MessageQueue({address!r})\n")
    assert "zmq.error.ZMQError: Address already in use" in run.stderr
    return f"$ {command}\n{run.stderr}"


LAUNCH = "python3 -m sglang.launch_server --model-path /models/Qwen3-32B --tp 2 --port 30000"


def test_a_loopback_zmq_port_leads_with_the_engines_own_allocation(tmp_path: Path) -> None:
    """sgl-project/sglang#29547's shape: the message queue's port on 127.0.0.1, a port no flag of the launch set."""
    diagnosis = first_diagnosis(_zmq_bind_failure(tmp_path, "tcp://127.0.0.1:56623", LAUNCH))
    assert diagnosis.pattern == "sglang-internal-port-in-use" and diagnosis.category == "port-in-use"
    fix = diagnosis.fix
    assert fix is not None and not fix.flags and not fix.alternatives
    assert fix.summary.startswith("Port 56623 is one SGLang picked itself, not its HTTP port (30000, --port)")
    assert "likely its own allocation colliding (some releases do" in fix.summary and "second check" in fix.summary
    assert "no flag moves it" in fix.summary and "not a setting" not in " ".join(fix.steps)
    assert fix.steps[0].startswith("first, likely the engine's own allocation")
    # the message queue's port comes from get_open_port(): --port, --dist-init-addr and --nccl-port do not move it
    assert "SGLANG_PORT" in fix.steps[1] and "--port" not in fix.steps[1]
    assert "ss -ltnp" not in " ".join(fix.steps[:2]) and fix.steps[-1].startswith("second check, another process")
    assert "another process listens on it, most often" not in diagnosis.root_cause


def test_a_dp_attention_port_without_the_launch_command_reads_the_same(tmp_path: Path) -> None:
    """sgl-project/sglang#4599's shape: the launch command not read, DP attention's port (30000 + 233 + 3)."""
    log = _zmq_bind_failure(tmp_path, "tcp://127.0.0.1:30236", "cd /srv")
    fix = first_diagnosis(log).fix
    assert fix is not None and fix.summary.startswith("Port 30236 is one SGLang picked itself, not its HTTP port nor")
    assert "move --port further from other servers'" in fix.summary
    assert fix.steps[1].startswith("meanwhile, if this launch uses DP attention on one node: its ZMQ ports follow --port")


def test_a_configured_endpoint_on_every_address_keeps_the_other_process_reading(tmp_path: Path) -> None:
    """A ZMQ socket on `*` is one a configuration gave (a KV-events endpoint): not a port the engine picked."""
    diagnosis = first_diagnosis(_zmq_bind_failure(tmp_path, "tcp://*:5557", "cd /srv"))
    assert diagnosis.pattern == "sglang-port-in-use"
    assert diagnosis.fix is not None and "picked itself" not in diagnosis.fix.summary


SGL_KERNEL_FILES = {
    "sgl_kernel/__init__.py": (
        "import os\n\n\n"
        "def load(symbol):\n"
        "    raise ImportError(os.path.dirname(__file__) + '/common_ops.abi3.so: undefined symbol: ' + symbol)\n"
    ),
}


def _sgl_kernel_import(tmp_path: Path, symbol: str) -> str:
    run = traceback_of_installed(tmp_path, SGL_KERNEL_FILES, f"from sgl_kernel import load\nload({symbol!r})\n")
    assert "common_ops.abi3.so: undefined symbol: " in run.stderr
    return "$ python3 -m sglang.launch_server --model-path /models/m\n" + run.stderr


@pytest.mark.parametrize("symbol", [
    "_ZN3atb15CreateOperationINS_5infer14GroupTopkParamEEEiRKT_PPNS_9OperationE",  # atb:: (vllm-ascend#117)
    "_ZN12atb_speed_opsC1Ev",  # a namespace that merely starts with "at"
])
def test_another_librarys_mangled_symbol_is_not_a_torch_sgl_kernel_pair(tmp_path: Path, symbol: str) -> None:
    diagnosis = first_diagnosis(_sgl_kernel_import(tmp_path, symbol))
    assert diagnosis.pattern != "sglang-sgl-kernel-abi"
    assert "built against another torch" not in diagnosis.root_cause + diagnosis.title


@pytest.mark.parametrize("symbol", [
    "_ZN3c104cuda9SetDeviceEi",  # sgl-project/sglang#5100's c10::cuda::SetDevice
    "_ZNK3c106SymInt6sym_neERKS0_",  # a const method of c10::SymInt
    "_ZN5torch3jit17parseSchemaOrNameERKSsb",  # torch::jit
    "_ZN4c10d12ProcessGroupD2Ev",  # c10d::ProcessGroup, torch's distributed namespace
])
def test_a_torch_symbol_keeps_the_sgl_kernel_torch_pair(tmp_path: Path, symbol: str) -> None:
    assert first_diagnosis(_sgl_kernel_import(tmp_path, symbol)).pattern == "sglang-sgl-kernel-abi"
