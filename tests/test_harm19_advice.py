"""Advice that must not mislead (split 18's harmful grades, task harm19): each case runs the real CLI on our own
fixtures (tests/fixtures/patterns/, generated from real CPython tracebacks) or on excerpts cut from them the way
users paste, and checks what the report names and what it must not say."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import run_cli

PATTERNS = Path(__file__).resolve().parent / "fixtures" / "patterns"


def _first(path: Path) -> dict:
    result = run_cli("diagnose", "--format", "json", str(path))
    return json.loads(result.stdout)["failures"][0]["diagnosis"]


def _fix_text(diagnosis: dict) -> str:
    fix = diagnosis["fix"] or {}
    return " ".join([fix.get("summary", ""), *fix.get("steps", [])])


def _cut_from(source: Path, marker: str, tmp_path: Path) -> Path:
    """The fixture's lines from the one holding `marker` on: a paste that starts below a frame's header."""
    lines = source.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if marker in line)
    cut = tmp_path / "cut.log"
    cut.write_text("\n".join(lines[start:]) + "\n")
    return cut


# -- vLLM's sampler warm-up: the same message at two call sites (vllm/v1/worker/gpu_worker.py compile_or_warm_up_model,
#    after the KV cache; gpu_model_runner.py profile_run, before it) -----------------------------------------------------

def test_the_warm_up_after_the_kv_cache_keeps_the_memory_share_as_a_remedy() -> None:
    diagnosis = _first(PATTERNS / "vllm-oom-sampler-warmup" / "positive-0.33.0-after-kv-cache.log")
    assert diagnosis["pattern"] == "vllm-oom-sampler-warmup"
    assert "--gpu-memory-utilization" in _fix_text(diagnosis)
    assert "does not shrink" not in _fix_text(diagnosis)


def test_a_paste_cut_below_the_workers_frame_header_is_still_the_warm_up(tmp_path: Path) -> None:
    source = PATTERNS / "vllm-oom-sampler-warmup" / "positive-0.33.0-after-kv-cache.log"
    diagnosis = _first(_cut_from(source, "self.model_runner._dummy_sampler_run(", tmp_path))
    assert diagnosis["pattern"] == "vllm-oom-sampler-warmup"


def test_the_profiling_run_stays_the_profiling_run() -> None:
    diagnosis = _first(PATTERNS / "vllm-oom-profiling" / "positive-0.33.0-sampler-warmup.log")
    assert diagnosis["pattern"] == "vllm-oom-profiling"


# -- NCCL's "Duplicate GPU detected" (nccl src/init.cc, ncclInvalidUsage): a rank placement, not the interconnect ---------

_WARNS = [f"node1:{pid}:{pid} [0] init.cc:943 NCCL WARN Duplicate GPU detected : rank {a} and rank {b} both on CUDA device 1000"
          for pid, a, b in ((4101, 0, 1), (4102, 1, 0))]
_INTERCONNECT = ("NCCL_P2P_DISABLE", "--shm-size", "NCCL_SOCKET_IFNAME")


def _nccl_log_with_warns(tmp_path: Path) -> Path:
    """vLLM 0.33's NCCL error with its last error taken out, NCCL's WARN lines printed before it (older releases and
    torch's wording print no last error: the WARN lines are the only word of the cause)."""
    source = PATTERNS / "common-nccl-duplicate-gpu" / "positive-0.33.0-last-error.log"
    lines = [line for line in source.read_text().splitlines() if "Duplicate GPU" not in line and "Last error:" not in line]
    log = tmp_path / "warns.log"
    log.write_text("\n".join([*_WARNS, *lines]) + "\n")
    return log


def test_an_nccl_invalid_usage_after_duplicate_gpu_warnings_asks_for_one_gpu_per_rank(tmp_path: Path) -> None:
    diagnosis = _first(_nccl_log_with_warns(tmp_path))
    assert diagnosis["pattern"] == "common-nccl-duplicate-gpu"
    assert "CUDA_VISIBLE_DEVICES" in _fix_text(diagnosis)
    assert not any(word in _fix_text(diagnosis) for word in _INTERCONNECT)


def test_a_cut_traceback_after_duplicate_gpu_warnings_gets_the_placement_checks(tmp_path: Path) -> None:
    log = tmp_path / "cut.log"
    log.write_text("\n".join([*_WARNS, "Traceback (most recent call last):",
                              '  File "/opt/venv/lib/python3.11/site-packages/vllm/v1/engine/core.py", line 1555, in run_engine_core',
                              "    engine_core = EngineCoreProc(*args, engine_index=dp_rank, **kwargs)"]) + "\n")
    diagnosis = _first(log)
    assert diagnosis["category"] == "nccl"
    assert "CUDA_VISIBLE_DEVICES" in _fix_text(diagnosis)
    assert not any(word in _fix_text(diagnosis) for word in _INTERCONNECT)


def test_other_nccl_errors_keep_the_interconnect_checks() -> None:
    diagnosis = _first(PATTERNS / "vllm-nccl-error" / "positive-0.33.0-last-error.log")
    assert diagnosis["pattern"] == "vllm-nccl-error"
    assert "NCCL_P2P_DISABLE" in _fix_text(diagnosis)


# -- torch's narrow() out of range in the fused-MoE weight loader: the placement or sharding of experts is a suspect ------

_MOE_LOADER = "/srv/env/lib/python3.12/site-packages/sglang/srt/layers/moe/fused_moe_triton/layer.py"


def _moe_narrow_log(tmp_path: Path, message: str) -> Path:
    """A traceback ending in SGLang's FusedMoE._load_w2 (0.5.9: loaded_weight.narrow(shard_dim, shard_size * tp_rank,
    shard_size)), cut above the loader the way the KTransformers paste was (kvcache-ai/ktransformers#1910)."""
    log = tmp_path / "moe.log"
    log.write_text("\n".join([
        "Traceback (most recent call last):",
        f'  File "{_MOE_LOADER}", line 349, in _load_model_weight_or_group_weight_scale',
        "    self._load_w2(",
        f'  File "{_MOE_LOADER}", line 518, in _load_w2',
        "    loaded_weight = loaded_weight.narrow(",
        f"IndexError: {message}",
    ]) + "\n")
    return log


def test_an_out_of_range_expert_shard_names_the_placement_not_only_the_checkpoint(tmp_path: Path) -> None:
    diagnosis = _first(_moe_narrow_log(tmp_path, "start out of range (expected to be in range of [-4, 4], but got 12)"))
    assert diagnosis["category"] == "weight-loading"
    assert not diagnosis["title"].startswith("Likely a checkpoint")
    text = _fix_text(diagnosis)
    assert "expert parallelism" in text and "not in the log" in text


def test_a_dense_layers_shape_mismatch_keeps_the_checkpoint_reading(tmp_path: Path) -> None:
    log = tmp_path / "dense.log"
    log.write_text("\n".join([
        "Traceback (most recent call last):",
        '  File "/srv/env/lib/python3.12/site-packages/sglang/srt/layers/linear.py", line 410, in weight_loader',
        "    loaded_weight = loaded_weight.narrow(output_dim, start_idx, shard_size)",
        "RuntimeError: start (0) + length (4096) exceeds dimension size (1408).",
    ]) + "\n")
    diagnosis = _first(log)
    assert "expert" not in (diagnosis["title"] or "")


# -- several flags of later releases refused at once: an older install ran (vllm-project/vllm#18538, split 18 C-06) -----

def _refused(tmp_path: Path, flags: str) -> dict:
    log = tmp_path / "usage.log"
    log.write_text(f"vllm serve /models/qwen3 --port 8000 {flags}\n"
                   "usage: vllm [-h] {serve,complete,chat} ...\n"
                   f"vllm: error: unrecognized arguments: {flags}\n")
    result = run_cli("diagnose", "--format", "json", str(log))
    return json.loads(result.stdout)["failures"][0]["diagnosis"]


def test_flags_of_later_releases_refused_together_point_at_an_older_install_and_keep_the_command(tmp_path: Path) -> None:
    diagnosis = _refused(tmp_path, "--enable-reasoning --reasoning-parser deepseek_r1")
    fix = diagnosis["fix"]
    assert "older install" in fix["summary"] and "older than 0.7.1" in fix["summary"]
    assert not fix.get("flags")  # --reasoning-parser is not dropped from a command for the intended release
    assert fix["needs_input"]  # which install ran is the user's to find: a fix with nothing to apply asks for it
    assert "after 0.9.2 leave --enable-reasoning out" in fix["summary"]


def test_one_flag_of_a_later_release_keeps_the_flag_by_flag_answer(tmp_path: Path) -> None:
    fix = _refused(tmp_path, "--reasoning-parser deepseek_r1")["fix"]
    assert "older install" not in fix["summary"]
    assert "--reasoning-parser is a flag of vLLM 0.7.1 and later" in fix["summary"]


def test_a_release_the_user_names_that_has_every_refused_flag_points_at_another_install(tmp_path: Path) -> None:
    log = tmp_path / "named.log"
    log.write_text("I installed vllm==0.8.5 with pip and ran:\n"
                   "vllm serve /models/qwen3 --enable-reasoning --reasoning-parser deepseek_r1\n"
                   "usage: vllm [-h] {serve,complete,chat} ...\n"
                   "vllm: error: unrecognized arguments: --enable-reasoning --reasoning-parser deepseek_r1\n")
    fix = _first(log)["fix"]
    assert "another, older install" in fix["summary"] and "0.8.5" in fix["summary"]
    assert "one argument" not in fix["summary"] and not fix.get("flags")


def test_sglangs_refusal_with_a_guessed_release_still_points_at_an_older_install(tmp_path: Path) -> None:
    flags = "--enable-eplb --ep-num-redundant-experts 32"
    log = tmp_path / "sglang.log"
    log.write_text(f"$ python -m sglang.launch_server --model-path /models/dsv3 --tp-size 8 {flags}\n"
                   "usage: launch_server.py [-h] --model-path MODEL_PATH [--tokenizer-path TOKENIZER_PATH]\n"
                   f"launch_server.py: error: unrecognized arguments: {flags}\n")
    fix = _first(log)["fix"]
    assert "older install" in fix["summary"] and not fix.get("flags") and "import sglang" in fix["summary"]


def test_a_python_m_launch_is_checked_through_its_interpreter(tmp_path: Path) -> None:
    flags = "--enable-reasoning --reasoning-parser deepseek_r1"
    log = tmp_path / "module.log"
    log.write_text(f"$ python -m vllm.entrypoints.openai.api_server --model /models/qwen3 {flags}\n"
                   "usage: api_server.py [-h] [--host HOST] [--port PORT]\n"
                   f"api_server.py: error: unrecognized arguments: {flags}\n")
    summary = _first(log)["fix"]["summary"]
    assert "import vllm" in summary and "which vllm" not in summary


# -- Triton's fp8e4nv on a GPU below 8.9: a kernel this GPU lacks, not a checkpoint that cannot run (vllm#39610, D-04) ---

_FP8_SGLANG = PATTERNS / "common-fp8-unsupported-gpu" / "positive-triton-3.1-compilation-error.log"
_SITE = "/usr/local/lib/python3.12/dist-packages"


def _vllm_block_gemm_log(tmp_path: Path, *before: str) -> Path:
    """vLLM's block-FP8 weight GEMM compiled for fp8e4nv (vllm/model_executor/layers/quantization/utils/fp8_utils.py,
    the kernel vllm#39610's nightly chose on Ampere), with the lines `before` it."""
    log = tmp_path / "vllm-fp8.log"
    log.write_text("\n".join([
        *before,
        "Traceback (most recent call last):",
        f'  File "{_SITE}/vllm/model_executor/layers/quantization/utils/fp8_utils.py", line 540, in w8a8_triton_block_scaled_mm',
        "    _w8a8_triton_block_scaled_mm[grid](",
        f'  File "{_SITE}/triton/runtime/jit.py", line 591, in run',
        "    kernel = self.compile(src, target=target, options=options.__dict__)",
        f'  File "{_SITE}/triton/compiler/compiler.py", line 81, in make_ir',
        '    raise CompilationError(f"at 1:0:\\ndef {self.fn.__name__}(\\n^\\n{e!r}") from None',
        "triton.compiler.errors.CompilationError: at 1:0:",
        "def _w8a8_triton_block_scaled_mm(",
        "^",
        "ValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\")",
    ]) + "\n")
    return log


def test_vllms_block_fp8_gemm_below_8_9_names_the_weight_only_path_and_the_release_that_ran(tmp_path: Path) -> None:
    diagnosis = _first(_vllm_block_gemm_log(tmp_path, "INFO 03-14 09:20:01 [__init__.py:235] vLLM version 0.11.2"))
    assert diagnosis["pattern"] == "common-fp8-unsupported-gpu"
    assert "cannot run it" not in diagnosis["root_cause"] and "Marlin" in diagnosis["root_cause"]
    text = _fix_text(diagnosis)
    assert "pin that one" in text and "fused_moe_kernel" not in text


def test_a_gpu_below_8_0_keeps_the_no_fp8_answer(tmp_path: Path) -> None:
    diagnosis = _first(_vllm_block_gemm_log(
        tmp_path, "INFO 03-14 09:20:01 [__init__.py:235] vLLM version 0.11.2",
        "WARNING 03-14 09:20:10 [cuda.py:100] GPU Tesla V100-SXM2-32GB has compute capability 7.0"))
    summary = diagnosis["fix"]["summary"]
    assert summary.startswith("Serve this model on this GPU without FP8") and "pin" not in summary


def test_sglangs_fp8_moe_experts_lead_with_a_checkpoint_or_gpu_not_an_earlier_release() -> None:
    summary = _first(_FP8_SGLANG)["fix"]["summary"]
    assert "no SGLang release" in summary and "BF16" in summary and "pin" not in summary


def test_an_fp8_kv_cache_the_launch_asked_for_leads_with_dropping_it(tmp_path: Path) -> None:
    log = tmp_path / "kv.log"
    log.write_text("[2026-03-14 09:20:00] server_args=ServerArgs(model_path='/models/llama-8b', "
                   "kv_cache_dtype='fp8_e4m3', tp_size=1)\n" + _FP8_SGLANG.read_text())
    fix = _first(log)["fix"]
    assert fix["summary"].startswith("The launch asks for FP8 itself") and "pin" not in fix["summary"]
    assert {"op": "remove", "flag": "--kv-cache-dtype"}.items() <= fix["flags"][0].items()
