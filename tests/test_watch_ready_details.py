"""What `watch` says at ready (issue 30, finding 10): a URL a user can open, not the address the server bound
(`0.0.0.0`), and the launch's duration in the JSON ready event (`launch_seconds`) whenever the log gives the
start, with or without the live view.  Remote sources: tests/ssh/test_ssh_watch_ready.py."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions
from logsleuth.cli.watch_output import Streams, run_watch
from logsleuth.render.options import OutputFormat
from tests.test_watch_launch import launch_pieces


def _watch(log: Path, fmt: OutputFormat) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_watch([str(log)], DiagnoseOptions(), fmt=fmt, timeout=30, live=False, streams=Streams(out, err))
    return code, out.getvalue(), err.getvalue()


def _bound_to_all(tmp_path: Path) -> Path:
    log = tmp_path / "server.log"
    text = "".join(launch_pieces()).replace("host='127.0.0.1'", "host='0.0.0.0'")
    log.write_text(text.replace("http://127.0.0.1:30000", "http://0.0.0.0:30000"))
    return log


def test_the_ready_url_is_one_a_user_can_open(tmp_path: Path) -> None:
    code, out, err = _watch(_bound_to_all(tmp_path), OutputFormat.JSON)
    assert code == 0, err
    ready = json.loads(out.splitlines()[-1])
    assert ready["event"] == "ready"
    assert ready["url"] == "http://127.0.0.1:30000"


def test_the_text_ready_line_names_the_openable_url(tmp_path: Path) -> None:
    log = _bound_to_all(tmp_path)
    code, _, err = _watch(log, OutputFormat.TEXT)
    assert code == 0, err
    assert f"logsleuth: {log}: listening on http://127.0.0.1:30000" in err.splitlines()
    assert "0.0.0.0" not in err


def test_launch_seconds_is_filled_from_the_log_without_a_view(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("".join(launch_pieces()))  # server_args at 10:00:00, ready at 10:00:20 (the log's own times)
    code, out, err = _watch(log, OutputFormat.JSON)
    assert code == 0, err
    ready = json.loads(out.splitlines()[-1])
    assert ready["event"] == "ready" and ready["launch_seconds"] == 20.0


@pytest.mark.parametrize(
    ("url", "host", "expected"),
    [
        ("http://0.0.0.0:30000", None, "http://127.0.0.1:30000"),
        ("http://[::]:8000", None, "http://127.0.0.1:8000"),
        ("http://0.0.0.0:30000", "gpu7", "http://gpu7:30000"),
        ("http://0.0.0.0:30000", "fe80::1", "http://[fe80::1]:30000"),
        ("http://10.0.0.7:30000", "gpu7", "http://10.0.0.7:30000"),  # an address of its own: as the server said
        ("http://127.0.0.1:30000", "gpu7", "http://127.0.0.1:30000"),  # only on gpu7 itself: said as it is
        ("https://localhost:443", None, "https://localhost:443"),
    ],
)
def test_openable_url(url: str, host: str | None, expected: str) -> None:
    from logsleuth.ingest.stages import openable_url

    assert openable_url(url, host) == expected
