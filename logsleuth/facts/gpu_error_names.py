"""The error names of the GPU runtimes' and libraries' status enums (gpu_error_names.toml, with its sources)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import regex

from logsleuth.facts.table import parsed_toml, table_rows
from logsleuth.lazyre import compile_lazily, compile_lazily_regex


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


@cache
def _codes() -> dict[int, str]:
    return {int(value): name for value, name in parsed_toml("gpu_error_names.toml").get("codes", {}).items()}


# A CUDA runtime status printed by its number, read only where CUDA's own code prints it (a bare `Error 35` is any
# program's: an HTTP client's, NCCL's result code, an exit status):
# - `Error N:` in torch's `Unexpected error from cudaGetDeviceCount(). … Error 804: <string>` (c10/cuda/CUDAFunctions.cpp),
#   or on a line that also shows a `cudaXxx(` call or the status's own error string;
# - `CUDA error N` / `CUDA error code N`, and `error code N` after a `cudaXxx(…)` call's name or the word CUDA;
# - glog's check on a runtime call: `… == cudaSuccess (803 vs. 0)`.
_CUDA_WORD = compile_lazily(r"(?i)cuda")
_CODE = compile_lazily_regex(
    r"\bError (?P<code>\d{1,4}): |\bCUDA [Ee]rror (?:code )?(?P<code>\d{1,4})\b"
    r"|(?:\bCUDA\b|\bcuda[A-Z]\w{2,60}(?:\([^()\n]{0,200}\))?)[^\n]{0,80}?\berror code:? (?P<code>\d{1,4})\b"
    r"|\bcudaSuccess \((?P<code>\d{1,4}) vs\. 0\)"
)
_DEVICE_COUNT = compile_lazily(r"\bcudaGetDeviceCount\(\)")
_CUDA_CALL = compile_lazily(r"\bcuda[A-Z]\w{2,60}\(")
# a number of another program's on a line that also says CUDA (an HTTP status on a CUDA download, NCCL's result code
# `NCCL Error 1: unhandled cuda error`, a worker's exit status), and HIP's statuses: ROCm's torch keeps "cuda" in its
# hipified messages and HIP's enum reuses CUDA's numbers (35 is hipErrorInsufficientDriver), NVIDIA's reading is wrong
_NOT_CUDA_NUMBER = compile_lazily(
    r"(?i:\bHTTP ?Error|\bNCCL Error\b|\bexit(?:ed)?\b)|\bhip[A-Z]\w+|NumHipDevices|\bHIP error|\bROCm\b"
)


def _read_number(match: regex.Match[str], text: str, name: str) -> bool:
    """Whether `Error N:` is CUDA's status here: torch's cudaGetDeviceCount() template, or a line that shows a CUDA
    runtime call or the status's own error string; the other forms say CUDA themselves."""
    if not match.group(0).startswith("Error "):
        return True
    if _DEVICE_COUNT.search(text) or _CUDA_CALL.search(text):
        return True
    return any(said in text for said, named in _strings().items() if named == name)


def status_names_in(text: str) -> tuple[str, ...]:
    """The CUDA runtime's status names `text` prints by number ([codes]: `Error 804:` is
    cudaErrorCompatNotSupportedOnDevice), those a healthy program prints left out; none without the word CUDA, none on
    a line of HIP's or another program's number (_NOT_CUDA_NUMBER)."""
    if not any(ch.isdigit() for ch in text) or _CUDA_WORD.search(text) is None or _NOT_CUDA_NUMBER.search(text):
        return ()
    runtime = next(family for family in families() if family.family == "CUDA runtime")
    found = []
    for m in _CODE.finditer(text):
        name = _codes().get(int(m.group("code")))
        if name is not None and runtime.defines(name) and _read_number(m, text, name):
            found.append((m.group("code"), name))
    return tuple(dict.fromkeys(name for _, name in found))


def numbers_named_in(text: str) -> tuple[tuple[str, str], ...]:
    """(number, name) of each status `text` prints by number (status_names_in)."""
    names = status_names_in(text)
    pairs = ((m.group("code"), _codes().get(int(m.group("code")))) for m in _CODE.finditer(text)) if names else ()
    return tuple(dict.fromkeys((code, name) for code, name in pairs if name in names))


def with_status_names(text: str) -> str:
    """`text` with the names of the statuses it prints by number after it (`… Error 803: … (cudaErrorSystemDriverMismatch)`),
    so that what reads a name (the categories' words) reads it however the paste printed the status."""
    named = [f"status {code} read as {name}" for code, name in numbers_named_in(text) if name not in text]
    return f"{text} ({', '.join(named)})" if named else text


_TORCH_DRIVER_TOO_OLD = "The NVIDIA driver on your system is too old"


def driver_mismatch_named(text: str) -> str | None:
    """The driver/runtime mismatch status (a name [category] files under dependency-version: 35, 36, 803, 804 and the
    driver API's) that `text` names, by its name, its number or its error string ([strings]), else None."""
    if _NOT_CUDA_NUMBER.search(text) and not any(name in text for name in ("cudaError", "CUDA_ERROR_")):
        return None  # HIP's hipErrorInsufficientDriver, another program's `Error 35:` (_NOT_CUDA_NUMBER)
    mismatch = parsed_toml("gpu_error_names.toml").get("category", {}).get("dependency-version", ())
    named = [name for name in mismatch if name in text]
    if _TORCH_DRIVER_TOO_OLD in text:  # torch/cuda/__init__.py _check_driver: the runtime's 35 in torch's words
        named.append("cudaErrorInsufficientDriver")
    named += [name for name in status_names_in(text) if name in mismatch]
    named += [name for said, name in _strings().items() if name in mismatch and said in text]
    return named[0] if named else None
