"""Parallelism arithmetic (issue 28, class 5): a parallel degree that does not divide a model's size.

The numbers come from the engine's message (facts/divisibility.toml lists the messages and what each checks), else
from the config the log prints (`num_attention_heads`, …) and the degrees of the launch (its command, its
`server_args=` line, an engine config line).  The answer is the arithmetic itself: which degrees divide the size,
and the nearest one under the degree asked for, set through the user's own command when the log gives it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import regex

from logsleuth.command_line import CommandLine
from logsleuth.facts.divisibility import DivisibilityCheck, divisibility_checks
from logsleuth.facts.message_templates import short_type
from logsleuth.fixes import catalog as catalogs
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import Diagnosis, Fix, LaunchInfo
from logsleuth.reasoning.catalog_flags import release_flag, setting_fix
from logsleuth.reasoning.evidence import Evidence, exception_lines
from logsleuth.reasoning.raise_site import site_of
from logsleuth.wording import article

# The degrees as the launch gives them: server_args fields, command flags (every spelling of both engines),
# and the `name=value` / `'name': value` an engine's config line prints.
_DEGREE_FIELDS = {
    "tp": ("tp_size", "tensor_parallel_size"),
    "ep": ("ep_size", "expert_parallel_size", "moe_ep_size"),
    "pp": ("pp_size", "pipeline_parallel_size"),
    "nnodes": ("nnodes",),
}
_DEGREE_FLAGS = {
    "tp": ("--tp-size", "--tensor-parallel-size", "--tp", "-tp"),
    "ep": ("--ep-size", "--expert-parallel-size", "--ep"),
    "pp": ("--pp-size", "--pipeline-parallel-size", "--pp", "-pp"),
    "nnodes": ("--nnodes",),
}
_CONFIG_VALUE = r"""(?<!\w){name}['"]?\s*[:=]\s*['"]?(\d+)\b"""

# SGLang's model code checks heads with bare asserts (`assert self.total_num_heads % tp_size == 0`, models/llama.py,
# qwen2.py, … in 0.4.10.post2-0.5.23): no message, so the size comes from the config the log prints.
# `assert tp_size % self.total_num_kv_heads == 0` is the other branch: fewer KV heads than GPUs, each copied.
# The sizes go by several names across model files (`num_key_value_heads` in config-named code, ChatGLM's
# `multi_query_group_num`), the degree too (`attn_tp_size`, `tp_world_size`, the parallel state's getter).
_TP = r"(?:self\.)?(?:\w*tp_size|\w*tp_world_size|world_size|get_tensor_model_parallel_world_size\(\))"
_HEADS_ASSERT = compile_lazily_regex(
    r"assert\s+\(?\s*(?:self\.)?(?:config\.)?(?P<size>total_num_heads|num_heads|num_attention_heads|total_num_kv_heads|num_kv_heads"
    r"|total_kv_heads|num_total_kv_heads|total_num_key_value_heads|num_key_value_heads|multi_query_group_num)\s*%\s*" + _TP + r"\s*==\s*0"
    r"|assert\s+\(?\s*" + _TP + r"\s*%\s*(?:self\.)?(?:config\.)?(?P<size>total_num_kv_heads|num_kv_heads|total_kv_heads|num_total_kv_heads"
    r"|total_num_key_value_heads|num_key_value_heads|multi_query_group_num)\s*==\s*0"
)
_HEADS_ASSERT_SOURCES = (
    "sglang/srt/models/llama.py (0.5.9 lines 139-149), qwen2.py (lines 122-132): `assert self.total_num_heads % tp_size "
    "== 0`, `assert self.total_num_kv_heads % tp_size == 0`, `assert tp_size % self.total_num_kv_heads == 0`",
    "the raise site index, other spellings of the same asserts: sglang/srt/models/bailing_moe.py (total_kv_heads, "
    "attn_tp_size), stablelm.py (total_num_key_value_heads), phi3_small.py (num_key_value_heads), dbrx.py "
    "(tp_world_size), inkling_common/attn.py (num_total_kv_heads); vllm/model_executor/models/bailing_moe.py",
)
_ASSERT_CONFIG_KEYS = {
    "total_num_heads": ("attention heads", "num_attention_heads", "split"),
    "num_heads": ("attention heads", "num_attention_heads", "split"),
    "num_attention_heads": ("attention heads", "num_attention_heads", "split"),
    "total_num_kv_heads": ("KV heads", "num_key_value_heads", "kv_split"),
    "num_kv_heads": ("KV heads", "num_key_value_heads", "kv_split"),
    "total_kv_heads": ("KV heads", "num_key_value_heads", "kv_split"),
    "num_total_kv_heads": ("KV heads", "num_key_value_heads", "kv_split"),
    "total_num_key_value_heads": ("KV heads", "num_key_value_heads", "kv_split"),
    "num_key_value_heads": ("KV heads", "num_key_value_heads", "kv_split"),
    "multi_query_group_num": ("KV heads", "multi_query_group_num", "kv_split"),
}

_DEGREE_PROSE = {"tp": "tensor-parallel size", "ep": "expert-parallel size", "moe_tp": "MoE tensor-parallel size"}


@dataclass(frozen=True)
class _Numbers:
    """What the arithmetic works on: a size, the degree asked for, and for block checks the block."""

    kind: str
    quantity: str
    degree_name: str
    count: int | None  # the full size
    degree: int | None
    block: int | None = None
    part: int | None = None  # the size per partition the message printed
    axis: str | None = None  # block_n / block_k
    moe: bool = False  # a MoE layer's weight: expert parallelism is a way out
    tp: int | None = None  # the tensor-parallel size a MoE-split message printed


def parallelism(evidence: Evidence) -> Diagnosis | None:
    """A divisibility failure between a parallel degree and a model size, with the degrees that fit."""
    text = "\n".join(exception_lines(evidence.failure))
    for check in divisibility_checks():
        found = check.regex.search(text)
        if found is not None:
            numbers = _from_message(check, found, evidence)
            return _diagnosis(numbers, evidence, f"the message: {found.group(0)}", check.name, check.sources)
    return _from_assert(evidence) or _from_raise_site(evidence) or _from_ensure_divisibility(evidence)


def _from_message(check: DivisibilityCheck, found: regex.Match[str], evidence: Evidence) -> _Numbers:
    groups = {name: int(value) for name, value in found.groupdict().items() if value and value.isdigit()}
    words = found.groupdict()
    moe = check.name.startswith("moe") or "gate" in (words.get("which") or "") or "down" in (words.get("which") or "")
    degree, degree_name = groups.get("degree"), check.degree_name
    if degree is None:  # a size per partition: the degree is the launch's
        degree = launch_degree(evidence, "tp")
        ep = launch_degree(evidence, "ep") if moe and evidence.launch.engine == "sglang" else None
        if degree and ep and ep > 1 and degree % ep == 0:  # SGLang splits a MoE layer over tp / ep GPUs
            degree, degree_name = degree // ep, "moe_tp"
    count = groups.get("count") or groups.get("full")
    if count is None and groups.get("part") and degree:
        count = groups["part"] * degree
    quantity = "MoE layers' weight" if moe and check.kind == "block" else check.quantity
    return _Numbers(check.kind, quantity, degree_name, count, degree, groups.get("block"),
                    groups.get("part"), words.get("axis"), moe, groups.get("tp"))


def _from_assert(evidence: Evidence) -> Diagnosis | None:
    failure = evidence.failure
    if short_type(failure.final.type) != "AssertionError":
        return None
    for frame in reversed(failure.final.frames):
        found = _HEADS_ASSERT.search(frame.source or "")
        if found is not None:
            where = "" if frame.file.startswith("<") else f" ({frame.module_path})"  # `<…>`: the File line not pasted
            return _assert_diagnosis(found, evidence, f"the check that failed{where}: {found.group(0)}")
    return None


# The guard of an engine's heads check that raises with a message (vllm/config.py ModelConfig.verify_with_parallel_config:
# `if total_num_attention_heads % tensor_parallel_size != 0: raise ValueError(…)`), as the raise site index holds it.
_HEADS_GUARD = compile_lazily_regex(
    r"(?P<size>total_num_attention_heads|total_num_heads|num_attention_heads|total_num_kv_heads|num_kv_heads)\s*%\s*"
    r"(?:self\.)?(?:tensor_parallel_size|tp_size)\s*!=\s*0"
)


def _from_raise_site(evidence: Evidence) -> Diagnosis | None:
    """A heads check whose message the paste lost (a traceback cut inside its `raise ValueError(`, typed by that
    statement): the check the innermost engine frame stands in (the raise site index) says what it tested."""
    final = evidence.failure.final
    if final.message.strip():
        return None  # a message pasted is read by the divisibility checks' patterns
    site = site_of(evidence.failure, evidence.launch)
    found = next((m for guard in (site.guards if site else ()) if (m := _HEADS_GUARD.search(guard))), None)
    if site is None or found is None:
        return None
    quantity, key, _ = _ASSERT_CONFIG_KEYS.get(found["size"], ("attention heads", "num_attention_heads", "split"))
    numbers = _Numbers("split", quantity, "tp", model_size(evidence, key), launch_degree(evidence, "tp"))
    fact = f"the check that raised it ({site.file}, {site.function}): if {found.group(0)}"
    return _diagnosis(numbers, evidence, fact, f"raise-{key}", (f"{site.engine} {site.file} {site.function}",))


# The engines' shared helper (vllm/distributed/utils.py and sglang/srt/distributed/utils.py ensure_divisibility, called
# by divide()): `assert numerator % denominator == 0, "{} is not divisible by {}"`.  The linear layers split heads,
# KV heads and widths with it: divide(total_num_heads, tp_size), divide(tp_size, total_num_kv_heads) (the KV copies),
# divide(output_size, tp_size).  The message names no size, so the launch's degree says which side it is.
_ENSURE_DIVISIBILITY = compile_lazily_regex(r"^(?P<numerator>\d+) is not divisible by (?P<denominator>\d+)$")
_ENSURE_SOURCES = (
    "vllm/distributed/utils.py ensure_divisibility (0.11.2, 0.33.0) and sglang/srt/distributed/utils.py (0.5.9): "
    "'{} is not divisible by {}', called by divide() from the parallel linear layers (QKVParallelLinear: heads / tp, "
    "tp / KV heads)",
)


def _from_ensure_divisibility(evidence: Evidence) -> Diagnosis | None:
    failure = evidence.failure
    found = _ENSURE_DIVISIBILITY.search(failure.final.message.strip())
    frames = failure.final.frames
    from_helper = any(frame.function in ("ensure_divisibility", "divide") for frame in frames) or any(
        "numerator % denominator" in (frame.source or "") for frame in frames)
    if found is None or short_type(failure.final.type) != "AssertionError" or not from_helper:
        return None
    numerator, denominator = int(found["numerator"]), int(found["denominator"])
    tp = launch_degree(evidence, "tp")
    fact = f"the check that failed (ensure_divisibility): {found.group(0)}"
    if tp is not None and denominator == tp:  # a size split over the GPUs
        numbers = _Numbers("split", "attention heads (or a layer's size)", "tp", numerator, tp)
    elif tp is not None and numerator == tp:  # the GPUs over fewer KV heads: each head copied on tp / kv GPUs
        numbers = _Numbers("kv_split", "KV heads", "tp", denominator, tp)
    else:
        return None  # which side is the parallel degree is not in the log
    return _diagnosis(numbers, evidence, fact, "ensure-divisibility", _ENSURE_SOURCES)


def _assert_diagnosis(found: regex.Match[str], evidence: Evidence, fact: str) -> Diagnosis:
    quantity, key, kind = _ASSERT_CONFIG_KEYS[found["size"]]
    if kind == "kv_split" and found["size"] in found.group(0).split("%", 1)[0]:
        # `assert total_num_kv_heads % tp_size == 0`: the degree must divide the KV heads.  Older model files assert
        # it whatever the sizes (no branch that copies heads), so a multiple of them is no way out there.
        kind = "split"
    numbers = _Numbers(kind, quantity, "tp", model_size(evidence, key), launch_degree(evidence, "tp"))
    return _diagnosis(numbers, evidence, fact, f"assert-{key}", _HEADS_ASSERT_SOURCES)


def launch_degree(evidence: Evidence, name: str) -> int | None:
    """A parallel degree of the launch: its `server_args=` line, its command, or a config line of the log."""
    launch = evidence.launch
    for key, value in launch.server_args:
        if key in _DEGREE_FIELDS[name] and value.strip("'\"").isdigit():
            return int(value.strip("'\""))
    if launch.command:
        try:
            command = CommandLine.parse(launch.command)
        except ValueError:
            command = None
        for flag in _DEGREE_FLAGS[name] if command else ():
            given = command.int_value(flag) if command else None
            if given:
                return given
    for field in _DEGREE_FIELDS[name]:
        printed = config_value(_log_lines(evidence), field)
        if printed:
            return printed
    return None


def splits_over_one_gpu(evidence: Evidence) -> bool:
    """The launch runs tensor parallelism 1: its `server_args=` or a config line says so, or its command is known
    and sets no tensor-parallel size (both engines default to 1).  Nothing is split, so no parallel degree is the
    cause of a size the message finds indivisible."""
    if launch_degree(evidence, "tp") == 1:
        return True
    command = evidence.launch.command
    if not command or evidence.launch.server_args:
        return False
    try:
        parsed = CommandLine.parse(command)
    except ValueError:
        return False
    return not any(parsed.has(flag) for flag in _DEGREE_FLAGS["tp"])


def _log_lines(evidence: Evidence) -> list[str]:
    """The log's lines a rule can read: those kept before the failure (its context) and the reader's."""
    return [*evidence.failure.context, *evidence.lines]


def config_value(lines: Sequence[str], key: str) -> int | None:
    """`key`'s number in the config or engine arguments the log prints (`"num_attention_heads": 40`,
    `tensor_parallel_size=4`, `'tp_size': 8`): the last one printed."""
    pattern = regex.compile(_CONFIG_VALUE.format(name=regex.escape(key)))
    for line in reversed(lines):
        if key in line and (found := pattern.search(line)):
            return int(found.group(1))
    return None


def divisors(number: int) -> list[int]:
    return [d for d in range(1, number + 1) if number % d == 0]


def valid_degrees(numbers: _Numbers) -> list[int]:
    """The degrees the model's size allows (only those that are known from the numbers)."""
    count = numbers.count
    if not count:
        return []
    if numbers.kind == "block" and numbers.block:
        return [d for d in divisors(count) if (count // d) % numbers.block == 0]
    return divisors(count)


def best_under(valid: list[int], asked: int | None) -> int | None:
    """The degree to suggest: the largest valid one under the degree asked for, a power of two when one is (a
    power of two also divides the sizes the message does not show: KV heads, hidden and MoE sizes)."""
    fits = [d for d in valid if asked is None or d < asked]
    powers = [d for d in fits if d & (d - 1) == 0]
    return max(powers or fits, default=None)


def _diagnosis(numbers: _Numbers, evidence: Evidence, message_fact: str, check_name: str,
               sources: tuple[str, ...] = ()) -> Diagnosis:
    valid = valid_degrees(numbers)
    suggested = best_under(valid, numbers.degree)
    facts = [message_fact, *_arithmetic(numbers, valid)]
    return Diagnosis(
        pattern=f"rule-parallelism-{check_name}",
        title=_title(numbers),
        category="parallel-config",
        root_cause=_root_cause(numbers),
        fix=_fix(numbers, suggested, evidence),
        references=sources,
        engine=evidence.launch.engine,
        engine_version=evidence.launch.engine_version,
        basis="rule",
        evidence=tuple(facts),
    )


def _title(numbers: _Numbers) -> str:
    if numbers.kind == "block":
        return f"A {numbers.quantity} split over this {_DEGREE_PROSE[numbers.degree_name]} is not a whole number of quantization blocks"
    return f"The model's {numbers.quantity} cannot be split evenly over this {_DEGREE_PROSE[numbers.degree_name]}"


def _root_cause(numbers: _Numbers) -> str:
    prose = _DEGREE_PROSE[numbers.degree_name]
    if numbers.kind == "block":
        part = f" ({numbers.part} per GPU)" if numbers.part else ""
        return (
            f"The checkpoint is quantized in blocks of {numbers.block or 'N'} (weight_block_size): every GPU's slice of a "
            f"weight must hold whole blocks. Split over {prose} {numbers.degree or 'as launched'}, the {numbers.quantity}"
            f"{part} is not a multiple of {numbers.block or 'the block'}, so the engine refuses to load it."
        )
    if numbers.kind == "kv_split":
        return (
            f"Each GPU of the tensor-parallel group holds an equal share of the model's {numbers.count or ''} KV heads "
            f"(or a copy of one when there are fewer KV heads than GPUs), so the {prose} "
            f"{numbers.degree or ''} must divide the KV heads or be a multiple of them."
        ).replace("  ", " ")
    return (
        f"The {numbers.quantity} are shared out equally over the {prose}, so {numbers.degree or 'the degree'} must "
        f"divide {numbers.count or 'their number'}" + (", and it does not." if numbers.count and numbers.degree else ".")
    )


def _arithmetic(numbers: _Numbers, valid: list[int]) -> list[str]:
    """The evidence lines: the division that fails and the degrees that would not fail."""
    count, degree, prose = numbers.count, numbers.degree, numbers.degree_name
    facts: list[str] = []
    if numbers.kind == "block" and numbers.block:
        if numbers.part and degree:
            facts.append(f"{numbers.quantity}: {numbers.part} per GPU x {prose} {degree} = {count} in all; "
                         f"{numbers.part} % {numbers.block} = {numbers.part % numbers.block} (the block is {numbers.block})")
        elif count and degree:
            facts.append(f"{count} / {prose} {degree} = {count / degree:g}, not a multiple of {numbers.block}")
        if valid and degree:
            facts.append(f"{prose} {', '.join(map(str, valid))} give{'s' if len(valid) == 1 else ''} whole blocks "
                         f"({count} / {prose} is a multiple of {numbers.block}); {degree} does not")
        elif not degree:
            facts.append(f"the {_DEGREE_PROSE[prose]} of the launch is not in the log: the full size is {numbers.part} x that size")
        return facts
    if count and degree:
        facts.append(f"{count} {numbers.quantity} / {prose} {degree} = {count / degree:g}: not a whole number")
        under = [d for d in valid if d <= degree]
        facts.append(f"{prose} {', '.join(map(str, under))} divide{'s' if len(under) == 1 else ''} {count} "
                     f"{numbers.quantity}; {degree} does not")
        if numbers.kind == "kv_split":
            facts.append(f"a multiple of {count} (e.g. {count * 2}) also works: each KV head is then copied")
    elif degree:
        facts.append(f"the {_DEGREE_PROSE[prose]} of the launch is {degree}; the model's {numbers.quantity} are not in the log "
                     "(its config.json has them)")
    return facts


# Per engine: the flag that sets each degree, in the spellings releases have (the catalog decides which).
_FLAGS = {
    ("sglang", "tp"): ("--tp-size", "--tensor-parallel-size"),
    ("sglang", "ep"): ("--ep-size", "--expert-parallel-size"),
    ("vllm", "tp"): ("--tensor-parallel-size",),
}


def _fix(numbers: _Numbers, suggested: int | None, evidence: Evidence) -> Fix | None:
    failure, launch = evidence.failure, evidence.launch
    engine = launch.engine
    steps = list(_steps(numbers, engine, _without_pipeline(launch)))
    if numbers.degree_name == "moe_tp":
        return _moe_tp_fix(numbers, suggested, evidence, steps)
    flag = release_flag(launch, *_FLAGS.get((engine or "", numbers.degree_name), ()))
    if flag is None or suggested is None:
        return Fix(summary=_summary_in_words(numbers, suggested, engine), steps=tuple(steps))
    summary = f"Use {flag} {suggested}: it divides the {numbers.quantity}" if numbers.kind != "block" else (
        f"Use {flag} {suggested}: each GPU's share is then a whole number of {numbers.block}-wide blocks")
    return setting_fix(failure, launch, summary + ".", ((flag, str(suggested)),), tuple(steps))


def _moe_tp_fix(numbers: _Numbers, suggested: int | None, evidence: Evidence, steps: list[str]) -> Fix | None:
    """SGLang splits a MoE layer over tp / ep GPUs: raise --ep-size until that split fits."""
    failure, launch = evidence.failure, evidence.launch
    tp = numbers.tp or launch_degree(evidence, "tp")
    flag = release_flag(launch, "--ep-size", "--expert-parallel-size")
    if flag is None or not tp or suggested is None or tp % suggested:
        return Fix(summary=_summary_in_words(numbers, suggested, launch.engine), steps=tuple(steps))
    ep = tp // suggested
    return setting_fix(failure, launch, f"Use {flag} {ep}: the MoE layers are then split over {tp} / {ep} = "
                       f"{suggested} GPUs, which fits the {numbers.quantity}.", ((flag, str(ep)),), tuple(steps))


_VLLM_EP = "in vLLM, with --enable-expert-parallel, the tensor-parallel size x the data-parallel size"


def _summary_in_words(numbers: _Numbers, suggested: int | None, engine: str | None) -> str:
    """The advice without a flag logsleuth could check: the degree in words, and each engine's spelling."""
    prose = _DEGREE_PROSE[numbers.degree_name]
    spelled = {
        "tp": {"sglang": "--tp-size", "vllm": "--tensor-parallel-size"}.get(
            engine or "", "SGLang --tp-size, vLLM --tensor-parallel-size"),
        "ep": {"sglang": "--ep-size", "vllm": _VLLM_EP}.get(engine or "", f"SGLang --ep-size; {_VLLM_EP}"),
        "moe_tp": "in SGLang the tensor-parallel size / --ep-size",
    }[numbers.degree_name]
    if suggested is not None:
        return f"Use {article(prose)} {prose} of {suggested} ({spelled})."
    if numbers.kind == "block":
        return f"Use {article(prose)} {prose} that leaves each GPU a whole number of quantization blocks ({spelled}), or a checkpoint without block quantization."
    if numbers.kind == "kv_split":
        return (f"Use {article(prose)} {prose} that divides the model's KV heads or is a multiple of them ({spelled}); "
                "the model's config.json gives num_key_value_heads.")
    return f"Use {article(prose)} {prose} that divides the model's {numbers.quantity} ({spelled})."



def _without_pipeline(launch: LaunchInfo) -> bool:
    """The user's release (the log or the user names it) has a catalog, and it has no pipeline-parallel flag: SGLang
    added --pp-size in 0.4.7 (its catalogs), so an older release's way out is data parallelism only."""
    if launch.engine is None or launch.engine_version_source not in ("log", "user"):
        return False
    catalog = catalogs.load(launch.engine, launch.engine_version)
    return catalog is not None and not any(catalog.find(flag) for flag in ("--pp-size", "--pipeline-parallel-size"))


def _steps(numbers: _Numbers, engine: str | None, without_pipeline: bool = False) -> tuple[str, ...]:
    steps: list[str] = []
    if numbers.kind == "block":
        if numbers.moe:
            steps.append("or split the MoE layers by experts instead: expert parallelism leaves each expert's "
                         "weights whole (SGLang: --ep-size equal to the tensor-parallel size; vLLM: "
                         "--enable-expert-parallel)" if engine is None else
                         ("or split the MoE layers by experts instead: --ep-size equal to the tensor-parallel size "
                          "leaves each expert's weights whole" if engine == "sglang" else
                          "or split the MoE layers by experts instead: --enable-expert-parallel leaves each "
                          "expert's weights whole"))
        steps.append("or serve a checkpoint of this model without block-wise quantization (BF16, or FP8 per tensor "
                     "or per channel), which has no block to align to")
        steps.append("to keep all your GPUs, combine the smaller tensor-parallel size with pipeline or data "
                     "parallelism (tensor x pipeline x data = GPUs)")
    elif numbers.degree_name == "tp" and without_pipeline:
        steps.append("to keep all your GPUs, combine a size that divides with data parallelism (tensor x data = GPUs); "
                     "this release has no pipeline parallelism")
    elif numbers.degree_name == "tp":
        steps.append("to keep all your GPUs, combine a size that divides with pipeline parallelism (tensor x "
                     "pipeline = GPUs) or data parallelism; pipeline parallelism splits the layers and has no head "
                     "constraint, but the model must support it")
    return tuple(steps)


# The sizes a parallel degree must divide, as the model's config names them (vLLM prints the HF config in its
# `Initializing a V1 LLM engine … with config:` line only partly; a `config.json` dump or SGLang's model config line
# names them): (config keys, the size in prose, the degree that splits it).  The engines' own checks: vLLM
# ModelConfig.verify_with_parallel_config (heads % tp), QKVParallelLinear (KV heads divided by or copied over tp),
# and the intermediate size split over tp (MergedColumnParallelLinear's divide()).  Not the experts: vLLM spreads a
# remainder of experts over the EP ranks (fused_moe/layer.py determine_expert_map; it asserts experts % ep only with
# EPLB) and SGLang's count adds redundant and shared experts the config does not name; and a MoE model's expert
# weights split over tp / ep (SGLang's moe_tp_size), not tp: a config that names experts gets no intermediate size
# division (review of advice17, M3 and M4: "lower the TP" was the opposite of enabling expert parallelism).
_CONFIG_SIZES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("num_attention_heads",), "attention heads", "tp"),
    (("num_key_value_heads", "multi_query_group_num"), "KV heads", "tp"),
    (("intermediate_size",), "intermediate size", "tp"),
)
_EXPERT_KEYS = ("n_routed_experts", "num_experts", "num_local_experts", "moe_intermediate_size")
_BLOCK_SIZE = compile_lazily_regex(r"""weight_block_size['"]?\s*[:=]\s*\[\s*(\d+)\s*,\s*(\d+)\s*\]""")


def model_size(evidence: Evidence, key: str) -> int | None:
    """`key`'s number in the config the log prints (the launch's model size lines, the lines before the failure), when
    every line that prints it gives the same one: a multimodal config prints the text model's and the vision tower's
    heads under one name, and which of them the check read is then unknown."""
    pattern = regex.compile(_CONFIG_VALUE.format(name=regex.escape(key)))
    values = {int(m.group(1)) for line in (*evidence.launch.model_size_lines, *_log_lines(evidence)) if key in line
              for m in pattern.finditer(line)}
    return values.pop() if len(values) == 1 else None


def config_arithmetic_steps(evidence: Evidence) -> tuple[str, ...]:
    """For general guidance on a parallel-config failure: the division of each size the config printed in the log by
    the degree the launch gives, which fails, and the degrees that fit them all.  The sizes as options, never a
    command: which of these sizes the failing check read is not known, only that each must divide."""
    degrees = {name: launch_degree(evidence, name) for name in ("tp", "ep")}
    sizes: dict[str, tuple[str, int, str]] = {}
    moe = any(model_size(evidence, key) for key in _EXPERT_KEYS)
    for keys, quantity, name in _CONFIG_SIZES:
        if moe and quantity == "intermediate size":
            continue
        found = next(((key, size) for key in keys if (size := model_size(evidence, key))), None)
        if found is not None and (degrees[name] or 1) > 1:
            sizes[quantity] = (*found, name)
    block = _block_size(evidence)
    said: list[str] = []
    failing: list[str] = []
    for quantity, (key, size, name) in sizes.items():
        degree = degrees[name] or 1
        whole = _fits(quantity, size, degree, block)
        why = ("" if whole else " (not whole, nor a multiple)" if quantity == "KV heads" else " (not whole)"
               if size % degree else " (not a multiple of the quantization block)")
        said.append(f"{key} {size} / {_DEGREE_PROSE[name]} {degree} = {_quotient(size, degree)}{why}")
        if not whole:
            failing.append(f"{quantity} {size} by {degree}")
    if not said:
        return ()
    options = [f"{_DEGREE_PROSE[name].capitalize()}s that fit the {', the '.join(named)}: {', '.join(map(str, fits))}"
               for name in ("tp", "ep")
               if (named := [q for q, (_, _, n) in sizes.items() if n == name])
               and (fits := [d for d in divisors(max(sizes[q][1] for q in named))
                             if all(_fits(q, sizes[q][1], d, block) for q in named)])]
    copied = [f"{size} KV heads over {degrees[name] or 1}" for quantity, (_, size, name) in sizes.items()
              if quantity == "KV heads" and size % (degrees[name] or 1)]
    verdict = (f"The division that fails: {'; '.join(failing)}. " + ("; ".join(options) + "." if options else "")
               if failing else
               f"The KV heads do not divide ({', '.join(copied)}): they fit where the model's code copies them over "
               "the GPUs (QKVParallelLinear), and fail where it splits them strictly. " + ("; ".join(options) + "." if options else "")
               if copied else "Each of these divides: the failing check is about another size (a quantized layer's "
               "slice, a kernel's tile, the GPUs per node).")
    blocked = f" (quantization block {block}, weight_block_size)" if block and "intermediate size" in sizes else ""
    return (f"General guidance: the config the log prints and the launch's degrees give {'; '.join(said)}{blocked}. "
            f"{verdict}",)


def _fits(quantity: str, size: int, degree: int, block: int | None) -> bool:
    """The degree splits the size as the engines do: KV heads divided or copied (a multiple of them), the
    intermediate size into whole quantization blocks when the checkpoint is block-quantized."""
    if quantity == "KV heads":
        return size % degree == 0 or degree % size == 0
    if quantity == "intermediate size" and block:
        return size % degree == 0 and (size // degree) % block == 0
    return size % degree == 0


def _block_size(evidence: Evidence) -> int | None:
    """The block quantization's block_n the config prints (`"weight_block_size": [128, 128]`), when it prints one."""
    blocks = {int(m.group(1)) for line in (*evidence.launch.model_size_lines, *_log_lines(evidence))
              if "weight_block_size" in line and (m := _BLOCK_SIZE.search(line))}
    return blocks.pop() if len(blocks) == 1 else None


def _quotient(size: int, degree: int) -> str:
    """`size / degree` as a person writes it: whole, or to two decimals (5.33, never a rounded 2389)."""
    return str(size // degree) if size % degree == 0 else f"{size / degree:.2f}"
