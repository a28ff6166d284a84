"""A wrapper's word that the actor running the engine died in its constructor, with the actor's own error not in the
paste (issue 28: such a report gave the wrapper's line general checks, never where the real error is).

Ray's ActorDiedError for an actor whose creation task raised (python/ray/exceptions.py: "The actor died because of an
error raised in its creation task, ray::<Class>.__init__() (pid=…, ip=…, actor_id=…, repr=…)") carries the actor's
traceback in its message, below that first line; a paste that stops at the first line has lost the one error that
says what failed (the engine's initialisation, most often).  That error is also in the actor's worker output on its
node: Ray's session log directory (`/tmp/ray/session_latest/logs` with Ray's default temp dir), in the worker's
`worker-<worker id>-<job id>-<pid>.err`.  Threads: OpenRLHF/OpenRLHF#358 (LLMRayActor, vLLM inside), GuanxingLu/vlarl#8
(VLARayActor, vLLM inside), ray-project/ray#54739 (Ray Serve LLM's _EngineBackgroundProcess: the hidden error was an
AttributeError of the engine's initialisation).

A failure whose chain shows the actor's error is read from that error (the traceback's own exceptions); one whose log
shows an engine error before it is led by that error (the failure grouping ranks a wrapper's death after the error it
reports): neither gets this step.  Ray's own print puts the actor's traceback below its line, and the reader takes that
traceback for the next failure of the log: when the log's next failure is not Ray's, the step names that error as the
one to follow instead of saying the paste lacks it (REVIEW5 H1).
"""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily
from logsleuth.reasoning.evidence import Evidence

_CREATION_TASK = compile_lazily(
    r"\bThe actor died because of an error raised in its creation task, ray::(?P<call>[A-Za-z_][\w.]{0,200}+)\(\)"
    r"(?: \(pid=(?P<pid>\d{1,10}+)(?:, ip=(?P<ip>[\w.:\-]{1,64}+))?)?")
# Ray's own exception types (ray/exceptions.py), bare or as RayTaskError(…) wrapping one: the wrapper's words only.
_RAY_TYPE = compile_lazily(r"(?:^|\.)(?:ActorDiedError|RayActorError|RayTaskError(?:\(\w+\))?)$")


def hidden_error_steps(evidence: Evidence) -> tuple[str, ...]:
    """Where the actor's own error is, when the failure is only Ray's word that the actor's constructor raised."""
    failure = evidence.failure
    if any(not _RAY_TYPE.search(block.type or "") for block in failure.exceptions):
        return ()  # the chain holds another exception: the actor's own error, read as the failure
    found = next((m for block in failure.exceptions if (m := _CREATION_TASK.search(block.message or ""))), None)
    if found is None or not found["call"].endswith(".__init__"):
        return ()
    actor, pid, ip = found["call"].removesuffix(".__init__"), found["pid"], found["ip"]
    node = f" on its node ({ip})" if ip and ip not in ("0.0.0.0", "127.0.0.1") else " on its node"
    log_file = f"worker-*-{pid}.err" if pid else "worker-*.err"
    reported = (f"Ray's line only reports that the actor {actor} raised an error in its constructor ({actor}.__init__, "
                f"the engine's initialisation when the actor runs the engine); that error, not Ray's line, is the "
                f"failure to diagnose.")
    shown = _error_printed_next(evidence)
    if shown is not None:
        # Ray prints the actor's traceback right below its line; the reader takes it for a failure of its own.
        return (f"{reported} Ray prints the actor's traceback right below its line, and the error printed next in "
                f"this log is {shown!r}, reported as its own failure in this report: unless another process printed "
                f"it, that is the actor's error, and its diagnosis is the one to follow.",)
    return (
        f"{reported} The paste does not show it (no error follows Ray's line). Ray prints its traceback right below "
        f"this line; it is also in the actor's worker log{node}: {log_file} in Ray's session logs "
        f"(/tmp/ray/session_latest/logs with Ray's default temporary directory).",
    )


def _error_printed_next(evidence: Evidence) -> str | None:
    """The last `Type: message` of the failure the log printed next, unless it too is only Ray's word."""
    following = [line for line in evidence.following if not _RAY_TYPE.search(line.partition(":")[0])]
    if not following:
        return None
    last = following[-1]
    return last if len(last) <= 200 else last[:200] + "…"
