"""Rule rule-caller-imports-engine-name (reasoning/engine_imports.py): another program importing a name the installed
engine does not have.

Every traceback is printed by real CPython: a stub engine package in a site-packages directory lacks the name, and the
importing code sits where the threads show it (a wrapper's checkout, a research repository's directory that happens to
be named after the engine, the engine's own module).  The names are our own; the shapes are hiyouga/LlamaFactory#7768
and Tomorrowdawn/top_nsigma#2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from logsleuth.models import Diagnosis
from tests.reasoning.diagnosed import first_diagnosis


def _traceback(tmp_path: Path, importer: str, statement: str, engine_files: dict[str, str]) -> str:
    """What CPython prints when the file `importer` (relative to tmp_path) runs `statement` with the stub engine
    `engine_files` installed under site-packages."""
    site = tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    for relative, source in engine_files.items():
        (site / relative).parent.mkdir(parents=True, exist_ok=True)
        (site / relative).write_text(source)
    script = tmp_path / importer
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(statement + "\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env={"PYTHONPATH": str(site)})
    assert done.returncode != 0 and "Traceback" in done.stderr, done.stderr
    return done.stderr


SGLANG_UTILS = {"sglang/__init__.py": "", "sglang/utils.py": "def wait_for_server(url): pass\n"}
VLLM_SEQUENCE = {"vllm/__init__.py": "", "vllm/sequence.py": "class SequenceData: pass\n"}


def _rule(text: str) -> Diagnosis:
    diagnosis = first_diagnosis(text)
    assert (diagnosis.pattern, diagnosis.category, diagnosis.basis) == (
        "rule-caller-imports-engine-name", "dependency-version", "rule"), diagnosis
    return diagnosis


def test_a_wrapper_importing_a_name_the_engine_lacks_is_told_to_match_releases(tmp_path: Path) -> None:
    traceback = _traceback(tmp_path, "LLaMA-Factory/src/llamafactory/chat/sglang_engine.py",
                           "from sglang.utils import launch_server_cmd, wait_for_server", SGLANG_UTILS)
    diagnosis = _rule(traceback)
    assert "launch_server_cmd from sglang.utils" in diagnosis.title
    assert "sglang_engine.py" in diagnosis.root_cause and "not by SGLang's own code" in diagnosis.root_cause
    assert diagnosis.fix is not None and "Install the SGLang release" in diagnosis.fix.summary
    assert not diagnosis.fix.flags and diagnosis.fix.command is None


def test_a_directory_named_after_the_engine_is_not_the_engine(tmp_path: Path) -> None:
    """A research repository's `src/vllm/sampler.py`: named after the engine, none of its source files."""
    traceback = _traceback(tmp_path, "top_nsigma/src/vllm/sampler.py", "from vllm.sequence import SamplerOutput", VLLM_SEQUENCE)
    diagnosis = _rule(traceback)
    assert "SamplerOutput from vllm.sequence" in diagnosis.title
    assert diagnosis.fix is not None and "updated to the installed vLLM's names" in diagnosis.fix.summary


def test_the_engine_importing_its_own_missing_name_is_not_another_program(tmp_path: Path) -> None:
    """The look-alike: the engine's own module importing from itself is its mixed install, not a caller's release."""
    files = {**VLLM_SEQUENCE, "vllm/engine/__init__.py": "",
             "vllm/engine/llm_engine.py": "from vllm.sequence import SamplerOutput\n"}
    traceback = _traceback(tmp_path, "serve.py", "import vllm.engine.llm_engine", files)
    assert first_diagnosis(traceback).pattern != "rule-caller-imports-engine-name"


def test_the_bare_line_says_nothing_of_who_imported(tmp_path: Path) -> None:
    """Read against the releases that have the name (tests/reasoning/test_engine_release_ranges.py), never a caller."""
    traceback = _traceback(tmp_path, "top_nsigma/src/vllm/sampler.py", "from vllm.sequence import SamplerOutput", VLLM_SEQUENCE)
    diagnosis = _rule(traceback.strip().splitlines()[-1] + "\n")
    assert "sampler.py" not in diagnosis.root_cause and "no frame of the import" in diagnosis.root_cause
