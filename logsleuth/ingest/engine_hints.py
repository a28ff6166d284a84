"""The engine's own warning that recommends a launch flag (split 18 C-05, vllm-project/vllm#21122: vLLM 0.9.2's
`…/vllm/transformers_utils/tokenizer_group.py:24: FutureWarning: It is strongly recommended to run mistral models
with `--tokenizer-mode "mistral"` to ensure correct encoding and decoding.`, then the paste stops before the failure).

Such a warning is no failure (healthy runs print it), but when the log stops before the server came up and shows no
failure, it is the lead the engine left: the report of a clean paste names it (render/view.py no_failure_lines), its
flag checked against the release's catalog (api.py, reasoning/engine_words.py).  Only the engine's own warnings that
lead, an allow-list (LEADING_WARNINGS) of templates of the engine's code: a Python warning printed from a file of the
engine's package whose words are one of them.  Routine warnings (vLLM's "The model has a long context length …
Consider setting --max-model-len", deprecations saying "please use --x", other loggers' records) are printed on
healthy runs and never lead.
"""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily
from logsleuth.models import LogLine

MAX_HINTS = 2  # the last ones before the log ends
MAX_HINT_LINE = 600
# `…/vllm/transformers_utils/tokenizer_group.py:24: FutureWarning: <message>`: Python's warnings module's line for a
# warning raised in the engine's code.
_PY_WARNING = compile_lazily(r"/(?:vllm|sglang)/[\w/]{1,200}\.py:\d{1,6}: (?:[A-Z]\w{0,40})?Warning: (?P<msg>\S.{0,500})$")
# The warnings that lead, by their fixed words: vLLM's get_tokenizer (vllm/transformers_utils/tokenizer.py,
# warnings.warn(..., FutureWarning, stacklevel=2), so printed from its caller such as tokenizer_group.py): a Mistral
# model run under another tokenizer mode (vllm-project/vllm#21122, split 18 C-05).
LEADING_WARNINGS = ("It is strongly recommended to run mistral models with `--tokenizer-mode",)
_FLAG = compile_lazily(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)+")


def engine_hint(line: LogLine) -> str | None:
    """The recommendation an engine's warning line gives, naming a flag, else None."""
    text = line.text
    if len(text) > MAX_HINT_LINE or "--" not in text:
        return None
    found = _PY_WARNING.search(text)
    if found is None or _FLAG.search(found["msg"]) is None or not any(words in found["msg"] for words in LEADING_WARNINGS):
        return None
    return found["msg"].strip()
