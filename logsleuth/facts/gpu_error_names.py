"""The error names of the GPU runtimes' and libraries' status enums (gpu_error_names.toml, with its sources)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from logsleuth.facts.table import parsed_toml, table_rows


@dataclass(frozen=True)
class ErrorNameFamily:
    """One status enum: the failure type its names get, and its error names (or the prefix every error name has), less
    the members a healthy program prints (`not_failures`); the category of its names [category] does not list."""

    family: str
    type: str
    names: frozenset[str]
    prefix: str
    sources: tuple[str, ...]
    not_failures: frozenset[str] = frozenset()
    category: str = "unclassified"

    def defines(self, name: str) -> bool:
        if name in self.not_failures:
            return False
        return name in self.names or (bool(self.prefix) and name.startswith(self.prefix) and len(name) > len(self.prefix))


@cache
def families() -> tuple[ErrorNameFamily, ...]:
    return tuple(
        ErrorNameFamily(row["family"], row["type"], frozenset(row.get("names", ())), row.get("prefix", ""),
                        tuple(row.get("sources", ())), frozenset(row.get("not_failures", ())),
                        row.get("category", "unclassified"))
        for row in table_rows("gpu_error_names.toml", "family")
    )


def family_of(name: str) -> ErrorNameFamily | None:
    """The enum that defines `name` as an error (cudaErrorNoKernelImageForDevice: the CUDA runtime's), else None:
    a word that only looks like one (`cudaErrorFoo`) and the success names are none."""
    return next((family for family in families() if family.defines(name)), None)


@cache
def _categories() -> dict[str, str]:
    return {name: category for category, names in parsed_toml("gpu_error_names.toml").get("category", {}).items()
            for name in names}


def name_category(name: str) -> str:
    """The category a paste showing only this error name gets (gpu-arch-unsupported for a build with no code for the
    GPU, illegal-memory-access for a kernel's bad address, gpu-oom), else its family's (cuda-error for CUDA's)."""
    if (listed := _categories().get(name)) is not None:
        return listed
    family = family_of(name)
    return family.category if family is not None else "unclassified"


@cache
def _strings() -> dict[str, str]:
    return dict(parsed_toml("gpu_error_names.toml").get("strings", {}))


def name_of_string(said: str) -> str | None:
    """The CUDA runtime's status name whose error string (cudaGetErrorString) is `said` ([strings]: 'peer access is not
    supported between these two devices' is cudaErrorPeerAccessUnsupported), else None."""
    return _strings().get(said.strip().rstrip("."))
