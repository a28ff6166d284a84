"""The torch operator namespaces of the compiled extensions the engines call, and what installs each
(compiled_ops.toml, with its sources)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from logsleuth.facts.table import table_rows
from logsleuth.lazyre import compile_lazily

# Where torch's own messages name an operator's namespace: the schema check of a call (torch/csrc/jit/python/
# pybind_utils.h createStackForSchema: "<ns>::<op>() expected at most N argument(s) but received M argument(s)",
# "<ns>::<op>() is missing value for argument '…'"), the registry (`operator <ns>::<op> does not exist`, `No such
# operator <ns>::<op>`), the dispatcher (`Could not run '<ns>::<op>' with arguments from the '…' backend`) and
# torch/_ops.py's _OpNamespace ("'_OpNamespace' '<ns>' object has no attribute '<op>'").  Bounded runs keep the
# search linear on a long line.
_NAMESPACE = compile_lazily(
    r"'_OpNamespace' '(?P<space>\w{1,200})' object has no attribute"
    r"|(?<![\w.])(?P<named>\w{1,200})::\w{1,200}(\(\) (expected at most|is missing value for argument)"
    r"|' with arguments from the)"
    r"|\b(operator|No such operator|Could not run) '?(?P<listed>\w{1,200})::\w{1,200}"
)
# The dynamic loader's refusal of a shared object (`<path>.so: undefined symbol: …`); the path starts only where a run
# of path characters starts (the lookbehind), so a long line is searched in linear time.
_UNDEFINED = compile_lazily(r"(?<![^\s:'\"(])(?P<path>[^\s:'\"(]{1,1000}\.so(?:\.[\w.]{1,40})?): undefined symbol")


@dataclass(frozen=True)
class CompiledOps:
    """One extension's operator namespace: the module that registers it, what installs it, what it must match."""

    namespace: re.Pattern[str]
    library: re.Pattern[str] | None  # searched in the path of the shared object the loader refused
    said: re.Pattern[str] | None  # the extension's own warning that it could not load
    module: str
    distribution: str
    built_with: str
    reinstall: str
    sources: tuple[str, ...]


@cache
def compiled_ops() -> tuple[CompiledOps, ...]:
    return tuple(
        CompiledOps(re.compile(row["namespace"]), _optional(row.get("library")), _optional(row.get("said")),
                    row["module"], row["distribution"], row["built_with"], row["reinstall"], tuple(row.get("sources", ())))
        for row in table_rows("compiled_ops.toml", "namespace")
    )


def _optional(pattern: str | None) -> re.Pattern[str] | None:
    return re.compile(pattern) if pattern else None


def namespace_named(texts: Iterable[str]) -> str | None:
    """The operator namespace the first of torch's operator messages in `texts` names, or None."""
    for text in texts:
        if found := _NAMESPACE.search(text):
            return found["space"] or found["named"] or found["listed"]
    return None


def owner_of(namespace: str) -> CompiledOps | None:
    """The row of the extension that registers operators under `namespace`, or None when the table does not know it."""
    return next((row for row in compiled_ops() if row.namespace.fullmatch(namespace)), None)


def library_refused(texts: Iterable[str]) -> tuple[str, CompiledOps] | None:
    """The shared object the loader refused (its file name) and the row of the extension it is, when a line of
    `texts` is the loader's `undefined symbol` and the table knows the library; else None."""
    for text in texts:
        for found in _UNDEFINED.finditer(text):
            path = found["path"]
            row = next((row for row in compiled_ops() if row.library and row.library.search(path)), None)
            if row is not None:
                return path.rsplit("/", 1)[-1], row
    return None


def said_unloaded(texts: Iterable[str]) -> CompiledOps | None:
    """The row of the extension whose own warning in `texts` says it could not load, or None."""
    return next((row for text in texts for row in compiled_ops() if row.said and row.said.search(text)), None)
