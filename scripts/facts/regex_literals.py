"""Write logsleuth/facts/regex_literals.json: for each regex of the facts tables (categories.toml's words and frames,
divisibility.toml's and model_files.toml's messages), each module-level `compile_lazily_regex` pattern and the
reasoning rules' `compile_lazily` ones, the literals one of which every match holds (diagnosis/prefilter.py).  A run
reads them instead of scanning the patterns, and compiles such a regex only for a text that holds one
(lazyre.compile_gated): ~740 regexes, ~570 of them compiled at every run before, are then mostly never compiled.
`--check`: exit 1 when the file is not what this would write (tests/test_regex_literals.py).

    python scripts/facts/regex_literals.py [--check]
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # this checkout's logsleuth, not the one the venv installed

from logsleuth.diagnosis.prefilter import required_literals  # noqa: E402
from logsleuth.facts import categories, divisibility, model_files  # noqa: E402
from logsleuth.lazyre import gated_patterns, lazy_patterns  # noqa: E402

OUT = ROOT / "logsleuth" / "facts" / "regex_literals.json"


def table_patterns() -> list[str]:
    """Every gated regex the facts tables hold, each once, sorted."""
    rows: list[object] = [
        *categories.table().rows, *divisibility.divisibility_checks(), *model_files.model_file_messages(),
    ]
    return sorted(set(gated_patterns(rows)))


def module_patterns() -> list[str]:
    """The module-level `compile_lazily_regex` patterns of every module that calls it, and the `compile_lazily` ones of
    the reasoning rules (read once per failure; the line grammar's, read on every line, stay ungated: a gate is one
    more Python call per search)."""
    found: set[str] = set()
    for path in sorted((ROOT / "logsleuth").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        if "compile_lazily_regex(" in text and path.name != "lazyre.py":
            found.update(lazy_patterns(importlib.import_module(name), "regex"))
        if "compile_lazily(" in text and path.parent.name == "reasoning":
            found.update(lazy_patterns(importlib.import_module(name), "re"))
    return sorted(found)


def literals_text() -> str:
    found = {pattern: list(literals) if (literals := required_literals(pattern)) is not None else None
             for pattern in sorted({*table_patterns(), *module_patterns()})}
    lines = [f"{json.dumps(pattern, ensure_ascii=False)}: {json.dumps(literals, ensure_ascii=False)}"
             for pattern, literals in found.items()]
    return "{\n" + ",\n".join(lines) + "\n}\n"  # one pattern a line: a table's edit is a readable diff


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether the file is current")
    args = parser.parse_args()
    text = literals_text()
    if args.check:
        current = OUT.exists() and OUT.read_text(encoding="utf-8") == text
        if not current:
            print(f"{OUT} is stale: run `make regex-literals`", file=sys.stderr)
        return 0 if current else 1
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
