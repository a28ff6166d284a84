"""The committed diff fixtures are what the real SGLang produces today (`make_diff_fixtures.py --check`), and
their server_args lines are the engines' own dumps.  The first test runs both oracle venvs (`-m oracle`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from logsleuth.ingest.launch import parse_server_args
from tests.diff.conftest import FIXTURES

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "diff_fixtures" / "make_diff_fixtures.py"
ORACLE = Path.home() / ".cache" / "logsleuth" / "oracle"


@pytest.mark.oracle
def test_fixtures_match_a_fresh_run_of_the_real_engines() -> None:
    if not all((ORACLE / f"sglang-{version}" / ".ready").exists() for version in ("0.5.9", "0.5.23")):
        pytest.skip("the SGLang oracle venvs are not set up (scripts/oracle/setup.sh)")
    done = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr


def _dump(name: str) -> dict[str, str]:
    line = next(line for line in (FIXTURES / name).read_text().splitlines() if "server_args=" in line)
    return dict(parse_server_args(line.split("server_args=", 1)[1]))


def test_server_args_lines_are_each_releases_own_format() -> None:
    old, new = _dump("good-0.5.9.log"), _dump("bad-0.5.23.log")
    assert "ServerArgs(" in (FIXTURES / "good-0.5.9.log").read_text()  # 0.5.9: the dataclass repr
    assert "server_args={'model_path'" in (FIXTURES / "bad-0.5.23.log").read_text()  # 0.5.23: resolved_dict()
    assert len(old) > 300 and len(new) > 500
    assert "hierarchical_sparse_attention_extra_config" in old and "hisparse_config" in new
    # SGLang derives these itself, differently per release: only the command line says the user did not set them.
    assert old["mem_fraction_static"] != new["mem_fraction_static"]
