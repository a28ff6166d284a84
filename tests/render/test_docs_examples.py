"""docs/report-formats.md shows real output: each example block is what the tool prints now.

Refreshed with the golden files: LOGSLEUTH_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/render
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from logsleuth.__main__ import main

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "report-formats.md"
README = REPO / "README.md"
# The project's own logs, made from real SGLang runs (scripts/oracle/make_fixtures.py).
INCIDENT_LOG = REPO / "examples" / "eagle3-incident.log"
SECOND_LOG = REPO / "tests" / "fixtures" / "sglang" / "0.5.9" / "invalid_dtype_fp16.log"
COMMAND = (
    "python -m sglang.launch_server --model-path /m --speculative-algorithm EAGLE3 "
    "--speculative-draft-model-path /d --speculative-num-draft-tokens 16 --speculative-eagle-topk 1"
)
# example name -> (logsleuth arguments, fence info string)
# (--width 80: what a pipe or a file gets when $COLUMNS is not set, here set whatever the environment says.)
EXAMPLES = {
    "rich": (["server.log", "--cmd", COMMAND, "--format", "rich", "--width", "80"], "text"),
    "text": (["server.log", "--cmd", COMMAND, "--format", "text", "--width", "80"], "text"),
    "markdown": (["server.log", "--cmd", COMMAND, "--format", "markdown"], "markdown"),
    "slack": (["server.log", "--cmd", COMMAND, "--format", "slack"], "text"),
    "json": (["server.log", "--cmd", COMMAND, "--format", "json", "--host", "gpu7"], "json"),
    "multi-text": (["server.log", "node2.log", "--format", "text", "--width", "80"], "text"),
}
MARKED = re.compile(r"(<!-- example:(?P<name>[\w-]+) [^\n]*-->\n)(?P<block>.*?)(\n<!-- /example -->)", re.S)



def fenced(text: str, info: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.rstrip()}\n{fence}"


def generate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    shutil.copy(INCIDENT_LOG, tmp_path / "server.log")
    shutil.copy(SECOND_LOG, tmp_path / "node2.log")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TZ", "UTC")  # the JSON report names the machine's zone: the docs show UTC
    time.tzset()
    blocks = {}
    for name, (args, info) in EXAMPLES.items():
        main(["diagnose", *args, "--output", "out"])  # --output: no colour, as the docs show it
        blocks[name] = fenced((tmp_path / "out").read_text(), info)
    monkeypatch.undo()
    time.tzset()
    return blocks


@pytest.mark.parametrize(("path", "required"), [(DOC, set(EXAMPLES)), (README, set(EXAMPLES) - {"multi-text"})],
                         ids=["report-formats", "readme"])
def test_doc_examples_are_current(
    path: Path, required: set[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = generate(tmp_path, monkeypatch)
    doc = path.read_text(encoding="utf-8")
    assert {m["name"] for m in MARKED.finditer(doc)} == required
    if os.environ.get("LOGSLEUTH_UPDATE_GOLDEN") == "1":
        path.write_text(MARKED.sub(lambda m: m[1] + expected[m["name"]] + m[4], doc), encoding="utf-8")
        return
    for match in MARKED.finditer(doc):
        assert match["block"] == expected[match["name"]], f"example {match['name']} in {path.name} is stale"
