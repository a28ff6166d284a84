"""Nodes of a launch for the merge tests: each node's log written to a file, each node's report made by the real
`logsleuth diagnose LOG --format json --host NODE -o DIR/NODE.json`, as the Slurm recipe runs it on every node."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import CliResult, run_cli
from tests.logs import noise
from tests.test_fleet_report import nccl_timeout, oom


def rack_logs() -> dict[str, str]:
    """node03 runs out of GPU memory first; node01, node02 and node04 time out in NCCL ten minutes later (the
    cascade); node05 is healthy.  As tests/test_fleet_report.py's rack, which the fan-out of local files reads."""
    return {
        "node01": nccl_timeout("02:20:03", "TP1"),
        "node02": nccl_timeout("02:20:04", "TP2"),
        "node03": noise(5, "2025-11-06 02:09:00") + oom(),
        "node04": nccl_timeout("02:20:03", "TP4"),
        "node05": noise(20, "2025-11-06 02:19:00"),
    }


def write_logs(directory: Path, logs: dict[str, str]) -> dict[str, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = {}
    for node, text in logs.items():
        paths[node] = directory / f"{node}.log"
        paths[node].write_text(text)
    return paths


def diagnose_on_node(node: str, log: Path, reports: Path, *extra: str) -> CliResult:
    """What one node runs: the real diagnose of its own log, its JSON report written to REPORTS/NODE.json."""
    reports.mkdir(parents=True, exist_ok=True)
    return run_cli("diagnose", str(log), "--format", "json", "--host", node, "-o", str(reports / f"{node}.json"), *extra)


def node_reports(tmp_path: Path, logs: dict[str, str]) -> tuple[dict[str, Path], Path]:
    """Every node's log and report: (node -> log path, the reports' directory)."""
    paths = write_logs(tmp_path / "logs", logs)
    reports = tmp_path / "reports"
    for node, path in paths.items():
        result = diagnose_on_node(node, path, reports)
        assert result.exit_code in (0, 1), result.stderr
    return paths, reports
