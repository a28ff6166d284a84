"""The error names of the GPU runtimes' and libraries' status enums (gpu_error_names.toml, with its sources)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from logsleuth.facts.table import parsed_toml, table_rows


@dataclass(frozen=True)
class ErrorNameFamily:
    """One status enum: the failure type its names get, and its error names (or the prefix every error name has)."""

    family: str
    type: str
    names: frozenset[str]
    prefix: str
    sources: tuple[str, ...]

    def defines(self, name: str) -> bool:
        return name in self.names or (bool(self.prefix) and name.startswith(self.prefix) and len(name) > len(self.prefix))


@cache
def families() -> tuple[ErrorNameFamily, ...]:
    return tuple(
        ErrorNameFamily(row["family"], row["type"], frozenset(row.get("names", ())), row.get("prefix", ""),
                        tuple(row.get("sources", ())))
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
    """The category an error name says (gpu-arch-unsupported for a build with no code for the GPU,
    illegal-memory-access for a kernel's bad address), else cuda-error."""
    return _categories().get(name, "cuda-error")
