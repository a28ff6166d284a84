"""Fatal output that no Python traceback carries is a failure: where a person scanning the paste would point at
an error, diagnose reports one (issue 28, "find every failure").

Real output wherever it can be produced here: a C program's SIGSEGV handler printing backtrace(3), a Rust
program's panic (cargo, offline, std only), pip's resolver on a local index of tiny wheels with conflicting
pins.  The shapes that only other programs print are composed from their format strings: UCX's
`Caught signal 11 (…)` + `==== backtrace` (NVIDIA/TensorRT-LLM#752), abseil's failure signal handler as Ray
prints it (`*** SIGSEGV received at time=…`, vllm-project/vllm#6783, vllm-project/vllm#3053), glog's FATAL
record (`F1006 … file.cc:34] Check failed: …`, apache/singa#805, chipsalliance/verible#452), Rust's panic
before 1.73 (`panicked at 'msg', file:l:c`, rust-lang/rust#54900, bspeice/dtparse#2) and pip's resolver
(vllm-project/vllm#9092, waybarrios/vllm-mlx#19, vllm-project/vllm#6200, vllm-project/vllm-ascend#8286).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from logsleuth.ingest.normalize import normalize_text
from logsleuth.tracebacks.scanner import scan

START = "[2026-01-01 00:00:00 TP0] Load weight begin. avail mem=78.50 GB\n"


def only_failure(text: str) -> tuple[str, str, str]:
    (failure,) = scan(normalize_text(text))
    return failure.kind, failure.final.type, failure.final.message


# -- signals ---------------------------------------------------------------------------------------------

SEGV_PROGRAM = r"""
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
static void on_signal(int sig) {
    void *frames[16];
    int n = backtrace(frames, 16);
    fprintf(stderr, "Caught signal %d (Segmentation fault)\n", sig);
    backtrace_symbols_fd(frames, n, 2);
    _exit(139);
}
void load_kernel(volatile int *table) { table[0] = 1; }
int main(void) { signal(SIGSEGV, on_signal); load_kernel(0); return 0; }
"""


def _built(tmp_path_factory: pytest.TempPathFactory, compiler: str, source_name: str, source: str) -> Path:
    """The program `source` built with `compiler` (skipped where the compiler is missing or cannot build)."""
    tool = shutil.which(compiler)
    if tool is None:
        pytest.skip(f"{compiler} not installed")
    directory = tmp_path_factory.mktemp(compiler)
    (directory / source_name).write_text(source)
    flags = ["-rdynamic"] if compiler == "gcc" else []
    if subprocess.run([tool, *flags, "-o", str(directory / "program"), str(directory / source_name)]).returncode:
        pytest.skip(f"{compiler} cannot build here")
    return directory / "program"


@pytest.fixture(scope="module")
def segv_output(tmp_path_factory: pytest.TempPathFactory) -> str:
    result = subprocess.run([str(_built(tmp_path_factory, "gcc", "segv.c", SEGV_PROGRAM))], capture_output=True, text=True)
    assert result.returncode == 139 and "Caught signal 11" in result.stderr
    return result.stderr


def test_a_signal_handlers_backtrace_is_a_sigsegv(segv_output: str) -> None:
    assert only_failure(START + segv_output) == ("abort", "SIGSEGV", "Segmentation fault")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[gpu-7:4242:0:4242] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x18)\n"
            "==== backtrace (tid:   4242) ====\n 0 0x0000000000042520 __sigaction()  ???:0\n"
            " 1 0x000000000000a1b2 ucp_worker_progress()  ucp_worker.c:2881\n=================================\n",
            "Segmentation fault: address not mapped to object at address 0x18",
        ),
        (
            "*** SIGSEGV received at time=1767225600 on cpu 12 ***\nPC: @     0x7f3a10c0ffee  (unknown)  ncclProxyOp()\n"
            "    @     0x7f3a2a042520       3744  (unknown)\n",
            "SIGSEGV received at time=1767225600 on cpu 12",
        ),
        (
            "(RayWorkerWrapper pid=811) [2026-01-01 00:00:09,001 E 811 811] logging.cc:440: *** SIGSEGV received at "
            "time=1767225609 on cpu 3 ***\n",
            "SIGSEGV received at time=1767225609 on cpu 3",
        ),
    ],
)
def test_signal_banners_of_other_handlers_are_failures(text: str, message: str) -> None:
    assert only_failure(START + text) == ("abort", "SIGSEGV", message)


def test_a_signal_banner_before_faulthandlers_dump_is_its_context() -> None:
    """Ray prints abseil's banner and then faulthandler's dump of the same crash: one failure, the dump."""
    text = (
        START + "*** SIGSEGV received at time=1767225600 on cpu 12 ***\nPC: @     0x7f3a10c0ffee  (unknown)  (unknown)\n"
        "Fatal Python error: Segmentation fault\n\nStack (most recent call first):\n"
        '  File "/venv/lib/python3.11/site-packages/vllm/distributed/device_communicators/pynccl.py", line 120 in all_reduce\n'
    )
    (failure,) = scan(normalize_text(text))
    assert failure.kind == "fatal" and failure.final.message == "Segmentation fault"
    assert failure.context[-1] == "SIGSEGV: SIGSEGV received at time=1767225600 on cpu 12"


# -- glog ------------------------------------------------------------------------------------------------

GLOG_FATAL = (
    "F0101 00:00:05.123456  4242 block_allocator.cc:88] Check failed: num_blocks > 0 (0 vs. 0) no free block\n"
    "*** Check failure stack trace: ***\n    @     0x7f3a10c0ffee  google::LogMessage::Fail()\nAborted (core dumped)\n"
)


def test_a_glog_fatal_record_is_a_failure() -> None:
    assert only_failure(START + GLOG_FATAL) == ("abort", "FATAL", "Check failed: num_blocks > 0 (0 vs. 0) no free block")


def test_a_glog_error_record_is_the_failure_only_of_a_paste_with_no_other() -> None:
    error = "E0101 00:00:04.000001  4242 transfer.cc:31] failed to register memory region: Cannot allocate memory\n"
    assert only_failure(START + error) == ("line", "ERROR", "failed to register memory region: Cannot allocate memory")
    (failure,) = scan(normalize_text(START + error + GLOG_FATAL))
    assert failure.final.type == "FATAL"


@pytest.mark.parametrize(
    ("line", "kind", "type_", "message"),
    [
        # torch's c10 logging: bracketed, no thread id, a 3-digit date (sgl-project/sglang#1693, #3368)
        ("[rank6]:[E207 01:29:36.730311765 ProcessGroupNCCL.cpp:616] [Rank 6] Watchdog caught collective operation "
         "timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE) ran for 600050 milliseconds before timing out.", "line",
         "c10::DistBackendError",
         "[Rank 6] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE) ran for 600050 "
         "milliseconds before timing out."),
        ("[F1016 03:41:38.919469923 ProcessGroupNCCL.cpp:1521] [PG 0 Rank 3] Process group watchdog thread terminated",
         "abort", "FATAL", "[PG 0 Rank 3] Process group watchdog thread terminated"),
    ],
)
def test_torchs_c10_records_read_like_glogs(line: str, kind: str, type_: str, message: str) -> None:
    assert only_failure(START + line + "\n") == (kind, type_, message)


# -- Rust panics -------------------------------------------------------------------------------------------

RUST_PROGRAM = """fn main() {
    let port: u16 = std::env::args().nth(1).unwrap_or_default().parse().expect("invalid --port value");
    println!("{port}");
}
"""


@pytest.fixture(scope="module")
def rust_panic(tmp_path_factory: pytest.TempPathFactory) -> str:
    router = _built(tmp_path_factory, "rustc", "router.rs", RUST_PROGRAM)
    result = subprocess.run([str(router), "abc"], capture_output=True, text=True, env={**os.environ, "RUST_BACKTRACE": "0"})
    assert result.returncode == 101 and "panicked at" in result.stderr
    return result.stderr


def test_a_rust_panic_is_a_failure_with_its_message_and_place(rust_panic: str) -> None:
    kind, type_, message = only_failure("[Router (Rust)] 2026-01-01 00:00:00 - INFO - starting router\n" + rust_panic)
    assert (kind, type_) == ("abort", "Rust panic")
    first, place = message.splitlines()
    assert first == "invalid --port value: ParseIntError { kind: InvalidDigit }"
    assert place.startswith("at ") and "router.rs:2:" in place


def test_a_rust_panic_before_1_73_keeps_its_quoted_message() -> None:
    text = (
        "thread 'tokio-runtime-worker' panicked at 'called `Result::unwrap()` on an `Err` value: Os { code: 98, "
        "kind: AddrInUse }', src/server.rs:40:10\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"
    )
    kind, type_, message = only_failure(text)
    assert (kind, type_) == ("abort", "Rust panic") and "AddrInUse" in message and "note:" not in message


# -- pip ---------------------------------------------------------------------------------------------------


def _wheel(directory: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> None:
    """A wheel holding only its metadata: all the resolver reads."""
    info = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    files = {
        f"{name}/__init__.py": "",
        f"{info}/METADATA": metadata,
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: logsleuth-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{path},,\n" for path in files) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(directory / f"{name}-{version}-py3-none-any.whl", "w") as archive:
        for path, content in {**files, f"{info}/RECORD": record}.items():
            archive.writestr(path, content)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("wheels")
    _wheel(directory, "enginepkg", "2.0", ("kernelpkg==2.0",))
    _wheel(directory, "pluginpkg", "1.0", ("kernelpkg==1.0",))
    _wheel(directory, "kernelpkg", "1.0")
    _wheel(directory, "kernelpkg", "2.0")
    return directory


def _pip(*args: str, env_dir: Path | None = None) -> str:
    target = ("--python", str(env_dir / "bin" / "python")) if env_dir else ()
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", *target, *args]
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull}
    # pip writes its ERROR lines to stderr and their detail to stdout: one stream, as a terminal shows them
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    return result.stdout


def test_pips_resolution_impossible_is_a_failure_with_the_conflict(index: Path) -> None:
    output = _pip("install", "--dry-run", "--ignore-installed", "--no-index", "--find-links", str(index),
                  "enginepkg==2.0", "pluginpkg==1.0")
    assert "ResolutionImpossible" in output
    kind, type_, message = only_failure(output)
    assert (kind, type_) == ("abort", "ResolutionImpossible")
    assert message.startswith("Cannot install enginepkg==2.0 and pluginpkg==1.0 because")
    assert "enginepkg 2.0 depends on kernelpkg==2.0" in message and "To fix" not in message


def test_pips_no_matching_distribution_is_a_failure(index: Path) -> None:
    output = _pip("install", "--dry-run", "--ignore-installed", "--no-index", "--find-links", str(index), "absentpkg==1.0")
    assert only_failure(output) == ("abort", "pip: no matching distribution", "No matching distribution found for absentpkg==1.0")


@pytest.mark.slow  # two pip installs into a new environment (~2.5 s)
def test_pips_installed_conflict_is_a_failure_naming_the_broken_pin(index: Path, tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "env")], check=True)
    _pip("install", "--no-index", "--find-links", str(index), "pluginpkg==1.0", env_dir=tmp_path / "env")
    output = _pip("install", "--no-index", "--find-links", str(index), "kernelpkg==2.0", env_dir=tmp_path / "env")
    kind, type_, message = only_failure(output)
    assert (kind, type_) == ("abort", "pip dependency conflict")
    assert message.splitlines()[-1] == "pluginpkg 1.0 requires kernelpkg==1.0, but you have kernelpkg 2.0 which is incompatible."


# -- errors a sentence or a split line carries --------------------------------------------------------------


def test_an_exception_named_in_a_sentence_is_the_failure_of_a_paste_with_no_other() -> None:
    text = "When I launch with --tp 4 I get ValueError: 14 attention heads are not divisible by 4 and it exits.\n"
    assert only_failure(text) == ("bare", "ValueError", "14 attention heads are not divisible by 4 and it exits.")


def test_an_exception_type_alone_on_its_line_takes_the_message_below() -> None:
    text = START + (
        'Traceback (most recent call last):\n  File "/sgl/python/sglang/launch_server.py", line 11, in <module>\n'
        "    main()\nValueError:\ncontext length 8192 exceeds the model's 4096\n"
    )
    assert only_failure(text) == ("traceback", "ValueError", "context length 8192 exceeds the model's 4096")


def test_a_cpp_abort_ends_before_the_shells_notice() -> None:
    text = "terminate called after throwing an instance of 'c10::Error'\n  what():  NCCL error: remote process exited\nAborted (core dumped)\n"
    assert only_failure(text) == ("abort", "c10::Error", "NCCL error: remote process exited")


# -- the shell's notice of a child killed by a signal --------------------------------------------------------

# bash's notices as an interactive shell prints them (jobs.c: the signal's name, then " (core dumped)")
INTERACTIVE_NOTICES = {
    "Segmentation fault (core dumped)": "SIGSEGV",
    "Illegal instruction (core dumped)": "SIGILL",
    "Bus error (core dumped)": "SIGBUS",
    "Aborted (core dumped)": "SIGABRT",
    "Segmentation fault": "SIGSEGV",
}


@pytest.fixture(scope="module")
def script_notices(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Real bash running a script whose children die of SIGSEGV, SIGILL, SIGBUS and SIGABRT (no core files:
    `ulimit -c 0`, so bash's column layout without "(core dumped)")."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash not installed")
    script = tmp_path_factory.mktemp("bash") / "serve.sh"
    script.write_text("ulimit -c 0\n" + "".join(f"sh -c 'kill -{name} $$'\n" for name in ("SEGV", "ILL", "BUS", "ABRT")))
    result = subprocess.run([bash, script.name], capture_output=True, text=True, cwd=script.parent, timeout=60)
    lines = result.stderr.splitlines()
    assert len(lines) == 4 and lines[0].startswith("serve.sh: line 2: ") and "Segmentation fault" in lines[0], result.stderr
    return lines


def test_the_shells_notice_of_a_signal_is_the_failure_of_a_paste_with_no_other(script_notices: list[str]) -> None:
    found = [only_failure(START + line + "\n") for line in script_notices]
    assert [(kind, type_) for kind, type_, _ in found] == [("abort", name) for name in ("SIGSEGV", "SIGILL", "SIGBUS", "SIGABRT")]
    assert found[1][2] == "Illegal instruction"
    for notice, signal_name in INTERACTIVE_NOTICES.items():
        assert only_failure(START + notice + "\n") == ("abort", signal_name, notice)


def test_the_shells_notice_after_a_traceback_is_not_its_message() -> None:
    text = START + _real_traceback() + "Segmentation fault (core dumped)\n"
    assert only_failure(text)[:2] == ("traceback", "ValueError")
    assert "Segmentation" not in only_failure(text)[2]


# -- what is no failure -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "WARNING 01-01 00:00:00 config.py:1] Casting torch.bfloat16 to torch.float16.\n",
        "[2026-01-01 00:00:09] The server is fired up and ready to roll!\n",
        "[2026-01-01 00:00:10] Decode batch. #running-req: 1, #token: 90, gen throughput (token/s): 51.2, error_rate=0.0\n",
        "I0101 00:00:01.000000  4242 server.cc:12] no errors so far\n",
        "[I207 01:29:36.730311765 ProcessGroupNCCL.cpp:900] [PG 0 Rank 0] NCCL_DEBUG: N/A, no error\n",
        "W0101 00:00:01.000000  4242 server.cc:12] slow ack from peer, Error: none\n",
        "There were no errors and the error rate stayed at 0.\n",
        "The scheduler logs 'Check failed' only in debug builds.\n",
        "thread pool started; nothing panicked at all\n",
        "ERROR: the flag is deprecated and ignored\n",
        "* SIGSEGV is handled by the runtime *\n",
        "A Segmentation fault (core dumped) here would mean the kernel crashed.\n",
        "Aborted requests: 0\n",
    ],
)
def test_lines_that_only_talk_of_errors_are_no_failure(text: str) -> None:
    assert scan(normalize_text(START + text)) == []


# -- a log viewer's export, newest line first ----------------------------------------------------------------


def _viewer_export(text: str, newest_first: bool) -> str:
    """`text` as a log viewer exports it (`SEVERITY <ISO time> line`, grafana/grafana#16555,
    azimuth-cloud/capi-helm-charts#297): one second per line, newest first when asked."""
    stamped = [f"DEFAULT 2026-01-01T00:{i // 60:02d}:{i % 60:02d}.000Z {line}" for i, line in enumerate(text.splitlines())]
    return "\n".join(reversed(stamped) if newest_first else stamped) + "\n"


def _real_traceback() -> str:
    import traceback

    def load_config() -> None:
        raise ValueError("model type `qwen9` is not supported by this transformers release")

    try:
        load_config()
    except ValueError as exc:
        return "Load weight begin.\n" + "".join(traceback.format_exception(exc))
    raise AssertionError("not raised")


def test_an_export_newest_first_is_read_in_the_order_it_was_written() -> None:
    from logsleuth.api import diagnose_text

    report = diagnose_text(_viewer_export(_real_traceback(), newest_first=True))
    assert report.primary is not None
    failure = report.primary.failure
    assert (failure.kind, failure.final.type) == ("traceback", "ValueError")
    assert failure.final.frames[-1].function == "load_config"
    assert "newest first" in (report.sources[0].note or "")


def test_a_local_file_exported_newest_first_is_read_in_reverse(tmp_path: Path) -> None:
    from logsleuth.api import in_written_order
    from logsleuth.sources.local import LocalFileSource

    path = tmp_path / "export.log"
    path.write_text(_viewer_export(_real_traceback(), newest_first=True))
    ordered = in_written_order(LocalFileSource(str(path)))
    text = b"".join(ordered.read_range(0, ordered.size())).decode()
    assert text.splitlines()[0].endswith("Load weight begin.") and text.rstrip().endswith("is not supported by this transformers release")


@pytest.mark.parametrize(
    "text",
    [
        _viewer_export(_real_traceback(), newest_first=False),  # oldest first: as written
        "2026-01-01T00:00:03Z a\n2026-01-01T00:00:02Z b\n2026-01-01T00:00:04Z c\n2026-01-01T00:00:01Z d\n",  # both ways
        "2026-01-01T00:00:03Z a\n2026-01-01T00:00:03Z b\n2026-01-01T00:00:02Z c\n",  # one step down only
    ],
)
def test_a_log_whose_times_do_not_only_go_down_is_read_as_written(text: str) -> None:
    from logsleuth.ingest.order import newest_first

    assert not newest_first(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a type alone on its line, no traceback: the message below is its own
        ("RuntimeError:\nCUDA error: no kernel image is available for execution on the device\n",
         ("bare", "RuntimeError", "CUDA error: no kernel image is available for execution on the device")),
        # a message wrapped over lines by the paste
        ("ValueError: The checkpoint has model type `qwen9` but Transformers does not\nrecognize this architecture.\n",
         ("bare", "ValueError", "The checkpoint has model type `qwen9` but Transformers does not\nrecognize this architecture.")),
        # the exception pasted above its traceback, a `...` between
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n...\nTraceback (most recent call last):\n"
         '  File "/venv/sglang/srt/model_executor/model_runner.py", line 3, in load_model\n    self.model = loader.load()\n',
         ("traceback", "torch.OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 GiB.")),
    ],
)
def test_exceptions_split_wrapped_or_moved_by_the_paste_are_found(text: str, expected: tuple[str, str, str]) -> None:
    assert only_failure(START + text) == expected


def test_diagnose_exits_1_on_native_output_and_0_on_a_healthy_start(tmp_path: Path) -> None:
    panic = tmp_path / "router.log"
    panic.write_text("thread 'main' panicked at 'invalid worker url', src/router.rs:88:14\n")
    healthy = tmp_path / "server.log"
    healthy.write_text(START + "[2026-01-01 00:00:09] The server is fired up and ready to roll!\n")
    run = [sys.executable, "-m", "logsleuth", "diagnose", "--format", "text"]
    assert subprocess.run([*run, str(panic)], capture_output=True).returncode == 1
    assert subprocess.run([*run, str(healthy)], capture_output=True).returncode == 0


def test_the_case_file_of_an_export_newest_first_shows_the_lines_written_before_the_failure(tmp_path: Path) -> None:
    from logsleuth.api import DiagnoseOptions, diagnose
    from logsleuth.case.window import local_window

    path = tmp_path / "export.log"
    path.write_text(_viewer_export(_real_traceback(), newest_first=True))
    report = diagnose([str(path)], DiagnoseOptions())
    assert report.primary is not None
    window = local_window(report, report.primary)
    assert window is not None and [line.endswith("Load weight begin.") for line in window.before] == [True]


def test_a_logged_error_the_server_came_up_after_is_no_failure() -> None:
    """torch retries the rendezvous and logs each refused connection; the server then starts."""
    error = "[W socket.cpp:1] x\n[E1203 12:00:00.000000 1234 socket.cpp:1000] [c10d] The client socket has failed to connect to [node-0]:29500 (errno: 111 - Connection refused).\n"
    assert scan(normalize_text(START + error + "[2026-01-01 00:00:30] The server is fired up and ready to roll!\n")) == []
    (failure,) = scan(normalize_text("INFO:     Application startup complete.\n" + START + error))
    assert failure.final.type == "ERROR"  # after the start: the paste ends on it
