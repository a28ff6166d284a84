"""The flag operations a model proposed (`--explain`), each checked against the catalog of the log's engine
version: ✓ or ✗ with the reason, as `check` marks the flags of a command (flags.read_flags).

A flag that exists is not enough for ✓: a value holding shell syntax (`$(touch x)`, `a; rm`, a pipe, a
redirection) is what an injected log or a confused model writes, never what an engine flag takes, so it is ✗
whatever the flag."""

from __future__ import annotations

from logsleuth.check.flags import read_flags
from logsleuth.check.verify import ENGINE, catalog_for
from logsleuth.fixes.catalog import Catalog
from logsleuth.lazyre import compile_lazily
from logsleuth.models import FlagCheck, FlagOp, LaunchInfo

# Command substitution, command separators and redirections: shell syntax, harmless only once quoted.
_SHELL_SYNTAX = compile_lazily(r"\$\(|`|[;|&<>\n\r]")


def check_flag_ops(ops: tuple[FlagOp, ...], launch: LaunchInfo) -> tuple[FlagCheck, ...]:
    """One FlagCheck per operation, in order.  An operation that adds or sets a flag is checked as that flag with
    its value; a removal only needs the flag to exist in the version; a rename checks the new name."""
    catalog, note = catalog_for(launch.engine_version)
    where = f" (checked against SGLang {catalog.version}: the log names no version)" if note else ""
    return tuple(_check(op, catalog, where) for op in ops)


def _check(op: FlagOp, catalog: Catalog, where: str) -> FlagCheck:
    syntax = _SHELL_SYNTAX.search(op.value or "")
    if op.value is not None and syntax and op.op != "remove":
        return FlagCheck(op, False, f"its value holds shell syntax ({syntax[0]!r}), which no {op.flag} value needs: "
                         "do not run it")
    if op.op == "remove":
        words = [op.flag]
        if catalog.find(op.flag) is not None:  # removing a switch or a valued flag: the name alone is enough
            return FlagCheck(op, True, f"{op.flag} is a flag of SGLang {catalog.version}{where}")
    elif op.op == "rename":
        words = [op.to or op.flag]
    else:
        words = [op.flag, *([op.value] if op.value is not None else [])]
    verdicts, _ = read_flags(words, catalog, ENGINE)
    if not verdicts:
        return FlagCheck(op, False, "not a flag")
    first = verdicts[0]
    problems = [verdict for verdict in verdicts if not verdict.ok]
    verdict = problems[0] if problems else first
    return FlagCheck(op, verdict.ok, verdict.reason + where)
