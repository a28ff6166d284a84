"""Raise sites of the packages the engines run (issue 29 item 5): flashinfer, sgl-kernel, xgrammar and transformers,
indexed from their released wheels like the engines (scripts/engine_index/), looked up from a traceback's innermost
frame of engine or package code when it is the package's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.facts.package_sites import versions_shown
from logsleuth.facts.raise_sites import engine_file, find
from logsleuth.models import LaunchInfo
from logsleuth.reasoning.package_site import package_site_of, sentences

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts" / "engine_index"))
from build import merged  # noqa: E402
from extract import sites  # noqa: E402

WILD = REPO / "tests" / "fixtures" / "wild"
PATTERNS = REPO / "tests" / "fixtures" / "patterns"
# sglang#6732: transformers' own KeyError for a model_type it does not know, at configuration_auto.py line 790.
UNKNOWN_MODEL_TYPE = WILD / "transformers-unknown-model-type" / "sgl-project-sglang-6732-command-then-log.log"
# A pattern fixture (scripts/pattern_fixtures, real CPython): a model path that is not there, transformers' OSError.
MODEL_PATH = PATTERNS / "sglang-model-path-not-found" / "positive-0.5.9.log"


def _raised_at(text: str, options: DiagnoseOptions | None = None) -> str:
    report = diagnose_text(text, options or DiagnoseOptions())
    return " ".join(report.failures[0].diagnosis.raised_at)  # type: ignore[union-attr]


def test_a_transformers_raise_is_placed_with_its_guard_and_releases() -> None:
    raised = _raised_at(UNKNOWN_MODEL_TYPE.read_text(encoding="utf-8"))
    assert "transformers' transformers/models/auto/configuration_auto.py:790, in _LazyConfigMapping.__getitem__" in raised
    assert "under `if key not in self._mapping`" in raised
    assert "Of the transformers releases indexed (4.51.1 to" in raised
    # Line 790 is no indexed release's: the release that ran is older than those read, and no other release's
    # line number is put in its place.
    assert "has this check at line 790: the release that ran is not one the index read" in raised
    assert "which was false" not in raised  # a raise, not an assert: no condition is said to be false


def test_a_check_later_releases_removed_is_placed_by_the_frames_line_under_an_env_named_after_the_engine() -> None:
    """QwenPaw#3084: vLLM 0.19.0 (transformers<5) loading a checkpoint whose tokenizer_config.json names transformers 5's
    TokenizersBackend; the conda env is called `vllm`, which is not vLLM's code."""
    log = WILD / "transformers-tokenizer-class-missing" / "agentscope-ai-QwenPaw-3084-command-then-log.log"
    raised = _raised_at(log.read_text(encoding="utf-8"))
    assert "transformers' transformers/models/auto/tokenization_auto.py:1153, in AutoTokenizer.from_pretrained" in raised
    assert "config_tokenizer_class is not None and tokenizer_class is None" in raised
    assert "this check is in 4.51.1 to 4.57.6" in raised  # transformers 5 has no such check: it knows the class
    assert "line numbers match transformers 4.57.6 only" in raised
    assert "pins" not in raised  # vLLM 0.19.0 pins transformers by a range: no version is said to be the pin


def test_only_what_follows_site_packages_names_the_package() -> None:
    path = "/root/miniforge3/envs/vllm/lib/python3.11/site-packages/transformers/models/auto/tokenization_auto.py"
    assert engine_file(path, "vllm") is None
    assert engine_file(path, "transformers") == "transformers/models/auto/tokenization_auto.py"
    assert engine_file("/sgl-workspace/sglang/python/sglang/srt/server_args.py", "sglang") == "sglang/srt/server_args.py"


def test_the_engine_release_pin_is_named_as_the_pin_and_a_line_it_lacks_is_said() -> None:
    raised = _raised_at(UNKNOWN_MODEL_TYPE.read_text(encoding="utf-8"), DiagnoseOptions(engine_version="0.4.6.post2"))
    assert "SGLang 0.4.6.post2 pins transformers==4.51.1 (the pin, not a version the log shows), which has this check" in raised
    assert "configuration_auto.py:831" in raised  # where 4.51.1 has it
    assert "The traceback shows line 790, where transformers 4.51.1 does not have it" in raised


def test_a_version_the_log_shows_is_used_before_the_pin() -> None:
    report = diagnose_text(MODEL_PATH.read_text(encoding="utf-8"))
    failure = report.failures[0].failure
    launch = LaunchInfo(engine="sglang", engine_version="0.5.9", engine_version_source="log",
                        package_lines=("[pip3] transformers==4.56.1",))
    found = package_site_of(failure, launch)
    assert found is not None and found.shown == "4.56.1" and found.pinned is None
    said = " ".join(sentences(found))
    assert "The log shows transformers 4.56.1, which has this check" in said
    assert "pins" not in said


def test_the_shapes_an_environment_dump_prints_a_version_in() -> None:
    lines = ["transformers                      4.57.1", "[pip3] flashinfer-python==0.2.5", "xgrammar: 0.1.25",
             "flashinfer_python: 0.2.5+cu124torch2.6", "sgl-kernel                0.3.21", "transformers version: 4.51.1",
             "from transformers_modules.foo import Bar 1.2", "loading transformers 12 files"]
    assert versions_shown(lines, "transformers") == ["4.57.1", "4.51.1"]
    assert versions_shown(lines, "flashinfer") == ["0.2.5"]
    assert versions_shown(lines, "xgrammar") == ["0.1.25"]
    assert versions_shown(lines, "sgl_kernel") == ["0.3.21"]


@pytest.mark.parametrize("log", [
    # sglang#8432: `from sgl_kernel import common_ops` failed to load the library: an import, not a check
    WILD / "sgl-kernel-undefined-symbol" / "sgl-project-sglang-8432-indentation-stripped.log",
    # sglang#14464: xgrammar's matcher calls into its C++ core, which raised
    WILD / "spec-decode-grammar-crash" / "sgl-project-sglang-14464-innermost-stripped.log",
    # sglang#5491: flashinfer's prefill calls a kernel that failed
    WILD / "flashinfer-cuda-error" / "sgl-project-sglang-5491-mixed-writers.log",
], ids=["sgl-kernel-import", "xgrammar-native-call", "flashinfer-kernel-call"])
def test_a_call_that_failed_in_a_package_gets_no_check(log: Path) -> None:
    report = diagnose_text(log.read_text(encoding="utf-8"))
    for group in report.failures:
        raised = " ".join(group.diagnosis.raised_at if group.diagnosis else ())
        assert not any(name in raised for name in ("sgl-kernel's", "XGrammar's", "FlashInfer's"))


def _package_index_opened(log: Path, package: str) -> bool:
    """Whether a diagnose of `log` opens `package`'s index (zip), from a cold start of every lookup cache that reads
    one: the reading stage's message lookups open the engines' indexes too, so a count of opened indexes would depend
    on which test ran before in the same worker."""
    from logsleuth.facts import engine_functions, engine_messages, raise_sites
    from logsleuth.reasoning import raise_site

    for module in (raise_sites, raise_site, engine_messages, engine_functions):
        for value in vars(module).values():
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()
    diagnose_text(log.read_text(encoding="utf-8"))
    hits = raise_sites._archive.cache_info().hits
    raise_sites._archive(package)  # a hit when the diagnose opened it
    return raise_sites._archive.cache_info().hits > hits


def test_a_packages_index_is_opened_only_when_a_frame_names_the_package() -> None:
    # the seed incident: SGLang's own assert, no package frame: transformers' index stays closed
    assert not _package_index_opened(REPO / "examples" / "eagle3-incident.log", "transformers")
    assert _package_index_opened(REPO / "examples" / "eagle3-incident.log", "sglang")
    assert _package_index_opened(UNKNOWN_MODEL_TYPE, "transformers")  # for the frame that raised


def test_a_package_frame_outside_an_indexed_file_finds_nothing() -> None:
    assert find("transformers", "/x/site-packages/transformers/models/llama/modeling_llama.py", "forward", 10,
                "raise ValueError(x)", None) is None  # models/ other than models/auto/ is left out
    assert find("transformers", "/x/site-packages/vllm/transformers_utils/config.py", "get_config", 10, "", None) is None


def _oracle_site_packages(release: str) -> Path:
    """An oracle venv's site-packages (`make oracle-setup` installs the real release there), or a skip."""
    root = next(Path.home().glob(f".cache/logsleuth/oracle/{release}/lib/python3*/site-packages"), None)
    if root is None:
        pytest.skip(f"the oracle venv {release} is not set up (make oracle-setup)")
    return root


@pytest.mark.oracle
def test_an_index_of_two_real_transformers_releases_knows_a_raise_and_its_lines() -> None:
    """Built from the transformers of two oracle venvs (SGLang 0.4.10.post2's 4.54.1, SGLang 0.5.9's 4.57.1)."""
    file = "transformers/configuration_utils.py"
    installed = {"4.54.1": _oracle_site_packages("sglang-0.4.10.post2"), "4.57.1": _oracle_site_packages("sglang-0.5.9")}
    per_release = {version: list(sites((root / file).read_text(encoding="utf-8"), file)) for version, root in installed.items()}
    entries = merged(tuple(installed), per_release)[file]
    missing = [e for e in entries if e["kind"] == "raise" and e["type"] == "OSError"
               and str(e["function"]).endswith("._get_config_dict") and "is_remote_url" in " ".join(e["guards"])]  # type: ignore[arg-type]
    assert missing, "the OSError for a path that is neither a file nor a URL is indexed"
    numbers = {n for e in missing for run in e["lines"] for n in range(run[0], run[1] + 1)}  # type: ignore[attr-defined]
    assert numbers == {0, 1}  # both releases hold it
