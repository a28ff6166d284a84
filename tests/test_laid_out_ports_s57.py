"""Stop 57 (ports21): a port SGLang lays out itself, named by wait_port_available's message, is never given the HTTP
port's fix.

PortArgs.init_new (sglang/srt/server_args.py, 0.5.9 and 0.5.23) checks the ports of DP attention's layout by name:
dist_init_port (the rendezvous port), port_base, detokenizer_port, rpc_port, metrics_ipc_name / metrics_port,
scheduler_input_port, at the rendezvous port + 0 to + 5 (facts/sglang_ports.toml).  Split 20's E-02
(gpustack/gpustack#5842) had "metrics_port at … is not available", held by a process named sglang, answered with
"set --port <that port + 1>".  The tracebacks below are real CPython's, raised by the engine's own f-string.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.facts.sglang_ports import last_offset, own_port, own_ports, rendezvous_delta
from tests.helpers import traceback_of_installed
from tests.reasoning.diagnosed import first_diagnosis

# The engine's raise (sglang/srt/utils/network.py 0.5.23, utils/common.py 0.5.9) and its caller's call, by name.
PORT_FILES = {
    "sglang/srt/utils/network.py": (
        "def wait_port_available(port, port_name, timeout_s=30, holder=''):\n"
        "    error_message = f'{port_name} is used by a process already. ' + holder\n"
        "    raise ValueError(\n"
        "        f'{port_name} at {port} is not available in {timeout_s} seconds. {error_message}'\n"
        "    )\n"
    ),
    "sglang/srt/server_args.py": (
        "from sglang.srt.utils.network import wait_port_available\n\n\n"
        "class PortArgs:\n"
        "    @staticmethod\n"
        "    def init_new(port, name, holder):\n"
        "        wait_port_available(port, name, holder=holder)\n"
    ),
}
SGLANG_HOLDER = "process.name()='sglang' process.cmdline()="


def _port_failure(tmp_path: Path, port: int, name: str, holder: str = SGLANG_HOLDER, launch: str = "") -> str:
    run = traceback_of_installed(
        tmp_path, PORT_FILES,
        f"from sglang.srt.server_args import PortArgs\nPortArgs.init_new({port}, {name!r}, {holder!r})\n")
    assert f"ValueError: {name} at {port} is not available in 30 seconds." in run.stderr
    return (f"$ {launch}\n" if launch else "") + run.stderr


def _all_flags(fix) -> list[tuple[str, str, str | None]]:
    fixes = [fix, *fix.alternatives]
    return [(f.summary, op.flag, op.value) for f in fixes for op in f.flags]


def test_the_table_matches_the_layout_of_port_args() -> None:
    """The offsets are PortArgs.init_new's: port_base = rendezvous + 1, then + 1, + 2, + 3, + 4 after it."""
    offsets = {name: port.offset for name, port in own_ports().items()}
    assert offsets["dist_init_port"] == 0 and offsets["port_base"] == 1 and offsets["detokenizer_port"] == 2
    assert offsets["rpc_port"] == 3 and offsets["metrics_port"] == offsets["metrics_ipc_name"] == 4
    assert offsets["scheduler_input_port"] == 5 and offsets["nccl_port"] is None
    assert rendezvous_delta() == 233 and last_offset() == 6
    assert own_port("metrics_port").releases == ("0.5.23",) and own_port("metrics_ipc_name").releases == ("0.5.9",)


def test_a_metrics_port_with_no_launch_is_named_and_no_port_flag_is_set(tmp_path: Path) -> None:
    """E-02's shape: the one line, the holder's name kept, its command line cut; no launch in the paste."""
    diagnosis = first_diagnosis(_port_failure(tmp_path, 40290, "metrics_port"))
    assert diagnosis.category == "port-in-use"
    fix = diagnosis.fix
    assert fix is not None and not _all_flags(fix)
    assert fix.summary.startswith("Port 40290 is SGLang's metrics_port, the metrics ZMQ port")
    assert "rendezvous port + 4" in fix.summary and "not the HTTP port" in fix.summary
    assert "a process named 'sglang'" in fix.summary and "another SGLang server on this host" in fix.summary
    assert fix.steps[0] == "see who holds it: ss -ltnp | grep ':40290'"
    assert "set --port" not in " ".join(fix.steps)


def test_a_port_the_launch_puts_there_through_port_moves_with_port(tmp_path: Path) -> None:
    """One node, DP attention, no --dist-init-addr: the rendezvous is --port + 233 and the metrics port + 4."""
    launch = "python3 -m sglang.launch_server --model-path /m --port 30000 --tp 2 --dp 2 --enable-dp-attention"
    fix = first_diagnosis(_port_failure(tmp_path, 30000 + 233 + 4, "metrics_port", launch=launch)).fix
    assert fix is not None and not fix.flags
    assert "--port 30000 + 233" in fix.summary
    assert [(flag, value) for _, flag, value in _all_flags(fix)] == [("--port", "30007")]


def test_a_port_the_launch_puts_there_through_dist_init_addr_moves_that_address(tmp_path: Path) -> None:
    launch = ("python3 -m sglang.launch_server --model-path /m --tp 8 --dp 8 --enable-dp-attention "
              "--dist-init-addr 10.0.0.1:5000 --nnodes 2 --node-rank 0")
    fix = first_diagnosis(_port_failure(tmp_path, 5002, "detokenizer_port", launch=launch)).fix
    assert fix is not None and not fix.flags
    assert "--dist-init-addr's port, 5000" in fix.summary
    assert [(flag, value) for _, flag, value in _all_flags(fix)] == [("--dist-init-addr", "10.0.0.1:5007")]


def test_a_port_the_launch_does_not_put_there_sets_no_flag(tmp_path: Path) -> None:
    """The launch's --port would put the metrics port at 30237, not at the port the message names."""
    launch = "python3 -m sglang.launch_server --model-path /m --port 30000 --enable-dp-attention --dp 2"
    fix = first_diagnosis(_port_failure(tmp_path, 40290, "metrics_port", launch=launch)).fix
    assert fix is not None and not _all_flags(fix)
    assert any("would place metrics_port at 30237, not 40290" in step for step in fix.steps)


@pytest.mark.parametrize("holder", [
    "process.name()='python3' process.cmdline()=['python3', '-m', 'sglang.launch_server', '--port', '30000'] "
    "process.status()='sleeping' pid=48213",
    "",
])
def test_the_holder_the_message_names_is_said_and_never_invented(tmp_path: Path, holder: str) -> None:
    fix = first_diagnosis(_port_failure(tmp_path, 30001, "port_base", holder=holder)).fix
    assert fix is not None and not _all_flags(fix)
    assert ("pid 48213 (python3 -m sglang.launch_server --port 30000)" in fix.summary) == bool(holder)
    assert ("holds it" in fix.summary) == bool(holder)


def test_the_nccl_port_keeps_its_own_flag(tmp_path: Path) -> None:
    """nccl_port is set by --nccl-port, not laid out from the rendezvous port: its own flag's fix stays."""
    fix = first_diagnosis(_port_failure(tmp_path, 41000, "nccl_port")).fix
    assert fix is not None and [flag for _, flag, _ in _all_flags(fix)] == ["--nccl-port"]
