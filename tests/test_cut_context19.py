"""Cut tracebacks whose frames say more than their subsystem (issue 28, stop 55, branch cut19;
facts/frame_shapes.toml, reasoning/frame_shapes.py, reasoning/cut_context.py), on real CPython tracebacks of our own
code laid out like the engines', cut before their exception line the way the threads' pastes were:

- a cut in the model loader's class resolution (_initialize_model, sgl-project/sglang#5220) reads as an architecture the
  release may not support, with the release's model list and a newer release to check, never as a finding;
- a cut in the speculative step while serving (sgl-project/sglang#8336) is a runtime kernel fault, not a settings
  mismatch: no draft-size checks;
- a cut in CUDA-graph replay (HuiResearch/FlashTTS#40) compares the attention library with the engine's pin;
- an import a connector's factory made by name (LMCache/LMCache#1712) is that plugin's package, and its feature's
  flag is not ruled out the way a start-up import's is;
- a package's warning just above the cut, the package one the frames run under (ovg-project/kvcached#198), leads;
- a cut in SGLang's forward pass when every GPU the paste shows is below FlashInfer's floor (7.5: its README; the 8.0
  of sgl-project/sglang#748 was flashinfer 0.1.1 to 0.1.3's) names the release's attention and sampling switches,
  unless the launch is already off FlashInfer."""

from __future__ import annotations

from pathlib import Path

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.render.search_words import search_text
from tests.helpers import check_texts, diagnose_with_patterns, real_traceback, traceback_of_installed
from tests.test_cut_tracebacks import cut_after

LOADER = '''
class Registry:
    def resolve_model_cls(self, architectures):
        raise ValueError("no such architecture")


def get_model_architecture(config):
    return Registry().resolve_model_cls(config)


def _get_quantization_config(config):
    raise ValueError("no such method")


def _initialize_model(config):
    quant = _get_quantization_config(config) if config == "quantized" else None
    model_class = get_model_architecture(config)
    return model_class


class Loader:
    def load_model(self, config):
        model = _initialize_model(
            config)
        return model


Loader().load_model(CONFIG)
'''


def test_a_cut_in_model_class_resolution_reads_as_an_architecture_the_release_may_not_support() -> None:
    printed = real_traceback(LOADER.replace("CONFIG", '"plain"'), "sglang/srt/model_loader/loader.py")
    log = cut_after(printed, "model = _initialize_model(")
    diagnosis = diagnose_with_patterns("[2025-04-10 07:26:56 TP0] Scheduler hit an exception: " + log)
    assert diagnosis.category == "unsupported-architecture", diagnosis.root_cause
    assert "a guess from where the process was, not a finding" in diagnosis.root_cause
    steps = check_texts(diagnosis)
    assert "model list of the installed release" in steps and "newer release" in steps
    assert "is not supported by" not in diagnosis.root_cause + steps


def test_a_cut_while_the_loader_reads_the_quantization_config_is_not_the_model_class() -> None:
    printed = real_traceback(LOADER.replace("CONFIG", '"quantized"'), "vllm/model_executor/model_loader/loader.py")
    log = cut_after(printed, "quant = _get_quantization_config(config)")
    diagnosis = diagnose_with_patterns(log)
    assert diagnosis.category != "unsupported-architecture", diagnosis.root_cause


EAGLE = '''
class EAGLEWorker:
    def __init__(self, steps):
        self.steps = steps
        STARTUP

    def verify(self, batch):
        raise RuntimeError("CUDA error")

    def forward_batch_speculative_generation(self, batch):
        self.verify(batch)


def run_batch(worker, batch):
    return worker.forward_batch_speculative_generation(batch)


run_batch(EAGLEWorker(3), [1])
'''


def test_a_cut_in_the_speculative_step_while_serving_is_a_runtime_kernel_fault() -> None:
    printed = real_traceback(EAGLE.replace("STARTUP", "pass"), "sglang/srt/speculative/eagle_worker.py")
    diagnosis = diagnose_with_patterns(cut_after(printed, "self.verify(batch)"))
    assert diagnosis.category == "illegal-memory-access", diagnosis.root_cause
    steps = check_texts(diagnosis)
    assert "without speculative decoding" in steps and "newer release" in steps
    assert "--speculative-num-steps" not in steps and "draft tokens" not in steps, steps


def test_a_cut_in_the_draft_graphs_capture_at_start_up_is_not_a_runtime_fault() -> None:
    # SGLang's EAGLEWorker.__init__ → init_cuda_graphs → EAGLEDraftCudaGraphRunner capture → run_once → draft_forward
    printed = real_traceback('''
def kernel(batch):
    raise RuntimeError("CUDA error")


class EAGLEWorker:
    def __init__(self):
        self.init_cuda_graphs()

    def init_cuda_graphs(self):
        self.draft_forward([1])

    def draft_forward(self, batch):
        kernel(
            batch)


EAGLEWorker()
''', "sglang/srt/speculative/eagle_worker.py")
    diagnosis = diagnose_with_patterns(cut_after(printed, "    kernel("))
    assert diagnosis.category != "illegal-memory-access", diagnosis.root_cause
    assert "while the server serves" not in diagnosis.root_cause


def test_a_cut_in_the_speculative_worker_s_start_up_is_not_a_runtime_fault() -> None:
    printed = real_traceback(EAGLE.replace("STARTUP", 'raise ValueError("sizes")'),
                             "sglang/srt/speculative/eagle_worker.py")
    diagnosis = diagnose_with_patterns(cut_after(printed, 'raise ValueError("sizes")').replace(
        '    raise ValueError("sizes")\n', ""))
    assert diagnosis.category != "illegal-memory-access", diagnosis.root_cause


GRAPH_RUNNER = '''
class CudaGraphRunner:
    def replay(self, batch):
        raise TypeError("plan() got an unexpected keyword argument")


class ModelRunner:
    cuda_graph_runner = CudaGraphRunner()

    def forward(self, batch):
        return self.cuda_graph_runner.replay(
            batch)


ModelRunner().forward([1])
'''


def test_a_cut_in_sglang_s_graph_replay_beside_flashinfer_s_version_compares_it_with_the_pin() -> None:
    printed = real_traceback(GRAPH_RUNNER, "sglang/srt/model_executor/model_runner.py")
    log = "with flashinfer-python 0.2.5 installed it fails:\n" + cut_after(printed, "return self.cuda_graph_runner.replay(")
    diagnosis = diagnose_with_patterns(log)
    assert diagnosis.category == "dependency-version", diagnosis.root_cause
    steps = check_texts(diagnosis)
    assert "pins" in steps and "--disable-cuda-graph" in steps and "--enforce-eager" not in steps


def test_a_cut_in_graph_replay_without_a_library_version_reads_no_category_from_the_place() -> None:
    printed = real_traceback(GRAPH_RUNNER, "sglang/srt/model_executor/model_runner.py")
    diagnosis = diagnose_with_patterns(cut_after(printed, "return self.cuda_graph_runner.replay("))
    assert diagnosis.category != "dependency-version", diagnosis.root_cause


def test_a_replay_of_vllm_or_of_the_user_s_own_code_is_no_graph_replay() -> None:
    user = real_traceback('''
class Buffer:
    def replay(self, size):
        raise ValueError("empty")


class Learner:
    buffer = Buffer()

    def step(self):
        return self.buffer.replay(
            8)


Learner().step()
''', "home/u/agent/worker/learner.py")
    vllm = real_traceback('''
class Graph:
    def replay(self):
        raise RuntimeError("graph")


class CUDAGraphRunner:
    _graph = Graph()

    def forward(self):
        self._graph.replay()


CUDAGraphRunner().forward()
''', "vllm/worker/model_runner.py")
    for log in (cut_after(user, "return self.buffer.replay("), cut_after(vllm, "self._graph.replay()")):
        diagnosis = diagnose_with_patterns("flashinfer-python 0.2.5\n" + log)
        assert diagnosis.category != "dependency-version", diagnosis.root_cause
        assert "flashinfer" not in check_texts(diagnosis)


CONNECTOR_FILES = {
    "vllm/distributed/kv_transfer/kv_connector/factory.py": (
        "import importlib\n\n\n"
        "def loader(module_path):\n    module = importlib.import_module(module_path)\n    return module\n"),
    "someconnector/connector.py": "from someconnector import c_ops\n",
    "someconnector/c_ops.py": "raise ImportError('undefined symbol: _ZN3c104cuda9SetDeviceEa')\n",
}


def test_an_import_a_connector_s_factory_made_by_name_is_the_plugin_s_package(tmp_path: Path) -> None:
    printed = traceback_of_installed(
        tmp_path, CONNECTOR_FILES,
        "from vllm.distributed.kv_transfer.kv_connector.factory import loader\nloader('someconnector.connector')\n")
    log = cut_after(printed.stderr, "return _bootstrap._gcd_import(")
    assert "ImportError" not in log
    diagnosis = diagnose_with_patterns(log)
    assert diagnosis.category == "dependency-version", diagnosis.root_cause
    assert "imports a module by name" in diagnosis.root_cause
    assert "kv_connector/factory.py (loader)" in diagnosis.root_cause
    steps = check_texts(diagnosis)
    assert "against the installed torch" in steps
    assert "whatever the launch's flags" not in steps  # a start-up import's reading, not this one's


# Imports by name that load the engine's own modules, not a plugin's (each cut in importlib's import_module):
# transformers' _LazyModule._get_module (transformers/utils/import_utils.py), vLLM's resolve_obj_by_qualname of its
# worker class (vllm/utils.py, called by worker_base.py init_worker) and its model registry's load_model_cls.
NOT_PLUGINS = {
    "transformers/utils/import_utils.py": (
        "import importlib\n\n\ndef _get_module(module_name):\n"
        "    return importlib.import_module('.' + module_name, 'broken')\n"),
    "vllm/utils.py": (
        "import importlib\n\n\ndef resolve_obj_by_qualname(qualname):\n"
        "    module_name, obj_name = qualname.rsplit('.', 1)\n"
        "    module = importlib.import_module(module_name)\n    return getattr(module, obj_name)\n"),
    "vllm/model_executor/models/registry.py": (
        "import importlib\n\n\ndef load_model_cls(module_name):\n"
        "    mod = importlib.import_module(module_name)\n    return mod\n"),
    "broken/__init__.py": "",
    "broken/models.py": "raise ImportError('undefined symbol: _ZN3c104cuda9SetDeviceEa')\n",
}


def test_the_engines_own_imports_by_name_are_no_plugin(tmp_path: Path) -> None:
    for call in ("from transformers.utils.import_utils import _get_module\n_get_module('models')\n",
                 "from vllm.utils import resolve_obj_by_qualname\nresolve_obj_by_qualname('broken.models.Worker')\n",
                 "from vllm.model_executor.models.registry import load_model_cls\nload_model_cls('broken.models')\n"):
        printed = traceback_of_installed(tmp_path, NOT_PLUGINS, call)
        diagnosis = diagnose_with_patterns(cut_after(printed.stderr, "return _bootstrap._gcd_import("))
        assert "imports a module by name" not in diagnosis.root_cause, (call, diagnosis.root_cause)
        assert "plugin or connector" not in check_texts(diagnosis), call


def test_an_entry_point_plugin_vllm_loads_is_the_plugin_s_package(tmp_path: Path) -> None:
    files = {
        "vllm/plugins/__init__.py": (
            "from importlib.metadata import EntryPoint\n\n\ndef load_plugins_by_group(group):\n"
            "    plugin = EntryPoint(name='p', value='someplugin.register:register', group=group)\n"
            "    func = plugin.load()\n    return func\n"),
        "someplugin/register.py": "raise ImportError('undefined symbol: _ZN3c104cuda9SetDeviceEa')\n",
    }
    printed = traceback_of_installed(tmp_path, files, "from vllm.plugins import load_plugins_by_group\n"
                                                      "load_plugins_by_group('vllm.general_plugins')\n")
    diagnosis = diagnose_with_patterns(cut_after(printed.stderr, "return _bootstrap._gcd_import("))
    assert diagnosis.category == "dependency-version", diagnosis.root_cause
    assert "vllm/plugins/__init__.py (load_plugins_by_group)" in diagnosis.root_cause


def test_a_cut_import_by_name_searches_the_line_that_asked_for_it(tmp_path: Path) -> None:
    printed = traceback_of_installed(
        tmp_path, CONNECTOR_FILES,
        "from vllm.distributed.kv_transfer.kv_connector.factory import loader\nloader('someconnector.connector')\n")
    report = diagnose_text(cut_after(printed.stderr, "return _bootstrap._gcd_import("),
                           DiagnoseOptions(include_user_patterns=False))
    group = report.failures[0]
    assert search_text(group.diagnosis, group.failure) == "module = importlib.import_module(module_path)"


def _scheduler_cut(venv: str) -> str:
    printed = real_traceback('''
class TpModelWorker:
    def __init__(self):
        raise NotImplementedError("attention type")


class Scheduler:
    def __init__(self):
        self.worker = TpModelWorker(
        )


Scheduler()
''', f"{venv}/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py")
    return cut_after(printed, "self.worker = TpModelWorker(")


def test_a_warning_of_the_package_the_frames_run_under_leads_a_cut_s_guess() -> None:
    log = ("[cachewrap][INFO][2025-10-12 21:14:09][alloc.py:10] allocator ready\n"
           "[cachewrap][WARNING][2025-10-12 21:14:09][hooks.py:84] cachewrap is only tested with page_size=1 here.\n"
           "[2025-10-12 21:14:09] Scheduler hit an exception: " + _scheduler_cut("opt/cachewrap/venv"))
    diagnosis = diagnose_with_patterns(log)
    assert diagnosis.category == "feature-conflict", diagnosis.root_cause
    # quoted in single quotes, so that the text report shows the warning's line above the cut (render/view.py)
    assert "'cachewrap is only tested with page_size=1 here.'" in diagnosis.root_cause
    assert "without cachewrap" in check_texts(diagnosis)


def test_a_warning_of_a_package_the_frames_do_not_run_under_says_nothing() -> None:
    log = ("[cachewrap][WARNING][2025-10-12 21:14:09][hooks.py:84] cachewrap is only tested with page_size=1 here.\n"
           "[2025-10-12 21:14:09] Scheduler hit an exception: " + _scheduler_cut("opt/other/venv"))
    diagnosis = diagnose_with_patterns(log)
    assert diagnosis.category == "unclassified", diagnosis.root_cause


FORWARD = '''
class ModelRunner:
    def forward_extend(self, batch):
        raise RuntimeError("kernel")

    def forward(self, batch):
        return self.forward_extend(batch)


ModelRunner().forward([1])
'''


def _forward_cut_on(gpu: str, above: str = "") -> str:
    printed = real_traceback(FORWARD, "sglang/srt/managers/controller/model_runner.py")
    return f"{above}GPU 0: {gpu} (UUID: GPU-0000)\n" + cut_after(printed, "return self.forward_extend(batch)")


def test_a_cut_in_the_forward_pass_on_a_gpu_below_flashinfer_s_floor_names_both_switches() -> None:
    diagnosis = diagnose_with_patterns(_forward_cut_on("Tesla V100-SXM2-16GB"))
    assert diagnosis.category == "gpu-arch-unsupported", diagnosis.root_cause
    assert "compute capability 7.0" in diagnosis.root_cause and "7.5 and later" in diagnosis.root_cause
    steps = check_texts(diagnosis)
    # attention and sampling together (sglang#748 failed in FlashInfer's sampling.cuh), each pair with its releases
    assert "`--attention-backend triton` with `--sampling-backend pytorch` (SGLang 0.3.1 and later)" in steps
    assert "`--disable-flashinfer` with `--disable-flashinfer-sampling` (SGLang up to 0.4.1.post1)" in steps
    assert "A GPU of compute capability" not in steps


def test_a_named_release_gets_only_its_own_switches() -> None:
    diagnosis = diagnose_with_patterns(_forward_cut_on("Tesla V100-SXM2-16GB", "sglang 0.4.6.post1\n"))
    assert diagnosis.category == "gpu-arch-unsupported", diagnosis.root_cause
    steps = check_texts(diagnosis)
    assert "`--attention-backend triton` with `--sampling-backend pytorch`" in steps
    assert "--disable-flashinfer" not in steps, steps


def test_a_turing_gpu_is_within_flashinfer_s_floor() -> None:
    # FlashInfer supports SM75 from 0.1.4 on (its README; SGLang's install docs: "only supports sm75 and above")
    for gpu in ("Tesla T4", "NVIDIA GeForce RTX 2080 Ti"):
        diagnosis = diagnose_with_patterns(_forward_cut_on(gpu, "sglang 0.4.6.post1\n"))
        assert diagnosis.category != "gpu-arch-unsupported", diagnosis.root_cause


def test_a_launch_already_off_flashinfer_is_not_told_to_switch() -> None:
    for launch in ("python -m sglang.launch_server --model-path m --attention-backend triton --sampling-backend pytorch",
                   "python -m sglang.launch_server --model-path m --disable-flashinfer"):
        diagnosis = diagnose_with_patterns(_forward_cut_on("Tesla V100-SXM2-16GB", f"$ {launch}\n"))
        assert diagnosis.category != "gpu-arch-unsupported", (launch, diagnosis.root_cause)


def test_an_older_gpu_in_the_user_s_prose_beside_a_newer_host_gpu_says_nothing() -> None:
    above = ("It ran fine last year on my old Tesla V100-SXM2-16GB; on the new server it crashes:\n"
             "|   0  NVIDIA H100 80GB HBM3      On   | 00000000:18:00.0 Off |                    0 |\n")
    diagnosis = diagnose_with_patterns(_forward_cut_on("NVIDIA H100 80GB HBM3", above))
    assert diagnosis.category != "gpu-arch-unsupported", diagnosis.root_cause


def test_a_cut_in_the_forward_pass_on_a_newer_gpu_names_no_gpu_limit() -> None:
    diagnosis = diagnose_with_patterns(_forward_cut_on("NVIDIA A100-SXM4-80GB"))
    assert diagnosis.category != "gpu-arch-unsupported", diagnosis.root_cause


def _user_app_cut(top: str) -> str:
    """A cut traceback from the user's own program (under `top`) into the installed engine."""
    printed = real_traceback('''
def generate(prompts):
    raise RuntimeError("engine")


def run(prompts):
    return generate(
        prompts)


run([1])
''', f"{top}/batching.py")
    return cut_after(printed, "return generate(")


def test_a_warning_of_the_user_s_own_program_names_no_wrapper() -> None:
    for warning, top in (("WARNING:app.batching:dropping 2 prompts that are not supported by this model", "app/app"),
                         ("src - WARNING - chat template not supported, using default", "workspace/src")):
        diagnosis = diagnose_with_patterns(warning + "\n" + _user_app_cut(top))
        assert diagnosis.category != "feature-conflict", (warning, diagnosis.root_cause)


def test_a_warning_that_states_no_limit_names_no_wrapper() -> None:
    log = ("[cachewrap][WARNING][2025-10-12 21:14:09][hooks.py:84] cachewrap uses its default pool size.\n"
           "[2025-10-12 21:14:09] Scheduler hit an exception: " + _scheduler_cut("opt/cachewrap/venv"))
    diagnosis = diagnose_with_patterns(log)
    assert diagnosis.category != "feature-conflict", diagnosis.root_cause


def test_a_warning_of_python_s_root_logger_names_no_wrapper_even_under_root_s_home() -> None:
    log = ("WARNING:root:something was slow\n"
           "[2025-10-12 21:14:09] Scheduler hit an exception: " + _scheduler_cut("root/venv"))
    diagnosis = diagnose_with_patterns(log)
    assert diagnosis.category == "unclassified", diagnosis.root_cause


def test_a_cut_in_vllm_s_loader_is_no_architecture_guess() -> None:
    # vLLM from 0.6 refuses an architecture while it builds ModelConfig (_init_multimodal_config →
    # ModelRegistry.is_multimodal_model → _raise_for_unsupported), before its loader's _initialize_model
    printed = real_traceback(LOADER.replace("CONFIG", '"plain"'), "vllm/model_executor/model_loader/loader.py")
    diagnosis = diagnose_with_patterns(cut_after(printed, "model = _initialize_model("))
    assert diagnosis.category != "unsupported-architecture", diagnosis.root_cause


def test_every_guessing_shape_says_it_guesses() -> None:
    from logsleuth.facts.frame_shapes import frame_shapes

    guess = "a guess from where the process was, not a finding"
    rows = frame_shapes()
    assert [row.shape for row in rows if row.guess] == ["plugin-import", "model-class", "speculative-runtime",
                                                         "graph-replay", "serving-sync", "serving-step"]
    for row in rows:
        assert (guess in row.reading) == row.guess, row.shape
        assert not row.guess or "may" in row.title or "likel" in row.title, row.shape  # a title that hedges
