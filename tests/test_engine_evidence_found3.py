"""The engine of failure logs that showed none on stop 38's blind split (issue 28): SGLang's router named in a Rust
panic's location, a wrapper's check of the engine's version, a wrapper's record format that only looks like SGLang's
header, and an error record quoting its exception after a sentence."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from tests.test_fatal_output_shapes import OPTIONS

# Rust's std panic hook: `thread '{name}' panicked at {file}:{line}:{col}:` then the payload (Rust 1.73+), with the
# router's crate directory as the path cargo compiled it from (sgl-project/sglang: sgl-router/, later sgl-model-gateway/).
PANIC_PAYLOAD = "called `Option::unwrap()` on a `None` value\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"


@pytest.mark.parametrize("location", [
    "sgl-model-gateway/src/routers/http/router.rs:412:38",
    "sgl-router/src/policies/cache_aware.rs:201:14",
    "/home/user/sglang/sgl-router/src/server.rs:88:10",
])
def test_a_panic_in_sglangs_router_is_sglangs(location: str) -> None:
    report = diagnose_text(f"thread 'tokio-runtime-worker' panicked at {location}:\n{PANIC_PAYLOAD}", OPTIONS)
    assert report.failures and report.launch.engine == "sglang"


def test_the_routers_own_records_name_sglang_above_a_bare_panic() -> None:
    """sgl-router's records start `[Router (Rust)] <date> - LEVEL - ` (sgl-project/sglang#4562); its panic may show only
    `src/router.rs` (#7028)."""
    log = ("[Router (Rust)] 2025-06-10 10:00:00 - WARN - Removing failed worker: http://10.0.0.2:30000\n"
           f"thread 'actix-rt|system:0|arbiter:12' panicked at src/router.rs:463:40:\n{PANIC_PAYLOAD}")
    report = diagnose_text(log, OPTIONS)
    assert report.failures and report.launch.engine == "sglang"


def test_a_panic_of_another_rust_program_names_no_engine() -> None:
    report = diagnose_text(f"thread 'main' panicked at src/main.rs:12:5:\n{PANIC_PAYLOAD}", OPTIONS)
    assert report.failures and report.launch.engine is None


# transformers/utils/versions.py _compare_versions, called by a wrapper's require_version (LLaMA-Factory's
# check_version): f"{requirement} is required for a normal functioning of this module, but found {pkg}=={got}."
@pytest.mark.parametrize(("engine", "requirement"), [("vllm", "vllm>=0.4.3,<=0.8.5"), ("sglang", "sglang>=0.4.5,<0.4.7")])
def test_a_wrappers_version_check_names_the_engine_it_found(engine: str, requirement: str) -> None:
    log = (f"ImportError: {requirement} is required for a normal functioning of this module, but found {engine}==0.9.1.\n"
           f"To fix: run `pip install {requirement}`.\n")
    report = diagnose_text(log, OPTIONS)
    assert (report.launch.engine, report.launch.engine_version) == (engine, "0.9.1")


def test_a_requirement_alone_names_no_engine() -> None:
    report = diagnose_text("ImportError: please install vllm>=0.4.3 to use this backend\n", OPTIONS)
    assert report.launch.engine is None


ENGINE_CORE = "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"


@pytest.mark.parametrize("prefix", [
    "[2025-06-01 10:00:00] [Worker-1] ERROR - ",  # a wrapper's date in brackets, then its own fields
    "[2025-06-01 10:00:00][llamafactory][ERROR] ",
    "[2025-06-01 10:00:00] ERROR | ",
])
def test_a_wrappers_bracketed_date_is_not_sglangs_header(prefix: str) -> None:
    """SGLang's records are `[time ranks] message`: no level, no other field.  vLLM's message decides here."""
    report = diagnose_text(f"{prefix}{ENGINE_CORE}\n", OPTIONS)
    assert report.launch.engine == "vllm"


def test_sglangs_own_header_still_decides() -> None:
    report = diagnose_text("[2025-06-01 10:00:00] Load weight begin.\n[2025-06-01 10:00:01 TP0] Capture cuda graph begin.\n"
                           "KeyError: 'qwen3'\n", OPTIONS)
    assert report.launch.engine == "sglang"


def test_an_error_record_quoting_its_exception_after_a_sentence_is_a_failure() -> None:
    log = ("INFO 06-01 10:00:00 [core.py:60] Initializing a V1 LLM engine (v0.9.1)\n"
           "ERROR 06-01 10:00:01 [core.py:700] EngineCore hit an exception: ValueError: the quantization method fp8 is not "
           "supported on this GPU\n")
    report = diagnose_text(log, OPTIONS)
    assert report.failures[0].failure.final.type == "ValueError"


def test_an_info_record_quoting_an_exception_is_no_failure() -> None:
    log = "INFO 06-01 10:00:00 [utils.py:60] retrying after ValueError: transient read error from the hub\n"
    assert not diagnose_text(log, OPTIONS).failures


def test_pydantics_report_of_a_dataclass_check_is_vllms_format() -> None:
    """vLLM's config classes are pydantic dataclasses: pydantic reports their constructor's input as ArgsKwargs."""
    line = ("  Value error, max_num_scheduled_tokens is set to -1792, which does not allow any tokens to be scheduled "
            "[type=value_error, input_value=ArgsKwargs((), {'max_num_seqs': 256}), input_type=ArgsKwargs]\n")
    assert diagnose_text(line, OPTIONS).launch.engine == "vllm"
    request = ("  Field required [type=missing, input_value={'model': 'qwen'}, input_type=dict]\n"
               "Traceback (most recent call last):\nValueError: bad request\n")
    assert diagnose_text(request, OPTIONS).launch.engine is None  # an API model's input is a dict: any server's
