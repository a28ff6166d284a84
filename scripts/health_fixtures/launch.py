"""A fixture's launch: the command a script ran, and the `server_args=` line SGLang logs for it.

The `server_args=` body lists every field at its default with the launch's flags applied.  The defaults
come from logsleuth's flag catalogs (logsleuth/fixes/catalogs/sglang-<version>.json, dumped from each
version's real argparse parser by scripts/oracle/dump_flags.py), so the dump has that version's fields.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from scripts.health_fixtures.wordings import is_04

CATALOGS = Path(__file__).resolve().parents[2] / "logsleuth" / "fixes" / "catalogs"

# argparse destinations whose ServerArgs field has another name (SGLang v0.4.10.post2 and v0.5.9
# srt/server_args.py:ServerArgs.from_cli_args copies `tensor_parallel_size` into `tp_size`, and so on).
_FIELD_NAMES = {
    "tensor_parallel_size": "tp_size",
    "data_parallel_size": "dp_size",
    "pipeline_parallel_size": "pp_size",
    "expert_parallel_size": "ep_size",
}
_NOT_FIELDS = frozenset({"config", "help", "version"})


@dataclass(frozen=True, slots=True)
class Launch:
    """What a fixture server runs: the target, the draft (speculative decoding) and other flags."""

    model: str
    model_class: str
    draft: str | None = None
    draft_class: str | None = None
    algorithm: str | None = None  # --speculative-algorithm
    tp: int = 1
    cuda_graph_max_bs: int | None = None
    # Further flags, as (flag, ServerArgs field, value); value None for a store_true flag (field True).
    flags: tuple[tuple[str, str, Any], ...] = field(default_factory=tuple)

    @property
    def speculative(self) -> bool:
        return self.algorithm is not None


SPECULATIVE_STEPS = (("--speculative-num-steps", "speculative_num_steps", 3),
                     ("--speculative-eagle-topk", "speculative_eagle_topk", 1),
                     ("--speculative-num-draft-tokens", "speculative_num_draft_tokens", 4))
NUM_DRAFT_TOKENS = 4
PORT = 30000


def _flag_items(launch: Launch) -> list[tuple[str, str, Any]]:
    items: list[tuple[str, str, Any]] = [("--model-path", "model_path", launch.model)]
    if launch.tp > 1:
        items.append(("--tp-size", "tp_size", launch.tp))
    if launch.speculative:
        items += [("--speculative-algorithm", "speculative_algorithm", launch.algorithm),
                  ("--speculative-draft-model-path", "speculative_draft_model_path", launch.draft),
                  *SPECULATIVE_STEPS]
    if launch.cuda_graph_max_bs is not None:
        items.append(("--cuda-graph-max-bs", "cuda_graph_max_bs", launch.cuda_graph_max_bs))
    items += list(launch.flags)
    items += [("--host", "host", "0.0.0.0"), ("--port", "port", PORT)]
    return items


def command_line(version: str, launch: Launch) -> str:
    """`+ python -m sglang.launch_server …` as `bash -x` shows it; 0.5.23 recommends `sglang serve`
    (SGLang v0.5.23 sglang/launch_server.py warns that `python -m sglang.launch_server` is the old entrypoint)."""
    program = "sglang serve" if version == "0.5.23" else "python -m sglang.launch_server"
    words = [program]
    for flag, _name, value in _flag_items(launch):
        words.append(flag if value is None else f"{flag} {value}")
    return "+ " + " ".join(words)


def server_args_line(version: str, launch: Launch) -> str:
    """`server_args=ServerArgs(...)` (SGLang v0.4.10.post2 and v0.5.9 srt/entrypoints/engine.py:
    _launch_subprocesses, `logger.info(f"{server_args=}")`); 0.5.23 logs a plain dict
    (v0.5.23 srt/entrypoints/engine.py: `server_args={_server_args_for_logging(server_args)}`, resolved_dict())."""
    values = dict(_defaults(version))
    values["tokenizer_path"] = launch.model  # ServerArgs.__post_init__ fills these from the model path
    values["served_model_name"] = launch.model
    for _flag, name, value in _flag_items(launch):
        values[name] = True if value is None else value
    if version == "0.5.23":
        return "server_args={" + ", ".join(f"{name!r}: {value!r}" for name, value in values.items()) + "}"
    return "server_args=ServerArgs(" + ", ".join(f"{name}={value!r}" for name, value in values.items()) + ")"


@cache
def _defaults(version: str) -> tuple[tuple[str, Any], ...]:
    catalog = json.loads((CATALOGS / f"sglang-{version}.json").read_text(encoding="utf-8"))
    fields: dict[str, Any] = {}
    for flag in catalog["flags"]:
        name = _FIELD_NAMES.get(flag["dest"], flag["dest"])
        if name not in _NOT_FIELDS and name not in fields:
            fields[name] = flag["default"]
    return tuple(fields.items())


def args_note_prefixed(version: str) -> bool:
    """Whether a warning ServerArgs prints while it is built carries SGLang's `[time] ` header.

    Before 0.5.23 the logger is configured after ServerArgs is built, so its warnings go through Python's
    last-resort handler as bare text; 0.5.23 configures it first (seen in the oracle runs, e.g.
    tests/fixtures/sglang/0.5.9/eagle3_only_steps.log against tests/fixtures/sglang/0.5.23/)."""
    return not is_04(version) and version != "0.5.9"
