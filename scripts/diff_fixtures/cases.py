"""The launches `make_diff_fixtures.py` runs on the real SGLang, and the fixture files made of them.

A launch is data: its version, the environment its launch script sets, its flags (`{tiny_llama}` is the oracle's
config-only model), and how long each stage took.  Whether SGLang accepts the flags is not data: the real engine
decides, and a launch it refuses is written with its real traceback instead of the stage lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Seconds from the server_args line to each stage's first line, as a healthy 0.5.x launch of a small model on
# one GPU logs them; `stage_seconds` overrides some of them per launch.
STAGE_SECONDS: dict[str, int] = {
    "distributed": 2, "weights": 3, "weights-loaded": 44, "kv-cache": 46, "memory-pool": 47, "cuda-graph": 48,
    "cuda-graph-done": 74, "scheduler": 75, "http": 77, "ready": 83,
}


@dataclass(frozen=True)
class Launch:
    version: str
    args: tuple[str, ...]
    start: str  # the wall-clock time of its first line, "2026-05-04 10:00:00"
    env_prefix: tuple[str, ...] = ()  # NAME=value words before `python` on the command line
    exports: tuple[str, ...] = ()  # NAME=value exported by the launch script first (`+ export …` under bash -x)
    stage_seconds: dict[str, int] = field(default_factory=dict)
    pid: int = 4242


# --random-seed: SGLang draws one when it is not given, and the dump (so the fixture) would change every run.
BASE_ARGS = ("--model-path", "{tiny_llama}", "--schedule-policy", "lpm", "--host", "127.0.0.1", "--port", "30000",
             "--random-seed", "42")

LAUNCHES: dict[str, Launch] = {
    # The Done-when pair: 0.5.9, then 0.5.23 with one flag changed and one variable added.
    "good-0.5.9": Launch("0.5.9", (*BASE_ARGS, "--max-running-requests", "64"), "2026-05-04 10:00:00",
                         env_prefix=("HF_HUB_OFFLINE=1",)),
    "bad-0.5.23": Launch("0.5.23", (*BASE_ARGS, "--max-running-requests", "128"), "2026-05-05 09:30:00",
                         env_prefix=("HF_HUB_OFFLINE=1",), exports=("NCCL_DEBUG=INFO",)),
    # The good launch again, a day later: the same flags, stage times a few seconds apart.
    "good-0.5.9-again": Launch("0.5.9", (*BASE_ARGS, "--max-running-requests", "64"), "2026-05-06 08:15:00",
                               env_prefix=("HF_HUB_OFFLINE=1",), stage_seconds={"weights-loaded": 47, "ready": 86},
                               pid=5151),
    # A field 0.5.23 renamed: hierarchical_sparse_attention_extra_config is hisparse_config there.
    "rename-0.5.9": Launch("0.5.9", (*BASE_ARGS, "--hierarchical-sparse-attention-extra-config", '{"top_k": 2048}'),
                           "2026-05-07 11:00:00"),
    "rename-0.5.23": Launch("0.5.23", (*BASE_ARGS, "--hisparse-config", '{"top_k": 2048}'), "2026-05-08 11:00:00"),
    # A relaunch that dies: --context-length above the model's 4096 (SGLang refuses it in its own validation).
    "long-context-0.5.23": Launch("0.5.23", (*BASE_ARGS, "--max-running-requests", "64", "--context-length", "131072"),
                                  "2026-05-05 10:10:00", env_prefix=("HF_HUB_OFFLINE=1",)),
    # Secrets on the command line and in the environment (they must never reach a report).
    "secret-good-0.5.9": Launch("0.5.9", (*BASE_ARGS, "--api-key", "sk-live-PLANTEDgoodKEY0123456789"),
                                "2026-05-09 12:00:00", env_prefix=("HF_TOKEN=hf_PLANTEDgoodTOKENabcdefghijklmnop",)),
    "secret-bad-0.5.9": Launch("0.5.9", (*BASE_ARGS, "--api-key", "sk-live-PLANTEDbadKEY98765432100"),
                               "2026-05-09 13:00:00", env_prefix=("HF_TOKEN=hf_PLANTEDbadTOKENzyxwvutsrqponmlk",),
                               exports=("WANDB_API_KEY=PLANTEDwandbKEY4242424242",)),
    # Three launches of one server appended to one log (`--launch N`): the last one slower to load its weights
    # and then killed by the context length it was given.
    "relaunch-1": Launch("0.5.9", (*BASE_ARGS, "--max-running-requests", "64"), "2026-05-10 07:00:00", pid=1001),
    "relaunch-2": Launch("0.5.9", (*BASE_ARGS, "--max-running-requests", "64"), "2026-05-10 08:00:00", pid=1002,
                         stage_seconds={"weights-loaded": 190, "kv-cache": 192, "memory-pool": 193, "cuda-graph": 194,
                                        "cuda-graph-done": 220, "scheduler": 221, "http": 223, "ready": 229}),
    "relaunch-3": Launch("0.5.9", (*BASE_ARGS, "--max-running-requests", "64", "--context-length", "131072"),
                         "2026-05-10 09:00:00", pid=1003),
}

# fixture file -> the launches written into it, in order
FILES: dict[str, tuple[str, ...]] = {
    "good-0.5.9.log": ("good-0.5.9",),
    "bad-0.5.23.log": ("bad-0.5.23",),
    "good-0.5.9-again.log": ("good-0.5.9-again",),
    "rename-0.5.9.log": ("rename-0.5.9",),
    "rename-0.5.23.log": ("rename-0.5.23",),
    "long-context-0.5.23.log": ("long-context-0.5.23",),
    "secret-good-0.5.9.log": ("secret-good-0.5.9",),
    "secret-bad-0.5.9.log": ("secret-bad-0.5.9",),
    "relaunch.log": ("relaunch-1", "relaunch-2", "relaunch-3"),
}
