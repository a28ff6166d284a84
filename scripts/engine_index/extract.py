"""The raise sites of a package's Python code, read with `ast` (never imported or run): every `assert`, every
`raise` of a call or a name (a name the function bound once to an exception it built: `e = Exception("...")` then
`raise e`), and every `logger.error` / `logger.critical` call.

For each: the file (relative to the package's parent), the enclosing function's qualified name, the statement's
first and last line, the exception type, the message as a template (an f-string's holes as `{}`), the condition
under which it fires (an assert's test; the tests of the `if`s around a raise or a log call, innermost last), the
attributes that condition reads (`self.x`, `server_args.x`, `args.x`: the engine's settings), and the statement's
own source lines, stripped, which is what a traceback shows of it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

SETTINGS_OWNERS = frozenset({"self", "server_args", "args", "engine_args", "config", "vllm_config", "parallel_config",
                             "model_config", "cache_config", "scheduler_config", "speculative_config"})
LOG_LEVELS = frozenset({"error", "critical", "fatal"})


@dataclass(frozen=True)
class Site:
    """One raise site of one release."""

    file: str
    function: str
    first_line: int
    last_line: int
    kind: str  # assert | raise | log
    type: str  # the exception type ("AssertionError" for an assert, "" for a log call)
    message: str  # the message template, "" when there is none
    condition: str  # the test it fires on (an assert: the test that failed, negated when read)
    guards: tuple[str, ...]  # the `if` tests around it, outermost first
    fields: tuple[str, ...]  # settings the condition and guards read
    text: tuple[str, ...]  # the statement's source lines, stripped

    def record(self) -> list[object]:
        """The site as plain JSON values, in field order (fetch.py's cache keeps them so)."""
        return [self.file, self.function, self.first_line, self.last_line, self.kind, self.type, self.message,
                self.condition, list(self.guards), list(self.fields), list(self.text)]

    @classmethod
    def from_record(cls, record: list[Any]) -> Site:
        file, function, first, last, kind, type_, message, condition, guards, fields, text = record
        return cls(file, function, first, last, kind, type_, message, condition, tuple(guards), tuple(fields), tuple(text))

    def identity(self) -> tuple[str, ...]:
        """What makes two releases' sites the same check: where it is and what it says, not its line."""
        return (self.file, self.function, self.kind, self.type, self.message, self.condition, *self.guards)


def template(node: ast.expr | None) -> str:
    """A message expression as text with `{}` for what is computed at run time."""
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return template(node.left) + template(node.right)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):  # "x %s" % y
        return percent_holes(template(node.left))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return template(node.func.value)
    return "{}"


def percent_holes(text: str) -> str:
    """`%s`, `%d`, `%r` (and `%.2f`...) as `{}`: the holes a logging call or a `%` format fills."""
    return re.sub(r"%[-#0 +]*\d*(?:\.\d+)?[sdrfgixX]", "{}", text)


def settings_read(*tests: ast.expr) -> tuple[str, ...]:
    """The attributes of a settings object the tests read, in order, once each."""
    seen: dict[str, None] = {}
    for test in tests:
        for node in ast.walk(test):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in SETTINGS_OWNERS:
                seen.setdefault(node.attr, None)
    return tuple(seen)


def _exception(node: ast.Raise, built: dict[str, ast.Call]) -> tuple[str, ast.expr | None] | None:
    exc = node.exc
    if isinstance(exc, ast.Name) and exc.id in built:  # `e = Exception("...")` earlier in the function, then `raise e`
        exc = built[exc.id]
    if isinstance(exc, ast.Call):
        name = _called(exc)
        return (name, exc.args[0] if exc.args else None) if name else None
    if isinstance(exc, ast.Name) and exc.id[:1].isupper():
        return exc.id, None
    return None  # a bare `raise` or `raise error`: it re-raises what was caught elsewhere


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _built_exceptions(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.Call]:
    """The names a function binds, once, to an exception it builds (`e = Exception("WorkerProc initialization
    failed ...")`, vLLM's WorkerProc.wait_for_ready), so a later `raise e` is read as that exception and its message.
    A class call only (a capitalised name); a name bound twice, or also as a parameter, is not read (ast.walk enters
    nested functions too: their names can only make a name ambiguous, never read wrongly)."""
    bound: dict[str, list[ast.expr | None]] = {}  # name -> what each binding gives it (None: not read)
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name in _bound_names(target):
                    bound.setdefault(name, []).append(node.value if isinstance(target, ast.Name) else None)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr | ast.For | ast.AsyncFor | ast.comprehension):
            for name in _bound_names(node.target):
                bound.setdefault(name, []).extend([None, None])
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                for name in _bound_names(item.optional_vars):
                    bound.setdefault(name, []).extend([None, None])
        elif isinstance(node, ast.arg):
            bound.setdefault(node.arg, []).extend([None, None])
    return {name: value for name, (value, *more) in bound.items()
            if not more and isinstance(value, ast.Call) and _called(value)[:1].isupper()}


def _bound_names(target: ast.expr | None) -> list[str]:
    """The names an assignment target binds: `e`, `a, *b`; not `e.x` or `e[0]` (they change an object)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [name for element in target.elts for name in _bound_names(element)]
    if isinstance(target, ast.Starred):
        return _bound_names(target.value)
    return []


def _log_call(node: ast.Expr) -> ast.Call | None:
    call = node.value
    if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in LOG_LEVELS
            and isinstance(call.func.value, ast.Name) and "log" in call.func.value.id.lower()):
        return call
    return None


def sites(source: str, file: str) -> Iterator[Site]:
    """Every raise site of one module's source."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    lines = source.splitlines()
    yield from _visit(tree.body, file, lines, "", ())


def _visit(body: list[ast.stmt], file: str, lines: list[str], function: str, guards: tuple[ast.expr, ...],
           built: dict[str, ast.Call] | None = None) -> Iterator[Site]:
    built = built or {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = f"{function}.{node.name}" if function else node.name
            own = _built_exceptions(node) if not isinstance(node, ast.ClassDef) else {}
            yield from _visit(node.body, file, lines, name, (), own)
            continue
        site = _site(node, file, lines, function, guards, built)
        if site is not None:
            yield site
        if isinstance(node, ast.If):
            yield from _visit(node.body, file, lines, function, (*guards, node.test), built)
            yield from _visit(node.orelse, file, lines, function, (*guards, ast.UnaryOp(ast.Not(), node.test)), built)
        elif isinstance(node, ast.For | ast.AsyncFor | ast.While | ast.With | ast.AsyncWith):
            yield from _visit(node.body, file, lines, function, guards, built)
            yield from _visit(getattr(node, "orelse", []), file, lines, function, guards, built)
        elif isinstance(node, ast.Try):
            for part in (node.body, node.orelse, node.finalbody):
                yield from _visit(part, file, lines, function, guards, built)
            for handler in node.handlers:  # `except E as e`: there, `e` is what was caught
                caught = {name: call for name, call in built.items() if name != handler.name}
                yield from _visit(handler.body, file, lines, function, guards, caught)


def _site(node: ast.stmt, file: str, lines: list[str], function: str, guards: tuple[ast.expr, ...],
          built: dict[str, ast.Call]) -> Site | None:
    if isinstance(node, ast.Assert):
        kind, type_, message, condition = "assert", "AssertionError", template(node.msg), ast.unparse(node.test)
        read = settings_read(node.test, *guards)
    elif isinstance(node, ast.Raise) and (found := _exception(node, built)) is not None:
        kind, (type_, message_node) = "raise", found
        message, condition, read = template(message_node), "", settings_read(*guards)
    elif isinstance(node, ast.Expr) and (call := _log_call(node)) is not None:
        message = template(call.args[0] if call.args else None)
        kind, type_, condition = "log", "", ""
        if len(call.args) > 1:  # logging's own %-formatting: logger.error("tp %s is odd", tp)
            message = percent_holes(message)
        read = settings_read(*guards)
    else:
        return None
    last = node.end_lineno or node.lineno
    text = tuple(line.strip() for line in lines[node.lineno - 1:last] if line.strip())
    return Site(file, function or "<module>", node.lineno, last, kind, type_, message, condition,
                tuple(ast.unparse(g) for g in guards), read, text)
