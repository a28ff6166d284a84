"""Stop 40's blind split, in generic words (issue 28): the failure shapes its grader found unclassified or filed under
the wrong category although a category row stood for the class.  Each rule with a look-alike where it must not fire.

The wordings are the code sites' (the raise site index, transformers' and CPython's own text); tracebacks are printed
by the real interpreter (tests.helpers.real_traceback)."""

from __future__ import annotations

import pytest

from logsleuth.reasoning import registry
from tests.helpers import diagnose_without_patterns, real_traceback

SITE = "venv/lib/python3.11/site-packages"


@pytest.fixture
def no_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """The honest category alone: the reasoning rules set aside (several of these wordings are a rule's too)."""
    monkeypatch.setattr(registry, "RULES", ())




WORDINGS = [
    # 1. one package's check of another's installed version, at import (a fragment with no frames)
    ("dependency-version", "ImportError: huggingface-hub>=0.30.0,<1.0 is required for a normal functioning of this module, "
     "but found huggingface-hub==0.25.2.\n"),
    ("dependency-version", "RuntimeError: flashinfer requires torch>=2.6, but found torch 2.5.1\n"),
    ("dependency-version", "RuntimeError: Incompatible version of torch: found 2.5.1, expected 2.6.0\n"),
    ("dependency-version", "ValueError: outlines version 0.1.11 is too new; the installed vLLM requires outlines<0.1\n"),
    # 3. an attention kernel's head size, in vLLM's words (the raise site index: attention/backends/*.py)
    ("feature-conflict", "ValueError: Head size 160 is not supported by PagedAttention. Supported head sizes are: "
     "[64, 80, 96, 112, 128, 256].\n"),
    # 8. a quantization method the release does not split by tensor parallelism (vllm layers/linear.py)
    ("parallel-config", "NotImplementedError: Shard id with multiple indices is not supported for BNB quantization with "
     "TP yet.\n"),
    ("parallel-config", "ValueError: Prequant BitsAndBytes models with TP is not supported.Please try with PP.\n"),
    # 7. transformers refusing a name it now ships: a model class's registration too, and a message the paste wrapped
    ("dependency-version", "ValueError: '<class 'transformers_modules.foo.FooConfig'>' is already used by a Transformers "
     "model.\n"),
    ("dependency-version", "ValueError: 'aimv2' is already used by a Transformers config, pick\nanother name.\n"),
    # 4. transformers' tokenizer refusing an attribute the engine reads, in its own __getattr__ words (QwenLM/Qwen3-VL#2058)
    ("dependency-version", "AttributeError: Qwen2Tokenizer has no attribute all_special_tokens_extended. Did you mean: "
     "'num_special_tokens_to_add'?\n"),
    # 3. flashinfer's prefill kernels refusing a head dimension's tile sizes, printed alone (flashinfer-ai/flashinfer#1048)
    ("feature-conflict", "Error: Invalid configuration : NUM_MMA_Q=2 NUM_MMA_D_QK=2 NUM_MMA_D_VO=2 NUM_MMA_KV=4 NUM_WARPS_Q=4 "
     "NUM_WARPS_KV=1 please create an issue (https://github.com/flashinfer-ai/flashinfer/issues) and report the issue to "
     "the developers.\n"),
]

LOOK_ALIKES = [
    # CPython's own "'X' object has no attribute" names no transformers tokenizer's refusal
    ("Likely a transformers release other than", "AttributeError: 'TiktokenTokenizer' object has no attribute 'add_special'\n"),
    # a setting's number, no dotted version: not a package's version
    ("dependency-version", "AssertionError: world_size>=2 is required, but got 1\n"),
    # the engine's own version, checked by a program that runs it: the wrapper row's, not the package row's title
    ("Likely an installed package", "ImportError: vllm>=0.6.3,<=0.8.5 is required for a normal functioning of this "
     "module, but found vllm==0.9.1.\n"),
    # counts that are no versions
    ("dependency-version", "ValueError: found 3 heads, expected 4\n"),
    ("dependency-version", "RuntimeError: This model version is too old for the chat template\n"),
    # tensor parallelism refused with no quantization named: not the quantization row
    ("quantization method", "ValueError: Tensor parallelism is not supported for this model.\n"),
]


@pytest.mark.parametrize(("category", "text"), WORDINGS, ids=[f"{c}-{i}" for i, (c, _) in enumerate(WORDINGS)])
def test_a_blind_split_wording_gets_its_category(category: str, text: str, no_rules: None) -> None:
    diagnosis = diagnose_without_patterns(text)
    assert (diagnosis.category, diagnosis.basis) == (category, "general"), diagnosis.title


@pytest.mark.parametrize(("not_this", "text"), LOOK_ALIKES, ids=[f"look-alike-{i}" for i in range(len(LOOK_ALIKES))])
def test_a_look_alike_is_not_filed_there(not_this: str, text: str, no_rules: None) -> None:
    diagnosis = diagnose_without_patterns(text)
    assert not_this not in (diagnosis.category, *diagnosis.title.split(" ("))
    assert not_this not in diagnosis.title


def test_a_triton_kernels_head_dim_assert_names_the_attention_backend() -> None:
    """SGLang's Triton attention kernels assert the head dimension (Lq/Lk) among the sizes they were written for,
    with no message; before 0.4 they sat outside layers/attention/ (sglang/srt/layers/triton_attention/)."""
    text = real_traceback("""
        def decode_attention_fwd(q):
            Lk = q[-1]
            assert Lk in {16, 32, 64, 128, 256, 576}

        decode_attention_fwd([4, 80])
        """, f"{SITE}/sglang/srt/layers/triton_attention/decode_attention.py")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "feature-conflict", diagnosis.title
    assert "--attention-backend" in " ".join(diagnosis.fix.steps if diagnosis.fix else ())


def test_an_assert_on_another_sizes_list_is_no_attention_backend() -> None:
    """Look-alike: an assert of a size among a list in a scheduler names no head dimension."""
    text = real_traceback("""
        def schedule(batch):
            L = len(batch)
            assert L in {1, 2, 4, 8}

        schedule([0, 0, 0])
        """, f"{SITE}/sglang/srt/managers/scheduler.py")
    assert diagnose_without_patterns(text).category != "feature-conflict"


def test_a_wrapper_run_from_its_checkout_passing_a_removed_keyword_is_a_version_mismatch() -> None:
    """verl run from its git checkout (not site-packages) builds vLLM's LLM with a keyword the installed release lacks:
    CPython refuses it in verl's frame.  The wrapper and the engine release do not match: no unknown flag."""
    text = real_traceback("""
        class LLM:
            def __init__(self, model):
                self.model = model

        def build_rollout():
            return LLM(model="m", enable_sleep_mode=True)

        build_rollout()
        """, "workspace/verl/verl/workers/rollout/vllm_rollout/vllm_rollout_spmd.py")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "dependency-version", diagnosis.title
    assert "--help" not in " ".join(diagnosis.fix.steps if diagnosis.fix else ())


def test_the_users_own_script_passing_an_unknown_keyword_stays_an_unknown_flag() -> None:
    text = real_traceback("""
        class LLM:
            def __init__(self, model):
                self.model = model

        LLM(model="m", foo_bar=1)
        """, "home/me/try_llm.py")
    assert diagnose_without_patterns(text).category == "unknown-flag"


def test_a_frameless_keyword_error_under_a_wrapper_the_log_names_is_a_version_mismatch() -> None:
    text = ("+ python3 -m verl.trainer.main_ppo data.train_batch_size=256 actor_rollout_ref.rollout.name=vllm\n"
            "TypeError: AsyncEngineArgs.__init__() got an unexpected keyword argument 'disable_log_requests'\n")
    assert diagnose_without_patterns(text).category == "dependency-version"


def test_a_traceback_cut_inside_the_engines_call_into_its_workers_is_the_worker_family() -> None:
    """The paste keeps the engine core's frames down to collective_rpc / run_method and stops: the worker's error."""
    full = real_traceback("""
        def run_method(worker, method):
            raise RuntimeError("the worker's own error")

        def collective_rpc(method):
            return run_method(None, method)

        collective_rpc("determine_available_memory")
        """, f"{SITE}/vllm/executor/uniproc_executor.py")
    lines = full.splitlines()
    last_frame = max(i for i, line in enumerate(lines) if line.lstrip().startswith('File "'))
    cut = "\n".join(lines[:last_frame]) + "\n"  # the worker's frame and its error line not copied
    assert "run_method" in cut and "RuntimeError" not in cut
    diagnosis = diagnose_without_patterns(cut)
    # unclassified, not a kill: a cut paste says nothing of one (stop 44, h-cut2: vllm-project/vllm#15630, #32584)
    assert diagnosis.category == "unclassified", diagnosis.title
    assert "cut" in diagnosis.title


def test_a_whole_traceback_through_the_workers_call_keeps_its_own_category() -> None:
    text = real_traceback("""
        def collective_rpc(method):
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")

        collective_rpc("determine_available_memory")
        """, f"{SITE}/vllm/executor/uniproc_executor.py")
    assert diagnose_without_patterns(text).category == "gpu-oom"


def test_a_signature_error_in_the_engines_own_tokenizer_wrapper_is_an_engine_bug() -> None:
    """vLLM's own tokenizer class (transformers_utils/tokenizers/mistral.py) calling its own method wrongly: a bug of
    the release, not transformers' drift."""
    text = real_traceback("""
        class MistralTokenizer:
            def encode_one(self, text, truncation=False):
                return [1]

            def encode(self, text, truncation=False, max_length=None):
                return self.encode_one(text, truncation, max_length)

        MistralTokenizer().encode("hi")
        """, f"{SITE}/vllm/transformers_utils/tokenizers/mistral.py")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "engine-bug", diagnosis.title


def test_the_same_signature_error_in_transformers_frames_stays_the_tokenizer_drift() -> None:
    text = real_traceback("""
        class PreTrainedTokenizerFast:
            def _batch_encode_plus(self, batch):
                return batch

            def encode(self, text):
                return self._batch_encode_plus([text], split_special_tokens=True)

        PreTrainedTokenizerFast().encode("hi")
        """, f"{SITE}/transformers/tokenization_utils_fast.py")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "tokenizer" and "transformers" in diagnosis.title, diagnosis.title


def test_a_wrappers_failed_to_load_yields_to_the_engines_cause_below_it() -> None:
    """The wrapper's record names the stage; the engine's own error, re-raised below it, names the category."""
    text = ("2025-06-01 10:02:43,623 xinference.core.worker 41 ERROR    Failed to load model qwen2.5-instruct-0\n"
            + real_traceback("""
        def _process_result_message():
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")

        _process_result_message()
        """, f"{SITE}/xoscar/backends/context.py"))
    assert diagnose_without_patterns(text).category == "gpu-oom"


def test_a_version_warning_before_an_unrelated_failure_decides_nothing(no_rules: None) -> None:
    """The version-clash words are read on the failure's own lines only (words, not strong words)."""
    text = ("WARNING 05-01 10:00:00 [__init__.py:20] xformers>=0.0.28 is required for the fast path, but found "
            "xformers==0.0.27; falling back.\n"
            "ValueError: some value was wrong\n")
    assert diagnose_without_patterns(text).category != "dependency-version"


def test_python_39s_classless_keyword_error_from_a_wrappers_frame_is_a_version_mismatch() -> None:
    """Python 3.9 and older print `__init__() got an unexpected keyword argument` with no class (hiyouga/LlamaFactory#6654);
    the wrapper's frame places it.  The same words from the user's own script name no category."""
    wrapper = ('Traceback (most recent call last):\n'
               '  File "/opt/conda/lib/python3.9/site-packages/llamafactory/chat/vllm_engine.py", line 96, in __init__\n'
               '    self.model = AsyncLLMEngine.from_engine_args(AsyncEngineArgs(**engine_args))\n'
               "TypeError: __init__() got an unexpected keyword argument 'limit_mm_per_prompt'\n")
    assert diagnose_without_patterns(wrapper).category == "dependency-version"
    own = ('Traceback (most recent call last):\n'
           '  File "/home/me/app.py", line 12, in <module>\n'
           '    cfg = MyConfig(foo=1)\n'
           "TypeError: __init__() got an unexpected keyword argument 'foo'\n")
    assert diagnose_without_patterns(own).category != "dependency-version"
