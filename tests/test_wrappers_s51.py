"""Stop 51 (wrapper15): advice aimed at the program that runs the engine when that program is at fault.

A launcher in another language that embeds Python and imports the engine: NVIDIA Dynamo's Rust engines
(ai-dynamo/dynamo lib/llm/src/engines/vllm/worker.rs, `panic!("Failed to import python 'vllm' module. Are we running in
the correct venv? {err}")`, and its sglang engine's `Failed to import python 'sglang' module. …` and `Failed to import
sglang.srt.managers.io_struct. Did sglang change? {err}`).  ai-dynamo/dynamo#349 and #441: the launcher's Python
environment did not hold the vLLM it was built for; a maintainer named the mismatch.  The Rust panic's own wording is
quoted as the panic handler prints it (std's default hook: `thread '…' panicked at FILE:L:C:` then the message).
"""

from __future__ import annotations

import pytest

from tests.helpers import check_texts, diagnose_without_patterns

PANIC = ("thread 'tokio-runtime-worker' panicked at lib/llm/src/engines/{engine}/worker.rs:247:17:\n"
         "{message}\n"
         "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n")


@pytest.mark.parametrize(("engine", "message"), [
    ("vllm", "Failed to import python 'vllm' module. Are we running in the correct venv? "
             "AttributeError: class must define a '_type_' attribute"),  # ai-dynamo/dynamo#349
    ("vllm", "Failed to import python 'vllm' module. Are we running in the correct venv? "
             "ModuleNotFoundError: No module named 'vllm'"),
    ("sglang", "Failed to import python 'sglang' module. Are we running in the correct venv? "
               "ImportError: cannot import name 'ServerArgs' from 'sglang.srt.server_args'"),
    ("sglang", "Failed to import sglang.srt.managers.io_struct. Did sglang change? "
               "ModuleNotFoundError: No module named 'sglang.srt.managers.io_struct'"),
    ("vllm", "Expected vllm version 0.7.2, found 0.8.1"),
])
def test_a_launcher_that_embeds_python_failing_to_import_the_engine_is_its_environment(engine: str, message: str) -> None:
    diagnosis = diagnose_without_patterns(PANIC.format(engine=engine, message=message))
    assert diagnosis.category == "dependency-version"
    assert diagnosis.title.startswith("Likely the Python environment a launcher embeds does not fit")
    checks = check_texts(diagnosis)
    assert "embeds a Python interpreter" in checks and "launcher's own issues" in checks
    assert "newer release may have fixed it" not in checks


def test_another_rust_panic_stays_the_programs_own_check() -> None:
    """The look-alike: a Rust program's own unwrap failing is its bug, not an environment that imports the engine."""
    diagnosis = diagnose_without_patterns(PANIC.format(engine="vllm", message="called `Option::unwrap()` on a `None` value"))
    assert diagnosis.category == "engine-bug"
    assert "embeds a Python interpreter" not in check_texts(diagnosis)
