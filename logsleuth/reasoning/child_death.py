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
# SGLang's hint after the exit code, a conditional that names the OOM killer whatever the code was (engine.py
# _wait_for_scheduler_ready: "If exit code is -9 (SIGKILL), a common cause is the OS OOM killer. Run `dmesg -T | grep -i
# oom` to check."; sgl-project/sglang#23602: exit code 255): no evidence of a kill
_IF_KILLED = compile_lazily(r"If exit code is -9 \(SIGKILL\)[^.]{0,200}\.(?:\s*Run `[^`]{0,80}` to check\.)?")
# The engine's own tear-down of its children after a failure (SGLang's utils kill_process_tree: "… not reaped within
# Ns after SIGKILL"): a kill it sent, not what ended the child
_OWN_TEARDOWN = compile_lazily(r"kill_process_tree|sending SIGKILL|after SIGKILL")
# SGLang's death record whose exit code it logs on a record of its own right after (engine.py _launch_subprocesses:
# `Rank {i} scheduler is dead. …`, join, then `Exit code: {exitcode}`; gpustack/gpustack#3848: -9), which a paste may
# not keep: the code, not a guess, then says how the child ended.  (Its "Initialization failed. Please see the error
# messages above." is the child's own report of a failure, sent through the pipe: no exit code, an error of its own.)
_EXIT_LOGGED_APART = compile_lazily(r"scheduler is dead")
_PIPE_READ = ("scheduler_pipe_readers", "_wait_for_scheduler_ready", "wait_for_engine_startup", "_recv_bytes")
# An exit code or status as the paste prints it: SGLang's `Exit code: -9` (engine.py), torchrun's `exitcode  : -9`,
# Python's `returncode=-9`, docker's and k8s's `exited with code 137` / `exitCode: 137`, a shell's `exit status 137`
_CODE = r"(?:exit ?code|exitcode|exit status|return ?code|exited with code)\s*[:=]?\s*"
# What the paste may show of how the child ended: a kill from outside (-9; 137 = 128 + 9 from a shell or a container
# runtime), or a crash signal (-11, -6, -7, -8; 139, 134, 135, 136)
_KILLED = compile_lazily(
    rf"(?i){_CODE}(?:-9|137)\b|\bterminated with -9\b|\bSIGKILL\b|\bsignal:? 9\b|signal: killed|^\s*Killed\s*$"
    # a shell's job notice (`bash: line 1:  4242 Killed   python3 -m …`, `[1]+  Killed   python3 …`)
    r"|(?:^|:)\s*\d+\s+Killed\b|^\[\d+\][+-]?\s+Killed\b"
    r"|\boom[- ]?kill|OOMKilled|out of memory: killed process|proc\(s\): \{[^}]{0,200}:\s*-9\b")
_CRASHED = compile_lazily(
    rf"(?i){_CODE}(?:-(?:11|6|7|8)|13[4-69])\b|\bterminated with -(?:11|6)\b|\bSIG(?:SEGV|ABRT|BUS|FPE)\b"
    r"|Segmentation fault|signal: (?:segmentation fault|aborted)|core dumped|Fatal Python error|terminate called"
    r"|proc\(s\): \{[^}]{0,200}:\s*-(?:11|6)\b")
# Any other exit code the paste prints (SGLang's `Exit code: 1`): the child ended by an error of its own
_EXIT_CODE = compile_lazily(rf"(?i){_CODE}(-?\d{{1,3}})\b")


def parent_side_death(evidence: Evidence) -> bool:
    """The failure is only the parent's word that a child died (its read of the closed pipe, or its death message),
    with no failure of the child's printed before it in the paste."""
    failure = evidence.failure
    said = any(_PARENT_WORDS.search(line) for line in (*exception_lines(failure), *failure.context))
    read = any(any(site in (frame.source or "") or site == frame.function for site in _PIPE_READ)
               for frame in failure.final.frames)
    return (read or said) and not evidence.earlier


def child_death_checks(evidence: Evidence) -> tuple[str, ...]:
    """The checks for a parent-side death report, led by what the paste shows of how the child ended (its own error
    printed after the parent's, a kill, a crash signal, an exit code of its own error); () when the failure is not
    one."""
    if not parent_side_death(evidence):
        return ()
    lines = [_IF_KILLED.sub("", line) for line in (*evidence.failure.context, *evidence.lines,
                                                   *exception_lines(evidence.failure), *evidence.following)
             if not _OWN_TEARDOWN.search(line)]
    # The failure printed next, when it is no report of how a process ended (torchrun's `ChildFailedError: … exitcode
    # : -9`): a child's output often lands after the parent's (its own buffering; kvcache-ai/ktransformers#1658)
    first = next(iter(evidence.following), "")
    if first and not any(pattern.search(first) for pattern in (_KILLED, _CRASHED, _EXIT_CODE, _PARENT_WORDS)):
        absent = ("The paste shows the parent's side first: the launcher found the pipe to a process it started (a "
                  "scheduler, an engine core) closed, or was told it died. The failure printed right after it "
                  f"({_short(first)}) is most likely that process's own error, its output landing after the parent's: "
                  "it names the failure.")
    else:
        absent = ("The paste shows only the parent's side: the launcher found the pipe to a process it started (a "
                  "scheduler, an engine core) closed, or was told it died. That process's own error is not in the "
                  "paste: it prints it itself, in the lines above the parent's traceback (often with its rank, TP0, or "
                  "'Scheduler hit an exception' / 'EngineCore' in front), or in its own output (the container's log, a "
                  "log file the launcher wrote, the wrapper's log). Those lines name the failure: paste them.")
    killed = ("A kill from outside: the paste shows one (an exit code of -9 or 137, SIGKILL, 'Killed'); the kernel's "
              "OOM killer or a container's memory limit is the usual sender (dmesg | grep -i -E 'killed process|oom', "
              "the container's OOMKilled state): host memory, not GPU memory.")
    crashed = ("A crash in the child's native code: the paste shows a crash signal (an exit code of -11, -6, 139 or "
               "134, a segmentation fault, an abort). A kernel package or plugin the child loads (a CPU or GPU kernel "
               "library, a platform plugin) built for another engine release, torch, GPU or CPU is the usual cause: "
               "its release against the engine's, and the launch without it.")
    code = next((m[1] for line in lines if (m := _EXIT_CODE.search(line))), None)
    shown = (f"The exit code the paste shows ({code}) is no kill and no crash signal: the child" if code is not None
             else "The paste shows no exit code or signal that logsleuth reads as a kill or a crash: the child")
    mismatch = (f"{shown} most likely raised an error of its own (a setting, the model or the GPU refused at start-up: "
                "its lines say which) or crashed in a package it loads: a kernel package, plugin or wrapper integration "
                "that does not fit the installed engine release (a mainline of one against a release of the other), or "
                "a kernel that does not run on this CPU or GPU. For such a package, check its release against the "
                "engine's (its install guide names the engine release it was made for) and start once without it.")
    only_then = ("A kill by the OOM killer is the cause only if the host shows one: the paste has no exit code or signal "
                 "that logsleuth reads as a kill; dmesg | grep -i -E 'killed process|oom' tells.")
    if any(_KILLED.search(line) for line in lines):
        return (absent, killed)
    if any(_CRASHED.search(line) for line in lines):
        return (absent, crashed, only_then)
    if code is None and any(_EXIT_LOGGED_APART.search(line) for line in lines):
        return (absent, ("SGLang logs the child's exit code on the record right after this one (`Exit code: N`), "
                         "which the paste does not show: it says how the child ended. -9 (SIGKILL) is a kill from "
                         "outside, most often the kernel's OOM killer or a container's memory limit while the weights "
                         "load (host memory: dmesg | grep -i -E 'killed process|oom', the container's OOMKilled state); "
                         "-11 or -6 a crash in native code (a kernel package that does not fit); 1 an error of the "
                         "child's own, printed in its own output."))
    return (absent, mismatch, only_then)


def _short(line: str) -> str:
    """A failure's `Type: message` line, cut to a readable length."""
    return line if len(line) <= 160 else line[:157] + "…"
