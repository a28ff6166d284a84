"""A source spec's kind is decided once, where the command line's sources are expanded (issue 30: the spec was a
string that every module classified again)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth import api
from logsleuth.sources import source_spec as module
from logsleuth.sources.fleet import expand_sources
from logsleuth.sources.open import is_remote, is_runtime, read_concurrently
from logsleuth.sources.source_spec import SourceSpec, source_spec

CRASH = (Path(__file__).resolve().parent / "fixtures" / "sglang" / "0.5.9" / "chunked_prefill_not_multiple_of_page_size.log")


@pytest.mark.parametrize(
    ("text", "kind", "remote"),
    [
        ("-", "stdin", False),
        ("/var/log/sglang.log", "local", False),
        ("server.log", "local", False),
        ("gpu7:/var/log/sglang.log", "remote", True),
        ("me@gpu7:2222:/x.log", "remote", True),
        ("ssh://me@gpu7/x.log", "remote", True),
        ("docker:web", "runtime", False),
        ("journal:sglang", "runtime", False),
        ("k8s:ns/pod", "runtime", False),
        ("gpu7:docker:web", "runtime", True),  # a container on gpu7: a runtime's log, read over SSH
    ],
)
def test_each_spelling_has_its_kind(text: str, kind: str, remote: bool) -> None:
    spec = source_spec(text)
    assert spec == text and isinstance(spec, str)
    assert spec.kind == kind
    assert is_remote(spec) is remote
    assert is_runtime(spec) is (kind == "runtime")
    assert read_concurrently(spec) is (kind in ("remote", "runtime"))


def test_a_local_file_wins_over_a_remote_spelling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gpu7:x.log").write_text("hello\n")
    assert source_spec("gpu7:x.log").kind == "local"


def test_the_kind_is_decided_where_the_sources_are_expanded_and_never_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    names = ["node:a.log", "node:b.log"]  # local files whose names look remote: the full test runs for each
    for name in names:
        (tmp_path / name).write_bytes(CRASH.read_bytes())
    calls: list[str] = []
    real = module._kind_of
    monkeypatch.setattr(module, "_kind_of", lambda text: calls.append(text) or real(text))
    specs = expand_sources(names)
    assert all(isinstance(spec, SourceSpec) and spec.kind == "local" for spec in specs)
    report = api.diagnose(specs)
    assert report.failures and [source.name for source in report.sources] == names
    assert calls == names  # once each, at expansion; the api and the sources reuse the kind
