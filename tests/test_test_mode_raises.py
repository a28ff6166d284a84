"""SGLang's warnings that its CI raises (scripts/engine_index/build.py TEST_MODE_GUARDS): `logger.warning(msg)` then
`if crash_on_warnings(): raise ValueError(msg)` (crash_on_warnings() is SGLANG_IS_IN_CI; the model registry's "Ignore
import error when loading …" in sglang/srt/model_executor/model_runner.py of 0.3-0.4, the sampler's NaN check in
sglang/srt/layers/sampler.py).  In a user's run the words are a warning: a paste whose last record says them holds
no failure (stop 40's spent blind split: a clean paste of that warning, one record per rank, was reported as a
ValueError once older releases joined the index)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.facts.engine_messages import raised_as

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts" / "engine_index"))
from build import raised_only_in_ci  # noqa: E402
from extract import sites  # noqa: E402

OPTIONS = DiagnoseOptions(include_user_patterns=False)

REGISTRY = '''
def import_model_classes():
    for name in names:
        try:
            module = importlib.import_module(name)
        except Exception as e:
            logger.warning(f"Ignore import error when loading {name}. {e}")
            if crash_on_warnings():
                raise ValueError(f"Ignore import error when loading {name}. {e}")
            continue
        if strict:
            raise ValueError(f"Unsupported architecture {name}")
'''


def test_a_raise_only_the_engines_ci_reaches_is_told_apart() -> None:
    found = {site.message: raised_only_in_ci(site) for site in sites(REGISTRY, "sglang/srt/models/registry.py")
             if site.kind == "raise"}
    assert found == {"Ignore import error when loading {}. {}": True, "Unsupported architecture {}": False}


def test_the_index_does_not_file_the_warnings_words_as_raised() -> None:
    assert raised_as("Ignore import error when loading sglang.srt.models.foo. No module named 'bar'") is None


@pytest.mark.parametrize("ranks", [1, 4])
def test_a_paste_ending_in_that_warning_holds_no_failure(ranks: int) -> None:
    records = "".join(f"[2025-03-01 10:00:0{rank} TP{rank}] Ignore import error when loading sglang.srt.models.foo. "
                      "No module named 'bar'\n" for rank in range(ranks))
    report = diagnose_text("[2025-03-01 09:59:59] server_args=ServerArgs(model_path='/m')\n" + records, OPTIONS)
    assert not report.failures
