"""Tracebacks a paste cut or mangled (issue 28, branch h-cut), on real CPython tracebacks rebuilt in our own words:

- a traceback whose lines lost their indentation, with an engine's annotated assignment among its source lines
  (`self.comm: ncclComm_t = self.nccl.ncclCommInitRank(`, both engines' pynccl.py: sgl-project/sglang#8974) is one
  traceback, its exception the real one, not the source line read as `Type: message`;
- a traceback cut right after its last frame's call into a subsystem (`self._initialize_kv_caches(vllm_config)`,
  vllm-project/vllm#18730): the callee is where the error came from, read as the innermost frame's function;
- a sentence above a cut traceback that says what failed in the person's words ("can lead to an out-of-memory (OOM)
  issue as follows:", sgl-project/sglang PR#6744; "SGLang will crash if …" with a grammar, #3108): its words count as
  the missing message's would; a model's name in it (`Qwen/Qwen3.5-397B-A17B-FP8`, #28312) names no category."""

from __future__ import annotations

from logsleuth.api import diagnose_text
from tests.helpers import real_traceback
from tests.test_fatal_output_shapes import OPTIONS, primary

# A communicator opened the way both engines' NCCL wrapper opens it, failing in the library's check.
NCCL_INIT = real_traceback('''
class Library:
    def init_rank(self):
        self.check(2)

    def check(self, code):
        raise RuntimeError("NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)")


class Communicator:
    def __init__(self):
        self.nccl = Library()
        self.comm: int = self.nccl.init_rank(
        )


Communicator()
''', "sglang/srt/distributed/device_communicators/pynccl.py")


def test_a_source_line_annotating_an_attribute_of_self_is_no_exception_line_when_indentation_is_lost() -> None:
    flat = "\n".join(line.strip() for line in NCCL_INIT.splitlines())
    assert "self.comm: int = self.nccl.init_rank(" in flat.splitlines()
    report = diagnose_text(flat, OPTIONS)
    assert len(report.failures) == 1
    assert primary(flat)[:2] == (
        "RuntimeError", "NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)")


def test_an_exception_of_a_module_whose_name_starts_with_self_is_still_read() -> None:
    from logsleuth.tracebacks.grammar import EXCEPTION_LINE

    assert EXCEPTION_LINE.match("selfcheck.CheckError: the check failed")["type"] == "selfcheck.CheckError"
    assert EXCEPTION_LINE.match("self.comm: ncclComm_t = self.nccl.ncclCommInitRank(") is None


def cut_after(traceback_text: str, last_source: str) -> str:
    """`traceback_text` cut right after the first line holding `last_source` (a paste that lost the rest)."""
    lines = traceback_text.splitlines()
    end = next(i for i, line in enumerate(lines) if last_source in line)
    return "\n".join(lines[: end + 1]) + "\n"


# An engine core whose start-up calls the KV cache's sizing, one that calls a step of no subsystem.
ENGINE_CORE = real_traceback('''
class EngineCore:
    def __init__(self, config):
        self._build_scheduler(config)
        self._initialize_kv_caches(config)

    def _build_scheduler(self, config):
        pass

    def _initialize_kv_caches(self, config):
        raise ValueError("no room")


EngineCore({})
''', "vllm/v1/engine/core.py")


def test_a_cut_right_after_the_last_frame_s_call_reads_the_callee_as_the_subsystem() -> None:
    log = cut_after(ENGINE_CORE, "self._initialize_kv_caches(config)")
    report = diagnose_text(log, OPTIONS)
    diagnosis = report.failures[0].diagnosis
    assert report.failures[0].failure.final.type == ""
    assert diagnosis is not None and diagnosis.category == "kv-cache-memory"
    assert "calling _initialize_kv_caches()" in diagnosis.root_cause
    assert "the `Type: message` line CPython prints right after the last frame" in diagnosis.root_cause


def test_a_callee_of_no_subsystem_places_nothing() -> None:
    source = ENGINE_CORE.replace("self._initialize_kv_caches(config)", "self._finish_start(config)")
    log = cut_after(source.replace("self._build_scheduler(config)", "pass"), "self._finish_start(config)")
    assert primary(log)[2] != "kv-cache-memory"


# A scheduler's model runner cut in a start-up step whose name says nothing of a subsystem.
MODEL_RUNNER = cut_after(real_traceback('''
class ModelRunner:
    def __init__(self):
        self.initialize()

    def initialize(self):
        self.prepare()

    def prepare(self):
        raise RuntimeError("failed")


ModelRunner()
''', "sglang/srt/model_executor/model_runner.py"), "self.prepare()").replace(
    "Traceback (most recent call last):", "[2025-05-29 14:59:00 TP5] Scheduler hit an exception: Traceback (most recent call last):")


def test_a_sentence_above_a_cut_traceback_names_its_category() -> None:
    log = f"Launching with a very long context length can lead to an out-of-memory (OOM) issue as follows:\n```\n{MODEL_RUNNER}"
    report = diagnose_text(log, OPTIONS)
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "gpu-oom"
    assert "out-of-memory (OOM) issue as follows" in diagnosis.root_cause


def test_a_grammar_named_in_the_sentence_above_a_cut_traceback_is_read() -> None:
    log = f"When using xgrammar with an EBNF grammar, SGLang will crash if the model outputs a reserved token.\n\n{MODEL_RUNNER}"
    assert primary(log)[2] == "feature-conflict"


def test_a_model_named_in_the_sentence_names_no_category() -> None:
    log = f"After the upgrade, Qwen/Qwen3.5-397B-A17B-FP8 crashes again as logged below.\n\n{MODEL_RUNNER}"
    assert primary(log)[2] != "quantization"


def test_the_sentence_above_a_whole_traceback_leaves_its_category_to_its_exception_line() -> None:
    whole = real_traceback('''
def prepare():
    raise ValueError("The checkpoint's config names no architecture")
prepare()
''', "sglang/srt/model_executor/model_runner.py")
    log = f"It can lead to an out-of-memory (OOM) issue as follows:\n{whole}"
    assert primary(log)[0] == "ValueError" and primary(log)[2] != "gpu-oom"


# IPython's frames (IPython/core/ultratb.py) as a rendered notebook copies them: the path a Markdown link, a listing of
# numbered source lines with an arrow at the one that ran (vllm-project/vllm#3374); VS Code's rendering links the
# numbers instead (#12386).  Written in ultratb's shape, our own code.
NOTEBOOK_FRAMES = (
    "Same here:\n"
    "File [/opt/env/lib/python3.10/site-packages/vllm/lora/worker_manager.py:195](https://host.example/lab/tree/"
    "worker_manager.py#line=194), in Manager.apply_adapters(self, requests)\n"
    "    193     if len(requests) > self.slots:\n"
    "    194         raise RuntimeError(\"too many adapters\")\n"
    "--> 195     self.add_adapter(request)\n"
    "\n"
    "File [/opt/env/lib/python3.10/site-packages/vllm/lora/worker_manager.py:204](https://host.example/lab/tree/"
    "worker_manager.py#line=203), in Manager.add_adapter(self, request)\n"
    "    203 if request.id not in self.loaded:\n"
    "--> 204     adapter = self._load_adapter(request)\n"
    "    205     self.loaded[request.id] = adapter\n"
)
VSCODE_FRAME = (
    "File ~/envs/x/lib/python3.10/site-packages/vllm/worker/model_runner.py:1051, in Runner.__init__(self, config)\n"
    "   [1049](https://file+.vscode-resource.vscode-cdn.net/x/model_runner.py:1049) heads = config.heads\n"
    "-> [1051](https://file+.vscode-resource.vscode-cdn.net/x/model_runner.py:1051) self.backend = pick_backend(\n"
)


def test_notebook_frames_cut_before_the_exception_line_are_a_cut_traceback() -> None:
    report = diagnose_text(NOTEBOOK_FRAMES, OPTIONS)
    assert len(report.failures) == 1
    frames = report.failures[0].failure.final.frames
    assert [(frame.function, frame.line, frame.source) for frame in frames] == [
        ("Manager.apply_adapters", 195, "self.add_adapter(request)"),
        ("Manager.add_adapter", 204, "adapter = self._load_adapter(request)"),
    ]
    assert frames[-1].file == "/opt/env/lib/python3.10/site-packages/vllm/lora/worker_manager.py"
    assert report.failures[0].diagnosis is not None and report.failures[0].diagnosis.category == "lora-config"


def test_a_frame_whose_listing_links_its_line_numbers_keeps_the_line_that_ran() -> None:
    frames = diagnose_text(VSCODE_FRAME, OPTIONS).failures[0].failure.final.frames
    assert [(frame.line, frame.source) for frame in frames] == [(1051, "self.backend = pick_backend(")]


def test_a_numbered_listing_under_no_notebook_frame_is_left_alone() -> None:
    listing = "The code:\n    193     if len(requests) > self.slots:\n--> 195     self.add_adapter(request)\n"
    assert not diagnose_text(listing, OPTIONS).failures


def test_a_type_read_from_the_raising_statement_alone_keeps_the_subsystem_reading() -> None:
    # QwenLM/Qwen3-VL#1988: a cut inside the KV cache's sizing, its raising statement an assert with no message
    source = ENGINE_CORE.replace('raise ValueError("no room")', "assert len(config) == 1")
    log = cut_after(source, "assert len(config) == 1")
    block_type, message, category = primary(log)
    assert (block_type, message, category) == ("AssertionError", "", "kv-cache-memory")


# A scheduler starting its draft worker, the paste cut inside the draft worker's frame line (sgl-project/sglang#23490).
DRAFT_WORKER = real_traceback('''
def start_draft_worker():
    raise AttributeError("no set_embed")


def init_model_worker():
    start_draft_worker()


init_model_worker()
''', "sglang/srt/speculative/eagle_worker.py")


def test_a_frame_line_cut_after_its_file_is_the_innermost_frame() -> None:
    lines = DRAFT_WORKER.splitlines()
    last_frame = max(i for i, line in enumerate(lines) if line.lstrip().startswith("File "))
    cut_at = lines[last_frame].index('", line') + len('", lin')
    log = "\n".join([*lines[:last_frame], lines[last_frame][:cut_at]]) + "\n"
    assert log.rstrip().endswith('eagle_worker.py", lin')
    report = diagnose_text(log, OPTIONS)
    frames = report.failures[0].failure.final.frames
    assert frames[-1].file.endswith("sglang/srt/speculative/eagle_worker.py") and frames[-1].line is None
    assert report.failures[0].diagnosis is not None and report.failures[0].diagnosis.category == "spec-decoding-args"


def test_an_import_above_a_frame_line_cut_after_its_file_still_names_the_import_error() -> None:
    # vllm-project/vllm#22008: `from vllm.config import (…` and then `File "/…/vllm/config.py", l`
    chain = real_traceback('''
import importlib, pathlib, sys
pathlib.Path("broken_config.py").write_text("raise ImportError('cannot import name Thing')\\n")
sys.path.insert(0, ".")
from broken_config import Thing
''', "vllm/entrypoints/llm.py")
    lines = chain.splitlines()
    last_frame = max(i for i, line in enumerate(lines) if line.lstrip().startswith("File "))
    log = "\n".join([*lines[:last_frame], lines[last_frame][: lines[last_frame].index('", line') + 4]]) + "\n"
    assert log.rstrip().endswith('broken_config.py", l') and "from broken_config import Thing" in log
    assert primary(log)[0] == "ImportError"


def test_an_import_cut_in_a_subsystem_s_module_is_still_an_import_failure() -> None:
    # vllm-project/vllm#1814 (dev-found9): an import chain cut at `from .parallel_state import get_tp_group` in
    # vllm/distributed/: the import failed (ImportError, dependency-version), not the distributed layer
    chain = real_traceback("from missing_parallel_state import get_tp_group\n", "vllm/distributed/communication_op.py")
    log = cut_after(chain, "from missing_parallel_state import get_tp_group")
    block_type, _, category = primary(log)
    assert block_type == "ImportError" and category == "dependency-version"


def test_a_warning_record_above_a_cut_traceback_names_no_category() -> None:
    # ai-dynamo/dynamo#2294: a WARN record of SGLang's tokenizer manager's signal handler above the cut traceback
    log = ("2025-08-05T10:33:30.183Z WARN tokenizer_manager.sigterm_handler: SIGTERM received. Draining requests and "
           f"shutting down... failed\n{MODEL_RUNNER}")
    assert primary(log)[2] != "tokenizer"
