"""Stop 57 (ports21): a port SGLang lays out itself, named by wait_port_available's message, is never given the HTTP
port's fix.

PortArgs.init_new (sglang/srt/server_args.py, 0.5.9 and 0.5.23) checks the ports of DP attention's layout by name:
dist_init_port (the rendezvous port), port_base, detokenizer_port, rpc_port, metrics_ipc_name / metrics_port,
scheduler_input_port, at the rendezvous port + 0 to + 5 (facts/sglang_ports.toml).  Split 20's E-02
(gpustack/gpustack#5842) had "metrics_port at … is not available", held by a process named sglang, answered with
"set --port <that port + 1>".  The tracebacks below are real CPython's, raised by the engine's own f-string.
"""

from __future__ import annotations

import subprocess
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


def _layouts_holding(taken: int) -> list[range]:
    """Every layout of rendezvous + 0 to + 6 (last_offset) that holds `taken`: another server's ports."""
    return [range(first, first + last_offset() + 1) for first in range(taken - last_offset(), taken + 1)]


def test_a_port_the_launch_puts_there_through_port_moves_past_every_layout_that_can_hold_it(tmp_path: Path) -> None:
    """One node, DP attention, no --dist-init-addr: the rendezvous is --port + 233 and the metrics port + 4.  The
    moved layout must be clear of every layout holding the taken port (review of stop 57: a move by 7 from this
    launch's own rendezvous landed in the other server's ports, real SGLang 0.5.9)."""
    launch = "python3 -m sglang.launch_server --model-path /m --port 30000 --tp 2 --dp 2 --enable-dp-attention"
    taken = 30000 + 233 + 4
    fix = first_diagnosis(_port_failure(tmp_path, taken, "metrics_port", launch=launch)).fix
    assert fix is not None and not fix.flags
    assert "--port 30000 + 233" in fix.summary
    [(summary, flag, value)] = _all_flags(fix)
    assert flag == "--port" and value is not None and "clients must use the new one" in summary
    moved = range(int(value) + 233, int(value) + 233 + last_offset() + 1)
    assert moved[-1] <= 65535
    assert all(not set(moved) & set(other) for other in _layouts_holding(taken))


def test_a_port_the_launch_puts_there_through_dist_init_addr_moves_that_address_past_them(tmp_path: Path) -> None:
    launch = ("python3 -m sglang.launch_server --model-path /m --tp 8 --dp 8 --enable-dp-attention "
              "--dist-init-addr 10.0.0.1:5000 --nnodes 2 --node-rank 0")
    fix = first_diagnosis(_port_failure(tmp_path, 5002, "detokenizer_port", launch=launch)).fix
    assert fix is not None and not fix.flags
    assert "--dist-init-addr's port, 5000" in fix.summary
    [(_, flag, value)] = _all_flags(fix)
    assert flag == "--dist-init-addr" and value is not None and value.startswith("10.0.0.1:")
    first = int(value.rpartition(":")[2])
    assert all(not set(range(first, first + last_offset() + 1)) & set(other) for other in _layouts_holding(5002))


@pytest.mark.parametrize(("launch_flags", "taken", "name"), [
    ("--dist-init-addr 10.0.0.1:65530 --nnodes 2 --node-rank 0", 65530, "dist_init_port"),  # 65530 + 6 > 65535
    ("--port 65300", 65533, "dist_init_port"),  # rendezvous 65533: its layout passes 65535
    ("--port 65290", 65527, "metrics_port"),  # a move past 65527's layouts would start at 65534
])
def test_no_move_gives_or_needs_a_port_above_65535(tmp_path: Path, launch_flags: str, taken: int, name: str) -> None:
    """0.5.23 rejects a port above 65535 (wait_port_available: 'has invalid port number'), and 0.5.15+ lays a
    layout that would pass it out below the rendezvous port: no flag change, no number of ours."""
    launch = f"python3 -m sglang.launch_server --model-path /m --tp 2 --dp 2 --enable-dp-attention {launch_flags}"
    fix = first_diagnosis(_port_failure(tmp_path, taken, name, launch=launch)).fix
    assert fix is not None and not _all_flags(fix)
    assert not any("would place" in step for step in fix.steps)


def test_the_layout_the_engine_logged_overrules_the_table_when_they_differ(tmp_path: Path) -> None:
    """PortArgs.init_new logs the layout it used before it re-raises ('Port is already in use. dist_init_port=…',
    sglang/srt/server_args.py 0.5.5 to 0.5.23).  0.5.15+ near 65535 puts port_base below the rendezvous port: the
    table's numbers are not this launch's, so none are printed and no flag moves.  (A record whose format shows its
    level: one without is not kept as the failure's context, and the launch's own numbers decide.)"""
    launch = "python3 -m sglang.launch_server --model-path /m --tp 2 --dp 2 --enable-dp-attention --port 30000"
    logged = ("[2026-02-01 10:00:00] ERROR Port is already in use. dist_init_port=30233 port_base=30226 detokenizer_port=30227 nccl_port=41999 "
              "scheduler_input_port=30230\n")
    log = _port_failure(tmp_path, 30237, "metrics_port", launch=launch).replace("Traceback", logged + "Traceback", 1)
    fix = first_diagnosis(log).fix
    assert fix is not None and not _all_flags(fix)
    steps = " ".join(fix.steps)
    assert "would place" not in steps and "'Port is already in use. dist_init_port=…'" in steps


def test_the_rendezvous_port_is_named_with_its_flag(tmp_path: Path) -> None:
    fix = first_diagnosis(_port_failure(tmp_path, 5000, "dist_init_port")).fix
    assert fix is not None and "--dist-init-addr's port sets it" in fix.summary and "no flag sets it" not in fix.summary


@pytest.mark.parametrize(("cmdline", "engine"), [
    ("['/home/u/.venvs/sglang-0.5.9/bin/python', 'other_job.py']", False),  # a path, not the engine
    ("['python3', '-m', 'sglang.launch_server', '--port', '30003']", True),
])
def test_the_holder_is_an_sglang_server_by_its_own_words_not_a_path(tmp_path: Path, cmdline: str, engine: bool) -> None:
    holder = f"process.name()='python3' process.cmdline()={cmdline} process.status()='sleeping' pid=4100"
    fix = first_diagnosis(_port_failure(tmp_path, 30237, "metrics_port", holder=holder)).fix
    assert fix is not None and ("likely another SGLang server" in fix.summary) == engine


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


_HOLD_AND_INIT = """\
import socket, sys, types
from sglang.srt.server_args import PortArgs
first, port = int(sys.argv[1]), int(sys.argv[2])
held = []
for p in range(first, first + 7):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", p)); s.listen()
    held.append(s)
args = types.SimpleNamespace(nccl_port=41999, tokenizer_worker_num=1, enable_dp_attention=True, nnodes=1,
                             dist_init_addr=None, port=port)
PortArgs.init_new(args)
print("laid out")
"""


@pytest.mark.oracle
def test_real_port_args_lays_the_moved_port_out_clear_of_every_layout_holding_the_taken_one(tmp_path: Path) -> None:
    """Real SGLang 0.5.9's PortArgs.init_new (its oracle venv): another server's seven ports held wherever they hold
    the taken metrics port, the --port logsleuth offers lays this launch's ports out without a collision."""

    python = next(Path.home().glob(".cache/logsleuth/oracle/sglang-0.5.9/bin/python"), None)
    if python is None:
        pytest.skip("the oracle venv sglang-0.5.9 is not set up (make oracle-setup)")
    launch = "python3 -m sglang.launch_server --model-path /m --port 30000 --tp 2 --dp 2 --enable-dp-attention"
    taken = 30000 + 233 + 4
    fix = first_diagnosis(_port_failure(tmp_path, taken, "metrics_ipc_name", launch=launch)).fix
    [(_, flag, value)] = _all_flags(fix)
    assert flag == "--port" and value is not None
    script = tmp_path / "hold_and_init.py"
    script.write_text(_HOLD_AND_INIT)
    for other in _layouts_holding(taken):
        run = subprocess.run([str(python), str(script), str(other.start), value], capture_output=True, text=True,
                             timeout=300, cwd=tmp_path)
        assert "laid out" in run.stdout, (other, run.stderr[-400:])
