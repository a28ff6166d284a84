"""vLLM's model inspection subprocess failing (issue 28: read as an architecture the release lacks, with advice to
upgrade vLLM, for a LlamaForCausalLM every release serves).

vLLM inspects a model's class by running `python -m vllm.model_executor.models.registry` in a subprocess
(vllm/model_executor/models/registry.py `_run_in_subprocess`, logged as "Error in inspecting model architecture");
when that process exits non-zero, `check_returncode()` raises CalledProcessError naming the command, and older releases
then say the architecture is "not supported for now".  The subprocess's own error is the cause: most often its
interpreter, the command's first word, is not the environment vLLM was imported from (vllm-project/vllm#9624: a conda
env's python while vLLM ran from the base install), or the platform (vllm-project/vllm#9712: native Windows)."""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, Fix
from logsleuth.reasoning.evidence import Evidence, exception_lines
from logsleuth.reasoning.guidance_text import platform_steps

RULE_ID = "rule-model-inspection-subprocess"
_INSPECTION = compile_lazily(
    r"Command '\[(?P<args>[^\]]*vllm\.model_executor\.models\.registry[^\]]*)\]' returned non-zero exit status (?P<status>-?\d+)"
)
_FIRST_ARGUMENT = compile_lazily(r"^\s*'(?P<program>[^']+)'")
_SITE_VLLM = "site-packages/vllm/"
_INTERPRETER_DIRS = ("bin", "Scripts")
SOURCES = (
    "vllm/model_executor/models/registry.py _run_in_subprocess: runs [sys.executable, '-m', "
    "'vllm.model_executor.models.registry'] and calls returned.check_returncode(); _try_inspect_model_cls logs "
    "'Error in inspecting model architecture' (0.6.x; from 0.7 the registry says the architecture 'failed to be "
    "inspected')",
)


def model_inspection(evidence: Evidence) -> Diagnosis | None:
    found = next((m for line in exception_lines(evidence.failure) if (m := _INSPECTION.search(line))), None)
    if found is None:
        return None
    program = _FIRST_ARGUMENT.match(found["args"])
    interpreter = program["program"].replace("\\\\", "\\") if program else None
    vllm_root = next((root for block in evidence.failure.exceptions for frame in block.frames
                      if (root := _site_root(frame.file)) is not None), None)
    interpreter_root = _interpreter_root(interpreter) if interpreter else None
    facts = [f"the inspection subprocess exited with status {found['status']}: {found['args'].strip()}"]
    steps = list(platform_steps(evidence.failure, "vllm"))
    if vllm_root and interpreter_root and _normalized(vllm_root) != _normalized(interpreter_root):
        facts.append(f"vLLM was imported from {vllm_root}, but the subprocess runs {interpreter} (another environment)")
        cause = (f"vLLM was imported from the environment at {vllm_root}, but its subprocess runs the interpreter "
                 f"{interpreter}, another environment, where vLLM or a package it imports is missing or different.")
        steps.append("run vLLM with the interpreter of the environment it is installed in (activate that environment, "
                     "or call its python -m vllm… / its vllm program), so the subprocess runs the same one")
    else:
        cause = "Its own error, printed by the subprocess in the log next to this traceback, is the cause."
    steps.append("the subprocess's own traceback (logged after 'Error raised in subprocess:', or among the records "
                 "'Error in inspecting model architecture') names what failed in it: a package missing or at another "
                 "version in that interpreter, or a torch build that does not load there")
    return Diagnosis(
        pattern=RULE_ID,
        title="vLLM's model inspection subprocess failed: not the architecture",
        category="dependency-version",
        root_cause=(
            "vLLM imports the model's class in a subprocess (python -m vllm.model_executor.models.registry) to inspect "
            f"it, and that process exited with status {found['status']}: the architecture was never checked, so an "
            f"'architecture not supported' message after it does not mean the release lacks it. {cause}"
        ),
        fix=Fix(
            summary="Fix what makes the inspection subprocess fail (its own error), not the model's architecture: "
                    "no vLLM upgrade is needed for an architecture the release lists.",
            steps=tuple(steps),
        ),
        references=SOURCES,
        engine=evidence.launch.engine,
        engine_version=evidence.launch.engine_version,
        basis="rule",
        evidence=tuple(facts),
    )


def _site_root(file: str) -> str | None:
    """The environment a vLLM frame's file is installed in: `/c/envs/x/lib/python3.12/site-packages/vllm/…` ->
    `/c/envs/x` (Windows: `D:\\c\\envs\\x\\lib\\site-packages\\vllm\\…` -> `D:/c/envs/x`)."""
    path = file.replace("\\", "/")
    before, found, _ = path.partition(_SITE_VLLM)
    if not found:
        return None
    parts = before.rstrip("/").split("/")
    while parts and (parts[-1].startswith("python") or parts[-1] in ("lib", "lib64")):
        parts.pop()
    return "/".join(parts) or None


def _interpreter_root(interpreter: str) -> str | None:
    """The environment an interpreter belongs to: `/c/envs/x/bin/python` -> `/c/envs/x`, `D:\\c\\python.exe` -> `D:/c`."""
    parts = interpreter.replace("\\", "/").split("/")
    if len(parts) < 2 or not parts[-1].lower().startswith("python"):
        return None
    parts.pop()
    if parts and parts[-1] in _INTERPRETER_DIRS:
        parts.pop()
    return "/".join(parts) or None


def _normalized(root: str) -> str:
    return root.replace("\\", "/").rstrip("/").lower()
