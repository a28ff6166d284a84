"""Module-level regexes compiled on first use (lazyre.py, issue 14 item 4: less CPU per diagnose)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import regex

from logsleuth.lazyre import compile_lazily, compile_lazily_regex

REPO = Path(__file__).resolve().parents[1]

# The modules whose module-level regexes are lazy.
LAZY_MODULES = (
    "logsleuth.tracebacks.grammar",
    "logsleuth.ingest.normalize",
    "logsleuth.ingest.launch",
    "logsleuth.redact",
    "logsleuth.command_line",
    "logsleuth.fixes.context",
    "logsleuth.fixes.builders",
    # and those made lazy with them (make test's CPU: every `logsleuth` child process imports them all)
    "logsleuth.reasoning.hardware_limits",
    "logsleuth.reasoning.dependencies",
    "logsleuth.reasoning.network",
    "logsleuth.reasoning.general",
    "logsleuth.check.words",
    "logsleuth.render.safety",
    "logsleuth.sources.ssh.openssh_log",
    "logsleuth.sources.ssh.config",
    "logsleuth.diff.extract",
    "logsleuth.case.errors",
)

# In a fresh interpreter: count the re/regex compiles each module makes while it is imported.
_COUNT_IMPORT_COMPILES = """
import json, re, sys, regex
counts = {}
def counting(real):
    def compile(pattern, flags=0, *args, **kwargs):
        caller = sys._getframe(1).f_globals.get("__name__", "?")
        counts[caller] = counts.get(caller, 0) + 1
        return real(pattern, flags, *args, **kwargs)
    return compile
re.compile, regex.compile = counting(re.compile), counting(regex.compile)
for name in sys.argv[1:]:
    __import__(name)
print(json.dumps(counts))
"""


def test_importing_compiles_no_regex_of_these_modules() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _COUNT_IMPORT_COMPILES, *LAZY_MODULES],
        capture_output=True, text=True, check=True, cwd=REPO,
    )
    counts = json.loads(proc.stdout)
    compiled_at_import = {module: n for module, n in counts.items() if module.startswith(LAZY_MODULES)}
    assert compiled_at_import == {}


def test_the_first_use_compiles_and_later_uses_are_the_real_methods() -> None:
    lazy = compile_lazily(r"(?P<word>\w+)=(?P<value>\d+)", re.ASCII)
    assert "search" not in vars(lazy)  # nothing compiled yet
    found = lazy.search("x a=12")
    assert found is not None and found.group("word", "value") == ("a", "12")
    real = re.compile(r"(?P<word>\w+)=(?P<value>\d+)", re.ASCII)
    assert vars(lazy)["search"].__self__ == real  # the bound method of the compiled pattern itself
    assert (lazy.pattern, lazy.flags, lazy.groupindex) == (real.pattern, real.flags, real.groupindex)
    assert lazy.sub(lambda m: m["word"].upper(), "a=1 b=2") == "A B"


def test_the_regex_engine_too() -> None:
    lazy = compile_lazily_regex(r"\p{Lu}+")
    assert lazy.findall("abc DEF gh IJ") == ["DEF", "IJ"]
    assert vars(lazy)["findall"].__self__ == regex.compile(r"\p{Lu}+")
