"""Shapes stop 41's blind split showed unread (issue 28, branch h-found9), on real wordings and real CPython
tracebacks:

- a failure stated only in a sentence that quotes the engine's assert statement (`it crashes at \\`assert …\\``,
  vllm-project/vllm#10648; a title `\\`assert …\\` fails when …`, vllm-project/vllm#4422; `assert error: assert …`,
  vllm-project/vllm#7156): an AssertionError raised there, the statement kept as its check;
- a sentence that quotes a type alone is a failure only when it says it happened: `is this an \\`AssertionError\\`?`
  states none."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from logsleuth.api import diagnose_text
from logsleuth.render import render
from logsleuth.render.options import OutputFormat, RenderOptions
from tests.helpers import real_traceback
from tests.test_fatal_output_shapes import OPTIONS, primary

HEALTHY = (
    "INFO 05-29 07:34:20 [api_server.py:1043] vLLM API server version 0.8.5\n"
    "INFO 05-29 07:34:21 [gpu_model_runner.py:1329] Model loading took 14.99 GiB and 4.2 seconds\n"
    "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)\n"
)


@pytest.mark.parametrize(
    ("sentence", "statement"),
    [
        ("With --tp 4 the server crashes at `assert self.total_num_kv_heads % tp_size == 0` in the attention layer.",
         "assert self.total_num_kv_heads % tp_size == 0"),
        ("Enabling DP attention, the scheduler hits **assert dp_size > 1** and the server exits.", "assert dp_size > 1"),
        ("[Bug]: `assert num_new_tokens == 1` fails when `SamplingParams.n` is not `1`", "assert num_new_tokens == 1"),
        ("[Usage]: assert error: assert self._num_computed_tokens <= self.get_len()",
         "assert self._num_computed_tokens <= self.get_len()"),
        ("The engine dies with an assertion error `assert self.page_size == 1` when I set --page-size 16.",
         "assert self.page_size == 1"),
    ],
)
def test_a_sentence_quoting_the_assert_that_failed_is_an_assertion_error_there(sentence: str, statement: str) -> None:
    report = diagnose_text(HEALTHY + sentence + "\n", OPTIONS)
    assert report.failures, sentence
    block = report.failures[0].failure.final
    assert (block.type, block.message) == ("AssertionError", "")
    assert block.frames[-1].source == statement
    assert block.typed_from_statement  # said to be read from the statement, not shown as if printed


def test_a_quoted_type_after_the_quoted_statement_keeps_the_statement_as_its_check() -> None:
    sentence = "With my patch it now crashes with an `assert ts != -1` `AssertionError` instead of a CUDA error.\n"
    block = diagnose_text(sentence, OPTIONS).failures[0].failure.final
    assert (block.type, block.frames[-1].source) == ("AssertionError", "assert ts != -1")


@pytest.mark.parametrize(
    "sentence",
    [
        "Is this an `AssertionError`? The server seems slow after loading the weights.",
        "Does the server raise **AssertionError** when the tp size is wrong?",
        "I read the `assert dp_size > 1` check in scheduler.py and it looks right to me.",
        "Should we replace `assert x` with a proper error message?",
        "We could replace `assert self.page_size == 1` with a proper error message.",
        "The docs say to use `assert` sparingly.",
    ],
)
def test_a_sentence_that_only_mentions_a_type_or_an_assert_is_no_failure(sentence: str) -> None:
    report = diagnose_text(HEALTHY + sentence + "\n", OPTIONS)
    assert not report.failures, sentence


def test_a_healthy_log_stays_no_failure() -> None:
    assert not diagnose_text(HEALTHY, OPTIONS).failures


@pytest.mark.parametrize("sentence", ["The server crashes with `AssertionError` after warm-up.",
                                      "Why do I get `ValueError` here? It worked yesterday.",
                                      "[Bug]: `KeyError` when loading the LoRA adapter",
                                      "The error is `RuntimeError` every time."])
def test_a_quoted_type_in_a_sentence_that_says_it_happened_is_still_the_failure(sentence: str) -> None:
    assert diagnose_text(sentence + "\n", OPTIONS).failures


def test_the_traceback_a_paste_shows_outranks_the_statement_its_prose_quotes() -> None:
    traceback = real_traceback("def check(size):\n    raise ValueError(f'bad size {size}')\n\ncheck(3)\n")
    log = "It crashes at `assert self.page_size == 1` I think, full log:\n" + traceback
    assert primary(log)[:2] == ("ValueError", "bad size 3")


# --- a traceback cut before its exception line ------------------------------------------------------------------------
# SGLang 0.5.9's server_args.py raises ValueError("TRTLLM MHA backend is only supported on Blackwell GPUs (SM100).
# Please use a different backend.") at lines 1900-1902, in ServerArgs._handle_attention_backend_compatibility (the
# raise site index).  The traceback is real CPython's, from a module at that path whose source was gone when it raised
# (CPython then prints no source lines, as from an install without its .py files), its exception line cut by the paste.
TRTLLM_MHA = "TRTLLM MHA backend is only supported on Blackwell GPUs (SM100). Please use a different backend."


def _cut_traceback(tmp_path: Path, raise_line: int, statement: str, function: str = "_handle_attention_backend_compatibility",
                   keep_source: bool = False) -> str:
    root = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    module = root / "sglang" / "srt" / "server_args.py"
    module.parent.mkdir(parents=True)
    for package in (root / "sglang", root / "sglang" / "srt"):
        (package / "__init__.py").touch()
    header = f"class ServerArgs:\n    def {function}(self):\n"
    padding = "\n" * (raise_line - 1 - header.count("\n"))
    module.write_text(header + padding + f"        {statement}\n", encoding="utf-8")
    script = tmp_path / "launch.py"
    removal = "" if keep_source else "import os\nos.remove(server_args.__file__)\n"
    script.write_text(f"import sys\nsys.path.insert(0, {str(root)!r})\nfrom sglang.srt import server_args\n{removal}"
                      f"server_args.ServerArgs().{function}()\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-B", str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert run.returncode == 1 and "site-packages/sglang/srt/server_args.py" in run.stderr, run.stderr
    lines = run.stderr.splitlines()
    assert lines[-1].split(":")[0].endswith("Error")  # the exception line, which the paste then cuts
    return "sglang version: 0.5.9\n" + "\n".join(lines[:-1]) + "\n"  # the paste stops before the exception line


def test_a_cut_traceback_without_source_lines_is_typed_by_the_indexed_check_at_its_last_line(tmp_path: Path) -> None:
    log = _cut_traceback(tmp_path, 1900, f"raise ValueError({TRTLLM_MHA!r})")
    assert "raise ValueError" not in log  # no source line: only the index names the check
    report = diagnose_text(log, OPTIONS)
    block = report.failures[0].failure.final
    assert (block.type, block.message) == ("ValueError", TRTLLM_MHA)
    assert block.typed_from_statement and block.truncated  # inferred, never shown as printed
    text = render(report, RenderOptions(format=OutputFormat.TEXT, width=200))
    assert "inferred from the last frame" in text


def test_a_cut_traceback_whose_last_line_is_no_indexed_check_stays_untyped(tmp_path: Path) -> None:
    log = _cut_traceback(tmp_path, 1700, "raise ValueError('x')")  # no check of that function stands at line 1700
    block = diagnose_text(log, OPTIONS).failures[0].failure.final
    assert block.type == ""


def test_a_cut_traceback_of_the_other_engine_s_code_is_not_typed_by_that_engine_s_index(tmp_path: Path) -> None:
    log = _cut_traceback(tmp_path, 1900, f"raise ValueError({TRTLLM_MHA!r})").replace("sglang version: 0.5.9",
                                                                                      "vLLM API server version 0.8.5")
    assert diagnose_text(log, OPTIONS).failures[0].failure.final.type == ""


@pytest.mark.parametrize(
    ("statement", "raised", "message"),
    [
        ("raise RuntimeError('the draft model needs --speculative-algorithm')", "RuntimeError",
         "the draft model needs --speculative-algorithm"),
        ("assert self is None, 'page size must be positive'", "AssertionError", "page size must be positive"),
        ("raise RuntimeError(f'bad size {self}')", "RuntimeError", ""),  # an f-string's holes: the message unknown
    ],
)
def test_a_cut_raising_statement_that_spells_its_message_gives_it(tmp_path: Path, statement: str, raised: str,
                                                                    message: str) -> None:
    log = _cut_traceback(tmp_path, 40, statement, function="check", keep_source=True)
    block = diagnose_text(log, OPTIONS).failures[0].failure.final
    assert (block.type, block.message, block.typed_from_statement) == (raised, message, True)


# --- a traceback cut at an import, a notebook's header (the dev sweep) ------------------------------------------------
def _import_chain_cut(tmp_path: Path) -> str:
    """Real CPython's traceback of an import chain failing at its last import, its exception line cut off."""
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "__init__.py").write_text("from engine.config import Config\n", encoding="utf-8")
    (tmp_path / "engine" / "config.py").write_text("import os\nfrom engine._C import ops\n", encoding="utf-8")
    script = tmp_path / "serve.py"
    script.write_text("import engine\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-B", str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert run.stderr.splitlines()[-1].startswith("ModuleNotFoundError")
    return "\n".join(run.stderr.splitlines()[:-1]) + "\n"


def test_a_traceback_cut_under_an_import_statement_is_an_import_error_inferred(tmp_path: Path) -> None:
    # vllm-project/vllm#1814, #15286, SystemPanic/vllm-windows#8: an import chain pasted up to its last import
    block = diagnose_text(_import_chain_cut(tmp_path), OPTIONS).failures[0].failure.final
    assert (block.type, block.typed_from_statement) == ("ImportError", True)


def test_an_error_logged_above_a_traceback_cut_at_an_import_names_it(tmp_path: Path) -> None:
    """The import statement only guesses the type; an error record just above the traceback says what failed (an
    engine's warning about its compiled ops, then the import chain cut at the import that failed)."""
    cut = _import_chain_cut(tmp_path)
    warning = ("WARNING 06-01 10:00:00 [_custom_ops.py:20] Failed to import from engine._C with "
               "ImportError('/opt/engine/_C.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEi')\n")
    block = diagnose_text(warning + cut, OPTIONS).failures[0].failure.final
    assert block.type == "ImportError" and "undefined symbol" in block.message, block


def test_a_pasted_script_s_imports_are_no_failure() -> None:
    script = "import os\nimport torch\nfrom vllm import LLM\nllm = LLM(model='facebook/opt-125m')\n"
    assert not diagnose_text(script, OPTIONS).failures


# IPython/core/ultratb.py's header: the type padded, then CPython's words without their colon; `Cell In[1], line 15`.
NOTEBOOK = (
    "---------------------------------------------------------------------------\n"
    "ValueError                                Traceback (most recent call last)\n"
    "Cell In[1], line 15\n"
    "---> 15 llm = LLM(model=MODEL_PATH, trust_remote_code=True)\n"
    "\n"
    "File ~/envs/omni/lib/python3.11/site-packages/vllm/utils.py:1037, in deprecate_args.<locals>.inner(*args, **kwargs)\n"
)


def test_a_notebook_traceback_cut_in_its_frames_is_the_type_its_header_names() -> None:
    # QwenLM/Qwen2.5-Omni#132
    assert primary(NOTEBOOK)[0] == "ValueError"


def test_a_notebook_traceback_s_exception_line_gives_its_message() -> None:
    assert primary(NOTEBOOK + "ValueError: this model has no vLLM implementation\n")[:2] == (
        "ValueError", "this model has no vLLM implementation")


def test_cpython_s_own_header_is_no_notebook_header() -> None:
    from logsleuth.tracebacks.notebook import notebook_exception_type

    assert notebook_exception_type("Traceback (most recent call last):") is None
    assert notebook_exception_type("The Traceback (most recent call last) below is long") is None


def test_a_cut_traceback_whose_shown_line_is_not_the_indexed_statement_stays_untyped(tmp_path: Path) -> None:
    # a file patched (or of another build) at that line: the source the paste shows decides, not the line number
    log = _cut_traceback(tmp_path, 1900, "value = compute_backend(self)", keep_source=True)
    assert "value = compute_backend(self)" in log
    assert diagnose_text(log, OPTIONS).failures[0].failure.final.type == ""
