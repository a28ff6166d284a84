"""The engine's own code calling the engine's own class with a keyword that class does not take (issue 28: advice
that fits the cause).

CPython's signature check (`Owner.method() got an unexpected keyword argument 'k'`) names the callee.  When `Owner`
is a class only the engine's indexed code defines (facts/engine_classes.json.gz: SGLang's TiktokenTokenizer in
sglang/srt/tokenizer/tiktoken_tokenizer.py, vLLM's MistralTokenizer in vllm/transformers_utils/tokenizers/mistral.py)
and the innermost frame outside torch and the standard library is that engine's own (the call is the engine's, not a
wrapper's), caller and callee are parts of one release that disagree: a change to the caller that one of the
engine's own classes did not follow, a regression of that release (or a source checkout mixing commits).  It is no
setting, tokenizer file or chat template of the user's, and no transformers release changes it.

The raise site: the engine's call into its own wrapper, e.g. SGLang's OpenAI chat endpoint
(sglang/srt/entrypoints/openai/serving_chat.py `_apply_jinja_template`) passing `reasoning_effort` to
`tokenizer.apply_chat_template`, which TiktokenTokenizer took only later (sglang-0.5.9's signature has it; split 15's
after grading, sgl-project/sglang#9625, fixed by its PR #9630).  A class of a third-party package the engine calls
is reasoning/dependencies.py's (`_refused_call`: the package's release against the engine's pin); a wrapper's
subclass the engine calls is reasoning/engine_api_calls.py's.  A constructor (`EngineArgs.__init__()`, `ServerArgs`)
or a call forwarding `**kwargs` is handed the caller's own keywords: reasoning/settings_keywords.py's."""

from __future__ import annotations

from logsleuth.facts.engine_classes import engines_defining
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, Fix
from logsleuth.reasoning.call_frames import innermost_own_frame
from logsleuth.reasoning.engine_api_calls import engine_of_frame
from logsleuth.reasoning.evidence import Evidence

RULE_ID = "rule-engine-own-signature"
# The message may sit in the engine's prose line ("Error in request: …", an HTTP 500's log record).
_REFUSED = compile_lazily(
    r"(?<![\w.])(?P<owner>[A-Z]\w{0,100})\.(?P<method>\w{1,100})\(\) got an unexpected keyword argument "
    r"'(?P<keyword>\w{1,100})'"
)


def engine_own_signature(evidence: Evidence) -> Diagnosis | None:
    """The engine's frame calling the engine's own class with a keyword it lacks: a regression of the release."""
    failure = evidence.failure
    found = _REFUSED.search(failure.final.message)
    if found is None or found["method"] == "__init__":
        return None  # a constructor is handed the caller's settings (LLM(**kwargs) -> EngineArgs): settings_keywords.py
    frame = innermost_own_frame(failure.final.frames)
    caller = engine_of_frame(frame.file) if frame is not None else None
    if caller is None or frame is None or engines_defining(found["owner"]) != frozenset({caller}):
        return None
    if frame.source and "**" in frame.source:
        return None  # the engine forwards its caller's keywords: whose keyword it is, the frames do not say
    engine = caller
    name = ENGINE_NAMES[engine]
    version = evidence.launch.named_version
    release = f"{name} {version}" if version else f"the installed {name} release"
    callee = f"{found['owner']}.{found['method']}"
    where = f"{frame.file.rsplit('/', 1)[-1]}:{frame.line} in {frame.function}" if frame.function else frame.file
    cause = (f"{found['owner']} is {name}'s own class, and {name}'s own code ({where}) called its {found['method']} "
             f"with the keyword '{found['keyword']}', which that class does not take in {release}: two parts of one "
             "release disagree, a regression of that release (or a source checkout whose files come from different "
             "commits). No setting, tokenizer file or chat template of yours causes it, and another transformers "
             "does not change it.")
    fix = Fix(
        summary=(f"Install {name} at a release in which {callee}() takes '{found['keyword']}' (a later release, or the "
                 f"fix on the main branch), or the release before the change that passes it."),
        steps=(f"search {name}'s issue tracker for \"{callee}() got an unexpected keyword argument "
               f"'{found['keyword']}'\": a regression like this is usually fixed within a release or two",
               f"a source install: update the whole checkout to one commit and reinstall it ({where} and the file "
               f"defining {found['owner']} must come from the same commit)"),
        needs_input=() if version else (f"the {name} release installed (pip show {engine})",),
    )
    return Diagnosis(
        pattern=RULE_ID,
        title=f"{name}'s own code called its own {callee}() with a keyword it does not take",
        category="engine-bug",
        root_cause=cause,
        fix=fix,
        references=("CPython's signature check: '<Class>.<method>() got an unexpected keyword argument' at the engine's "
                    "call into its own class (facts/engine_classes.json.gz names the class's engine)",),
        engine=engine,
        engine_version=evidence.launch.engine_version,
        basis="rule",
        evidence=(f"the message: {found.group(0)}",
                  f"{found['owner']} is defined only by {name}'s code; the calling frame is {name}'s ({where})"),
    )
