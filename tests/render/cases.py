"""Reports built by hand for the golden files: each shape a renderer must handle."""

from __future__ import annotations

from logsleuth.models import (
    Diagnosis,
    EngineWords,
    ExceptionBlock,
    Failure,
    FailureGroup,
    Fix,
    FlagOp,
    Frame,
    LaunchInfo,
    LineMeta,
    Report,
    SourceInfo,
)

SGLANG = "/usr/local/lib/python3.11/dist-packages/sglang/srt"
TORCH = "/usr/local/lib/python3.11/dist-packages/torch"
COMMAND = (
    "python -m sglang.launch_server --model-path /models/llama --speculative-algorithm EAGLE3 "
    "--speculative-draft-model-path /models/draft --speculative-num-draft-tokens 16 --speculative-eagle-topk 1"
)


def _launch_frames() -> tuple[Frame, ...]:
    return (
        Frame("<frozen runpy>", 198, "_run_module_as_main"),
        Frame("<frozen runpy>", 88, "_run_code"),
        Frame(
            "/usr/local/lib/python3.11/dist-packages/sglang/launch_server.py",
            32,
            "<module>",
            "server_args = prepare_server_args(sys.argv[1:])",
            in_app=True,
        ),
        Frame(
            f"{SGLANG}/server_args.py",
            5592,
            "prepare_server_args",
            "return ServerArgs.from_cli_args(raw_args)",
            in_app=True,
        ),
        Frame("<string>", 331, "__init__"),
        Frame(
            f"{SGLANG}/server_args.py",
            767,
            "__post_init__",
            "self._handle_speculative_decoding()",
            in_app=True,
        ),
        Frame(
            f"{SGLANG}/server_args.py",
            2425,
            "_handle_speculative_decoding",
            "and self.speculative_num_draft_tokens is None",
            in_app=True,
        ),
    )


def _spec_diagnosis() -> Diagnosis:
    return Diagnosis(
        pattern="sglang-eagle-partial-spec-args",
        title="EAGLE speculative sizes given only in part",
        category="spec-decoding-args",
        root_cause=(
            "--speculative-num-steps was not given, so SGLang chooses the number of steps, the top-k and the "
            "number of draft tokens itself, and asserts that neither `--speculative-eagle-topk` nor "
            "`--speculative-num-draft-tokens` was given. They must be given all together or not at all."
        ),
        fix=Fix(
            summary="Give all three speculative sizes: add --speculative-num-steps 15.",
            flags=(FlagOp("add", "--speculative-num-steps", "15"),),
            command=f"{COMMAND} --speculative-num-steps 15",
            alternatives=(
                Fix(
                    summary="Or drop the size flags and let SGLang choose.",
                    flags=(
                        FlagOp("remove", "--speculative-eagle-topk"),
                        FlagOp("remove", "--speculative-num-draft-tokens"),
                    ),
                    command="python -m sglang.launch_server --model-path /models/llama --speculative-algorithm EAGLE3 "
                    "--speculative-draft-model-path /models/draft",
                ),
            ),
        ),
        engine="sglang",
        engine_version="0.5.9",
    )


def single_failure() -> Report:
    failure = Failure(
        kind="traceback",
        exceptions=(ExceptionBlock("AssertionError", "", _launch_frames()),),
        line=12,
        offset=900,
        end_offset=2100,
        meta=LineMeta(timestamp="2026-11-20 10:01:02"),
    )
    group = FailureGroup(
        "a1", failure, 1, diagnosis=_spec_diagnosis(), sources=("server.log",), signature="AssertionError"
    )
    return Report(
        sources=(SourceInfo("server.log", 4096, 4096),),
        failures=(group,),
        launch=LaunchInfo("sglang", "0.5.9", "log", command=COMMAND),
    )


def chained() -> Report:
    first = ExceptionBlock(
        "torch.OutOfMemoryError",
        "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB",
        (
            Frame(
                f"{SGLANG}/model_executor/cuda_graph_runner.py",
                390,
                "capture",
                "self.capture_one_batch_size(bs)",
                in_app=True,
            ),
            Frame(f"{TORCH}/cuda/graphs.py", 184, "__exit__", "self.cuda_graph.capture_end()"),
            Frame(
                f"{TORCH}/nn/modules/module.py", 1751, "_wrapped_call_impl", "return self._call_impl(*args)"
            ),
        ),
        relation="cause",
    )
    second = ExceptionBlock(
        "Exception",
        "Capture cuda graph failed: CUDA out of memory.\nPossible solutions:\n1. set --mem-fraction-static to a "
        "smaller value (e.g., 0.8 or 0.7)\n2. set --cuda-graph-max-bs to a smaller value (e.g., 16)",
        (
            Frame(
                f"{SGLANG}/managers/scheduler.py",
                2400,
                "run_scheduler_process",
                "scheduler = Scheduler(...)",
                in_app=True,
            ),
            Frame(
                f"{SGLANG}/model_executor/cuda_graph_runner.py",
                392,
                "__init__",
                "raise Exception(f'Capture cuda graph failed: {e}')",
                in_app=True,
            ),
        ),
    )
    failure = Failure(
        "traceback",
        (first, second),
        40,
        5000,
        9000,
        meta=LineMeta(timestamp="2026-11-20 10:05:00", ranks=(("TP", 0),)),
        header="Scheduler hit an exception:",
    )
    diagnosis = Diagnosis(
        pattern="sglang-cuda-graph-oom",
        title="Out of GPU memory while capturing CUDA graphs",
        category="gpu-memory",
        root_cause="CUDA graph capture needs memory beyond the static pool. Lower --mem-fraction-static or "
        "--cuda-graph-max-bs.",
        fix=Fix(
            summary="Leave more memory for CUDA graphs.",
            flags=(FlagOp("set", "--mem-fraction-static", "0.8"),),
        ),
    )
    group = FailureGroup(
        "c1",
        failure,
        1,
        ranks=("TP0",),
        diagnosis=diagnosis,
        sources=("server.log",),
        cascade=("Received sigquit from a child process. It usually means the child failed.",),
    )
    return Report((SourceInfo("server.log", 9000, 9000),), (group,), LaunchInfo("sglang", "0.5.9"))


def multi_rank() -> Report:
    block = ExceptionBlock(
        "torch.distributed.DistBackendError",
        "NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:268, unhandled cuda error",
        (
            Frame(
                f"{SGLANG}/distributed/parallel_state.py",
                1100,
                "init_model_parallel_group",
                "return GroupCoordinator(",
                in_app=True,
            ),
            Frame(f"{TORCH}/distributed/c10d_logger.py", 81, "wrapper", "return func(*args, **kwargs)"),
            Frame(
                f"{TORCH}/distributed/distributed_c10d.py", 4502, "barrier", "work = group.barrier(opts=opts)"
            ),
        ),
    )
    failure = Failure(
        "traceback",
        (block,),
        100,
        10000,
        12000,
        meta=LineMeta(timestamp="2026-11-20 11:00:00", ranks=(("TP", 0),)),
        header="Scheduler hit an exception:",
    )
    group = FailureGroup(
        "m1",
        failure,
        8,
        ranks=tuple(f"TP{i}" for i in range(8)),
        sources=("server.log",),
        cascade=("Received sigquit from a child process. It usually means the child failed.", "Killed"),
        signature="torch.distributed.DistBackendError: NCCL error in: <path>:N, unhandled cuda error",
    )
    return Report((SourceInfo("server.log", 12000, 12000),), (group,), LaunchInfo("sglang", "0.5.9"))


def unknown_failure() -> Report:
    block = ExceptionBlock(
        "ValueError",
        "Unsupported rope_scaling type: 'yarn2'",
        (
            Frame("/home/dev/app/serve.py", 14, "main", "engine = build_engine(cfg)", in_app=True),
            Frame(
                f"{SGLANG}/configs/model_config.py",
                210,
                "__init__",
                "self._verify_rope_scaling()",
                in_app=True,
            ),
            Frame(
                "/usr/local/lib/python3.11/dist-packages/transformers/configuration_utils.py",
                600,
                "_rope_scaling_validation",
                "raise ValueError(msg)",
            ),
        ),
    )
    failure = Failure(
        "traceback",
        (block,),
        7,
        300,
        900,
        context=("Loading model config from /models/custom", "Warning: unknown key rope_scaling.type"),
    )
    group = FailureGroup(
        "u1", failure, 1, sources=("serve.log",), signature="ValueError: Unsupported rope_scaling type: <str>"
    )
    return Report((SourceInfo("serve.log", 900, 900),), (group,), LaunchInfo("sglang", None))


def general_failure() -> Report:
    """No pattern or rule names it: the honest category and its general checks (basis "general"), and the
    engine's own instruction with what logsleuth checked of it."""
    block = ExceptionBlock(
        "NameError",
        "name 'flashinfer_allreduce' is not defined",
        (
            Frame(f"{SGLANG}/managers/scheduler.py", 2400, "run_scheduler_process", "scheduler = Scheduler(...)", in_app=True),
            Frame(f"{SGLANG}/layers/communicator.py", 88, "__init__", "self.fused = flashinfer_allreduce", in_app=True),
        ),
    )
    failure = Failure("traceback", (block,), 30, 2000, 2600, header="Scheduler hit an exception:")
    diagnosis = Diagnosis(
        pattern="general-engine-bug",
        title="Looks like a bug in sglang 0.5.9",
        category="engine-bug",
        root_cause="A NameError raised inside SGLang's own code (sglang/srt/layers/communicator.py): no setting "
        "explains it; it looks like a bug in this release.",
        fix=Fix(
            summary="Check whether a newer release fixed it.",
            steps=(
                "Try a newer release of SGLang.",
                "Search the SGLang issues for the text below.",
                "A minimal report needs the launch command, the release, the GPU and the traceback.",
            ),
        ),
        engine="sglang",
        engine_version="0.5.9",
        basis="general",
        engine_says=(
            EngineWords("Please enable --enable-flashinfer-allreduce-fusion", ("a flag of SGLang 0.5.9",)),
        ),
    )
    group = FailureGroup(
        "g1", failure, 1, diagnosis=diagnosis, sources=("server.log",),
        signature="NameError: name 'flashinfer_allreduce' is not defined",
    )
    return Report((SourceInfo("server.log", 2600, 2600),), (group,), LaunchInfo("sglang", "0.5.9"))


def rule_failure() -> Report:
    """A rule reasoned from facts (basis "rule"): the facts it used are shown with it."""
    block = ExceptionBlock("ValueError", "Bfloat16 is only supported on GPUs with compute capability of at least 8.0.")
    failure = Failure("traceback", (block,), 5, 100, 300)
    diagnosis = Diagnosis(
        pattern="rule-gpu-dtype",
        title="The GPU cannot run bfloat16",
        category="gpu-arch-unsupported",
        root_cause="bfloat16 needs compute capability 8.0; the Tesla T4 in the log has 7.5.",
        fix=Fix(summary="Run in float16.", flags=(FlagOp("add", "--dtype", "float16"),), command=f"{COMMAND} --dtype float16"),
        basis="rule",
        evidence=("The log shows a Tesla T4 (compute capability 7.5).", "bfloat16 needs compute capability 8.0."),
    )
    group = FailureGroup("r1", failure, 1, diagnosis=diagnosis, sources=("server.log",), signature="ValueError: Bfloat16")
    return Report((SourceInfo("server.log", 300, 300),), (group,), LaunchInfo("sglang", "0.5.9", "log", command=COMMAND))


def several_hosts() -> Report:
    oom = chained().failures[0]
    nccl = multi_rank().failures[0]
    oom = FailureGroup(
        oom.fingerprint,
        oom.failure,
        2,
        ranks=("TP0", "TP1"),
        hosts=("gpu-node-1", "gpu-node-2"),
        sources=("gpu-node-1:/var/log/sglang.log", "gpu-node-2:/var/log/sglang.log"),
        cascade=oom.cascade,
        diagnosis=oom.diagnosis,
        signature="Exception: Capture cuda graph failed",
    )
    nccl = FailureGroup(
        nccl.fingerprint,
        nccl.failure,
        6,
        ranks=tuple(f"TP{i}" for i in range(2, 8)),
        hosts=("gpu-node-3", "gpu-node-4"),
        sources=("gpu-node-3:/var/log/sglang.log", "gpu-node-4:/var/log/sglang.log"),
        cascade=nccl.cascade,
        signature=nccl.signature,
    )
    sources = tuple(SourceInfo(f"gpu-node-{i}:/var/log/sglang.log", 20000, 20000) for i in range(1, 5))
    return Report(
        sources,
        (oom, nccl),
        LaunchInfo("sglang", "0.5.9"),
        warnings=("pattern file ~/.config/logsleuth/patterns/x.toml:3: unknown key 'titel'",),
    )


def no_failure() -> Report:
    return Report((SourceInfo("server.log", 2048, 2048),), ())


CASES = {
    "single_failure": single_failure,
    "chained": chained,
    "multi_rank": multi_rank,
    "unknown_failure": unknown_failure,
    "several_hosts": several_hosts,
    "no_failure": no_failure,
    "general_failure": general_failure,
    "rule_failure": rule_failure,
}
