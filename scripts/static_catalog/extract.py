"""Read one release's launch flags from its source with `ast`: nothing is imported or run.

Three ways the engines declare flags, all followed from the parser's entry point:
- `parser.add_argument("--x", "-y", action=..., choices=[...], default=...)`: literal keywords are read as they
  are; a name or attribute is resolved when it names a literal (a module constant, a dataclass field's default).
- vLLM's `add_argument("--x", **kwargs["field"])` with `kwargs = get_kwargs(SomeConfig)`, and the frontend's loop
  `for key, value in get_kwargs(cls).items(): add_argument(f"--{key...}")`: the flag's kind, choices and default
  come from the dataclass field (`bool` -> `--x/--no-x`, `Literal[...]` -> choices).
- SGLang's `add_cli_args_from_dataclass(parser, ServerArgs)`: every field annotated `A[T, Arg(...)]` or
  `A[T, "help"]` of ServerArgs and of the namespace classes it collects (`_NS_PATH`).
A value that is not a literal is recorded as unknown (`UNKNOWN`), never guessed.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

UNKNOWN = "<unknown>"
_BOOLEAN_ACTIONS = {"store_true": True, "store_false": False}


@dataclass
class Flag:
    names: list[str]
    dest: str | None = None
    action: str = "store"
    choices: Any = None  # a sorted list of strings, None (any value), or UNKNOWN
    default: Any = None  # a JSON literal or UNKNOWN
    nargs: Any = None
    negations: list[str] = field(default_factory=list)
    deprecated: bool = False

    def record(self) -> dict[str, Any]:
        return {
            "name": self.names[0], "aliases": self.names[1:], "negations": self.negations, "dest": self.dest,
            "action": self.action, "choices": self.choices, "default": self.default, "nargs": self.nargs,
            "deprecated": self.deprecated,
        }


def _literal(node: ast.AST | None) -> Any:
    if node is None:
        return None
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return UNKNOWN
    return _jsonable(value)


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else repr(value)
    if isinstance(value, list | tuple | set | frozenset):
        items = [_jsonable(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, set | frozenset) else items
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return UNKNOWN


class Release:
    """The modules of one release, by dotted name, parsed once."""

    def __init__(self, files: dict[str, str]):
        self.modules: dict[str, ast.Module] = {}
        for path, text in files.items():
            try:
                self.modules[path[:-3].replace("/", ".").removesuffix(".__init__")] = ast.parse(text)
            except SyntaxError:
                continue
        self.classes: dict[str, list[tuple[str, ast.ClassDef]]] = {}
        self.constants: dict[str, dict[str, ast.AST]] = {}
        for module_name, module in self.modules.items():
            consts = self.constants.setdefault(module_name, {})
            for node in module.body:
                if isinstance(node, ast.ClassDef):
                    self.classes.setdefault(node.name, []).append((module_name, node))
                elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    consts[node.targets[0].id] = node.value
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                    consts[node.target.id] = node.value
        self.has_enable_disable = "EnableDisableAction" in self.classes

    # --- names -------------------------------------------------------------------------------------------------

    def class_named(self, name: str, near: str | None = None) -> tuple[str, ast.ClassDef] | None:
        found = self.classes.get(name, [])
        if not found:
            return None
        for module_name, node in found:
            if module_name == near:
                return module_name, node
        return sorted(found, key=lambda pair: pair[0])[0]

    def constant(self, name: str, module: str) -> ast.AST | None:
        if name in self.constants.get(module, {}):
            return self.constants[module][name]
        for imported_from in self._imports(module, name):
            if name in self.constants.get(imported_from, {}):
                return self.constants[imported_from][name]
        return None

    def _imports(self, module: str, name: str) -> list[str]:
        tree = self.modules.get(module)
        if tree is None:
            return []
        return [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
                and any((alias.asname or alias.name) == name for alias in node.names)]

    def value(self, node: ast.AST | None, module: str, depth: int = 0) -> Any:
        """A literal value, following module constants and `Class.field` defaults; else UNKNOWN."""
        if node is None:
            return None
        literal = _literal(node)
        if literal is not UNKNOWN or depth > 4:
            return literal
        if isinstance(node, ast.Name):
            target = self.constant(node.id, module)
            return self.value(target, module, depth + 1) if target is not None else UNKNOWN
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            found = self.class_named(node.value.id, module)
            if found is not None:
                for field_node in self.fields(found[0], found[1]):
                    if field_node[0] == node.attr:
                        return self.field_default(field_node[2], field_node[3])
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple", "set", "sorted") \
                and len(node.args) == 1:
            inner = self.value(node.args[0], module, depth + 1)
            return sorted(inner, key=repr) if isinstance(inner, list) and node.func.id in ("set", "sorted") else inner
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.value(node.left, module, depth + 1), self.value(node.right, module, depth + 1)
            if isinstance(left, list) and isinstance(right, list):
                return left + right
        return UNKNOWN

    # --- dataclass fields --------------------------------------------------------------------------------------

    def fields(self, module: str, cls: ast.ClassDef, seen: frozenset[str] = frozenset()) -> list[tuple[str, ast.AST, ast.AST | None, str]]:
        """(name, annotation, default node, module) of a class's annotated fields, bases first."""
        out: list[tuple[str, ast.AST, ast.AST | None, str]] = []
        for base in cls.bases:
            base_name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None
            if base_name and base_name not in seen and (found := self.class_named(base_name, module)) is not None:
                out.extend(self.fields(found[0], found[1], seen | {cls.name}))
        for node in cls.body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and not node.target.id.startswith("_"):
                if _is_classvar(node.annotation):
                    continue
                out = [entry for entry in out if entry[0] != node.target.id]
                out.append((node.target.id, node.annotation, node.value, module))
        return out

    def field_default(self, node: ast.AST | None, module: str) -> Any:
        if node is None:
            return UNKNOWN
        if isinstance(node, ast.Call) and _called(node) in ("field", "Field", "msgspec.field"):
            for keyword in node.keywords:
                if keyword.arg == "default":
                    return self.value(keyword.value, module)
            return UNKNOWN  # a default_factory: computed at run time
        return self.value(node, module)

    def type_members(self, annotation: ast.AST, module: str, depth: int = 0) -> list[Any]:
        """The members of a field's type: 'bool', 'str', 'None', ... or ('literal', values); 'other' otherwise."""
        if depth > 6:
            return ["other"]
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                return self.type_members(ast.parse(annotation.value, mode="eval").body, module, depth + 1)
            except SyntaxError:
                return ["other"]
        if isinstance(annotation, ast.Constant) and annotation.value is None:
            return ["None"]
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            return self.type_members(annotation.left, module, depth + 1) + self.type_members(annotation.right, module, depth + 1)
        if isinstance(annotation, ast.Subscript):
            head = _called_name(annotation.value)
            inner = annotation.slice
            parts = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
            if head in ("Optional",):
                return self.type_members(parts[0], module, depth + 1) + ["None"]
            if head in ("Union",):
                return [m for part in parts for m in self.type_members(part, module, depth + 1)]
            if head in ("Annotated", "A", "SkipValidation"):
                return self.type_members(parts[0], module, depth + 1)
            if head == "Literal":
                values = [self.value(part, module) for part in parts]
                return [("literal", values)]
            generic = {"List": "list", "Dict": "dict", "Tuple": "tuple", "Set": "set"}.get(head or "", head)
            return [generic if generic in ("list", "dict", "tuple", "set") else "other"]
        if isinstance(annotation, ast.Name):
            if annotation.id in ("bool", "str", "int", "float", "dict", "list", "tuple", "set"):
                return [annotation.id]
            alias = self.constant(annotation.id, module)
            if alias is not None and isinstance(alias, ast.Subscript | ast.BinOp):
                return self.type_members(alias, module, depth + 1)
        return ["other"]


def _says_deprecated(help_text: object) -> bool:
    """A literal help text that opens by deprecating its flag: "(Deprecated) ...", "[DEPRECATED] ...", "Deprecated."."""
    return isinstance(help_text, str) and help_text.lstrip("([ ").lower().startswith("deprecated")


def _is_classvar(annotation: ast.AST) -> bool:
    head = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    return _called_name(head) == "ClassVar"


def _called_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _called(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}" if func.value.id == "msgspec" else func.attr
    return _called_name(func)


def _dashed(name: str) -> str:
    return "--" + name.replace("_", "-")


def _negations(names: list[str], enable_disable: bool) -> list[str]:
    """The option strings argparse's BooleanOptionalAction adds (and vLLM's EnableDisableAction's inverses)."""
    out = ["--no-" + name[2:] for name in names if name.startswith("--")]
    if enable_disable:
        for name in names:
            for prefix, inverse in (("--enable-", "--disable-"), ("--disable-", "--enable-")):
                if name.startswith(prefix):
                    out.append(inverse + name[len(prefix):])
    return out


class Extractor:
    """Follows a parser's entry point through `add_cli_args` calls, collecting every flag it declares."""

    def __init__(self, release: Release):
        self.release = release
        self.flags: list[Flag] = []
        self.unresolved: list[str] = []
        self._visited: set[tuple[str, str, str]] = set()

    # --- entry points ------------------------------------------------------------------------------------------

    def function(self, module: str, name: str, cls: tuple[str, ast.ClassDef] | None = None) -> None:
        """Walk a module-level function (or a class's method when `cls` is given)."""
        key = (module, cls[1].name if cls else "", name)
        if key in self._visited:
            return
        self._visited.add(key)
        found = self._method(cls, name) if cls else self._module_function(module, name)
        if found is None:
            self.unresolved.append(f"{module}.{name}: not found")
            return
        owner_module, func = found
        self._body(func, owner_module, cls)

    def _module_function(self, module: str, name: str) -> tuple[str, ast.FunctionDef] | None:
        tree = self.release.modules.get(module)
        if tree is None:
            return None
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == name:
                return module, node
        return None

    def _method(self, cls: tuple[str, ast.ClassDef], name: str, depth: int = 0) -> tuple[str, ast.FunctionDef] | None:
        module, node = cls
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name == name:
                return module, item
        for base in node.bases:
            base_name = _called_name(base)
            if depth < 5 and base_name and (found := self.release.class_named(base_name, module)) is not None:
                method = self._method(found, name, depth + 1)
                if method is not None:
                    return method
        return None

    # --- bodies ------------------------------------------------------------------------------------------------

    def _body(self, func: ast.FunctionDef, module: str, cls: tuple[str, ast.ClassDef] | None) -> None:
        kwargs_of: dict[str, tuple[str, ast.ClassDef]] = {}  # name -> the dataclass its get_kwargs() reads
        for node in ast.walk(func):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and isinstance(node.value, ast.Call) and _called(node.value) == "get_kwargs" and node.value.args:
                target_cls = self._class_arg(node.value.args[0], module, cls)
                if target_cls is not None:
                    kwargs_of[node.targets[0].id] = target_cls
        looped: set[int] = set()
        for node in ast.walk(func):
            if isinstance(node, ast.For) and isinstance(node.iter, ast.List | ast.Tuple):
                looped |= self._literal_loop(node, module, kwargs_of)
        for node in ast.walk(func):
            if id(node) in looped:
                continue
            if isinstance(node, ast.For) and isinstance(node.iter, ast.Call) and _called(node.iter) == "items" \
                    and isinstance(node.iter.func, ast.Attribute) and isinstance(node.iter.func.value, ast.Name) \
                    and node.iter.func.value.id in kwargs_of and self._adds_in(node):
                self._all_fields(kwargs_of[node.iter.func.value.id])
            if not isinstance(node, ast.Call):
                continue
            called = _called(node)
            if called == "add_argument":
                self._add_argument(node, module, kwargs_of)
            elif called == "add_cli_args_from_dataclass" and len(node.args) >= 2:
                target_cls = self._class_arg(node.args[1], module, cls)
                if target_cls is not None:
                    self._annotated_fields(target_cls)
            elif called == "add_cli_args" and isinstance(node.func, ast.Attribute):
                owner = node.func.value
                if isinstance(owner, ast.Call) and _called_name(owner.func) == "super" and cls is not None:
                    for base in cls[1].bases:
                        if (name := _called_name(base)) and (found := self.release.class_named(name, cls[0])):
                            self.function(found[0], "add_cli_args", found)
                            break
                elif (target_cls := self._class_arg(owner, module, cls)) is not None:
                    self.function(target_cls[0], "add_cli_args", target_cls)

    def _literal_loop(self, loop: ast.For, module: str, kwargs_of: dict[str, tuple[str, ast.ClassDef]]) -> set[int]:
        """`for arg, kind in [("--a", str), ...]: add_argument(arg, ...)`: one flag per literal item."""
        targets = [t.id for t in loop.target.elts if isinstance(t, ast.Name)] if isinstance(loop.target, ast.Tuple) \
            else [loop.target.id] if isinstance(loop.target, ast.Name) else []
        handled: set[int] = set()
        for call in ast.walk(loop):
            if not (isinstance(call, ast.Call) and _called(call) == "add_argument" and call.args
                    and isinstance(call.args[0], ast.Name) and call.args[0].id in targets):
                continue
            handled.add(id(call))
            position = targets.index(call.args[0].id)
            for item in loop.iter.elts:  # type: ignore[attr-defined]
                element = item.elts[position] if isinstance(item, ast.Tuple) and len(targets) > 1 else item
                if isinstance(element, ast.Constant) and isinstance(element.value, str):
                    named = ast.Call(func=call.func, args=[element, *call.args[1:]], keywords=call.keywords)
                    ast.copy_location(named, call)
                    self._add_argument(named, module, kwargs_of)
        return handled

    @staticmethod
    def _adds_in(loop: ast.For) -> bool:
        return any(isinstance(n, ast.Call) and _called(n) == "add_argument" for n in ast.walk(loop))

    def _class_arg(self, node: ast.AST, module: str, cls: tuple[str, ast.ClassDef] | None) -> tuple[str, ast.ClassDef] | None:
        if isinstance(node, ast.Name) and node.id == "cls":
            return cls
        name = _called_name(node)
        return self.release.class_named(name, module) if name else None

    # --- one add_argument --------------------------------------------------------------------------------------

    def _add_argument(self, call: ast.Call, module: str, kwargs_of: dict[str, tuple[str, ast.ClassDef]]) -> None:
        names = [arg.value for arg in call.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
        if any(isinstance(arg, ast.JoinedStr | ast.Starred) for arg in call.args):
            return  # the loop form: handled with its dataclass (_all_fields)
        if not names or not names[0].startswith("-"):
            if not names:
                self.unresolved.append(f"{module}: add_argument at line {call.lineno} has no literal name")
            return  # a positional (model_tag)
        flag = Flag(names=names)
        from_field: tuple[str, ast.AST, ast.AST | None, str] | None = None
        keywords = list(call.keywords)
        for keyword in call.keywords:  # `**{**kwargs["field"], "default": None}`: the field, then the overrides
            if keyword.arg is None and isinstance(keyword.value, ast.Dict):
                keywords.remove(keyword)
                for key, value in zip(keyword.value.keys, keyword.value.values, strict=True):
                    keywords.append(ast.keyword(arg=None, value=value) if key is None else
                                    ast.keyword(arg=_literal(key), value=value))
        keywords.sort(key=lambda k: k.arg is not None)
        call = ast.Call(func=call.func, args=call.args, keywords=keywords)
        for keyword in call.keywords:
            if keyword.arg is None and isinstance(keyword.value, ast.Subscript) and isinstance(keyword.value.value, ast.Name) \
                    and keyword.value.value.id in kwargs_of:
                field_name = _literal(keyword.value.slice)
                owner = kwargs_of[keyword.value.value.id]
                from_field = next((f for f in self.release.fields(owner[0], owner[1]) if f[0] == field_name), None)
                if from_field is None:
                    flag.choices, flag.default = UNKNOWN, UNKNOWN
                    self.unresolved.append(f"{module}: {names[0]} reads field {field_name!r} not found")
            elif keyword.arg is None:
                flag.choices, flag.default = UNKNOWN, UNKNOWN
        if from_field is not None:
            self._from_field(flag, from_field)
        explicit_default = False
        for keyword in call.keywords:
            if keyword.arg == "action":
                action = keyword.value
                flag.action = action.value if isinstance(action, ast.Constant) else (_called_name(action) or UNKNOWN)
            elif keyword.arg == "choices":
                choices = self.release.value(keyword.value, module)
                flag.choices = sorted(str(c) for c in choices) if isinstance(choices, list) else UNKNOWN
            elif keyword.arg == "default":
                flag.default = self.release.value(keyword.value, module)
                explicit_default = True
            elif keyword.arg == "dest":
                flag.dest = _literal(keyword.value) if isinstance(keyword.value, ast.Constant) else UNKNOWN
            elif keyword.arg == "nargs":
                flag.nargs = _literal(keyword.value)
            elif keyword.arg == "deprecated":
                flag.deprecated = flag.deprecated or _literal(keyword.value) is True
            elif keyword.arg == "help":
                flag.deprecated = flag.deprecated or _says_deprecated(_literal(keyword.value))
        if isinstance(flag.action, str) and flag.action.startswith("Deprecated"):
            flag.deprecated = True  # SGLang's DeprecatedAction, DeprecatedStoreTrueAction ...
        if flag.action in ("BooleanOptionalAction", "boolean_optional"):
            flag.action = "boolean_optional"
            flag.negations = _negations(names, self.release.has_enable_disable)
        if flag.action in _BOOLEAN_ACTIONS and not explicit_default:
            flag.default = not _BOOLEAN_ACTIONS[flag.action]
        elif flag.action not in ("store", "boolean_optional", "append", "store_const", "count") and not explicit_default:
            flag.default = UNKNOWN  # a custom Action class may set its own default
        if flag.dest is None:
            long_names = [n for n in names if n.startswith("--")]
            flag.dest = (long_names[0] if long_names else names[0]).lstrip("-").replace("-", "_")
        self.flags.append(flag)

    def _from_field(self, flag: Flag, entry: tuple[str, ast.AST, ast.AST | None, str]) -> None:
        """vLLM's get_kwargs: the flag's kind, choices and default from its dataclass field."""
        name, annotation, default, module = entry
        members = self.release.type_members(annotation, module)
        simple = {m for m in members if isinstance(m, str)}
        literals = [v for m in members if isinstance(m, tuple) for v in m[1]]
        flag.default = self.release.field_default(default, module)
        if "other" in simple:
            flag.choices = UNKNOWN  # a type we cannot read (an enum, an alias from elsewhere): no guess
        if simple == {"bool", "str", "None"}:
            flag.nargs = "?"
        elif "bool" in simple:
            flag.action = "boolean_optional"
            flag.negations = _negations(flag.names, self.release.has_enable_disable)
        elif literals and not (simple - {"None"}):
            with_none = literals + ([None] if "None" in simple else [])
            flag.choices = sorted(str(v) for v in with_none) if UNKNOWN not in literals else UNKNOWN
        elif "list" in simple or "tuple" in simple or "set" in simple:
            flag.choices = UNKNOWN  # a collection of literals: its choices are not read here

    def _all_fields(self, cls: tuple[str, ast.ClassDef]) -> None:
        """The frontend's loop: one `--field-name` per dataclass field (extra 'flags' aliases are not literal here)."""
        for entry in self.release.fields(cls[0], cls[1]):
            flag = Flag(names=[_dashed(entry[0])], dest=entry[0])
            self._from_field(flag, entry)
            self.flags.append(flag)

    def _annotated_fields(self, cls: tuple[str, ast.ClassDef]) -> None:
        """SGLang's add_cli_args_from_dataclass over ServerArgs and the namespace classes it collects."""
        sources = [cls]
        for module_name, tree in sorted(self.release.modules.items()):
            if module_name.startswith("sglang.srt.arg_groups.fields"):
                for node in tree.body:
                    if isinstance(node, ast.ClassDef) and any(
                            isinstance(item, ast.AnnAssign | ast.Assign) and "_NS_PATH" in ast.unparse(item).split("=")[0]
                            for item in node.body):
                        sources.append((module_name, node))
        for module_name, node in sources:
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    self._annotated_field(item, module_name)

    def _annotated_field(self, item: ast.AnnAssign, module: str) -> None:
        annotation = item.annotation
        if not (isinstance(annotation, ast.Subscript) and _called_name(annotation.value) in ("A", "Annotated")):
            return
        parts = list(annotation.slice.elts) if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
        meta = next((p for p in parts[1:] if isinstance(p, ast.Call) and _called_name(p.func) == "Arg"), None)
        if meta is None and not any(isinstance(p, ast.Constant) and isinstance(p.value, str) for p in parts[1:]):
            if any(isinstance(p, ast.JoinedStr | ast.BinOp) for p in parts[1:]):
                meta = ast.Call(func=ast.Name("Arg"), args=[], keywords=[])  # help built from pieces
            else:
                return
        keywords = {k.arg: k.value for k in meta.keywords} if meta is not None else {}
        if _literal(keywords.get("no_cli")) is True:
            return
        field_name = item.target.id  # type: ignore[union-attr]
        cli_name = _literal(keywords["cli_name"]) if "cli_name" in keywords else _dashed(field_name)
        aliases = self.release.value(keywords["aliases"], module) if "aliases" in keywords else []
        if cli_name is UNKNOWN or aliases is UNKNOWN:
            self.unresolved.append(f"{module}: field {field_name} has a computed flag name")
            return
        flag = Flag(names=[cli_name, *aliases], dest=field_name)
        flag.default = self.release.field_default(item.value, module) if item.value is not None else UNKNOWN
        members = self.release.type_members(parts[0], module)
        simple = {m for m in members if isinstance(m, str)}
        literals = [v for m in members if isinstance(m, tuple) for v in m[1]]
        if "action" in keywords:
            action = keywords["action"]
            flag.action = action.value if isinstance(action, ast.Constant) else (_called_name(action) or UNKNOWN)
            if flag.action == "BooleanOptionalAction":
                flag.action = "boolean_optional"
                flag.negations = _negations(flag.names, self.release.has_enable_disable)
        elif literals:
            flag.choices = sorted(str(v) for v in literals)
        elif simple - {"None"} == {"list"} and "type_parser" not in keywords:
            flag.nargs = "+"
        elif simple - {"None"} == {"bool"}:
            flag.action = "store_true"
        if "choices" in keywords:
            choices = self.release.value(keywords["choices"], module)
            flag.choices = sorted(str(c) for c in choices) if isinstance(choices, list) else UNKNOWN
        if "nargs" in keywords:
            flag.nargs = _literal(keywords["nargs"])
        self.flags.append(flag)



def extract(engine: str, files: dict[str, str]) -> tuple[list[dict[str, Any]], list[str]]:
    """The flags of one release's launch parser, and what could not be followed."""
    release = Release(files)
    extractor = Extractor(release)
    if engine == "sglang":
        found = release.class_named("ServerArgs", "sglang.srt.server_args")
        if found is not None:
            extractor.function(found[0], "add_cli_args", found)
    else:
        # `vllm serve`'s parser: where the serve subcommand imports make_arg_parser from (it moved between
        # releases), else where 0.6's api_server had it.
        serve = [m for m in release._imports("vllm.entrypoints.cli.serve", "make_arg_parser") if m in release.modules]
        for module in (*serve, "vllm.entrypoints.openai.cli_args"):
            if extractor._module_function(module, "make_arg_parser") is not None:
                extractor.function(module, "make_arg_parser")
                break
        else:
            extractor.unresolved.append("make_arg_parser: not found")
    merged: dict[str, Flag] = {}
    for flag in extractor.flags:
        merged[flag.names[0]] = flag  # a later add_argument of the same flag replaces it, as argparse would refuse
    return [merged[name].record() for name in sorted(merged)], extractor.unresolved
