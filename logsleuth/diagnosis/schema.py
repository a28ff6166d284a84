"""What a pattern is: its fields, its match rules, and the failure categories.

A pattern is one TOML file (library.py loads them, match.py matches them); see docs/writing-patterns.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias

import regex

from logsleuth.diagnosis.prefilter import may_match, required_literals

# The failure categories, each with one line saying what a failure in it means.  A new category needs a line
# here; docs/writing-patterns.md and the generated docs/patterns pages use these.  They are said for either engine
# (engine_unknown_diagnosis, the honest category): no line names one engine's flag or the engine itself.
CATEGORIES: dict[str, str] = {
    "spec-decoding-args": "speculative-decoding flags that do not fit together (EAGLE/EAGLE3 sizes, draft model)",
    "unknown-flag": "a flag this engine version does not have (typo, vLLM name, removed or renamed flag)",
    "invalid-flag-value": "a known flag with a value it does not accept (choice, type, switch given a value)",
    "missing-flag": "a flag or argument the launch needs was not given (the model, ...)",
    "parallel-config": "tensor/pipeline/data/expert parallel sizes or node counts that do not divide or combine",
    "lora-config": "LoRA flags that contradict each other or are incomplete",
    "context-length": "a context length (the server's or a request's) beyond what the model supports",
    "model-path": "the model path or repo id cannot be found or read",
    "weight-loading": "checkpoint tensors do not match the model the engine builds (names, quantization, tying)",
    "unsupported-architecture": "the model's architecture is not implemented in this engine version",
    "gpu-oom": "CUDA out of memory: loading weights, KV cache allocation, CUDA graph capture or serving",
    "kv-cache-memory": "too little memory left for the KV cache after the weights (not an allocation failure)",
    "cuda-graph-capture": "recording the CUDA graphs at startup failed for a reason other than memory",
    "nccl": "collective communication between GPUs or nodes failed, hung or lost its rendezvous",
    "gpu-arch-unsupported": "a kernel or library has no support for this GPU architecture (e.g. sm_120)",
    "dependency-version": "an installed package (transformers, flashinfer, sgl-kernel) does not match the engine",
    "illegal-memory-access": "a CUDA kernel accessed memory out of bounds",
    "port-in-use": "a port the server needs is held by another process",
    "process-killed": "a process died without a Python traceback (OOM killer, SIGKILL, a parent's cleanup)",
    "serving-memory": "the KV cache or request-slot pool ran out while serving (not a CUDA allocation at startup)",
    "device-assert": "a CUDA device-side assert fired in a kernel (an index out of range: a token id, a position)",
    "hang-timeout": "a process stopped making progress (a watchdog or a timeout may end it)",
    "native-crash": "a segfault or abort in native code (faulthandler dump) with no more specific cause",
    "host-memory": "host RAM or shared memory ran out (ENOMEM), not GPU memory",
    "feature-conflict": "two features this engine version cannot run together (e.g. speculative decoding with a grammar)",
    "orchestration": "the container runtime, Kubernetes or Slurm could not place, pull or keep the server (no GPU node, image pull, probe kill)",
    "tokenizer": "the tokenizer or its chat template cannot be loaded or used (a class transformers lacks, no chat template)",
    # Categories the reasoning rules and the honest category name (logsleuth/reasoning/, issue 28).
    "engine-bug": "engine code failed on its own (NameError, AttributeError, a shape mismatch) at this release: a bug, not a setting",
    "network": "the host's network got in the way: an HTTP proxy answering the server's own requests, an unreachable rendezvous address",
    "cuda-error": "a CUDA runtime or driver call failed (not out of memory, not an illegal access, not a device assert)",
    "router": "SGLang's request router (sgl-router, a Rust program in front of the workers) failed: a panic of its own, its launcher refusing its arguments, or no healthy worker behind it",
    "quantization": "a quantization method, its checkpoint or its kernels do not fit the model, the GPU or the other settings",
    "unclassified": "no pattern, rule or cue names it: only what its exception type says, as general guidance",
    # Health findings (`logsleuth health`): a running server that does not crash but serves badly.
    "speculative-acceptance": "speculative decoding accepts next to nothing from the draft model (accept length near 1)",
    "queueing": "requests wait in a queue that keeps growing: they arrive faster than the server finishes them",
    "throughput": "decode throughput fell far below the run's own start at the same load",
    "cuda-graph-disabled": "decoding runs without CUDA graphs (a fallback or a flag), several times slower",
    "precision-fallback": "a dtype or quantization setting fell back to another one, announced only in a warning",
}

REGEX_TIMEOUT = 0.25  # seconds per search; user patterns are untrusted
BUILTIN_LAYER = "bundled"


# The flags under which prefilter.py reads a pattern's literals as the regex does (IGNORECASE would not).
_PREFILTERED_FLAGS = frozenset({0, regex.MULTILINE})


class PatternTimeout(Exception):
    pass


class LazyRegex:
    """A bundled pattern's regular expression, compiled on first use.

    Compiling all ~220 bundled regexes costs ~100 ms of every run, yet for a given failure most cannot match:
    a text that holds none of the literals every match holds (prefilter.py) is answered "no match" without
    compiling.  Bundled regexes are checked by the test suite (tests/patterns/test_loader.py compiles them
    all); user patterns are compiled at load, so that a broken one is reported with its file and line.
    """

    __slots__ = ("pattern", "flags", "_compiled", "_literals", "_literals_read")

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: regex.Pattern[str] | None = None
        self._literals: tuple[str, ...] | None = None
        self._literals_read = False

    def may_match(self, text: str) -> bool:
        """False when no match is possible (no compiling needed to say so); True when the regex must run."""
        return may_match(self._read_literals(), text)

    def prepare(self) -> None:
        """Do now what any first search does: read the literals.  Compiling waits until a text needs it: most
        regexes are never compiled in a run, and compiling them while waiting would still be CPU spent."""
        self._read_literals()

    def _read_literals(self) -> tuple[str, ...] | None:
        if not self._literals_read:
            self._literals = required_literals(self.pattern) if self.flags in _PREFILTERED_FLAGS else None
            self._literals_read = True
        return self._literals

    def compiled(self) -> regex.Pattern[str]:
        if self._compiled is None:
            self._compiled = regex.compile(self.pattern, self.flags)
        return self._compiled

    def search(self, text: str, *, timeout: float | None = None) -> regex.Match[str] | None:
        if not self.may_match(text):
            return None
        return self.compiled().search(text, timeout=timeout)

    def fullmatch(self, text: str, *, timeout: float | None = None) -> regex.Match[str] | None:
        if not self.may_match(text):
            return None
        return self.compiled().fullmatch(text, timeout=timeout)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LazyRegex) and (self.pattern, self.flags) == (other.pattern, other.flags)

    def __hash__(self) -> int:
        return hash((self.pattern, self.flags))

    def __repr__(self) -> str:
        return f"LazyRegex({self.pattern!r})"


Regex: TypeAlias = regex.Pattern[str] | LazyRegex


@dataclass(frozen=True)
class MatchRule:
    """All given conditions must hold.  Frame conditions must hold on the same frame."""

    kind: frozenset[str] = frozenset()
    exception_type: Regex | None = None
    message: Regex | None = None
    chain_message: Regex | None = None
    frame_file: Regex | None = None
    frame_function: Regex | None = None
    source: Regex | None = None
    log_line: Regex | None = None
    usage: Regex | None = None
    command: Regex | None = None  # the failure's own launch command, when known (a bare line's only context)

    def regexes(self) -> list[Regex]:
        fields = (self.exception_type, self.message, self.chain_message, self.frame_file, self.frame_function)
        return [r for r in (*fields, self.source, self.log_line, self.usage, self.command) if r is not None]


@dataclass(frozen=True)
class Pattern:
    """One pattern file: its match rules, root cause and fix (docs/writing-patterns.md)."""

    id: str
    title: str
    category: str
    root_cause: str
    rules: tuple[MatchRule, ...]
    fix: dict[str, Any] = field(default_factory=dict)
    priority: int = 1000  # lower wins when two patterns match the same failure
    engine: str | None = None
    versions: tuple[str, ...] = ()
    cascade: bool = False
    # The text it matches is worded by its engine's code alone (checked against the other engine's source):
    # it shows the engine when nothing else in the log does.  Without it, a pattern of an engine the log does
    # not show gives only its category (diagnosis/match.py engine_unknown_diagnosis).
    own_words: bool = False
    references: tuple[str, ...] = ()
    # The engine release that fixed the bug this pattern describes: a log from an older one gets "upgrade".
    fixed_in: str | None = None
    aliases: tuple[str, ...] = ()  # former ids: a user pattern with one of them replaces this one
    path: str = ""
    layer: str = BUILTIN_LAYER


@dataclass(frozen=True)
class PatternMatch:
    """The pattern a failure matched, and what its regexes captured (for the root cause and fix)."""

    pattern: Pattern
    captures: dict[str, str]
