"""One engine, decided once, from positive evidence (issue 28, item 4).

The four harmful answers of issue 28 as our own logs, written from the real wordings of these threads:
- vllm-project/vllm#13669, #42399 (`vllm: error: unrecognized arguments: ...`), #27389 (`api_server.py: error:`);
- sgl-project/sglang#5441 (SGLang's "Model architectures [...] are not supported for now", the same words as vLLM's);
- sgl-project/sglang#6580, #8607 (SGLang's "... requires some operators from vllm. Please install vllm by
  `pip install vllm==0.8.4`");
- sgl-project/sglang#4116, #12818 (`launch_server.py: error: unrecognized arguments: ...`).
And the Done-when check: the engine is right on every log of every corpus, never the other one."""

from __future__ import annotations

import functools
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.models import Report

REPO = Path(__file__).resolve().parents[1]
SHARED_CORPUS = Path("/work/shared/corpus")
OPTIONS = DiagnoseOptions(include_user_patterns=False)


def report_of(log: str) -> Report:
    report = diagnose_text(log, OPTIONS)
    assert report.failures, log
    return report


def prose_of(report: Report) -> str:
    """Everything the first diagnosis says: title, root cause, fix (and its alternatives)."""
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None
    parts = [diagnosis.title, diagnosis.root_cause]
    fixes = [diagnosis.fix] if diagnosis.fix else []
    while fixes:
        fix = fixes.pop()
        parts += [fix.summary, *fix.steps, fix.command or "", *(op.flag for op in fix.flags)]
        fixes += fix.alternatives
    return "\n".join(parts)


# -- 1. vLLM's argparse errors are vLLM's --------------------------------------------------------------------


@pytest.mark.parametrize(
    "log",
    [
        "usage: vllm [-h] [-v] {chat,complete,serve,bench,collect-env,run-batch} ...\n"
        "vllm: error: unrecognized arguments: --lora-path /data/adapters/a1\n",
        "```\n                     [model_tag]\napi_server.py: error: unrecognized arguments: /models/Qwen3-8B\n```\n",
        "vllm: error: unrecognized arguments: --reasoning-config {\"a\": 1}\n",
    ],
    ids=["vllm-usage", "api-server", "bare-vllm-error"],
)
def test_vllm_argparse_error_is_vllms(log: str) -> None:
    report = report_of(log)
    diagnosis = report.failures[0].diagnosis
    assert report.launch.engine == "vllm"
    assert diagnosis is None or not diagnosis.pattern.startswith("sglang-"), diagnosis


# -- 2. a vLLM pattern does not fire on SGLang's identically worded message -----------------------------------

ARCHITECTURE_LINE = (
    "ValueError: Model architectures ['Glm4ForCausalLM'] are not supported for now. "
    "Supported architectures: dict_keys(['LlamaForCausalLM', 'Qwen2ForCausalLM'])\n"
)


def test_unsupported_architecture_alone_names_no_engine() -> None:
    """The bare line is worded the same by both engines: no engine is known, so no 'upgrade vLLM'."""
    report = report_of("```\n" + ARCHITECTURE_LINE + "```\n")
    assert report.launch.engine is None
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "unsupported-architecture"
    assert "vllm" not in prose_of(report).lower()
    assert "sglang" not in prose_of(report).lower()


def test_unsupported_architecture_in_sglang_log_is_sglangs() -> None:
    log = (
        "[2025-04-16 10:00:00] server_args=ServerArgs(model_path='/models/glm-4', tp_size=1)\n"
        "INFO 04-16 10:00:01 __init__.py:190] Automatically detected platform cuda.\n" + ARCHITECTURE_LINE
    )
    report = report_of(log)
    assert report.launch.engine == "sglang"
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern == "sglang-unsupported-architecture"
    assert "vllm" not in prose_of(report).lower()


# -- 3. SGLang's "please install vllm==..." names vLLM, it is not vLLM -----------------------------------------

SGLANG_AWQ = """\
[2025-05-25 00:29:24] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2255, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, pp_rank, dp_rank)
  File "/sgl-workspace/sglang/python/sglang/srt/model_loader/loader.py", line 370, in load_model
    model = _initialize_model(model_config, self.load_config)
  File "/sgl-workspace/sglang/python/sglang/srt/layers/quantization/__init__.py", line 96, in get_quantization_config
    raise ValueError(
ValueError: awq quantization requires some operators from vllm. Please install vllm by `pip install vllm==0.8.4`
"""


def test_install_vllm_text_does_not_make_the_engine_vllm() -> None:
    report = report_of(SGLANG_AWQ)
    assert report.launch.engine == "sglang"
    assert report.launch.engine_version != "0.8.4"


def test_install_vllm_text_alone_decides_nothing() -> None:
    report = report_of(SGLANG_AWQ.splitlines()[-1] + "\n")
    assert report.launch.engine != "vllm"
    assert report.launch.engine_version != "0.8.4"


# -- 4. an SGLang argparse error is SGLang's, whatever else names vLLM ----------------------------------------

SGLANG_SWITCH_WITH_VALUE = """\
$ python3 -m sglang.launch_server --model-path /models/qwen --disable-radix-cache True --tp-size 2
vllm==0.7.2
usage: launch_server.py [-h] --model-path MODEL_PATH [--disable-radix-cache]
launch_server.py: error: unrecognized arguments: True
"""


def test_sglang_argparse_error_is_not_a_command_given_to_vllm() -> None:
    report = report_of(SGLANG_SWITCH_WITH_VALUE)
    assert report.launch.engine == "sglang"
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern.startswith("sglang-"), diagnosis
    fix = diagnosis.fix
    assert fix is not None and fix.command is not None
    assert "--model-path /models/qwen" in fix.command and "--model " not in fix.command


def test_cross_engine_pattern_needs_positive_evidence() -> None:
    """No program name, no launch command: an SGLang-flagged usage error is not 'an SGLang command given to
    vLLM' (nor the reverse) when nothing shows which engine rejected it."""
    log = "error: unrecognized arguments: --tp-size 2 --mem-fraction-static 0.8\n"
    report = diagnose_text(log, OPTIONS)
    for group in report.failures:
        assert group.diagnosis is None or "command-for" not in group.diagnosis.pattern, group.diagnosis


# -- Done when: the engine is right on every log of every corpus ---------------------------------------------


def _corpus_cases() -> list[tuple[Path, str]]:
    cases: list[tuple[Path, str]] = []
    for root in (SHARED_CORPUS, REPO / "tests/fixtures/wild", REPO / "tests/fixtures/sglang", REPO / "tests/fixtures/vllm"):
        for log in sorted(root.rglob("*.log")):
            expectation = log.with_suffix(".toml")
            engine = tomllib.loads(expectation.read_text())["engine"] if expectation.exists() else None
            if engine is None:
                engine = "vllm" if "fixtures/vllm/" in str(log) else "sglang"
            cases.append((log, engine))
    for log in sorted((REPO / "tests/fixtures/patterns").rglob("*.log")):
        cases.append((log, log.parent.name.split("-", 1)[0]))
    return cases


def test_engine_is_never_the_other_one_on_any_corpus() -> None:
    """Every log of the shared corpus, both parts of the wild corpus and the pattern fixtures: the report's
    engine is the case's engine or unknown, and no diagnosis comes from the other engine's patterns."""
    cases = _corpus_cases()
    assert len(cases) > 700
    wrong = []
    for log, engine in cases:
        report = diagnose_text(log.read_text(encoding="utf-8", errors="surrogateescape"), OPTIONS)
        other = "vllm" if engine == "sglang" else "sglang"
        patterns = [g.diagnosis.pattern for g in report.failures if g.diagnosis]
        if report.launch.engine == other or any(p.startswith(other + "-") for p in patterns):
            wrong.append(f"{log.relative_to(log.parents[2])}: engine {report.launch.engine}, patterns {patterns}")
    assert not wrong, "\n".join(wrong)


# -- own_words: a pattern that shows its engine must be worded by that engine alone ---------------------------

@functools.cache
def _own_words_verdicts() -> tuple[Any, ...]:
    """One sweep (~10 s of grep over the oracle venvs) shared by the tests below."""
    sys.path.insert(0, str(REPO / "scripts"))
    import own_words

    if not own_words.oracles_installed():
        return ()
    return tuple(own_words.verdicts())


def _own_words_sweep() -> tuple[Any, ...]:
    verdicts = _own_words_verdicts()
    if not verdicts:
        pytest.skip("no oracle venvs of both engines under ~/.cache/logsleuth/oracle")
    return verdicts


def test_own_words_is_claimed_exactly_where_the_engines_code_shows_it() -> None:
    """scripts/own_words.py's sweep over the real packages (every release in the oracle venvs): a pattern
    claims `own_words` when, and only when, every text it needs is its engine's, specific, and absent from the
    other engine and from torch, transformers... SGLang's "Model architectures [...] are not supported" is
    vLLM's wording, and such a pattern must not claim an engine; a pattern left unmarked loses its diagnosis on
    logs that show no engine."""
    verdicts = _own_words_sweep()
    wrong = [f"{v.pattern.id}: own_words={v.pattern.own_words}, {v.reason}" for v in verdicts if v.qualifies != v.pattern.own_words]
    assert not wrong, "\n".join(wrong)
    assert {v.pattern.engine for v in verdicts if v.qualifies} == {"sglang", "vllm"}


def test_own_words_sweep_rejects_shared_and_generic_text() -> None:
    """The sweep's reasons on known wordings: the architecture message is both engines', CUDA's OOM text and
    NCCL's error names are anyone's, and a usage rule without message text decides nothing."""
    reasons = {v.pattern.id: v.reason for v in _own_words_sweep()}
    assert reasons["vllm-unsupported-architecture"].startswith(("generic", "other engine"))
    assert reasons["sglang-gpu-oom-forward"].startswith(("generic", "other engine"))
    assert reasons["sglang-nccl-error"].startswith("generic")
    assert reasons["vllm-sglang-command-for-vllm"] == "a match rule needs no message text"
    assert reasons["vllm-tp-heads-divisible"] == "own words"


def test_own_words_decide_the_engine_when_nothing_else_does() -> None:
    report = report_of("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n")
    assert report.launch.engine == "sglang"
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern == "sglang-kv-cache-not-enough-memory"


def test_a_swept_pattern_keeps_its_fix_when_the_log_names_no_engine() -> None:
    """vLLM's derived-max_model_len check, alone in a paste: its words are vLLM's (the sweep), so the report
    keeps vLLM's concrete fix instead of the neutral engine-unknown category."""
    report = report_of(
        "ValueError: User-specified max_model_len (65536) is greater than the derived max_model_len "
        "(max_position_embeddings=32768 in model's config.json). To allow overriding this maximum, set the env "
        "var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.\n"
    )
    assert report.launch.engine == "vllm"
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern == "vllm-max-model-len-exceeds-derived", diagnosis
    assert diagnosis.fix is not None


def test_sglang_record_header_shows_sglang_and_vllms_header_shows_nothing() -> None:
    """SGLang's `[time TP0]` header is SGLang's own; vLLM's `INFO 03-06 10:05:08 [file.py:190]` style is also
    printed inside SGLang (its vLLM imports log in it: sgl-project/sglang#4116), so it decides nothing."""
    body = "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error\n"
    sglang = report_of("[2025-02-09 10:14:05 TP0] Decode batch. #running-req: 1, #token: 1903\n" + body)
    assert sglang.launch.engine == "sglang"
    vllm_style = report_of("INFO 03-06 10:05:08 __init__.py:190] Automatically detected platform cuda.\n" + body)
    assert vllm_style.launch.engine is None
    torchrun = report_of("[rank0]: INFO 11-22 07:19:25 model_runner.py:1067] Loading model weights took 19.9 GB\n" + body)
    assert torchrun.launch.engine is None  # torchrun's `[rank0]: ` prefix is no SGLang header
