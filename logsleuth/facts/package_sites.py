"""The packages whose code SGLang and vLLM run, indexed like the engines (issue 29 item 5): flashinfer, sgl-kernel,
xgrammar and transformers.  Their raise sites are in raise_sites-<package>.zip (scripts/engine_index/build.py,
`make engine-index`), for the versions the indexed engine releases pin (facts/requires.json); this module says
what each package is called where, and which version of it a log shows.

A version is read only from a line that names the distribution and a version next to each other, the shapes an
environment dump prints: `pip list`'s columns (`transformers  4.57.1`), `pip freeze` and vLLM's collect_env
(`transformers==4.57.1`, `[pip3] transformers==4.57.1`), SGLang's check_env (`transformers: 4.57.1`) and
`transformers version: 4.57.1`.  A local build tag (`0.2.5+cu124torch2.6`) is dropped: the index knows PyPI's
releases.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from logsleuth.lazyre import compile_lazily


@dataclass(frozen=True, slots=True)
class Package:
    name: str  # the import name, as frames show it and the index files it: "sgl_kernel"
    distribution: str  # PyPI's name, as requires.json pins it: "sgl-kernel"
    shown: str  # as a report names it


PACKAGES = {
    package.name: package
    for package in (
        Package("flashinfer", "flashinfer-python", "FlashInfer"),
        Package("sgl_kernel", "sgl-kernel", "sgl-kernel"),
        Package("xgrammar", "xgrammar", "XGrammar"),
        Package("transformers", "transformers", "transformers"),
    )
}

# The spellings a dump gives a distribution: PyPI's, with `_` or `-`, any case (check_env prints flashinfer_python).
_NAME = r"(?P<name>flashinfer[-_]python|flashinfer|sgl[-_]kernel|xgrammar|transformers)"
_VERSION = r"(?P<version>\d+(?:\.\d+){1,3}(?:(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?)(?:\+[\w.]+)?"
_SHOWN = compile_lazily(
    rf"(?:^|[\s\[\]'\"])(?i:{_NAME})(?:\s*==\s*|\s+version\s*:?\s*|\s*:\s+|\s{{2,}}|\s+(?=\d[\d.]*\s*$)){_VERSION}(?![\w.+-])"
)
_ANY_NAME = ("transformers", "flashinfer", "xgrammar", "sgl_kernel", "sgl-kernel")


def shows_a_version(text: str) -> bool:
    """Whether a log line may show one of these packages' versions (a cheap test first: it runs on early lines)."""
    lowered = text.lower()
    return any(name in lowered for name in _ANY_NAME) and _SHOWN.search(text) is not None


def package_of(name: str) -> str | None:
    """`flashinfer_python` -> `flashinfer`: the package a distribution's spelling names."""
    key = name.lower().replace("-", "_")
    return "flashinfer" if key.startswith("flashinfer") else key if key in PACKAGES else None


def versions_shown(lines: Iterable[str], package: str) -> list[str]:
    """The versions of `package` the lines show, in the order first seen."""
    found: dict[str, None] = {}
    for line in lines:
        if not any(name in line.lower() for name in _ANY_NAME):
            continue
        for match in _SHOWN.finditer(line):
            if package_of(match["name"]) == package:
                found.setdefault(match["version"], None)
    return list(found)
