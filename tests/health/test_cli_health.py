"""`logsleuth health` as a user runs it: the console script, in a child process, on the generated fixtures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "health"
SCRIPT = Path(sys.executable).parent / "logsleuth"
SCHEMA = json.loads((ROOT / "logsleuth" / "health_report.schema.json").read_text(encoding="utf-8"))


def health(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), "health", *args, "--no-user-patterns"],
        capture_output=True, text=True, input=stdin, timeout=60,
    )


def test_a_finding_is_exit_1_with_its_evidence_causes_and_series_in_json() -> None:
    done = health(str(FIXTURES / "0.5.9" / "accept-near-one.log"), "--format", "json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    jsonschema.validate(report, SCHEMA)
    (finding,) = report["findings"]
    assert finding["pattern"] == "sglang-health-accept-length-near-one"
    assert finding["causes"][0]["id"] == "draft-weights-not-loaded"
    assert "accept len: 1.0" in finding["evidence"][0]["text"]
    series = {s["name"]: s for s in report["series"]}
    assert {"throughput", "accept_length", "queue_requests"} <= set(series)
    assert max(p["value"] for p in series["accept_length"]["points"]) <= 1.2


def test_a_healthy_log_is_exit_0_and_says_so_in_text_with_sparklines() -> None:
    done = health(str(FIXTURES / "0.5.23" / "healthy-spec.log"), "--format", "text")
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("healthy: no finding in ")
    assert any(ch in done.stdout for ch in "▁▂▃▄▅▆▇█")


@pytest.mark.parametrize("fmt", ["text", "markdown", "slack", "rich", "json"])
def test_every_format_names_the_finding(fmt: str) -> None:
    done = health(str(FIXTURES / "0.5.23" / "retraction-storm.log"), "--format", fmt)
    assert done.returncode == 1, done.stderr
    assert "KV cache pool keeps filling up" in done.stdout
    if fmt == "slack":
        assert len(done.stdout) <= 3500


def test_stdin_and_a_plain_command_line_take_the_quick_path() -> None:
    text = (FIXTURES / "0.5.9" / "queue-growth.log").read_text(encoding="utf-8")
    done = health("--format", "json", stdin=text)
    assert done.returncode == 1, done.stderr
    assert [f["pattern"] for f in json.loads(done.stdout)["findings"]] == ["sglang-health-queue-growth"]


def test_bad_input_is_one_line_and_a_documented_exit(tmp_path: Path) -> None:
    missing = health(str(tmp_path / "nope.log"), "--format", "text")
    assert missing.returncode == 3
    assert missing.stderr.count("\n") == 1 and "nope.log" in missing.stderr and "Traceback" not in missing.stderr
    empty = tmp_path / "empty.log"
    empty.write_text("nothing to see\n")
    nothing = health(str(empty), "--format", "text")
    assert nothing.returncode == 3  # no batch line: nothing to judge, which is not "healthy"
    assert "no Prefill/Decode batch lines" in nothing.stdout
    binary = tmp_path / "binary.log"
    binary.write_bytes(bytes(range(256)) * 1000)
    assert health(str(binary), "--format", "json").returncode == 3
    usage = health("--width", "0", str(empty))
    assert usage.returncode == 2 and "Traceback" not in usage.stderr


def test_a_planted_secret_never_reaches_the_report(tmp_path: Path) -> None:
    text = (FIXTURES / "0.5.9" / "weights-not-initialized.log").read_text(encoding="utf-8")
    secret = "hf_" + "Zq8" * 12
    log = tmp_path / "secret.log"
    log.write_text(text.replace("not found in params_dict", f"not found in params_dict token={secret}", 1))
    for fmt in ("text", "markdown", "slack", "json", "rich"):
        done = health(str(log), "--format", fmt)
        assert done.returncode == 1, done.stderr
        assert secret not in done.stdout and secret not in done.stderr


def test_a_server_that_failed_after_serving_is_pointed_to_diagnose(tmp_path: Path) -> None:
    log = tmp_path / "crashed.log"
    text = (FIXTURES / "0.5.9" / "healthy.log").read_text(encoding="utf-8")
    log.write_text(text + '[2025-03-15 10:00:00] Traceback (most recent call last):\n  File "x.py", line 1, in f\n'
                   "RuntimeError: the scheduler died\n", encoding="utf-8")
    done = health(str(log), "--format", "text")
    assert done.returncode == 0  # its health findings: none; the failure is diagnose's
    (warning,) = [line for line in done.stderr.splitlines() if "failed after serving" in line]
    assert f"byte {len(text.encode()):,}" in warning and "`diagnose`" in warning
    assert "failed after serving" not in health(str(FIXTURES / "0.5.9" / "healthy.log")).stderr
