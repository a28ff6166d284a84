"""The engine from the failure's own message (issue 29, item 3; ingest/engine_from_message.py): a message only one
engine's indexed code raises decides the engine of a paste that shows nothing else, and nothing more.

Each traceback is real CPython's, raised from a user's script (no frame in either engine's package), with the
engines' real wordings: vLLM's "Engine core initialization failed" (vllm/v1/engine/utils.py, every indexed vLLM
release; vllm-project/vllm#14452), SGLang's "Not enough memory. Please try to increase --mem-fraction-static"
(its model runner's KV cache sizing; the sglang-kv-cache-not-enough-memory pattern's fixtures)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from logsleuth.api import diagnose_text
from logsleuth.ingest.engine_from_message import engine_raising

VLLM_ONLY = ("RuntimeError", "Engine core initialization failed. See root cause above. Failed core proc(s): "
             "{'EngineCore_DP0': 1}")
SGLANG_ONLY = ("RuntimeError", "Not enough memory. Please try to increase --mem-fraction-static. Current value: "
               "self.server_args.mem_fraction_static=0.4")


def _traceback(tmp_path: Path, statement: str) -> str:
    """What real CPython prints when a user's script runs `statement` and it raises."""
    script = tmp_path / "app.py"
    script.write_text(f"def start():\n    {statement}\n\nstart()\n", encoding="utf-8")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 1 and "Traceback (most recent call last):" in run.stderr
    return run.stderr


def _raising(kind: str, message: str) -> str:
    return f"raise {kind}({message!r})"


def test_a_message_only_vllms_code_raises_decides_vllm(tmp_path: Path) -> None:
    report = diagnose_text(_traceback(tmp_path, _raising(*VLLM_ONLY)))
    assert report.launch.engine == "vllm"


def test_a_message_only_sglangs_code_raises_decides_sglang(tmp_path: Path) -> None:
    report = diagnose_text(_traceback(tmp_path, _raising(*SGLANG_ONLY)))
    assert report.launch.engine == "sglang"


def test_a_message_that_only_names_an_engine_decides_nothing(tmp_path: Path) -> None:
    """Python's own import error names vLLM's package; neither engine's code raises it."""
    report = diagnose_text(_traceback(tmp_path, "import vllm_is_not_installed_here as vllm"))
    assert report.failures and report.launch.engine is None
    assert engine_raising((("ModuleNotFoundError", "No module named 'vllm'"),)) is None


def test_the_message_is_the_weakest_evidence(tmp_path: Path) -> None:
    """A launch command of the other engine decides; so does a frame of its package."""
    vllm_message = _traceback(tmp_path, _raising(*VLLM_ONLY))
    launched = diagnose_text("python -m sglang.launch_server --model-path Qwen/Qwen3-8B\n" + vllm_message)
    assert launched.launch.engine == "sglang"
    framed = vllm_message.replace(str(tmp_path / "app.py"), "/opt/venv/lib/python3.11/site-packages/sglang/srt/entrypoints/engine.py")
    assert diagnose_text(framed).launch.engine == "sglang"


def test_the_type_must_match_and_both_engines_decide_nothing() -> None:
    assert engine_raising((VLLM_ONLY,)) == "vllm"
    assert engine_raising((("ValueError", VLLM_ONLY[1]),)) is None  # vLLM raises it as a RuntimeError
    assert engine_raising((VLLM_ONLY, SGLANG_ONLY)) is None


def test_a_carrier_of_the_message_decides_by_the_message_alone() -> None:
    """The server's error answer, the openai client's class for it, or no type at all (issue 28's blind split:
    a JSON error body, a client's `Error code: 400 - {…}`): the message is the engine's, raised under another type."""
    for carrier in ("BadRequestError", "HTTPError", "openai.BadRequestError", ""):
        assert engine_raising(((carrier, VLLM_ONLY[1]),)) == "vllm", carrier
    answer = f"Error code: 500 - {{'object': 'error', 'message': {VLLM_ONLY[1]!r}, 'type': 'InternalServerError', 'code': 500}}"
    assert engine_raising((("openai.InternalServerError", answer),)) == "vllm"
    assert engine_raising((("openai.BadRequestError", "Error code: 400 - {'object': 'error', 'message': 'bad'}"),)) is None


def test_a_bind_failure_on_a_default_port_decides_no_engine() -> None:
    """SGLang listens on 30000 and vLLM on 8000 when no --port is given, but either is often given the other's port
    (and 8000 is every web server's): a port is not positive evidence of an engine."""
    for port in (30000, 8000):
        line = f"OSError: [Errno 98] error while attempting to bind on address ('0.0.0.0', {port}): address already in use\n"
        assert diagnose_text(line).launch.engine is None, port


def test_cpythons_own_wordings_decide_nothing_even_where_an_engine_repeats_them() -> None:
    """`'X' object has no attribute 'y'` is CPython's wording; SGLang's code raises it too (a __getattr__), but so
    does any program: a paste of it alone names no engine."""
    for raised in (("AttributeError", "'TransformersForCausalLM' object has no attribute 'tp_size'"),
                   ("TypeError", "__init__() got an unexpected keyword argument 'enable_lora'"),
                   ("ModuleNotFoundError", "No module named 'vllm._C'")):
        assert engine_raising((raised,)) is None, raised
        assert diagnose_text(f"{raised[0]}: {raised[1]}\n").launch.engine is None, raised
