"""What a log's own format shows about the engine that wrote it, and about the program that ran the engine.

A person names the engine of a paste that holds no launch command from the way its lines look: vLLM's logger
header (`INFO 05-12 10:11:12 [api_server.py:123] `, older `INFO 05-12 10:11:12 api_server.py:123] `), its process
prefixes (`(EngineCore_DP0 pid=1) `, `(VllmWorker rank=0 pid=1) `), SGLang's header (`[2025-01-01 12:00:00 TP0] `,
`[2025-01-01 12:00:00] `), the engines' module paths in warnings and logger names.  These tables say which of
those belong to one engine alone; ingest/launch.py weighs them against the stronger evidence (argparse's
program, the launch command, the banner) and decides once.

Not evidence: a message that only *names* an engine ("please install vllm==0.8.4", "No module named
'vllm.model_executor'", "vLLM is not installed") or an engine's name in a model path (`/models/sglang-test`).

Every check here runs behind a literal test in launch.py (a line that names neither engine costs nothing more),
on metadata the normalizer already parsed, or on a failure's frames.
"""

from __future__ import annotations

import re

from logsleuth.lazyre import compile_lazily
from logsleuth.models import Failure, LineMeta

# vLLM modules that log while `import vllm` runs, so any program importing vLLM prints them in vLLM's format:
# SGLang does (`from vllm import _custom_ops`), and its pastes start with vLLM's "Automatically detected platform
# cuda." (vllm/platforms/__init__.py; sgl-project/sglang#4116, #5100, #6732).  `import vllm, vllm._custom_ops` in
# the oracle venvs of 0.11.2 logs from platforms/interface.py ("Failed to import from vllm._C") and
# triton_utils/importing.py ("Triton not installed ...").  A line from these files shows vLLM was imported,
# not that vLLM ran.
VLLM_IMPORT_TIME_FILES = frozenset({"__init__.py", "interface.py", "importing.py", "_custom_ops.py"})

# The names vLLM puts in its process prefix `(NAME pid=N) ` (vllm/logger.py's format since 0.11, before that
# vllm/utils' decorate_logs): the API server, the engine core (`EngineCore_DP0`, vllm/v1/engine/utils.py), the
# multiproc workers (`VllmWorker rank=N`, `Worker_TP0`, `Worker_PP1_TP0`: v1/executor/multiproc_executor.py), V0's
# `VllmWorkerProcess` (executor/multiproc_worker_utils.py), the data-parallel actor, and `RayWorkerWrapper`, vLLM's
# class that Ray names its actor after (v1/executor/ray_utils.py).  Threads: vllm-project/vllm#28910, #17756,
# #15469, #5785; noonghunna/club-3090#60.  A bare `Worker` or `MainProcess` is any program's name.
# 0.10.1 named its engine core `EngineCore_0` (vllm-project/vllm#23714: `(EngineCore_0 pid=1518379) `), and several API
# server processes (--api-server-count) are `ApiServer_N` (v1/utils.py APIServerProcessManager).  The data-parallel
# supervisor of 0.22 on (entrypoints/openai/dp_supervisor.py, later entrypoints/launchers/: `decorate_logs("DPSupervisor")`,
# its servers `decorate_logs(f"APIServer_DP{rank}")`, processes named `APIServer_DPRank_{rank}`) and the DP coordinator's
# process (v1/engine/coordinator.py, `name="VLLM_DP_Coordinator"`): names read from the indexed releases' code.
_VLLM_PROCESS = compile_lazily(
    r"(?:APIServer(?:_DP(?:Rank_)?\d+)?|ApiServer_\d+|DPSupervisor|VLLM_DP_Coordinator"
    r"|EngineCore(?:_DP\d+|_\d+)?|DPEngineCoreActor_DP\d+|VllmWorker(?:Process)?|RayWorkerWrapper"
    r"|Worker(?:_(?:DP|PP|PCP|TP|DCP|EP)\d+)+)"
)
# The same prefix in square brackets at a line's start, `[EngineCore_0 pid=5989] …` (gpustack/gpustack#3084, a viewer's
# rendering of vLLM's `(EngineCore_0 pid=5989) `): the name is one only vLLM gives its processes, whatever encloses it.
# Counted as module-path evidence, below the parenthesised prefix's `header` kind: vLLM never prints the brackets
# itself, and one thread's viewer is all that shows the rendering, so the form is weaker than vLLM's own.
_BRACKETED_PROCESS = compile_lazily(r"^\[(?P<process>[\w.\-]{1,80})(?: rank=\d{1,6})? pid=\d{1,10}\] ")


def bracketed_vllm_process(text: str) -> bool:
    """Whether the line starts with one of vLLM's process names and its pid in square brackets."""
    m = _BRACKETED_PROCESS.match(text) if text[:1] == "[" else None
    return bool(m and _VLLM_PROCESS.fullmatch(m["process"]))


# A name a user gave a unit or a service (docker compose's `vllm_1   | `, `vllm-openai-1  | `, journald's
# `vllm[8727]: `, which the normalizer reads as the line's process) made of one engine's name and generic words only.
# The user's name for what runs the engine: weak evidence, below every kind the log's own lines give (commands,
# banners, headers, frames, messages only one engine raises), read by launch.LaunchTracker.engine only when nothing
# else decides, and only on the failure's own lines.  Any other word names nothing: the programs that sit in front of
# an engine or drive it are named after the engine they serve (Open WebUI, LiteLLM, Llama Stack, vllm-project/
# production-stack's `vllm-router`, a load test, an operator, a client), and a project's or a model's word
# (`rag-vllm-1`, vllm-project/vllm#8401) leaves what the service runs to the user.  Generic: what a server is called
# (`server`, `serve`, `api`, `openai` as in the vllm-openai image), where it runs (`gpu`, `dev`, `env`), a replica's
# index, and the hashes Kubernetes adds to a pod's name (the template's and the pod's, in its consonant alphabet) or a
# hexadecimal id.
_SERVICE_SEPARATORS = compile_lazily(r"[-_.]+")
_GENERIC_SERVICE_WORDS = frozenset({"", "server", "serve", "api", "openai", "engine", "worker", "dev", "env", "gpu"})
_REPLICA_HASH = compile_lazily(r"[bcdfghjklmnpqrstvwxz2456789]{5,10}|(?=[a-f]*\d)[0-9a-f]{6,64}")


def engine_in_service_name(name: str) -> str | None:
    """The one engine a unit's or service's name holds beside generic words only (`vllm_1`, `vllm-openai-1`,
    `sglang-server-0`: see _GENERIC_SERVICE_WORDS), else None (`vllm-router-1`, `openwebui-vllm-1`, `rag-vllm-1`)."""
    engines: set[str] = set()
    for word in _SERVICE_SEPARATORS.split(name.lower()):
        if _REPLICA_HASH.fullmatch(word):
            continue
        word = word.rstrip("0123456789")  # a replica's or a device's index: `vllm0`, `gpu1`
        if word in ("vllm", "sglang"):
            engines.add(word)
        elif word not in _GENERIC_SERVICE_WORDS:
            return None
    return engines.pop() if len(engines) == 1 else None


# The Ray actors verl runs an engine in, named after it (verl/workers/rollout/vllm_rollout/vllm_async_server.py
# `vLLMHttpServer`, "equivalent to vllm serve"; sglang_rollout/async_sglang_server.py `SGLangHttpServer`; the older
# `AsyncvLLMServer`, verl-project/verl PR#1138), with their `…ForPartial` subclasses: Ray prints the class name in
# its prefix, `(vLLMHttpServer pid=884, ip=…) `.
# OpenRLHF's and AllenAI open-instruct's actor around `vllm.LLM`, whose name holds no engine's (openrlhf/trainer/ray/
# vllm_engine.py `LLMRayActor`, OpenRLHF's async `LLMRayActorAsync`; open_instruct/vllm_utils.py `LLMRayActor`): both
# run vLLM alone.
_ENGINE_ACTORS = {"vLLMHttpServer": "vllm", "AsyncvLLMServer": "vllm", "SGLangHttpServer": "sglang",
                  "LLMRayActor": "vllm", "LLMRayActorAsync": "vllm"}
# Other wrappers name the Ray actor that runs their engine after it too, and Ray prints the class's name in its prefix
# (`(SGLangEngine pid=720234, ip=…) `) and its task names (`ray::VLLMServerActor.start()`): slime's `SGLangEngine`
# (slime/backends/sglang_utils/sglang_engine.py; THUDM/slime#1514), SkyRL's `AsyncVLLMInferenceEngine`
# (skyrl_train/inference_engines/vllm/vllm_engine.py) and `VLLMServerActor` (skyrl/backends/skyrl_train/
# inference_servers/vllm_server_actor.py; NovaSky-AI/SkyRL#1788), NeMo-RL's `VllmGenerationWorker`.  A class name is
# CamelCase, letters and digits (PEP 8); one that holds one engine's name, in any case, names the engine the actor
# runs.  Not a bare engine name, nor a lower-case one: journald's `vllm[8727]:` and a compose service's `vllm_vllm_1 |`
# are names a user chose for a unit or a service.
_CLASS_NAME = compile_lazily(r"[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*")
_ENGINE_IN_CLASS_NAME = compile_lazily(r"(?i:(?P<vllm>vllm)|(?P<sglang>sglang))")

# SGLang's header before its dates (2024: configure_logger's datefmt "%H:%M:%S" in srt/utils.py): `[15:04:31 TP0] `.
# The normalizer does not read it as a header; with its rank tags it is SGLang's alone.  Those releases ran vLLM's
# distributed and loader code, whose lines in vLLM's format it outranks.
OLD_SGLANG_HEADER = compile_lazily(r"\[\d\d:\d\d:\d\d(?: (?:DP|PP|TP|EP)\d{1,6})+\] ")

# An engine's own code named in a line: a path under the installed package (`dist-packages/sglang/launch_server.py:71:
# UserWarning`), a source tree's module path (`vllm/v1/engine/core.py`, `sglang/srt/managers/scheduler.py`), a
# dotted module or exception name (`vllm.v1.engine.exceptions.EngineDeadError`, logger `sglang.srt.managers`),
# SGLang's process titles (`sglang::scheduler_TP0`, set by setproctitle in srt/managers/scheduler.py; seen in native
# frames of verl-project/verl#490).  vLLM's subpackages are named so that `vllm/` alone (a directory of models)
# is not.
# vLLM's process titles (`VLLM::EngineCore`, `VLLM::Worker_TP0`: set_process_title with its default prefix
# VLLM_PROCESS_NAME_PREFIX="VLLM") name the processes in `ps`, nvidia-smi and the kernel's OOM killer, which cuts a
# name at 15 characters (TASK_COMM_LEN: `Killed process 4242 (VLLM::EngineCor)`, `(sglang::schedul)`): a prefix of the
# title counts.  A log of one engine rarely shows the other's process (a GPU another server still holds): the failure's
# own lines outrank these (launch.EVIDENCE_KINDS "paths").
_MODULE_PATH = compile_lazily(
    r"(?:site|dist)-packages/(?P<installed>vllm|sglang)/"
    r"|\b(?P<vllm>vllm)[./](?P<vllm_part>v1|engine|entrypoints|model_executor|worker|executor|distributed|attention"
    r"|platforms|transformers_utils|multimodal|lora|compilation|inputs|core|logging_utils)[./]"
    r"|\b(?P<sglang>sglang)(?:[./]srt[./]|::(?:sched|detok|data_p)\w*)"
    r"|(?<![\w-])(?P<sglang_router>(?:sglang_router|sgl[-_]model[-_]gateway|sgl[-_]router)/|sglang_router(?:_rs::|\.\w)|\[Router \(Rust\)\] )"
    r"|\b(?P<vllm_title>VLLM)::(?:EngineCor|Worker|APIServ|DPCoord)\w*"
    r"|(?<![\w.])_(?P<vllm_fa>vllm)_fa[23]_C\b"
    r"|\.cache/(?P<compile_cache>vllm|sglang)/torch_(?:compile_cache|aot_compile)(?![\w-])"
    r"|\b(?P<vllm_omni>vllm)_omni[./]\w"
)
# The parts of vLLM that SGLang imports and calls, in some release: `from vllm.distributed import …`,
# `vllm.model_executor.layers.quantization.*`, `from vllm import _custom_ops`, `vllm._C`, `vllm.config`, `vllm.logger`,
# `vllm.platforms`, `vllm.scalar_type`, `vllm.transformers_utils.configs`, `vllm.utils`, `vllm.attention.layer`,
# `vllm._ipex_ops` (every import statement of the indexed SGLang releases, 0.3.6 to 0.5.23, read from the engine
# index's cache; 0.1's router/model_runner.py imports vllm.model_executor too, sgl-project/sglang#391).  A path into
# one of them in a line that is not a frame (an error's message, a warning's location, a library it failed to load)
# shows that vLLM's code ran, not that vLLM did: SGLang runs it.  vLLM's engine, server, workers and executors
# (`vllm/v1/`, `vllm/engine/`, `vllm/entrypoints/`, `vllm/worker/`, …) SGLang never imports.
SGLANG_RUNS_OF_VLLM = frozenset({"__init__", "_C", "_custom_ops", "_ipex_ops", "attention", "config", "distributed", "logger",
                                 "model_executor", "platforms", "scalar_type", "transformers_utils", "utils"})
# Within `vllm.distributed`, the modules SGLang imports (every indexed SGLang release, 0.3.6.post3 to 0.5.23: parallel_state,
# communication_op, device_communicators, utils; read from the engine index's cache as cross_imports.py reads the
# parts).  vLLM's KV-transfer connectors (`vllm/distributed/kv_transfer/kv_connector/v1/lmcache_connector.py`,
# `…/nixl_connector.py`, `…/mooncake_connector.py`) are not among them: a path there is vLLM's engine loading an
# integration (LMCache, NIXL, Mooncake), which by its own names shows no engine (LMCache/LMCache#638, #709).
SGLANG_RUNS_OF_VLLM_DISTRIBUTED = frozenset({"communication_op", "device_communicators", "parallel_state", "utils"})  # (and its __init__)
# Of kv_transfer, only the V1 connectors: vLLM 0.6.6.post1's and 0.7.3's parallel_state.py import
# `vllm.distributed.kv_transfer.kv_transfer_agent` at start-up, and SGLang 0.4.2.post4 to 0.4.4.post1 accept those vLLM
# releases (facts/requires.json), so a path elsewhere in kv_transfer may be SGLang's run.  `kv_connector/v1/` first
# ships in vLLM 0.8.5, which no SGLang release accepts.
_V1_CONNECTOR = compile_lazily(r"[/.]kv_connector[/.]v1[/.]")
_PACKAGE_PART = compile_lazily(r"[\w]+")
# vLLM's compilation cache under its cache root (VLLM_CACHE_ROOT, default `~/.cache/vllm`: vllm/envs.py), where
# vllm/compilation/ keeps each compiled graph (`~/.cache/vllm/torch_compile_cache/<hash>/rank_0_0/backbone`, its AOT
# artifacts under `torch_aot_compile/`): a path there in an error's message (a FileNotFoundError on a cache file,
# vllm-project/vllm#15276; vLLM's own advice to remove it, #21858) shows vLLM's compiler ran.  SGLang never imports
# vLLM's compilation code (cross_imports.py); its own port keeps its graphs under `~/.cache/sglang/torch_compile_cache/`
# (SGLANG_CACHE_DIR, sglang/srt/compilation/backend.py, 0.5.4 on), which shows SGLang's.
# vLLM's flash-attention build registers its ops under `torch.ops._vllm_fa2_C` and `_vllm_fa3_C`
# (vllm/vllm_flash_attn/flash_attn_interface.py); torch names the namespace when an op is missing (`'_OpNamespace'
# '_vllm_fa2_C' object has no attribute 'varlen_fwd'`, OpenBMB/MiniCPM-V#800): vLLM's kernel was called.
# vllm-omni (vllm-project/vllm-omni), which runs vLLM's engine core for each stage of its pipeline, in a logger's name
# or a path (`ERROR:vllm_omni.entrypoints.omni_llm:Stage 0 error on request …`, vllm-project/vllm-omni#352): SGLang never
# imports it.
# SGLang's router, a Rust program (sgl-project/sglang: `sgl-router/`, renamed `sgl-model-gateway/`; its Python
# package `sglang_router`), in a panic's location (`thread 'tokio-runtime-worker' panicked at
# sgl-model-gateway/src/routers/http/router.rs:412:38:`, Rust's std panic hook format) or a path to its code:
# SGLang's alone.  A bare `src/….rs` names no program.
# Its log records start `[Router (Rust)] 2025-03-18 14:17:58 - WARN - …` (sgl-project/sglang#4562, #6491); its
# backtraces name the crate `sglang_router_rs::…` (#7901); a command line or a process table runs its module
# (`python -m sglang_router.launch_router …`, `python -m sglang_router.launch_server …`: SGLang's docs).
ROUTER_WORDS = ("sglang_router", "sgl-model-gateway", "sgl_model_gateway", "sgl-router", "sgl_router", "[Router (Rust)] ")
# pydantic's report of a failed check in a pydantic *dataclass*: its input is the constructor's arguments,
# `[type=value_error, input_value=ArgsKwargs((), {…}), input_type=ArgsKwargs]` (pydantic-core's display).  vLLM's config
# classes are pydantic dataclasses (vllm/config/, 0.10 on: ModelConfig, SchedulerConfig, …); SGLang's settings are plain
# dataclasses and its API models pydantic BaseModels (their input is a dict): the format is vLLM's.
PYDANTIC_CONFIG_ERROR = compile_lazily(r"\[type=\w+, input_value=ArgsKwargs\(.*input_type=ArgsKwargs\]")
# A line that names a module without running it: an import error, an instruction, a requirement.
_NAMES_ONLY = compile_lazily(r"(?i)\bimport|no module named|\binstall|\brequire|\bplease\b|\bpip\b")

# pip's and uv's resolvers name the package whose requirements do not hold: `vllm 0.6.3 requires torch==2.4.0, but you
# have torch 2.2.0 ...` (pip's notice after an install: PRIME-RL/SimpleVLA-RL#53), `Because vllm==0.6.5 depends on
# torch==2.5.1 and ...` (uv: vllm-project/vllm#11283), `sglang 0.4.6 depends on torch==2.6.0` (pip's conflict report).
# That package is the engine being installed; the other engine as its requirement (`sglang 0.4.1 requires vllm<=0.6.4`)
# is no evidence of that one.
_RESOLVER_SUBJECT = compile_lazily(
    r"(?:^\s*|\bBecause\s+|\band\s+)(?P<engine>sglang|vllm)(?:\[[\w,]+\])?(?:==|\s+v?)\d+\.\d+[\w.+]*\s+(?:requires|depends on)\b"
)
# A file of SGLang's package named by an import that failed: the module it loaded (`cannot import name 'x' from
# 'sglang.utils' (/venv/.../site-packages/sglang/utils.py)`, hiyouga/LlamaFactory#7458; verl-project/verl#3719), the
# compiled part that did not load.  SGLang is installed there and something was running it: vLLM never imports
# SGLang.  Not vLLM's files (`/home/u/vllm/vllm/_C.abi3.so: undefined symbol: ...`, vllm-project/vllm#28199): SGLang
# imports vLLM's modules and compiled ops too, so without a frame to say who imported them they show only that vLLM
# is installed.  Installed packages and source checkouts (`python/sglang/`) only: `/models/sglang/x.py` is a
# directory named after the engine.
_IMPORT_FAILED = ("cannot import name", "undefined symbol", "cannot open shared object")
_LOADED_SGLANG_FILE = compile_lazily(r"(?:(?:site|dist)-packages/|/python/)sglang/(?:[\w.-]+/)*[\w.-]+\.(?:py|so)\b")
# SGLang's kernel package named where it failed to load or to install: its loader's report (`[sgl_kernel] CRITICAL:
# Could not load any common_ops library!`, sgl-project/sglang#13198), its compiled ops in an import error
# (`.../site-packages/sgl_kernel/common_ops.abi3.so: undefined symbol`, #5100), SGLang's version check of it
# (`sgl-kernel is installed with version 0.0.9.post2, which is less than ...`, verl-project/verl PR#1832), pip
# resolving it.  SGLang requires sgl-kernel; vLLM's wheels do not (it imports sgl_kernel only on CPU, for AMX
# kernels: vllm/model_executor/layers/quantization/kernels/scaled_mm/cpu.py in 0.11.2).
# Its compiled ops also by the library's own name where the loader's error shows no directory
# (`common_ops.cpython-313-x86_64-linux-gnu.so: undefined symbol: numa_get_membind`, the retired blind split 14's E-05,
# sgl-kernel's CPU build): sgl-kernel's loader imports its extension as `common_ops` (sgl_kernel/load_utils.py, whose
# report lists `sgl_kernel/sm90/common_ops.*` and `common_ops`, sgl-project/sglang#12119), a name vLLM's compiled
# modules never take (`_C`, `_moe_C`, `cumem_allocator`, `_flashmla_C`).  Only with no directory, as a loader's
# subject or at the line's start: `my_common_ops.so` and `/x/other_pkg/common_ops.….so` are another library's (with
# its directory, sgl-kernel's file is the `sgl_kernel/` alternative).
_SGL_KERNEL = compile_lazily(
    r"(?:site|dist)-packages/sgl_kernel/|\[sgl_kernel\] |\bsgl[-_]kernel is installed with version "
    r"|(?:satisfies the requirement|distribution found for) sgl[-_]kernel\b"
    r"|(?:^|[\s'\"`(])common_ops\.(?:abi3|cpython-\d+(?:-[\w-]+)?)\.so(?=: (?:undefined symbol|cannot open shared object))"
)
# pip resolving an engine itself: `ERROR: No matching distribution found for vllm==0.99`.
_PIP_REQUIREMENT = compile_lazily(r"(?:satisfies the requirement|distribution found for) (?P<engine>sglang|vllm)(?![\w-])")
# The engines' container images in a pull or a run (`Failed to pull image "lmsysorg/sglang:v0.5.9-cu129"`,
# `vllm/vllm-openai:v0.11.0`): the image is the engine that was to run.  Also vLLM's ROCm, CPU and TPU images
# (`vllm/vllm-openai-rocm:v0.23.0`, vllm-project/vllm#46169; `vllm/vllm-tpu:nightly`), AMD's (`rocm/vllm`,
# docker/model-runner#412; `rocm/vllm-dev:navi_nightly`; SGLang's `rocm/sgl-dev:v0.5.9-rocm720-mi35x-…`) and NVIDIA's
# NGC ones (`nvcr.io/nvidia/vllm:25.12.post1-py3`, `nvcr.io/nvidia/sglang:25.12-py3`).  AMD's with a tag or digest
# only, and not under another directory: `/opt/rocm/vllm` is a path.
_IMAGE = compile_lazily(
    r"\b(?:lmsysorg/sglang|nvcr\.io/nvidia/sglang)(?P<sglang>)(?=[:@\s\"']|$)"
    r"|(?:(?<![\w/.-])|(?<=docker\.io/))rocm/sgl-dev(?P<sglang_amd>)(?=[:@])"
    r"|\b(?:vllm/vllm-(?:openai(?:-rocm|-cpu)?|tpu)|nvcr\.io/nvidia/vllm)(?P<vllm>)(?=[:@\s\"']|$)"
    r"|(?:(?<![\w/.-])|(?<=docker\.io/))rocm/vllm(?:-dev)?(?P<vllm_amd>)(?=[:@])"
)
# SGLang's `python -m sglang.check_env` lists `sglang: 0.2.12` among its packages (vLLM's collect_env says `vLLM
# Version: ...` and `[pip3] sglang==...`): an environment SGLang describes (sgl-project/sglang#831).
CHECK_ENV_SGLANG = compile_lazily(r"^sglang: (?P<version>\d+\.\d+\.\d+(?:\.?post\d+|rc\d+|\.dev\d+)?)\s*$")
# vLLM's own environment report (`python -m vllm.collect_env`, `vllm collect-env`: vllm/collect_env.py) writes its
# version as `vLLM Version: 0.9.2`, aligned in later releases (`vLLM Version                 : 0.15.0rc2.dev93+g…`,
# under its `vLLM Info` heading): an environment vLLM describes, as SGLang's check_env above.
CHECK_ENV_VLLM = compile_lazily(r"^vLLM Version\s*: (?P<version>\d+\.\d+\.\d+(?:\.?post\d+|rc\d+|\.dev\d+)?)")
# The engines' Prometheus metrics, as `/metrics` prints them: every name carries the engine's prefix (vLLM's
# `vllm:num_requests_running`, vllm/engine/metrics.py and v1/metrics/loggers.py, every indexed release 0.5.5 to 0.34;
# SGLang's `sglang:num_running_reqs`, srt/metrics/collector.py, every indexed release 0.3.6 to 0.5.23).  Only the
# exposition's own lines (a sample, `# HELP`, `# TYPE`), not a dashboard's query that names a metric.
_METRIC_LINE = compile_lazily(r"^(?:# (?:HELP|TYPE) )?(?P<engine>vllm|sglang):[a-z][a-z0-9_]*(?:\{|\s)")


def metric_engine(text: str) -> str | None:
    """The engine whose Prometheus metric the line exposes, else None."""
    m = _METRIC_LINE.match(text) if ("vllm:" in text or "sglang:" in text) else None
    return m["engine"] if m else None


# The module a serving platform runs one engine's backend in, as its logger's name (`%(name)s` in Python logging's
# format): GPUStack's `gpustack.worker.backends.vllm` / `.sglang` (gpustack/worker/backends/vllm.py, sglang.py:
# `logging.getLogger(__name__)`, logged as `… - gpustack.worker.backends.sglang - INFO - Starting SGLang …`) and
# Xinference's `xinference.model.llm.vllm.core` / `xinference.model.llm.sglang.core`.  That backend is the engine
# the platform started.
_WRAPPER_ENGINE_LOGGER = compile_lazily(r"\b(?:gpustack\.worker\.backends|xinference\.model\.llm)\.(?P<engine>vllm|sglang)\b")


def wrapper_logger_engine(text: str) -> str | None:
    """The engine a platform's per-engine backend module, named as a logger, runs, else None."""
    m = _WRAPPER_ENGINE_LOGGER.search(text) if (".vllm" in text or ".sglang" in text) else None
    return m["engine"] if m else None


# A wrapper's module for one engine in a frame's path: verl's rollouts (`verl/workers/rollout/sglang_rollout/`,
# verl-project/verl#3719), LLaMA-Factory's and OpenRLHF's engines (`llamafactory/chat/vllm_engine.py`,
# `openrlhf/trainer/ray/vllm_engine.py`), slime's SGLang backend (`slime/backends/sglang_utils/sglang_engine.py`;
# slime runs SGLang), verl's sharding managers that hand the trainer's weights to one engine
# (`verl/workers/sharding_manager/fsdp_vllm.py`, `fsdp_sglang.py`, `megatron_vllm.py`), lm-evaluation-harness's
# backends (`lm_eval/models/vllm_causallms.py`, `vllm_vlms.py`, `sglang_causallms.py`: `--model vllm` runs them;
# arcee-ai/mergekit#524, EleutherAI/lm-evaluation-harness#2028), AReaL's clients of the server it launched for its
# rollouts (`areal/engine/sglang_remote.py`, `vllm_remote.py`).  Other wrappers' modules made for one engine, by the
# role the file plays for it: FastChat's model workers (`fastchat/serve/vllm_worker.py`, `sglang_worker.py`;
# lm-sys/FastChat#3498), ROLL's generation strategy (`roll/distributed/strategy/vllm_strategy.py`), SkyRL's server
# actor (`skyrl/backends/skyrl_train/inference_servers/vllm_server_actor.py`; NovaSky-AI/SkyRL#1788), the per-engine
# model classes of KServe and lighteval (`huggingfaceserver/vllm/vllm_model.py`, `lighteval/models/sglang/
# sglang_model.py`), TRL's server (`trl/scripts/vllm_serve.py`, run by `trl vllm-serve`), and the eval harnesses'
# backends named after the engine alone (lmms-eval's `lmms_eval/models/chat/sglang.py`, `models/simple/vllm.py`;
# OpenCompass's `opencompass/models/vllm.py`), lighteval's entry for each (`lighteval/main_vllm.py`, `main_sglang.py`).
# The wrapper runs the engine it was configured with.
_WRAPPER_ENGINE_MODULE = compile_lazily(
    r"/(?:(?P<engine>sglang|vllm)_(?:rollout/|(?:engine|worker|strategy|server_actor|model)\.py$)|(?P<slime>sglang)_utils/"
    r"|(?:fsdp|megatron)_(?P<sharded>sglang|vllm)\.py$"
    r"|(?<=/models/)(?P<lm_eval>sglang|vllm)_(?:causallms|vlms)\.py$|(?<=/engine/)(?P<areal>sglang|vllm)_remote\.py$"
    r"|(?<=/trl/scripts/)(?P<trl>vllm)_serve\.py$|(?<=/models/)(?:chat/|simple/)?(?P<harness>sglang|vllm)\.py$"
    r"|(?<=/lighteval/)main_(?P<lighteval>sglang|vllm)\.py$)"
)
# A wrapper's class made for one engine, named in a line (a message, a repr, a log record): verl's rollouts
# (`vLLMRollout`, `vLLMAsyncRollout` in verl/workers/rollout/vllm_rollout/; `SGLangRollout`, `AsyncSGLangRollout` in
# sglang_rollout/) and sharding managers (`FSDPVLLMShardingManager`, `FSDPSGLangShardingManager`,
# `MegatronVLLMShardingManager`); the forks of verl (EasyR1, cosmos-rl) keep the names.
_WRAPPER_ENGINE_CLASS = compile_lazily(
    r"(?<![\w.])(?:(?P<vllm>vLLM(?:Async)?Rollout|(?:FSDP|Megatron)VLLMShardingManager)"
    r"|(?P<sglang>(?:Async)?SGLangRollout|(?:FSDP|Megatron)SGLangShardingManager))(?!\w)"
)
# The text one of them needs.
WRAPPER_CLASS_MARKERS = ("Rollout", "ShardingManager")


def wrapper_class_engine(text: str) -> str | None:
    """The engine a wrapper's class for one engine, named in the line, runs, else None (not from a line that only
    imports or installs it)."""
    m = _WRAPPER_ENGINE_CLASS.search(text)
    return m.lastgroup if m and not _NAMES_ONLY.search(text) else None

# The program that ran the engine, most specific first: verl runs its rollout engine on Ray, so a log showing
# both was run by verl.
WRAPPERS = ("verl", "OpenRLHF", "LLaMA-Factory", "Xinference", "Triton Inference Server", "Dynamo", "llm-d", "Ray Serve", "Ray")
# A directory of a wrapper's code in a frame's path (torch's `_dynamo/` is not Dynamo's `dynamo/`).
_WRAPPER_DIRS = (
    ("/verl/", "verl"),  # verl/workers/rollout/... (verl-project/verl#705)
    ("/openrlhf/", "OpenRLHF"),  # openrlhf/trainer/ray/vllm_engine.py (OpenRLHF/OpenRLHF#679, #922)
    ("/llamafactory/", "LLaMA-Factory"),  # src/llamafactory/chat/vllm_engine.py (hiyouga/LlamaFactory#6523)
    ("/xinference/", "Xinference"),  # xinference/core/worker.py (xorbitsai/inference#3377, #3481)
    ("/xoscar/", "Xinference"),  # Xinference's actor pool
    ("/tritonserver/", "Triton Inference Server"),  # /opt/tritonserver/backends/vllm/model.py (triton-inference-server/server#8578)
    ("/dynamo/", "Dynamo"),  # site-packages/dynamo/vllm/main.py (ai-dynamo/dynamo#4299)
    ("/ray/", "Ray"),  # site-packages/ray/_private/worker.py (ray-project/ray#59778)
)
_WRAPPER_OF_DIR = dict(_WRAPPER_DIRS)
_INSTALLED_DIRS = ("site-packages/", "dist-packages/")
# The actor names Ray prints in its prefix `(NAME pid=N)`: verl's `WorkerDict` (verl/trainer/ppo/ray_trainer.py)
# and `AsyncvLLMServer` (verl-project/verl#1642), OpenRLHF's `ActorModelRayActor` (OpenRLHF/OpenRLHF#922), the
# `LLMRayActor` of OpenRLHF and open-instruct (allenai/open-instruct#521), vLLM's `RayWorkerWrapper`.
_WRAPPER_PROCESSES = {
    "WorkerDict": "verl",
    "AsyncvLLMServer": "verl",
    "vLLMHttpServer": "verl",
    "SGLangHttpServer": "verl",
    "ActorModelRayActor": "OpenRLHF",
    "LLMRayActor": "Ray",
    "RayWorkerWrapper": "Ray",
}
# A wrapper named in a line that also names an engine (the literal test launch.py runs first): verl's and
# OpenRLHF's module paths (`python3 -m verl.trainer.main_ppo ... rollout.name=sglang`, `repr=<openrlhf.trainer.ray.
# vllm_engine.LLMRayActor ...>`), `llamafactory-cli`, Xinference's loggers, the Triton vLLM backend's log lines
# (`model.py:502] "[vllm] Error generating stream`: triton-inference-server/vllm_backend src/model.py logs with a
# `[vllm] ` prefix; aws-samples/amazon-eks-machine-learning-with-terraform-and-kubeflow#117), Dynamo's entry
# points (`python -m dynamo.vllm`, `dynamo_run::subprocess`: ai-dynamo/dynamo#1422), llm-d's pods
# (`ms-pd-llm-d-modelservice-decode-... vllm (APIServer pid=1)`: llm-d/llm-d#394), Ray's task names and errors.
# The Triton vLLM backend's log record: its logger's `model.py:<line>]`, then the `[vllm] ` prefix it writes.
_TRITON_VLLM_RECORD_SHAPE = r"model\.py:\d+\] \"?\[vllm\] "
_WRAPPER_WORDS = compile_lazily(
    r"\b(?:(?P<verl>verl)[./]|(?P<openrlhf>openrlhf)[./]|(?P<llamafactory>llamafactory)\b"
    rf"|(?P<xinference>xinference)[./\s]|(?P<triton>tritonserver\b|{_TRITON_VLLM_RECORD_SHAPE})"
    r"|(?P<dynamo>dynamo[._](?:vllm|sglang|run|runtime|frontend)\b)|(?P<llmd>llm-d)-|(?P<ray>ray::|ray\.exceptions\.))"
)
# The Triton vLLM backend's own record (`model.py:248] "[vllm] Failed to start engine: …`, the prefix of
# _TRITON_VLLM_RECORD_SHAPE): that backend (triton-inference-server/vllm_backend, installed as
# /opt/tritonserver/backends/vllm/model.py) is a Python model that builds vLLM's engine and no other, so its record
# shows vLLM ran, as its frames under `…/vllm/` do (triton-inference-server/server#8578;
# aws-samples/amazon-eks-machine-learning-with-terraform-and-kubeflow#117).
_TRITON_VLLM_RECORD = compile_lazily(rf"\b{_TRITON_VLLM_RECORD_SHAPE}")


def triton_vllm_record(text: str) -> bool:
    """A record of the Triton vLLM backend (see _TRITON_VLLM_RECORD): vLLM ran under Triton."""
    return "[vllm] " in text and bool(_TRITON_VLLM_RECORD.search(text))


# Xinference's actor pool (xoscar) re-raises a worker's error as `[address=0.0.0.0:41227, pid=1893] <message>`
# (xoscar's _AsCauseBase.__str__; xorbitsai/inference#3373, #2945).  The failure's message is read without it
# (tracebacks/grammar.py WRAPPER_TAG), so the line is read here.
_XOSCAR_ERROR = compile_lazily(r"\[address=[^\s,\]]+, pid=\d+\] ")
_WRAPPER_GROUPS = {
    "verl": "verl",
    "openrlhf": "OpenRLHF",
    "llamafactory": "LLaMA-Factory",
    "xinference": "Xinference",
    "triton": "Triton Inference Server",
    "dynamo": "Dynamo",
    "llmd": "llm-d",
    "ray": "Ray",
}


# An engine's own environment variable set by the user for the launch: at the start of a command line (`VLLM_USE_V1=0
# python run.py`, after a prompt, `env` or other assignments; a Dockerfile's `ENV`), exported (`export SGLANG_TORCH_PROFILER_DIR=/tmp`), passed to a container (`-e VLLM_ATTENTION_BACKEND=
# FLASHINFER`, `--env`), or a pod's `- name: VLLM_LOGGING_LEVEL` (vllm-project/vllm#13258: `VLLM_ATTENTION_BACKEND=
# FLASHINFER`).  Each engine reads only its own prefix (vllm/envs.py; SGLang's `get_bool_env_var("SGLANG_…")` and
# srt/environ.py); a variable a message names or suggests (`Set VLLM_PLUGINS to control …`, `please set
# VLLM_USE_V1=0 …`) is no assignment.  The weakest
# evidence (launch.EVIDENCE_KINDS "env"): anything else the log shows decides.
_ENV_ASSIGNMENT = compile_lazily(
    r"(?:^\s*(?:[$#+>]\s+)?(?:env\s+|ENV\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*|\bexport\s+|\s(?:-e|--env)[\s=]+)"
    r"(?P<assigned>VLLM|SGLANG)_[A-Z][A-Z0-9_]*=(?=\S)"
    r"|\bname:\s*[\"']?(?P<pod>VLLM|SGLANG)_[A-Z][A-Z0-9_]*[\"']?\s*$"
)


def engine_set_in_environment(text: str) -> str | None:
    """The engine whose own environment variable the line assigns (see _ENV_ASSIGNMENT), else None."""
    m = _ENV_ASSIGNMENT.search(text)
    return (m["assigned"] or m["pod"]).lower() if m else None


def header_engine(meta: LineMeta) -> str | None:
    """The engine whose logger header started the line's record, or None.  vLLM's header from a module that logs
    at import time shows only that vLLM was imported; SGLang's is `[date time]` with a dot before milliseconds
    when there are any (DeepSpeed's `[2025-01-01 12:00:00,123] [INFO]` has a comma)."""
    if meta.header == "vllm":
        return None if meta.logged_from in VLLM_IMPORT_TIME_FILES else "vllm"
    if meta.header == "sglang" and meta.timestamp and "," not in meta.timestamp:
        return "sglang"
    return None


def process_engine(process: str) -> str | None:
    """vLLM, for a process prefix only vLLM writes; the engine a wrapper's actor is named after; None otherwise."""
    if _VLLM_PROCESS.fullmatch(process):
        return "vllm"
    return _ENGINE_ACTORS.get(process.removesuffix("ForPartial")) or _actor_named_after_engine(process)


def _actor_named_after_engine(name: str) -> str | None:
    """The one engine a wrapper's actor class is named after (see _CLASS_NAME), else None."""
    if not _CLASS_NAME.fullmatch(name) or name.lower() in ("vllm", "sglang"):
        return None
    engines = {m.lastgroup for m in _ENGINE_IN_CLASS_NAME.finditer(name)}
    return engines.pop() if len(engines) == 1 else None


# Ray names a task after its actor's class in its errors and process titles (`ray::vLLMHttpServer.launch_server()`,
# `ray::RayWorkerWrapper.execute_method()`: RayTaskError's message, `ray.exceptions.RayTaskError(RuntimeError):
# ray::…`).  The actors of one engine (process_engine: vLLM's RayWorkerWrapper, verl's vLLMHttpServer and
# SGLangHttpServer) show it as their process prefix does.
_RAY_TASK = compile_lazily(r"\bray::(?P<actor>[A-Za-z_]\w*)\.")


def ray_task_engine(text: str) -> str | None:
    """The engine whose actor a Ray task name in the line runs (see _RAY_TASK), else None."""
    return next((engine for m in _RAY_TASK.finditer(text) if (engine := process_engine(m["actor"]))), None)


# vLLM's own record where the normalizer did not read it, after text before it on the line: vLLM's logger writes its
# VLLM_LOGGING_PREFIX (vllm/envs.py, any text the user sets) before the level (vllm/logger.py _FORMAT, `%(levelname)s
# %(asctime)s [%(fileinfo)s:%(lineno)d] %(message)s` with datefmt `%m-%d %H:%M:%S`, in the indexed releases 0.11.2 and
# 0.33.0, which puts its process prefix `(%(vllm_process_name)s pid=%(process)d) ` in the format itself), a re-logger
# or a viewer puts its own field in front (a level `ERROR:    `, a table's `| ` or a box's `│ ` before `INFO 05-11
# 08:17:48 server_vllm.py:473] …`: vllm-project/vllm#4760, #8016), a paste indents a record (`  (APIServer pid=1) ERROR
# 01-10 07:09:06 [serving_completio`, cut: vllm-project/vllm#32090) or quotes it in an inline code span (`` `ERROR
# 04-29 21:35:55 [engine.py:448] …` ``).  The record starts after a space or a quoting mark, never inside a word.  Its process prefix is read as the normalizer reads one at a line's start (process_engine), its header
# as vLLM's header (not from a module that logs while `import vllm` runs: VLLM_IMPORT_TIME_FILES); a header the paste
# cut is read only after a process prefix.
_EMBEDDED_VLLM_RECORD = compile_lazily(
    r"(?:^|(?<=[\s`'\"*>:|]))(?:\((?P<process>[\w.\-]{1,80})(?: (?:DP|PP|PCP|TP|DCP|EP)\d{1,6}(?:_(?:DP|PP|PCP|TP|DCP|EP)\d{1,6})*)?"
    r"(?:,? rank=\d{1,6})?,? pid=\d{1,10}(?:, ip=[\w.:\-]{1,64})?\) )?"
    r"(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? "
    r"(?:\[?(?P<file>[\w.\-]{1,120}\.py):\d{1,7}\]|\[[\w.\-]{1,120}$)"
)


def embedded_vllm_record(text: str) -> tuple[str | None, str | None]:
    """(the engine its process prefix shows, the engine its header shows) for vLLM's record after other text on the
    line (see _EMBEDDED_VLLM_RECORD), each None when that part shows none; the caller reads lines whose start the
    normalizer did not take for a record."""
    if " pid=" not in text and ".py:" not in text:
        return None, None
    for m in _EMBEDDED_VLLM_RECORD.finditer(text):
        if m["process"] is None and m["file"] is None:
            continue  # a cut header alone: too little to be vLLM's
        by_process = process_engine(m["process"]) if m["process"] else None
        by_header = "vllm" if m["file"] and m["file"] not in VLLM_IMPORT_TIME_FILES else None
        if by_process or by_header:
            return by_process, by_header
    return None, None


# Ray Serve's replica actors are named after the deployment class a program wrote (ray/serve/_private/common.py
# DeploymentID.to_replica_actor_class_name: `ServeReplica:{app}:{deployment}`): that program calls the engine's API.
_SERVE_REPLICA = "ServeReplica:"


def process_wrapper(process: str) -> str | None:
    if process.startswith(_SERVE_REPLICA):
        return "Ray Serve"
    return _WRAPPER_PROCESSES.get(process.removesuffix("ForPartial"))


def serve_deployment(process: str | None) -> str | None:
    """The deployment class a Ray Serve replica's name carries (`ServeReplica:default:VLLMDeployment`: VLLMDeployment),
    the program's own code."""
    if not process or not process.startswith(_SERVE_REPLICA):
        return None
    return process.rsplit(":", 1)[-1] or None


def named_in_line(text: str, *, paths: bool = True) -> tuple[set[str], set[str]]:
    """The engines whose code, and the wrappers whose code, a line names (it names at least one engine: the caller
    tested that); without `paths`, only the wrappers (the engines it could name are known already).  Nothing from
    a line that only names a module to import or install."""
    if _NAMES_ONLY.search(text):
        return set(), set()
    engines = {"sglang" if m["sglang_router"] else next(name for name in m.groups() if name).lower()
               for m in _MODULE_PATH.finditer(text) if not _part_sglang_runs(text, m)} if paths else set()
    return engines, _wrappers_named(text)


def _wrappers_named(text: str) -> set[str]:
    """The wrappers a line's words name; of several in one word (a path), the innermost: `/home/u/verl/OpenRLHF/
    openrlhf/trainer/ppo_trainer.py` is OpenRLHF's code in a folder the user named verl (see wrapper_of_path)."""
    by_word: dict[int, str] = {}
    for m in _WRAPPER_WORDS.finditer(text):
        if m.lastgroup:
            word_start = max(text.rfind(" ", 0, m.start()), text.rfind("\t", 0, m.start()))
            by_word[word_start] = _WRAPPER_GROUPS[m.lastgroup]  # a later match in the same word wins
    return set(by_word.values())


def _part_sglang_runs(text: str, m: re.Match[str]) -> bool:
    """Whether a module path the line names is in a part of vLLM that SGLang runs too (SGLANG_RUNS_OF_VLLM; within
    `distributed`, SGLANG_RUNS_OF_VLLM_DISTRIBUTED)."""
    if m["vllm_part"]:
        part, end = m["vllm_part"], m.end()
    elif m["installed"] == "vllm":
        found = _PACKAGE_PART.match(text, m.end())
        if found is None:
            return True
        part, end = found.group(), found.end() + 1
    else:
        return False
    if part != "distributed":
        return part in SGLANG_RUNS_OF_VLLM
    module = _PACKAGE_PART.match(text, end) if text[end - 1:end] in ("/", ".") else None
    if module is not None and module.group() == "kv_transfer":
        return not _V1_CONNECTOR.match(text, module.end())
    return module is None or module.group() in SGLANG_RUNS_OF_VLLM_DISTRIBUTED or module.group() == "__init__"


# A wrapper's check of the engine's version it is about to run: transformers' require_version, which LLaMA-Factory
# and others call (`vllm>=0.4.3,<=0.8.5 is required for a normal functioning of this module, but found vllm==0.9.1.`,
# transformers/utils/versions.py _compare_versions).  The engine found there is the one installed and being run.
_VERSION_CHECK_FOUND = compile_lazily(r"\bis required for a normal functioning of this module, but found (?P<engine>sglang|vllm)==(?P<version>\d[\w.+]*?)\.?(?:\s|$)")


def engine_version_checked(text: str) -> tuple[str, str] | None:
    """(engine, version) a wrapper's version check found installed, else None."""
    m = _VERSION_CHECK_FOUND.search(text) if "but found" in text else None
    return (m["engine"], m["version"]) if m else None


def engines_shown_by_install(text: str) -> set[str]:
    """The engines a line of pip's or uv's resolver, or of a failed import, shows installed (see above)."""
    found = {m["engine"] for m in _RESOLVER_SUBJECT.finditer(text)}
    if "sglang/" in text and any(words in text for words in _IMPORT_FAILED) and _LOADED_SGLANG_FILE.search(text):
        found.add("sglang")
    if "requirement" in text or "distribution found" in text:
        found.update(m["engine"] for m in _PIP_REQUIREMENT.finditer(text))
    if ("sgl" in text or "common_ops." in text) and _SGL_KERNEL.search(text):
        found.add("sglang")
    return found


# The release an engine's own image tag names: lmsysorg/sglang's `v0.4.6.post1-cu124`, `v0.5.2rc2-cu126`,
# vllm/vllm-openai's `v0.8.5`, `v0.10.1.1` (their registries tag each release so; `latest`, `nightly`, `dev` and
# commit tags name none).  Other images' tags are their own numbering (NGC's `25.09-py3`, rocm/vllm's
# `rocm6.3.1_vllm_0.8.5_…`) and are not read.
_IMAGE_RELEASE = compile_lazily(
    r"\b(?:(?P<sglang>lmsysorg/sglang)|(?P<vllm>vllm/vllm-(?:openai(?:-rocm|-cpu)?|tpu))):v?"
    r"(?P<version>\d+\.\d+\.\d+(?:\.\d+)?(?:\.?post\d+|rc\d+)?)(?=[-\s\"'@]|$)"
)


def image_release(text: str) -> tuple[str, str] | None:
    """(engine, release) an engine's own image tag names (`vllm/vllm-openai:v0.8.5`), else None."""
    m = _IMAGE_RELEASE.search(text) if ":" in text else None
    if m is None:
        return None
    return ("sglang" if m["sglang"] else "vllm"), m["version"]


def image_engine(text: str) -> str | None:
    """The engine whose container image the line names, else None."""
    m = _IMAGE.search(text) if "/" in text else None
    return m.lastgroup.split("_")[0] if m and m.lastgroup else None


# A dump of the settings that decides which engine runs: the engine's own settings class (SGLang's `ServerArgs(…)`,
# sglang/srt/server_args.py; vLLM's `EngineArgs(…)` / `AsyncEngineArgs(…)`, vllm/engine/arg_utils.py), or the
# setting by which a wrapper picks its engine: Xinference's launch kwargs, a dict (`'model_engine': 'sglang'`,
# xorbitsai/inference#2126) or `key=value` items (`model_engine=SGLang`, the format of #2334), and its
# `--model-engine vllm` (#2126), verl's `actor_rollout_ref.rollout.name=sglang`, LLaMA-Factory's
# `infer_backend: vllm`.  A setting names the engine that runs, not one it merely mentions.
_SETTINGS_CLASS = compile_lazily(r"(?<![\w.])(?P<cls>ServerArgs|(?:Async)?EngineArgs)\((?=[a-z_]+=)")
# (No case-insensitive group: it makes Python's `re` try every position slowly; the spellings the wrappers print.)
# verl logs the rollout it built from that setting: `After building vllm rollout, memory allocated (GB): …`
# (verl/workers/fsdp_workers.py `log_gpu_memory_usage(f"After building {rollout_name} rollout", …)`,
# verl-project/verl#138).
_WRAPPER_CHOICE = compile_lazily(
    r"(?:model_engine['\"]?(?:=|: ['\"])|--model-engine[= ]|rollout\.name=|infer_backend(?:[:=] ?| )['\"]?)"
    r"(?P<engine>sglang|SGLang|SGLANG|vllm|vLLM|VLLM)(?![\w-])"
    r"|After building (?P<built>sglang|vllm) rollout\b"
)
# The text one of them needs: lines without it (nearly all) cost a few substring tests.
SETTINGS_MARKERS = ("Args(", "engine", "rollout.name", "infer_backend", "After building", *(RUNNER_MARKERS := (
    "lm_eval", "lm-eval", "lighteval", "vllm_num_engines", "vllm-serve", "use_vllm")))

# A project runner's own option that makes it run one engine, in its command line or config (each read from the
# runner's code): lm-evaluation-harness's `--model vllm` / `vllm-vlm` / `sglang` (lm_eval/models/vllm_causallms.py
# `@register_model("vllm")`, vllm_vlms.py, sglang_causallms.py `@register_model("sglang")`), OpenRLHF's
# `--vllm_num_engines N` (openrlhf/cli/train_ppo_ray.py: "number of vLLM Engines, set to 0 to disable vLLM"), TRL's
# `trl vllm-serve` (trl/cli.py, which runs trl/scripts/vllm_serve.py) and its trainers' `use_vllm` (GRPOConfig,
# `--use_vllm true` or `use_vllm: true` in a recipe), lighteval's backend subcommands `lighteval vllm …` and
# `lighteval sglang …` (src/lighteval/main_vllm.py, main_sglang.py; huggingface/open-r1#468, huggingface/lighteval#504).
# A runner that only *could* run an engine names none.
_RUNNER_OPTION = compile_lazily(
    r"\blm[-_]eval\b.*?--model[= ](?P<lm_eval>vllm|sglang)(?:-vlm)?(?![\w-])"
    r"|\blighteval\s+(?P<lighteval>vllm|sglang)(?![\w-])"
    r"|--vllm_num_engines[= ]+(?P<openrlhf>[1-9]\d*)\b"
    r"|\btrl\s+(?P<trl_serve>vllm)-serve\b"
    r"|--(?P<use_vllm_flag>use_vllm)(?:[= ]+[\"']?(?:true|True)\b|\s*$|\s+--)"
    r"|(?<![\w.-])(?P<use_vllm>use_vllm)\s*[:=]\s*[\"']?(?:true|True)\b"
)


# The backend a serving benchmark drove, when its requests reach an API only one engine serves: SGLang's client prints
# it in its summary, `Backend:` padded to 40 columns under "Serving Benchmark Result" (sglang/bench_serving.py, 0.5.23's
# sglang/benchmark/serving.py: `"{:<40} {:<10}".format("Backend:", backend)`; sgl-project/sglang#9428, #9812, #9974)
# and takes it as `--backend` (`python3 -m sglang.bench_serving --backend sglang`).  Only `sglang` and `sglang-native`
# name an engine: ASYNC_REQUEST_FUNCS maps both to async_request_sglang_generate, SGLang's native `/generate`, which a
# clean run shows answered (every indexed release, 0.3.6.post3 to 0.5.23).  Every other label is the user's name for an OpenAI-compatible request any server answers:
# SGLang's `vllm`, `sglang-oai`, `lmdeploy` share async_request_openai_completions (their `-chat` forms the chat one),
# and vLLM's `vllm bench serve` maps `vllm` to the same function as `openai` (vllm/benchmarks/lib/
# endpoint_request_func.py).  The user's choice, not the server's own words: the weakest evidence
# (launch.LaunchTracker.engine reads it last), and only in a log where no failure was read.
_BACKEND_SUMMARY = compile_lazily(r"^\s*Backend:\s{2,}(?P<engine>sglang)(?:-native)?\s*$")
_BACKEND_OPTION = compile_lazily(r"(?<!\S)--backend[= ](?P<engine>sglang)(?:-native)?(?!\S)")
# SGLang's client (`sglang.bench_serving`, 0.5.23's `sglang.benchmark.serving`) in the same command as the option:
# another program's `--backend` (torchrun's `nccl`, a user's script, a command after `;`, `&&` or `|`) is its own, and
# so is vLLM's repository script benchmarks/benchmark_serving.py's, whose `sglang` label sends OpenAI requests.
_BENCHMARK_CLIENT = compile_lazily(r"\bbench(?:_|mark\.)serving\b")
_COMMAND_SEPARATORS = (";", "&&", "|")
BENCHMARK_MARKERS = ("Backend:", "--backend")


def benchmark_backend(text: str) -> str | None:
    """The engine a serving benchmark's backend choice names (see above), else None."""
    if "Backend:" in text and (m := _BACKEND_SUMMARY.match(text)):
        return m["engine"]
    if "--backend" in text and (m := _BACKEND_OPTION.search(text)):
        command_start = max(text.rfind(separator, 0, m.start()) for separator in _COMMAND_SEPARATORS) + 1
        if _BENCHMARK_CLIENT.search(text, command_start, m.start()):
            return m["engine"]
    return None


# A launch written as a list of words, not a shell line: a container's exec form (a Dockerfile's `ENTRYPOINT
# ["python3", "-m", "vllm.entrypoints.openai.api_server"]`, vLLM's own Dockerfile; a compose file's or a pod's
# `command: ["python3", "-m", "sglang.launch_server", …]`, `["vllm", "serve", …]`), Python's repr of a subprocess's
# argument list (`Command '['python', '-m', 'sglang.launch_server', …]' returned non-zero exit status 1.`, a wrapper
# that started the server), or a YAML block list whose item is the engine's server module (`- sglang.launch_server`).
# The program it runs is the engine's own server.
_LISTED_COMMAND = compile_lazily(
    r"[\[,]\s*(?P<q>[\"'])(?:[^\"',\s]*/)?python[\d.]*(?P=q)\s*,\s*(?P=q)-m(?P=q)\s*,\s*(?P=q)"
    r"(?P<module>sglang\.launch_server|vllm\.entrypoints\.openai\.api_server|vllm\.entrypoints\.api_server)(?P=q)"
    r"|[\[,]\s*(?P<q2>[\"'])(?:[^\"',\s]*/)?(?P<cli>vllm|sglang)(?P=q2)\s*,\s*(?P=q2)serve(?P=q2)"
    r"|^\s*-\s+[\"']?(?P<item>sglang\.launch_server|vllm\.entrypoints\.openai\.api_server)[\"']?\s*$"
)


def listed_command_engine(text: str) -> str | None:
    """The engine whose server a launch written as a list of words runs (see _LISTED_COMMAND), else None."""
    m = _LISTED_COMMAND.search(text) if ("launch_server" in text or "api_server" in text or "serve\"" in text or "serve'" in text) else None
    if m is None:
        return None
    return "sglang" if (m["module"] or m["cli"] or m["item"]).startswith("sglang") else "vllm"


def settings_engine(text: str) -> str | None:
    """The engine a dump of the launch's settings shows running, else None (the callers' prefilter: one of
    SETTINGS_MARKERS is in the line)."""
    if "Args(" in text and (m := _SETTINGS_CLASS.search(text)):
        return "sglang" if m["cls"] == "ServerArgs" else "vllm"
    if m := _WRAPPER_CHOICE.search(text):
        return (m["engine"] or m["built"]).lower()
    if any(marker in text for marker in RUNNER_MARKERS) and (m := _RUNNER_OPTION.search(text)) and not _NAMES_ONLY.search(text):
        return m["lm_eval"] or m["lighteval"] or "vllm"
    return None


# A user's Python that drives one engine through its API, pasted as code (a script, a notebook cell, a REPL line, a
# frame's source line): `from vllm import LLM, SamplingParams` (vLLM's offline API, exported by vllm/__init__.py in
# every indexed release), `import sglang as sgl` then `sgl.Engine(model_path=…)` (SGLang's offline engine, exported by
# sglang/__init__.py; sgl-project/sglang#1173, #5647's reply).  SGLang's own code imports vLLM only as `import vllm`, `from vllm import _custom_ops` and the parts
# in SGLANG_RUNS_OF_VLLM (every indexed SGLang release, read from the engine index's cache), and no indexed vLLM
# release imports sglang: so an import of a public name from `vllm` or of a vLLM part SGLang never imports is vLLM's
# API in use, and an import of `sglang` is SGLang's.  Only a statement that opens its line (after an indent or a
# REPL's `>>> `): a sentence naming an import, an error's `No module named 'vllm'`, is not code; nor is `LLM(` alone
# (TensorRT-LLM's class has the name).
_API_IMPORT = compile_lazily(
    r"^\s*(?:>>>\s+)?(?:from\s+vllm(?:\.(?P<vllm_from>\w+)[\w.]*)?\s+import\s+\(?\s*(?P<names>\w+)"
    r"|import\s+vllm\.(?P<vllm_import>\w+)|from\s+(?P<sglang_from>sglang)(?:\.[\w.]+)?\s+import\s+\w"
    r"|import\s+(?P<sglang_import>sglang)(?:\s+as\s+\w+|\.[\w.]+)?\s*(?:#.*)?$)"
)
# SGLang's offline engine called by the name its docs import it as (`sgl.Engine(`), or the package's own: a statement
# that opens its line, an assignment or a call (`llm = sgl.Engine(model_path=…)`), as the imports above; a sentence
# naming the call (`works with sgl.Engine(model_path=p), but …`) is not code.
_SGLANG_ENGINE_CALL = compile_lazily(r"^\s*(?:>>>\s+)?(?:[\w.]+\s*=\s*)?(?:sgl|sglang)\.Engine\(")
API_MARKERS = ("import", ".Engine(")


def api_code_engine(text: str) -> str | None:
    """The engine a line of the user's Python drives through its API (see _API_IMPORT), else None."""
    if "import" in text and (m := _API_IMPORT.match(text)):
        if m["sglang_from"] or m["sglang_import"]:
            return "sglang"
        part = m["vllm_from"] or m["vllm_import"]
        if part is not None:
            return None if part in SGLANG_RUNS_OF_VLLM else "vllm"
        return None if m["names"].startswith("_") else "vllm"
    return "sglang" if ".Engine(" in text and _SGLANG_ENGINE_CALL.match(text) else None


# The engine's console script as the traceback's first frame (`File "/usr/local/bin/vllm", line 10, in <module>`:
# vllm-project/vllm#35746, #23714; SGLang's `sglang` since its `sglang serve` CLI): the program that ran is the engine's
# own, whatever else the frames show.
_CONSOLE_SCRIPT = compile_lazily(r"/bin/(?P<engine>vllm|sglang)$")


# A frame in a package only one engine installs and runs: SGLang's kernels (`sgl_kernel`, which vLLM never imports: its
# CPU kernels ported from it are compiled into vLLM's own `_C`, csrc/cpu/sgl-kernels/, in every indexed release) and
# its router's Python package (`sglang_router`); vLLM's flash-attention build when it was a package of its own
# (`vllm_flash_attn`, the vllm-flash-attn distribution vLLM 0.4 to 0.5 required; later inside `vllm/`).  Not
# `vllm/_C` or `vllm/_custom_ops.py`: SGLang imports vLLM's compiled ops too (frames of both engines are SGLang's).
# A paste that shortened the paths keeps the package's directory first (`vllm_flash_attn/flash_attn_interface.py`).
# No indexed SGLang release names vllm_flash_attn in its code (its attention backends are flashinfer's, triton's and
# sgl_kernel's flash-attention), so vLLM's build in a fragment's only frame is vLLM's.
# vLLM's hardware plugins and the programs built on its engine, from the vllm-project organization: vllm-ascend
# (`vllm_ascend/worker/worker_v1.py`, loaded through vLLM's `vllm.platform_plugins` entry point), vllm-gaudi,
# vllm-spyre, vllm-metal, and vllm-omni (`vllm_omni/engine/stage_engine_core_proc.py`, which runs vLLM's engine core
# per stage); FlagOS's vllm-plugin-FL (`vllm_fl/worker/model_runner.py`: vllm_fl/platform.py registers vLLM's platform
# plugin 'fl', facts/engine_drivers.toml; flagos-ai/vllm-plugin-FL#132, #196).  Their code runs inside vLLM only:
# SGLang's Ascend backend is its own (sglang/srt/hardware_backend/npu/) and no indexed SGLang release names any of them.
_ENGINE_PACKAGE_FRAME = compile_lazily(
    r"(?:^|/)(?:(?P<sglang>sgl_kernel|sglang_router)|(?P<vllm>vllm_(?:flash_attn|ascend|gaudi|spyre|metal|omni|fl)))/"
)


def package_frame_engine(path: str) -> str | None:
    """The engine whose own package (not named after it) a frame's path is in, else None."""
    m = _ENGINE_PACKAGE_FRAME.search(path) if ("sgl" in path or "vllm_" in path) else None
    return m.lastgroup if m else None


def console_script_engine(path: str) -> str | None:
    """The engine whose console script a frame's path is, else None."""
    return m["engine"] if path.endswith(("/vllm", "/sglang")) and (m := _CONSOLE_SCRIPT.search(path)) else None


def relative_frame_engine(path: str) -> str | None:
    """The engine whose source tree a relative frame path starts in (`sglang/srt/managers/scheduler.py`, a checkout
    run from its `python/` directory or a paste that shortened the paths; `vllm/v1/engine/core.py`), else None.  The
    same module paths as in other lines (_MODULE_PATH): `vllm/` alone is a directory of models."""
    if path[:1] in ("/", "<") or not path.startswith(("sglang/", "vllm/", "./")):
        return None
    m = _MODULE_PATH.match(path.removeprefix("./"))
    return "sglang" if m and m["sglang"] else "vllm" if m and m["vllm"] else None


def wrapper_directory_names() -> tuple[str, ...]:
    """The directory names of the wrappers' code (`verl`, `llamafactory`, ...) wrapper_of_path reads."""
    return tuple(directory.strip("/") for directory, _ in _WRAPPER_DIRS)


def wrapper_of_path(path: str) -> str | None:
    """The wrapper whose code directory a frame's path is in (`/verl/`, `/llamafactory/`, ...), else None: the
    innermost such directory that holds a package of the wrapper's (a directory below it, or an install directory
    above it).  `/home/u/verl/OpenRLHF/openrlhf/trainer/ppo_trainer.py` is OpenRLHF's code in a folder the user named
    verl, `/home/u/verl/train.py` the user's own script there."""
    found = _wrapper_directory(path)
    return found[1] if found else None


def _wrapper_directory(path: str) -> tuple[str, str] | None:
    """(the path up to and with the wrapper's directory, the wrapper) of wrapper_of_path, else None.  Below the last
    install directory the wrapper is the package installed there, never a directory inside it (OpenRLHF's own
    `openrlhf/trainer/ray/vllm_engine/actor.py` is not Ray's code); above it, the user's folders are read innermost."""
    install_end = max((path.rfind(mark) + len(mark) for mark in _INSTALLED_DIRS if mark in path), default=-1)
    if install_end >= 0:
        top = path[install_end:].split("/", 1)[0]
        if "/" in path[install_end:] and (wrapper := _WRAPPER_OF_DIR.get(f"/{top}/")):
            return path[:install_end + len(top) + 1], wrapper
        path = path[:install_end]
    best: tuple[int, str, str] | None = None
    for directory, wrapper in _WRAPPER_DIRS:
        start = path.rfind(directory)
        while start >= 0:
            if "/" in path[start + len(directory):] or path[:start + 1].endswith(_INSTALLED_DIRS):
                if best is None or start > best[0]:
                    best = (start, path[:start + len(directory)], wrapper)
                break
            start = path.rfind(directory, 0, start + len(directory) - 1)  # (a match may share its "/" with the next)
    return (best[1], best[2]) if best else None


# CPython's default repr of an object, `<module.Class object at 0x7683487bc6d0>` (object.__repr__), names the module
# its class is defined in, and Ray prints its actor's in an error (`ActorDiedError: … repr=<module.Class object at
# 0x…>`, ray/exceptions.py): Ray Serve LLM's `ray.llm._internal.serve.deployments.llm.vllm.vllm_engine.
# _EngineBackgroundProcess` (ray-project/ray#54739), OpenRLHF's `openrlhf.trainer.ray.vllm_engine.LLMRayActor`
# (OpenRLHF/OpenRLHF#358), SkyRL's `skyrl.backends.skyrl_train.inference_servers.vllm_server_actor.VLLMServerActor`
# (NovaSky-AI/SkyRL#1788).  An object of a wrapper's module made for one engine (_WRAPPER_ENGINE_MODULE, read as the
# module's file) was built to run that engine, as a frame in that module shows.  The engines' own modules in a repr
# are read as any module path (_MODULE_PATH).
_OBJECT_REPR = compile_lazily(r"<(?P<module>[A-Za-z_]\w*(?:\.\w+)+)\.\w+ object at 0x[0-9a-fA-F]+>")


def repr_module_engine(text: str) -> str | None:
    """The engine a wrapper's per-engine module runs, when the line holds the repr of an object of that module."""
    if " object at 0x" not in text:
        return None
    return next((engine for m in _OBJECT_REPR.finditer(text)
                 if (engine := wrapper_module_engine("/" + m["module"].replace(".", "/") + ".py"))), None)


def wrapper_module_engine(path: str) -> str | None:
    """The engine a wrapper's per-engine module in a frame's path runs, else None."""
    m = _WRAPPER_ENGINE_MODULE.search(path) if ("_" in path or "/models/" in path) else None
    return (m["engine"] or m["slime"] or m["sharded"] or m["lm_eval"] or m["areal"] or m["trl"] or m["harness"]
            or m["lighteval"]) if m else None


def xoscar_error(text: str) -> bool:
    """A line holding an error that Xinference's actor pool re-raised (`[address=…, pid=…] `)."""
    return bool(_XOSCAR_ERROR.search(text))


def failure_wrappers(failure: Failure) -> set[str]:
    """The wrappers a failure's frames, exception types and messages show: a frame in a wrapper's code, Ray's
    exceptions (`ray.exceptions.RayTaskError(ValueError)`) and task names (`ray::RayWorkerWrapper.execute_method()`)."""
    found: set[str] = set()
    directories: dict[str, str] = {}  # a wrapper's directory in the frames -> the wrapper
    for block in failure.exceptions:
        if block.type.startswith("ray.exceptions.") or "ray::" in block.message:
            found.add("Ray")
        for frame in block.frames:
            if located := _wrapper_directory(frame.file):
                directories.setdefault(*located)
    # A wrapper's directory that holds another wrapper's source tree is a folder the user named after it (`/home/u/verl/
    # OpenRLHF/run.py` above OpenRLHF's frames in `/home/u/verl/OpenRLHF/openrlhf/`): the inner program's code ran.  Not
    # an environment installed inside a checkout (`/workspace/verl/.venv/…/site-packages/ray/`).  Each directory's
    # enclosing directories are looked up (linear in the frames, not in their pairs).
    held: set[str] = set()
    for inner, other in directories.items():
        cut = inner.rfind("/", 0, len(inner) - 1)
        while cut >= 0 and "-packages/" not in inner[cut + 1:]:
            outer = inner[:cut + 1]
            if directories.get(outer, other) != other:
                held.add(outer)
            cut = inner.rfind("/", 0, cut)
    found.update(wrapper for directory, wrapper in directories.items() if directory not in held)
    if failure.meta.process and (wrapper := process_wrapper(failure.meta.process)):
        found.add(wrapper)
    return found


def most_specific(wrappers: set[str]) -> str | None:
    """The wrapper to name: the most specific of those seen (verl over the Ray it runs on)."""
    return next((wrapper for wrapper in WRAPPERS if wrapper in wrappers), None)
