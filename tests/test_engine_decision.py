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
import json
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.diagnosis.library import load_patterns
from logsleuth.models import Report
from tests.test_engine_everywhere import pattern_fixture_engine

REPO = Path(__file__).resolve().parents[1]
SHARED_CORPUS = REPO.parent / "shared" / "corpus"  # the team's shared corpus beside the checkout, when there
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
        cases.append((log, pattern_fixture_engine(log)))
    return cases


# What a person reads as one engine's format, by this test's own reading (independent of ingest/engine_evidence.py):
# a line starting with vLLM's process prefix or its logger header from a module other than those that log when
# vLLM is imported; SGLang's header (no comma before milliseconds: DeepSpeed's has one).
_VLLM_SHOWN = re.compile(
    r"^(?:\((?:APIServer|EngineCore(?:_DP\d+)?|VllmWorker(?:Process)?|RayWorkerWrapper|Worker_TP\d+)\b[^)]*pid=\d+\)"
    r"|(?:INFO|WARNING|ERROR|DEBUG) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?(?!(?:__init__|interface|importing|_custom_ops)\.py:)"
    r"[\w.]+\.py:\d+\])",
    re.MULTILINE,
)
_SGLANG_SHOWN = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?(?: (?:DP|TP|PP|EP)\d+)*\] ", re.MULTILINE)


SHARDS = 8  # the corpus split so that xdist workers share it (one test of ~800 logs held one worker for 40 s)


@functools.cache
def _engine_neutral() -> frozenset[str]:
    """The bundled patterns that declare no engine (pip's resolver, a pod's events): either engine's log may
    match them, whatever their id's prefix."""
    return frozenset(pattern.id for pattern in load_patterns(include_user=False).patterns if pattern.engine is None)


def _shard(index: int) -> list[tuple[Path, str]]:
    return _corpus_cases()[index::SHARDS]


def test_the_corpora_are_all_there() -> None:
    cases = _corpus_cases()
    assert len(cases) > 700
    # Logs whose lines show one engine's format alone: enough that the check below means something.
    assert sum(_formats_shown(log.read_text(encoding="utf-8", errors="surrogateescape")) == {engine} for log, engine in cases) > 300


def _formats_shown(text: str) -> set[str]:
    return {name for name, shape in (("vllm", _VLLM_SHOWN), ("sglang", _SGLANG_SHOWN)) if shape.search(text)}


@pytest.mark.parametrize("shard", range(SHARDS))
def test_engine_is_never_the_other_one_and_named_where_the_format_shows_it(shard: int) -> None:
    """Every log of the shared corpus, both parts of the wild corpus and the pattern fixtures (each diagnosed
    once): the report's engine is the case's engine or unknown, and no diagnosis comes from the other engine's
    patterns; and where the log's lines show one engine's format alone (and not the other's), the report names
    that engine, the case's."""
    wrong, unnamed = [], []
    for log, engine in _shard(shard):
        text = log.read_text(encoding="utf-8", errors="surrogateescape")
        report = diagnose_text(text, OPTIONS)
        other = "vllm" if engine == "sglang" else "sglang"
        patterns = [g.diagnosis.pattern for g in report.failures if g.diagnosis]
        if report.launch.engine == other or any(p.startswith(other + "-") and p not in _engine_neutral() for p in patterns):
            wrong.append(f"{log.relative_to(log.parents[2])}: engine {report.launch.engine}, patterns {patterns}")
        if _formats_shown(text) == {engine} and report.launch.engine != engine:
            unnamed.append(f"{log.relative_to(log.parents[2])}: {engine} shown, engine {report.launch.engine}")
    assert not wrong, "the other engine:\n" + "\n".join(wrong)
    assert not unnamed, "not named:\n" + "\n".join(unnamed)


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


@pytest.mark.oracle  # the sweep greps every release in the oracle venvs: a minute of CPU, so make test-oracle
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


@pytest.mark.oracle
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


def test_sglang_record_header_shows_sglang_and_vllms_import_lines_show_nothing() -> None:
    """SGLang's `[time TP0]` header is SGLang's own.  vLLM's header on a line vLLM logs while it is merely imported
    (`__init__.py`: "Automatically detected platform cuda.") is also printed inside SGLang (its vLLM imports:
    sgl-project/sglang#4116), so it decides nothing; a line from vLLM's model runner is vLLM running, whatever
    transport prefix (torchrun's `[rank0]: `) carries it."""
    body = "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error\n"
    sglang = report_of("[2025-02-09 10:14:05 TP0] Decode batch. #running-req: 1, #token: 1903\n" + body)
    assert sglang.launch.engine == "sglang"
    vllm_import = report_of("INFO 03-06 10:05:08 __init__.py:190] Automatically detected platform cuda.\n" + body)
    assert vllm_import.launch.engine is None
    torchrun = report_of("[rank0]: INFO 11-22 07:19:25 model_runner.py:1067] Loading model weights took 19.9 GB\n" + body)
    assert torchrun.launch.engine == "vllm"  # by vLLM's logger line; torchrun's prefix is no SGLang header


# -- 5. the log's own format names the engine (issue 28, item 4) ----------------------------------------------
# Our own lines in each engine's format; no launch command, no argparse program, no engine frame.  The formats:
# vLLM's logger (`%(levelname)s %(asctime)s [%(fileinfo)s:%(lineno)d]`, datefmt `%m-%d %H:%M:%S`: vllm/logger.py;
# before 0.8 without the `[`), its process prefix `(NAME pid=N) ` (vllm/logger.py, v1/executor/multiproc_executor.py,
# v1/engine/utils.py: `EngineCore_DP0`), SGLang's `[%(asctime)s{.ms}{ rank tags}]` (configure_logger in
# srt/utils/common.py).  Threads showing them: vllm-project/vllm#28910, #17756, #15469, #18577, #15631;
# noonghunna/club-3090#60; llm-d/llm-d#394; verl-project/verl#705, #490; sgl-project/sglang#4116.

NEUTRAL_FAILURE = "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error\n"

VLLM_FORMATS = {
    "header": "INFO 05-12 10:11:12 [api_server.py:1977] Starting the OpenAI-compatible server on port 8000\n",
    "header-before-0.8": "INFO 05-12 10:11:12 model_runner.py:1067] The model weights are in memory.\n",
    "engine-core-prefix": "(EngineCore_DP0 pid=4242) Process EngineCore_DP0:\n",
    "engine-core-prefix-0.33": "(EngineCore pid=4242) the engine core is shutting down\n",
    "worker-rank-prefix": "(VllmWorker rank=1 pid=4243) the worker is waiting for its peers\n",
    "worker-tp-prefix": "(Worker_TP1 pid=4243) the worker is waiting for its peers\n",
    "v0-worker-prefix": "(VllmWorkerProcess pid=4244) the worker is waiting for its peers\n",
    "api-server-prefix": "(APIServer pid=4240) INFO:     Waiting for application startup.\n",
    "logo-0.33": "       █     █     █▄   ▄█\n ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.33.0\n",
    "server-version-0.33": "vLLM server version 0.33.0, serving model /models/qwen3-8b\n",
    "v0-engine-banner": "Initializing a V0 LLM engine (v0.8.2) with config: model='/models/qwen3-8b', seed=0\n",
    # Python logging's own format when VLLM_CONFIGURE_LOGGING=0 (vllm/logger.py): `LEVEL:logger:message`.
    "logger-name": "ERROR:vllm.engine.async_llm_engine:the background loop stopped\n",
    # warnings.warn's `file:line: Category: message`, from vLLM's installed package: its engine, which SGLang never
    # imports (a warning from vllm/transformers_utils/ or vllm/config.py may be an SGLang run's: SGLANG_RUNS_OF_VLLM).
    "installed-path": "/usr/local/lib/python3.12/dist-packages/vllm/engine/arg_utils.py:412: UserWarning: "
    "the checkpoint names no rope settings\n",
}
SGLANG_FORMATS = {
    "rank-header": "[2025-01-01 12:00:00 TP0] Prefill batch. #new-seq: 1, #new-token: 12\n",
    "dp-tp-ep-header": "[2025-01-01 12:00:00 DP0 TP0 EP0] Starting the scheduler loop.\n",
    # 2024's releases: configure_logger's datefmt was "%H:%M:%S" (srt/utils.py).
    "time-only-header": "[15:04:31 TP0] the scheduler is starting\n",
    # ...which ran vLLM's distributed code, logging in vLLM's format: SGLang's rank header outranks it.
    "time-only-header-with-vllm-lines": "INFO 08-05 15:04:30 custom_all_reduce_utils.py:232] reading the P2P cache\n"
    "[15:04:31 TP0] the scheduler is starting\n",
    "bare-header": "[2025-01-01 12:00:00] Starting the tokenizer manager.\n",
    "millisecond-header": "[2025-01-01 12:00:00.125] Starting the tokenizer manager.\n",
    "installed-path": "/usr/local/lib/python3.11/dist-packages/sglang/srt/layers/quantization/awq.py:76: UserWarning: "
    "this platform has no AWQ kernels\n",
    "source-tree-path": "warning raised at /sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py:120\n",
    "logger-name": "WARNING:sglang.srt.model_loader.loader:the checkpoint has no index file\n",
    # SGLang's process titles (setproctitle in srt/managers/scheduler.py), as a native frame dump names them.
    "process-title": "frame #12: <unknown function> + 0x29ac5d (0x55ba19095c5d in sglang::scheduler_TP0)\n",
}


@pytest.mark.parametrize("engine, lines", [("vllm", v) for v in VLLM_FORMATS.values()] + [("sglang", v) for v in SGLANG_FORMATS.values()], ids=[f"vllm-{k}" for k in VLLM_FORMATS] + [f"sglang-{k}" for k in SGLANG_FORMATS])
def test_the_logs_own_format_names_the_engine(engine: str, lines: str) -> None:
    report = report_of(lines + NEUTRAL_FAILURE)
    assert report.launch.engine == engine


def test_the_banners_give_the_version() -> None:
    assert report_of(VLLM_FORMATS["logo-0.33"] + NEUTRAL_FAILURE).launch.engine_version == "0.33.0"
    assert report_of(VLLM_FORMATS["server-version-0.33"] + NEUTRAL_FAILURE).launch.engine_version == "0.33.0"
    assert report_of(VLLM_FORMATS["v0-engine-banner"] + NEUTRAL_FAILURE).launch.engine_version == "0.8.2"


NOT_EVIDENCE = {
    "install-instruction": "the quantized layers need vLLM's kernels: please install vllm==0.8.4\n",
    "not-installed": "vLLM is not installed, the fallback kernels are used\n",
    "model-dirs": "Loading weights from /models/sglang-test/ and /data/vllm/qwen/config.json\n",
    "import-error": "ModuleNotFoundError: No module named 'vllm.model_executor.layers.fused_moe'\n",
    "import-error-sglang": "ImportError: cannot import name 'ServerArgs' from 'sglang.srt.server_args'\n",
    # DeepSpeed's logger: `[asctime,ms] [LEVEL] [file:line:func]`, a comma before its milliseconds.
    "deepspeed-header": "[2025-01-01 12:00:00,123] [INFO] [real_accelerator.py:222] Setting the accelerator to cuda\n",
    # vLLM's modules that log at import time (ingest/engine_evidence.py), printed inside SGLang too.
    "vllm-import-lines": "INFO 03-06 10:05:08 [__init__.py:239] Automatically detected platform cuda.\n"
    "WARNING 03-06 10:05:08 [interface.py:201] Failed to import from vllm._C\n"
    "INFO 03-06 10:05:09 [importing.py:68] Triton not installed; some kernels are unavailable\n",
    "uvicorn-and-multiprocessing": "(MainProcess pid=77) INFO:     Started server process [77]\n",
}


@pytest.mark.parametrize("lines", NOT_EVIDENCE.values(), ids=NOT_EVIDENCE.keys())
def test_a_line_that_only_names_an_engine_decides_nothing(lines: str) -> None:
    report = report_of(lines + NEUTRAL_FAILURE)
    assert report.launch.engine is None


def test_both_formats_the_failures_own_frames_decide() -> None:
    """SGLang's and vLLM's formats in one paste (e.g. SGLang's vLLM imports logging from a running vLLM module,
    or two programs' logs pasted together): the failure's frames decide; without any, and with the failure
    outside both engines' records (quoted first), the engine is unknown."""
    both = SGLANG_FORMATS["bare-header"] + VLLM_FORMATS["header"]
    assert report_of(NEUTRAL_FAILURE + both).launch.engine is None
    vllm_frames = (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 700, in run_engine_core\n'
        "    raise e\n" + NEUTRAL_FAILURE
    )
    assert report_of(vllm_frames + both).launch.engine == "vllm"


def test_both_record_prefixes_the_failures_own_prefix_decides() -> None:
    """SGLang's rank header and vLLM's process prefix in one paste: the failure printed under vLLM's prefix is
    vLLM's."""
    log = (
        SGLANG_FORMATS["rank-header"]
        + "(EngineCore_DP0 pid=4242) the engine core is starting\n"
        + "(EngineCore_DP0 pid=4242) Traceback (most recent call last):\n"
        + '(EngineCore_DP0 pid=4242)   File "/opt/app/serve.py", line 3, in <module>\n'
        + "(EngineCore_DP0 pid=4242) "
        + NEUTRAL_FAILURE
    )
    assert report_of(log).launch.engine == "vllm"


# -- 6. the program that ran the engine (issue 28, item 4: "and the wrapper") ------------------------------------

WRAPPED = {
    # vLLM's Ray executor: its RayWorkerWrapper actors (vllm-project/vllm#5785, gpustack/gpustack#2415).
    "ray-actor": (
        "(RayWorkerWrapper pid=5120) INFO 07-09 13:14:33 [pynccl.py:69] the communicator is ready\n" + NEUTRAL_FAILURE,
        "vllm",
        "Ray",
    ),
    "ray-daemon": ("(raylet) A worker died while running a task.\n" + VLLM_FORMATS["header"] + NEUTRAL_FAILURE, "vllm", "Ray"),
    # Ray's error: `ray.exceptions.RayTaskError(...)` naming the task (aws-samples/...#117, OpenRLHF/OpenRLHF#358).
    "ray-exception": (
        "Traceback (most recent call last):\n"
        '  File "/opt/app/generate.py", line 40, in generate\n'
        "    outputs = ray.get(refs)\n"
        "ray.exceptions.RayTaskError(RuntimeError): ray::RayWorkerWrapper.execute_method() (pid=51, ip=10.0.0.2, "
        "repr=<vllm.executor.ray_utils.RayWorkerWrapper object at 0x7f3a1c2b>)\n",
        "vllm",
        "Ray",
    ),
    # verl runs SGLang in its WorkerDict actors (verl-project/verl#705).
    "verl": ("(WorkerDict pid=29239) [2025-03-22 01:05:30 TP0] the scheduler stopped\n" + NEUTRAL_FAILURE, "sglang", "verl"),
    # Xinference's worker loads an SGLang model (xorbitsai/inference#3377, #3481).
    "xinference": (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.10/dist-packages/xinference/core/worker.py", line 1135, in launch_builtin_model\n'
        "    await model_ref.load()\n"
        '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/entrypoints/engine.py", line 120, in __init__\n'
        "    raise RuntimeError(msg)\n" + NEUTRAL_FAILURE,
        "sglang",
        "Xinference",
    ),
    # Xinference's actor pool re-raises a worker's error with its address (xoscar; xorbitsai/inference#3373).
    "xinference-actor-error": (
        "RuntimeError: [address=0.0.0.0:41000, pid=1800] NCCL error: unhandled system error\n",
        None,
        "Xinference",
    ),
    # Triton's vLLM backend logs through Triton's glog with a `[vllm] ` prefix (triton-inference-server/vllm_backend
    # src/model.py; triton-inference-server/server#8578).
    "triton": (
        VLLM_FORMATS["header"] + 'E1216 02:12:49.624646 179 model.py:248] "[vllm] Failed to start engine: the engine stopped"\n'
        + NEUTRAL_FAILURE,
        "vllm",
        "Triton Inference Server",
    ),
    # NVIDIA Dynamo's vLLM worker (ai-dynamo/dynamo#4299, #12323).
    "dynamo": (
        "Traceback (most recent call last):\n"
        '  File "/opt/dynamo/venv/lib/python3.12/site-packages/dynamo/vllm/main.py", line 80, in worker\n'
        "    await init(runtime, config)\n"
        '  File "/opt/dynamo/venv/lib/python3.12/site-packages/vllm/v1/engine/async_llm.py", line 130, in __init__\n'
        "    raise RuntimeError(msg)\n" + NEUTRAL_FAILURE,
        "vllm",
        "Dynamo",
    ),
    # llm-d's model service pods, logs prefixed by pod and container (llm-d/llm-d#394).
    "llm-d": (
        "ms-pd-llm-d-modelservice-decode-6c8f9c4df6-vh88z vllm the API server is shutting down\n"
        + VLLM_FORMATS["header"]
        + NEUTRAL_FAILURE,
        "vllm",
        "llm-d",
    ),
    # LLaMA-Factory's vLLM chat engine (hiyouga/LlamaFactory#6523).
    "llama-factory": (
        "Traceback (most recent call last):\n"
        '  File "/work/LLaMA-Factory/src/llamafactory/chat/vllm_engine.py", line 98, in __init__\n'
        "    self.model = AsyncLLMEngine.from_engine_args(engine_args)\n"
        '  File "/usr/lib/python3.10/site-packages/vllm/engine/async_llm_engine.py", line 573, in from_engine_args\n'
        "    raise RuntimeError(msg)\n" + NEUTRAL_FAILURE,
        "vllm",
        "LLaMA-Factory",
    ),
    # OpenRLHF's vLLM actors on Ray (OpenRLHF/OpenRLHF#679, #922): OpenRLHF, not just Ray.
    "openrlhf": (
        "(LLMRayActor pid=427151) Traceback (most recent call last):\n"
        '(LLMRayActor pid=427151)   File "/work/OpenRLHF/openrlhf/trainer/ray/vllm_engine.py", line 54, in __init__\n'
        "(LLMRayActor pid=427151)     self.llm = vllm.LLM(*args, **kwargs)\n"
        '(LLMRayActor pid=427151)   File "/usr/lib/python3.10/site-packages/vllm/entrypoints/llm.py", line 230, in __init__\n'
        "(LLMRayActor pid=427151)     raise RuntimeError(msg)\n"
        "(LLMRayActor pid=427151) " + NEUTRAL_FAILURE,
        "vllm",
        "OpenRLHF",
    ),
}


@pytest.mark.parametrize("log, engine, wrapper", WRAPPED.values(), ids=WRAPPED.keys())
def test_the_wrapper_is_named_and_the_engine_stays_the_engine(log: str, engine: str | None, wrapper: str) -> None:
    launch = report_of(log).launch
    assert launch.wrapper == wrapper
    assert launch.engine == engine


NO_WRAPPER = {
    # torch's compiler is `torch/_dynamo/`, not NVIDIA Dynamo.
    "torch-dynamo": (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.10/site-packages/torch/_dynamo/eval_frame.py", line 600, in _fn\n'
        "    return fn(*args, **kwargs)\n" + NEUTRAL_FAILURE
    ),
    "the-word-ray": "the ray tracer stopped; see /data/rays/run1 and triton kernels\n" + VLLM_FORMATS["header"] + NEUTRAL_FAILURE,
    "install-instruction": "please install xinference[vllm] and ray[default] first\n" + NEUTRAL_FAILURE,
}


@pytest.mark.parametrize("log", NO_WRAPPER.values(), ids=NO_WRAPPER.keys())
def test_no_wrapper_without_its_code_or_prefix(log: str) -> None:
    assert report_of(log).launch.wrapper is None


def test_the_wrapper_is_in_the_json_report() -> None:
    from logsleuth.render import OutputFormat, RenderOptions, render

    report = report_of(WRAPPED["verl"][0])
    data = json.loads(render(report, RenderOptions(format=OutputFormat.JSON)))
    assert data["launch"]["wrapper"] == "verl"
    assert data["launch"]["engine"] == "sglang"


def test_the_schemas_list_every_wrapper() -> None:
    from logsleuth.ingest.engine_evidence import WRAPPERS

    for name in ("report.schema.json", "health_report.schema.json"):
        schema = json.loads((REPO / "logsleuth" / name).read_text())
        assert schema["properties"]["launch"]["properties"]["wrapper"]["enum"] == [*WRAPPERS, None], name


def test_the_wrapper_is_one_line_in_text_and_markdown() -> None:
    from logsleuth.render import OutputFormat, RenderOptions, render

    report = report_of(WRAPPED["ray-actor"][0])
    text = render(report, RenderOptions(format=OutputFormat.TEXT)).splitlines()
    assert [line.strip() for line in text].count("Run by: Ray") == 1
    markdown = render(report, RenderOptions(format=OutputFormat.MARKDOWN)).splitlines()
    assert markdown.count("> Run by: Ray") == 1
    plain = render(report_of(VLLM_FORMATS["header"] + NEUTRAL_FAILURE), RenderOptions(format=OutputFormat.TEXT))
    assert "Run by" not in plain


def test_a_format_never_outweighs_the_program_that_rejected_the_command() -> None:
    """The cross-engine fix still needs positive evidence of the program that rejected the command: the other
    engine's format in the same paste changes nothing."""
    sglang_rejects = report_of(VLLM_FORMATS["header"] + "launch_server.py: error: unrecognized arguments: --foo-bar 2\n")
    assert sglang_rejects.launch.engine == "sglang"
    assert all(not g.diagnosis or not g.diagnosis.pattern.startswith("vllm-") for g in sglang_rejects.failures)
    vllm_rejects = report_of(
        SGLANG_FORMATS["bare-header"] + "vllm: error: unrecognized arguments: --tp-size 2 --mem-fraction-static 0.8\n"
    )
    assert vllm_rejects.launch.engine == "vllm"
    diagnosis = vllm_rejects.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern == "vllm-sglang-command-for-vllm"


# What SGLang imports from vLLM (its `from vllm import _custom_ops`, `import vllm.distributed.parallel_state`, in
# every SGLang release of the oracle venvs): the lines vLLM logs meanwhile are the ones an SGLang log can show.
_SGLANG_IMPORTS_OF_VLLM = "import vllm, vllm._custom_ops, vllm.distributed.parallel_state"
_VLLM_HEADER_FILE = re.compile(r"^(?:INFO|WARNING|ERROR|DEBUG) \d\d-\d\d \d\d:\d\d:\d\d \[?(?P<file>[\w.]+\.py):\d+\]", re.M)


@pytest.mark.oracle
def test_vllms_import_time_files_are_those_its_real_import_logs_from() -> None:
    """ingest/engine_evidence.VLLM_IMPORT_TIME_FILES against the real thing: every file vLLM's logger names while
    the oracle venvs' vLLM is imported the way SGLang imports it is in the set (such a line shows vLLM imported,
    not vLLM running)."""
    import subprocess

    from logsleuth.ingest.engine_evidence import VLLM_IMPORT_TIME_FILES

    pythons = sorted((Path.home() / ".cache/logsleuth/oracle").glob("vllm-*/bin/python"))
    if not pythons:
        pytest.skip("no vLLM oracle venv under ~/.cache/logsleuth/oracle")
    logged: set[str] = set()
    for python in pythons:
        run = subprocess.run([python, "-c", _SGLANG_IMPORTS_OF_VLLM], capture_output=True, text=True, timeout=600)
        logged |= {m["file"] for m in _VLLM_HEADER_FILE.finditer(run.stdout + run.stderr)}
    assert logged, "the import logged no line in vLLM's format: nothing was checked"
    assert logged <= VLLM_IMPORT_TIME_FILES, logged - VLLM_IMPORT_TIME_FILES


def test_line_evidence_costs_no_regex_on_frames_or_once_an_engine_is_known(monkeypatch: pytest.MonkeyPatch) -> None:
    """Engine evidence rides on the one pass the tracker makes: a frame line is read from the failure, not again
    as a line; once a line showed vLLM's paths, later lines naming only vLLM are not searched for paths."""
    from logsleuth.ingest import engine_evidence
    from logsleuth.ingest.launch import LaunchTracker
    from logsleuth.ingest.normalize import normalize_text

    calls: list[bool] = []
    real = engine_evidence.named_in_line

    def counted(text: str, **options: bool) -> tuple[set[str], set[str]]:
        calls.append(options.get("paths", True))
        return real(text, **options)

    monkeypatch.setattr(engine_evidence, "named_in_line", counted)
    frame = '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line {0}, in step\n'
    warning = "/usr/local/lib/python3.12/dist-packages/vllm/engine/arg_utils.py:{0}: UserWarning: a setting is ignored\n"
    tracker = LaunchTracker()
    for line in normalize_text("".join(frame.format(i) + warning.format(i) for i in range(500))):
        tracker.observe(line)
    assert tracker.engine == "vllm"
    assert len(calls) == 500  # the warnings only, never the frames
    assert calls.count(True) == 1  # paths searched until vLLM's were seen


def _stamped(lines: str) -> str:
    """Each line as a line stamper writes it (`ts '[%Y-%m-%d %H:%M:%S]'`, a wrapper's logger): SGLang's untagged
    header, on every line, frame lines too."""
    return "".join(f"[2025-06-01 10:00:02] {line}\n" for line in lines.splitlines())


def test_a_line_stampers_time_is_not_sglangs_header() -> None:
    from tests.helpers import real_traceback

    traceback = real_traceback("raise ValueError('the run failed')\n")
    assert report_of(_stamped(traceback)).launch.engine is None
    # Under the stamp, vLLM's own header still decides.
    vllm_line = "INFO 06-01 10:00:01 [api_server.py:1043] vLLM API server version 0.8.5"
    assert report_of(_stamped(f"{vllm_line}\n{traceback}")).launch.engine == "vllm"


def test_sglangs_untagged_header_on_a_records_first_line_still_names_sglang() -> None:
    """SGLang's logger writes its header once per record: the traceback's own lines carry none."""
    from tests.helpers import real_traceback

    traceback = real_traceback("raise ValueError('the run failed')\n")
    log = f"[2025-06-01 10:00:02] Initialization failed. warmup error: {traceback}"
    assert report_of(log).launch.engine == "sglang"
