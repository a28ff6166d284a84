#!/usr/bin/env python3
"""Which distribution provides each module an engine imports: logsleuth/facts/imports.toml.

    python scripts/facts/import_names.py          # rewrite imports.toml (make facts runs it after requires_dist.py)

An import error names a module (`cv2`, `google.protobuf`, `sgl_kernel`); the engines' pins name distributions
(`opencv-python-headless`, `protobuf`, `sgl-kernel`).  The link is read, never guessed, from the files each
distribution installs (the paths its RECORD lists; top_level.txt where it has no RECORD):
- the dist-info directories of the oracle venvs (~/.cache/logsleuth/oracle/*: the real SGLang and vLLM
  releases with part of their dependencies);
- for the distributions that a plain install of a release needs but the oracle venvs lack (CUDA-only ones:
  sgl-kernel, flashinfer-python, xformers, ...), the wheel `pip download --no-deps` fetches, read and deleted.
A top-level directory without `__init__.py` is a namespace (`google`, `nvidia`): its subpackages are the
modules.  Only distributions some known release declares (requires.json) are listed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import zipfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from scripts.facts.requires_dist import OUT as REQUIRES  # noqa: E402
from scripts.facts.requires_dist import normalize  # noqa: E402

ORACLES = Path.home() / ".cache/logsleuth/oracle"
OUT = ROOT / "logsleuth" / "facts" / "imports.toml"
# Downloaded when no oracle venv has them: the torch-linked extensions and the libraries import errors name
# most, which the CPU-only oracle venvs do not install.  Each is fetched once, newest wheel, no dependencies.
DOWNLOAD = (
    "sgl-kernel",
    "flashinfer-python",
    "xformers",
    "opencv-python-headless",
    "protobuf",
    "outlines",
    "outlines-core",
    "torchao",
    "cuda-python",
    "nvidia-ml-py",
    "pynvml",
    "decord",
    "vllm-flash-attn",
    "compressed-tensors",
    "triton",
    "ray",
    "torchvision",
    "timm",
    "hf-transfer",
    "huggingface-hub",
    "python-multipart",
    "pyzmq",
    "pillow",
    "pyyaml",
    "soundfile",
    "librosa",
    "mistral-common",
    "lm-format-enforcer",
    "flash-attn-4",
    "sglang-kernel",
    "quack-kernels",
    "nvidia-cutlass-dsl",
    "apache-tvm-ffi",
)


# Top-level names some wheels install besides their package (torchao's `test`, nvidia-ml-py's `example`,
# flashinfer's `build_backend`): importable, but no import error of an engine names them, and mapping them would
# tie an unrelated `No module named 'test'` to a distribution.
INCIDENTAL = frozenset({"test", "tests", "example", "examples", "lib", "docs", "benchmarks", "scripts", "build_backend", "build_utils", "setup"})


def modules_of(paths: list[str]) -> set[str]:
    """The importable top-level modules among the paths a distribution installs."""
    top_dirs: dict[str, set[str]] = defaultdict(set)
    modules: set[str] = set()
    for path in paths:
        parts = path.split("/")
        head = parts[0]
        if head.endswith((".dist-info", ".data", ".egg-info")) or head in ("..", "__pycache__") or not head:
            continue
        if len(parts) == 1:
            stem = head.split(".", 1)[0]
            if head.endswith((".py", ".so", ".pyd")) and stem.isidentifier():
                modules.add(stem)
            continue
        top_dirs[head].add("/".join(parts[1:]))
    for head, inside in top_dirs.items():
        if not head.isidentifier() or head.endswith(".libs"):
            continue
        if "__init__.py" in inside or any(p.startswith("__init__.") for p in inside):
            modules.add(head)
            continue
        subpackages = {p.split("/", 1)[0] for p in inside if "/" in p and p.split("/", 1)[1].startswith("__init__.")}
        modules.update(f"{head}.{sub}" for sub in subpackages if sub.isidentifier())
        if not subpackages and any(p.endswith((".py", ".so")) for p in inside):
            modules.add(head)  # an implicit namespace holding modules directly
    return {module for module in modules if module not in INCIDENTAL}


def record_paths(text: str) -> list[str]:
    return [line.split(",", 1)[0] for line in text.splitlines() if line]


def from_oracles() -> dict[str, tuple[set[str], str]]:
    """{distribution: (modules, where read)} from every oracle venv's dist-info directories."""
    found: dict[str, tuple[set[str], str]] = {}
    for dist_info in sorted(ORACLES.glob("*/lib/python3*/site-packages/*.dist-info")):
        name = normalize(dist_info.name.removesuffix(".dist-info").rsplit("-", 1)[0])
        record = dist_info / "RECORD"
        top_level = dist_info / "top_level.txt"
        if record.exists():
            modules = modules_of(record_paths(record.read_text()))
            source = f"oracle {dist_info.parts[-5]}: {dist_info.name}/RECORD"
        elif top_level.exists():
            modules = set(top_level.read_text().split())
            source = f"oracle {dist_info.parts[-5]}: {dist_info.name}/top_level.txt"
        else:
            continue
        if modules and name not in found:
            found[name] = (modules, source)
    return found


def from_wheel(distribution: str) -> tuple[set[str], str] | None:
    with tempfile.TemporaryDirectory(prefix="logsleuth-imports-") as tmp:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir", "--quiet",
             "--only-binary=:all:", "--dest", tmp, distribution],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        wheels = list(Path(tmp).glob("*.whl"))
        if done.returncode != 0 or not wheels:
            print(f"{distribution}: no wheel ({(done.stderr.strip().splitlines() or ['?'])[-1]})", file=sys.stderr)
            return None
        with zipfile.ZipFile(wheels[0]) as wheel:
            record = next(n for n in wheel.namelist() if n.endswith(".dist-info/RECORD") and n.count("/") == 1)
            modules = modules_of(record_paths(wheel.read(record).decode()))
        return modules, f"wheel {wheels[0].name}: RECORD"


def declared() -> set[str]:
    data = json.loads(REQUIRES.read_text())
    names: set[str] = set()
    for releases in data["engines"].values():
        for release in releases.values():
            names.update(release["requires"])
            for table in release["extras"].values():
                names.update(table)
    return names


def toml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid TOML basic string for this text


def main() -> int:
    wanted = declared()
    found = {name: value for name, value in from_oracles().items() if name in wanted}
    for distribution in DOWNLOAD:
        if distribution in wanted and distribution not in found:
            read = from_wheel(distribution)
            if read is not None:
                found[distribution] = read
    by_module: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for distribution, (modules, source) in found.items():
        for module in modules:
            by_module[module].append((distribution, source))
    lines = [
        "# Module -> the distributions that install it, for the modules of the distributions SGLang and vLLM",
        "# releases declare (logsleuth/facts/requires.json).  Written by scripts/facts/import_names.py (make facts)",
        "# from the files each distribution installs (its RECORD), never by hand; `source` names what was read.",
        "# A module several distributions install (cv2: opencv-python, opencv-python-headless) lists each.",
        "",
        "[modules]",
    ]
    for module in sorted(by_module, key=str.lower):
        rows = sorted(by_module[module])
        distributions = ", ".join(toml_string(d) for d, _ in rows)
        sources = "; ".join(s for _, s in rows)
        key = module if re.fullmatch(r"[A-Za-z0-9_-]+", module) else toml_string(module)
        lines.append(f"{key} = {{ distributions = [{distributions}], source = {toml_string(sources)} }}")
    OUT.write_text("\n".join(lines) + "\n")
    print(f"{OUT.relative_to(ROOT)}: {len(by_module)} modules of {len(found)} distributions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
