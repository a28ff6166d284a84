"""A dtype the platform forced on the model that the checkpoint's quantization method refuses (issue 28: the platform's
cast, not the user's dtype).

vLLM refuses a model dtype its quantization method does not list (vllm/config.py VllmConfig._get_quantization_config,
and vllm/config/vllm.py: `{dtype} is not supported for quantization method {method}. Supported dtypes: {supported}`,
the raise site index).  A backend that does not run a dtype casts the model's to another before that check: vLLM's
CPU backend of 0.6.x warns `float16 is not supported on CPU, casting to bfloat16.` (vllm/executor/cpu_executor.py), so
a GPTQ checkpoint (float16 only) cannot load there whatever --dtype says (vllm-project/vllm#12794, on 0.6.3.post1+cpu).
Read only when the log shows both: the platform's cast to the dtype the method then refused."""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, Fix
from logsleuth.reasoning.evidence import Evidence

RULE_ID = "rule-platform-dtype"
# The dtype's name is bounded and starts after a non-word: an unbounded `\w+` retried at every letter of a long word
# before the literal is quadratic (a 64,000-letter word took 25 s).
_REFUSED = compile_lazily(
    r"(?<![\w.])(?:torch\.)?(?P<dtype>\w{1,32}) is not supported for quantization method (?P<method>[\w-]{1,64})\. "
    r"Supported dtypes: \[(?P<supported>[^\]\n]{0,200})\]"
)
_CAST = compile_lazily(r"(?<!\w)(?P<given>\w{1,32}) is not supported on (?P<platform>\w{1,32}), casting to (?P<to>\w{1,32})")


def platform_dtype(evidence: Evidence) -> Diagnosis | None:
    refused = _REFUSED.search(evidence.failure.final.message)
    if refused is None:
        return None
    lines = (*evidence.failure.context, *evidence.lines, *evidence.earlier)
    cast = next((found for line in lines if (found := _CAST.search(line)) and found["to"] == refused["dtype"]), None)
    if cast is None:
        return None
    given, platform, dtype, method = cast["given"], cast["platform"], refused["dtype"], refused["method"]
    supported = refused["supported"].replace("torch.", "")
    cause = (f"The engine's {platform} backend does not run {given}, so it cast the model to {dtype} before loading "
             f"it ('{cast.group(0)}'); the checkpoint's quantization method {method} takes only {supported}. The "
             f"platform forced the dtype: no --dtype of the launch changes it on {platform}, and the checkpoint "
             "itself is not broken.")
    fix = Fix(
        summary=(f"On the {platform} backend, serve a checkpoint whose quantization runs in {dtype} (an unquantized "
                 f"model, or another quantization method that lists {dtype}), or run this {method} checkpoint on a "
                 f"device that runs {given}."),
        steps=(f"the release notes of the engine's {platform} backend say which quantization methods and dtypes later "
               f"releases run there; a later release may take {method} on {platform}",),
    )
    return Diagnosis(
        pattern=RULE_ID, title=f"The {platform} backend's dtype ({dtype}) is one quantization method {method} refuses",
        category="quantization", root_cause=cause, fix=fix,
        references=("vllm/config.py VllmConfig._get_quantization_config: '{} is not supported for quantization method "
                    "{}. Supported dtypes: {}' (the raise site index)",
                    "vllm/executor/cpu_executor.py (0.6.3): 'float16 is not supported on CPU, casting to bfloat16.'; "
                    "vllm-project/vllm#12794 (a GPTQ checkpoint on vLLM 0.6.3.post1's CPU backend)"),
        engine=evidence.launch.engine, engine_version=evidence.launch.engine_version, basis="rule",
        evidence=(f"the log: {cast.group(0)}", f"the failure: {refused.group(0)}"),
    )
