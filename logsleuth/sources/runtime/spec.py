"""Parse the runtime spellings of a source: `docker:CONTAINER`, `podman:CONTAINER`, `journal:UNIT`,
`HOST:docker:CONTAINER`, `HOST:podman:CONTAINER`, `HOST:journal:UNIT` and
`k8s:[CONTEXT:]NAMESPACE/POD[/CONTAINER]`, `k8s:[CONTEXT:]NAMESPACE/deploy/NAME`, `k8s:[CONTEXT:]NAMESPACE/lws/NAME`.

Pure string work, like sources/spec.py, whose `parse_remote_spec` reads the HOST part.  Precedence (docs/sources.md):
- a local file of that name wins, as in scp (`looks_runtime`); `./docker:web` always names a file;
- `gpu7:docker:web` is the container `web` on gpu7, not the remote file `docker:web`: a runtime keyword right after
  the host part wins.  The remote file is spelled `gpu7:./docker:web`.
- the Kubernetes context comes before the LAST colon: namespaces, pods and containers are DNS names and hold
  neither `:` nor `/`, while contexts often hold both (EKS ARNs, OpenShift's `ns/api-host:6443/user`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from logsleuth.errors import UsageError
from logsleuth.lazyre import compile_lazily
from logsleuth.sources.spec import RemoteSpec, parse_remote_spec, printable

CONTAINER_RUNTIMES = ("docker", "podman")
RUNTIMES = (*CONTAINER_RUNTIMES, "journal", "k8s")
_KEYWORD = compile_lazily(rf"^(?P<runtime>{'|'.join(RUNTIMES)}):(?P<target>.*)$", re.DOTALL)
# Docker's own rule for names (daemon/names: validContainerNamePattern), which an ID prefix meets too.  A leading
# letter or digit also keeps a name from being read as an option.
_CONTAINER = compile_lazily(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
# systemd unit names (systemd.unit(5)): letters, digits, ":-_.\" and "@" for templates.  journalctl -u takes a
# glob too, so "*?[]" are allowed; the first character may not be "-".
_UNIT = compile_lazily(r"[A-Za-z0-9:_.@\\*?\[\]][A-Za-z0-9:_.@\\*?\[\]-]{0,255}")
_DNS_LABEL = compile_lazily(r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?")  # namespace, container (RFC 1123 label)
_DNS_SUBDOMAIN = compile_lazily(r"(?=.{1,253}$)[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*")
# Workload kinds, spelled as kubectl spells them (`kubectl logs deploy/NAME`); every pod of one is read.
WORKLOADS = {"deploy": "deployment", "deployment": "deployment", "lws": "leaderworkerset", "leaderworkerset": "leaderworkerset"}


@dataclass(frozen=True, slots=True)
class PodTarget:
    """What a `k8s:` spec names: one pod (`pod` set) or every pod of a workload (`workload` and `name` set)."""

    namespace: str
    pod: str | None = None
    container: str | None = None
    workload: str | None = None  # "deployment" or "leaderworkerset"
    name: str | None = None  # the workload's name
    context: str | None = None  # a kubeconfig context; None for the current one


@dataclass(frozen=True, slots=True)
class RuntimeSpec:
    """The parts of a runtime source's spelling."""

    runtime: str  # "docker", "podman", "journal" or "k8s"
    target: str  # the container, the unit, or for k8s the text after `k8s:`
    spec: str  # as the user wrote it: the name of the source
    remote: RemoteSpec | None = None  # the host whose runtime to ask (its path is the runtime part); None: local
    pod: PodTarget | None = None  # for k8s


def parse_runtime_spec(spec: str) -> RuntimeSpec | None:
    """The runtime parts of `spec`, or None when it is not a runtime spelling (a path or `host:path`).

    Raises UsageError, one line, for a runtime spelling whose name is malformed."""
    if spec.startswith(("/", "./", "../", "~")) or "://" in spec:
        return None
    local = _KEYWORD.match(spec)
    if local:
        return _build(spec, local["runtime"], local["target"], None)
    remote = parse_remote_spec(spec)
    if remote is None:
        return None
    # The text the user wrote after the host part: the parsed path has `~/` removed, and `gpu7:~/docker:x` is a
    # file in the login directory, not a container.
    on_host = _KEYWORD.match(spec[len(remote.prefix) :])
    if on_host is None:
        return None
    return _build(spec, on_host["runtime"], on_host["target"], remote)


def looks_runtime(spec: str) -> bool:
    """A spec is a runtime source when it has a runtime spelling and no local file of that name exists (as in scp,
    and as `looks_remote` decides).  A malformed runtime spelling counts, so opening it reports the error."""
    if spec == "-" or os.path.exists(spec):
        return False
    try:
        return parse_runtime_spec(spec) is not None
    except UsageError:
        return True


def _build(spec: str, runtime: str, target: str, remote: RemoteSpec | None) -> RuntimeSpec:
    if runtime == "k8s":
        if remote is not None:
            _fail(spec, f"k8s sources use the local kubectl and kubeconfig; drop `{remote.prefix}`")
        return RuntimeSpec(runtime, target, spec, None, _pod_target(spec, target))
    if remote is None and target.startswith(("/", "~")):
        _fail(spec, f"a {runtime} source names no path; a file on a host called {runtime} is ssh://{runtime}/PATH")
    if runtime == "journal":
        _check(spec, _UNIT, target, "a systemd unit name (journal:UNIT, e.g. journal:sglang.service)")
    else:
        _check(spec, _CONTAINER, target, f"a container name or ID ({runtime}:CONTAINER, e.g. {runtime}:sglang)")
    return RuntimeSpec(runtime, target, spec, remote)


def _pod_target(spec: str, target: str) -> PodTarget:
    context, colon, path = target.rpartition(":")
    if colon and not context:
        _fail(spec, "empty kubeconfig context before `:`")
    if context.startswith("-"):
        _fail(spec, "a kubeconfig context cannot start with `-`")
    parts = path.split("/")
    usage = "k8s:[CONTEXT:]NAMESPACE/POD[/CONTAINER], or NAMESPACE/deploy/NAME or NAMESPACE/lws/NAME"
    if not 2 <= len(parts) <= 3 or not all(parts):
        _fail(spec, f"expected {usage}")
    _check(spec, _DNS_LABEL, parts[0], "a namespace (a lowercase DNS label)")
    if len(parts) == 3 and parts[1] in WORKLOADS:
        _check(spec, _DNS_SUBDOMAIN, parts[2], f"a {WORKLOADS[parts[1]]} name (a lowercase DNS name)")
        return PodTarget(parts[0], workload=WORKLOADS[parts[1]], name=parts[2], context=context or None)
    _check(spec, _DNS_SUBDOMAIN, parts[1], "a pod name (a lowercase DNS name)")
    container = parts[2] if len(parts) == 3 else None
    if container is not None:
        _check(spec, _DNS_LABEL, container, "a container name (a lowercase DNS label)")
    return PodTarget(parts[0], pod=parts[1], container=container, context=context or None)


def _check(spec: str, pattern: re.Pattern[str], value: str, what: str) -> None:
    if not pattern.fullmatch(value):
        shown = f"`{value}`" if value else "nothing"
        _fail(spec, f"{shown} is not {what}")


def _fail(spec: str, message: str) -> None:
    raise UsageError(printable(f"{spec}: {message}"))
