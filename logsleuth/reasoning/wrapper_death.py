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

Ray's worker also logs that death in the driver's output under the actor's prefix, `Exception raised in creation task:
The actor died because …, ray::<Class>.__init__() (…)`, with the actor's traceback on the lines below and no
`Traceback (most recent call last):` line of its own (OpenRLHF/OpenRLHF#184, split 20's F-06: LLMRayActor over vLLM
0.2.2; vllm-project/vllm-ascend's RayWorkerWrapper; alpa's ProfileWorker).  A paste cut inside those frames has lost the
actor's exception line: the frames are that error's, and Ray's line above them says what died (the headline,
actor_death_headline).  When the actor is a wrapper's and its constructor reached the engine's code, the wrapper's
release against the engine's is a check: from pip's report of the wrapper's requirement when the log has one
(wrapper_pins.py), else what to compare, with no release named.
"""

from __future__ import annotations

import re

from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Failure
from logsleuth.reasoning.engine_api_calls import engine_of_frame
from logsleuth.reasoning.evidence import Evidence
from logsleuth.reasoning.wrapper_pins import release_alignment, wrapper_pin
from logsleuth.wording import article

_CREATION_TASK = compile_lazily(
    r"\bThe actor died because of an error raised in its creation task, ray::(?P<call>[A-Za-z_][\w.]{0,200}+)\(\)"
    r"(?: \(pid=(?P<pid>\d{1,10}+)(?:, ip=(?P<ip>[\w.:\-]{1,64}+))?)?")
# Ray's own exception types (ray/exceptions.py), bare or as RayTaskError(…) wrapping one: the wrapper's words only.
_RAY_TYPE = compile_lazily(r"(?:^|\.)(?:ActorDiedError|RayActorError|RayTaskError(?:\(\w+\))?)$")


# Ray's worker's record of it (`ERROR worker.py:… -- Exception raised in creation task: …`, or under the actor's prefix)
_CREATION_TASK_RECORD = compile_lazily(r"\bException raised in creation task: ")
# the lines of content above the cut frames Ray's record is read from: it is the line right above them
_RECORD_NEAR = 2
# Ray itself, which pins no engine release: its name as a wrapper says nothing of a release to fit.
_NO_ENGINE_PINS = frozenset({"Ray", "Ray Serve"})


def actor_death_above(failure: Failure) -> re.Match[str] | None:
    """Ray's record of an actor that died in its constructor, right above a traceback cut before its exception line."""
    final = failure.final
    if failure.kind != "traceback" or final.type or final.message or not final.frames:
        return None
    near = [line.strip() for line in failure.context if line.strip()][-_RECORD_NEAR:]
    return next((m for line in reversed(near) if _CREATION_TASK_RECORD.search(line)
                 and (m := _CREATION_TASK.search(line)) and m["call"].endswith(".__init__")), None)


def actor_death_headline(failure: Failure) -> str | None:
    """What died, for a cut traceback under Ray's record of an actor's failed constructor, else None."""
    found = actor_death_above(failure)
    if found is None:
        return None
    actor = found["call"].removesuffix(".__init__")
    return f"Ray actor {actor} died in its constructor (ray::{found['call']}()), its error's exception line cut"


def hidden_error_steps(evidence: Evidence) -> tuple[str, ...]:
    """Where the actor's own error is, when the failure is only Ray's word that the actor's constructor raised (or its
    traceback under that word, cut before the exception line)."""
    failure = evidence.failure
    if (above := actor_death_above(failure)) is not None:
        return _cut_under_actor_death(evidence, above)
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


def _worker_log(found: re.Match[str]) -> str:
    """Where Ray keeps the actor's output: its worker's .err file in the session logs of its node."""
    pid, ip = found["pid"], found["ip"]
    node = f" on its node ({ip})" if ip and ip not in ("0.0.0.0", "127.0.0.1") else " on its node"
    log_file = f"worker-*-{pid}.err" if pid else "worker-*.err"
    return (f"the actor's worker log{node}: {log_file} in Ray's session logs (/tmp/ray/session_latest/logs with Ray's "
            "default temporary directory)")


def _cut_under_actor_death(evidence: Evidence, found: re.Match[str]) -> tuple[str, ...]:
    """The frames below Ray's record are the actor's own error, cut: where its exception line is, and the wrapper's
    release against the engine's when the actor is a wrapper's that reached the engine's code."""
    actor = found["call"].removesuffix(".__init__")
    steps = [f"Ray's line above the frames reports that the actor {actor} raised an error in its constructor "
             f"({actor}.__init__); the frames below it are that error's traceback, cut before its exception line, "
             f"which names the error: it follows the last frame, and is also in {_worker_log(found)}."]
    failure, launch = evidence.failure, evidence.launch
    engine = next((own for frame in failure.final.frames if (own := engine_of_frame(frame.file))), None)
    wrapper = launch.wrapper
    if engine is None or wrapper is None or wrapper in _NO_ENGINE_PINS:
        return tuple(steps)
    name = ENGINE_NAMES[engine]
    version = launch.engine_version if launch.engine in (engine, None) else None
    installed = f"{name} {version}" if version else f"the installed {name}"
    pin = wrapper_pin([*failure.context, *evidence.lines, *evidence.earlier], engine)
    if pin is not None:
        steps.extend(release_alignment(pin, engine, version, wrapper)[0])  # the one wording of a pin (wrapper_pins)
    else:  # (release_alignment has only a question then; the actor's frames say where the engine was reached)
        which = "" if version else f" (pip show {engine})"
        steps.append(f"General guidance: the actor's constructor reached {installed}'s own initialisation (the frames "
                     f"above the cut), and {article(wrapper)} {wrapper} release is made for certain {name} releases "
                     f"(its requirements: pip show of its package, Requires:): check that {installed}{which} is one the "
                     f"installed {wrapper} release supports, and install the {name} release it pins if not; an engine "
                     f"release outside them fails in its initialisation.")
    return tuple(steps)
