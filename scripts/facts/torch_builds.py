#!/usr/bin/env python3
"""Which CUDA each torch release that an engine pins is built with on PyPI: logsleuth/facts/torch_builds.json.

    python scripts/facts/torch_builds.py            (make facts runs it after requires_dist.py)

`pip install torch==V` on a Linux x86_64 server takes PyPI's wheel, whose METADATA declares the CUDA runtime it
was built against (`Requires-Dist: nvidia-cuda-runtime-cu12==12.4.127`).  A GPU whose architecture only a newer
CUDA toolkit knows (facts/gpus.toml [[toolkit]]: sm_120 needs 12.8) has no kernels in that wheel, so a fix that
pins it leads into a second failure ("no kernel image is available", "sm_120 is not compatible").  The versions
read are every torch `==` pin of requires.json; for each, only the wheel's METADATA is read, by HTTP range requests
(scripts/wheel_files.py), never the ~800 MB wheel.  Nothing is typed by hand: a release whose wheel declares no
CUDA runtime (a CPU-only build) is kept with "cuda": null.
"""

from __future__ import annotations

import email.parser
import json
import re
import sys
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from wheel_files import TRANSFER, read_members, release_wheel  # noqa: E402

REQUIRES = ROOT / "logsleuth" / "facts" / "requires.json"
OUT = ROOT / "logsleuth" / "facts" / "torch_builds.json"


def pinned_torch_versions() -> list[str]:
    engines = json.loads(REQUIRES.read_text())["engines"]
    found: set[str] = set()
    for releases in engines.values():
        for release in releases.values():
            for declared in [release.get("requires", {}), *release.get("extras", {}).values()]:
                spec = declared.get("torch", "")
                if spec.startswith("==") and "," not in spec and "*" not in spec:
                    found.add(spec[2:])
    return sorted(found, key=lambda v: tuple(int(p) if p.isdigit() else 0 for p in re.split(r"[.+]", v)))


def cuda_of(metadata: bytes) -> str | None:
    """`12.4` from `nvidia-cuda-runtime-cu12 (==12.4.127)`, `13.0` from `cuda-toolkit[cudart,...]==13.0.2`."""
    message = email.parser.BytesParser().parsebytes(metadata, headersonly=True)
    for line in message.get_all("Requires-Dist") or []:
        requirement = Requirement(line)
        runtime = re.fullmatch(r"nvidia-cuda-runtime(-cu\d+)?", requirement.name) or (
            requirement.name == "cuda-toolkit" and "cudart" in requirement.extras)
        pinned = [spec.version for spec in requirement.specifier if spec.operator == "=="]
        if runtime and pinned:
            major, minor = pinned[0].split(".")[:2]
            return f"{major}.{minor}"
    return None


def main() -> int:
    builds: dict[str, dict[str, str | None]] = {}
    for version in pinned_torch_versions():
        wheel = release_wheel("torch", version)
        members = read_members(wheel.url, lambda name: name.endswith(".dist-info/METADATA"))
        (metadata,) = members.values()
        builds[version] = {"cuda": cuda_of(metadata), "file": wheel.filename, "sha256": wheel.sha256}
        print(f"torch {version}: CUDA {builds[version]['cuda']} ({wheel.filename})", file=sys.stderr)
    document = {
        "source": "each torch release's PyPI wheel for CPython 3.11 on Linux x86_64 (the file pip picks), its "
                  "METADATA's Requires-Dist nvidia-cuda-runtime-cuNN==X.Y.*, read by scripts/facts/torch_builds.py",
        "builds": builds,
    }
    OUT.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    print(f"{len(builds)} torch releases; {TRANSFER.bytes} bytes in {TRANSFER.requests} requests", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
