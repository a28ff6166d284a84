"""Building blocks the wild case tables share: processes that fail, imports that fail the way a
broken install makes them fail, torch's error texts, older engines' record formats.

SGLang's own frames are in pattern_fixtures/mirror.py; this module only wires them into cases.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import replace
from typing import Any

from pattern_fixtures.cases.dependencies import ASSERT_PKG_VERSION
from pattern_fixtures.engine import Case, Frame
from pattern_fixtures.mirror import SIGQUIT, frame_at

from .paste import RECORD

C_RAISE = "__import__('torch').C_RAISER"  # a C function raising the case's torch_error: no Python frame


def c_attr(name: str) -> str:
    """An env expression: an object whose attribute `name` is C_RAISE and whose every other attribute
    is itself (`self.buffer.dispatch(...)` reaching C without a Python frame).  C_RAISE is max() with
    a key: the call may pass positional arguments only."""
    return f"type('Native', (_Any,), {{{name!r}: {C_RAISE}}})()"


def c_property(name: str) -> str:
    """An env expression like c_attr, for calls with keyword arguments: reading the attribute `name`
    raises, from a property whose getter is C_RAISE (3.11 then underlines only `obj.name`)."""
    return f"type('Native', (_Any,), {{{name!r}: property({C_RAISE})}})()"


def crash(frames: tuple[Frame, ...], **fields: Any) -> Case:
    """A scheduler process failing: its traceback logged, then the parent's SIGQUIT notice."""
    return Case("wild", "case", frames, **{"after": (SIGQUIT,), **fields})


def plain(frames: tuple[Frame, ...], **fields: Any) -> Case:
    """A process whose first frame prints what it prints (no record around it)."""
    return Case("wild", "case", frames, mode="plain", ranks="", **fields)


def launch(frames: tuple[Frame, ...], **fields: Any) -> Case:
    """`python -m sglang.launch_server` failing uncaught (sys.excepthook prints it)."""
    return Case("wild", "case", frames, mode="launch", **fields)


def records(*messages: str, ranks: str = "TP0", stamp: str = "2025-09-13 09:09:10", after: tuple[str, ...] = ()) -> Case:
    """Log records only: `messages` logged by a rank (SGLang's format), `after` by the parent."""
    return Case("wild", "case", (), mode="lines", ranks=ranks, stamp=stamp, before=messages, after=after)


def argparse_case(parser: str, argv: tuple[str, ...], before: tuple[str, ...] = ()) -> Case:
    """The launch's argument parser rejecting `argv` (real argparse; `parser` adds the arguments)."""
    return Case("wild", "case", (), mode="argparse", ranks="", parser=parser, argv=argv, before=before)


def no_grad(line: int) -> Frame:
    """torch.no_grad's wrapper around the event loop (torch/utils/_contextlib.py decorate_context)."""
    return frame_at("torch/utils/_contextlib.py", "decorate_context", "return func(*args, **kwargs)", line,
                    env=(("func", "NEXT"), ("args", "()"), ("kwargs", "{}")))


def with_env(frame: Frame, *pairs: tuple[str, str]) -> Frame:
    return replace(frame, env=(*frame.env, *pairs))


_FAILING_IMPORTS = '''
"""Imports that fail as a broken install makes them fail (never appears in a traceback)."""
import importlib.machinery
import sys

from _lsfx import c_raiser


class _Loader:
    def exec_module(self, module):
        pass


class _Failing:
    """Finds `name` and gives it a loader whose create_module raises `error` from C: CPython drops
    importlib's frames for an ImportError, so the traceback ends at the import statement."""

    def __init__(self, name, error):
        self.name, self.error = name, error

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        loader = _Loader()
        loader.create_module = c_raiser(self.error)
        return importlib.machinery.ModuleSpec(fullname, loader)


def fail_import(name, error):
    sys.meta_path.insert(0, _Failing(name, error))
'''


def failing_import(first: Frame, module: str, message: str, exc_type: str = "ImportError") -> tuple[Frame, tuple[str, str]]:
    """`first` (the case's first frame) arranging that importing `module` raises `exc_type(message)`,
    as a shared library that does not load makes it; and the extra module it needs."""
    arrange = ("_failing_import", f"__import__('_lsfx_wild').fail_import({module!r}, {exc_type}({message!r}))")
    return with_env(first, arrange), ("_lsfx_wild.py", _FAILING_IMPORTS)


def cuda_oom(size: str, gpu: int, total: str, free: str, in_use: str, allocated: str, reserved: str) -> tuple[str, str]:
    """torch.OutOfMemoryError as torch >= 2.1 words it when NVML cannot list the processes."""
    return (
        "torch.OutOfMemoryError",
        f"CUDA out of memory. Tried to allocate {size}. GPU {gpu} has a total capacity of {total} of which {free} is free. "
        f"Including non-PyTorch memory, this process has {in_use} memory in use. Of the allocated memory {allocated} is "
        f"allocated by PyTorch, and {reserved} is reserved by PyTorch but unallocated. If reserved but unallocated memory "
        "is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation "
        "for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
    )


def time_only_records(text: str) -> str:
    """SGLang 0.3's record header, time only: `[15:58:39 TP0] ...` for `[2024-09-19 15:58:39 TP0] ...`."""
    return re.sub(r"^\[\d{4}-\d\d-\d\d (\d\d:\d\d:\d\d)", r"[\1", text, flags=re.M)


def module_at(path: str, body: str, line: int, env: tuple[tuple[str, str], ...] = (), marker: str = "") -> Frame:
    """Module-level code placed so that the body line starting with `marker` (default: the last one)
    is printed at `line` (a module's code starts right after the hidden wiring line)."""
    lines = textwrap.dedent(body).strip("\n").splitlines()
    index = next(i for i, text in enumerate(lines) if marker and text.startswith(marker)) if marker else len(lines) - 1
    return Frame(path, "<module>", body=body, env=env, lineno=line - 1 - index)


def imports(*chain: tuple[str, str, int]) -> tuple[Frame, ...]:
    """Modules importing each other at start-up: (module path, import statement, its line) each."""
    return tuple(Frame(path, "<module>", statement, lineno=line - 1) for path, statement, line in chain)


def package_check(path: str, pkg: str, minimum: str, message: str, installed: str | None, line: int) -> Frame:
    """SGLang's assert_pkg_version, its failing `raise` printed at `line`: `installed` is the version
    found, None for a package importlib.metadata does not know (PackageNotFoundError, raised from C)."""
    not_found = "__import__('importlib.metadata', fromlist=['x']).PackageNotFoundError"
    version = f"lambda pkg: {installed!r}" if installed else f"__import__('_lsfx').c_raiser({not_found}({pkg!r}))"
    parse = "NS(parse=lambda v: tuple(int(''.join(c for c in p if c.isdigit()) or 0) for p in v.replace('post', '.').split('.')))"
    body = textwrap.dedent(ASSERT_PKG_VERSION).strip("\n").splitlines()
    raises = [index for index, text in enumerate(body) if text.strip() == "raise Exception("]
    return Frame(path, "assert_pkg_version", body=ASSERT_PKG_VERSION,
                 env=(("pkg", repr(pkg)), ("min_version", repr(minimum)), ("message", repr(message)), ("PackageNotFoundError", not_found),
                      ("version", version), ("pkg_version", parse)),
                 lineno=line - 2 - (raises[0] if installed else raises[1]))


def message_field_only(text: str) -> str:
    """A JSON log record's message field: SGLang's `[<time> <rank>] ` header is not part of it."""
    return "".join(RECORD.sub(r"\1", line) for line in text.splitlines(keepends=True))
