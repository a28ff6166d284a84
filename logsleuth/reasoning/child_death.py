"""The engine's parent-side word that a process it started died, with that process's own error not in the paste (issue
28, stop 56: such a report defaulted to the OOM killer, which the paste gave no sign of).

SGLang's launcher reads each scheduler's pipe for its ready message and finds it closed: `scheduler_pipe_readers[i]
.recv()` raises EOFError in multiprocessing's connection (sglang/srt/entrypoints/engine.py _launch_subprocesses, 0.4.x
on; _wait_for_scheduler_ready from 0.5.x, which logs "Rank N scheduler is dead" / "scheduler died during
initialization" first); vLLM's API server raises "Engine core initialization failed. See root cause above."
(vllm/v1/engine/utils.py wait_for_engine_startup, 0.8 on).  Those lines only say the child is gone.  Its own error is
printed by the child itself above them (its rank or process name in front) or in its own output; with none printed,
what ended it is read from the paste's evidence: a kill (exit code -9, SIGKILL, `Killed`, the OOM killer's words) or a
crash signal (-11, -6, a segmentation fault), and without either a crash in the child, most often a kernel or plugin
package that does not fit the engine (kvcache-ai/ktransformers#1658: kt-kernel against SGLang's mainline, the child's
error not pasted; kvcache-ai/ktransformers#2128: a segfault in a CPU expert kernel), not the OOM killer.
"""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily
from logsleuth.reasoning.evidence import Evidence, exception_lines

# The parent's own words or frames (the row process-killed "a process the engine started that died" reads the same)
_PARENT_WORDS = compile_lazily(
    r"scheduler is dead|scheduler died during initialization|Engine core initialization failed|See root cause above"
    r"|WorkerProc initialization failed|Engine process failed to start|Initialization failed\. Please see the error")
# SGLang's death records whose exit code is logged on a record of its own (`Exit code: -9`, engine.py
# _launch_subprocesses), which the failure's lines may not keep; vLLM's message and SGLang's later one carry it
# ("Failed core proc(s): {'EngineCore_0': -9}", "died during initialization (exit code: -9)")
_EXIT_LOGGED_APART = compile_lazily(r"scheduler is dead|Initialization failed\. Please see the error")
# SGLang's hint after the exit code, a conditional that names the OOM killer whatever the code was (engine.py
# _wait_for_scheduler_ready: "If exit code is -9 (SIGKILL), a common cause is the OS OOM killer. Run `dmesg -T | grep -i
# oom` to check."; sgl-project/sglang#23602: exit code 255): no evidence of a kill
_IF_KILLED = compile_lazily(r"If exit code is -9 \(SIGKILL\)[^.]{0,200}\.(?:\s*Run `[^`]{0,80}` to check\.)?")
_PIPE_READ = ("scheduler_pipe_readers", "_wait_for_scheduler_ready", "wait_for_engine_startup", "_recv_bytes")
# What the paste may show of how the child ended: a kill from outside, or a crash signal
_KILLED = compile_lazily(
    r"(?i)exit ?code:? ?-9\b|exitcode: ?-9\b|\bSIGKILL\b|\bsignal 9\b|^\s*Killed\s*$|\boom[- ]?kill|OOMKilled"
    r"|out of memory: killed process|proc\(s\): \{[^}]{0,200}:\s*-9\b")
_CRASHED = compile_lazily(
    r"(?i)exit ?code:? ?-(?:11|6|7|8)\b|exitcode: ?-(?:11|6)\b|\bSIG(?:SEGV|ABRT|BUS|FPE)\b|Segmentation fault"
    r"|core dumped|Fatal Python error|terminate called|proc\(s\): \{[^}]{0,200}:\s*-(?:11|6)\b")


def parent_side_death(evidence: Evidence) -> bool:
    """The failure is only the parent's word that a child died (its read of the closed pipe, or its death message),
    with no failure of the child's printed before it in the paste, and not SGLang's death record whose exit code is
    logged apart."""
    failure = evidence.failure
    # The engine's own death record ("Rank N scheduler is dead", above the traceback or as its message) is logged
    # beside the child's exit code, which the failure's lines do not always keep (gpustack/gpustack#3848: "Exit code:
    # -9" on the next record): the row's own checks, which read that code, stay for it.
    logged_apart = any(_EXIT_LOGGED_APART.search(line) for line in (*exception_lines(failure), *failure.context))
    said = any(_PARENT_WORDS.search(line) for line in exception_lines(failure))
    read = any(any(site in (frame.source or "") or site == frame.function for site in _PIPE_READ)
               for frame in failure.final.frames)
    return (read or said) and not logged_apart and not evidence.earlier


def child_death_checks(evidence: Evidence) -> tuple[str, ...]:
    """The checks for a parent-side death report whose child's error is absent, led by what the paste shows of how
    the child ended; () when the failure is not one."""
    if not parent_side_death(evidence):
        return ()
    lines = [_IF_KILLED.sub("", line) for line in (*evidence.failure.context, *evidence.lines,
                                                   *exception_lines(evidence.failure))]
    absent = ("The paste shows only the parent's side: the launcher found the pipe to a process it started (a scheduler, "
              "an engine core) closed, or was told it died. That process's own error is not in the paste: it prints it "
              "itself, in the lines above the parent's traceback (often with its rank, TP0, or 'Scheduler hit an "
              "exception' / 'EngineCore' in front), or in its own output (the container's log, a log file the "
              "launcher wrote, the wrapper's log). Those lines name the failure: paste them.")
    killed = ("A kill from outside: the paste shows one (an exit code of -9, SIGKILL, 'Killed'); the kernel's OOM "
              "killer or a container's memory limit is the usual sender (dmesg | grep -i -E 'killed process|oom', the "
              "container's OOMKilled state): host memory, not GPU memory.")
    crashed = ("A crash in the child's native code: the paste shows a crash signal (an exit code of -11 or -6, a "
               "segmentation fault, an abort). A kernel package or plugin the child loads (a CPU or GPU kernel library, "
               "a platform plugin) built for another engine release, torch, GPU or CPU is the usual cause: its release "
               "against the engine's, and the launch without it.")
    mismatch = ("With no kill or crash signal in the paste, the child most likely raised an error of its own (a "
                "setting, the model or the GPU refused at start-up: its lines say which) or crashed in a package it "
                "loads: a kernel package, plugin or wrapper integration that does not fit the installed engine release "
                "(a mainline of one against a release of the other), or a kernel that does not run on this CPU or GPU. "
                "For such a package, check its release against the engine's (its install guide names the engine "
                "release it was made for) and start once without it.")
    only_then = ("A kill by the OOM killer is the cause only if the host says so: no exit code, 'Killed' or memory "
                 "figure in the paste points to it; dmesg | grep -i -E 'killed process|oom' tells.")
    if any(_KILLED.search(line) for line in lines):
        return (absent, killed, mismatch)
    if any(_CRASHED.search(line) for line in lines):
        return (absent, crashed, only_then)
    return (absent, mismatch, only_then)
