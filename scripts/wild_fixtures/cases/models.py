"""The model itself: architectures SGLang does not register (or failed to import), configs transformers
does not know or lays out differently, a context length beyond the model's, and a request-time
TypeError that only looks like a launch-argument failure.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from pattern_fixtures.cases.model_config import CONTEXT_LENGTH_CHECK
from pattern_fixtures.engine import Frame
from pattern_fixtures.mirror import (
    LAUNCH_SERVER,
    SCHEDULE_BATCH,
    SCHEDULER,
    failing_at,
    frame_at,
    scheduler_entry,
    to_load_model,
)

from .. import composed, paste
from ..blocks import crash, imports, launch, module_at, no_grad
from ..corpus import DOCKER, IMAGE, Expect, Install, Run, Text, Weave, WildCase

REGISTRY = "sglang/srt/models/registry.py"
LOADER = "sglang/srt/model_loader/loader.py"
UPGRADE = ((),)

# SGLang ~0.4.5's registered architectures, in its module order
ARCHITECTURES = (
    "BaichuanForCausalLM", "ChatGLMModel", "CLIPModel", "CohereForCausalLM", "Cohere2ForCausalLM", "DbrxForCausalLM", "DeepseekForCausalLM",
    "MultiModalityCausalLM", "DeepseekV3ForCausalLMNextN", "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekVL2ForCausalLM",
    "ExaoneForCausalLM", "GemmaForCausalLM", "Gemma2ForCausalLM", "Gemma2ForSequenceClassification", "Gemma3ForCausalLM",
    "Gemma3ForConditionalGeneration", "GPT2LMHeadModel", "GPTBigCodeForCausalLM", "GraniteForCausalLM", "Grok1ForCausalLM",
    "Grok1ModelForCausalLM", "InternLM2ForCausalLM", "InternLM2ForRewardModel", "InternLM3ForCausalLM", "LlamaForCausalLM",
    "Phi3ForCausalLM", "LlamaForClassification", "LlamaForCausalLMEagle", "LlamaForCausalLMEagle3", "LlamaEmbeddingModel", "MistralModel",
    "LlamaForSequenceClassification", "LlamaForSequenceClassificationWithNormal_Weights", "LlavaLlamaForCausalLM", "LlavaQwenForCausalLM",
    "LlavaMistralForCausalLM", "LlavaVidForCausalLM", "MiniCPMForCausalLM", "MiniCPM3ForCausalLM", "MiniCPMO", "MiniCPMV",
    "MistralForCausalLM", "MixtralForCausalLM", "QuantMixtralForCausalLM", "MllamaForConditionalGeneration", "OlmoForCausalLM",
    "Olmo2ForCausalLM", "OlmoeForCausalLM", "Phi3SmallForCausalLM", "QWenLMHeadModel", "Qwen2ForCausalLM", "Qwen2_5_VLForConditionalGeneration",
    "Qwen2ForCausalLMEagle", "Qwen2MoeForCausalLM", "Qwen2ForRewardModel", "Qwen2VLForConditionalGeneration", "StableLmForCausalLM",
    "TorchNativeLlamaForCausalLM", "TorchNativePhi3ForCausalLM", "XverseForCausalLM", "XverseMoeForCausalLM", "YiVLForCausalLM",
)


def unsupported(architecture: str, registered: tuple[str, ...]) -> Frame:
    """The model registry refusing `architecture` (2025 wording)."""
    return failing_at(REGISTRY, "_raise_for_unsupported", """
        raise ValueError(
            f"Model architectures {architectures} are not supported for now. "
            f"Supported architectures: {self.models.keys()}"
        )
        """, 65, env=(("architectures", repr([architecture])), ("self", f"NS(models=dict.fromkeys({list(registered)!r}))")))


def message(architecture: str, registered: tuple[str, ...]) -> str:
    return f"Model architectures {[architecture]} are not supported for now. Supported architectures: {dict.fromkeys(registered).keys()}"


def to_registry(version: str) -> tuple[Frame, ...]:
    return (
        *to_load_model(version),
        frame_at(LOADER, "load_model", "model = _initialize_model(model_config, self.load_config)", 375),
        frame_at(LOADER, "_initialize_model", "model_class, _ = get_model_architecture(model_config)", 152),
        frame_at("sglang/srt/model_loader/utils.py", "get_model_architecture", "return ModelRegistry.resolve_model_cls(architectures)", 91),
        frame_at(REGISTRY, "resolve_model_cls", "return self._raise_for_unsupported(architectures)", 88),
    )


GLM4 = crash((*to_registry("0.4.10.post2"), unsupported("Glm4ForCausalLM", ARCHITECTURES)), stamp="2025-04-15 03:11:52")
GLM4_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/5441", kind="unsupported-architecture", engine_version="0.4.5",
    fixed_in="https://github.com/sgl-project/sglang/pull/5485 (Glm4ForCausalLM support)",
    resolution="Upgrade: PR #5485 added Glm4ForCausalLM (models/glm4.py) and bumped transformers; the issue closed as inactive.",
)
GLM4_EXPECT = Expect("unsupported-architecture", "ValueError", message("Glm4ForCausalLM", ARCHITECTURES), fix=UPGRADE)

# -- sglang#4253: DeepseekV3 "not supported" because deepseek_v2 failed to import (Triton's gcc build) ------------------

GCC = ["/usr/bin/gcc", "/tmp/tmpq7u2m8e1/main.c", "-O3", "-shared", "-fPIC", "-o", "/tmp/tmpq7u2m8e1/cuda_utils.cpython-311-x86_64-linux-gnu.so",
       "-lcuda", "-L/root/miniconda3/envs/sgl/lib/python3.11/site-packages/triton/backends/nvidia/lib", "-L/lib/x86_64-linux-gnu",
       "-I/root/miniconda3/envs/sgl/lib/python3.11/site-packages/triton/backends/nvidia/include", "-I/tmp/tmpq7u2m8e1",
       "-I/root/miniconda3/envs/sgl/include/python3.11"]
IGNORED = f"Ignore import error when loading sglang.srt.models.deepseek_v2. Command '{GCC!r}' returned non-zero exit status 1."
WITHOUT_DEEPSEEK = tuple(arch for arch in ARCHITECTURES if not arch.startswith("DeepseekV"))


def deepseek_rank(rank: int) -> Run:
    case = crash((*to_registry("0.4.10.post2"), unsupported("DeepseekV3ForCausalLM", WITHOUT_DEEPSEEK)), ranks=f"TP{rank}",
                 before=(IGNORED,), stamp="2025-03-09 21:40:11")
    return Run(case if rank == 1 else replace(case, after=()), primary=rank == 6)


# -- sglang#4689 / #1331: more architectures the registry does not know -------------------------------------------------------

DECI = crash((
    scheduler_entry("scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)", 1748, (("Scheduler", "NEXT"),)),
    *to_registry("0.4.10.post2")[1:],
    unsupported("DeciLMForCausalLM", ARCHITECTURES),
), stamp="2025-03-24 16:05:40")
CHATGLM_OLD = crash((
    *to_load_model("0.4.10.post2"),
    frame_at("vllm/model_executor/model_loader/utils.py", "get_model_architecture", "return ModelRegistry.resolve_model_cls(architectures)", 35),
    frame_at("vllm/model_executor/models/__init__.py", "resolve_model_cls", "model_cls = ModelRegistry.load_model_cls(arch)", 132),
    failing_at("sglang/srt/model_executor/model_runner.py", "load_model_cls_srt", """
        model_arch_name_to_cls = import_model_classes()
        if model_arch not in model_arch_name_to_cls:
            raise ValueError(
                f"Unsupported architectures: {model_arch}. "
                f"Supported list: {list(model_arch_name_to_cls.keys())}"
            )
        """, 711, env=(("import_model_classes", "lambda: dict.fromkeys(['ChatGLMForCausalLM', 'ChatGLMModel', 'CohereForCausalLM', 'DbrxForCausalLM', 'DeepseekForCausalLM', 'DeepseekV2ForCausalLM', 'ExaoneForCausalLM', 'GemmaForCausalLM', 'Gemma2ForCausalLM', 'GPTBigCodeForCausalLM', 'Grok1ForCausalLM', 'InternLM2ForCausalLM', 'LlamaForCausalLM', 'LlavaLlamaForCausalLM', 'LlavaQwenForCausalLM', 'LlavaMistralForCausalLM', 'MiniCPMForCausalLM', 'MiniCPM3ForCausalLM', 'MistralForCausalLM', 'MixtralForCausalLM', 'OlmoeForCausalLM', 'QWenLMHeadModel', 'Qwen2ForCausalLM', 'Qwen2MoeForCausalLM', 'StableLmForCausalLM', 'XverseForCausalLM', 'XverseMoeForCausalLM', 'YiVLForCausalLM'])"),
                       ("model_arch", "'ChatGLMForConditionalGeneration'"))),
), stamp="2024-09-05 10:02:17")
CHATGLM_MESSAGE = ("Unsupported architectures: ChatGLMForConditionalGeneration. Supported list: ['ChatGLMForCausalLM', 'ChatGLMModel', 'CohereForCausalLM', "
                   "'DbrxForCausalLM', 'DeepseekForCausalLM', 'DeepseekV2ForCausalLM', 'ExaoneForCausalLM', 'GemmaForCausalLM', 'Gemma2ForCausalLM', "
                   "'GPTBigCodeForCausalLM', 'Grok1ForCausalLM', 'InternLM2ForCausalLM', 'LlamaForCausalLM', 'LlavaLlamaForCausalLM', 'LlavaQwenForCausalLM', "
                   "'LlavaMistralForCausalLM', 'MiniCPMForCausalLM', 'MiniCPM3ForCausalLM', 'MistralForCausalLM', 'MixtralForCausalLM', 'OlmoeForCausalLM', "
                   "'QWenLMHeadModel', 'Qwen2ForCausalLM', 'Qwen2MoeForCausalLM', 'StableLmForCausalLM', 'XverseForCausalLM', 'XverseMoeForCausalLM', 'YiVLForCausalLM']")

# -- transformers does not know the model type, or clashes with SGLang's registrations --------------------------------------

CONFIG_AUTO = "transformers/models/auto/configuration_auto.py"


def unknown_model_type(model_type: str, tokenizer_line: int) -> tuple[Frame, ...]:
    """The launch's TokenizerManager building ModelConfig; transformers' config mapping has no `model_type`."""
    return (
        module_at(LAUNCH_SERVER, "launch_server(server_args)", 14, env=(("launch_server", "NEXT"), ("server_args", "None"))),
        frame_at("sglang/srt/entrypoints/http_server.py", "launch_server", "tokenizer_manager, scheduler_info = _launch_subprocesses(server_args=server_args)", 743),
        frame_at("sglang/srt/entrypoints/engine.py", "_launch_subprocesses", "tokenizer_manager = TokenizerManager(server_args, port_args)", 649),
        frame_at("sglang/srt/managers/tokenizer_manager.py", "__init__", "self.model_config = ModelConfig.from_server_args(server_args)", tokenizer_line),
        frame_at("sglang/srt/configs/model_config.py", "from_server_args", "return ModelConfig(model_path=model_path or server_args.model_path, trust_remote_code=server_args.trust_remote_code, revision=server_args.revision, context_length=server_args.context_length, model_override_args=server_args.json_model_override_args, is_embedding=server_args.is_embedding, enable_multimodal=server_args.enable_multimodal, dtype=server_args.dtype, quantization=server_args.quantization, **kwargs)", 233,
                 env=(("kwargs", "{}"),)),
        frame_at("sglang/srt/configs/model_config.py", "__init__", "self.hf_config = get_config(self.model_path, trust_remote_code=trust_remote_code, revision=revision, model_override_args=self.model_override_args, **kwargs)", 69,
                 env=(("kwargs", "{}"),)),
        frame_at("sglang/srt/utils/hf_transformers_utils.py", "get_config", "config = AutoConfig.from_pretrained(model, trust_remote_code=trust_remote_code, revision=revision, **kwargs)", 216,
                 env=(("kwargs", "{}"),)),
        # CONFIG_MAPPING[...] runs the next frame as the mapping's __getitem__ (frame f8 of this chain)
        frame_at(CONFIG_AUTO, "from_pretrained", "config_class = CONFIG_MAPPING[config_dict[\"model_type\"]]", 1115,
                 env=(("CONFIG_MAPPING", "type('_LazyConfigMapping', (), {'__getitem__': _target('f8')})()"),
                      ("config_dict", f"{{'model_type': {model_type!r}}}"))),
        failing_at(CONFIG_AUTO, "__getitem__", """
            if key not in self._mapping:
                raise KeyError(key)
            """, 790, env=(("key", "_args[1]"), ("self", "NS(_mapping={'llama': None, 'qwen2': None, 'mistral': None})"))),
    )


QWEN_VL_CONFIG = "sglang/srt/configs/qwen2_5_vl_config.py"
REGISTRATION = (
    *imports(
        (LAUNCH_SERVER, "from sglang.srt.entrypoints.http_server import launch_server", 6),
        ("sglang/srt/entrypoints/http_server.py", "from sglang.srt.entrypoints.engine import _launch_subprocesses", 44),
        ("sglang/srt/entrypoints/engine.py", "from sglang.srt.managers.data_parallel_controller import run_data_parallel_controller_process", 36),
        ("sglang/srt/managers/data_parallel_controller.py", "from sglang.srt.managers.io_struct import TokenizedEmbeddingReqInput, TokenizedGenerateReqInput", 27),
        ("sglang/srt/managers/io_struct.py", "from sglang.srt.managers.schedule_batch import BaseFinishReason", 25),
        ("sglang/srt/managers/schedule_batch.py", "from sglang.srt.configs.model_config import ModelConfig", 42),
        ("sglang/srt/configs/__init__.py", "from sglang.srt.configs.qwen2_5_vl_config import Qwen2_5_VLConfig, Qwen2_5_VLVisionConfig", 4),
    ),
    module_at(QWEN_VL_CONFIG, """
        class Qwen2_5_VLConfig:
            model_type = "qwen2_5_vl"


        class Qwen2_5_VLImageProcessor:
            pass


        AutoImageProcessor.register(Qwen2_5_VLConfig, None, Qwen2_5_VLImageProcessor, None)
        """, 1005, env=(("AutoImageProcessor", "HOP:register"),)),
    frame_at("transformers/models/auto/image_processing_auto.py", "register", "IMAGE_PROCESSOR_MAPPING.register(config_class, (image_processor_class, fast_image_processor_class), exist_ok=exist_ok)", 628,
             env=(("config_class", "_args[0]"),)),
    failing_at("transformers/models/auto/auto_factory.py", "register", """
        if hasattr(key, "__name__") and key.__name__ in self._reverse_config_mapping:
            model_type = self._reverse_config_mapping[key.__name__]
            if model_type in self._model_mapping.keys() and not exist_ok:
                raise ValueError(f"'{key}' is already used by a Transformers model.")
        """, 833, env=(("key", "_args[0]"), ("exist_ok", "False"),
                       ("self", "NS(_reverse_config_mapping={'Qwen2_5_VLConfig': 'qwen2_5_vl'}, _model_mapping={'qwen2_5_vl': None})"))),
)
REGISTRATION_MESSAGE = "'<class 'sglang.srt.configs.qwen2_5_vl_config.Qwen2_5_VLConfig'>' is already used by a Transformers model."
REGISTRATION_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/4159", kind="transformers-config-registration-conflict", engine_version="0.4.3.post4",
    install=DOCKER, fixed_in="https://github.com/sgl-project/sglang/pull/4661",
    resolution="Engine fix PR #4661 (registering SGLang's image processor with transformers); before it, transformers 4.48.x avoided the clash.",
)

# sglang PR#17381: transformers 5 changed AutoImageProcessor.register's signature
TRANSFORMERS_5 = (("transformers/__init__.py", """
class AutoImageProcessor:
    @staticmethod
    def register(config_class, slow_image_processor_class=None, fast_image_processor_class=None, exist_ok=False):
        pass
"""),)
REGISTER_TYPEERROR = launch((
    *imports(
        (LAUNCH_SERVER, "from sglang.srt.server_args import prepare_server_args", 7),
        ("sglang/srt/server_args.py", "from sglang.srt.utils.hf_transformers_utils import check_gguf_file, get_config", 67),
        ("sglang/srt/utils/hf_transformers_utils.py", "from sglang.srt.configs import ChatGLMConfig, DbrxConfig, DeepseekVL2Config, ExaoneConfig, KimiVLConfig, MultiModalityConfig, Step3VLConfig", 46),
        ("sglang/srt/configs/__init__.py", "from sglang.srt.configs.janus_pro import MultiModalityConfig", 9),
    ),
    module_at("sglang/srt/configs/janus_pro.py", "register_image_processor(MultiModalityConfig, VLMImageProcessor)", 634,
              env=(("register_image_processor", "NEXT"), ("MultiModalityConfig", "None"), ("VLMImageProcessor", "None"))),
    frame_at("sglang/srt/configs/utils.py", "register_image_processor", "AutoImageProcessor.register(config, None, image_processor, None, exist_ok=True)", 18,
             env=(("AutoImageProcessor", "__import__('transformers').AutoImageProcessor"), ("config", "None"), ("image_processor", "None"))),
), extra_modules=TRANSFORMERS_5)

# sglang PR#22739: Qwen3 reads rope_theta from rope_parameters, which a JSON rope_scaling override creates without it
QWEN3 = "sglang/srt/models/qwen3.py"
ROPE = crash((
    *to_load_model("0.5.23"),
    frame_at(LOADER, "load_model", "model = _initialize_model(model_config, self.load_config)", 1017),
    frame_at(LOADER, "_initialize_model", "return model_class(config=hf_config, quant_config=quant_config, prefix=prefix)", 260, env=(("model_class", "NEXT"),)),
    frame_at(QWEN3, "__init__", "self.model = Qwen3Model(config, quant_config=quant_config, prefix=add_prefix(\"model\", prefix))", 452),
    frame_at("sglang/srt/models/qwen2.py", "__init__", "self.layers, self.start_layer, self.end_layer = make_layers(config.num_hidden_layers, lambda idx, prefix: decoder_layer_type(layer_id=idx, config=config, quant_config=quant_config, prefix=prefix, alt_stream=alt_stream), pp_rank=self.pp_group.rank_in_group, pp_size=self.pp_group.world_size, prefix=add_prefix(\"layers\", prefix))", 312),
    frame_at("sglang/srt/utils/common.py", "make_layers", "layer = layer_fn(idx=idx, prefix=add_prefix(idx, prefix))", 642, env=(("layer_fn", "NEXT"),)),
    failing_at(QWEN3, "__init__", """
        rope_theta = config.rope_parameters["rope_theta"]
        """, 221, env=(("config", "NS(rope_parameters={'rope_type': 'yarn', 'factor': 4.0, 'original_max_position_embeddings': 32768})"),),
        marker="rope_theta"),
), stamp="2026-04-14 13:50:26")
ROPE_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/pull/22739", kind="transformers-rope-config-mismatch", engine_version="0.5.10",
    fixed_in="https://github.com/sgl-project/sglang/pull/22739",
    resolution="Engine fix: Qwen3DecoderLayer falls back to config.rope_theta when rope_parameters has none (transformers 5 layout).",
)

# -- sglang#2943: --context-length 128000 above the derived 32768 (0.4.1, YaRN added to config.json) -----------------------

CONTEXT_MESSAGE = ("User-specified context_length (128000) is greater than the derived context_length (32768). This may lead to incorrect model "
                   "outputs or CUDA errors. Note that the derived context_length may differ from max_position_embeddings in the model's config. "
                   "To allow overriding this maximum, set the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1")
ROPE_WARNING = "Unrecognized keys in `rope_scaling` for 'rope_type'='yarn': {'original_max_position_embeddings'}\n"
CONTEXT = crash((
    scheduler_entry("scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)", 1527, (("Scheduler", "NEXT"),)),
    frame_at(SCHEDULER, "__init__", "self.model_config = ModelConfig(server_args.model_path, trust_remote_code=server_args.trust_remote_code, revision=server_args.revision, context_length=server_args.context_length, model_override_args=server_args.json_model_override_args, is_embedding=server_args.is_embedding, dtype=server_args.dtype, quantization=server_args.quantization)", 169),
    failing_at("sglang/srt/configs/model_config.py", "__init__", CONTEXT_LENGTH_CHECK["0.4.10.post2"], 104,
               env=(("context_length", "128000"), ("derived_context_len", "32768"), ("get_bool_env_var", "lambda name: False"), ("self", "NS()"))),
), stamp="2025-01-15 09:12:40")
CONTEXT_FIX = ((), ("set --context-length",), ("remove --context-length",))
YARN_CONFIG = '"rope_scaling": {\n  "factor": 4.0,\n  "original_max_position_embeddings": 32768,\n  "type": "yarn"\n}'

# -- sglang#4048: a request longer than the KV pool; the TypeError after the rejection is no launch-argument error ----------

MAX_NEW = crash((
    scheduler_entry("scheduler.event_loop_overlap()", 1796, (("scheduler", "HOP:event_loop_overlap"),)),
    no_grad(116),
    frame_at(SCHEDULER, "event_loop_overlap", "batch = self.get_next_batch_to_run()", 519),
    frame_at(SCHEDULER, "get_next_batch_to_run", "new_batch = self.get_new_batch_prefill()", 1088),
    frame_at(SCHEDULER, "get_new_batch_prefill", "req.init_next_round_input(None if prefix_computed else self.tree_cache)", 1173, env=(("req", "HOP:init_next_round_input"),)),
    failing_at(SCHEDULE_BATCH, "init_next_round_input", """
        self.fill_ids = self.origin_input_ids + self.output_ids
        if self.sampling_params.max_new_tokens > 0:
            self.extend_input_len = len(self.fill_ids) - len(self.prefix_indices)
        """, 443, env=(("self", "NS(origin_input_ids=[], output_ids=[], sampling_params=NS(max_new_tokens=None))"),), marker="if self.sampling"),
), stamp="2025-03-03 07:21:30")


def too_long(rank: int) -> Run:
    case = replace(MAX_NEW, ranks=f"TP{rank}", before=(
        "Input length (160062 tokens) exceeds the maximum allowed length (59862 tokens). Use a shorter input or enable --allow-auto-truncate.",))
    return Run(case if rank == 1 else replace(case, after=()), primary=rank == 5)


CASES = (
    WildCase(**GLM4_THREAD, style="bare-line", parts=(Run(GLM4, primary=True),), expect=GLM4_EXPECT,
             facts="the ValueError wording with the full dict_keys list (the list beyond 'GPT2LMHeadMode...' is ours, in SGLang ~0.4.5's order), only that line pasted",
             paste=(partial(paste.exception_only, marker="ValueError"), paste.fenced)),
    WildCase(**GLM4_THREAD, style="hard-wrap-120", parts=(Run(GLM4, primary=True),), expect=replace(GLM4_EXPECT, frame="_raise_for_unsupported"),
             facts="as above with the traceback; paste style ours (the long line wrapped at 120 columns)",
             paste=(partial(paste.hard_wrap, width=120), paste.fenced)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/4253", kind="unsupported-architecture", style="raw-two-ranks",
             parts=(Weave((deepseek_rank(6), deepseek_rank(1)), by="record"),), engine_version="0.4.3.post4",
             install=Install("/root/miniconda3/envs/sgl/lib/python3.11/site-packages"),
             expect=Expect("dependency-version", "ValueError", message("DeepseekV3ForCausalLM", WITHOUT_DEEPSEEK), frame="_raise_for_unsupported", groups=1),
             facts="the 'Ignore import error when loading sglang.srt.models.deepseek_v2' record with Triton's gcc command (exit status 1), then the registry's ValueError on TP6 and TP1; not fenced",
             resolution="No fix recorded. The real failure is the import error: Triton's gcc build of cuda_utils failed, so deepseek_v2 never registered.",
             paste=(partial(paste.prose, before="### Describe the bug"),)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/4689", kind="unsupported-architecture", style="cloud-viewer",
             parts=(Run(DECI, primary=True),), engine_version="0.4.4",
             expect=Expect("unsupported-architecture", "ValueError", message("DeciLMForCausalLM", ARCHITECTURES), frame="_raise_for_unsupported"),
             facts="DeciLMForCausalLM refused inside the scheduler, scheduler.py line 1748 run_scheduler_process; the log viewer prefix is ours",
             resolution="Not recorded in the notes.", paste=(partial(paste.cloud_log_viewer, start="2025-03-24T16:05:41.118804532"),)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/1331", kind="unsupported-architecture", style="indented-line",
             parts=(Run(CHATGLM_OLD, primary=True),), engine_version="0.3.0",
             expect=Expect("unsupported-architecture", "ValueError", CHATGLM_MESSAGE),
             facts="the older wording 'Unsupported architectures: ChatGLMForConditionalGeneration. Supported list: [...]' (Sep 2024); the list's members and the frames are ours",
             resolution="Not recorded in the notes.",
             paste=(partial(paste.exception_only, marker="ValueError"), paste.indented, partial(paste.prose, before="Serving THUDM/glm-4-9b-chat:"))),

    WildCase(**REGISTRATION_THREAD, style="inline-span", parts=(Run(launch(REGISTRATION), primary=True),),
             expect=Expect("dependency-version", "ValueError", REGISTRATION_MESSAGE, frame="register", fix=UPGRADE),
             facts="the import-time chain (launch_server 6 -> http_server 44 -> engine 36 -> data_parallel_controller 27 -> io_struct 25 -> configs/__init__ 4 -> qwen2_5_vl_config 1005 -> image_processing_auto 628 -> auto_factory 833), the message, the traceback in single backticks",
             paste=(paste.inline_span,)),
    WildCase(**REGISTRATION_THREAD, style="stderr-logger", parts=(Run(launch(REGISTRATION), primary=True),),
             expect=Expect("dependency-version", "ValueError", REGISTRATION_MESSAGE, frame="register", fix=UPGRADE),
             facts="as above; paste style ours (a supervisor re-logging stderr)", paste=(paste.stderr_logger, paste.fenced)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/6732", kind="transformers-unknown-model-type", style="command-then-log",
             parts=(Text(composed.vllm_platform("05-30 03:12:44", "[__init__.py:243]") * 7),
                    Run(launch(unknown_model_type("llava_qwen", 193), before=("server_args=ServerArgs(model_path='/data/BLIP3o/BLIP3o-Model', chat_template='qwen2-vl', host='0.0.0.0', port=30000, trust_remote_code=True)",)), primary=True)),
             engine_version="0.4.6.post5", install=Install("/root/miniconda3/envs/blip/lib/python3.11/site-packages"),
             expect=Expect("dependency-version", "KeyError", "'llava_qwen'", frame="__getitem__"),
             facts="frames (launch_server 14 -> http_server 743 -> engine 649 -> tokenizer_manager 193 -> model_config 233 -> 69), KeyError 'llava_qwen', vLLM's platform line before server_args, command then raw log",
             resolution="None (closed as inactive): the checkpoint's custom model_type is unknown to transformers' AutoConfig.",
             paste=(partial(paste.prose, before="python -m sglang.launch_server --model-path /data/BLIP3o/BLIP3o-Model --chat-template qwen2-vl --host 0.0.0.0 --port 30000 --trust-remote-code"),)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/18819", kind="transformers-unknown-model-type", style="inline-arrows",
             parts=(Run(launch(unknown_model_type("ministral3", 201)), primary=True),), engine_version="0.5.8.post1",
             expect=Expect("dependency-version", "KeyError", "'ministral3'"),
             facts="KeyError 'ministral3' with the bundled transformers, pasted inline after the command with '->'; frames ours",
             resolution="None (closed as inactive). Needs a newer transformers, with which 0.5.8.post1's image-processor registration breaks (see PR #17381).",
             paste=(partial(paste.exception_only, marker="KeyError"),
                    partial(paste.inline_in_sentence, lead="`python -m sglang.launch_server --model-path cyankiwi/Ministral-3-14B-Instruct-2512-AWQ-4bit` -> ", tail=""))),
    WildCase(thread="https://github.com/sgl-project/sglang/pull/17381", kind="transformers-unknown-model-type", style="fenced",
             parts=(Run(REGISTER_TYPEERROR, primary=True),), engine_version="0.5.8",
             expect=Expect("dependency-version", "TypeError", "AutoImageProcessor.register() got multiple values for argument 'exist_ok'",
                           frame="register_image_processor", fix=UPGRADE),
             facts="the chain launch_server 7 -> server_args 67 -> hf_transformers_utils 46 -> configs/__init__ 9 -> janus_pro 634 -> configs/utils.py 18 register_image_processor, and the TypeError transformers 5 causes",
             resolution="Closed in the stored snapshot; SGLang later adapted its registration to transformers 5.", paste=(paste.fenced,)),
    WildCase(**ROPE_THREAD, style="exception-only", parts=(Run(ROPE, primary=True),),
             expect=Expect("dependency-version", "KeyError", "'rope_theta'", fix=UPGRADE),
             facts="KeyError 'rope_theta' in Qwen3DecoderLayer.__init__ reading config.rope_parameters, the PR's 'Pre-fix error:' block with only that line",
             paste=(partial(paste.exception_only, marker="KeyError"), partial(paste.fenced, info="text"), partial(paste.prose, before="Pre-fix error:"))),
    WildCase(**ROPE_THREAD, style="fenced", parts=(Run(ROPE, primary=True),),
             expect=Expect("dependency-version", "KeyError", "'rope_theta'", frame="__init__", fix=UPGRADE),
             facts="the failing read in Qwen3DecoderLayer.__init__; the construction path is ours", install=IMAGE, paste=(paste.fenced,)),

    WildCase(thread="https://github.com/sgl-project/sglang/issues/2943", kind="context-length-exceeds-derived", style="json-then-bash",
             parts=(Text(ROPE_WARNING * 2), Run(CONTEXT, primary=True)), engine_version="0.4.1",
             expect=Expect("context-length", "ValueError", CONTEXT_MESSAGE, fix=CONTEXT_FIX),
             facts="the ValueError wording (128000 vs 32768), the transformers rope_scaling warning (the issue's title), a json config snippet then the single line in a bash fence",
             resolution="Not visible; sibling #2108: SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1, --context-length 131072 and the YaRN block in config.json.",
             paste=(partial(paste.exception_only, marker="ValueError"), partial(paste.fenced, info="bash"),
                    partial(paste.prose, before=f"config.json:\n\n```json\n{YARN_CONFIG}\n```\n\nlaunch with --context-length 128000:"))),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/2943", kind="context-length-exceeds-derived", style="fenced-with-warnings",
             parts=(Text(ROPE_WARNING * 4), Run(CONTEXT, primary=True)), engine_version="0.4.1",
             expect=Expect("context-length", "ValueError", CONTEXT_MESSAGE, frame="__init__", fix=CONTEXT_FIX),
             facts="the warning repeated once per process (as sibling #4145 shows), then the scheduler's traceback; frames ours",
             resolution="Not visible; sibling #2108: SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1, --context-length 131072 and the YaRN block in config.json.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/4048", kind="request-exceeds-kv-pool-capacity", style="cut-joined",
             parts=(Weave((too_long(5), too_long(1)), by="record"),), engine_version="0.4.3",
             install=Install("/home/ray/anaconda/lib/python3.11/site-packages"),
             expect=Expect("none", "TypeError", "'>' not supported between instances of 'NoneType' and 'int'"),
             facts="the 'Input length (160062 tokens) exceeds the maximum allowed length (59862 tokens)' records on TP5 and TP1, the source line 'if self.sampling_params.max_new_tokens > 0:', scheduler.py 1796, the paste starting mid-traceback, indentation stripped, a frame line joined with its source",
             resolution="No fix: the request limit is the KV pool, not --context-length. The TypeError follows the rejection; it is no launch-argument error.",
             paste=(partial(paste.cut_at_start, marker="if self.sampling_params.max_new_tokens > 0:"), paste.join_source_lines, paste.strip_indent,
                    partial(paste.fenced, info="shell"))),
)
