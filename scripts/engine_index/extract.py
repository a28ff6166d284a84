"""The raise sites of a package's Python code, read with `ast` (never imported or run): every `assert`, every
`raise` of a call or a name (a name the function bound once to an exception it built: `e = Exception("...")` then
`raise e`; a call of a function of the same module that returns the exception it builds, SGLang's
`raise _scheduler_died_error(i, proc)`), every `logger.error` / `logger.critical` / `logger.exception` call, and every
exception built with a message outside a `raise` (kind "build"): returned by a function its caller raises, handed
to a future or an error response, or an exception class's own message (`super().__init__("EngineCore encountered an
issue. …")`, vLLM's EngineDeadError).  A message held in a name the function bound once to text (`msg = f"…"` then
`raise ValueError(msg)`) is read as that text.

For each: the file (relative to the package's parent), the enclosing function's qualified name, the statement's
first and last line, the exception type, the message as a template (an f-string's holes as `{}`), the condition
under which it fires (an assert's test; the tests of the `if`s around a raise or a log call, innermost last), the
attributes that condition reads (`self.x`, `server_args.x`, `args.x`: the engine's settings), and the statement's
own source lines, stripped, which is what a traceback shows of it.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

SETTINGS_OWNERS = frozenset({"self", "server_args", "args", "engine_args", "config", "vllm_config", "parallel_config",
                             "model_config", "cache_config", "scheduler_config", "speculative_config"})
LOG_LEVELS = frozenset({"error", "critical", "fatal", "exception"})  # logger.exception logs at ERROR, with the traceback
# A class name that is an exception's: the built-in ones (checked with `builtins`), and the engines' own, which end so
# (`EngineDeadError`, `VLLMValidationError`, `MMInputsProcessError`).  A call of any other name builds something else.
EXCEPTION_NAME = re.compile(r"[A-Z]\w*(?:Error|Exception)$")


@dataclass(frozen=True)
class Site:
    """One raise site of one release."""

    file: str
    function: str
    first_line: int
    last_line: int
    kind: str  # assert | raise | log | build (an exception built outside a raise, raised elsewhere)
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


def exception_class(name: str) -> bool:
    """An exception class's name (see EXCEPTION_NAME), not a warning's."""
    builtin = getattr(builtins, name, None)
    if isinstance(builtin, type):
        return issubclass(builtin, BaseException) and not issubclass(builtin, Warning)
    return bool(EXCEPTION_NAME.match(name))


@dataclass(frozen=True)
class Scope:
    """What a function's statements are read with: the names it bound once to an exception it built or to text,
    the names it raises, the module's exception factories and its enclosing class's text constants."""

    built: dict[str, ast.Call]
    texts: dict[str, ast.expr]
    raised: frozenset[str] = frozenset()
    factories: dict[str, tuple[str, str]] | None = None
    constants: dict[str, ast.expr] | None = None

    def without(self, name: str | None) -> Scope:
        """Inside `except E as name`: there, `name` is what was caught."""
        return Scope({k: v for k, v in self.built.items() if k != name}, {k: v for k, v in self.texts.items() if k != name},
                     self.raised, self.factories, self.constants)

    def message(self, node: ast.expr | None) -> str:
        """A message expression's template, a name bound once to text read as that text, a class constant
        (`self.ENGINE_DEAD_MESSAGE`) as its text."""
        if isinstance(node, ast.Name) and node.id in self.texts:
            node = self.texts[node.id]
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and self.constants
              and node.attr in self.constants):
            node = self.constants[node.attr]
        return template(node)


EMPTY_SCOPE = Scope({}, {})


def _exception(node: ast.Raise, scope: Scope) -> tuple[str, str] | None:
    exc = node.exc
    if isinstance(exc, ast.Name) and exc.id in scope.built:  # `e = Exception("...")` earlier in the function, then `raise e`
        exc = scope.built[exc.id]
    if isinstance(exc, ast.Call):
        name = _called(exc)
        if scope.factories and name in scope.factories and not exception_class(name):
            return scope.factories[name]  # `raise _scheduler_died_error(i, proc)`: what that function builds
        return (name, scope.message(exc.args[0] if exc.args else None)) if name else None
    if isinstance(exc, ast.Name) and exc.id[:1].isupper():
        return exc.id, ""
    return None  # a bare `raise` or `raise error`: it re-raises what was caught elsewhere


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _text(node: ast.expr | None) -> bool:
    """An expression that builds text: a string, an f-string, a concatenation or `%` of them, a `.format` of one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        return _text(node.left)
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
            and _text(node.func.value))


def _scope(function: ast.FunctionDef | ast.AsyncFunctionDef, factories: dict[str, tuple[str, str]],
           constants: dict[str, ast.expr]) -> Scope:
    """The names a function binds, once, to an exception it builds (`e = Exception("WorkerProc initialization
    failed ...")`, vLLM's WorkerProc.wait_for_ready), so a later `raise e` is read as that exception and its message;
    and those it binds once to text (`msg = f"..."`), read as the message of `raise ValueError(msg)`.
    A class call only (a capitalised name); a name bound twice, or also as a parameter, is not read (ast.walk enters
    nested functions too: their names can only make a name ambiguous, never read wrongly)."""
    bound: dict[str, list[ast.expr | None]] = {}  # name -> what each binding gives it (None: not read)
    raised: set[str] = set()
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
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Name):
            raised.add(node.exc.id)
    once = {name: value for name, (value, *more) in bound.items() if not more and value is not None}
    built = {name: value for name, value in once.items() if isinstance(value, ast.Call) and _called(value)[:1].isupper()}
    texts = {name: value for name, value in once.items() if _text(value)}
    return Scope(built, texts, frozenset(raised), factories, constants)


def _factories(tree: ast.Module) -> dict[str, tuple[str, str]]:
    """The module's functions that return an exception they build, and nothing else (`def _scheduler_died_error(rank,
    proc): ... return RuntimeError(f"Rank {rank} scheduler died during initialization ...")`): name -> (type,
    message).  A name defined twice in the module, or a function that also returns anything else, is not one."""
    found: dict[str, tuple[str, str] | None] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        returns = [value for value in _own_returns(node)]
        scope = _scope(node, {}, {})
        made = {(_called(value), scope.message(value.args[0] if value.args else None)) if isinstance(value, ast.Call)
                and exception_class(_called(value)) else None for value in returns}
        found[node.name] = None if node.name in found or len(made) != 1 or None in made else made.pop()
    return {name: made for name, made in found.items() if made is not None}


def _own_returns(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr | None]:
    """The values of a function's own `return` statements (not those of functions or classes it defines)."""
    returns: list[ast.expr | None] = []
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.Return):
            returns.append(node.value)
        pending.extend(ast.iter_child_nodes(node))
    return returns


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
    yield from _visit(tree.body, file, lines, "", (), Scope({}, {}, factories=_factories(tree)))


def _class_constants(node: ast.ClassDef) -> dict[str, ast.expr]:
    """An exception class's names bound to text in its body (`ENGINE_DEAD_MESSAGE = ("EngineCore encountered …")`)."""
    return {target.id: statement.value for statement in node.body if isinstance(statement, ast.Assign) and _text(statement.value)
            for target in statement.targets if isinstance(target, ast.Name)}


def _exception_class_def(node: ast.ClassDef) -> bool:
    """A class defined as an exception: its name says so, or a base's does (`class EngineDeadError(Exception)`)."""
    names = [node.name, *(_called(ast.Call(base, [], [])) for base in node.bases)]
    return any(exception_class(name) for name in names if name)


def _visit(body: list[ast.stmt], file: str, lines: list[str], function: str, guards: tuple[ast.expr, ...],
           scope: Scope, exception_class_name: str = "") -> Iterator[Site]:
    for node in body:
        if isinstance(node, ast.ClassDef):
            name = f"{function}.{node.name}" if function else node.name
            own_class = node.name if _exception_class_def(node) else ""
            constants = _class_constants(node) if own_class else {}
            yield from _visit(node.body, file, lines, name, (), Scope({}, {}, factories=scope.factories, constants=constants),
                              own_class)
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{function}.{node.name}" if function else node.name
            own = _scope(node, scope.factories or {}, scope.constants or {})
            # An exception class's __init__ that gives its message to the base class: that class's message.
            yield from _visit(node.body, file, lines, name, (), own, exception_class_name if node.name == "__init__" else "")
            continue
        yield from _sites(node, file, lines, function, guards, scope, exception_class_name)
        if isinstance(node, ast.If):
            yield from _visit(node.body, file, lines, function, (*guards, node.test), scope, exception_class_name)
            yield from _visit(node.orelse, file, lines, function, (*guards, ast.UnaryOp(ast.Not(), node.test)), scope,
                              exception_class_name)
        elif isinstance(node, ast.For | ast.AsyncFor | ast.While | ast.With | ast.AsyncWith):
            yield from _visit(node.body, file, lines, function, guards, scope, exception_class_name)
            yield from _visit(getattr(node, "orelse", []), file, lines, function, guards, scope, exception_class_name)
        elif isinstance(node, ast.Try):
            for part in (node.body, node.orelse, node.finalbody):
                yield from _visit(part, file, lines, function, guards, scope, exception_class_name)
            for handler in node.handlers:  # `except E as e`: there, `e` is what was caught
                yield from _visit(handler.body, file, lines, function, guards, scope.without(handler.name),
                                  exception_class_name)


def _sites(node: ast.stmt, file: str, lines: list[str], function: str, guards: tuple[ast.expr, ...], scope: Scope,
           exception_class_name: str) -> Iterator[Site]:
    """The sites of one statement: its assert, raise or log call, or the exceptions it builds with a message."""
    found = _site(node, scope)
    made = [] if found is not None else _built_here(node, scope, exception_class_name)
    for kind, type_, message, condition in ([found] if found is not None else made):
        read = settings_read(node.test, *guards) if isinstance(node, ast.Assert) else settings_read(*guards)
        last = node.end_lineno or node.lineno
        text = tuple(line.strip() for line in lines[node.lineno - 1:last] if line.strip())
        yield Site(file, function or "<module>", node.lineno, last, kind, type_, message, condition,
                   tuple(ast.unparse(g) for g in guards), read, text)


def _site(node: ast.stmt, scope: Scope) -> tuple[str, str, str, str] | None:
    """(kind, type, message, condition) of an assert, a raise or an error log call."""
    if isinstance(node, ast.Assert):
        return "assert", "AssertionError", template(node.msg), ast.unparse(node.test)
    if isinstance(node, ast.Raise) and (found := _exception(node, scope)) is not None:
        return "raise", found[0], found[1], ""
    if isinstance(node, ast.Expr) and (call := _log_call(node)) is not None:
        message = scope.message(call.args[0] if call.args else None)
        if len(call.args) > 1:  # logging's own %-formatting: logger.error("tp %s is odd", tp)
            message = percent_holes(message)
        return "log", "", message, ""
    return None


def _built_here(node: ast.stmt, scope: Scope, exception_class_name: str) -> list[tuple[str, str, str, str]]:
    """The exceptions a statement builds with a message and does not raise itself: `return RuntimeError(...)`,
    `fut.set_exception(RuntimeError(...))`, `err = ValueError(...)` not raised in the function; and in an exception
    class's __init__, `super().__init__(MESSAGE)`."""
    if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) and t.id in scope.raised for t in node.targets):
        return []  # `e = Exception("...")` then `raise e`: the raise is the site
    if not isinstance(node, ast.Return | ast.Assign | ast.AnnAssign | ast.Expr) or node.value is None:
        return []
    made = []
    for call in ast.walk(node.value):
        if not isinstance(call, ast.Call):
            continue
        name = _called(call)
        if exception_class_name and name == "__init__" and isinstance(call.func, ast.Attribute) and isinstance(
                call.func.value, ast.Call) and _called(call.func.value) == "super":
            name = exception_class_name  # the class's own message, given to its base
        elif not exception_class(name):
            continue
        message = scope.message(call.args[0]) if call.args else ""
        if message.strip() and message != HOLE_ONLY:
            made.append(("build", name, message, ""))
    return made


HOLE_ONLY = "{}"  # a message that is all computed (`ValueError(msg)` of a parameter): nothing to match
