"""The torch operator namespaces of the compiled extensions the engines call, and what installs each
(compiled_ops.toml, with its sources)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from logsleuth.facts.table import table_rows

# Where torch's own messages name an operator's namespace: the schema check of a call (torch/csrc/jit/python/
# pybind_utils.h createStackForSchema: "<ns>::<op>() expected at most N argument(s) but received M argument(s)",
# "<ns>::<op>() is missing value for argument '…'"), the registry (`operator <ns>::<op> does not exist`, `No such
# operator <ns>::<op>`), the dispatcher (`Could not run '<ns>::<op>' with arguments from the '…' backend`) and
# torch/_ops.py's _OpNamespace ("'_OpNamespace' '<ns>' object has no attribute '<op>'").  Bounded runs keep the
# search linear on a long line.
_NAMESPACE = re.compile(
    r"'_OpNamespace' '(?P<space>\w{1,200})' object has no attribute"
    r"|(?<![\w.])(?P<named>\w{1,200})::\w{1,200}(\(\) (expected at most|is missing value for argument)"
    r"|' with arguments from the)"
    r"|\b(operator|No such operator|Could not run) '?(?P<listed>\w{1,200})::\w{1,200}"
)


@dataclass(frozen=True)
class CompiledOps:
    """One extension's operator namespace: the module that registers it, what installs it, what it must match."""

    namespace: re.Pattern[str]
    module: str
    distribution: str
    built_with: str
    sources: tuple[str, ...]


@cache
def compiled_ops() -> tuple[CompiledOps, ...]:
    return tuple(
        CompiledOps(re.compile(row["namespace"]), row["module"], row["distribution"], row["built_with"],
                    tuple(row.get("sources", ())))
        for row in table_rows("compiled_ops.toml", "namespace")
    )


def namespace_named(texts: Iterable[str]) -> str | None:
    """The operator namespace the first of torch's operator messages in `texts` names, or None."""
    for text in texts:
        if found := _NAMESPACE.search(text):
            return found["space"] or found["named"] or found["listed"]
    return None


def owner_of(namespace: str) -> CompiledOps | None:
    """The row of the extension that registers operators under `namespace`, or None when the table does not know it."""
    return next((row for row in compiled_ops() if row.namespace.fullmatch(namespace)), None)
