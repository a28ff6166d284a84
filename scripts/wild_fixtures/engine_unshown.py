"""Wild cases whose paste shows no positive evidence of the engine: no launch command, no program name, no
frame or file of the engine, no record header or process prefix only one engine writes, no banner, no image.
The report may say "engine unknown" for these, and only for these (tests/test_engine_everywhere.py); the
.toml says so (`engine_shown = false`) and why (`engine_unshown`).  Anything else must name the engine.

Keyed by the case's stem (`<kind>/<slug>`).  A message that merely names an engine, or wording both engines
share, is no evidence (ingest/engine_evidence.py)."""

from __future__ import annotations

_ONLY_TORCH = "only torch's output (safetensors progress, c10 frames of the NCCL watchdog): no engine file, header or command"
_QUOTED_LINE = "one exception line quoted in prose; its wording is not the engine's own and no file of the engine is named"

_VLLM_FILE = "only a file of vLLM's package in a failed import: SGLang imports vLLM's modules and compiled ops too"

ENGINE_UNSHOWN: dict[str, str] = {
    "dev-engine-program-not-in-image/vllm-project-production-stack-454-runc-exec-not-found": "runc's refusal names the "
    "program the container was to run, which the image lacks: nothing of the engine ran, and ingest/engine_evidence.py reads no program from such a refusal",
    "vllm-undefined-symbol/vllm-project-vllm-28199-exception-only": _VLLM_FILE,
    "vllm-undefined-symbol/vllm-project-vllm-5501-warning-only": _VLLM_FILE + " (the warning's record header is of a module vLLM logs from when merely imported)",
    "cuda-illegal-memory-access/sgl-project-sglang-8296-four-backticks": _ONLY_TORCH,
    "cuda-illegal-memory-access/sgl-project-sglang-8296-indented": _ONLY_TORCH,
    "cuda-illegal-memory-access/sgl-project-sglang-8296-torchrun": _ONLY_TORCH,
    "nccl-watchdog-timeout/sgl-project-sglang-3836-nccl-info-mixed": "NCCL INFO lines and torch's C++ abort of the watchdog: no engine file, header or command",
    "tcpstore-connection-reset/sgl-project-sglang-20859-kubectl-timestamps": "torch's c10d records and C++ frames under kubectl timestamps: no engine file, header or command",
    "deepgemm-device-assert/sgl-project-sglang-29993-two-lines": "DeepGEMM's assertion and a TVM runtime error: a kernel library's words, no engine file",
    "deepgemm-unsupported-arch/sgl-project-sglang-25877-quoted-in-prose": "DeepGEMM's TVM error quoted in a sentence: a kernel library's words, no engine file",
    "no-kernel-image/sgl-project-sglang-1058-flashinfer-lines": "flashinfer's own CUDA error prints and multiprocessing's header: no engine file, header or command",
    "nccl-init-pynccl/xorbitsai-inference-2945-title-line": "an issue title: NCCL's error under Xinference's tag, which runs either engine",
    "spec-decode-grammar-crash/sgl-project-sglang-29110-inline-in-sentence": _QUOTED_LINE,
    "transformers-rope-config-mismatch/sgl-project-sglang-22739-exception-only": "a bare `KeyError: 'rope_theta'`",
    "vllm-hf-validation-error/vllm-project-vllm-9656-inline-in-sentence": "huggingface_hub's HFValidationError quoted in a sentence: a library's words",
    "vllm-module-removed/sgl-project-sglang-362-inline-quote-lost": "'No module named vllm.…' only names vLLM (SGLang importing it); `pip install sglang[all]` is an install, not a run",
    "vllm-native-segfault/NVIDIA-nccl-2106-quoted-dump": "a native backtrace of NCCL's frames alone: no engine file, header or command",
    "weight-key-mismatch/sgl-project-sglang-2935-inline-in-sentence": "a bare `KeyError: 'lm_head.weight'` in a sentence",
    "dev-clean-statement-in-prose/vllm-project-vllm-4232-raise-in-prose": "a question in prose naming a file as `vllm/config.py`: no frame, command or header of the engine",
    "dev-ray-task-error/verl-project-verl-4082-remote-frames": "verl's and Ray's frames and Ray's ActorDiedError: the rollout engine "
    "the actor ran is not named",
    "dev-ray-rank-records/OpenRLHF-OpenRLHF-970-ray-then-rank": "torch's c10d records under Ray's actor prefix: no engine file, "
    "header or command",
    "dev-record-names-cut-traceback/xorbitsai-inference-2486-record-above-cut": "Xinference's record and frames and torch's rendezvous "
    "timeout: Xinference runs either engine",
    "dev-hydra-job-failed/hkust-nlp-simpleRL-reason-80-quoted-in-prose": "Hydra's line and a trainer's overrides that name no "
    "rollout engine",
}
