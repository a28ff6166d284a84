"""Which package's code defines a class: the engines' (SGLang, vLLM) and the packages they run (transformers,
flashinfer, sgl-kernel, xgrammar), from engine_classes.json.gz (scripts/engine_index/classes.py, `make
engine-index`: every class the indexed releases' files define, found by a line scan; for transformers also its
models/ tree, whose config and processor classes the engines vendor copies of).

A message shows the object that failed by its class: CPython says `'ForwardBatch' object has no attribute
'spec_info'`, `ServerArgs.__init__() got an unexpected keyword argument 'x'`.  With no frame pasted, that class is
the one trace left of whose code was running: a class only one engine defines (and no package it runs) is
positive evidence of that engine, as a path under its package would be.  A class several define decides nothing.
"""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from pathlib import Path

from logsleuth.lazyre import compile_lazily

ENGINES = ("sglang", "vllm")

# The class CPython's own messages name, in the shapes that name one: an attribute lookup on an instance or on the
# class itself, and a call's signature (`Class.method()`, 3.10+ qualified names; `__init__` is the constructor).
_CLASS_NAMED = compile_lazily(
    r"^'(?P<a>[A-Z]\w*)' object has no attribute '"
    r"|^type object '(?P<b>[A-Z]\w*)' has no attribute '"
    r"|^(?P<c>[A-Z]\w*)\.\w+\(\) (got an unexpected keyword argument|got multiple values for argument"
    r"|missing \d+ required (positional|keyword-only) argument|takes (from )?\d+ (positional )?argument)"
)


@lru_cache(maxsize=1)
def _defined() -> dict[str, frozenset[str]]:
    """Class name -> the packages defining it."""
    data = json.loads(gzip.decompress((Path(__file__).parent / "engine_classes.json.gz").read_bytes()))
    owners: dict[str, set[str]] = {}
    for package, names in data.items():
        for name in names:
            owners.setdefault(name, set()).add(package)
    return {name: frozenset(packages) for name, packages in owners.items()}


def class_in_message(message: str) -> str | None:
    """The class CPython's message names the failing object by, if it names one."""
    match = _CLASS_NAMED.match(message.strip())
    return (match["a"] or match["b"] or match["c"]) if match else None


def defined_by(name: str) -> frozenset[str]:
    """The packages (engines and the packages they run) whose indexed code defines class `name`."""
    return _defined().get(name, frozenset())


# A name of two or more words (`ForwardBatch`, `LLMEngine`, `GPUModelRunner`): one word (`LLM`, `Engine`, `Config`)
# is one engine's class but also a class of many programs the index does not read (TensorRT-LLM's `LLM`, a wrapper's
# `Engine`), so it decides nothing.
_WORD = compile_lazily(r"[A-Z]+(?![a-z])|[A-Z][a-z0-9]+")
MIN_WORDS = 2
MIN_LENGTH = 8


def distinctive(name: str) -> bool:
    return len(name) >= MIN_LENGTH and len(_WORD.findall(name)) >= MIN_WORDS


# The kinds of class transformers' Auto factories load (AutoConfig, AutoProcessor, AutoImageProcessor,
# AutoVideoProcessor, AutoFeatureExtractor, AutoTokenizer), by the suffix of their names.  The engines run these from
# transformers, and keep copies of some (sglang/srt/configs/: `Qwen2VLConfig`, processors such as `PixtralProcessor`);
# a model class (`Qwen2ForCausalLM`) the engines write themselves, whatever transformers also defines.
_LOADED_FROM_TRANSFORMERS = ("Config", "Processor", "ProcessorFast", "FeatureExtractor", "Tokenizer", "TokenizerFast")


def vendored(name: str) -> bool:
    """A class of the kinds the engines load from transformers, which transformers defines too: an error on it is as
    likely transformers' own code failing as an engine's copy."""
    return name.endswith(_LOADED_FROM_TRANSFORMERS) and "transformers" in defined_by(name)


def engines_defining(name: str) -> frozenset[str]:
    """The engines whose code defines class `name` (either engine, both, or none); none for a name too common to say,
    or for a class of transformers' the engines keep a copy of (`vendored`)."""
    if not distinctive(name) or vendored(name):
        return frozenset()
    return defined_by(name) & frozenset(ENGINES)


def only_engine_defining(name: str) -> str | None:
    """The one engine whose code defines `name`, when no other indexed package does and the name is distinctive:
    positive evidence of that engine."""
    owners = defined_by(name)
    if len(owners) != 1 or not owners <= frozenset(ENGINES) or not distinctive(name):
        return None
    return next(iter(owners))
