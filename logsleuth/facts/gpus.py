"""GPUs, what their architecture can run, and the GPU a log shows (facts/gpus.toml: every row with its source).

`gpus_in(lines)` finds the GPU in an environment dump (`python -m sglang.check_env`, torch's `collect_env`),
an `nvidia-smi` table, or a message that names the device or its capability.  Each line is first tested for a
literal cue, so an ordinary log line costs a few substring tests; the regexes are anchored on that cue and
bounded (no nested quantifiers)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from logsleuth.lazyre import compile_lazily

Capability = tuple[int, int]

_TABLE = Path(__file__).resolve().parent / "gpus.toml"
# The check that lists each GPU with its compute capability (nvidia-smi's own query fields), for the rules and fixes.
CHECK_GPU = "nvidia-smi --query-gpu=name,compute_cap --format=csv"


@dataclass(frozen=True, slots=True)
class Gpu:
    """A GPU the log shows: its name as printed (may be empty when only its capability is), its compute
    capability (NVIDIA) or gfx target (AMD), when the log or the table gives it."""

    name: str
    capability: Capability | None = None
    gfx: str | None = None

    def describe(self) -> str:
        """`NVIDIA A100-SXM4-80GB (compute capability 8.0)`, `AMD Instinct MI300X (gfx942)`."""
        label = self.name or "the GPU"
        if self.capability is not None:
            return f"{label} (compute capability {show(self.capability)})"
        if self.gfx is not None:
            return f"{label} ({self.gfx})"
        return label


@dataclass(frozen=True, slots=True)
class GpuRow:
    """One GPU of facts/gpus.toml: its names and compute capability (or AMD gfx target)."""
    names: tuple[str, ...]
    capability: Capability | None
    gfx: str | None
    source: str


@dataclass(frozen=True, slots=True)
class Feature:
    """What a dtype, kernel or feature needs: `minimum` (this capability or newer) or `archs` (only these)."""

    key: str
    what: str
    cues: tuple[str, ...]
    minimum: Capability | None
    archs: tuple[Capability, ...]
    source: str
    note: str | None = None
    note_source: str | None = None

    def runs_on(self, capability: Capability) -> bool:
        if self.archs:
            return capability in self.archs
        return self.minimum is None or capability >= self.minimum

    def needs(self) -> str:
        """`compute capability 8.0 or newer`, `sm_90 or sm_100`."""
        if self.archs:
            return " or ".join(arch_name(arch) for arch in self.archs)
        return f"compute capability {show(self.minimum)} or newer" if self.minimum else "a supported GPU"


@dataclass(frozen=True, slots=True)
class Toolkit:
    """The first CUDA toolkit that knows an architecture."""
    capability: Capability
    cuda: str
    source: str


@dataclass(frozen=True, slots=True)
class Facts:
    """facts/gpus.toml, read: GPUs, features and toolkits, with their sources."""
    sources: dict[str, str]
    gpus: tuple[GpuRow, ...]
    features: tuple[Feature, ...]
    toolkits: tuple[Toolkit, ...]


def parse_capability(text: str) -> Capability | None:
    """"8.0" -> (8, 0); "sm_90a" / "sm90" / "SM100" -> (9, 0) / (10, 0); "compute_120" -> (12, 0); "75" -> (7, 5)."""
    match = re.fullmatch(r"\s*(\d{1,2})\.(\d)\s*", text)
    if match:
        return int(match[1]), int(match[2])
    match = re.fullmatch(r"\s*(?:sm_?|compute_)?(\d{2,3})[af]?\s*", text, re.IGNORECASE)
    if match:
        digits = match[1]
        return int(digits[:-1]), int(digits[-1])
    return None


def show(capability: Capability | None) -> str:
    return f"{capability[0]}.{capability[1]}" if capability else "?"


def arch_name(capability: Capability) -> str:
    return f"sm_{capability[0]}{capability[1]}"


@lru_cache(maxsize=1)
def facts() -> Facts:
    """The table, read once per run."""
    from logsleuth.facts.table import parsed_toml  # here: the ingest imports this module on every run

    data = parsed_toml(_TABLE.name)

    def cap(value: object) -> Capability | None:
        return parse_capability(str(value)) if value is not None else None

    gpus = tuple(
        GpuRow(tuple(row["names"]), cap(row.get("capability")), row.get("gfx"), row["source"]) for row in data["gpu"]
    )
    features = tuple(
        Feature(
            key=row["key"],
            what=row["what"],
            cues=tuple(row["cues"]),
            minimum=cap(row.get("minimum")),
            archs=tuple(c for arch in row.get("archs", ()) if (c := cap(arch)) is not None),
            source=row["source"],
            note=row.get("note"),
            note_source=row.get("note_source"),
        )
        for row in data["feature"]
    )
    toolkits = tuple(
        Toolkit(c, row["cuda"], row["source"]) for row in data["toolkit"] if (c := cap(row["capability"])) is not None
    )
    return Facts(dict(data["sources"]), gpus, features, toolkits)


def feature(key: str) -> Feature | None:
    return next((row for row in facts().features if row.key == key), None)


def features_named_in(text: str) -> list[Feature]:
    """The features a message names, by their cue words (lower-case text)."""
    lowered = text.lower()
    return [row for row in facts().features if any(cue in lowered for cue in row.cues)]


def toolkit_for(capability: Capability) -> Toolkit | None:
    """The first CUDA toolkit that compiles for this architecture (None when the table does not say)."""
    return next((row for row in facts().toolkits if row.capability == capability), None)


@lru_cache(maxsize=1)
def _name_regex() -> tuple[re.Pattern[str], dict[str, GpuRow]]:
    by_name = {name.upper(): row for row in facts().gpus for name in row.names}
    # Longest first: "RTX 6000 Ada" before any shorter name; never inside a longer model ("A10" in "A100").
    alternatives = "|".join(re.escape(name) for name in sorted(by_name, key=len, reverse=True))
    return re.compile(rf"(?<![A-Z0-9])(?:{alternatives})(?![A-Z0-9])"), by_name


def gpu_named(name: str) -> Gpu | None:
    """The table's row for a device name as printed (`NVIDIA A100-SXM4-80GB`, `Tesla T4`, `AMD Instinct
    MI300X`), or None when no row names it."""
    regex, by_name = _name_regex()
    match = regex.search(name.upper())
    if match is None:
        return None
    row = by_name[match[0]]
    return Gpu(name.strip(), row.capability, row.gfx)


# Device names: a vendor word, then the model (letters, digits, dashes, spaces); bounded.
_DEVICE = r"(?P<name>(?:NVIDIA|Tesla|Quadro|GeForce|AMD Instinct|AMD Radeon)[ ][A-Za-z0-9][A-Za-z0-9 ._/-]{0,60})"
_LISTED = compile_lazily(rf"\bGPU [\d, ]{{1,40}}:\s*{_DEVICE}")  # collect_env, sglang.check_env
_SMI_ROW = compile_lazily(rf"^\|\s*\d+\s+{_DEVICE}?\s(?:On|Off)\s*\|")  # nvidia-smi's table
_SMI_CSV = compile_lazily(rf"^\s*{_DEVICE}, (?P<cc>\d{{1,2}}\.\d)\s*$")  # nvidia-smi --query-gpu=name,compute_cap
_CHECK_ENV_CC = compile_lazily(r"\bGPU [\d, ]{1,40} Compute Capability:\s*(?P<cc>\d{1,2}\.\d)")
_WITH_SM = compile_lazily(rf"{_DEVICE}? with CUDA capability sm_(?P<cc>\d{{2,3}})")  # torch's _check_capability
# torch's warnings for a GPU its build has no kernels for (torch/cuda/__init__.py old_gpu_warn, _warn_unsupported_code):
# `Found GPU0 NVIDIA GeForce GTX 1080 Ti which is of cuda capability 6.1.`, `… which is of compute capability (CC) 7.0.`
_FOUND_GPU = compile_lazily(
    r"Found GPU\d+ (?P<name>[A-Za-z0-9][A-Za-z0-9 ._/-]{0,60}?) which is of (?:cuda|compute) capability (?:\(CC\) )?"
    r"(?P<cc>\d{1,2}\.\d)"
)
_YOUR_GPU = compile_lazily(r"Your (?P<name>[A-Za-z0-9][A-Za-z0-9 ._/-]{0,60}?) GPU has compute capability (?P<cc>\d{1,2}\.\d)")
_CAPABILITY = compile_lazily(  # the GPU's own capability, never a requirement ("capability of at least 8.0")
    r"(?:[Cc]urrent|[Dd]evice|\bhas)(?: compute| CUDA)? capability[:=]?\s*"
    r"(?:(?P<dot>\d{1,2}\.\d)\b|\((?P<major>\d{1,2}), ?(?P<minor>\d)\)|(?P<int>\d{2,3})\b)"
)
_GFX = compile_lazily(r"\b(?P<gfx>gfx(?:9[0-5][0-9a-f]|1[0-2][0-9]{2}))\b")
_ANY_DEVICE = compile_lazily(_DEVICE)


def _trimmed(name: str) -> str:
    return re.split(r"\s{2,}|\s\|", name.strip(), maxsplit=1)[0].strip(" .")


def _from_line(text: str) -> list[Gpu]:
    found = _stated_capabilities(text) if "apabilit" in text or "sm_" in text else []
    if "gfx" in text:
        found.extend(Gpu("", None, match["gfx"]) for match in _GFX.finditer(text))
    if not found and any(vendor in text for vendor in ("NVIDIA", "Tesla", "Quadro", "GeForce", "AMD ")):
        gpu = _named_device(text)
        if gpu is not None:
            found.append(gpu)
    return found


def _stated_capabilities(text: str) -> list[Gpu]:
    """A device with its capability (torch's warning, vLLM's dtype check), else a capability alone."""
    found = [
        Gpu(_trimmed(match["name"] or ""), parse_capability(match["cc"]))
        for regex in (_WITH_SM, _YOUR_GPU, _FOUND_GPU)
        for match in regex.finditer(text)
    ]
    if found:
        return found
    listed = _CHECK_ENV_CC.search(text)
    if listed:
        return [Gpu("", parse_capability(listed["cc"]))]
    for match in _CAPABILITY.finditer(text):
        if match["dot"]:
            found.append(Gpu("", parse_capability(match["dot"])))
        elif match["major"]:
            found.append(Gpu("", (int(match["major"]), int(match["minor"]))))
        else:
            found.append(Gpu("", parse_capability(match["int"])))
    return found


def _named_device(text: str) -> Gpu | None:
    """A device in a dump's GPU line or an nvidia-smi row (named as listed, with the table's capability when it
    has the name), or a device name the table knows anywhere else."""
    csv = _SMI_CSV.search(text)
    if csv:
        return Gpu(_trimmed(csv["name"]), parse_capability(csv["cc"]))
    for regex in (_LISTED, _SMI_ROW, _ANY_DEVICE):
        match = regex.search(text)
        if match and match["name"]:
            name = _trimmed(match["name"])
            gpu = gpu_named(name)
            if gpu is not None:
                return gpu
            if regex is not _ANY_DEVICE:
                return Gpu(name)  # listed as a GPU: its capability may be on another line of the dump
    return None


# Literal text one of the regexes above needs: a line without any costs a few substring tests.
_CUES = ("apabilit", "sm_", "gfx", "NVIDIA", "Tesla", "Quadro", "GeForce", "AMD ")


# vLLM's CPU platform at start-up (vllm/platforms/cpu.py, __init__.py, v1/worker/cpu_worker.py; 0.11.2, 0.33.0):
# the platform line (DEBUG), the KV-space warning "Environment variable VLLM_CPU_KVCACHE_SPACE (GiB) for CPU backend
# is not set, using 4 by default." or the variable set, and the CPU worker's file tags.  Where the KV cache's size
# is VLLM_CPU_KVCACHE_SPACE, not a share of a GPU (fixes/builders/vllm.py).
_CPU_PLATFORM = compile_lazily(
    r"Automatically detected platform cpu\b|VLLM_CPU_KVCACHE_SPACE|\bcpu_(?:worker|model_runner)\.py\b"
)


def shows_cpu_platform(text: str) -> bool:
    """The line shows vLLM running on its CPU platform."""
    return "cpu" in text.lower() and bool(_CPU_PLATFORM.search(text))


def shows_gpu(text: str) -> bool:
    """The line names a GPU or its capability, shows the CPU platform in its stead, or a shell choosing the visible
    GPUs (what the launch tracker keeps for the rules as the device lines)."""
    return ((any(cue in text for cue in _CUES) and bool(_from_line(text))) or shows_cpu_platform(text)
            or bool(visibility_assignments(text)))


# The variables that choose the visible GPUs: CUDA's (the CUDA C Programming Guide, CUDA Environment Variables),
# ROCm's, and the NVIDIA container toolkit's.
VISIBILITY_VARIABLES = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")
# A shell setting one for what it runs: `export NAME=v`, `NAME=v program …` at the start of a (prompted) line, a
# container's `-e NAME=v` / `--env NAME=v`.  An environment dump's bare `NAME=v` line sets nothing for the launch.
_ASSIGNED = compile_lazily(
    r"(?:^(?:\([^)\n]{1,40}\) )?(?:[^\s$#>]*[$#>] )?(?:export |env )?|(?<=\s)(?:export |-e |--env[ =]))"
    r"""(?P<name>(?:CUDA|HIP|ROCR|NVIDIA)_VISIBLE_DEVICES)=(?P<value>"[^"\n]*"|'[^'\n]*'|[^\s;"']*)(?P<rest>[ \t;]+\S)?""",
    re.MULTILINE,
)


def visibility_assignments(text: str) -> list[tuple[str, str]]:
    """(name, value) of each visible-GPU variable the line's shell sets for what it runs, quotes removed; a bare
    `NAME=v` counts only with a command after it or behind `export`, `env`, `-e`, `--env`."""
    if "_VISIBLE_DEVICES=" not in text:
        return []
    found = []
    for match in _ASSIGNED.finditer(text):
        said = match.group(0).lstrip()
        container = said.startswith(("-e", "--env"))
        if match["name"] == "NVIDIA_VISIBLE_DEVICES" and not container:
            continue  # the container toolkit reads it when a container is made, from its environment: `-e` only
        bare = not container and not said.startswith(("export", "env")) and "$ " not in said
        if bare and match["rest"] is None:
            continue  # `CUDA_VISIBLE_DEVICES=0` alone on a line: a dump's, not a shell's
        found.append((match["name"], match["value"].strip("\"'")))
    return found


def gpus_in(lines: Iterable[str]) -> list[Gpu]:
    """The GPUs the lines show, first seen first, one per name (a capability stated with no name merges into
    the named GPU that lacks one)."""
    named: dict[str, Gpu] = {}
    unnamed: list[Gpu] = []
    for line in lines:
        for gpu in _from_line(line):
            if gpu.name:
                known = named.get(gpu.name)
                if known is None:
                    table = gpu_named(gpu.name)
                    named[gpu.name] = Gpu(
                        gpu.name, gpu.capability or (table.capability if table else None), gpu.gfx or (table.gfx if table else None)
                    )
            elif gpu not in unnamed:
                unnamed.append(gpu)
    result = list(named.values())
    for gpu in unnamed:
        lacking = next((i for i, g in enumerate(result) if g.capability is None and g.gfx is None), None)
        if lacking is not None:
            result[lacking] = Gpu(result[lacking].name, gpu.capability, gpu.gfx)
        elif not any(g.capability == gpu.capability and g.gfx == gpu.gfx for g in result):
            result.append(gpu)
    return result
