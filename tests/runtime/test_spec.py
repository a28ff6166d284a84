"""The runtime spellings of a source (sources/runtime/spec.py): pure string work, no runtime needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.errors import ExitStatus, UsageError
from logsleuth.sources.runtime.spec import PodTarget, looks_runtime, parse_runtime_spec


@pytest.mark.parametrize(
    ("spec", "runtime", "target", "host"),
    [
        ("docker:sglang", "docker", "sglang", None),
        ("docker:3f2a9c1b7d", "docker", "3f2a9c1b7d", None),
        ("podman:sglang-0.worker_1", "podman", "sglang-0.worker_1", None),
        ("journal:sglang.service", "journal", "sglang.service", None),
        ("journal:sglang@0", "journal", "sglang@0", None),
        ("gpu7:docker:web", "docker", "web", "gpu7"),
        ("alice@gpu7:2222:podman:web", "podman", "web", "gpu7"),
        ("[::1]:journal:sglang", "journal", "sglang", "::1"),
        ("gpu7:journal:sglang.service", "journal", "sglang.service", "gpu7"),
    ],
)
def test_container_and_unit_forms(spec: str, runtime: str, target: str, host: str | None) -> None:
    parsed = parse_runtime_spec(spec)
    assert parsed is not None
    assert (parsed.runtime, parsed.target, parsed.spec) == (runtime, target, spec)
    assert (parsed.remote.host if parsed.remote else None) == host


def test_remote_form_keeps_user_and_port() -> None:
    parsed = parse_runtime_spec("alice@gpu7:2222:docker:web")
    assert parsed is not None and parsed.remote is not None
    assert (parsed.remote.user, parsed.remote.port) == ("alice", 2222)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("k8s:serving/sglang-0", PodTarget("serving", pod="sglang-0")),
        ("k8s:serving/sglang-0/server", PodTarget("serving", pod="sglang-0", container="server")),
        ("k8s:prod:serving/sglang-0", PodTarget("serving", pod="sglang-0", context="prod")),
        (
            "k8s:arn:aws:eks:us-west-2:123456789012:cluster/gpu:serving/sglang-0/server",
            PodTarget("serving", pod="sglang-0", container="server", context="arn:aws:eks:us-west-2:123456789012:cluster/gpu"),
        ),
        ("k8s:serving/deploy/sglang", PodTarget("serving", workload="deployment", name="sglang")),
        ("k8s:serving/deployment/sglang", PodTarget("serving", workload="deployment", name="sglang")),
        ("k8s:serving/lws/sglang-multinode", PodTarget("serving", workload="leaderworkerset", name="sglang-multinode")),
        ("k8s:dev:serving/lws/sglang", PodTarget("serving", workload="leaderworkerset", name="sglang", context="dev")),
    ],
)
def test_k8s_forms(spec: str, expected: PodTarget) -> None:
    parsed = parse_runtime_spec(spec)
    assert parsed is not None and parsed.runtime == "k8s" and parsed.remote is None
    assert parsed.pod == expected


@pytest.mark.parametrize(
    "spec",
    ["/var/log/sglang.log", "./docker:web", "../docker:web", "~/docker:web", "server.log", "gpu7:/var/log/x.log",
     "gpu7:./docker:web", "gpu7:~/docker:web", "ssh://gpu7/docker:web", "gpu7:logs/docker:web", "-"],
)
def test_paths_and_remote_paths_are_not_runtime_sources(spec: str) -> None:
    assert parse_runtime_spec(spec) is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("docker:", "docker:: nothing is not a container name or ID (docker:CONTAINER, e.g. docker:sglang)"),
        ("docker:-f", "docker:-f: `-f` is not a container name or ID (docker:CONTAINER, e.g. docker:sglang)"),
        ("docker:web;rm", "docker:web;rm: `web;rm` is not a container name or ID (docker:CONTAINER, e.g. docker:sglang)"),
        ("docker:/var/log/x", "docker:/var/log/x: a docker source names no path; a file on a host called docker is ssh://docker/PATH"),
        ("gpu7:podman:a b", "gpu7:podman:a b: `a b` is not a container name or ID (podman:CONTAINER, e.g. podman:sglang)"),
        ("journal:--since=today", "journal:--since=today: `--since=today` is not a systemd unit name (journal:UNIT, e.g. journal:sglang.service)"),
        ("gpu7:journal:", "gpu7:journal:: nothing is not a systemd unit name (journal:UNIT, e.g. journal:sglang.service)"),
        ("k8s:serving", "k8s:serving: expected k8s:[CONTEXT:]NAMESPACE/POD[/CONTAINER], or NAMESPACE/deploy/NAME or NAMESPACE/lws/NAME"),
        ("k8s:a/b/c/d", "k8s:a/b/c/d: expected k8s:[CONTEXT:]NAMESPACE/POD[/CONTAINER], or NAMESPACE/deploy/NAME or NAMESPACE/lws/NAME"),
        ("k8s:serving//x", "k8s:serving//x: expected k8s:[CONTEXT:]NAMESPACE/POD[/CONTAINER], or NAMESPACE/deploy/NAME or NAMESPACE/lws/NAME"),
        ("k8s:Serving/web", "k8s:Serving/web: `Serving` is not a namespace (a lowercase DNS label)"),
        ("k8s:serving/Web_0", "k8s:serving/Web_0: `Web_0` is not a pod name (a lowercase DNS name)"),
        ("k8s:serving/web/Main", "k8s:serving/web/Main: `Main` is not a container name (a lowercase DNS label)"),
        ("k8s:serving/lws/-x", "k8s:serving/lws/-x: `-x` is not a leaderworkerset name (a lowercase DNS name)"),
        ("k8s::serving/web", "k8s::serving/web: empty kubeconfig context before `:`"),
        ("k8s:--kubeconfig=/x:serving/web", "k8s:--kubeconfig=/x:serving/web: a kubeconfig context cannot start with `-`"),
        ("gpu7:k8s:serving/web", "gpu7:k8s:serving/web: k8s sources use the local kubectl and kubeconfig; drop `gpu7:`"),
        ("docker:web\x1b[2J", "docker:web\\x1b[2J: `web\\x1b[2J` is not a container name or ID (docker:CONTAINER, e.g. docker:sglang)"),
    ],
)
def test_bad_forms_are_one_line_usage_errors(spec: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_runtime_spec(spec)
    assert str(caught.value) == message
    assert "\n" not in str(caught.value)
    assert caught.value.exit_status == ExitStatus.USAGE == 2


def test_a_local_file_of_that_name_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert looks_runtime("docker:web")
    (tmp_path / "docker:web").write_text("a local log\n")
    assert not looks_runtime("docker:web")


def test_malformed_runtime_spelling_still_counts_as_runtime() -> None:
    assert looks_runtime("docker:-f")  # opening it reports the bad name, not "no such file"
    assert not looks_runtime("/var/log/x.log")
    assert not looks_runtime("-")


def test_fleet_host_ranges_expand_into_runtime_sources() -> None:
    from logsleuth.sources.fleet import expand_sources

    expanded = expand_sources(["node[1-2]:docker:sglang", "gpu7:journal:sglang.service"])
    parsed = [parse_runtime_spec(spec) for spec in expanded]
    assert [(p.remote.host if p and p.remote else None, p.target if p else None) for p in parsed] == [
        ("node1", "sglang"), ("node2", "sglang"), ("gpu7", "sglang.service")
    ]
