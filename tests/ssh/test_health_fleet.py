"""`logsleuth health` across several hosts names, in every format, the source and host of every finding, and
labels each sparkline row with its source (issue 30, finding 3).  Two hosts of the real test sshd: its alias
`logsleuth-alias` and `127.0.0.1`, each with a log of its own and a finding of its own."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from sshd_server import SSHD

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "health" / "0.5.9"
SCRIPT = Path(sys.executable).parent / "logsleuth"
SCHEMA = json.loads((ROOT / "logsleuth" / "health_report.schema.json").read_text(encoding="utf-8"))
ANSI = re.compile(r"\x1b\[[0-9;]*m")

pytestmark = pytest.mark.ssh

ACCEPT = "sglang-health-accept-length-near-one"
RETRACT = "sglang-health-kv-pool-full-retract"
TITLES = {ACCEPT: "Speculative decoding accepts next to nothing", RETRACT: "The KV cache pool keeps filling up"}


def _fleet(sshd: SSHD) -> list[tuple[str, str, str]]:
    """(spec, host, pattern) of each log: one finding per host."""
    logs = []
    for name, fixture in (("fleet-accept.log", "accept-near-one.log"), ("fleet-retract.log", "retraction-storm.log")):
        log = sshd.logs / name
        log.write_bytes((FIXTURES / fixture).read_bytes())
        log.chmod(0o644)
        logs.append(log)
    return [
        (f"logsleuth-alias:{logs[0]}", "logsleuth-alias", ACCEPT),
        (f"logsleuth-test@127.0.0.1:{sshd.port}:{logs[1]}", "127.0.0.1", RETRACT),
    ]


def _health(sshd: SSHD, specs: list[str], fmt: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    command = [str(SCRIPT), "health", *specs, "--format", fmt, "--no-user-patterns", "--ssh-config", str(sshd.config),
               "--width", "160"]
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=120)


def test_every_finding_names_its_source_and_host_in_json(sshd: SSHD) -> None:
    fleet = _fleet(sshd)
    done = _health(sshd, [spec for spec, _, _ in fleet], "json")
    assert done.returncode == 1, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    jsonschema.validate(report, SCHEMA)
    where = {finding["pattern"]: (finding["sources"], finding["hosts"]) for finding in report["findings"]}
    assert where == {pattern: ([spec], [host]) for spec, host, pattern in fleet}
    series_sources = {series["source"] for series in report["series"]}
    assert series_sources == {spec for spec, _, _ in fleet}


@pytest.mark.parametrize("fmt", ["text", "rich", "markdown", "slack"])
def test_every_finding_names_its_source_and_host(sshd: SSHD, fmt: str) -> None:
    fleet = _fleet(sshd)
    done = _health(sshd, [spec for spec, _, _ in fleet], fmt)
    assert done.returncode == 1, done.stderr
    out = ANSI.sub("", done.stdout).replace("\\", "")  # markdown escapes `_` in paths
    ends = [out.find(marker) for marker in ("Over the run", "_Full log:")]  # the series and slack's footer name
    findings = out[: min([end for end in ends if end >= 0], default=len(out))]  # every source
    # Each finding's block, from its title (the last time it is named: the verdict names it first) to the next
    # finding's, names its own source and host, and not the other's.
    starts = sorted((findings.rfind(TITLES[pattern]), spec, host) for spec, host, pattern in fleet)
    assert all(start > findings.index("\n") for start, _, _ in starts), out  # after the verdict line
    for index, (start, spec, host) in enumerate(starts):
        block = findings[start : starts[index + 1][0] if index + 1 < len(starts) else len(findings)]
        others = [other for _, other, _ in starts if other != spec]
        assert f"on {host}" in block and spec in block, (fmt, spec, block)
        assert not any(other in block for other in others), (fmt, spec, block)


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_each_sparkline_row_is_labelled_with_its_source(sshd: SSHD, fmt: str) -> None:
    fleet = _fleet(sshd)
    done = _health(sshd, [spec for spec, _, _ in fleet], fmt)
    assert done.returncode == 1, done.stderr
    series_part = done.stdout[done.stdout.index("Over the run") :]
    rows = [line for line in series_part.splitlines() if any(bar in line for bar in "▁▂▃▄▅▆▇█")]
    assert len(rows) >= 8, series_part  # at least 4 series of each of the 2 hosts
    hosts = [host for _, host, _ in fleet]
    assert all(sum(host in row for host in hosts) == 1 for row in rows), series_part
    assert all(sum(host in row for row in rows) >= 4 for host in hosts), series_part  # each host's own series
