"""`logsleuth diagnose --explain` through the console script, against the OpenAI-compatible stand-in server
(llm_standin.py: no real model can run on these machines)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.explain.llm_standin import Behaviour, answer, standin_server

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "eagle3-incident.log"
LOGSLEUTH = str(Path(sys.executable).with_name("logsleuth"))


def _diagnose(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("LOGSLEUTH_LLM")}
    environment["XDG_CONFIG_HOME"] = "/nonexistent-logsleuth-config"  # no config file of the machine's
    environment.update(env or {})
    return subprocess.run([LOGSLEUTH, "diagnose", str(EXAMPLE), *args], capture_output=True, text=True,
                          timeout=60, env=environment)


def test_the_explanation_is_added_labelled_and_changes_neither_diagnosis_nor_status() -> None:
    plain = _diagnose("--format", "json")
    behaviour = Behaviour(content=answer())
    with standin_server(behaviour) as url:
        done = _diagnose("--format", "json", "--explain", "--llm-url", url)
    assert done.returncode == plain.returncode == 1, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["failures"] == json.loads(plain.stdout)["failures"]  # the pattern's answer stands
    assert report["explanation"]["verified"] is False
    sent = behaviour.requests[-1].json()["messages"][-1]["content"]
    assert "AssertionError" in sent and "--speculative-num-steps" in sent  # the case file, with its catalog rows


def test_every_format_labels_it_unverified() -> None:
    with standin_server(Behaviour(content=answer())) as url:
        for fmt in ("text", "markdown", "slack"):
            done = _diagnose("--format", fmt, "--explain", "--llm-url", url)
            assert done.returncode == 1, done.stderr
            assert "unverified" in done.stdout.lower(), fmt


def test_nothing_is_sent_without_explain() -> None:
    behaviour = Behaviour(content=answer())
    with standin_server(behaviour) as url:
        done = _diagnose("--format", "json", env={"LOGSLEUTH_LLM_URL": url})
    assert done.returncode == 1
    assert behaviour.requests == []
    assert json.loads(done.stdout)["explanation"] is None


def test_an_endpoint_without_explain_is_a_usage_error() -> None:
    done = _diagnose("--llm-url", "http://127.0.0.1:9/v1")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "logsleuth: --llm-url needs --explain: nothing is sent to a model unless --explain is given"
    ]


def test_a_failing_endpoint_is_one_line_and_the_report_stands() -> None:
    # 401 fails at once; a 500 is retried first (test_client.py, with a short backoff), then ends the same way.
    with standin_server(Behaviour(status=401)) as url:
        done = _diagnose("--format", "json", "--explain", "--llm-url", url)
    assert done.returncode == 1
    assert json.loads(done.stdout)["explanation"] is None
    explain_lines = [line for line in done.stderr.splitlines() if "--explain" in line]
    assert len(explain_lines) == 1, done.stderr


def test_no_endpoint_is_one_line() -> None:
    done = _diagnose("--explain")
    assert done.returncode == 1
    assert "no endpoint" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_log_piped_to_stdin_sends_the_same_case_file_as_the_file() -> None:
    """stdin is spooled for --explain (a pipe is read once): the case file it sends holds the log's own lines
    around the failure, as for the file, not the report alone."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("LOGSLEUTH_LLM")}
    environment["XDG_CONFIG_HOME"] = "/nonexistent-logsleuth-config"
    sent = {}
    for how in ("file", "stdin"):
        behaviour = Behaviour(content=answer())
        with standin_server(behaviour) as url:
            args = [LOGSLEUTH, "diagnose", "--format", "json", "--explain", "--llm-url", url]
            if how == "file":
                done = subprocess.run([*args, str(EXAMPLE)], capture_output=True, text=True, timeout=60, env=environment)
            else:
                done = subprocess.run([*args, "-"], input=EXAMPLE.read_text(), capture_output=True, text=True,
                                      timeout=60, env=environment)
        assert done.returncode == 1, done.stderr
        assert json.loads(done.stdout)["sources"][0]["name"] == (str(EXAMPLE) if how == "file" else "<stdin>")
        sent[how] = behaviour.requests[-1].json()["messages"][-1]["content"]
    # A line the log holds before its traceback, which only the lines around the failure carry.
    assert "Max running requests is reset" in sent["file"] and "Max running requests is reset" in sent["stdin"]
    assert sent["stdin"].replace("<stdin>", str(EXAMPLE)) == sent["file"]
    assert "logsleuth-stdin-" not in sent["stdin"], "the spool's temporary name is never shown"
