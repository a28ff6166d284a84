"""The honest category of a failure no pattern or rule names (issue 28, item 5).

The likeliest category comes from the evidence the failure itself carries, weighed by the table in
facts/categories.toml: its kind (an argparse error, an abort), its exception type, the words of its messages and
the subsystem its innermost frames run through (the model loader, the distributed layer, the quantization
layers, ...).  The answer is that category's general checks, with basis "general": every format labels it
"general guidance, not a proven fix" and shows the text to search for.  When no cue fits, it says so plainly
and gives what the exception type alone says.

The checks are engine-neutral, or scoped to the engine the log decided; a check that names a flag is kept only
when the release's catalog has it (with the version unknown: every shipped release of that engine)."""

from __future__ import annotations

import re
from dataclasses import replace

from logsleuth.diagnosis.grouping import names_no_cause
from logsleuth.diagnosis.schema import CATEGORIES
from logsleuth.facts.categories import CategoryRow, table
from logsleuth.facts.engine_classes import distinctive, engines_defining, only_engine_defining
from logsleuth.facts.engine_drivers import Driver, drivers_shown
from logsleuth.facts.gpu_error_names import driver_mismatch_named
from logsleuth.facts.message_templates import fixed_text, short_type
from logsleuth.ingest.engine_evidence import failure_wrappers, serve_deployment
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, Failure, Fix
from logsleuth.pydantic_display import checked_as
from logsleuth.reasoning.asserted_setting import asserted_setting_steps
from logsleuth.reasoning.call_frames import (
    api_entry_under_wrapper,
    dependency_object_class,
    engine_code_of,
    engine_object_class,
    innermost_own_frame,
    shows_no_frame,
    wrapper_call_into_engine,
)
from logsleuth.reasoning.category_score import MISSING_LINE, UNCLASSIFIED, best_row, cut_in_model_loader
from logsleuth.reasoning.child_death import child_death_checks
from logsleuth.reasoning.cut_context import (
    cut_context_shape,
    pending_flush_check,
    pending_flush_shape,
    quantized_moe_steps,
)
from logsleuth.reasoning.cut_startup import cut_setup_steps
from logsleuth.reasoning.dashed_keywords import dashed_argument_steps, dashed_engine_argument
from logsleuth.reasoning.dependencies import release_needed
from logsleuth.reasoning.driver_versions import driver_version_steps
from logsleuth.reasoning.engine_api_calls import (
    SIGNATURE,
    UnseenCaller,
    caller_misfit,
    keyword_given_by_user,
    keyword_is_a_value,
    misfit_engine,
    misspelt_engine_flag,
    override_misfit,
    package_path,
    refusal_without_caller,
)
from logsleuth.reasoning.evidence import Evidence, exception_lines
from logsleuth.reasoning.feature_code import feature_steps, flags_named
from logsleuth.reasoning.frame_shapes import shape_of
from logsleuth.reasoning.guidance_text import (
    PARSER_CATEGORIES,
    checks_for_the_message,
    compiled_op_steps,
    failure_texts,
    flags_hold,
    joined,
    launch_settings,
    misfit_steps,
    misfit_why,
    module_no_release_requires,
    multimodal_architecture,
    platform_steps,
    render_words,
    row_checks,
    settings_the_check_reads,
    settings_the_message_speaks_of,
    with_compile_cache,
)
from logsleuth.reasoning.hub_ids import hub_id_steps
from logsleuth.reasoning.launch_quantization import launch_quantization
from logsleuth.reasoning.lora_modules import lora_module_steps
from logsleuth.reasoning.message_limits import limit_steps
from logsleuth.reasoning.nccl_last_error import nccl_invalid_argument_steps
from logsleuth.reasoning.option_clash import clash_diagnosis, option_clash
from logsleuth.reasoning.parallelism import config_arithmetic_steps, launch_degree, splits_over_one_gpu
from logsleuth.reasoning.patched_engine import patched_copy_steps
from logsleuth.reasoning.plain_call import without_companion_check
from logsleuth.reasoning.raise_site import site_of
from logsleuth.reasoning.remote_code_scope import without_remote_code
from logsleuth.reasoning.serving_step import with_serving_switches
from logsleuth.reasoning.wrapper_death import hidden_error_steps
from logsleuth.reasoning.wrapper_pins import release_alignment, serve_deployment_alignment, wrapper_pin
from logsleuth.tracebacks.typeless_errors import PYDANTIC_VALIDATION_ERROR
from logsleuth.wording import article

DRIVER_MISMATCH_MEANING = "the host's NVIDIA driver and the CUDA the program loads do not fit"

# What other modules and the tests read from here, kept where they look for it (the split of stop 42 moved them).
__all__ = ["UNCLASSIFIED", "best_row", "categorize", "engine_code_of", "failure_texts", "flags_hold", "render_words",
           "row_checks"]


def categorize(evidence: Evidence) -> Diagnosis:
    """The likeliest category and its general checks (basis "general"); "unclassified" with the exception
    type's guidance when no cue fits."""
    failure = evidence.failure
    launch = evidence.launch
    engine = launch.engine
    if (posix := _unix_only_module(failure)) is not None:
        # vllm-project/vllm#12858 (`import resource` in vLLM's distributed utilities on win32): the interpreter's own
        # library says which platform this is, whatever package asked for the module.
        return _on_native_windows(evidence, engine or engine_code_of(failure), (
            f"'{posix}' is a module of Python's standard library that exists on Unix only: this interpreter is not a "
            "Unix one (native Windows), and no pip package provides it."))
    if (clash := option_clash(failure)) is not None:
        # argparse refusing an option the program's parser and the engine's both define: the program's release
        # against the engine's, whatever subsystem the engine's parser code sits in (reasoning/option_clash.py).
        return clash_diagnosis(clash, evidence, _missing_line(evidence))
    said = _cut_message_words(evidence)
    listed = _drivers_of_a_frameless_call(evidence)
    wrapper = launch.wrapper or (joined([driver.name for driver in listed]) if listed else None)
    cut = names_no_cause(failure)
    found = best_row(failure, site_words=said, wrapper=launch.wrapper, engine=engine)
    if found is not None and found[0].category == "parallel-config" and splits_over_one_gpu(evidence):
        # One GPU splits nothing: a size the message finds indivisible is the kernel's or the checkpoint's
        # limit (a quantization kernel's tile on the full size), not a parallel degree's.
        found = best_row(failure, frozenset({"parallel-config"}), said, launch.wrapper, engine=engine)
        found = (found[0], [*found[1], "a launch with tensor parallelism 1 (nothing split)"]) if found else None
    if (found is not None and found[0].in_engine_code and engine_code_of(failure) is None
            and engine_object_class(failure) is None and (engine is None or _refused_by_no_engines_class(failure))):
        # A bug of which engine? Neither the frames nor the launch say: not a claim to make.  Nor a bug of the engine
        # the launch names when the refusing class is no engine's.
        found = best_row(failure, frozenset({found[0].category}), said, launch.wrapper, engine=engine)
    found = _root_of_the_chain(failure, found)
    if found is not None and (split := _split_quantized_layer(evidence, found[0])):
        # A quantized kernel's shape check at a tensor-parallel degree above 1: a smaller degree may divide the layer, so
        # the degree's arithmetic leads (llm-compressor#57: 29568 over 4 GPUs, which 2 and 8 divide); at degree 1 or
        # an unknown one it stays the checkpoint's shape against the kernel (quantization).
        parallel = table().row("parallel-config")
        found = (parallel, [*found[1], f"a launch with tensor parallelism {split}"]) if parallel else found
    shape = shape_of(failure) if cut else None
    if shape is not None and shape.when_lines and not _paste_shows(evidence, shape.when_lines):
        shape = None  # a shape that holds only beside a line of the paste (an attention library's version)
    if (shape is not None and shape.kind == "step" and found is not None
            and found[0].category not in (UNCLASSIFIED, shape.category)):
        shape = None  # the serving step is the weakest reading: words, a subsystem or a frame cue that names another win
    if (cut and shape is not None and shape.kind == "step" and (found is None or found[0].category == UNCLASSIFIED)
            and pending_flush_shape(evidence) is not None):
        shape = None  # the engine's refusal to flush with requests running, just above the cut, says more (below)
    shape_row = table().row(shape.category) if shape is not None else None
    read_from_shape = shape_row is not None  # what failed is read from the frames' shape, not guessed from a subsystem
    if shape is not None and shape_row is not None and found is not None and found[0].category == shape.category:
        # A row of the same category already read more (the package being imported): its words stay, the shape added;
        # a known check function keeps its own title and checks (it says which check ran).
        found = (found[0], [*found[1], f"the frames' shape, {shape.reading}"])
        shape = shape if shape.kind in ("check", "step") else None
    elif shape is not None and shape_row is not None:
        # The frames' shape says which kind of step failed, whatever subsystem the innermost frame runs in.
        found = (shape_row, [f"the frames' shape, {shape.reading}; {MISSING_LINE}"])
    else:
        shape = None
    if cut and shape is None and (found is None or found[0].category == UNCLASSIFIED):
        # The frames alone name nothing: the paste's lines around the cut may (a wrapper's warning, the GPU).
        shape = cut_context_shape(evidence)
        shape_row = table().row(shape.category) if shape is not None else None
        if shape is not None and shape_row is not None:
            found, read_from_shape = (shape_row, [f"{shape.reading}; {MISSING_LINE}"]), True
        else:
            shape = None
    misfit = caller_misfit(failure) or override_misfit(failure, bool(launch.wrapper or failure_wrappers(failure)))
    wrapper_row = table().wrapper_call_row()
    if misfit is not None and wrapper_row is not None and (found is None or found[0].category != wrapper_row.category):
        # A signature the call between the engine's API and another program's code does not fit: that program was
        # written for another release (reasoning/engine_api_calls.py), whatever the words say of a subsystem.
        found = (wrapper_row, [misfit_why(misfit)])
    if listed and wrapper_row is not None:
        # The error line alone, CPython refusing a call on the engine's own class, and a program that makes such calls
        # listed beside the engine: that program's release against the engine's, not a flag typed at a command line.
        found = (wrapper_row, [f"CPython's refusal of a call on {listed_class(failure)}, a class of the engine's code, "
                               f"with {joined([f'{d.named} ({d.kind})' for d in listed])} listed beside the engine"])
    dependency = dependency_object_class(failure)
    dependency_row = table().row("dependency-version")
    if dependency and dependency_row is not None and (found is None or found[0].category == UNCLASSIFIED):
        dependency_class, package = dependency
        owner = f"{package}'" if package.endswith("s") else f"{package}'s"
        found = (dependency_row, [f"the failing object's class ({dependency_class}, defined in {owner} code)"])
    unseen = refusal_without_caller(failure) if misfit is None and not listed else None
    if unseen is not None and (found is None or found[0].category in (UNCLASSIFIED, "unknown-flag")):
        # Only where the table named nothing or the unknown-flag tie: an engine-internal class's refusal keeps its
        # engine-bug reading, a tokenizer's its own row, a transformers class the dependency reading above.
        found = _unseen_caller_reading(unseen, evidence, wrapper_row) or found
    else:
        unseen = None
    if found is None:
        return _unclassified(evidence)
    if said:
        found = (found[0], [*found[1], "the message template of the engine's check that raised it (the paste cut the message)"])
    row, why = found
    caller = wrapper_call_into_engine(failure) if row.in_engine_code else None
    if caller is not None and wrapper_row is not None and engine_code_of(failure) in (engine, None):
        # The engine's code failed at the entry of the call a wrapper made: the wrapper's call does not fit the
        # installed release (OpenRLHF/OpenRLHF#922, verl-project/verl#2812), not a bug of the release.
        row = wrapper_row
        engine = engine or engine_code_of(failure)
        why = [*why, f"the call into the engine made by a wrapper's frame ({package_path(caller.file)}:{caller.line})"]
    entry = (api_entry_under_wrapper(failure, launch.wrapper)
             if caller is None and row.in_engine_code and wrapper_row is not None else None)
    if entry is not None and wrapper_row is not None:
        # The same with the wrapper's frame not shown but the wrapper named (its process, the log): the engine's API
        # refusing a value at its entry under a program that builds its objects (ray-project/ray#50275: a Ray Serve
        # deployment passing served model names as strings to vLLM's serving classes).
        row = wrapper_row
        engine = engine or engine_code_of(failure)
        entry_frame, caller_named = entry
        why = [*why, f"the engine's API ({package_path(entry_frame.file)}:{entry_frame.line}) refusing a value at its "
                     f"entry under {caller_named}, whose call into it the paste does not show"]
    if row.in_engine_code:
        code_of = engine_code_of(failure)
        if engine and code_of is not None and code_of != engine:
            # The other engine's code, run by this one (SGLang releases import vLLM's modules): the two
            # packages' versions do not fit, rather than a bug of either release.
            row = table().row("dependency-version") or row
            why = [*why, f"{ENGINE_NAMES.get(code_of or '', code_of)} code running under {ENGINE_NAMES.get(engine, engine)}"]
        failing = innermost_own_frame(failure.final.frames)
        if row.category == "engine-bug" and failing is not None and code_of is not None:
            # Which code failed is the reading: the engine's own line, not a package it called (that is the
            # dependency-version row's, package_called_by_engine).
            why = [*why, f"the failing frame in the engine's own code ({package_path(failing.file)}:{failing.line})"]
        if named := engine_object_class(failure):
            owners = " and ".join(ENGINE_NAMES.get(e, e) for e in sorted(engines_defining(named)))
            why = [*why, f"the failing object's class ({named}, defined in {owners}'s code)"]
        engine = engine or code_of  # the engine's own frames (or its own class, frameless) are positive evidence of it
    if misfit is not None and engine is None:
        engine = misfit_engine(misfit, failure)
    if listed and wrapper_row is not None and row.category == wrapper_row.category and engine is None:
        named_class = listed_class(failure)
        engine = only_engine_defining(named_class) if named_class else None  # its own class: positive evidence
    if unseen is not None and row.category == "dependency-version" and engine is None:
        engine = only_engine_defining(unseen.refused_class)  # its own class: positive evidence
    # (an engine the failure's own code names while the launch's is undecided: the version the log names for it)
    version = (launch.engine_version if engine == launch.engine
               else dict(launch.versions_named).get(engine) if launch.engine is None and engine else None)
    aligned: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    unseen_engine_call = unseen is not None and row is wrapper_row
    if wrapper_row is not None and row.category == wrapper_row.category and (misfit or caller or listed or entry
                                                                              or unseen_engine_call):
        # A wrapper's call the installed engine does not fit: the releases to align, from what the paste says of them.
        pin = wrapper_pin([*failure.context, *evidence.lines, *evidence.earlier], engine)
        aligned = release_alignment(pin, engine, version, launch.wrapper, listed)
    serve_caller = entry is not None and entry[1] == "Ray Serve"
    if serve_caller:
        # The caller is the user's own deployment, not a wrapper with releases of its own: the row's wrapper checks
        # (pip show, the wrapper's release made for the engine) would send them to Ray.
        aligned = serve_deployment_alignment(serve_deployment(failure.meta.process), engine, version)
    # a driver/runtime mismatch status is no package of the engine's: its own meaning, and no engine release asked
    driver_mismatch = row.category == "dependency-version" and any(
        driver_mismatch_named(text) for text in exception_lines(failure))
    meaning = (DRIVER_MISMATCH_MEANING if driver_mismatch else CATEGORIES.get(row.category, row.category))
    if wrapper is None and row.in_wrapper_code and (own := innermost_own_frame(failure.final.frames)) is not None:
        # the program whose code failed is the innermost frame's installed package (site-packages/mytool/…): named, not
        # "a wrapper"
        wrapper = package_path(own.file).split("/", 1)[0] if "-packages/" in own.file else None
    guessed = cut and not read_from_shape and row.category != UNCLASSIFIED and _placed_by_subsystem_alone(why)
    if guessed and platform_steps(failure, engine):
        # A subsystem's name on native Windows (`distributed/`, where vLLM's import of POSIX-only modules fails first,
        # vllm-project/vllm#12858) says nothing of a collective or a setting: the platform is the finding.
        return _on_native_windows(evidence, engine, (
            "The frames' paths are Windows paths and the paste stops before the exception line; the innermost frame's "
            f"subsystem, which alone would suggest {row.category}, is only where the process was, not a finding."))
    title = render_words(shape.title if shape is not None and shape.title else row.title, engine, version, wrapper)
    checks = (() if serve_caller else shape.checks if shape is not None and shape.checks else
              row_checks(row, engine, version, wrapper, failure_texts(failure), launch_settings(launch),
                         multimodal_architecture(launch)))
    checks = without_remote_code(tuple(with_compile_cache(check, failure, launch) for check in checks), failure,
                                 launch_settings(launch))
    checks = without_companion_check(checks, failure) if row.category == "cuda-error" else checks
    if row.category == "process-killed" and (death := child_death_checks(evidence)):
        checks = death  # the parent's pipe read alone: led by what the paste shows of how the child ended
    if shape is not None and shape.kind == "step":
        checks = with_serving_switches(checks, evidence, engine)
        if cut and (flush := pending_flush_check(evidence)):
            checks = (*checks, flush)  # a refused flush above the cut: beside the step's reading, not over it
    for_message = (checks_for_the_message(row, engine, version, failure_texts(failure), launch_settings(launch),
                                          multimodal_architecture(launch)) if shape is None else ())
    feature = _feature_steps(evidence) if row.category not in PARSER_CATEGORIES else ()
    if feature and all(any(flag in check for check in checks) for flag in flags_named(feature[0])):
        feature = ()  # the row's own check already says which flag to leave out (a check written for this message)
    check_reads = settings_the_check_reads(evidence, row.category, engine, version,
                                           flags_named(feature[0]) if feature else frozenset())
    # What a release requires or a reinstall command may name only a release the log or the user gives: one guessed
    # from the code's layout may be another.
    named_release = _release_the_log_names(evidence, engine)
    # A package that does not fit the engine: what fits is the release's pins, and a release the log does not name is
    # asked for, with the command that prints it, never guessed (the steps show it; needs_input carries it in JSON).
    release_asked = ((release_needed(engine),) if row.category == "dependency-version" and not driver_mismatch
                     and engine in ENGINE_NAMES
                     and named_release is None and not unseen_engine_call and not aligned[1] else ())
    return Diagnosis(
        pattern=f"general-{row.category}",
        title=title,
        category=row.category,
        root_cause=(
            f"{title}. No pattern or rule of logsleuth names this failure; the likeliest category is "
            f"{row.category} ({meaning}), read from {joined(why)}."
            + (" That is a guess from where the process was, not a finding: what failed is unknown until the exception "
               "line is seen." if guessed else "")
            if row.category != UNCLASSIFIED else
            f"{title}. No pattern or rule of logsleuth names this failure, and what it shows ({joined(why)}) names the "
            f"stage that failed, not a category."
        ),
        fix=Fix(summary=(f"General checks for {row.category} (a guess from the innermost frame's subsystem):" if guessed
                         else f"General checks for {row.category}:"),
                steps=(*hidden_error_steps(evidence),
                       *patched_copy_steps(failure),
                       *platform_steps(failure, engine),
                       *_limit_steps(evidence),
                       *(config_arithmetic_steps(evidence) if row.category == "parallel-config" else ()),
                       *_quantized_launch_steps(evidence),
                       *(_unsplit_quantized_layer(evidence) if row.category == "quantization" else ()),
                       *(hub_id_steps("\n".join(failure_texts(failure)), launch, engine)
                         if row.category == "model-path" else ()),
                       *(lora_module_steps("\n".join(exception_lines(failure)), engine, version)
                         if row.category == "lora-config" else ()),
                       *asserted_setting_steps(failure, engine, version),
                       *(dashed_argument_steps(failure) if row.category == "unknown-flag" else ()),
                       *feature,
                       *(compiled_op_steps(failure, engine, named_release, launch.engine_version_source, launch.checkout_paths,
                                           launch.editable_checkouts)
                         if row.category == "dependency-version" else ()),
                       *(driver_version_steps(evidence) if row.category == "dependency-version" else ()),
                       *(nccl_invalid_argument_steps([*exception_lines(failure), *failure.context, *evidence.lines],
                                                     engine) if row.category == "nccl" else ()),
                       *check_reads,
                       # (a setting a check written for this message names is not repeated)
                       *settings_the_message_speaks_of(evidence, row.category, (*feature, *check_reads, *for_message)),
                       *module_no_release_requires(evidence, row.category, engine, named_release),
                       *misfit_steps(misfit, engine, version),
                       *aligned[0],
                       *checks,
                       *release_asked),
                needs_input=(*aligned[1], *_missing_line(evidence), *release_asked)),
        engine=engine,
        engine_version=version,
        basis="general",
    )


def _quantized_launch_steps(evidence: Evidence) -> tuple[str, ...]:
    """A traceback cut while the model was built, in a launch that asks for a quantization: the quantization named as
    a thing to rule out, in general guidance, never as the category (a launch's setting says nothing of what the cut
    exception line said: stop 47, the blind split's quantization guesses)."""
    failure = evidence.failure
    loader = cut_in_model_loader(failure)
    quantized = launch_quantization(evidence.launch, [*failure.context, *evidence.lines]) if loader else None
    if loader is None or not quantized:
        return ()
    return (f"General guidance, not the category: the launch asks for a quantization ({quantized}) and the traceback "
            f"stops while the model was built ({package_path(loader.file)} in {loader.function}). The quantized layers "
            "are one part of the model that can fail there (their kernels on this GPU, their sizes against the "
            "tensor-parallel split); the exception line says whether they did, and the same model unquantized tells "
            "it apart.",)


def _attention_not_split_by_tp(evidence: Evidence) -> bool:
    """The launch's attention is not split by its tensor-parallel size, so the head divisions by it do not hold:
    SGLang's --enable-dp-attention (attention runs at tp / dp: sglang/srt/layers/dp_attention.py)."""
    launch = evidence.launch
    if any(key == "enable_dp_attention" and value.strip("'\"") == "True" for key, value in launch.server_args):
        return True
    return "--enable-dp-attention" in (launch.command or "").split()


def _split_launch_checks(evidence: Evidence) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A traceback cut while the model was built or loaded, in a launch that splits it (a tensor-parallel size above
    1): the divisions that model construction checks there, as general guidance, and the model's sizes asked for
    (needs_input), never guessed: (steps, needs_input).  Both engines divide each layer's attention heads by the
    tensor-parallel size while building it (vllm/config.py ModelConfig.verify_with_parallel_config, vllm and sglang
    distributed/utils.py ensure_divisibility from the layers' constructors; sgl-project/sglang#3436: a 1.5B model at
    --tp 24, the stored paste cut inside get_model)."""
    failure = evidence.failure
    loader = cut_in_model_loader(failure)
    tp = launch_degree(evidence, "tp") if loader is not None else None
    if loader is None or tp is None or tp < 2 or _attention_not_split_by_tp(evidence):
        return (), ()
    where = package_path(loader.file)
    where = loader.module_path if where == loader.file else where
    where = f"{where} in {loader.function}" if loader.function else where
    step = (f"General guidance, not the category: the launch splits the model over tensor parallelism {tp} and the "
            f"traceback stops while the model was built ({where}). "
            f"Building it divides the model's attention heads (num_attention_heads in its config.json) by {tp}, and "
            f"its KV heads (num_key_value_heads) must divide by {tp} or, where the model copies them, {tp} by them: "
            f"a size that does not divide stops the start there (an AssertionError or a ValueError naming it). A "
            f"tensor-parallel size that divides those numbers, with replicas or data parallelism for the other GPUs, "
            f"avoids it.")
    asked = (f"The model's num_attention_heads and num_key_value_heads (its config.json) against the launch's "
             f"tensor-parallel size {tp}: the paste does not show them.",)
    return (step,), asked


# A quantization check's message that blames the tensor-parallel size (AWQ's and GPTQ's "…can be caused by too large
# tensor parallel size.", Marlin's "Consider reducing tensor_parallel_size …"): facts/categories.toml's kernel-shape row.
_BLAMES_THE_DEGREE = compile_lazily(r"too large tensor[_ ]parallel[_ ]size|reducing tensor_parallel_size", re.IGNORECASE)


def _split_quantized_layer(evidence: Evidence, row: CategoryRow) -> str | None:
    """The launch's tensor-parallel degree, when it is above 1 (or a worker of a later rank printed the failure) and the
    failure is a quantization check that blames the degree."""
    if row.category != "quantization" or not any(_BLAMES_THE_DEGREE.search(text) for text in failure_texts(evidence.failure)):
        return None
    if splits_over_one_gpu(evidence):
        return None
    degree = launch_degree(evidence, "tp")
    if degree is None and _a_worker_rank_above_0(evidence.failure):
        return "above 1 (a worker of rank 1 or more printed it)"
    return str(degree) if degree is not None and degree > 1 else None


def _a_worker_rank_above_0(failure: Failure) -> bool:
    """The failure was printed by a tensor-parallel worker other than the first: a rank tag of 1 or more (`TP3`,
    `rank=5`), or vLLM's V0 worker process (`VllmWorkerProcess`, started only for ranks other than the driver's)."""
    meta = failure.meta
    return (any(kind in ("TP", "rank") and number >= 1 for kind, number in meta.ranks)
            or (meta.process or "").startswith("VllmWorkerProcess"))


def _unsplit_quantized_layer(evidence: Evidence) -> tuple[str, ...]:
    """A quantized kernel's shape check that blames the tensor-parallel size, in a launch that splits nothing: the size
    per GPU is the layer's whole dimension, so no degree helps (sgl-project/sglang#1396: the same error on one GPU)."""
    if not any(_BLAMES_THE_DEGREE.search(text) for text in failure_texts(evidence.failure)):
        return ()
    if not splits_over_one_gpu(evidence):
        return ()
    return ("The launch runs tensor parallelism 1: nothing is split, so the size the check refused is the layer's whole "
            "dimension and no tensor-parallel size helps, whatever the message suggests. The checkpoint's shape does "
            "not fit this kernel: another kernel or quantization method for it, or another checkpoint.",)


def _placed_by_subsystem_alone(why: list[str]) -> bool:
    """The reading of a cut traceback rests on the innermost frame's subsystem alone: no words (the person's sentence,
    an error record above it, a cut message's template) and no frame shape said what failed."""
    by_subsystem = any(reason.startswith("the innermost frame's subsystem") for reason in why)
    by_words = any(reason.startswith(("the words of a line", "the message's words", "the message template"))
                   for reason in why)
    return by_subsystem and not by_words


def _missing_line(evidence: Evidence) -> tuple[str, ...]:
    """What to paste when the traceback was cut before its exception line: that line, which alone says what failed."""
    if not names_no_cause(evidence.failure):
        return ()
    return ("The exception line the paste cut: the `Type: message` line CPython prints right after the last frame "
            "(the first line at the left margin below it). Until it is seen, what failed is read from the frames "
            "alone, or unknown.",)


def _refused_by_no_engines_class(failure: Failure) -> bool:
    """CPython's refusal of a call on a class no engine defines, no caller shown: a wrapper's own settings class
    (lighteval's `VLLMModelConfig`, src/lighteval/models/vllm/vllm_model.py) refused it, so the engine a launch shows (`lighteval
    vllm …`) did not fail in its own code."""
    unseen = refusal_without_caller(failure)
    return unseen is not None and not engines_defining(unseen.refused_class)


def _release_the_log_names(evidence: Evidence, engine: str | None) -> str | None:
    """The engine's release when the log (or the user) names it: one inferred from the code's layout may be another
    release, and a reinstall command must not name it."""
    launch = evidence.launch
    return launch.named_version if engine == launch.engine else None


def _unseen_caller_reading(
    unseen: UnseenCaller, evidence: Evidence, wrapper_row: CategoryRow | None
) -> tuple[CategoryRow, list[str]] | None:
    """The category of CPython's refusal of a call whose caller no frame shows (engine_api_calls.refusal_without_caller):
    a keyword that is no Python name is a value the user wrote in another release's syntax (invalid-flag-value); a
    keyword the log's command sets is the user's unknown flag; otherwise the caller and the class's package come from
    releases that do not fit (dependency-version: the wrapper row for an engine's class, the category's own row for
    another package's)."""
    launch = evidence.launch
    lines = [*evidence.failure.context, *evidence.lines, *launch.driver_lines, *([launch.command] if launch.command else [])]
    refused = f"CPython's refusal of a call on {unseen.refused_class}'s signature with no frame of the caller"
    if dashed := dashed_engine_argument(unseen):
        row = table().row("unknown-flag")
        why = f"{refused}, its keyword '{unseen.keyword}' the command line's spelling of the flag {dashed.flag}"
    elif keyword_is_a_value(unseen):
        row = table().row("invalid-flag-value")
        why = f"{refused}, its keyword '{unseen.keyword}' no Python name (a value split into keywords)"
    elif keyword_given_by_user(unseen, lines):
        row = table().row("unknown-flag")
        why = f"{refused}, its keyword '{unseen.keyword}' set in the command the log shows"
    elif flag := misspelt_engine_flag(unseen):
        row = table().row("unknown-flag")
        why = f"{refused}, its keyword '{unseen.keyword}' in no release, a misspelling of {flag}"
    else:
        callers = [driver.named for driver in drivers_shown(launch.driver_lines)] or ([launch.wrapper] if launch.wrapper else [])
        if not unseen.packages and not callers:
            return None  # a class nothing indexes and no program shown: the user's own class, as likely
        engine_class = bool(engines_defining(unseen.refused_class))
        row = wrapper_row if engine_class else table().row("dependency-version")
        owners = joined(sorted(unseen.packages)) if unseen.packages else None
        why = f"{refused} ({unseen.refused_class} defined in {owners}'s code)" if owners else refused
        why += f", {joined(callers)} shown in the log" if callers else ""
    return (row, [why]) if row is not None else None


def _drivers_of_a_frameless_call(evidence: Evidence) -> tuple[Driver, ...]:
    """The package that drives the engine which the log lists beside it (facts/engine_drivers.py), when the failure is
    the error line alone and that line is CPython's refusal of a call on the engine's own class (`EngineArgs.__init__()
    got an unexpected keyword argument ...`): no frame shows the caller, and such a call is made from Python, by a
    program like the one listed (unslothai/unsloth#2002: unsloth 2025.3.9 listed beside vLLM 0.6.1; the frames of
    huggingface/trl#3304 and OpenRLHF/OpenRLHF#702 show the same call made by the wrapper)."""
    failure = evidence.failure
    if evidence.launch.wrapper or not shows_no_frame(failure) or listed_class(failure) is None:
        return ()
    return drivers_shown([*evidence.launch.driver_lines, *failure.context])


def listed_class(failure: Failure) -> str | None:
    """The engine's class whose call CPython refused, as the failure's message names it (`EngineArgs.__init__() got an
    unexpected keyword argument ...`), whatever type carried the message (a wrapper re-raises it as a RuntimeError:
    unslothai/unsloth#2002)."""
    refused = SIGNATURE.match(failure.final.message.strip())
    named = refused["callee"].split(".")[0] if refused and refused["callee"] else None
    return named if named and distinctive(named) and engines_defining(named) else None


def _cut_message_words(evidence: Evidence) -> tuple[str, ...]:
    """The words of the message the engine's check prints, when the paste cut the failure's message or lost it (a
    traceback cut inside its raising statement): the raise site index (reasoning/raise_site.py) holds the template of
    the check the innermost engine frame stands in, and its fixed text names the category the cut words no longer do.
    None for a message pasted whole: its own words are the evidence."""
    final = evidence.failure.final
    if final.message.strip() and not final.truncated:
        return ()
    site = site_of(evidence.failure, evidence.launch)
    if site is None or not fixed_text(site.message):
        return ()
    return (f"{final.type}: {fixed_text(site.message)}",)


def _root_of_the_chain(
    failure: Failure, found: tuple[CategoryRow, list[str]] | None
) -> tuple[CategoryRow, list[str]] | None:
    """A chain whose later exceptions only report a process that died (a symptom: the parent's "scheduler is
    dead", a kill) is filed under what its first exception says, when that names a cause."""
    symptoms = table().symptoms
    if len(failure.exceptions) < 2 or (found is not None and found[0].category not in symptoms):
        return found
    earlier = best_row(replace(failure, exceptions=failure.exceptions[:1]))
    if earlier is None or earlier[0].category in symptoms:
        return found
    return earlier[0], [*earlier[1], "the chain's first exception (the later ones report a process that died)"]


def _limit_steps(evidence: Evidence) -> tuple[str, ...]:
    """A step per limit the message states on a named setting, with its figure (reasoning/message_limits.py)."""
    launch = evidence.launch
    return limit_steps(evidence.failure, launch, launch.engine, launch.named_version)


def _feature_steps(evidence: Evidence) -> tuple[str, ...]:
    """The step naming the optional feature whose code failed, when the launch turned it on (reasoning/feature_code.py)."""
    failure = evidence.failure
    return feature_steps(failure, evidence.launch, evidence.launch.engine,
                         [*failure.context, *evidence.lines, *evidence.earlier])


# Modules of CPython's standard library that exist on Unix only (the library reference marks each "Availability:
# Unix"; `tty` and `pty` import termios): missing, they say the interpreter is not a Unix one, native Windows, whatever
# package imported them.  No pip package provides them (a PyPI project of the same name is another thing).
_UNIX_ONLY_MODULES = frozenset({"resource", "fcntl", "termios", "pwd", "grp", "pty", "tty", "posix", "crypt", "syslog",
                                "spwd", "nis", "_posixsubprocess", "_posixshmem", "readline"})
_NO_MODULE = compile_lazily(r"^No module named '(?P<module>[\w.]+)'")


def _unix_only_module(failure: Failure) -> str | None:
    """The Unix-only standard module a ModuleNotFoundError names, else None."""
    final = failure.final
    found = _NO_MODULE.match(final.message.strip()) if final.type.endswith("ModuleNotFoundError") else None
    module = found["module"].split(".", 1)[0] if found else None
    return module if module in _UNIX_ONLY_MODULES else None


def _on_native_windows(evidence: Evidence, engine: str | None, because: str) -> Diagnosis:
    """The engine run on native Windows, which neither engine supports: no category is read from where its import
    stopped (unclassified), and the platform leads the checks."""
    name = ENGINE_NAMES.get(engine or "", "the engine")
    windows = platform_steps(evidence.failure, engine) or (
        f"{name} does not run natively on Windows (its releases are built for Linux): run it under WSL2 or in a Linux "
        "container before looking further.",)
    return Diagnosis(
        pattern=f"general-{UNCLASSIFIED}",
        title=f"Likely {name} run on native Windows, which it does not support",
        category=UNCLASSIFIED,
        root_cause=(f"{because} {name} runs on Linux only, and on native Windows its import or start-up fails on what "
                    "Linux alone provides (POSIX-only modules, Linux builds of its compiled parts): the platform, not a "
                    "package version or a setting, is what to change."),
        fix=Fix(summary="General checks for an engine run on native Windows:",
                steps=(*windows, *hidden_error_steps(evidence)),
                needs_input=_missing_line(evidence)),
        engine=engine,
        engine_version=evidence.launch.engine_version if engine == evidence.launch.engine else None,
        basis="general",
    )


# vLLM's config classes are pydantic dataclasses whose __post_init__ checks raise ValueError (vllm/config/model.py
# ModelConfig, 0.10 on): a value_error there is the config's own check (xorbitsai/inference#4652, split 19 F-06)
_VLLM_CONFIG_VALUE_ERROR = (
    "When the engine is vLLM: in its config classes (ModelConfig and the rest, checked at start-up), a value_error is the config's own check: "
    "most often a model whose architecture or model_type the installed vLLM or its transformers does not know (a model "
    "newer than the release: a newer release, or an image that ships one), else a setting's value the check refuses.")


def _validation_link_steps(evidence: Evidence) -> tuple[str, ...]:
    """What vLLM's config classes say of a ValidationError named only by pydantic's closing link of kind value_error
    (tracebacks/logged_errors.named_by_validation_link), in a paste that shows vLLM or a wrapper that may run it; ()
    otherwise (a request's body, another program's model)."""
    final = evidence.failure.final
    # (a wrapper that runs engines, Xinference over vLLM in xorbitsai/inference#4652, may show no vLLM line of its own)
    vllm = (evidence.launch.engine in ("vllm", None) and evidence.launch.wrapper is not None
            or evidence.launch.engine == "vllm" or any("vllm/" in frame.file for frame in final.frames))
    link_only = final.truncated and final.type == PYDANTIC_VALIDATION_ERROR and final.message == "value_error"
    return (_VLLM_CONFIG_VALUE_ERROR,) if vllm and link_only else ()


def _unclassified(evidence: Evidence) -> Diagnosis:
    final = evidence.failure.final
    # a pydantic ValidationError carrying a validator's ValueError is the engine's check's ValueError, as the rules and
    # the category rows read it (pydantic_display.checked_as): its general checks are a ValueError's
    kind = short_type(checked_as(final)[0]) or "failure"
    guidance = table().type_guidance(kind)
    split_steps, split_asked = _split_launch_checks(evidence)
    return Diagnosis(
        pattern=f"general-{UNCLASSIFIED}",
        title="No pattern or rule fits this failure",
        category=UNCLASSIFIED,
        root_cause=(
            "No pattern or rule of logsleuth names this failure: the paste stops inside the traceback, before its "
            "exception line (the `Type: message` line CPython prints right after the last frame), and the frames "
            "shown pass through no subsystem that names a category. Paste the lines that follow the last frame: "
            "they name the failure."
            if names_no_cause(evidence.failure) else
            f"No pattern or rule of logsleuth names this failure, and its words, type and frames point to no "
            f"category. What {article(kind)} {kind} generally means is below."
        ),
        fix=Fix(summary=f"General checks for {article(kind)} {kind}:",
                steps=(*hidden_error_steps(evidence), *patched_copy_steps(evidence.failure), *_limit_steps(evidence),
                       *_quantized_launch_steps(evidence), *quantized_moe_steps(evidence), *cut_setup_steps(evidence),
                       *split_steps,
                       *_feature_steps(evidence), *guidance.checks, *_validation_link_steps(evidence)),
                needs_input=(*_missing_line(evidence), *split_asked)),
        engine=evidence.launch.engine,
        engine_version=evidence.launch.engine_version,
        basis="general",
    )


def _paste_shows(evidence: Evidence, patterns: tuple[re.Pattern[str], ...]) -> bool:
    """A line of the paste (around the failure, the launch's package lines, the rest) matches one of the patterns."""
    lines = (*evidence.failure.context, *evidence.launch.package_lines, *evidence.lines)
    return any(pattern.search(line) for line in lines for pattern in patterns)
