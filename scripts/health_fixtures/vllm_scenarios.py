"""The vLLM health fixtures as data: one `Scenario` per story, on the releases where it happens.

Like scenarios.py (SGLang): each names the vLLM health pattern ids its log must trigger (none for healthy
logs and near misses) and, for a speculative acceptance near 1.0, which cause must be ranked first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scripts.health_fixtures import vllm_wordings as say
from scripts.health_fixtures.vllm_run import Launch, Note, Phase

ACCEPT = "vllm-health-accept-length-near-one"
PREEMPTION = "vllm-health-preemption-storm"
QUEUE = "vllm-health-queue-growth"
COLLAPSE = "vllm-health-throughput-collapse"
CUDA_GRAPH = "vllm-health-cuda-graph-disabled"
PRECISION = "vllm-health-precision-fallback"
PATTERN_IDS = (ACCEPT, PREEMPTION, QUEUE, COLLAPSE, CUDA_GRAPH, PRECISION)

WRONG_METHOD = "wrong-speculative-method"
NGRAM = "ngram-without-repetition"
OTHER_MODEL = "draft-for-another-model"
TRAFFIC = "traffic-changed"
CAUSE_IDS = (WRONG_METHOD, NGRAM, OTHER_MODEL, TRAFFIC)

ALL = say.RELEASES
V1_NEW = ("0.11.2", "0.33.0")
WITH_PREEMPTION_LOG = ("0.6.6.post1", *say.WITH_PREEMPTIONS)  # 0.8.5 logs no preemption at all

LLAMA = "/models/Meta-Llama-3.1-8B-Instruct"
QWEN = "/models/Qwen2.5-7B-Instruct"
EAGLE3_DRAFT = "/models/EAGLE3-LLaMA3.1-Instruct-8B"
SMALL_DRAFT = "/models/Llama-3.2-1B-Instruct"  # a V0 draft model (--speculative-model)

PLAIN = Launch(LLAMA)
PLAIN_TP2 = Launch(LLAMA, tp=2)


def _spec(release: str, model: str = LLAMA, method: str = "eagle3") -> Launch:
    if say.is_v0(release):
        return Launch(model, "draft_model", SMALL_DRAFT)
    return Launch(model, method, EAGLE3_DRAFT)


def _per_release(make: object) -> dict[str, Launch]:
    return {release: make(release) for release in ALL}  # type: ignore[operator]


_HALF = Launch(LLAMA, flags=("--dtype", "half"))
_FP8_KV = Launch(LLAMA, flags=("--kv-cache-dtype", "fp8"))
_CAST = (Note("start", say.casting("bfloat16", "float16"), "casting"),)

RUN = 120  # stats lines of a one-phase run (V1: 20 minutes, V0: 10)


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    description: str
    versions: tuple[str, ...]
    launch: Launch | Mapping[str, Launch]
    phases: tuple[Phase, ...]
    patterns: tuple[str, ...] = ()
    first_cause: str | None = None
    notes: Mapping[str, tuple[Note, ...]] | tuple[Note, ...] = ()  # for every release, or per release

    def launch_for(self, release: str) -> Launch:
        return self.launch if isinstance(self.launch, Launch) else self.launch[release]

    def notes_for(self, release: str) -> tuple[Note, ...]:
        return self.notes if isinstance(self.notes, tuple) else self.notes.get(release, ())


def _steady(**phase: object) -> tuple[Phase, ...]:
    return (Phase(RUN, **phase),)  # type: ignore[arg-type]


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("healthy", "no speculative decoding, steady load, nothing wrong", ALL, PLAIN, _steady()),
    Scenario("healthy-spec", "a draft trained for the target (V1: EAGLE-3, V0: a small draft model): mean "
             "acceptance length ~2.9", ALL, _per_release(_spec), _steady(accept=2.9)),
    Scenario("accept-near-one", "a Llama-3.1 draft in front of a Qwen2.5 target: mean acceptance length ~1.01 "
             "from the start", ALL, _per_release(lambda release: _spec(release, QWEN)), _steady(accept=1.0),
             (ACCEPT,), OTHER_MODEL),
    Scenario("eagle3-draft-with-eagle", "an EAGLE-3 draft (`eagle3` in its path) served with "
             "--speculative-config method `eagle`: mean acceptance length ~1.01", V1_NEW,
             Launch(LLAMA, "eagle", EAGLE3_DRAFT), _steady(accept=1.0), (ACCEPT,), WRONG_METHOD),
    Scenario("ngram-near-one", "n-gram speculation (method `ngram`) on chat traffic whose outputs do not repeat "
             "the prompt: mean acceptance length ~1.02", ("0.11.2",), Launch(LLAMA, "ngram", None),
             _steady(accept=1.02), (ACCEPT,), NGRAM),
    Scenario("accept-drop", "mean acceptance length ~2.9, then ~1.0 at the same load from the middle of the "
             "run (generation throughput falls with it)", V1_NEW, _spec("0.11.2"),
             (Phase(RUN // 2, running=(32, 32), accept=2.9), Phase(RUN // 2, running=(32, 32), accept=1.0)),
             (ACCEPT,), TRAFFIC),
    Scenario("preemption-storm", "the KV cache runs full (~99 %): requests are preempted every interval for "
             "~7 minutes (V0: the scheduler's warning every 50th; V1: `Preemptions` in the stats lines)",
             WITH_PREEMPTION_LOG, PLAIN_TP2,
             (Phase(30, running=(40, 56)), Phase(40, running=(60, 60), queue=(4, 8), speed=(0.85, 0.85),
                                                 usage=(0.98, 0.995), preemptions=(12, 40)),
              Phase(50, running=(44, 44))), (PREEMPTION,)),
    Scenario("queue-growth", "arrivals outpace the server: Waiting climbs 0 -> ~400 while the generation "
             "throughput sags at the same Running", ALL, PLAIN_TP2,
             (Phase(20, running=(48, 48)), Phase(100, running=(48, 48), queue=(0, 400), speed=(1.0, 0.75))), (QUEUE,)),
    Scenario("throughput-collapse", "closed-loop load (48 clients, nothing waiting): generation throughput falls "
             "to ~20 % of the first minutes at the same Running", ALL, PLAIN,
             (Phase(40, running=(48, 48)), Phase(RUN - 40, running=(48, 48), speed=(0.2, 0.2))), (COLLAPSE,)),
    Scenario("cuda-graph-disabled", "--enforce-eager left in the launch: every decode step runs without CUDA "
             "graphs", ALL, Launch(LLAMA, enforce_eager=True), _steady(speed=(0.5, 0.5)), (CUDA_GRAPH,)),
    Scenario("precision-fallback", "a bf16 checkpoint served with --dtype half (cast to fp16), or an fp8 KV "
             "cache whose checkpoint has no k/v scales (scale 1.0)", ("0.6.6.post1", *V1_NEW),
             {"0.6.6.post1": _HALF, "0.11.2": _FP8_KV, "0.33.0": _HALF}, _steady(), (PRECISION,),
             notes={"0.6.6.post1": _CAST, "0.11.2": (Note("start", say.fp8_kv_cache("0.11.2"), "fp8_kv", "INFO"),
                                                     Note("load", say.KV_SCALE_ONE, "kv_scale")),
                    "0.33.0": _CAST}),
    # Near misses: each looks like one problem for a moment and must trigger nothing.
    Scenario("nearmiss-single-preemption", "one short burst preempts a few requests once in a healthy run",
             WITH_PREEMPTION_LOG, PLAIN,
             (Phase(RUN // 2), Phase(1, running=(56, 56), usage=(0.99, 0.99), preemptions=(3, 3)),
              Phase(RUN // 2 - 1))),
    Scenario("nearmiss-queue-bump", "Waiting rises to ~60 for a few minutes and drains", ALL, PLAIN,
             (Phase(40), Phase(15, running=(48, 48), queue=(0, 60)), Phase(15, running=(48, 48), queue=(60, 0)),
              Phase(50))),
    Scenario("nearmiss-accept-hard", "a hard workload for the draft: mean acceptance length ~1.6 throughout",
             ALL, _per_release(_spec), _steady(accept=1.6)),
    Scenario("nearmiss-throughput-fewer-running", "generation throughput falls to ~20 % because Running falls "
             "from 48 to 10 (the load dropped; per-request speed unchanged)", ALL, PLAIN,
             (Phase(40, running=(48, 48)), Phase(RUN - 40, running=(10, 10)))),
    Scenario("nearmiss-cuda-graph-piecewise", "decode context parallelism makes vLLM override full CUDA graphs "
             "to piecewise ones (a warning): graphs stay on", ("0.11.2",), PLAIN, _steady(),
             notes=(Note("start", say.DCP_PIECEWISE, "dcp"),)),
    Scenario("nearmiss-fp8-kv-calibrated", "--kv-cache-dtype fp8 with a checkpoint that has its k/v scales: "
             "vLLM's info line about fp8 KV caches, and no scale warning", V1_NEW, _FP8_KV, _steady(),
             notes={release: (Note("start", say.fp8_kv_cache(release), "fp8_kv", "INFO"),) for release in V1_NEW}),
    Scenario("nearmiss-dtype-upcast", "--dtype float32 on a bf16 checkpoint: a lossless upcast, logged at info",
             ("0.6.6.post1",), Launch(LLAMA, flags=("--dtype", "float32")), _steady(),
             notes=(Note("start", say.upcasting("bfloat16", "float32"), "upcasting", "INFO"),)),
)


def expected(name: str) -> Scenario:
    return next(scenario for scenario in SCENARIOS if scenario.name == name)
