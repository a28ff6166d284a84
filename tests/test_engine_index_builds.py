"""The raise site extractor (scripts/engine_index/extract.py) reads the messages the engines print from exceptions
built outside a `raise` (issue 28: the engine not named on a bare message whose raise site the index lacked).

Each source below is written the way the engines write these shapes (the code sites are named); the extractor reads
it with `ast` as it reads the wheels."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts" / "engine_index"))
from extract import sites  # noqa: E402

# SGLang's sglang/srt/entrypoints/engine.py (0.5.23): a function returns the error its caller raises.
FACTORY = '''
def _scheduler_died_error(rank, proc):
    proc.join(timeout=10)
    return RuntimeError(
        f"Rank {rank} scheduler died during initialization "
        f"(exit code: {proc.exitcode}). "
        f"If exit code is -9 (SIGKILL), a common cause is the OS OOM killer."
    )

def _wait_for_scheduler_ready(readers, procs):
    for i in range(len(readers)):
        try:
            data = readers[i].recv()
        except EOFError:
            raise _scheduler_died_error(i, procs[i])

def _either(flag):
    if flag:
        return ValueError("a message long enough to be filed as a check")
    return None

def _uses_either(flag):
    raise _either(flag)
'''
DIED = "Rank {} scheduler died during initialization (exit code: {}). If exit code is -9 (SIGKILL), a common cause is the OS OOM killer."


def _found(source: str, file: str = "sglang/srt/entrypoints/engine.py") -> list[tuple[str, int, str, str, str]]:
    return [(site.function, site.first_line, site.kind, site.type, site.message) for site in sites(source, file)]


def test_a_function_that_returns_the_exception_its_caller_raises_is_read_at_both_places() -> None:
    found = _found(FACTORY)
    assert ("_scheduler_died_error", 4, "build", "RuntimeError", DIED) in found
    assert ("_wait_for_scheduler_ready", 15, "raise", "RuntimeError", DIED) in found  # the raise, typed and worded


def test_a_function_that_may_return_something_else_is_no_factory() -> None:
    """`_either` returns an exception or None: its caller's raise is not read as that exception (its build is)."""
    found = _found(FACTORY)
    assert ("_either", 19, "build", "ValueError", "a message long enough to be filed as a check") in found
    assert ("_uses_either", 23, "raise", "_either", "{}") in found  # as before: a call of something that is no class


# vLLM's vllm/v1/engine/exceptions.py: the class gives its own message to its base, from a local name (0.11.0) or a
# class constant (0.34.0).
EXCEPTION_CLASSES = '''
class EngineDeadError(Exception):
    def __init__(self, *args, suppress_context=False, **kwargs):
        ENGINE_DEAD_MESSAGE = "EngineCore encountered an issue. See stack trace (above) for the root cause."
        super().__init__(ENGINE_DEAD_MESSAGE, *args, **kwargs)

class VLLMServerError(Exception):
    pass

class NewEngineDeadError(VLLMServerError):
    ENGINE_DEAD_MESSAGE = (
        "EngineCore encountered an issue. See stack trace (above) for the root cause."
    )
    def __init__(self, *args, **kwargs):
        super().__init__(self.ENGINE_DEAD_MESSAGE, *args, **kwargs)

class Options:
    def __init__(self, name):
        super().__init__("not an exception's message, whatever its length")
'''
DEAD = "EngineCore encountered an issue. See stack trace (above) for the root cause."


def test_an_exception_classs_own_message_is_read_from_a_local_name_or_a_class_constant() -> None:
    found = _found(EXCEPTION_CLASSES, "vllm/v1/engine/exceptions.py")
    assert ("EngineDeadError.__init__", 5, "build", "EngineDeadError", DEAD) in found
    assert ("NewEngineDeadError.__init__", 15, "build", "NewEngineDeadError", DEAD) in found
    assert not [site for site in found if site[0].startswith("Options")]  # a class that is no exception


HANDED_ON = '''
def fail_pending(futures, reason):
    for future in futures:
        future.set_exception(RuntimeError(f"Encoder request was aborted before it finished: {reason}"))

def check(args):
    msg = f"--max-num-seqs ({args.max_num_seqs}) must be at least 1 for the scheduler to run"
    raise ValueError(msg)

def rebound(args):
    msg = "first message, long enough to be filed"
    msg += " and more"
    raise ValueError(msg)

def caught():
    try:
        run()
    except Exception as e:
        logger.exception("EngineCore failed to start.")
        err = RuntimeError("built here and raised by another function later")
        queue.put(err)
        raise
'''


def test_a_message_handed_on_held_in_a_name_or_logged_with_the_traceback_is_read() -> None:
    found = _found(HANDED_ON, "vllm/x.py")
    assert ("fail_pending", 4, "build", "RuntimeError", "Encoder request was aborted before it finished: {}") in found
    assert ("check", 8, "raise", "ValueError", "--max-num-seqs ({}) must be at least 1 for the scheduler to run") in found
    assert ("rebound", 13, "raise", "ValueError", "{}") in found  # a name bound twice: its text is not known
    assert ("caught", 19, "log", "", "EngineCore failed to start.") in found  # logger.exception logs an error
    assert ("caught", 20, "build", "RuntimeError", "built here and raised by another function later") in found


def test_a_raise_of_a_name_the_function_built_is_one_site_not_two() -> None:
    source = 'def f():\n    e = Exception("WorkerProc initialization failed due to an exception")\n    raise e\n'
    assert _found(source, "vllm/x.py") == [("f", 3, "raise", "Exception", "WorkerProc initialization failed due to an exception")]


def test_a_template_is_filed_under_its_opening_only_when_a_cut_may_lose_its_anchor_word() -> None:
    """engine_messages.filed_openings: the word a cut message keeps (within the first MIN_FIXED characters of fixed
    text) points at the anchor word the template is filed under; a template whose anchor is in its opening, or too
    short to be cut and still tell, is not filed again."""
    from logsleuth.facts.engine_messages import filed_openings, shard_of
    from logsleuth.facts.message_templates import anchor_word, opening_word

    assert (opening_word(DIED), anchor_word(DIED)) == ("scheduler", "initialization")
    shards = filed_openings([("RuntimeError", DIED), ("ValueError", "Only symmetric quantization here"),  # too short to tell once cut
                             ("ValueError", "Expected quantization to be one of {} but got {}")])  # anchor in the opening
    filed = {word: anchors for shard in shards.values() for word, anchors in shard.items()}
    assert filed == {"scheduler": ["initialization"]}
    assert shards[shard_of("scheduler")] == {"scheduler": ["initialization"]}


def test_the_parts_of_vllm_an_sglang_module_imports() -> None:
    """scripts/engine_index/cross_imports.py, the source of engine_evidence.SGLANG_RUNS_OF_VLLM: each import form
    SGLang's code uses (srt/layers/quantization's `from vllm import _custom_ops as ops`, srt/distributed's
    `from vllm.distributed import …`, a guarded import inside a function)."""
    from cross_imports import parts_imported

    source = (
        "import torch\n"
        "from vllm import _custom_ops as ops\n"
        "from vllm.distributed.parallel_state import get_tp_group\n"
        "def f():\n"
        "    import vllm.model_executor.layers.linear\n"
        "    from vllm import LLM\n"
        "from vllm_flash_attn import flash_attn_func\n"  # another package
        "# from vllm.v1.engine import core (a comment)\n"
    )
    assert parts_imported(source) == {"_custom_ops", "distributed", "model_executor", "__init__"}
    assert parts_imported("from vllm_flash_attn import flash_attn_func\nimport vllm_hpu\n") == set()
