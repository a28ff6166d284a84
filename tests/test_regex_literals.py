"""The facts tables' regexes are compiled only for a text that may hold a match (lazyre.compile_gated, with the
literals of facts/regex_literals.json): a diagnose compiled all ~570 of them at every run before (~25 ms of CPU, the
largest cost of reasoning about one failure).  The gate may only ever skip a search that could not match."""

from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import regex

from logsleuth import reasoning
from logsleuth.facts import categories, divisibility, model_files
from logsleuth.lazyre import (
    compile_gated,
    compile_gated_regex,
    gated_engine,
    gated_patterns,
    is_gated,
    table_literals,
)

REPO = Path(__file__).resolve().parents[1]
WILD = REPO / "tests" / "fixtures" / "wild"


def test_the_literals_file_is_current() -> None:
    proc = subprocess.run([sys.executable, "scripts/facts/regex_literals.py", "--check"], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_the_table_regexes_and_the_rules_patterns_are_gated_with_literals() -> None:
    rows = [*categories.table().rows, *divisibility.divisibility_checks(), *model_files.model_file_messages()]
    patterns = gated_patterns(rows)
    assert len(patterns) > 500
    assert sum(is_gated(value) for module in _reasoning_modules() for value in vars(module).values()) > 100
    literals = table_literals()
    gated = [pattern for pattern in patterns if literals.get(pattern)]
    assert len(gated) > 0.95 * len(patterns)  # a few patterns the prefilter cannot read are always searched


def _table_regexes() -> list[tuple[object, re.Pattern[str] | regex.Pattern[str]]]:
    """Every gated table regex with the real compiled pattern it stands for."""
    pairs: list[tuple[object, re.Pattern[str] | regex.Pattern[str]]] = []
    for row in categories.table().rows:
        for patterns, flags in ((row.words, re.IGNORECASE), (row.strong_words, re.IGNORECASE),
                                (row.source_words, 0), (row.cause_words, re.IGNORECASE), (row.cut_frames, re.MULTILINE)):
            pairs += [(pattern, re.compile(pattern.pattern, flags)) for pattern in patterns]
        pairs += [(check.words, re.compile(check.words.pattern, re.IGNORECASE)) for check in row.checks_when]
    for check in divisibility.divisibility_checks():
        pairs.append((check.regex, regex.compile(check.regex.pattern)))
    for message in model_files.model_file_messages():
        pairs.append((message.regex, regex.compile(message.regex.pattern)))
    for module in _reasoning_modules():  # the rules' module-level patterns, gated the same way
        for value in vars(module).values():
            if is_gated(value):
                engine = regex if gated_engine(value) == "regex" else re
                pairs.append((value, engine.compile(value.pattern, value.flags)))
    return pairs


def _reasoning_modules() -> list[ModuleType]:
    return [importlib.import_module(f"logsleuth.reasoning.{info.name}")
            for info in pkgutil.iter_modules(reasoning.__path__)]


def _texts() -> list[str]:
    """Lines of the wild logs (real engines' messages), each line and each log's last 30 lines joined, and the
    case-folding corners of the gate: upper case, a Kelvin sign, a long s."""
    texts = []
    for log in sorted(WILD.rglob("*.log"))[:80]:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
        texts += lines[-30:]
        texts.append("\n".join(lines[-30:]))
    texts += [text.upper() for text in texts[:400]]
    texts += ["CUDA out of memory", "\u212aV cache", "out of memory: \u017fize", "NCCL error",
              "Address already in use: port 30000", "Unknown quantization method: 'fp5'. Must be one of ['fp8']",
              "AssertionError: assert self.total_num_heads % tp_size == 0"]
    return texts


def test_the_gate_answers_as_the_compiled_regex_does() -> None:
    texts = _texts()
    for gated, real in _table_regexes():
        for text in texts:
            got, want = gated.search(text), real.search(text)  # type: ignore[attr-defined]
            assert (got and got.span()) == (want and want.span()), (real.pattern, text[:200])


def test_a_text_without_the_literals_is_answered_without_compiling() -> None:
    gated = compile_gated_regex(r"(?P<heads>\d+) attention heads")
    gated._literals = (" attention heads",)  # type: ignore[attr-defined]  # as the literals file would give it
    assert gated.search("a line about something else") is None
    assert gated._compiled is None  # type: ignore[attr-defined]
    found = gated.search("32 attention heads")
    assert found is not None and found["heads"] == "32"


def test_ignorecase_literals_compare_folded_and_non_ascii_text_always_searches() -> None:
    gated = compile_gated(r"\bkv cache\b", re.IGNORECASE)
    gated._literals, gated._folded = ("kv cache",), True  # type: ignore[attr-defined]
    assert gated.search("not enough KV Cache") is not None
    assert gated.search("\u212aV cache") is not None  # re folds the Kelvin sign onto k: the gate must not rule it out
    assert gated.search("nothing here") is None
