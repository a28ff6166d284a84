"""An embedding model's checkpoint loaded as a text generator (issue 28, stop 43's serving sweep).

Embedding models built on a decoder (Qwen3-Embedding, gte-Qwen, e5-mistral) are saved as the bare base model: their
tensors are named `embed_tokens.weight`, `layers.0.…`, `norm.weight`, without the `model.` prefix a `…ForCausalLM`
class keeps them under.  When vLLM builds the generative class from config.json's architecture (its default task or
runner is generation), its AutoWeightsLoader meets the first top-level name it does not have and raises
"There is no module or parameter named 'embed_tokens' in Qwen3ForCausalLM" (vllm/model_executor/models/utils.py
_load_module).  Served as a pooling model, vLLM wraps the class and maps those names; that is the fix the threads
confirmed: gpustack/gpustack#2170 (vLLM 0.8.5, `--task embed`), vllm-project/vllm#21614 (0.10.0, 'layers',
`--task embed`), vllm-project/vllm-ascend#2556 (0.10.0, CustomQwen3ForCausalLM).

The flag is the release's: `--task embed` up to vLLM 0.12 (deprecated from 0.10.1), `--runner pooling` from 0.10.1
(`--convert embed` names the conversion), read from the release's catalog; an unknown release gets both, with the
releases that have each.  Other names (`lm_head`, `score`, a LoRA matrix, `_orig_mod`) are other causes and stay out."""

from __future__ import annotations

from logsleuth.fixes import catalog as catalogs
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, Fix, LaunchInfo
from logsleuth.reasoning.catalog_flags import setting_fix
from logsleuth.reasoning.evidence import Evidence

RULE_ID = "rule-embedding-checkpoint-as-generator"
# The base model's own top-level modules, named without the causal-LM class's `model.` prefix (a name the class
# does have under `model.`); a vendor's subclass (vllm-ascend's CustomQwen3ForCausalLM) ends the same way.
_BARE_BASE_TENSOR = compile_lazily(
    r"^ValueError: There is no module or parameter named '(?P<name>embed_tokens|layers|norm)(?:\.[\w.]*)?' "
    r"in (?P<model>\w*ForCausalLM)\b"
)
# The launch already asks for a pooling model: vLLM's --task embed/embedding (reward, classify, score), --runner
# pooling, LLM(task="embed"), a server_args dump's task='embed' / runner='pooling'.
_POOLING_ALREADY = compile_lazily(
    r"(?:--task[= ]|\btask=)['\"]?(?:embed|embedding|reward|classify|score)\b|(?:--runner[= ]|\brunner=)['\"]?pooling\b"
)
SOURCES = (
    "vllm/model_executor/models/utils.py AutoWeightsLoader._load_module: 'There is no module or parameter named "
    "{prefix} in {type(module).__name__}' (facts/raise_sites-vllm.zip)",
    "vLLM's catalogs (fixes/catalogs): --task (0.6.4 to 0.12.0; 'embed' among its choices from 0.10.0's catalog, "
    "listed by 0.8.5's own startup line), --runner pooling and --convert embed (0.10.1 and later)",
    "gpustack/gpustack#2170, vllm-project/vllm#21614, vllm-project/vllm-ascend#2556: Qwen3-Embedding served with "
    "the default task; served with --task embed it loads",
)


def embedding_checkpoint(evidence: Evidence) -> Diagnosis | None:
    found = evidence.first_match(_BARE_BASE_TENSOR)
    launch = evidence.launch
    if found is None or launch.engine not in ("vllm", None):
        return None
    model = found["model"]
    if _POOLING_ALREADY.search(_launch_text(launch)):
        return _loader_of_release(evidence, found["name"], model)
    cause = (f"The checkpoint holds a bare base model's tensors ('{found['name']}' with no 'model.' prefix), as "
             "embedding models built on a decoder (Qwen3-Embedding, gte-Qwen) are saved, and vLLM built the text "
             f"generator {model} for it: it served the model with its default task, generation. Served as a pooling "
             "(embedding) model, vLLM maps these names and the weights load.")
    fix = _pooling_fix(evidence)
    return Diagnosis(
        pattern=RULE_ID, title="An embedding model's checkpoint was loaded as a text generator",
        category="weight-loading", root_cause=cause, fix=fix, references=SOURCES, engine=launch.engine or "vllm",
        engine_version=launch.engine_version, basis="rule",
        evidence=(f"the tensor {model} does not have: {found['name']} (a base model's name, without 'model.')",),
    )


def _pooling_fix(evidence: Evidence) -> Fix:
    """The release's own way to serve a pooling model; both ways, with their releases, when the release is unknown."""
    launch = evidence.launch
    steps = ("a generative checkpoint (a chat or base model) is no embedding model: serve it so only if it was "
             "trained for embeddings (its model card, a sentence-transformers config in its repository)",
             "the embeddings are then served at /v1/embeddings; chat and completion requests are refused")
    catalog = catalogs.load("vllm", launch.engine_version) if launch.engine_version else None
    if catalog is not None:
        runner, convert, task = catalog.find("--runner"), catalog.find("--convert"), catalog.find("--task")
        if runner is not None and (not runner.choices_known or "pooling" in runner.choices):
            sets: tuple[tuple[str, str], ...] = (("--runner", "pooling"),)
            if convert is not None and (not convert.choices_known or "embed" in convert.choices):
                sets += (("--convert", "embed"),)
            spelled = " ".join(f"{flag} {value}" for flag, value in sets)
            summary = f"Serve it as an embedding model: set {spelled}."
            return setting_fix(evidence.failure, launch, summary, sets, steps) or Fix(summary=summary, steps=steps)
        if task is not None and task.choices_known and "embed" in task.choices:
            summary = "Serve it as an embedding model: set --task embed."
            return (setting_fix(evidence.failure, launch, summary, (("--task", "embed"),), steps)
                    or Fix(summary=summary, steps=steps))
        if task is not None:
            summary = ("Serve it as an embedding model: set --task to the embedding task this release lists "
                       "('embed' in vLLM 0.8.5, whose startup line lists the model's tasks).")
            return Fix(summary=summary, steps=steps)
        return Fix(summary=(f"This vLLM release ({launch.engine_version}) has no --task or --runner to serve a "
                            "decoder as an embedding model: a release that has them is needed."), steps=steps)
    # The report names each flag's releases after the summary (the catalogs' ranges).
    summary = "Serve it as an embedding model, with the flag your vLLM release has: --runner pooling or --task embed."
    return Fix(summary=summary, steps=steps,
               needs_input=("the vLLM version: it decides which of the two flags exists",))


def _launch_text(launch: LaunchInfo) -> str:
    """The launch's command and its settings dump, where a pooling task or runner would show."""
    return " ".join((launch.command or "", *(f"{name}={value}" for name, value in launch.server_args)))


def _loader_of_release(evidence: Evidence, name: str, model: str) -> Diagnosis:
    """The launch already serves a pooling model and the names still did not map: the release's own loader, which
    a later vLLM fixed for Qwen3-Embedding (vllm-project/vllm#19250, as gpustack/gpustack#2170 reports); no flag."""
    launch = evidence.launch
    return Diagnosis(
        pattern=RULE_ID, title="vLLM's embedding loader did not map this checkpoint's tensor names",
        category="weight-loading",
        root_cause=(f"The launch already serves a pooling (embedding) model, and this vLLM release still built "
                    f"{model} and looked up the base model's '{name}' without its 'model.' prefix: the release's "
                    "loader does not map this checkpoint's names. vLLM fixed this for Qwen3-Embedding after the "
                    "report in vllm-project/vllm#19250."),
        fix=Fix(summary="Use a newer vLLM release whose embedding loader reads this checkpoint; no flag of this "
                        "release changes the names it looks up.",
                needs_input=("the vLLM version in use",) if launch.engine_version is None else ()),
        references=SOURCES, engine=launch.engine or "vllm", engine_version=launch.engine_version, basis="rule",
        evidence=(f"the launch asks for a pooling model and {model} still has no '{name}'",),
    )
