"""A missing engine name read against the releases that have it (facts/engine_modules.json.gz, reasoning/engine_imports.py).

Programs around the engines (a trainer, a plugin, a script) import the engines' internal modules; a name that moved or
vanished raises ImportError, ModuleNotFoundError or AttributeError in the program's frame, or is pasted as the bare line.
The table of the indexed releases' modules and names says which releases have the name: some (the program targets
those: huggingface/trl#4617, davanstrien/uv-scripts-for-ai#14, deepseek-ai/DeepSeek-OCR#176, NVlabs/Tool-N1#2), every
one (not a release skew: a shadowing `vllm` directory, vllm-project/vllm-ascend#718), or none (a plugin's run-time name,
snowflakedb/ArcticInference#156).  A package's handler re-raising its own error keeps the lookup readable
(vllm-project/vllm#52614); the engine's own console script is no other program (flagos-ai/vllm-plugin-FL#202).

Every traceback is printed by real CPython from stub packages of our own; the missing names are the engines' real ones,
whose releases the table gives."""

from __future__ import annotations

from pathlib import Path

from logsleuth.api import DiagnoseOptions
from logsleuth.facts.engine_modules import module_presence, name_presence, spans_of
from logsleuth.models import Diagnosis
from tests.helpers import traceback_of_installed
from tests.reasoning.diagnosed import first_diagnosis

RULE = "rule-caller-imports-engine-name"


def _traceback(tmp_path: Path, script_name: str, source: str, packages: dict[str, str]) -> str:
    """Real CPython's traceback of `source`, run as `script_name` with the stub `packages` installed."""
    (tmp_path / script_name).parent.mkdir(parents=True, exist_ok=True)
    done = traceback_of_installed(tmp_path, packages, source, script_name=script_name)
    assert done.returncode != 0 and "Traceback" in done.stderr, done.stderr
    return done.stderr


def _rule(text: str, options: DiagnoseOptions | None = None) -> Diagnosis:
    diagnosis = first_diagnosis(text, options) if options else first_diagnosis(text)
    assert (diagnosis.pattern, diagnosis.category) == (RULE, "dependency-version"), diagnosis
    return diagnosis


VLLM_SAMPLING = {"vllm/__init__.py": "", "vllm/sampling_params.py": "class SamplingParams: pass\n"}


def test_the_table_reads_real_moves() -> None:
    """The facts the rule rests on: GuidedDecodingParams left vllm.sampling_params (renamed StructuredOutputsParams,
    huggingface/trl#4617), vllm.worker went with the V0 engine, and sglang.srt.utils' names stay found through the
    package's star import (`from sglang.srt.utils.common import *`) once it became a package in 0.5.3."""
    guided = name_presence("vllm", "vllm.sampling_params", "GuidedDecodingParams")
    assert guided is not None and guided.having and not guided.in_every and "0.34.0" in guided.lacking()
    worker = module_presence("vllm", "vllm.worker")
    assert worker is not None and "0.5.5" in worker.having and "0.34.0" not in worker.having
    broadcast = name_presence("sglang", "sglang.srt.utils", "broadcast_pyobj")
    assert broadcast is not None and "0.5.3" in broadcast.having and broadcast.in_every and not broadcast.open_in
    assert spans_of(("0.5.5", "0.6.3.post1", "0.9.2"), ("0.5.5", "0.6.3.post1", "0.7.3", "0.9.2")) == "0.5.5 to 0.6.3.post1, 0.9.2"
    indexed = ("0.5.5", "0.6.3.post1", "0.7.3", "0.9.2")
    assert spans_of(("0.5.5", "0.7.3", "0.9.2"), indexed, open_ended=True) == "0.5.5, 0.7.3 and later"
    assert spans_of(("0.5.5", "0.6.3.post1"), indexed, open_ended=True) == "0.5.5 to 0.6.3.post1"


def test_a_bare_import_line_names_the_releases_that_have_the_name(tmp_path: Path) -> None:
    traceback = _traceback(tmp_path, "scripts/ocr.py", "from vllm.sampling_params import GuidedDecodingParams", VLLM_SAMPLING)
    bare = traceback.strip().splitlines()[-1] + "\n"
    diagnosis = _rule(bare)
    presence = name_presence("vllm", "vllm.sampling_params", "GuidedDecodingParams")
    assert presence is not None
    assert presence.spans() in diagnosis.title and presence.lacking() in diagnosis.root_cause
    assert diagnosis.fix is not None and diagnosis.fix.command is None and diagnosis.fix.needs_input
    assert "no frame" in diagnosis.root_cause


def test_a_wrapper_frame_gets_the_range_beside_its_name(tmp_path: Path) -> None:
    files = {**VLLM_SAMPLING, "rltrainer/__init__.py": "",
             "rltrainer/grpo.py": "from vllm.sampling_params import GuidedDecodingParams\n"}
    traceback = _traceback(tmp_path, "train.py", "import rltrainer.grpo", files)
    diagnosis = _rule(traceback)
    presence = name_presence("vllm", "vllm.sampling_params", "GuidedDecodingParams")
    assert presence is not None and "rltrainer" in diagnosis.title.lower()
    assert f"is in {presence.spans()}" in diagnosis.root_cause
    assert diagnosis.fix is not None and presence.spans() in diagnosis.fix.summary


def test_a_name_every_release_has_is_no_release_skew(tmp_path: Path) -> None:
    """vllm.__version__ missing: no release lacks it, so the vllm imported is not a whole install (a directory named
    vllm in the working directory, vllm-project/vllm-ascend#718); no other release is offered."""
    files = {"vllm/__init__.py": "", "platformx/__init__.py": "",
             "platformx/utils.py": "import vllm\nVERSION = vllm.__version__\n"}
    traceback = _traceback(tmp_path, "serve.py", "import platformx.utils", files)
    diagnosis = _rule(traceback)
    assert "every indexed vLLM release" in diagnosis.title
    assert diagnosis.fix is not None and "__file__" in diagnosis.fix.summary
    assert "Install the vLLM release" not in diagnosis.fix.summary


def test_the_installed_release_having_the_name_points_at_the_imported_copy(tmp_path: Path) -> None:
    files = {**VLLM_SAMPLING, "rltrainer/__init__.py": "",
             "rltrainer/grpo.py": "from vllm.sampling_params import GuidedDecodingParams\n"}
    presence = name_presence("vllm", "vllm.sampling_params", "GuidedDecodingParams")
    assert presence is not None
    having = presence.having[-1]
    diagnosis = _rule(_traceback(tmp_path, "train.py", "import rltrainer.grpo", files),
                      DiagnoseOptions(include_user_patterns=False, engine_version=having))
    assert f"The installed vLLM {having} has" in diagnosis.title


def test_a_name_no_release_has_is_no_release_to_install(tmp_path: Path) -> None:
    """`_SP`: a name a plugin sets on vLLM's parallel_state once loaded (snowflakedb/ArcticInference#156)."""
    files = {"vllm/__init__.py": "", "vllm/distributed/__init__.py": "",
             "vllm/distributed/parallel_state.py": "_TP = None\n"}
    traceback = _traceback(tmp_path, "spec/embedding.py", "from vllm.distributed.parallel_state import _TP, _SP", files)
    diagnosis = _rule(traceback.strip().splitlines()[-1] + "\n")
    assert diagnosis.title.startswith("No indexed vLLM release")
    assert diagnosis.fix is not None and "plugin" in diagnosis.fix.summary
    # the index reads some releases, not every one: no direction (newer, older) is said without evidence, only what is
    # known (no indexed release has it) and what to check (the release the importing program pins)
    for text in (diagnosis.title, diagnosis.root_cause, diagnosis.fix.summary):
        assert "newer than" not in text and "older than" not in text and "outside" not in text, text
    assert "not every release published" in diagnosis.root_cause and "pins" in diagnosis.fix.summary


# Issue 28 stop 50 (split 13's harmful report, a wrapper's RL rollout importing sglang.srt.weight_sync): SGLang ships
# that directory without an __init__.py, a namespace package, so the module index (one row a file) has rows for its
# submodules only, and the package itself read as in no release: "newer than the newest or older than the oldest",
# while the thread's fix was a release inside the indexed range.
def test_a_namespace_package_is_in_the_releases_of_its_submodules() -> None:
    package = module_presence("sglang", "sglang.srt.weight_sync")
    below = module_presence("sglang", "sglang.srt.weight_sync.utils")
    assert package is not None and below is not None and below.having
    assert set(below.having) <= set(package.having) and not package.in_none
    named = name_presence("sglang", "sglang.srt.weight_sync", "utils")
    assert named is not None and named.having == below.having


def test_an_import_of_a_namespace_package_names_the_releases_that_have_it() -> None:
    diagnosis = _rule("ModuleNotFoundError: No module named 'sglang.srt.weight_sync'\n")
    package = module_presence("sglang", "sglang.srt.weight_sync")
    assert package is not None and package.spans() in diagnosis.title
    assert diagnosis.fix is not None and package.spans() in diagnosis.fix.summary
    assert "newer than" not in diagnosis.root_cause


def test_a_handler_re_raising_its_own_error_keeps_the_lookup(tmp_path: Path) -> None:
    """A package catching the failed import and raising "vllm is not installed" (vllm-project/vllm#52614's shape)."""
    files = {"vllm/__init__.py": "", "vllm/transformers_utils/__init__.py": "", "formatguard/__init__.py": "",
             "formatguard/vllm_glue.py": (
                 "try:\n    from vllm.transformers_utils.tokenizer import MistralTokenizer\n"
                 "except ImportError:\n    raise ImportError('vllm is not installed')\n")}
    traceback = _traceback(tmp_path, "serve.py", "import formatguard.vllm_glue", files)
    diagnosis = _rule(traceback)
    presence = module_presence("vllm", "vllm.transformers_utils.tokenizer")
    assert presence is not None and "formatguard" in diagnosis.title.lower()
    assert presence.spans() in diagnosis.root_cause


def test_the_engine_console_script_is_not_the_importer(tmp_path: Path) -> None:
    """The paste keeps only the vllm CLI's frame; vLLM's platform plugin line names the likely importer."""
    traceback = _traceback(tmp_path, "bin/vllm", "import vllm.v1.attention", {"vllm/__init__.py": ""})
    log = "INFO 05-28 10:12:01 [__init__.py:217] Platform plugin fl is activated\n" + traceback
    diagnosis = _rule(log)
    assert "vllm-plugin-FL" in diagnosis.title and "The code in vllm" not in diagnosis.title
