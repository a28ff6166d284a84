"""A KV connector name vLLM's connector registry does not have: the indexed releases that define it (issue 28: read
as an unclassified ValueError, with no release named).

vLLM looks the kv_connector of --kv-transfer-config up by name in its connector factory (the raise site index,
vllm/distributed/kv_transfer/kv_connector/factory.py): "Connector '{}' is not registered." (get_connector_class_by_name,
0.11.2 on) and "Unsupported connector type: {}" (create_connector and its helpers, 0.6.6.post1 on); 0.6.6's config
check "Unsupported kv_connector: {}. Supported connectors are {}.".  vLLM registers its
own V1 connectors under their class names (factory.py `register_connector("NixlConnector", "<module>",
"NixlConnector")`), so the releases whose connector modules define a class of that name are the releases that know the
connector (facts/engine_modules.json.gz, read from the released wheels).  A name no indexed release defines is another
package's connector (a plugin, LMCache's dynamic connector), found only when its module is imported in the process
that looks it up, or a name the older V0 engine registered for another class.

Threads: novitalabs/pegaflow#142 (PegaKVConnector, a plugin's connector, not registered in the API server process),
vllm-project/vllm-ascend#16930 (AscendOffloadingConnector: a plugin's class looked up by its class name).
"""

from __future__ import annotations

from logsleuth.facts.engine_modules import Presence, module_names, name_presence
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, Fix
from logsleuth.reasoning.evidence import Evidence, exception_lines

RULE_ID = "rule-kv-connector-not-registered"
CONNECTOR_PACKAGE = "vllm.distributed.kv_transfer.kv_connector"
# The encoder cache's connectors (ec_transfer/ec_connector/factory.py raises the same 'Unsupported connector type: {}').
EC_CONNECTOR_PACKAGE = "vllm.distributed.ec_transfer"
# A connector name is a class name: one word, bounded (linear on a 64 KiB line).
_REFUSAL = compile_lazily(
    r"\bConnector '(?P<quoted>[A-Za-z_]\w{0,200}+)' is not registered\b"
    r"|\bUnsupported (?:connector type|kv_connector): (?P<plain>[A-Za-z_]\w{0,200}+)\b"
)
SOURCES = (
    "vllm vllm/distributed/kv_transfer/kv_connector/factory.py (the raise site index): \"Connector '{}' is not "
    "registered.\" (0.11.2 to 0.34.0), 'Unsupported connector type: {}' (0.6.6.post1 to 0.34.0); register_connector "
    "registers each of vLLM's own V1 connectors under its class name",
    "facts/engine_modules.json.gz (scripts/engine_index/module_names.py): the names each indexed release's modules "
    "define, read from its wheel",
)


def kv_connector(evidence: Evidence) -> Diagnosis | None:
    """vLLM refusing a KV connector name: the indexed releases whose connector modules define it."""
    if evidence.launch.engine != "vllm":
        return None  # the message is vLLM's factory's; with no engine decided, the category row answers
    name = _refused_connector(evidence)
    if name is None:
        return None
    presence = connector_presence(name)
    if presence is None or _defined_in(name, EC_CONNECTOR_PACKAGE):
        return None  # no table, or an encoder-cache connector (its factory words its refusal alike)
    installed = evidence.launch.named_version
    if presence.in_none:
        return _in_no_release(evidence, name, presence)
    holds = presence.has(installed) if installed is not None else None
    if holds:
        return None  # the release defines it: the lookup failed for another reason (the category row's checks)
    # a release the index did not read is not said to lack it: only the indexed releases that have it are named
    return _in_other_releases(evidence, name, presence, installed if holds is False else None)


def connector_presence(name: str, package: str = CONNECTOR_PACKAGE) -> Presence | None:
    """The indexed vLLM releases in which a module of `package` defines a class `name` (None without the table)."""
    modules = [module for module in module_names("vllm") if module.startswith(package)]
    found = [presence for module in modules if (presence := name_presence("vllm", module, name)) is not None]
    if not found:
        return None
    indexed = found[0].indexed
    having = {version for presence in found for version in presence.having}
    return Presence("vllm", name, tuple(v for v in indexed if v in having), indexed)


def _defined_in(name: str, package: str) -> bool:
    presence = connector_presence(name, package)
    return presence is not None and bool(presence.having)


def _refused_connector(evidence: Evidence) -> str | None:
    for line in exception_lines(evidence.failure):
        if (found := _REFUSAL.search(line)) is not None:
            return found["quoted"] or found["plain"]
    return None


def _in_other_releases(evidence: Evidence, name: str, presence: Presence, installed: str | None) -> Diagnosis:
    spans = presence.spans()
    if installed is not None:
        cause = (f"vLLM {installed} has no KV connector named {name}: the indexed vLLM releases whose connector "
                 f"modules define it are {spans}, and the kv_connector of --kv-transfer-config must be one the "
                 "installed release registers.")
        summary = f"Name a connector vLLM {installed} has, or use a vLLM release that has {name}: {spans} (indexed releases)."
        facts = [f"{name} is defined by the indexed vLLM releases {spans}",
                 f"the installed vLLM {installed} does not define it"]
    else:
        cause = (f"The installed vLLM has no KV connector named {name}. The indexed vLLM releases whose connector "
                 f"modules define it are {spans}; the log does not name the installed release.")
        summary = f"Check the installed vLLM release (pip show vllm): {name} is in the indexed releases {spans}."
        facts = [f"{name} is defined by the indexed vLLM releases {spans}"]
    lacking = presence.lacking()
    steps = [f"the indexed vLLM releases that have {name} are {spans}"
             + (f"; those that lack it are {lacking}" if lacking else ""),
             "both instances (prefill and decode) must run releases that have the connector they name"]
    return _diagnosis(evidence, f"{name} is not a KV connector of this vLLM release", cause,
                      Fix(summary=summary, steps=tuple(steps)), facts)


def _in_no_release(evidence: Evidence, name: str, presence: Presence) -> Diagnosis:
    indexed = f"{presence.indexed[0]} to {presence.indexed[-1]}"
    cause = (f"No indexed vLLM release ({indexed}) defines a KV connector named {name}: it is not one of vLLM's own "
             "connectors (vLLM registers those under their class names), so it is another package's connector, found "
             "only when its module is imported in the process that looks the name up, or a name the older V0 engine "
             "registered for another class.")
    steps = ("a connector of another package must be imported in every vLLM process that looks it up (the API "
             "server's as well as the engine's): the package's own instructions say how it registers (a vLLM plugin "
             "entry point, or its module path given with the connector's name)",
             f"check that {name} is the name the package registers (a class may be registered under another name)")
    return _diagnosis(evidence, f"{name} is not one of vLLM's own KV connectors",
                      cause, Fix(summary=f"Make the package that provides {name} register it in every vLLM process, "
                                         "or name one of vLLM's own connectors.", steps=steps),
                      [f"no indexed vLLM release ({indexed}) defines a connector class {name}"])


def _diagnosis(evidence: Evidence, title: str, cause: str, fix: Fix, facts: list[str]) -> Diagnosis:
    return Diagnosis(pattern=RULE_ID, title=title, category="invalid-flag-value", root_cause=cause, fix=fix,
                     references=SOURCES, engine="vllm", engine_version=evidence.launch.engine_version, basis="rule",
                     evidence=tuple(facts))
