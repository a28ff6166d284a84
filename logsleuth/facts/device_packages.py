"""The Python packages that give torch a non-CUDA accelerator, and how to check each (device_packages.toml)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from logsleuth.facts.table import table_rows


@dataclass(frozen=True)
class DevicePackage:
    """One vendor's device extension of torch: its import and pip names, its platform, its check and its needs."""

    module: str
    distribution: str
    platform: str
    check: str
    runtime: str
    installs: str
    sources: tuple[str, ...]


@cache
def device_packages() -> tuple[DevicePackage, ...]:
    return tuple(
        DevicePackage(row["module"], row["distribution"], row["platform"], row["check"], row["runtime"],
                      row["installs"], tuple(row["sources"]))
        for row in table_rows("device_packages.toml", "package")
    )


def device_package(module: str) -> DevicePackage | None:
    """The row of a module name (its top-level package: `habana_frameworks.torch` is habana_frameworks), else None."""
    top = module.split(".", 1)[0]
    return next((row for row in device_packages() if row.module == top), None)
