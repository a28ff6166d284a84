"""A model whose repository ships its own code, loaded without leave to run it (issue 28: a message that says what
to do).

transformers decides in `resolve_trust_remote_code` (transformers/dynamic_module_utils.py).  Without
`trust_remote_code=True` it raises ValueError ("… contains custom code which must be executed to correctly load the
model. … Please pass the argument `trust_remote_code=True` to allow custom code to be run."; older releases:
"Loading X requires you to execute the configuration file in that repo on your local machine. … set the option
`trust_remote_code=True` to remove this error."), or, where it may ask, prompts "Do you wish to run the custom code?
[y/N]" on stdin, which a server with no terminal (a container, a service, a Ray actor) answers with
`EOFError: EOF when reading a line`.  Both engines hand their `--trust-remote-code` switch to it.

When the launch gives no such switch, the fix adds it.  When it already does (its command, or the engine's own dump
of its settings), one loader did not get it (a
tokenizer, processor or draft model loaded on its own): that is not a setting to add, and the report says so.
"""

from __future__ import annotations

from logsleuth.command_line import CommandLine
from logsleuth.fixes.build import build_fix
from logsleuth.fixes.context import FixContext
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, Fix, FlagOp
from logsleuth.reasoning.catalog_flags import release_flag
from logsleuth.reasoning.evidence import Evidence, exception_lines

RULE_ID = "rule-trust-remote-code"
FLAG = "--trust-remote-code"
_PROMPT = "Do you wish to run the custom code?"
_DECIDER = "resolve_trust_remote_code"  # transformers/dynamic_module_utils.py
# transformers' refusal in its own words, also when the line naming `trust_remote_code=True` was cut from the paste
# (the refusal's first sentence ends its first line): "… contains custom code which must be executed to correctly
# load the model", older "Loading X requires you to execute the configuration file in that repo …".
_REFUSAL = compile_lazily(r"contains custom code which must be executed|requires you to execute the (?:configuration|modeling|tokenizer) file")


def _needs_remote_code(evidence: Evidence) -> str | None:
    """What showed it: transformers' own refusal, or its prompt failing with no terminal to answer it."""
    failure = evidence.failure
    if any("trust_remote_code=True" in line or _REFUSAL.search(line) for line in exception_lines(failure)):
        return "transformers refused to run the model repository's own code: `trust_remote_code=True` was not given"
    asked = any(frame.function == _DECIDER for block in failure.exceptions for frame in block.frames) or any(
        _PROMPT in line for line in (*failure.context, *evidence.lines))
    if asked and any(block.type.endswith("EOFError") for block in failure.exceptions):
        return ("transformers asked on stdin whether to run the model repository's own code (\"Do you wish to run the "
                "custom code? [y/N]\"), and a server has no terminal to answer: EOFError")
    return None


def _already_allowed(evidence: Evidence) -> bool:
    """The launch gave the switch: in its command, or as the engine's own dump of its settings shows it (never the
    failure's message, which names `trust_remote_code=True` as the thing to pass)."""
    launch = evidence.launch
    if launch.command is not None and CommandLine.parse(launch.command).has(FLAG):
        return True
    # the engine's own dump of its settings (ingest/launch.py reads them: SGLang's server_args, vLLM's config)
    return "trust_remote_code" in launch.switches_on or dict(launch.server_args).get("trust_remote_code") == "True"


def remote_code(evidence: Evidence) -> Diagnosis | None:
    said = _needs_remote_code(evidence)
    if said is None:
        return None
    launch = evidence.launch
    engine = launch.engine
    flag = release_flag(launch, FLAG)
    given = _already_allowed(evidence)
    facts = (said, f"{ENGINE_NAMES.get(engine or '', 'the engine')} passes {FLAG} to transformers as trust_remote_code")
    if given:
        return Diagnosis(
            pattern=RULE_ID, title=f"One loader did not get {FLAG}", category="engine-bug",
            root_cause=(f"The launch gives {FLAG}, yet {said}: the model, tokenizer, processor or draft model that "
                        "raised was loaded without it (see the frames for which)."),
            fix=Fix(summary=("Nothing to add to the command: check which loader the frames show, and whether a newer "
                             "release passes the setting to it; a local copy of the model with its code is a "
                             "workaround."),
                    needs_input=("which loader raised (the innermost frames above transformers)",)),
            engine=engine, engine_version=launch.engine_version, basis="rule", evidence=facts)
    summary = (f"Add {FLAG}: the model's repository ships its own code (modelling, configuration or tokenizer), "
               "which transformers runs only when allowed. Run it only for a repository you trust.")
    fix: Fix | None
    if flag is None:
        fix = Fix(summary=summary.replace(f"Add {FLAG}", f"Allow the model's own code ({FLAG} in SGLang and vLLM, "
                                          "trust_remote_code=True in their Python APIs)"))
    else:
        def build(ctx: FixContext, _data: dict[str, object]) -> Fix:
            return Fix(summary=summary, flags=(FlagOp("add", flag),))

        fix = build_fix({"builder": "rule"}, evidence.failure, {}, launch, builders={"rule": build})
    return Diagnosis(
        pattern=RULE_ID, title="The model's own code may not run: --trust-remote-code is missing", category="missing-flag",
        root_cause=f"The model repository ships its own code, and {said}.", fix=fix, engine=engine,
        engine_version=launch.engine_version, basis="rule", evidence=facts)
