"""Which versions of a model family each indexed SGLang and vLLM release implements: the facts behind "MiniCPMV 4.0
is implemented by the indexed vLLM releases 0.10.1.1 to 0.34.0" (reasoning/model_versions.py).

    python scripts/engine_index/model_versions.py           (write logsleuth/facts/model_versions.json)
    python scripts/engine_index/model_versions.py --check   (is the shipped file what this script builds?)

Some model classes serve several versions of one family and pick the implementation by the checkpoint's version
(config.json "version", or a version read from the config), refusing any other in their own words: vLLM's and
SGLang's MiniCPMV ("Currently, MiniCPMV only supports versions …"), vLLM's MiniCPMO (the same words), vLLM's Grok
("Unsupported Grok version: {}").  The versions a release implements are the keys of the module-level dict the
refusing function looks the version up in (`_SUPPORT_VERSION.get(version)`, `_GROK_VERSIONS.get(version)`): read
with ast from each indexed release's wheel (the raise-site index's releases and cache, build.py, fetch.py), never
imported.  A dict is kept only when the function that looks it up also raises the refusal, whose words name the
family.

The file: per engine the releases in order, per family and version the runs of release indices implementing it
("a-b", several joined with ",", as engine_architectures.json.gz writes them).  "Implementing" means dispatched by
that version dict: a release whose class exists without such a dict (vLLM 0.11.2's `class MiniCPMO(MiniCPMV2_6)`,
which refuses nothing by version) is not listed for the family, though it may serve the model.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build import OUTPUT_DIR, RELEASES, ship_main  # noqa: E402
from fetch import Cache, fetch_release  # noqa: E402
from module_names import runs  # noqa: E402

OUTPUT = OUTPUT_DIR / "model_versions.json"
ENGINES = ("sglang", "vllm")
MODEL_PACKAGES = {"sglang": ("sglang/srt/models/",), "vllm": ("vllm/model_executor/models/", "vllm/models/")}
# The refusal's words, which name the family (the raise site index holds the messages).
REFUSAL = re.compile(r"Currently, (\w+) only supports versions|Unsupported (\w+) version")
# Cheap text filter before ast: only files whose source holds a refusal are parsed.
REFUSAL_TEXT = ("only supports versions", "version:")


def _version_text(key: ast.expr) -> str | None:
    """A dict key as the version it stands for: (4, 5) -> "4.5", "grok2" -> "grok2"."""
    if isinstance(key, ast.Tuple) and all(isinstance(item, ast.Constant) and isinstance(item.value, int)
                                          for item in key.elts):
        return ".".join(str(item.value) for item in key.elts)  # type: ignore[attr-defined]
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return key.value
    return None


def _module_dicts(tree: ast.Module) -> dict[str, list[str]]:
    """The module-level dict literals whose keys are all versions: name -> versions."""
    found: dict[str, list[str]] = {}
    for statement in tree.body:
        target = statement.targets[0] if isinstance(statement, ast.Assign) else (
            statement.target if isinstance(statement, ast.AnnAssign) else None)
        value = statement.value if isinstance(statement, ast.Assign | ast.AnnAssign) else None
        if not isinstance(target, ast.Name) or not isinstance(value, ast.Dict) or not value.keys:
            continue
        versions = [_version_text(key) for key in value.keys if key is not None]
        if versions and all(versions):
            found[target.id] = [v for v in versions if v]
    return found


def _refused_family(function: ast.AST) -> str | None:
    """The family the function's raise names (its message's literal parts)."""
    for node in ast.walk(function):
        if isinstance(node, ast.Raise):
            words = " ".join(part.value for part in ast.walk(node)
                             if isinstance(part, ast.Constant) and isinstance(part.value, str))
            if (found := REFUSAL.search(words)) is not None:
                return found[1] or found[2]
    return None


def _looked_up(function: ast.AST, names: dict[str, list[str]]) -> Iterator[str]:
    """The version dicts the function looks a version up in (`NAME.get(…)`, `NAME[…]`)."""
    for node in ast.walk(function):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and isinstance(node.func.value, ast.Name) and node.func.value.id in names):
            yield node.func.value.id


def family_versions(source: str) -> dict[str, list[str]]:
    """Per family a module's refusing functions name, the versions the dict they look up holds."""
    if not any(text in source for text in REFUSAL_TEXT):
        return {}
    tree = ast.parse(source)
    dicts = _module_dicts(tree)
    families: dict[str, list[str]] = {}
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef) or (family := _refused_family(function)) is None:
            continue
        for name in _looked_up(function, dicts):
            families.setdefault(family, [])
            families[family] += [v for v in dicts[name] if v not in families[family]]
    return families


def engine_table(cache: Cache, engine: str) -> dict[str, object]:
    versions = RELEASES[engine]
    held: dict[str, dict[str, set[int]]] = {}
    for index, version in enumerate(versions):
        release = fetch_release(engine, version, cache)
        for path, key in sorted(release.files.items()):
            if not path.endswith(".py") or not path.startswith(MODEL_PACKAGES[engine]):
                continue
            for family, implemented in family_versions(cache.source(key).decode("utf-8", "replace")).items():
                for model_version in implemented:
                    held.setdefault(family, {}).setdefault(model_version, set()).add(index)
    return {"releases": list(versions),
            "families": {family: {v: runs(held[family][v]) for v in sorted(held[family])} for family in sorted(held)}}


def build(cache: Cache) -> bytes:
    table = {
        "how": "scripts/engine_index/model_versions.py: the versions of a model family each indexed release "
               "implements, the keys of the dict its refusing function looks the checkpoint's version up in, read "
               "with ast from the wheels",
        "engines": {engine: engine_table(cache, engine) for engine in ENGINES},
    }
    return (json.dumps(table, sort_keys=True, indent=1) + "\n").encode()


def main() -> int:
    return ship_main(__doc__ or "", OUTPUT, build, "scripts/engine_index/model_versions.py")


if __name__ == "__main__":
    sys.exit(main())
