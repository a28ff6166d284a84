"""A checkpoint of a model family's version newer than the release implements (reasoning/model_versions.py, rule
rule-model-version-unsupported): the indexed releases that implement it, from facts/model_versions.json.

The refusals are the engines' own (the raise site index): vLLM's MiniCPMV.__new__ and SGLang's MiniCPMV.__init__
("Currently, MiniCPMV only supports versions {}. Got version: {}", vLLM up to 0.9.2 "… only supports versions 2.0,
2.5, and 2.6").  vLLM's GrokForCausalLM.__new__ ("Unsupported Grok version: {}") is not read: _get_grok_version
(grok1.py, 0.14.0 and 0.20.0) returns only the versions its dict holds, so no indexed release raises it (review 1 L3).
Tracebacks are real CPython's, from a site-packages tree laid out as vLLM's, the class written in our own code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logsleuth.facts.model_versions import versions_of
from tests.helpers import diagnose_without_patterns, traceback_of_installed

_MINICPMV = '''
_SUPPORT_VERSION = {(2, 0): object, (2, 5): object, (2, 6): object, (4, 0): object}


class MiniCPMV:
    def __new__(cls, version):
        instance_cls = _SUPPORT_VERSION.get(version)
        if instance_cls is None:
            supported_versions = ", ".join(f"{v[0]}.{v[1]}" for v in sorted(_SUPPORT_VERSION))
            raise ValueError(f"Currently, MiniCPMV only supports versions {supported_versions}. Got version: {version}")
'''


def _vllm_traceback(tmp_path: Path, module: str, source: str, call: str) -> str:
    run = traceback_of_installed(tmp_path, {f"vllm/model_executor/models/{module}.py": source},
                                 f"from vllm.model_executor.models.{module} import *\n{call}\n")
    assert run.returncode == 1 and "site-packages/vllm/model_executor/models/" in run.stderr
    return run.stderr


def test_a_newer_version_names_the_releases_that_implement_it(tmp_path: Path) -> None:
    log = _vllm_traceback(tmp_path, "minicpmv", _MINICPMV, "MiniCPMV((4, 5))")
    found = diagnose_without_patterns(log, engine_version="0.10.1.1")
    assert found.pattern == "rule-model-version-unsupported"
    assert found.category == "unsupported-architecture"
    assert found.evidence == ("MiniCPMV 4.5 is implemented by the indexed vLLM releases 0.11.0 to 0.34.0",)
    assert "vLLM 0.10.1.1" in found.root_cause
    assert "do not change it" in "\n".join(found.fix.steps if found.fix else ())


def test_the_installed_release_that_implements_it_leaves_the_rule_silent(tmp_path: Path) -> None:
    log = _vllm_traceback(tmp_path, "minicpmv", _MINICPMV, "MiniCPMV((4, 5))")
    assert diagnose_without_patterns(log, engine_version="0.11.2").pattern != "rule-model-version-unsupported"


def test_the_older_wording_alone_names_the_later_versions_of_the_engine_that_printed_it() -> None:
    # vLLM up to 0.9.2 wrote its list out and printed no version; SGLang never implemented 2.0, so it is not named.
    found = diagnose_without_patterns("ValueError: Currently, MiniCPMV only supports versions 2.0, 2.5, and 2.6\n")
    assert found.pattern == "rule-model-version-unsupported"
    assert found.evidence == ("the indexed vLLM releases that implement the MiniCPMV versions the message does not "
                              "list: 4.0: 0.10.1.1 to 0.34.0; 4.5: 0.11.0 to 0.34.0",)


def test_a_version_no_indexed_release_implements_offers_no_upgrade(tmp_path: Path) -> None:
    log = _vllm_traceback(tmp_path, "minicpmv", _MINICPMV, "MiniCPMV((4, 6))")
    found = diagnose_without_patterns(log)
    assert found.pattern == "rule-model-version-unsupported"
    assert found.evidence[0].startswith("no indexed vLLM release (up to ")
    assert "implements MiniCPMV 4.6" in found.evidence[0]


def test_another_unsupported_version_message_is_not_this_rule() -> None:
    # "Unsupported X version:" is many libraries' wording; Grok's own refusal cannot be raised by an indexed release
    found = diagnose_without_patterns("ValueError: Unsupported Grok version: grok9\n")
    assert found.pattern != "rule-model-version-unsupported"


def test_the_table_holds_what_the_engines_code_holds() -> None:
    # the versions vLLM 0.11.2's minicpmv.py dispatches (its _SUPPORT_VERSION keys, 2.0 to 4.5, read from the wheel
    # when this test was written) and 0.9.2's (no 4.0): the shipped table against those figures, not against the file
    table = versions_of("vllm", "MiniCPMV")
    assert sorted(v for v, presence in table.items() if presence.has("0.11.2")) == ["2.0", "2.5", "2.6", "4.0", "4.5"]
    assert not table["4.0"].has("0.9.2")
    shipped = json.loads((Path(__file__).parents[2] / "logsleuth/facts/model_versions.json").read_text())
    assert "MiniCPMV" in shipped["engines"]["sglang"]["families"]


def test_the_script_reads_the_dict_the_refusing_function_looks_up(monkeypatch: pytest.MonkeyPatch) -> None:
    # scripts/engine_index/model_versions.py: the keys of the dict a function both looks the version up in and raises
    # the refusal from; a version dict no refusal reads is not the family's.
    monkeypatch.syspath_prepend(str(Path(__file__).parents[2] / "scripts" / "engine_index"))
    from model_versions import family_versions  # type: ignore[import-not-found]

    source = _MINICPMV + "\n_OTHER_VERSIONS = {(9, 9): object}\n" + '''
_GROK_VERSIONS = {"grok1": object, "grok2": object}


def grok(version):
    instance_cls = _GROK_VERSIONS.get(version)
    if instance_cls is None:
        raise ValueError(f"Unsupported Grok version: {version}")
'''
    assert family_versions(source) == {"MiniCPMV": ["2.0", "2.5", "2.6", "4.0"], "Grok": ["grok1", "grok2"]}
