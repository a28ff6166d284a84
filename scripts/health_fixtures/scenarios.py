"""The health fixtures as data: one `Scenario` per story, run on the versions where it happens.

A scenario names the health pattern ids its log must trigger (none for healthy logs and near misses) and,
for a speculative accept length near 1.0, which cause must be ranked first.  Ids are issue 15's contract
(/work/notes/issue15/contract.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scripts.health_fixtures import wordings as say
from scripts.health_fixtures.launch import Launch
from scripts.health_fixtures.run import Note, Phase

ACCEPT = "sglang-health-accept-length-near-one"
KV_FULL = "sglang-health-kv-pool-full-retract"
QUEUE = "sglang-health-queue-growth"
COLLAPSE = "sglang-health-throughput-collapse"
CUDA_GRAPH = "sglang-health-cuda-graph-disabled"
WEIGHTS = "sglang-health-weights-not-initialized"
PRECISION = "sglang-health-precision-fallback"
PATTERN_IDS = (ACCEPT, KV_FULL, QUEUE, COLLAPSE, CUDA_GRAPH, WEIGHTS, PRECISION)

WEIGHTS_NOT_LOADED = "draft-weights-not-loaded"
WRONG_ALGORITHM = "wrong-speculative-algorithm"
OTHER_MODEL = "draft-for-another-model"
TARGET_UPDATED = "target-updated-mid-run"  # the drop follows an in-place weights update of the target
CAUSE_IDS = (WEIGHTS_NOT_LOADED, WRONG_ALGORITHM, OTHER_MODEL, TARGET_UPDATED)

ALL = say.VERSIONS
V05 = ("0.5.9", "0.5.23")
BEFORE_LAYERS0 = ("0.4.10.post2", "0.5.9")  # llama_eagle3.py names the layer `midlayer` and skips `layers.0.*`


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    description: str
    versions: tuple[str, ...]
    launch: Launch | Mapping[str, Launch]  # one launch, or one per version
    phases: tuple[Phase, ...]
    patterns: tuple[str, ...] = ()
    first_cause: str | None = None
    notes: Mapping[str, tuple[Note, ...]] | tuple[Note, ...] = ()  # for every version, or per version

    def launch_for(self, version: str) -> Launch:
        return self.launch if isinstance(self.launch, Launch) else self.launch[version]

    def notes_for(self, version: str) -> tuple[Note, ...]:
        return self.notes if isinstance(self.notes, tuple) else self.notes.get(version, ())


LLAMA = "/models/Meta-Llama-3.1-8B-Instruct"
QWEN = "/models/Qwen2.5-7B-Instruct"
EAGLE3_DRAFT = "/models/EAGLE3-LLaMA3.1-Instruct-8B"  # saved with SGLang's own names (`midlayer.*`)
SPECULATORS_DRAFT = "/models/Llama-3.1-8B-Instruct-speculator.eagle3"  # saved by `speculators` (`layers.0.*`)
EAGLE3 = "LlamaForCausalLMEagle3"

PLAIN = Launch(LLAMA, "LlamaForCausalLM")
PLAIN_TP2 = Launch(LLAMA, "LlamaForCausalLM", tp=2)
SPEC = Launch(LLAMA, "LlamaForCausalLM", EAGLE3_DRAFT, EAGLE3, "EAGLE3")
SPEC_TP2 = Launch(LLAMA, "LlamaForCausalLM", EAGLE3_DRAFT, EAGLE3, "EAGLE3", tp=2)

RUN = 240  # decode lines of a one-phase run (with prefill lines: ~330 batch lines, ~6 minutes)


def _steady(**phase: object) -> tuple[Phase, ...]:
    return (Phase(RUN, **phase),)  # type: ignore[arg-type]


def precision_notes() -> dict[str, tuple[Note, ...]]:
    """0.4.x and 0.5.9 warn about a bf16 checkpoint served as fp16; 0.5.23 only logs that at debug level,
    so there the fallback is the FP8 KV cache without scales."""
    casting = (Note("load", say.CASTING_BF16_TO_FP16),)
    return {"0.4.10.post2": casting, "0.5.9": casting,
            "0.5.23": (Note("load", say.fp8_kv_without_scales("0.5.23")),)}


def _precision_launches() -> dict[str, Launch]:
    fp16 = Launch(LLAMA, "LlamaForCausalLM", flags=(("--dtype", "dtype", "float16"),))
    fp8_kv = Launch(LLAMA, "LlamaForCausalLM", flags=(("--kv-cache-dtype", "kv_cache_dtype", "fp8_e4m3"),))
    return {"0.4.10.post2": fp16, "0.5.9": fp16, "0.5.23": fp8_kv}


# A fine-tune exported with PEFT's prefix: Qwen2's loader finds none of these names and skips them.
UNKNOWN_NAMES = tuple(f"base_model.model.model.layers.{layer}.mlp.down_proj.weight" for layer in range(4))
_LLAMA4 = "/models/Llama-4-Scout-17B-16E-Instruct-ft"
_UNLOADED = ["language_model.model.layers.0.feed_forward.shared_expert.down_proj.weight",
             "language_model.lm_head.weight"]


def weights_notes() -> dict[str, tuple[Note, ...]]:
    skipped = tuple(Note("load", say.parameter_not_found(name)) for name in UNKNOWN_NAMES)
    return {"0.4.10.post2": skipped, "0.5.9": skipped,
            "0.5.23": (Note("load", say.weights_not_initialized(_UNLOADED)),)}


def _weights_launches() -> dict[str, Launch]:
    qwen = Launch("/models/Qwen2.5-7B-Instruct-ft-merged", "Qwen2ForCausalLM")
    llama4 = Launch(_LLAMA4, "Llama4ForConditionalGeneration", tp=2)
    return {"0.4.10.post2": qwen, "0.5.9": qwen, "0.5.23": llama4}


_TORCH_NATIVE = Launch(LLAMA, "LlamaForCausalLM", flags=(("--attention-backend", "attention_backend", "torch_native"),))
_UPDATE = RUN // 2
_UPDATE_NOTES = (Note(f"after:{_UPDATE}", say.update_weights_begin(22.4)),
                 Note(f"after:{_UPDATE}", say.UPDATE_WEIGHTS_END))

SCENARIOS: tuple[Scenario, ...] = (
    Scenario("healthy", "no speculative decoding, steady load, nothing wrong", ALL, PLAIN, _steady()),
    Scenario("healthy-spec", "EAGLE3 draft trained for the target: accept len ~2.9", ALL,
             {"0.4.10.post2": SPEC, "0.5.9": SPEC_TP2, "0.5.23": SPEC_TP2}, _steady(accept=2.9)),
    Scenario("accept-near-one", "EAGLE3 draft saved by `speculators` (`layers.0.*` names) on a version whose "
             "llama_eagle3.py only knows `midlayer.*`: the draft's layer keeps its random init, accept len 1.00",
             BEFORE_LAYERS0, Launch(LLAMA, "LlamaForCausalLM", SPECULATORS_DRAFT, EAGLE3, "EAGLE3"),
             _steady(accept=1.0), (ACCEPT,), WEIGHTS_NOT_LOADED),
    Scenario("accept-drop", "accept len ~2.9, then the target's weights are updated from disk mid-run "
             "(`Update engine weights online from disk`) and the old draft no longer matches: accept len ~1.0 "
             "(throughput falls to about a third: the speculation gain is lost, same load)",
             V05, SPEC, (Phase(_UPDATE, accept=2.9), Phase(RUN - _UPDATE, accept=1.0)), (ACCEPT,), TARGET_UPDATED,
             _UPDATE_NOTES),
    Scenario("eagle3-draft-with-eagle", "an EAGLE3 draft (type=LlamaForCausalLMEagle3) served with "
             "--speculative-algorithm EAGLE: no aux hidden states reach the draft, accept len 1.00",
             V05, Launch(LLAMA, "LlamaForCausalLM", EAGLE3_DRAFT, EAGLE3, "EAGLE"),
             _steady(accept=1.0), (ACCEPT,), WRONG_ALGORITHM),
    Scenario("draft-other-model", "a Llama-3.1 EAGLE3 draft in front of a Qwen2.5 target, on a version that "
             "loads both draft layouts, with the right algorithm: accept len ~1.03",
             ("0.5.23",), Launch(QWEN, "Qwen2ForCausalLM", EAGLE3_DRAFT, EAGLE3, "EAGLE3"),
             _steady(accept=1.03), (ACCEPT,), OTHER_MODEL),
    Scenario("retraction-storm", "the KV pool runs full at ~0.97 usage and the scheduler retracts requests "
             "every third decode line for ~4 minutes (throughput ~85% of before, queue bounded)",
             ALL, PLAIN_TP2,
             (Phase(60, running=(40, 56)), Phase(150, running=(58, 58), queue=(3, 6), speed=(0.85, 0.85),
                                                 usage=(0.96, 0.98), retract_every=3),
              Phase(30, running=(56, 56), queue=(4, 4), speed=(0.85, 0.85), usage=(0.97, 0.97), retract_every=3)),
             (KV_FULL,)),
    Scenario("queue-growth", "arrivals outpace the server: #queue-req climbs 0 -> ~420 while throughput "
             "sags to ~70% at the same #running-req",
             ALL, PLAIN_TP2, (Phase(60, running=(48, 48)),
                              Phase(180, running=(48, 48), queue=(0, 420), speed=(1.0, 0.7))), (QUEUE,)),
    Scenario("throughput-collapse", "closed-loop load (48 clients, queue 0): gen throughput falls to ~20% of "
             "the first minutes at the same #running-req", V05, PLAIN,
             (Phase(100, running=(48, 48)), Phase(RUN - 100, running=(48, 48), speed=(0.2, 0.2))), (COLLAPSE,)),
    Scenario("cuda-graph-disabled", "--attention-backend torch_native: SGLang warns that CUDA graph is "
             "disabled and every decode line says `cuda graph: False`", ALL, _TORCH_NATIVE,
             _steady(cuda_graph=False), (CUDA_GRAPH,), notes=(Note("args", say.CUDA_GRAPH_TORCH_NATIVE),)),
    Scenario("weights-not-initialized", "checkpoint names the loader does not know: skipped parameters "
             "(Qwen2) or weights left at their init (Llama 4)", ALL, _weights_launches(), _steady(), (WEIGHTS,),
             notes=weights_notes()),
    Scenario("precision-fallback", "a bf16 checkpoint cast to fp16, or an FP8 KV cache without scales",
             ALL, _precision_launches(), _steady(), (PRECISION,), notes=precision_notes()),
    # Near misses: each looks like one problem for a moment and must trigger nothing.
    Scenario("nearmiss-single-kv-full", "one retraction in a healthy run", ALL, PLAIN,
             (Phase(RUN // 2), Phase(1, running=(56, 56), usage=(0.97, 0.97), retract_every=1),
              Phase(RUN // 2 - 1))),
    Scenario("nearmiss-queue-bump", "#queue-req rises to ~60 for half a minute and drains", ALL, PLAIN,
             (Phase(100), Phase(20, running=(48, 48), queue=(0, 60)), Phase(20, running=(48, 48), queue=(60, 0)),
              Phase(100))),
    Scenario("nearmiss-accept-hard", "a hard workload for the draft: accept len ~1.6 throughout", V05, SPEC,
             _steady(accept=1.6)),
    Scenario("nearmiss-throughput-fewer-running", "throughput falls to ~20% because #running-req falls from "
             "48 to 10 (the load dropped; per-request speed unchanged)", V05, PLAIN,
             (Phase(100, running=(48, 48)), Phase(RUN - 100, running=(10, 10)))),
    Scenario("nearmiss-dtype-upcast", "--dtype float32 on a bf16 checkpoint: a lossless upcast, logged at info",
             BEFORE_LAYERS0, Launch(LLAMA, "LlamaForCausalLM", flags=(("--dtype", "dtype", "float32"),)), _steady(),
             notes=(Note("load", say.upcasting("bfloat16", "float32")),)),
    Scenario("nearmiss-weights-unused", "a vision tower's pooler in the checkpoint that the model does not use: "
             "transformers says so, and nothing is missing", ALL, PLAIN, _steady(),
             notes=(Note("load", say.weights_not_used("/models/siglip-so400m-patch14-384", "SiglipVisionModel",
                                                      ["vision_model.head.mlp.fc1.weight"])),)),
    Scenario("nearmiss-cuda-graph-large-batch", "--cuda-graph-max-bs 128 and batches of 100-180: `cuda graph: "
             "False` only on the lines above 128", BEFORE_LAYERS0,
             Launch(LLAMA, "LlamaForCausalLM", cuda_graph_max_bs=128), _steady(running=(100, 150))),
)


def expected(name: str) -> Scenario:
    return next(scenario for scenario in SCENARIOS if scenario.name == name)
