"""A command's output as a source (sources/runtime/command.py), read through the stand-in `docker` (no Docker
daemon can run here; see conftest.py) and through real short Python processes where any command will do."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from logsleuth.errors import ExitStatus, SourceError
from logsleuth.reading.reader import read_latest_widening
from logsleuth.sources.runtime.command import Command, CommandSource, run_local
from logsleuth.sources.runtime.docker import explain_failure, logs_command
from tests.helpers import real_traceback
from tests.runtime.conftest import Runtime

CRASH = "def load_weights():\n    raise RuntimeError('CUDA error: an illegal memory access was encountered')\nload_weights()\n"


def _docker_source(name: str, steps: tuple[int | None, ...] = (2_000, 20_000, 200_000, None)) -> CommandSource:
    return CommandSource(
        f"docker:{name}",
        None,
        lambda lines: logs_command("docker", name, lines),
        lambda finished: explain_failure("docker", "logs", finished),
        steps=steps,
    )


def _read_all(source: CommandSource) -> bytes:
    return b"".join(source.read_range(0, source.size()))


def _noise(count: int, start: int = 0) -> list[tuple[str, str]]:
    return [("stdout", f"[2026-11-30 22:{n // 60 % 60:02d}:{n % 60:02d}] Decode batch. #running-req: 1, #token: {n}") for n in range(start, start + count)]


def _traceback_records() -> list[tuple[str, str]]:
    return [("stderr", line) for line in real_traceback(CRASH).splitlines()]


def test_stdout_and_stderr_keep_the_order_they_were_written_in(runtime: Runtime) -> None:
    # Stand-in docker: writes each record to its own stream as the real client demuxes frames.
    records = [("stdout", "server starting"), ("stderr", "warning: slow tokenizer"), ("stdout", "weights loaded"),
               *_traceback_records(), ("stdout", "after the crash")]
    runtime.container("web", records)
    source = _docker_source("web")
    assert _read_all(source).decode() == "".join(line + "\n" for _, line in records)
    assert source.name == "docker:web" and source.host is None


def test_the_first_window_is_the_last_2000_lines(runtime: Runtime) -> None:
    # Stand-in docker (no daemon here): --tail is applied across both streams, as the daemon does.
    runtime.container("web", _noise(2_500))
    source = _docker_source("web")
    data = _read_all(source).decode().splitlines()
    assert len(data) == 2_000 and data[-1].endswith("#token: 2499")
    assert runtime.calls() == [["docker", "logs", "--tail", "2000", "--", "web"]]
    assert not source.whole


def test_widens_until_the_latest_failure_is_whole(runtime: Runtime) -> None:
    # Stand-in docker (no daemon here).  The traceback lies before the last 2000 lines: the reader cannot see
    # its start in the first window, so the source fetches 20000 lines, which is every line.
    runtime.container("web", [*_noise(100), *_traceback_records(), *_noise(2_100, start=100)])
    source = _docker_source("web")
    result = read_latest_widening(source)
    assert [call[3] for call in runtime.calls()] == ["2000", "20000"]
    assert source.whole
    [failure] = result.failures
    assert failure.final.type == "RuntimeError"
    assert failure.final.message.startswith("CUDA error: an illegal memory access was encountered")
    assert [frame.function for frame in failure.final.frames] == ["<module>", "load_weights"]


def test_stops_widening_when_the_failure_and_its_context_are_in_the_window(runtime: Runtime) -> None:
    # Stand-in docker (no daemon here).  1900 lines (over 64 KiB) before the traceback inside the first window:
    # the reader trusts it has seen the failure's start, so nothing more is fetched.
    runtime.container("web", [*_noise(5_000), *_traceback_records(), *_noise(5, start=5_000)])
    result = read_latest_widening(_docker_source("web"))
    assert [call[3] for call in runtime.calls()] == ["2000"]
    assert [failure.final.type for failure in result.failures] == ["RuntimeError"]


def test_a_log_without_failure_is_read_whole(runtime: Runtime) -> None:
    # Stand-in docker (no daemon here); small steps keep the test fast.
    runtime.container("web", _noise(120))
    source = _docker_source("web", steps=(10, 100, None))
    result = read_latest_widening(source)
    assert result.failures == []
    assert [call[3] for call in runtime.calls()] == ["10", "100", "all"]
    assert _read_all(source).count(b"\n") == 120


def test_all_failures_mode_fetches_every_line_at_once(runtime: Runtime) -> None:
    # Stand-in docker (no daemon here): `--all` reads the whole history, so no window steps are taken.
    runtime.container("web", _noise(50))
    source = _docker_source("web")
    assert source.widen(to_all=True) and source.whole
    assert not source.widen()
    assert runtime.calls() == [["docker", "logs", "--tail", "all", "--", "web"]]
    assert _read_all(source).count(b"\n") == 50


def test_memory_is_bounded_to_the_newest_lines() -> None:
    # A real process printing 200 KB; only the newest 10 KB are kept, cut at a line start.
    printer = "import sys\nfor n in range(2000): sys.stdout.write(f'line {n:05d} ' + 'x' * 88 + '\\n')"
    finished = run_local(Command((sys.executable, "-c", printer)), keep=10_000)
    assert finished.clipped and len(finished.output) <= 10_000
    lines = finished.output.decode().splitlines()
    assert lines[0].startswith("line ") and lines[-1].startswith("line 01999 ")


def test_a_clipped_fetch_counts_as_whole() -> None:
    # A real process; clipping means the newest bytes are all we will ever hold, so widening stops.
    printer = "for n in range(3000): print(n)"
    source = CommandSource(
        "cmd", None, lambda lines: Command((sys.executable, "-c", printer)), lambda finished: None,
        lambda command: run_local(command, keep=1_000),
    )
    assert 0 < source.size() <= 1_000 and source.whole


def test_a_command_that_hangs_is_a_one_line_source_error() -> None:
    # A real process that never finishes, killed at the timeout.
    sleeper = Command((sys.executable, "-c", "import time; time.sleep(60)"), timeout=0.5)
    source = CommandSource("docker:web", None, lambda lines: sleeper, lambda finished: None)
    with pytest.raises(SourceError) as caught:
        source.size()
    assert str(caught.value) == f"docker:web: {sys.executable} did not finish within 0.5s"
    assert caught.value.exit_status == ExitStatus.SOURCE_ERROR


def test_a_missing_program_is_a_one_line_source_error(nothing_on_path: None) -> None:
    with pytest.raises(SourceError) as caught:
        _docker_source("web").size()
    assert str(caught.value) == "docker:web: docker is not installed (not found on PATH)"
    assert caught.value.exit_status == ExitStatus.SOURCE_ERROR


@pytest.mark.parametrize(
    ("mode", "content", "message"),
    [
        (0o644, "#!/bin/sh\n", "docker:web: docker cannot be run (permission denied)"),
        (0o755, "\x7fELF not really\n", "docker:web: docker cannot be run (Exec format error)"),
    ],
)
def test_a_docker_that_cannot_be_run_is_a_one_line_source_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: int, content: str, message: str
) -> None:
    # A real file named docker on PATH that the kernel refuses to run.
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "docker").write_text(content)
    (folder / "docker").chmod(mode)
    monkeypatch.setenv("PATH", str(folder))
    with pytest.raises(SourceError) as caught:
        _docker_source("web").size()
    assert str(caught.value) == message


def test_remote_runner_seam_gets_the_same_argv() -> None:
    # The HOST: forms pass their own runner (SSH, next step); here one that records what it was asked to run.
    asked: list[Command] = []

    def runner(command: Command) -> object:
        from logsleuth.sources.runtime.command import Finished

        asked.append(command)
        return Finished(0, b"one line\n", b"")

    source = CommandSource("gpu7:docker:web", "gpu7", lambda lines: logs_command("docker", "web", lines),
                           lambda finished: explain_failure("docker", "logs", finished), runner)  # type: ignore[arg-type]
    assert _read_all(source) == b"one line\n"
    assert asked == [Command(("docker", "logs", "--tail", "2000", "--", "web"), merge_errors=True)]
