"""A thread or process the kernel would not create (EAGAIN) is the limit on processes or threads (ulimit -u, a
container's pids limit), filed under host-memory with its own checks, not a native crash or an unclassified
RuntimeError (logsleuth/facts/categories.toml, the second host-memory row).  The wordings are the code sites':
CPython's _threadmodule.c ("can't start new thread"), boost::thread / std::thread under Ray's terminate handler
(src/ray/util/logging.cc; vllm-project/vllm#878, ray-project/ray#44296), OpenBLAS's blas_server.c, Rust's
thread::spawn.  The look-alikes: ZeroMQ's and a non-blocking socket's EAGAIN ("Resource temporarily unavailable" with
no thread in it) are a timeout or an empty queue, never this row."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose_without_patterns, real_traceback
from tests.test_categories_cat6 import no_rules  # noqa: F401 (no_rules: the fixture, used by pytestmark)

pytestmark = pytest.mark.usefixtures("no_rules")

LIMIT_TITLE = "limit on processes or threads"


def _raised(exception: str, message: str) -> str:
    """What the real interpreter prints when a worker's start-up raises `exception(message)`."""
    return real_traceback(f"""
import threading

def start_workers(count):
    raise {exception}({message!r})

start_workers(64)
""", "vllm/executor/ray_utils.py")


def test_cpython_refusing_a_thread_is_the_process_limit() -> None:
    diagnosis = diagnose_without_patterns(_raised("RuntimeError", "can't start new thread"))
    assert diagnosis.category == "host-memory"
    assert LIMIT_TITLE in diagnosis.title
    assert any("ulimit -u" in step for step in diagnosis.fix.steps)


@pytest.mark.parametrize("line", [
    # boost::thread under Ray's terminate handler, demangled
    "(raylet) [2025-02-03 09:10:11,123 E 812 812] logging.cc:97: Unhandled exception: "
    "boost::wrapexcept<boost::system::system_error>. what(): thread: Resource temporarily unavailable [system:11]",
    # std::thread's system_error, as the mangled name Ray prints
    "(pid=812) [2025-02-03 09:10:11,123 E 812 812] logging.cc:108: Unhandled exception: St12system_error. "
    "what(): Resource temporarily unavailable",
])
def test_a_native_thread_refused_under_ray_is_the_process_limit(line: str) -> None:
    diagnosis = diagnose_without_patterns(line + "\n")
    assert diagnosis.category == "host-memory", diagnosis
    assert LIMIT_TITLE in diagnosis.title


def test_openblas_refusing_threads_just_before_a_crash_names_the_limit() -> None:
    """OpenBLAS goes on with fewer threads after its warning; the crash that follows carries it as context."""
    log = ("OpenBLAS blas_thread_init: pthread_create failed for thread 17 of 64: Resource temporarily unavailable\n"
           "OpenBLAS blas_thread_init: RLIMIT_NPROC 4096 current, 4096 max\n"
           + _raised("RuntimeError", "can't start new thread"))
    assert LIMIT_TITLE in diagnose_without_patterns(log).title


@pytest.mark.parametrize(("exception", "message"), [
    ("BlockingIOError", "[Errno 11] Resource temporarily unavailable"),
    ("RuntimeError", "zmq.error.Again: Resource temporarily unavailable while receiving from the scheduler"),
])
def test_eagain_without_a_thread_is_not_the_limit(exception: str, message: str) -> None:
    assert LIMIT_TITLE not in diagnose_without_patterns(_raised(exception, message)).title
